"""The summary table of the property suites: per property, the examples tried, the examples an
algorithm declined, and the tightest ratio and smallest slack observed, so a researcher sees how
tight each bound was in practice (``make proofs`` prints it; ``pytest --proofs-summary`` too).

A property records what it measured with :func:`observe`; ``ratio`` is value / bound for a
guarantee or an inequality (at most the proven factor), ``slack`` the proven limit minus the
value, relative to the limit (0 means the bound was met with equality).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["STATS", "PropertyStats", "declined", "observe", "table"]


@dataclass
class PropertyStats:
    """What one property saw over all its examples."""

    examples: int = 0
    declined: int = 0
    max_ratio: float = -math.inf
    min_slack: float = math.inf
    bound: str = ""  # the proven limit, e.g. "≤ 4·OPT"
    algorithms: set[str] = field(default_factory=set)


STATS: dict[str, PropertyStats] = {}


def _stats(prop: str) -> PropertyStats:
    return STATS.setdefault(prop, PropertyStats())


def observe(
    prop: str,
    *,
    algorithm: str = "",
    ratio: float | None = None,
    limit: float | None = None,
    value: float | None = None,
    bound: str = "",
) -> None:
    """Records one example of ``prop``: a ratio, and/or the slack of ``value ≤ limit``."""
    s = _stats(prop)
    s.examples += 1
    if algorithm:
        s.algorithms.add(algorithm)
    if bound:
        s.bound = bound
    if ratio is not None and math.isfinite(ratio):
        s.max_ratio = max(s.max_ratio, ratio)
    if limit is not None and value is not None and math.isfinite(limit) and limit != 0:
        s.min_slack = min(s.min_slack, (limit - value) / abs(limit))


def declined(prop: str, algorithm: str = "") -> None:
    """Records an example the algorithm declined (outside its scope)."""
    s = _stats(prop)
    s.declined += 1
    if algorithm:
        s.algorithms.add(algorithm)


def table() -> str:
    """The summary as aligned text."""
    if not STATS:
        return "no property recorded anything"
    rows = [("property", "proven", "examples", "declined", "max ratio", "min slack")]
    for name in sorted(STATS):
        s = STATS[name]
        ratio = "–" if math.isinf(s.max_ratio) else f"{s.max_ratio:.4g}"
        slack = "–" if math.isinf(s.min_slack) else f"{s.min_slack:.3g}"
        rows.append((name, s.bound or "–", str(s.examples), str(s.declined), ratio, slack))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(
            c.ljust(w) if i < 2 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    )

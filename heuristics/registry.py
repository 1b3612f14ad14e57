"""The one registry of online policies: names for the CLI, ``compare`` and proofs-checks.

Adding a policy means writing its module and adding one :class:`PolicyEntry` here.

Parameters given as text (``--param T=2000``) are converted with the type annotations of the
policy's constructor. Time and size parameters are in the instance's units; the papers state
their defaults in ms and MB (Varys' T = 2 s and δ = 200 ms, Aalo's Δ = 10 ms and Q1 = 10 MB),
so :func:`make_policy` converts those defaults when the instance's units are other byte or
time units (dimensionless instances keep the numbers as they are).
"""

from __future__ import annotations

import inspect
import types
import typing
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from coflowlab.instance import Instance
from coflowlab.policy import Policy

__all__ = ["POLICIES", "PolicyEntry", "make_policy", "policy_names"]

_MS_PER_UNIT = {"us": 1e-3, "ms": 1.0, "s": 1e3, "min": 6e4}
_MB_PER_UNIT = {"B": 1e-6, "KB": 1e-3, "MB": 1.0, "GB": 1e3, "MiB": 1.048576, "GiB": 1073.741824}


@dataclass(frozen=True)
class PolicyEntry:
    """One registered policy.

    Attributes
    ----------
    name
        Registry name (CLI ``--policy``).
    target
        ``"module:Class"`` under ``coflowlab.heuristics``, imported on use.
    summary
        One line for ``coflowlab simulate --list``.
    fixed
        Constructor arguments this name implies (e.g. the ordering).
    ms_params, mb_params
        Parameters whose paper defaults are in ms / MB, converted to the instance's units.
    """

    name: str
    target: str
    summary: str
    fixed: dict[str, Any] = field(default_factory=dict)
    ms_params: tuple[str, ...] = ()
    mb_params: tuple[str, ...] = ()

    def policy_class(self) -> type:
        module, cls = self.target.split(":")
        return getattr(import_module(f"coflowlab.heuristics.{module}"), cls)


_VARYS_TIMES = ("T", "delta")

POLICIES: dict[str, PolicyEntry] = {
    e.name: e
    for e in (
        PolicyEntry("fair", "fair:FairSharing", "per-flow max-min fairness (TCP)"),
        PolicyEntry(
            "pfp",
            "baselines:PerFlowPriority",
            "per-flow priority, smallest remaining first (pFabric-like)",
        ),
        PolicyEntry(
            "fifo",
            "varys:VarysFIFO",
            "coflows in arrival order, MADD + backfill (Orchestra-like)",
            ms_params=_VARYS_TIMES,
        ),
        PolicyEntry(
            "fifo-lm",
            "fifo_lm:FifoLM",
            "Baraat: FIFO with limited multiplexing of heavy coflows",
            mb_params=("threshold",),
        ),
        PolicyEntry(
            "varys",
            "varys:Varys",
            "Varys: SEBF order, MADD, backfill, starvation avoidance",
            ms_params=_VARYS_TIMES,
        ),
        PolicyEntry(
            "scf",
            "varys:VarysSCF",
            "Varys machinery, smallest-coflow-first (length)",
            ms_params=_VARYS_TIMES,
        ),
        PolicyEntry(
            "ncf",
            "varys:VarysNCF",
            "Varys machinery, narrowest-coflow-first (width)",
            ms_params=_VARYS_TIMES,
        ),
        PolicyEntry(
            "tcf",
            "varys:VarysTCF",
            "Varys machinery, smallest-total-size-first",
            ms_params=_VARYS_TIMES,
        ),
        PolicyEntry(
            "varys-deadline",
            "varys:VarysDeadline",
            "Varys deadline mode: admission control, rate = remaining / time left",
        ),
        PolicyEntry(
            "aalo",
            "aalo:Aalo",
            "Aalo: D-CLAS, non-clairvoyant, coordinated every Δ",
            ms_params=("delta",),
            mb_params=("first_threshold",),
        ),
        PolicyEntry(
            "aalo-uncoordinated",
            "aalo:AaloUncoordinated",
            "Aalo without coordination: each port decides from local bytes",
            mb_params=("first_threshold",),
        ),
    )
}


def policy_names() -> list[str]:
    """The registered names, in registry order."""
    return list(POLICIES)


def _convert(value: str, annotation: Any, name: str) -> Any:
    if isinstance(annotation, str):
        annotation = {"float": float, "int": int, "bool": bool, "str": str}.get(
            annotation.split("|")[0].strip(), str
        )
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        if value.lower() == "none" and len(options) < len(typing.get_args(annotation)):
            return None
        annotation = options[0]
    if origin is typing.Literal or typing.get_origin(annotation) is typing.Literal:
        allowed = typing.get_args(annotation)
        if value not in allowed:
            raise ValueError(f"parameter {name}: {value!r} is not one of {list(allowed)}")
        return value
    if annotation is bool:
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"parameter {name}: {value!r} is not a boolean")
    try:
        return annotation(value) if annotation in (int, float, str) else value
    except ValueError:
        raise ValueError(
            f"parameter {name}: {value!r} is not a valid {annotation.__name__}"
        ) from None


def make_policy(name: str, instance: Instance | None = None, **params: Any) -> Policy:
    """Builds the registered policy ``name``.

    Parameters
    ----------
    name
        A registry name (see :data:`POLICIES`).
    instance
        When given, paper defaults stated in ms or MB are converted to its units.
    params
        Constructor arguments; strings are converted with the constructor's annotations.

    Raises
    ------
    ValueError
        For an unknown name or parameter, or a value that does not convert.

    Examples
    --------
    >>> make_policy("fair").name
    'fair'
    """
    entry = POLICIES.get(name)
    if entry is None:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(POLICIES)}")
    cls: Any = entry.policy_class()
    signature = inspect.signature(cls)
    hints = typing.get_type_hints(cls.__init__) if cls.__init__ is not object.__init__ else {}
    accepted = {
        p.name
        for p in signature.parameters.values()
        if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    }
    takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    kwargs: dict[str, Any] = dict(entry.fixed)
    if instance is not None:
        for group, table, unit in (
            (entry.ms_params, _MS_PER_UNIT, instance.units.time),
            (entry.mb_params, _MB_PER_UNIT, instance.units.size),
        ):
            per_unit = table.get(unit)
            for p in group:
                default = signature.parameters.get(p)
                if per_unit is not None and default is not None and p not in params:
                    kwargs[p] = default.default / per_unit
    for key, value in params.items():
        if key not in accepted and not takes_kwargs:
            raise ValueError(
                f"policy {name!r} has no parameter {key!r}; "
                f"it takes: {', '.join(sorted(accepted))}"
            )
        kwargs[key] = (
            _convert(value, hints.get(key, str), key) if isinstance(value, str) else value
        )
    return cls(**kwargs)

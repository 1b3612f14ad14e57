"""Hypothesis profiles of the property suites, and per-property budgets.

``ci`` (the default, used by ``make test``) is derandomized and small; ``thorough`` (``make
proofs``) tries thousands of examples per property. The profile is chosen by the environment
variable ``COFLOWLAB_PROOFS`` (``ci`` or ``thorough``), so that it is in force when the suites
are imported and size their own budgets (:func:`examples`).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

__all__ = ["PROFILE", "examples"]

_QUIET = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
settings.register_profile(
    "ci", max_examples=60, derandomize=True, deadline=None, suppress_health_check=_QUIET
)
settings.register_profile(
    "thorough", max_examples=2000, deadline=None, suppress_health_check=_QUIET
)

PROFILE = os.environ.get("COFLOWLAB_PROOFS", "ci")
if PROFILE not in ("ci", "thorough"):
    raise ValueError(f"COFLOWLAB_PROOFS must be 'ci' or 'thorough', got {PROFILE!r}")
settings.load_profile(PROFILE)


def examples(ci: int, thorough: int | None = None) -> settings:
    """Settings for a property whose examples are costly (an exact solve each): ``ci``
    examples in the ``ci`` profile, ``thorough`` (default: the profile's) under ``make proofs``.
    """
    if PROFILE == "ci":
        return settings(max_examples=ci)
    return settings(max_examples=thorough or settings.default.max_examples)

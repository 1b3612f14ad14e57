"""Hypothesis profiles for the property suites, and the strategies on the import path.

``ci`` (the default, used by ``make test``) is derandomized and small; ``thorough`` (``make
proofs``) tries thousands of examples per property. Select with ``--hypothesis-profile``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

settings.register_profile(
    "ci",
    max_examples=60,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("ci")

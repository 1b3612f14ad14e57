"""Puts ``proofs-checks/`` on the import path so that these tests share its brute-force
reference (:mod:`brute_force`) with the property suites instead of keeping a copy."""

from __future__ import annotations

import sys
from pathlib import Path

_PROOFS = str(Path(__file__).resolve().parents[2] / "proofs-checks")
if _PROOFS not in sys.path:
    sys.path.insert(0, _PROOFS)

"""Puts the suites' helper modules on the import path (strategies, profiles, algorithms,
summary), loads the Hypothesis profile (:mod:`profiles`) and prints the summary table of
:mod:`summary` at the end with ``--proofs-summary`` (on in ``make proofs``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import profiles  # registers and loads the Hypothesis profile


def pytest_addoption(parser):  # type: ignore[no-untyped-def]
    parser.addoption(
        "--proofs-summary",
        action="store_true",
        default=False,
        help="print the table of properties, examples, ratios and slack (make proofs)",
    )


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # type: ignore[no-untyped-def]
    import summary

    if config.getoption("--proofs-summary", default=False):
        terminalreporter.write_sep("=", f"properties ({profiles.PROFILE} profile)")
        terminalreporter.write_line(summary.table())

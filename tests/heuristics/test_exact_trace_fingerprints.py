"""The exact model's per-coflow CCTs on the public trace stay what they were (issue 15).

``tests/data/exact_trace_cct.json`` holds, per policy, the verified per-coflow CCTs of the
exact model on FB2010-1Hr-150-0, written by ``benchmarks/exact_fingerprints.py --write`` from
the engine before a change (its ``commit`` field). An engine change must not change semantics:
the CCTs must agree within the verifier's time tolerance and the events must be the same.
Policies with a rate-class engine (:mod:`coflowlab.class_simulation`) are checked on both
engines.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

FILE = Path(__file__).resolve().parents[1] / "data" / "exact_trace_cct.json"
STORED: dict[str, dict] = json.loads(FILE.read_text())["policies"] if FILE.exists() else {}
CLASS_ENGINES = ("fair", "hug", "hug-cooperative", "pfp", "sincronia-online")
CASES = [(p, "auto") for p in sorted(STORED)] + [(p, "flows") for p in CLASS_ENGINES]


def test_the_fingerprints_cover_the_class_engines():
    """Tests that every policy with a class engine has stored CCTs to be checked against."""
    from coflowlab.heuristics import make_policy

    assert set(CLASS_ENGINES) <= set(STORED)
    for name in STORED:
        has = hasattr(make_policy(name), "class_engine")
        assert has == (name in CLASS_ENGINES), name


@pytest.mark.trace
@pytest.mark.slow
@pytest.mark.parametrize(("policy", "engine"), CASES)
def test_trace_ccts_equal_the_stored_ones(policy, engine, fb_trace):
    """Tests that a policy's verified CCTs and event count on the trace equal the stored ones
    (within the time tolerance), on each engine it has."""
    from coflowlab import simulate
    from coflowlab.heuristics import make_policy
    from coflowlab.instances import read_benchmark

    ref = STORED[policy]
    inst = read_benchmark(fb_trace)
    res = simulate(inst, make_policy(policy, inst), record=False, engine=engine)
    assert res.engine == ("classes" if engine == "auto" and policy in CLASS_ENGINES else "flows")
    assert res.verified and res.num_events == ref["events"]
    assert res.rejected.tolist() == ref["rejected"]
    want = np.array([math.nan if x is None else x for x in ref["cct"]])
    tol = max(ref["time_tol"], res.report.time_tol)
    assert np.array_equal(np.isnan(res.cct), np.isnan(want))
    done = ~np.isnan(want)
    assert np.max(np.abs(res.cct[done] - want[done]), initial=0.0) <= tol

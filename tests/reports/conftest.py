"""Fixtures of the report tests: a hand-checkable record set and a realistic synthetic one."""

from __future__ import annotations

import numpy as np
import pytest

from coflowlab.reports import TaskRecord

ONLINE = ("aalo", "fair", "fifo", "varys")


def hand_records() -> list[TaskRecord]:
    """Three instances whose ratios and wins are derived by hand in ``test_tables.py``.

    - ``i1``: exact-fluid proves 100; lp-ov 80; sincronia 120; varys and fifo tie at 110.
    - ``i2`` (seed 7): exact-fluid stops at the time limit with 210 and bound 190; lp-ov 180;
      sincronia 220; varys 230; fifo fails.
    - ``i3``: no exact method; lp-ov 50; sincronia 60; varys 55; fifo 75.
    """

    def rec(inst, seed, alg, fam, status, obj, runtime=1.0, **kw):
        model = {"exact": "fluid", "relaxation": "fluid", "approximation": "fluid"}.get(
            fam, "exact"
        )
        return TaskRecord(inst, seed, alg, fam, model, status, obj, None, runtime, **kw)

    return [
        rec("i1", None, "exact-fluid", "exact", "optimal", 100.0, 4.0, verified=True),
        rec("i1", None, "lp-ov", "relaxation", "optimal", 80.0, 1.0),
        rec("i1", None, "sincronia", "approximation", "feasible", 120.0, 0.5, verified=True),
        rec("i1", None, "varys", "online", "feasible", 110.0, 0.25, verified=True),
        rec("i1", None, "fifo", "online", "feasible", 110.0, 0.25, verified=True),
        rec(
            "i2", 7, "exact-fluid", "exact", "time_limit", 210.0, 60.0, verified=True, bound=190.0
        ),
        rec("i2", 7, "lp-ov", "relaxation", "optimal", 180.0, 2.0),
        rec("i2", 7, "sincronia", "approximation", "feasible", 220.0, 0.5, verified=True),
        rec("i2", 7, "varys", "online", "feasible", 230.0, 0.75, verified=True),
        rec("i2", 7, "fifo", "online", "error", None, 0.125, message="ValueError: boom | <b>"),
        rec("i3", None, "lp-ov", "relaxation", "optimal", 50.0, 3.0),
        rec("i3", None, "sincronia", "approximation", "feasible", 60.0, 0.5, verified=True),
        rec("i3", None, "varys", "online", "feasible", 55.0, 0.5, verified=True),
        rec("i3", None, "fifo", "online", "feasible", 75.0, 0.5, verified=True),
    ]


@pytest.fixture
def hand() -> list[TaskRecord]:
    """The hand-checkable records of :func:`hand_records`."""
    return hand_records()


def synthetic_records(num_instances: int = 10, seed: int = 0) -> list[TaskRecord]:
    """A realistic comparison: ``num_instances`` instances of 8 to 80 coflows (ms, Varys
    bins), an exact method (optimal on the small ones, time limit on the large ones, one
    without a solution), a relaxation, two approximations and four online heuristics with
    per-coflow completion times, plus one failed task."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(num_instances):
        name = f"fb-like-{i:02d}.json"
        n = int(8 + 8 * i)
        release = np.sort(rng.uniform(0, 2000.0, n))
        weight = np.ones(n)
        bins = tuple(rng.choice(["SN", "LN", "SW", "LW"], n, p=[0.5, 0.2, 0.15, 0.15]))
        alone = rng.lognormal(3.0, 1.5, n) * np.array(
            [{"LW": 20, "LN": 4}.get(b, 1) for b in bins]
        )
        slow = {"varys": 1.1, "aalo": 1.3, "fair": 2.0, "fifo": 3.0, "sincronia": 1.05}
        slow["lp-ov-ls"] = 1.15
        runs = {}
        for alg, factor in slow.items():
            noise = rng.uniform(1.0, 1.4, n)
            cct = alone * factor * noise
            if alg == "fifo":  # head-of-line blocking hurts the short coflows most
                cct = cct + np.where(np.isin(bins, ["SN", "SW"]), 200.0, 0.0)
            runs[alg] = release + cct
        best = min(float(weight @ c) for c in runs.values())
        opt = best * 0.97
        kw = {"num_coflows": n, "num_flows": 5 * n, "time_unit": "ms"}
        if i < 6:
            out.append(
                TaskRecord(name, None, "exact-fluid", "exact", "fluid", "optimal", opt,
                           None, 0.5 * 2**i, verified=True, bound=opt, **kw)
            )  # fmt: skip
        elif i < 9:
            out.append(
                TaskRecord(name, None, "exact-fluid", "exact", "fluid", "time_limit",
                           best * 1.2, None, 60.0, verified=True, bound=opt * 0.9, **kw)
            )  # fmt: skip
        else:
            out.append(
                TaskRecord(name, None, "exact-fluid", "exact", "fluid",
                           "time_limit_no_solution", None, None, 60.0, bound=opt * 0.8,
                           message="no incumbent within 60 s", **kw)
            )  # fmt: skip
        out.append(
            TaskRecord(name, None, "lp-ov", "relaxation", "fluid", "optimal",
                       opt * rng.uniform(0.85, 0.95), None, 0.2 * n / 8, **kw)
        )  # fmt: skip
        for alg, completion in runs.items():
            fam = "online" if alg in ONLINE else "approximation"
            model = "exact" if fam == "online" else "fluid"
            if alg == "aalo" and i == 3:
                out.append(
                    TaskRecord(name, None, alg, fam, model, "error", None, None, 1.5,
                               message="SimulationError: stalled at t=12.5", **kw)
                )  # fmt: skip
                continue
            out.append(
                TaskRecord(
                    name, None, alg, fam, model, "feasible", float(weight @ completion),
                    float(np.mean(completion - release)), 0.01 * n, verified=True,
                    release=release, completion=completion, weight=weight, bin=bins, **kw,
                )
            )  # fmt: skip
    return out


@pytest.fixture(scope="module")
def synthetic() -> list[TaskRecord]:
    """The realistic record set of :func:`synthetic_records`."""
    return synthetic_records()


@pytest.fixture(scope="module")
def small_synthetic() -> list[TaskRecord]:
    """Three instances of :func:`synthetic_records`, for tests that render twice."""
    return synthetic_records(num_instances=3, seed=1)

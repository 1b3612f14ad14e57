"""Tests across every registered policy: feasibility on all kinds of instances, the
single-coflow property, and the registry's parameter handling."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import coflowlab as cl
from coflowlab import instances as ins
from coflowlab.heuristics import POLICIES, make_policy


def instance_kinds() -> dict[str, cl.Instance]:
    """Generated instances of every kind the issue lists."""
    base = ins.uniform(4, 6, density=0.4, seed=11)
    return {
        "uniform": base,
        "releases": ins.uniform(4, 8, density=0.4, release_rate=0.3, seed=12),
        "weights": ins.assign_weights(base, 1, 4, seed=13),
        "deadlines": ins.assign_deadlines(base, 1.0, seed=14),
        "single-port": ins.single_port(6, seed=15),
        "cos": ins.concurrent_open_shop(3, 5, seed=16),
        "real-sizes": ins.uniform(3, 5, density=0.6, integral=False, seed=17),
        "fb-like": ins.fb_like(25, num_ports=12, seed=18),
        "dependencies": cl.Instance.from_coflows(
            [
                cl.Coflow([(0, 1, 2.0), (1, 0, 1.0)]),
                cl.Coflow([(0, 0, 1.0)]),
                cl.Coflow([(1, 1, 3.0)], release=0.5),
            ],
            2,
            dependencies=[(0, 1)],
        ),
    }


KINDS = instance_kinds()


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("name", list(POLICIES))
def test_every_policy_verifies_on_every_kind_of_instance(name, kind):
    """Tests that each policy's schedule passes the independent verifier (simulate raises
    otherwise) and every coflow that is not rejected completes, after its release."""
    inst = KINDS[kind]
    result = cl.simulate(inst, make_policy(name, inst))
    assert result.verified and result.report.feasible
    done = np.setdiff1d(np.arange(inst.num_coflows), result.rejected)
    assert not np.isnan(result.coflow_completion[done]).any()
    assert np.all(
        result.coflow_completion[done]
        >= inst.coflow_release[done] + inst.bottleneck[done] * (1 - 1e-9)
    )


CLAIRVOYANT_WORK_CONSERVING = ["varys", "scf", "ncf", "tcf", "fifo", "pfp"]


@pytest.mark.parametrize("name", CLAIRVOYANT_WORK_CONSERVING)
def test_one_coflow_alone_finishes_at_rho(name, shuffle_3x2):
    """Tests MADD's optimality for one coflow (thesis §4.5.1, §4.5.3, Eq. 4.1) / docs/theory.md#f1
    for coflow-aware policies: one coflow alone finishes at ρ (Fig. 3.2: Γ = 4) — except per-flow
    priority, which is not coflow-aware and takes 6 (thesis Fig. 3.2)."""
    result = cl.simulate(shuffle_3x2, make_policy(name))
    expected = 6.0 if name == "pfp" else shuffle_3x2.bottleneck[0]
    assert_allclose(result.coflow_completion, [expected])


def test_registry_converts_text_parameters():
    """Tests that --param strings become typed constructor arguments."""
    policy = make_policy("varys", starvation="false", T="1000")
    assert policy.starvation is False and policy.T == 1000.0
    with pytest.raises(ValueError, match="has no parameter 'colour'"):
        make_policy("varys", colour="red")
    with pytest.raises(ValueError, match="unknown policy 'nope'"):
        make_policy("nope")
    with pytest.raises(ValueError, match="is not true or false"):
        make_policy("varys", starvation="maybe")


def test_registry_converts_paper_defaults_to_the_instance_units():
    """Tests that Varys' T = 2 s default becomes 2.0 for an instance timed in seconds."""
    inst_s = ins.uniform(2, 2, seed=1).replace(units=cl.Units("MB", "s"))
    inst_ms = inst_s.replace(units=cl.Units("MB", "ms"))
    assert pytest.approx(2000.0) == make_policy("varys", inst_ms).T
    assert pytest.approx(2.0) == make_policy("varys", inst_s).T

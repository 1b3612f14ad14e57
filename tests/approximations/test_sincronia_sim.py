"""Tests of the reproduction of Sincronia's offline simulator (docs/fidelity.md#sincronia-madd):
every ordering × every allocation through ``solve``, and Sincronia's MADD rule by hand (its own
output is compared coflow by coflow in test_sincronia_reference.py)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from coflowlab import Instance, verify
from coflowlab.allocation import madd_share, share_equally
from coflowlab.approximations import run_method
from coflowlab.instances import uniform
from coflowlab.list_scheduling import ALLOCATIONS, list_schedule

METHODS = ("sincronia", "order-sebf", "order-scf", "order-ncf", "order-tcf")


def blocked_pair() -> Instance:
    """A = {0→0: 2, 1→1: 0.5}, B = {0→1: 1, 1→1: 1} on unit ports (flows in that order)."""
    a = np.array([[2.0, 0.0], [0.0, 0.5]])
    b = np.array([[0.0, 1.0], [0.0, 1.0]])
    return Instance.from_matrices([a, b])


def completion(inst: Instance, allocation: str) -> tuple[np.ndarray, np.ndarray]:
    rep = verify(inst, list_schedule(inst, [0, 1], allocation))  # type: ignore[arg-type]
    assert rep.feasible
    return rep.coflow_completion, rep.flow_completion


def test_sincronia_madd_by_hand():
    """Tests Sincronia's MADD rule on A then B, by hand (docs/fidelity.md#sincronia-madd).

    t = 0: MADD gives A Γ = 2 (0→0 at 1, 1→1 at 1/4); B needs ingress 0, which is full: skipped.
    Of B's flows only 1→1 can send (0→1 needs the full ingress 0), so the split gives it all of
    min(3/4 / 1, 3/4 / 1) = 3/4; nothing is left to backfill. The next event is A's Γ = 2: B's
    1→1 flow ends at 4/3, and its 3/4 of ingress 1 idles until 2. At 2, B's 0→1 flow gets Γ = 1
    and ends at 3.
    """
    cct, fct = completion(blocked_pair(), "madd")
    assert_allclose(cct, [2.0, 3.0])
    assert_allclose(fct, [2.0, 2.0, 3.0, 4.0 / 3.0])


def test_madd_exact_and_greedy_by_hand():
    """Tests the two rules without idle capacity on the same pair, by hand: MADD plus backfill at
    every flow completion gives A's 1→1 flow all of ingress 1 (it ends at 0.5), then B's 1→1 flow
    takes it (ends at 1.5) and B's 0→1 flow waits for ingress 0 until 2: B ends at 3. Greedy
    strict priority does the same here."""
    for allocation in ("madd-exact", "greedy"):
        cct, fct = completion(blocked_pair(), allocation)
        assert_allclose(cct, [2.0, 3.0])
        assert_allclose(fct, [2.0, 0.5, 3.0, 1.5])


def test_share_equally_by_hand():
    """Tests the equal split: ports' free capacity over the number of listed flows there."""
    # ingress 0 has 1 free for two flows; egress 0 has 0.3 free for one, egress 1 has 1
    rates = share_equally([0.0, 0.0, 0.2], [0, 1], [0, 0, 1], [0, 1, 0], [1.0, 1.0], [0.5, 1.0])
    assert_allclose(rates, [0.3, 0.5, 0.2])


def test_madd_share_skips_only_full_ports():
    """Tests that a coflow is skipped only when a port it needs is full (within full_below)."""
    # one flow through ingress 0, which has a hair (1e-12) of capacity left
    _, gamma = madd_share([0, 1], [0], [1.0], [0], [0], [1e-12], [1.0])
    assert gamma[0] == pytest.approx(1e12)  # served at a crawl
    _, gamma = madd_share([0, 1], [0], [1.0], [0], [0], [1e-12], [1.0], full_below=1e-9)
    assert np.isinf(gamma[0])  # skipped


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("allocation", ALLOCATIONS)
def test_every_ordering_runs_every_allocation(method, allocation):
    """Tests the grid through the registry: verified, the allocation recorded, ≥ the bound."""
    inst = uniform(3, 5, density=0.6, seed=4)
    sol = run_method(inst, method, allocation=allocation)
    assert sol.details["allocation"] == allocation
    assert sol.objective >= sol.bound * (1 - 1e-9)


def split_pair() -> Instance:
    """A = {0→2: 2}, B = {0→0: 3, 2→0: 3, 2→1: 3} on three unit ports (flows in that order)."""
    a = np.zeros((3, 3))
    a[0, 2] = 2.0
    b = np.zeros((3, 3))
    b[0, 0] = b[2, 0] = b[2, 1] = 3.0
    return Instance.from_matrices([a, b])


def test_madd_exact_never_loses_to_sincronia_madd_on_a_hand_pair():
    """Tests the cost of Sincronia's split on A then B, by hand.

    Sincronia's rule: A takes ingress 0 and egress 2 until 2; B is skipped (ingress 0 is full),
    and its two flows that can send split ingress 2: 1/2 each. At 2, B has 3, 2, 2 left; its
    egress 0 carries 5: Γ = 5, B ends at 7. MADD-exact backfills B's 2→0 flow at full rate
    instead (B's bottleneck, egress 0, is then busy from 0): B ends at 2 + 4 = 6.
    """
    order = [0, 1]
    for allocation, cct_b in (("madd", 7.0), ("madd-exact", 6.0)):
        rep = verify(split_pair(), list_schedule(split_pair(), order, allocation))
        assert_allclose(rep.coflow_completion, [2.0, cct_b])


def test_unknown_allocation_is_refused_naming_the_parameter():
    with pytest.raises(ValueError, match="allocation must be one of"):
        run_method(blocked_pair(), "order-scf", allocation="fair")


# The zero-release trace is checked coflow by coflow against Sincronia's own simulator, for
# every ordering and allocation, in test_sincronia_reference.py.


def test_crumbs_the_reference_drops_are_sent_first():
    """Tests the one documented difference from Sincronia's simulator: X = {0→0: 1} then
    Y = {1→1: 1 + 5e-7}. The first event is X's Γ = 1, when Y has 5e-7 MB left, below the
    simulator's 9.5e-7, so it counts Y finished at 1; we send the crumb first (Y ends at
    1 + 5e-7, at rate 1) and the schedule verifies."""
    x = np.array([[1.0, 0.0], [0.0, 0.0]])
    y = np.array([[0.0, 0.0], [0.0, 1.0 + 5e-7]])
    inst = Instance.from_matrices([x, y])
    rep = verify(inst, list_schedule(inst, [0, 1], "madd"))
    assert rep.feasible
    assert_allclose(rep.coflow_completion, [1.0, 1.0 + 5e-7], rtol=1e-12)

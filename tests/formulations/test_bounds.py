"""Tests of the combinatorial bounds (docs/theory.md#basic-facts, F3 and F4) and of the completion
floors the relaxations share."""

from __future__ import annotations

import numpy as np
import pytest

from coflowlab import Fabric, Instance
from coflowlab.formulations.bounds import (
    bound_release_rho,
    bound_smith,
    completion_floor,
    smith_rule,
)
from coflowlab.instances import uniform
from coflowlab.instances.examples import theory_i1, theory_i2, theory_r1


def test_known_bounds():
    """Tests F3 and F4 on docs/theory.md#instances: I1's ``w ρ = 4``; I2's Smith optimum 19 (one
    port, so F4 is OPT); R1's ``Σ w (r + ρ) = 1·2 + 3·(1 + 1) = 8``."""
    assert bound_release_rho(theory_i1()).objective == 4.0
    assert bound_smith(theory_i2()).objective == 19.0
    assert bound_release_rho(theory_r1()).objective == 8.0


def test_smith_rule_puts_zero_weights_last():
    """Tests that zero-weight jobs go last and ties go by index."""
    value, order = smith_rule(np.array([1.0, 2.0, 2.0]), np.array([0.0, 2.0, 2.0]))
    assert order.tolist() == [1, 2, 0]
    assert value == 2 * 2 + 2 * 4


def test_completion_floor_is_release_plus_rho_by_default():
    """Tests that with flows released with their coflow the floor is ``r + ρ``."""
    inst = uniform(3, 6, density=0.5, release_rate=1.0, seed=4)
    assert completion_floor(inst) == pytest.approx(inst.coflow_release + inst.bottleneck)


def test_completion_floor_with_flow_releases_and_capacities():
    """Tests the two flow-level terms on a hand example with capacities 2 (ingress 0) and 1.

    Coflow 0: flow 0→0 of size 2 released at 0, flow 0→1 of size 2 released at 5. ``ρ = 2``
    (ingress 0 carries 4 at rate 2; egresses 0 and 1 carry 2 each at rate 1), so
    ``r + ρ = 2``; but the late flow alone needs ``5 + 2 / min(2, 1) = 7`` (and egress 1, whose
    only flow is released at 5, gives the same 7).
    """
    inst = Instance(
        Fabric(2, ingress_capacity=[2.0, 1.0]),
        [0, 0],
        [0, 0],
        [0, 1],
        [2.0, 2.0],
        flow_release=[0.0, 5.0],
    )
    assert inst.bottleneck.tolist() == [2.0]
    assert completion_floor(inst).tolist() == [7.0]

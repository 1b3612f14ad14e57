"""Tests of per-flow fair sharing (``fair``) against per-flow max-min computed from scratch."""

from __future__ import annotations

import numpy as np
from numpy.testing import assert_allclose

from coflowlab import allocation, simulate
from coflowlab.heuristics.fair import FairSharing
from coflowlab.instances.examples import fig_3_2


class _Checked(FairSharing):
    """Fair sharing that checks, at every event, that the active flows' rates (its updates
    applied to the previous rates) equal per-flow max-min on the active flows."""

    def reset(self, view):
        super().reset(view)
        self.view = view
        self.rates = np.zeros(view.num_flows)
        self.events = 0

    def decide(self, state):
        decision = super().decide(state)
        flows, rates = decision.update
        self.rates[state.completed] = 0.0
        self.rates[flows] = rates
        active = np.asarray(state.flows)
        expected = allocation.max_min_fair(
            self.view.flow_src[active], self.view.flow_dst[active], self.cap_in, self.cap_out
        )
        assert_allclose(self.rates[active], expected, rtol=1e-12, atol=1e-15)
        self.events += 1
        return decision


def test_fair_rates_are_per_flow_max_min_at_every_event():
    """Tests that incremental pair-level updates reproduce per-flow max-min at every event
    of a random online instance (parallel flows, arrivals, completions)."""
    from coflowlab.instances import fb_like

    inst = fb_like(15, num_ports=12, seed=3)
    policy = _Checked()
    simulate(inst, policy, verify_schedule=True)
    assert policy.events > 15


def test_fair_on_fig_3_2():
    """Tests thesis Fig. 3.2: every flow gets 1/3 until t = 3; the coflow ends at 5."""
    assert simulate(fig_3_2(), FairSharing()).coflow_completion.tolist() == [5.0]

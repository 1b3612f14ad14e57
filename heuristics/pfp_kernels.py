"""The compiled event step of per-flow prioritisation (``pfp``,
:class:`coflowlab.heuristics.baselines.PerFlowPriority`): the ranking, the strict-priority
greedy and (with unequal capacities) the next overtaking, kept incrementally between events.

A flow's key ``remaining − rate·τ`` changes between events only while it sends, and at most
one flow per port is sending (each positive greedy rate saturates a port), so the flows at
rate 0 keep their keys: they stay in a sorted array (``S``, with dead entries marked, plus a
small sorted insertion buffer ``B`` merged into it now and then), and only the sending flows
(the dynamic set ``D``) are re-keyed and re-sorted at every event. The greedy walks the merge
of the three in rank order, which is the order of a full sort of the active flows, and stops
once no unsaturated ingress or no unsaturated egress has a flow left to visit (every later
flow would get rate 0). The walk also records, for each flow that gets a rate, the flow ranked
just ahead of it at each of its ports, which are the adjacent pairs the overtaking wake-up
watches.

When every port has the same capacity (the FB trace), ``match_step`` replaces that walk, which
touches nearly every active flow at every event: each positive greedy rate is then the full
capacity and saturates both ports, so the greedy is a matching built in rank order. Only the
best-ranked flow of each ingress-egress pair (its head) can be served (a served flow leaves
one of the pair's ports with nothing), so the flows are kept in per-pair sorted lists, and the
matching (``hold``: the flow holding each port) is kept between events and repaired:

- the sending flows only move up the ranking and the stopped ones down (their keys lose or
  regain ``rate·τ``), which leaves the matching unchanged, so it changes only where a
  completion frees two ports or an arrival becomes a pair's head;
- the repair is a sweep in rank order over a heap of candidate heads: a head whose two ports
  are not held by a better-ranked flow takes them, evicting their later holders, whose other
  port is then free from that rank on; a free port's next candidate is found by scanning the
  heads of its pairs (at most one per port at the other side), skipping those whose other
  port is held ahead of them, and is passed on when that candidate turns out blocked.
  Everything pushed ranks after what is being considered, so holders ranked ahead are final
  and the result is the greedy's, exactly.

The same argument (the sending flows move only up the ranking between events) shows that an
overtaking never changes the matching, so ``match_step`` computes no wake-up
(docs/varys.md#pfp-no-wake-ups). Unequal capacities use the walk (partial rates do not form a
matching), and there the wake-up is kept.

The scan over a port's pairs reads a cache laid out in the port's own order: each pair's head
and its key, stored at the pair's two places in the per-port pair lists and rewritten at both
whenever they change. The filter is then a contiguous pass over floats. Keys decide every
comparison unless they are equal, and only then are the tie-break columns read, so each test
has the outcome of the plain rank comparison and the result is the same, bit for bit. A
port is mostly scanned again, in the same sweep, from the candidate it returned last (that
candidate was blocked and passes the port on), so a scan keeps its few best candidates in
rank order and such a scan continues in them (``scan``; docs/engine-performance.md).

The policy mirrors the simulator's bookkeeping of bytes sent (``base_sent`` at ``base_t``,
updated only when a rate changes, :mod:`coflowlab.flow_state`), so the remaining bytes, keys
and rates are the same floating-point numbers a full re-sort at every event computes.
:mod:`coflowlab.heuristics.baselines` documents the policy; this module only holds the loops,
compiled with numba on first use (and cached on disk between runs).

The kernels' code sits at module level in :mod:`coflowlab.heuristics._pfp_jit`, so that numba's
disk cache finds them again in a new process.
"""

from __future__ import annotations

from functools import cache
from typing import Any

__all__ = ["kernels"]

# flow status
INACTIVE = 0
STATIC = 1  # active at rate 0: in S or B, key fixed
DYNAMIC = 2  # active and sending: in D, re-keyed at every event


@cache
def kernels() -> dict[str, Any]:
    """Compiles the numba kernels on first use (cached on disk between runs)."""
    from . import _pfp_jit as k

    return {"step": k.step, "sort_flows": k.sort_flows, "match_step": k.match_step}

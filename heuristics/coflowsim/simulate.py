"""The public entry point: :func:`simulate_coflowsim` and its result."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from coflowlab.instance import Instance
from coflowlab.schedules import FluidSchedule
from coflowlab.verifier import VerificationReport, verify

from ..registry import ENTRIES
from .rounding import EPOCH_MS, OFFLINE_EPOCH_MS, CoflowSimView

if TYPE_CHECKING:
    from .engine import CoflowEngine
    from .flowsim import FlowEngine

__all__ = ["POLICIES", "CoflowSimResult", "resolve_policy", "simulate_coflowsim"]

POLICIES: Mapping[str, str] = MappingProxyType(
    {e.name: e.coflowsim for e in ENTRIES if e.coflowsim is not None}
)
"""coflowlab's name of each supported CoflowSim policy, mapped to CoflowSim's name (the
``coflowsim`` field of the policy's registry entry).

``tcf`` (total-size-first) is CoflowSim's LCF, ``varys`` its SEBF, ``aalo`` its DARK, and
``varys-deadline`` its deadline mode (FIFO admission control, rates ``bytes / deadline``).
``yosemite`` is YosemiteSim's policy (the Yosemite authors' CoflowSim fork): SEBF's machinery
with the order ``weight / alpha``, largest first (docs/yosemite.md#yosemitesim).
:func:`simulate_coflowsim` accepts either spelling, in any case.
"""

_BY_JAVA = {java.lower(): ours for ours, java in POLICIES.items()}
_BY_JAVA["deadline"] = "varys-deadline"


def resolve_policy(policy: str) -> str:
    """coflowlab's name of a policy given in either spelling.

    Examples
    --------
    >>> resolve_policy("SEBF"), resolve_policy("aalo"), resolve_policy("LCF")
    ('varys', 'aalo', 'tcf')
    """
    key = str(policy).strip().lower()
    if key in POLICIES:
        return key
    if key in _BY_JAVA:
        return _BY_JAVA[key]
    names = ", ".join(POLICIES)
    raise ValueError(
        f"unknown CoflowSim policy {policy!r}; the CoflowSim time model supports: {names} "
        "(or CoflowSim's names: FIFO, SCF, NCF, LCF, SEBF, DARK, FAIR, PFP; YosemiteSim's "
        "YOSEMITE)"
    )


@dataclass(frozen=True, eq=False)
class CoflowSimResult:
    """The outcome of :func:`simulate_coflowsim`.

    Attributes
    ----------
    policy
        coflowlab's name of the policy (see :data:`POLICIES`).
    instance
        The instance as CoflowSim sees it (:func:`coflowsim_instance`): sizes in MiB (written
        MB), times in ms, releases at epoch starts. In deadline mode, only the admitted
        coflows, with their CoflowSim deadlines.
    schedule
        The fluid schedule (``None`` when run with ``record=False``).
    report
        :func:`coflowlab.verify` of ``schedule`` on ``instance`` at tolerance ``tol``.
    tol
        The verification tolerance: :data:`coflowlab.constants.TOL`, or less when a flow
        crawls through its last bytes, so that the verifier reads its last quantum as sending
        (see :mod:`.recorder`). Verify the schedule at this tolerance to read the same
        completions.
    completion
        Per coflow of ``instance``: its completion time (ms), from ``report`` (except for the
        coflows in ``crawled``).
    cct
        ``completion - release``, CoflowSim's CCT.
    labels
        Labels of the coflows of ``instance``.
    admitted, rejected, met
        Labels of the coflows admitted, rejected, and admitted with their deadline met
        (deadline mode only; otherwise every coflow is admitted and ``met`` is empty).
    deadline
        Per coflow of ``instance``, its deadline in ms (``inf`` outside deadline mode).
    num_events
        Number of rate reallocations (CoflowSim events).
    crawled
        Labels of the coflows whose completion is CoflowSim's own count, not the verifier's.
        In deadline mode CoflowSim sizes rates by bytes left, so a flow can crawl through its
        last thousandths of a byte at a ten-millionth of a byte per quantum, for seconds,
        until its reducer's byte count runs out. No fluid schedule at the verifier's
        resolution shows that; ``report`` completes such a coflow when its bytes are all
        delivered within tolerance, and ``completion`` keeps CoflowSim's later time. A coflow
        is listed only if the verifier's time is earlier and one of its flows crawls
        (:attr:`.recorder.Recorder.crawling`); any other disagreement is an error.
    offline
        Whether every coflow was released at 0.
    """

    policy: str
    instance: Instance
    schedule: FluidSchedule | None
    report: VerificationReport
    tol: float
    completion: npt.NDArray[np.float64]
    cct: npt.NDArray[np.float64]
    labels: tuple[str, ...]
    admitted: tuple[str, ...]
    rejected: tuple[str, ...]
    met: tuple[str, ...]
    deadline: npt.NDArray[np.float64]
    num_events: int
    offline: bool = False
    crawled: tuple[str, ...] = ()

    @property
    def total_cct(self) -> float:
        """Sum of the CCTs (ms), CoflowSim's last line (without rejected coflows)."""
        return float(np.sum(self.cct))

    @property
    def average_cct(self) -> float:
        """Average CCT (ms)."""
        return float(np.mean(self.cct)) if len(self.cct) else float("nan")

    def cct_by_label(self) -> dict[str, float]:
        """CCT of each coflow by label."""
        return dict(zip(self.labels, self.cct.tolist(), strict=True))

    def __repr__(self) -> str:
        """A one-line summary.

        Examples
        --------
        >>> from coflowlab.instances.examples import coflowsim_micro
        >>> simulate_coflowsim(coflowsim_micro(), "aalo")
        <CoflowSimResult aalo: 3 coflows, sum CCT 168 ms, 4 events>
        """
        return (
            f"<CoflowSimResult {self.policy}: {len(self.labels)} coflows, sum CCT "
            f"{self.total_cct:g} ms, {self.num_events} events>"
        )


def simulate_coflowsim(
    instance: Instance,
    policy: str,
    *,
    offline: bool = False,
    deadline_factor: float = 1.0,
    record: bool = True,
) -> CoflowSimResult:
    """Replays ``instance`` with CoflowSim's time model and one of its policies.

    Parameters
    ----------
    instance
        The instance; it is first turned into CoflowSim's view (:func:`coflowsim_instance`).
    policy
        A name of :data:`POLICIES`, coflowlab's (``"varys"``) or CoflowSim's (``"SEBF"``).
    offline
        Admit, and release, every coflow at 0 (CoflowSim's offline mode).
    deadline_factor
        Deadline mode only: deadline = isolated bottleneck time ``× (1 + U[0, 1) × factor)``;
        CoflowSim's command line uses 1.
    record
        Keep the schedule in the result (it is always built and verified).

    Returns
    -------
    CoflowSimResult
        Completion times come from :func:`coflowlab.verify` on the schedule; the engine's
        own bookkeeping only cross-checks them (see ``crawled`` for the one exception).

    Notes
    -----
    The model is CoflowSim's (docs/coflowsim-model.md): 10,240 ms admission epochs, 8 ms
    quanta, 1 MiB per quantum per port, MiB rounding, and rates recomputed only at the events
    CoflowSim uses. Each flow's bytes left are kept bit-for-bit as CoflowSim's Java doubles,
    so flows end in the same quanta.

    Examples
    --------
    CoflowSim's micro-trace under FIFO: CCTs 8, 32 and 104 ms.

    >>> from coflowlab.instances.examples import coflowsim_micro
    >>> res = simulate_coflowsim(coflowsim_micro(), "fifo")
    >>> res.cct.tolist(), res.report.feasible
    ([8.0, 32.0, 104.0], True)
    """
    name = resolve_policy(policy)
    if not (np.isfinite(deadline_factor) and deadline_factor >= 0):
        raise ValueError(f"deadline_factor must be finite and >= 0, got {deadline_factor!r}")
    epoch = OFFLINE_EPOCH_MS if offline else EPOCH_MS
    deadline_mode = name == "varys-deadline"
    view = CoflowSimView.from_instance(
        instance, epoch=epoch, deadline_factor=deadline_factor if deadline_mode else 1.0
    )
    java = POLICIES[name]
    engine: CoflowEngine | FlowEngine
    if java in ("FAIR", "PFP"):
        from .flowsim import FlowEngine

        engine = FlowEngine(view, java.lower(), epoch)
    else:
        from .engine import CoflowEngine

        order = {"SEBF-DEADLINE": "deadline", "DARK": "dark"}.get(java, java.lower())
        weight = np.asarray(instance.coflow_weight) if order == "yosemite" else None
        engine = CoflowEngine(view, order, epoch, weight=weight)
    engine.run()
    _check_finished(instance, engine)
    sched = engine.rec.schedule(view.num_flows)
    full = view.to_instance(instance, offline=offline)
    admitted_mask = np.asarray(engine.admitted)
    own_finish = np.asarray(engine.finish)
    crawls = np.zeros(full.num_coflows, dtype=bool)
    crawls[full.flow_coflow[engine.rec.crawling]] = True
    if deadline_mode:
        keep = np.flatnonzero(admitted_mask)
        crawls = crawls[keep]
        inst = full.subset(keep.tolist()).replace(coflow_deadline=view.deadline[keep])
        flows = np.concatenate([full.coflow_flows(int(k)) for k in keep]) if keep.size else None
        sched = _restrict(sched, flows, full.num_flows)
        own = own_finish[keep]
        deadline = view.deadline[keep]
    else:
        inst = full
        own = own_finish
        deadline = np.full(full.num_coflows, np.inf)
    report = verify(inst, sched, tol=engine.rec.tol)
    completion, crawled = _cross_check(inst, report, own, crawls)
    cct = completion - inst.coflow_release
    labels = inst.coflow_label
    met: tuple[str, ...] = ()
    if deadline_mode:
        ok = _deadline_met(cct, deadline)
        met = tuple(lab for lab, good in zip(labels, ok.tolist(), strict=True) if good)
    rejected = tuple(full.coflow_label[k] for k in np.flatnonzero(~admitted_mask).tolist())
    return CoflowSimResult(
        policy=name,
        instance=inst,
        schedule=sched if record else None,
        report=report,
        tol=float(engine.rec.tol),
        completion=completion,
        cct=cct,
        labels=labels,
        admitted=tuple(labels),
        rejected=rejected,
        met=met,
        crawled=crawled,
        deadline=deadline,
        num_events=int(engine.num_events),
        offline=offline,
    )


def _deadline_met(cct: np.ndarray, deadline: np.ndarray) -> np.ndarray:
    """CoflowSim's rule: ``CCT - deadline < 100 ms``, or an overrun below 3 %."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (cct / 8.0) / (deadline * 128.0 / 1000.0) - 1.0
    return (cct - deadline < 100) | (ratio < 0.03)


def _restrict(sched: FluidSchedule, flows: np.ndarray | None, num_flows: int) -> FluidSchedule:
    """The records of ``flows`` only, renumbered in the order given."""
    if flows is None:
        return FluidSchedule(0, [], np.zeros(0, dtype=np.int64), [])
    new_index = np.full(num_flows, -1, dtype=np.int64)
    new_index[flows] = np.arange(len(flows))
    keep = new_index[sched.flow] >= 0
    return FluidSchedule(
        len(flows), sched.time[keep], new_index[sched.flow[keep]], sched.rate[keep]
    )


def _check_finished(instance: Instance, engine: CoflowEngine | FlowEngine) -> None:
    """Raises if a coflow that was not rejected is unfinished when CoflowSim's simulated day
    (:data:`OFFLINE_EPOCH_MS` = 86,400 x 1,024 ms) ends: its engine stops there."""
    from coflowlab.simulator import SimulationError  # lazy: the simulator imports heuristics

    finish = np.asarray(engine.finish)
    rejected = np.asarray(getattr(engine, "rejected", np.zeros(len(finish), dtype=bool)))
    late = np.flatnonzero(np.isnan(finish) & ~rejected)
    if late.size:
        k = int(late[0])
        raise SimulationError(
            f"coflow {instance.coflow_label[k]!r} does not finish within the {OFFLINE_EPOCH_MS:,} "
            f"ms (86,400 x 1,024 ms) that CoflowSim's time model simulates ({late.size} of "
            f"{len(finish)} coflows unfinished); use --time-model exact"
        )


def _cross_check(
    inst: Instance, report: VerificationReport, own: np.ndarray, crawls: np.ndarray
) -> tuple[npt.NDArray[np.float64], tuple[str, ...]]:
    """The completion times to report, and the labels of the coflows whose time is the
    engine's (see :attr:`CoflowSimResult.crawled`); raises if the engine and the verifier
    disagree otherwise. ``crawls`` marks the coflows with a crawling flow."""
    completion = np.array(report.coflow_completion, dtype=float)
    tol = max(report.time_tol, 1e-9)
    late = own > completion + tol
    bad = np.flatnonzero(~np.isclose(completion, own, rtol=0.0, atol=tol) & ~(late & crawls))
    if bad.size:
        k = int(bad[0])
        raise AssertionError(
            f"coflow {inst.coflow_label[k]!r}: verify completes it at {completion[k]!r}, the "
            f"CoflowSim engine at {own[k]!r}"
        )
    completion[late] = own[late]
    return completion, tuple(inst.coflow_label[k] for k in np.flatnonzero(late).tolist())

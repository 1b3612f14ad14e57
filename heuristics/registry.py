"""The online policies of the one registry (:mod:`coflowlab.registry`): names for the CLI,
``compare``, :func:`coflowlab.run` and proofs-checks.

Adding a policy means writing its module and adding one
:class:`~coflowlab.registry.AlgorithmEntry` to :data:`ENTRIES`.

Parameters given as text (``--param T=2000``) are converted with the type annotations of the
policy's constructor. Time and size parameters are in the instance's units; the papers state
their defaults in ms and MB (Varys' T = 2 s and δ = 200 ms, Aalo's Δ = 10 ms and Q1 = 10 MB),
so :func:`make_policy` converts those defaults when the instance's units are other byte or
time units (dimensionless instances keep the numbers as they are).
"""

from __future__ import annotations

from typing import Any

from coflowlab.approximations.registry import SINCRONIA
from coflowlab.constants import MB_PER_UNIT, MS_PER_UNIT
from coflowlab.instance import Instance
from coflowlab.params import convert_params
from coflowlab.policy import Policy
from coflowlab.registry import AlgorithmEntry, Family, Paper
from coflowlab.time_models import TimeModel

__all__ = ["ENTRIES", "POLICIES", "make_policy", "policy_names"]

_VARYS = Paper(
    "Chowdhury, Zhong, Stoica", "Efficient Coflow Scheduling with Varys", "SIGCOMM", 2014
)
_AALO = Paper(
    "Chowdhury, Stoica", "Efficient Coflow Scheduling Without Prior Knowledge", "SIGCOMM", 2015
)
_VARYS_TIMES = ("T", "delta")
_PHILAE = Paper(
    "Jajoo, Hu, Lin",
    "Your Coflow has Many Flows: Sampling them for Fun and Speed",
    "USENIX ATC",
    2019,
)
_HUG = Paper(
    "Chowdhury",
    "Coflow: A Networking Abstraction for Distributed Data-Parallel Applications (Ch. 7, HUG)",
    "PhD thesis, UC Berkeley",
    2015,
)
_COFLEX = Paper(
    "Wang, Ma, Li, Li",
    "Coflex: Navigating the Fairness-Efficiency Tradeoff for Coflow Scheduling",
    "INFOCOM",
    2017,
)

# Our copy is an anonymous submission (#117) without a date; the year is that of the authors'
# public simulator, YosemiteSim (docs/yosemite.md).
_YOSEMITE = Paper(
    "anonymous submission #117",
    "Yosemite: Efficient Scheduling of Weighted Coflows in Data Centers",
    "unpublished copy; simulator YosemiteSim",
    2018,
)


def _online(name: str, target: str, summary: str, **kw: Any) -> AlgorithmEntry:
    return AlgorithmEntry(
        name, Family.ONLINE, f"coflowlab.heuristics.{target}", TimeModel.FLUID, summary, **kw
    )


ENTRIES: tuple[AlgorithmEntry, ...] = (
    _online(
        "fair",
        "fair:FairSharing",
        "per-flow max-min fairness (TCP), the baseline of the Varys and Aalo evaluations",
        coflowsim="FAIR",
    ),
    _online(
        "pfp",
        "baselines:PerFlowPriority",
        "per-flow priority, smallest remaining first (pFabric-like)",
        paper=Paper(
            "Alizadeh, Yang, Sharif, Katti, McKeown, Prabhakar, Shenker",
            "pFabric: Minimal Near-Optimal Datacenter Transport",
            "SIGCOMM",
            2013,
        ),
        coflowsim="PFP",
    ),
    _online(
        "fifo",
        "varys:VarysFIFO",
        "coflows in arrival order, MADD + backfill (Orchestra-like)",
        paper=Paper(
            "Chowdhury, Zaharia, Ma, Jordan, Stoica",
            "Managing Data Transfers in Computer Clusters with Orchestra",
            "SIGCOMM",
            2011,
        ),
        ms_params=_VARYS_TIMES,
        coflowsim="FIFO",
    ),
    _online(
        "fifo-lm",
        "fifo_lm:FifoLM",
        "Baraat: FIFO with limited multiplexing of heavy coflows",
        paper=Paper(
            "Dogar, Karagiannis, Ballani, Rowstron",
            "Decentralized Task-Aware Scheduling for Data Center Networks",
            "SIGCOMM",
            2014,
        ),
        mb_params=("threshold",),
    ),
    _online(
        "varys",
        "varys:Varys",
        "Varys: SEBF order, MADD, backfill, starvation avoidance",
        paper=_VARYS,
        ms_params=_VARYS_TIMES,
        coflowsim="SEBF",
    ),
    _online(
        "scf",
        "varys:VarysSCF",
        "Varys machinery, smallest-coflow-first (length)",
        paper=_VARYS,
        ms_params=_VARYS_TIMES,
        coflowsim="SCF",
    ),
    _online(
        "ncf",
        "varys:VarysNCF",
        "Varys machinery, narrowest-coflow-first (width)",
        paper=_VARYS,
        ms_params=_VARYS_TIMES,
        coflowsim="NCF",
    ),
    _online(
        "tcf",
        "varys:VarysTCF",
        "Varys machinery, smallest-total-size-first",
        paper=_VARYS,
        ms_params=_VARYS_TIMES,
        coflowsim="LCF",
    ),
    _online(
        "varys-deadline",
        "varys:VarysDeadline",
        "Varys deadline mode: admission control, rate = remaining / time left",
        paper=_VARYS,
        coflowsim="SEBF-DEADLINE",
    ),
    _online(
        "aalo",
        "aalo:Aalo",
        "Aalo: D-CLAS, non-clairvoyant, coordinated every Δ",
        paper=_AALO,
        ms_params=("delta",),
        mb_params=("first_threshold",),
        coflowsim="DARK",
    ),
    _online(
        "aalo-uncoordinated",
        "aalo:AaloUncoordinated",
        "Aalo without coordination: each port decides from local bytes",
        paper=_AALO,
        mb_params=("first_threshold",),
    ),
    # fair sharing (thesis Ch. 7) and Coflex's knob (issue 16; docs/hug-coflex.md)
    _online(
        "hug",
        "hug:HUG",
        "HUG: optimal isolation guarantee P*, spare capped at P* (strategy-proof)",
        paper=_HUG,
    ),
    _online(
        "hug-cooperative",
        "hug:HUGCooperative",
        "HUG, cooperative mode: optimal isolation guarantee P*, spare uncapped",
        paper=_HUG,
    ),
    _online(
        "drf",
        "fair_share:DRF",
        "dominant resource fairness on the up/downlinks (not work conserving)",
        paper=Paper(
            "Ghodsi, Zaharia, Hindman, Konwinski, Shenker, Stoica",
            "Dominant Resource Fairness: Fair Allocation of Multiple Resource Types",
            "NSDI",
            2011,
        ),
    ),
    _online(
        "ps-p",
        "fair_share:PSP",
        "PS-P (FairCloud): per-link equal split among coflows, then work conservation",
        paper=Paper(
            "Popa, Kumar, Chowdhury, Krishnamurthy, Ratnasamy, Stoica",
            "FairCloud: Sharing the Network in Cloud Computing",
            "SIGCOMM",
            2012,
        ),
    ),
    _online(
        "coflex",
        "coflex:Coflex",
        "Coflex(alpha): alpha*P* progress for all, the rest SEBF + MADD (+ backfill)",
        paper=_COFLEX,
    ),
    _online(
        "coflex-naive",
        "coflex:CoflexNaive",
        "Coflex's NaiveTradeoff(alpha): alpha*P*, spare capped at alpha*P*",
        paper=_COFLEX,
    ),
    # learning what they cannot see (issue 18; docs/philae-coda.md)
    _online(
        "philae",
        "philae:Philae",
        "Philae: pilot-flow sampling, contention-aware queues (policy D), non-clairvoyant",
        paper=_PHILAE,
        mb_params=("first_threshold",),
    ),
    _online(
        "philae-oracle",
        "philae:PhilaeOracle",
        "Philae handed the true sizes (no pilots): the paper's upper reference",
        paper=_PHILAE,
        mb_params=("first_threshold",),
    ),
    _online(
        "coda",
        "coda:Coda",
        "CODA: Rough-DBSCAN identification without labels, late binding, D-CLAS + intra-coflow",
        paper=Paper(
            "Zhang, Chen, Yi, Chen, Chowdhury, Geng",
            "CODA: Toward Automatically Identifying and Scheduling Coflows in the Dark",
            "SIGCOMM",
            2016,
        ),
        ms_params=("eps", "tau", "d"),
        mb_params=("first_threshold", "flow_first_threshold"),
    ),
    # the online form of Sincronia (docs/sincronia-online.md)
    _online(
        "sincronia-online",
        "sincronia_online:SincroniaOnline",
        "Sincronia online: doubling epochs, admission LP (x >= 1/2), BSSI, slowdown tail",
        paper=SINCRONIA,
    ),
    # weighted coflows (docs/yosemite.md)
    _online(
        "yosemite",
        "yosemite:Yosemite",
        "Yosemite: largest weight / remaining bottleneck first, MADD, fair leftover",
        paper=_YOSEMITE,
        coflowsim="YOSEMITE",
    ),
    _online(
        "yosemite-offline",
        "yosemite:YosemiteOffline",
        "Yosemite's Algorithm 1 order (primal-dual 2-approx.), MADD, fair leftover",
        paper=_YOSEMITE,
    ),
)
"""The online policies, in listing order (their entries in :data:`coflowlab.REGISTRY`)."""

POLICIES: dict[str, AlgorithmEntry] = {e.name: e for e in ENTRIES}
"""The online policies by name."""


def policy_names() -> list[str]:
    """The registered names, in registry order."""
    return list(POLICIES)


def make_policy(name: str, instance: Instance | None = None, **params: Any) -> Policy:
    """Builds the registered policy ``name``.

    Parameters
    ----------
    name
        A registry name (see :data:`POLICIES`).
    instance
        When given, paper defaults stated in ms or MB are converted to its units.
    params
        Constructor arguments; text is converted with the constructor's annotations
        (:func:`coflowlab.params.convert`).

    Raises
    ------
    ValueError
        For an unknown name or parameter, or a value that does not convert.

    Examples
    --------
    >>> make_policy("fair").name
    'fair'
    >>> make_policy("varys", T="1000").T
    1000.0
    """
    entry = POLICIES.get(name)
    if entry is None:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(POLICIES)}")
    cls: Any = entry.load()
    kwargs: dict[str, Any] = dict(entry.fixed)
    if instance is not None:
        defaults = {p.name: p.default for p in entry.parameters()}
        for group, table, unit in (
            (entry.ms_params, MS_PER_UNIT, instance.units.time),
            (entry.mb_params, MB_PER_UNIT, instance.units.size),
        ):
            per_unit = table.get(unit)
            for p in group:
                if per_unit is not None and p in defaults and p not in params:
                    kwargs[p] = defaults[p] / per_unit
    kwargs.update(convert_params(cls, params, owner=f"policy {name!r}"))
    return cls(**kwargs)

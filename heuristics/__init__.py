"""Online heuristics for the event-driven simulator (:func:`coflowlab.simulate`).

Every policy is registered by name in :data:`POLICIES` (:mod:`.registry`); build one with
:func:`make_policy`. Modules: :mod:`.fair` (per-flow fairness), :mod:`.baselines` (per-flow
priority), :mod:`.fifo_lm` (Baraat's FIFO-LM), :mod:`.varys` (Varys and its orderings,
deadline mode), :mod:`.aalo` (Aalo's D-CLAS), :mod:`.hug`, :mod:`.fair_share` and
:mod:`.coflex` (HUG, DRF, PS-P, Coflex; :mod:`.correlation` their shared steps),
:mod:`.yosemite` (weighted coflows), :mod:`.sincronia_online` (Sincronia's epochs),
:mod:`.philae` and :mod:`.coda` (sampling, identification), :mod:`.coflowsim` (the
CoflowSim-compatible time model).
"""

from .aalo import Aalo as Aalo
from .aalo import AaloUncoordinated as AaloUncoordinated
from .baselines import PerFlowPriority as PerFlowPriority
from .coda import Coda as Coda
from .coflex import Coflex as Coflex
from .coflex import CoflexNaive as CoflexNaive
from .fair import FairSharing as FairSharing
from .fair_share import DRF as DRF
from .fair_share import PSP as PSP
from .fifo_lm import FifoLM as FifoLM
from .hug import HUG as HUG
from .hug import HUGCooperative as HUGCooperative
from .philae import Philae as Philae
from .philae import PhilaeOracle as PhilaeOracle
from .registry import ENTRIES as ENTRIES
from .registry import POLICIES as POLICIES
from .registry import make_policy as make_policy
from .registry import policy_names as policy_names
from .sincronia_online import SincroniaOnline as SincroniaOnline
from .varys import Varys as Varys
from .varys import VarysDeadline as VarysDeadline
from .varys import VarysFIFO as VarysFIFO
from .varys import VarysNCF as VarysNCF
from .varys import VarysSCF as VarysSCF
from .varys import VarysTCF as VarysTCF
from .yosemite import Yosemite as Yosemite
from .yosemite import YosemiteOffline as YosemiteOffline

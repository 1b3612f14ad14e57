"""CoflowSim-compatible time model: a from-scratch re-implementation of CoflowSim's behaviour.

CoflowSim (Chowdhury, github coflow/coflowsim: the Java simulator behind most published coflow
results) is described in docs/coflowsim-model.md; this package reproduces its time model and
policies so that its published numbers can be compared with coflowlab's:

:func:`coflowsim_instance`
    The instance as CoflowSim sees it (MiB rounding, full shuffles, epoch releases).
:func:`simulate_coflowsim`
    A replay under one of :data:`POLICIES`, as a verified fluid schedule.
:class:`JavaRandom`
    ``java.util.Random``, bit for bit (CoflowSim's deadlines and backfill order use it).

No CoflowSim code is used; the behaviour was re-implemented from its description.
"""

from .javarandom import JavaRandom as JavaRandom
from .rounding import CoflowSimView as CoflowSimView
from .rounding import coflowsim_instance as coflowsim_instance
from .rounding import epoch_release as epoch_release
from .simulate import POLICIES as POLICIES
from .simulate import CoflowSimResult as CoflowSimResult
from .simulate import resolve_policy as resolve_policy
from .simulate import simulate_coflowsim as simulate_coflowsim

__all__ = [
    "POLICIES",
    "CoflowSimResult",
    "CoflowSimView",
    "JavaRandom",
    "coflowsim_instance",
    "epoch_release",
    "resolve_policy",
    "simulate_coflowsim",
]

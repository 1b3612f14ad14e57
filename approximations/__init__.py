"""Approximation algorithms with certified ratios, and ordering baselines.

One module per paper: :mod:`.primal_dual` (Mastrolilli et al. 2010, BSSI), :mod:`.sincronia`
(Agarwal et al. 2018), :mod:`.lp_ov_ls` (Shafiee-Ghaderi 2018), :mod:`.qsz` (Qiu-Stein-Zhong
2015), :mod:`.alpha_point` (Chowdhury et al. 2019), the plain orderings of
:mod:`.plain_orderings`, and the Birkhoff-von Neumann / König decomposition
(:mod:`.decomposition`). Every algorithm returns a :class:`coflowlab.solution.Solution` with a
verified schedule, the certified lower bound it is measured against, its proven guarantee and
the achieved ratio; :func:`ratio` measures it against OPT, the LP or the dual. Each is
registered in :data:`METHODS` and runs as ``coflowlab solve FILE --method NAME``.
"""

from __future__ import annotations

from .ratio import Ratio as Ratio
from .ratio import ratio as ratio
from .registry import METHODS as METHODS
from .registry import method_names as method_names
from .registry import run_method as run_method

__all__ = ["METHODS", "Ratio", "method_names", "ratio", "run_method"]

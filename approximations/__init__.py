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

from .alpha_point import solve_alpha_point as solve_alpha_point
from .alpha_point import solve_alpha_point_derandomized as solve_alpha_point_derandomized
from .lp_ov_ls import solve_lp_ov_ls as solve_lp_ov_ls
from .plain_orderings import solve_order_fifo as solve_order_fifo
from .plain_orderings import solve_order_ncf as solve_order_ncf
from .plain_orderings import solve_order_scf as solve_order_scf
from .plain_orderings import solve_order_sebf as solve_order_sebf
from .plain_orderings import solve_order_smith as solve_order_smith
from .plain_orderings import solve_order_tcf as solve_order_tcf
from .qsz import solve_qsz as solve_qsz
from .qsz import solve_qsz_random as solve_qsz_random
from .ratio import Ratio as Ratio
from .ratio import ratio as ratio
from .registry import ENTRIES as ENTRIES
from .registry import METHODS as METHODS
from .registry import method_names as method_names
from .registry import run_method as run_method
from .sincronia import solve_primal_dual as solve_primal_dual
from .sincronia import solve_sincronia as solve_sincronia

__all__ = [
    "ENTRIES",
    "METHODS",
    "Ratio",
    "method_names",
    "ratio",
    "run_method",
    "solve_alpha_point",
    "solve_alpha_point_derandomized",
    "solve_lp_ov_ls",
    "solve_order_fifo",
    "solve_order_ncf",
    "solve_order_scf",
    "solve_order_sebf",
    "solve_order_smith",
    "solve_order_tcf",
    "solve_primal_dual",
    "solve_qsz",
    "solve_qsz_random",
    "solve_sincronia",
]

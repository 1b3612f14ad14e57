"""The compiled loops of D-CLAS (Aalo; Chowdhury thesis §6.5.4, docs/aalo.md): per-port queue
entitlements, max-min within a coflow, redistribution rounds and the wake-up search.

:mod:`coflowlab.heuristics.aalo` documents what they compute; this module only holds them,
compiled with numba on first use (and cached on disk between runs) so that importing the
policies stays cheap.

The kernels' code sits at module level in :mod:`coflowlab.heuristics._dclas_jit`, so that numba's
disk cache finds them again in a new process.
"""

from __future__ import annotations

from functools import cache
from typing import Any

__all__ = ["kernels"]


@cache
def kernels() -> dict[str, Any]:
    """Compiles the numba kernels on first use (cached on disk between runs)."""
    from . import _dclas_jit as k

    return {
        "allocate": k.allocate,
        "allocate_dense": k.allocate_dense,
        "collect": k.collect,
        "collect_sparse": k.collect_sparse,
        "mark_flows": k.mark_flows,
        "wakeups": k.wakeups,
        "fill_group": k.fill_group,
        "fifo_update": k.fifo_update,
        "fifo_advance": k.fifo_advance,
        "fifo_step": k.fifo_step,
        "could_grow": k.could_grow,
        "unc_update": k.unc_update,
        "unc_allocate": k.unc_allocate,
    }

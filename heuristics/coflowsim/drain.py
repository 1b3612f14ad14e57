"""Bit-exact fast-forwarding of CoflowSim's per-quantum byte accounting
(docs/coflowsim-model.md#units: 8 ms quanta, ``ZERO = 1e-3``).

In every 8 ms quantum CoflowSim moves ``t = min(d, r)`` bytes of a flow with ``r`` bytes left
and ``d = rate / 1024`` bytes per quantum, sets ``r = r - t`` in IEEE double arithmetic, and
calls the flow finished once ``r <= 1e-3`` (its ``ZERO``). Whether a flow ends in one quantum or
the next can hinge on the last bits of ``r``, so replaying the trace needs ``r`` exactly as
Java computes it, without stepping through every quantum.

:func:`drain` does that. While ``r`` stays in one binade ``[2**e, 2**(e+1))`` every result lies
on the grid ``u = 2**(e-52)``, so each subtraction removes ``d`` rounded to that grid: a
constant amount (after at most one step when ``d`` is exactly halfway between grid points,
where round-half-even makes the result even and keeps it so). The quanta inside a binade are
therefore one integer multiplication; a single true subtraction crosses into the next binade.
:func:`accumulate` applies the same argument to CoflowSim's running sums. The loops are
compiled (:mod:`.kernels`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from . import kernels
from .kernels import FOREVER, ZERO

__all__ = ["FOREVER", "ZERO", "accumulate", "drain", "drain_reference"]


def drain(
    rem: npt.ArrayLike, per_quantum: npt.ArrayLike, quanta: npt.ArrayLike
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """Applies up to ``quanta`` quanta of CoflowSim's update ``r -= min(d, r)`` to each flow.

    Parameters
    ----------
    rem
        Bytes left ``r`` of each flow (``> 1e-3``).
    per_quantum
        Bytes per quantum ``d`` of each flow (``>= 0``).
    quanta
        Most quanta to apply, per flow or one for all; :data:`FOREVER` runs to the end.

    Returns
    -------
    rem, steps
        The bytes left afterwards (exactly as Java computes them), and the number of quanta
        applied: ``quanta`` unless the flow finished, else the 1-based quantum in which it
        finished (then ``rem <= 1e-3``). A flow that cannot finish (``d = 0``, or ``d`` lost to
        rounding) uses all its quanta.

    Examples
    --------
    Three quanta of a third of a MiB leave a residue far below ``ZERO``:

    >>> r, n = drain([1048576.0], [1048576.0 / 3], [FOREVER])
    >>> n.tolist(), bool(r[0] <= 1e-3)
    ([3], True)
    """
    r = np.ascontiguousarray(rem, dtype=np.float64).ravel()
    d = np.ascontiguousarray(np.broadcast_to(np.asarray(per_quantum, dtype=np.float64), r.shape))
    left = np.ascontiguousarray(np.broadcast_to(np.asarray(quanta, dtype=np.int64), r.shape))
    out = np.empty_like(r)
    steps = np.empty(r.shape, dtype=np.int64)
    kernels.drain(r, d, left, out, steps)
    return out, steps


def drain_reference(rem: float, per_quantum: float, quanta: int) -> tuple[float, int]:
    """:func:`drain` for one flow, one quantum at a time (for tests).

    Examples
    --------
    >>> drain_reference(3145728.0, 1048576.0, 10)
    (0.0, 3)
    """
    r, n = float(rem), 0
    while n < quanta and per_quantum > 0:
        r -= min(per_quantum, r)
        n += 1
        if r <= ZERO:
            break
    else:
        n = max(n, quanta) if per_quantum <= 0 else n
    return r, n


def accumulate(total: float, addends: npt.ArrayLike, quanta: int) -> float:
    """``total`` after ``quanta`` rounds of ``for a in addends: total += a`` in IEEE doubles.

    CoflowSim keeps running sums (bytes a coflow has sent, bytes a reducer has left) that
    take one addition per flow per quantum. All addends must have the same sign. While the sum
    stays in one binade every addition rounds its addend to the binade's grid, so a round
    adds a fixed integer number of grid steps and many rounds take one multiplication; rounds
    that cross a binade, or meet an addend exactly halfway between grid points, are done one
    addition at a time.

    Examples
    --------
    >>> third = 1048576.0 / 3
    >>> accumulate(0.0, [third] * 3, 10) == sum([third] * 30)
    True
    """
    a = np.ascontiguousarray(addends, dtype=np.float64).ravel()
    if int(quanta) <= 0 or not a.size:
        return float(total)
    return float(kernels.accumulate(float(total), a, 0, a.size, int(quanta)))

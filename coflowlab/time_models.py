"""The two time and capacity models of the coflow literature (docs/theory.md#time-models).

``FLUID``
    Rates: each flow sends at a rate that may change at any real time; at every instant the
    rates through a port sum to at most its capacity. Preemptive and divisible. The model of
    Varys, Aalo, Sincronia and the α-point algorithm.
``SLOTTED``
    Unit time slots: slot ``s = 1, 2, ...`` covers ``[s - 1, s)``. In each slot every port
    moves at most its capacity in whole units (with unit capacities: each slot is a matching).
    Sizes must be integral. The model of Qiu–Stein–Zhong and Im–Purohit.

Fluid OPT ≤ slotted OPT on integral data; the two can differ, so every function where the
model matters takes it as an explicit parameter.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["TimeModel"]


class TimeModel(StrEnum):
    """Time and capacity model; see the module docstring."""

    FLUID = "fluid"
    SLOTTED = "slotted"

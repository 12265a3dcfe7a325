"""The fixed-step clock: an accumulator of frame time, a cap on substeps per frame, and the
time it had to drop.

Source: ``SPEC.md`` section 2 ("Fixed steps, frames and targets").
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import validation


@dataclass(frozen=True)
class StepPlan:
    """What one ``advance(frame_dt)`` does, computed before anything changes.

    Attributes:
        substep_count: n, the substeps to run (0 ≤ n ≤ max_substeps).
        alphas: (n,) float32, the target interpolation fraction of substep j = 1..n.
        accumulator: seconds left in the accumulator after the frame (< substep).
        dropped: seconds discarded by the cap in this frame (≥ 0).
        blend: σ = accumulator / substep in [0, 1), the weight of the last substep's state
            against the one before it in frame-time output.
        path_step: seconds of the target path that one substep stands for: the substep h,
            or span/cap on a capped frame, where the whole span's motion is played in cap
            substeps. The root's velocity and acceleration are measured over it, so that a
            hitch (a frame of 0.3 s, 1 s, 3 s) does not read as a body moving many times
            faster than it did and spin the chains up.
        span: seconds the targets are interpolated over in this frame (accumulator + frame_dt).
    """

    substep_count: int
    alphas: np.ndarray
    accumulator: float
    dropped: float
    blend: float
    path_step: float
    span: float


class FixedStepClock:
    """Accumulates frame time and cuts it into fixed substeps (SPEC section 2).

    Args:
        substep: h in seconds, finite and > 0.
        max_substeps: the cap on substeps per frame, an integer ≥ 1.

    Raises:
        ValueError, TypeError: for a bad substep or cap.
    """

    def __init__(self, substep: float = 1.0 / 120.0, max_substeps: int = 8):
        self.substep = float(validation.positive("substep", substep))
        if isinstance(max_substeps, bool) or not isinstance(max_substeps, (int, np.integer)):
            raise TypeError(f"max_substeps: expected an integer, got {type(max_substeps).__name__}")
        if max_substeps < 1:
            raise ValueError(f"max_substeps = {max_substeps!r}: expected an integer >= 1")
        self.max_substeps = int(max_substeps)
        self.accumulator = 0.0
        self.substeps_run = 0
        self.dropped_time = 0.0

    @property
    def sim_time(self) -> float:
        """Simulated seconds: substeps run × substep."""
        return self.substeps_run * self.substep

    def plan(self, frame_dt) -> StepPlan:
        """The substeps for a frame of ``frame_dt`` seconds, without changing the clock.

        ``span = acc + frame_dt``, ``n = floor(span/h + 1e-9)``; up to the cap substep j
        uses ``α_j = min(j·h/span, 1)``; past it, ``α_j = j/cap`` and the rest is dropped.

        Raises:
            ValueError: frame_dt negative or not finite. TypeError: not a number.
        """
        dt = validation.frame_time("frame_dt", frame_dt)
        h, cap = self.substep, self.max_substeps
        span = self.accumulator + dt
        n = math.floor(span / h + 1e-9)
        if n <= cap:
            acc = max(span - n * h, 0.0)
            j = np.arange(1, n + 1, dtype=np.float64)
            alphas = np.minimum(j * h / span, 1.0) if n else j
            dropped = 0.0
        else:
            alphas = np.arange(1, cap + 1, dtype=np.float64) / cap
            dropped = span - cap * h
            acc = 0.0
            n = cap
            return StepPlan(n, alphas.astype(np.float32), acc, dropped, 0.0, span / cap, span)
        return StepPlan(n, alphas.astype(np.float32), acc, dropped, min(acc / h, 1.0), h, span)

    def commit(self, plan: StepPlan) -> None:
        """Apply a plan made by :meth:`plan`."""
        self.accumulator = plan.accumulator
        self.substeps_run += plan.substep_count
        self.dropped_time += plan.dropped

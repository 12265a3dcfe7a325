"""The fixed-step clocks: an accumulator of frame time, a cap on substeps per frame, the time
it had to drop, the path step of a capped frame (:class:`FixedStepClock`, :class:`StepPlan`),
and the pair of clocks a solver runs, full rate and the half rate of level of detail "half"
(:class:`FrameClock`, :class:`FramePlan`), which also notices a frame time that looks like
milliseconds (:meth:`FrameClock.milliseconds_hint`, :class:`FrameTimeWarning`), and the
``stacklevel`` that points a warning at the program's call (:func:`stacklevel_outside_package`).

Source: ``SPEC.md`` section 2 ("Fixed steps, frames and targets").
"""
from __future__ import annotations

import math
import os
import sys
import warnings
from dataclasses import dataclass

import numpy as np

from . import validation

#: ``n = floor(span/h + STEP_TOLERANCE)`` (SPEC 2): a frame of exactly k substeps runs k even
#: when span/h rounds to just below k.
STEP_TOLERANCE = 1e-9
#: The largest cap on substeps per frame a clock accepts: one frame's work stays bounded
#: (raise it here for more).
MAX_SUBSTEPS = 1000
#: A frame time above this (s) on a clock whose earlier frames were all at most
#: :data:`SHORT_FRAME_SECONDS` (or that has run none) looks like milliseconds given as seconds.
SUSPECT_FRAME_SECONDS = 1.0
#: The longest frame (s) of a run at an interactive or video rate: 10 frames a second.
SHORT_FRAME_SECONDS = 0.1
MS_PER_SECOND = 1e3
#: The shortest substep (s) a clock accepts: below it the float32 times of the kernels (the
#: interpolation fractions j·h/span, the frame's time within the path) lose the step altogether
#: (a substep of 1e-300 s ran frames whose springs did nothing).
MIN_SUBSTEP = 1e-6
#: The longest substep (s) a clock accepts: one substep per second already samples a character's
#: motion too coarsely for any spring to follow it.
MAX_SUBSTEP = 1.0


def substep_seconds(name: str, value) -> float:
    """``value`` as a substep in seconds, checked: a finite number in [:data:`MIN_SUBSTEP`,
    :data:`MAX_SUBSTEP`].

    Raises: ValueError (an InputError naming ``name`` and the value) outside that range or not
    finite; TypeError for a non-number."""
    h = validation.float_array(name, value, ())
    validation.require(name, h, (h >= MIN_SUBSTEP) & (h <= MAX_SUBSTEP),
                       f"a substep in seconds in [{MIN_SUBSTEP:g}, {MAX_SUBSTEP:g}] "
                       f"(gpu_jiggle.sim.clock.MIN_SUBSTEP, MAX_SUBSTEP)")
    return float(h)


class FrameTimeWarning(UserWarning):
    """A frame time that looks like milliseconds (``advance(16)`` for a 60 Hz frame). The
    frame is run as given; ``warnings.filterwarnings("ignore", category=FrameTimeWarning)``
    silences it where long frames are meant."""


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
        substep: h in seconds, in [MIN_SUBSTEP, MAX_SUBSTEP] (1e-6 to 1 s).
        max_substeps: the cap on substeps per frame, an integer in [1, MAX_SUBSTEPS].

    Raises:
        ValueError, TypeError: for a bad substep or cap.
    """

    def __init__(self, substep: float = 1.0 / 120.0, max_substeps: int = 8):
        self.substep = substep_seconds("substep", substep)
        if isinstance(max_substeps, bool) or not isinstance(max_substeps, (int, np.integer)):
            raise TypeError(f"max_substeps: expected an integer, got {type(max_substeps).__name__}")
        if not 1 <= max_substeps <= MAX_SUBSTEPS:
            raise ValueError(f"max_substeps = {max_substeps!r}: expected an integer in [1, {MAX_SUBSTEPS}] "
                             f"(gpu_jiggle.sim.clock.MAX_SUBSTEPS)")
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
        return self.plan_checked(validation.frame_time("frame_dt", frame_dt))

    def plan_checked(self, dt: float) -> StepPlan:
        """:meth:`plan` for a frame time already checked (a half-rate frame carries two checked
        frames, which together may pass the limit on one)."""
        h, cap = self.substep, self.max_substeps
        span = self.accumulator + dt
        n = math.floor(span / h + STEP_TOLERANCE)
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


@dataclass(frozen=True)
class FramePlan:
    """One frame's substeps at both rates, computed before anything changes.

    Attributes:
        full: the :class:`StepPlan` of chains at level of detail "full" (substep h).
        half: the plan of chains at level of detail "half" (substep 2h): on every second
            frame it covers both frames' time, on the others it runs nothing.
        full_start, half_start: each clock's simulated time at the frame's first substep (s).
        start_lags: (full, half), seconds from where each clock's target path starts (its
            last substep) to the last frame's time: the full clock's accumulator, and the half
            clock's plus the frame time it has not run yet (SPEC 2, "Levels of detail").
        end_lags: (full, half), the same after this frame (the next frame's start_lags).
        frame_time: this frame's time (s).
    """

    full: StepPlan
    half: StepPlan
    full_start: float
    half_start: float
    start_lags: tuple = (0.0, 0.0)
    end_lags: tuple = (0.0, 0.0)
    frame_time: float = 0.0

    @property
    def plans(self) -> tuple:
        """(full, half), in the order of the LOD_FULL and LOD_HALF values."""
        return self.full, self.half


class FrameClock:
    """The clocks of a solver: full rate (substep h) and half rate (substep 2h, for chains at
    level of detail "half", which advance on every second frame with both frames' time, so
    their motion keeps its speed at half the cost).

    Args:
        substep: h in seconds, in [MIN_SUBSTEP, MAX_SUBSTEP]. max_substeps: the cap per frame,
            an integer ≥ 1 (the same cap at both rates).

    Raises:
        ValueError, TypeError: for a bad substep or cap.
    """

    def __init__(self, substep: float = 1.0 / 120.0, max_substeps: int = 8):
        self.full = FixedStepClock(substep, max_substeps)
        self.half = FixedStepClock(self.full.substep, max_substeps)
        self.half.substep *= 2.0  # the half rate's substep 2h (may pass MAX_SUBSTEP: it is not set)
        self.half_pending = 0.0   # frame time of the skipped frame, added to the next half-rate frame
        self.frames = 0           # frames advanced; the half-rate chains run on odd ones
        self.longest_frame = 0.0  # s, the longest frame time committed
        self.hinted = False       # milliseconds_hint has spoken (once per clock)

    @property
    def substeps(self) -> tuple:
        """(h, 2h) in seconds."""
        return self.full.substep, self.half.substep

    @property
    def half_turn(self) -> bool:
        """Whether the next frame runs the half rate (with its own and the skipped frame's time)."""
        return self.frames % 2 == 1

    def plan(self, frame_dt) -> FramePlan:
        """The frame's plans for ``frame_dt`` seconds, without changing the clocks.

        Raises: ValueError for a negative or non-finite frame time, TypeError for a non-number.
        """
        full = self.full.plan(frame_dt)
        dt = float(frame_dt)
        half = self.half.plan_checked(self.half_pending + dt if self.half_turn else 0.0)
        # The half clock's path, after a frame that does not run it, waits for this frame's time too.
        half_end = half.accumulator + (0.0 if self.half_turn else self.half_pending + dt)
        return FramePlan(full, half, self.full.sim_time, self.half.sim_time,
                         (self.full.accumulator, self.half.accumulator + self.half_pending),
                         (full.accumulator, half_end), dt)

    def commit(self, plan: FramePlan, frame_dt: float) -> None:
        """Apply a plan made by :meth:`plan` for the same ``frame_dt``."""
        self.full.commit(plan.full)
        self.half.commit(plan.half)
        self.half_pending = 0.0 if self.frames % 2 == 1 else self.half_pending + float(frame_dt)
        self.frames += 1
        self.longest_frame = max(self.longest_frame, float(frame_dt))

    def milliseconds_hint(self, frame_dt: float, call: str = "advance") -> str | None:
        """Words for a :class:`FrameTimeWarning` when ``frame_dt`` (s, already checked) looks like
        milliseconds, before it is committed; None otherwise. It looks so when it is above
        :data:`SUSPECT_FRAME_SECONDS` and every earlier frame of this clock was at most
        :data:`SHORT_FRAME_SECONDS`. A first frame counts (a caller that passes milliseconds
        does so from its first frame); after a long frame, none does (long frames are meant).
        Said once per clock: later calls return None."""
        dt = float(frame_dt)
        if self.hinted or dt <= SUSPECT_FRAME_SECONDS or self.longest_frame > SHORT_FRAME_SECONDS:
            return None
        self.hinted = True
        before = (f"after frames of at most {self.longest_frame:.3g} s" if self.frames
                  else "as the first frame")
        return (f"{call}({dt:g}): a frame time of {dt:g} s {before}; frame times are in seconds "
                f"({dt:g} ms = {dt / MS_PER_SECOND:g} s). The frame runs as given (what the substep cap "
                f"leaves of it); this is said once per solver.")

    def warn_if_milliseconds(self, frame_dt: float, call: str = "advance") -> None:
        """Issue :meth:`milliseconds_hint` as a :class:`FrameTimeWarning` pointing at the first
        caller outside the gpu_jiggle package (the program's ``advance`` or ``Pipeline.step``)."""
        hint = self.milliseconds_hint(frame_dt, call)
        if hint is not None:
            warnings.warn(hint, FrameTimeWarning, stacklevel=stacklevel_outside_package())

    def snapshot(self) -> tuple:
        """Everything that decides the next plans: (accumulator, substeps run, dropped time) of
        each clock, the pending half-rate time and the frame count."""
        return (self.full.accumulator, self.full.substeps_run, self.full.dropped_time,
                self.half.accumulator, self.half.substeps_run, self.half.dropped_time,
                self.half_pending, self.frames)

    def restore(self, snapshot: tuple) -> None:
        """Set the clocks back to a :meth:`snapshot`."""
        (self.full.accumulator, self.full.substeps_run, self.full.dropped_time,
         self.half.accumulator, self.half.substeps_run, self.half.dropped_time,
         self.half_pending, self.frames) = snapshot


def stacklevel_outside_package() -> int:
    """The ``stacklevel`` that makes a ``warnings.warn`` in this function's caller point at the
    first frame outside the gpu_jiggle package: the program's call (``advance``,
    ``Pipeline.step``) however deep inside the package the warning is raised.

    Returns: int ≥ 1, for ``warnings.warn(..., stacklevel=stacklevel_outside_package())``.
    """
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

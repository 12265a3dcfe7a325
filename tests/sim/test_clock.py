"""SPEC section 2: the fixed-step clock."""
from __future__ import annotations

import re

import numpy as np
import pytest

from gpu_jiggle import PointChainSet, Solver
from gpu_jiggle.sim.clock import FixedStepClock, FrameClock
from gpu_jiggle.sim.validation import InputError
from gpu_jiggle.sim.validation import MAX_FRAME_SECONDS


def test_accumulates_and_interpolates():
    clock = FixedStepClock(1 / 120, 8)
    plan = clock.plan(1 / 144)
    assert plan.substep_count == 0 and plan.accumulator == pytest.approx(1 / 144)
    clock.commit(plan)
    plan = clock.plan(1 / 144)  # span 2/144 = 1.67 h: one substep, α = h/span
    assert plan.substep_count == 1
    np.testing.assert_allclose(plan.alphas, [(1 / 120) / (2 / 144)], rtol=1e-6)
    assert plan.blend == pytest.approx((2 / 144 - 1 / 120) * 120)
    clock.commit(plan)
    assert clock.sim_time == pytest.approx(1 / 120)


def test_exact_multiples_do_not_lose_a_substep_to_rounding():
    clock = FixedStepClock(1 / 120, 8)
    for _ in range(1000):
        plan = clock.plan(1 / 60)
        assert plan.substep_count == 2
        np.testing.assert_allclose(plan.alphas, [0.5, 1.0], rtol=1e-6)
        clock.commit(plan)
    assert clock.sim_time == pytest.approx(1000 / 60)
    assert clock.accumulator < 1e-9


def test_cap_drops_the_rest_and_spreads_alphas():
    clock = FixedStepClock(1 / 120, 8)
    plan = clock.plan(1.0)
    assert plan.substep_count == 8
    np.testing.assert_allclose(plan.alphas, np.arange(1, 9) / 8)
    assert plan.dropped == pytest.approx(1.0 - 8 / 120)
    assert plan.accumulator == 0.0
    assert plan.path_step == pytest.approx(1.0 / 8)
    clock.commit(plan)
    assert clock.dropped_time == pytest.approx(1.0 - 8 / 120)


def test_plan_changes_nothing():
    clock = FixedStepClock(1 / 120, 8)
    clock.commit(clock.plan(0.01))
    before = (clock.accumulator, clock.substeps_run, clock.dropped_time)
    clock.plan(5.0)
    assert (clock.accumulator, clock.substeps_run, clock.dropped_time) == before


@pytest.mark.parametrize("dt, error", [(-1e-3, ValueError), (float("nan"), ValueError), (float("inf"), ValueError),
                                       ("0.1", TypeError), (None, TypeError)])
def test_bad_frame_times(dt, error):
    with pytest.raises(error, match="frame_dt"):
        FixedStepClock().plan(dt)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"substep": 0.0}, ValueError, "substep"), ({"substep": float("nan")}, ValueError, "substep"),
    ({"max_substeps": 0}, ValueError, "max_substeps"), ({"max_substeps": 2.5}, TypeError, "max_substeps"),
])
def test_bad_clock_settings(kwargs, error, message):
    with pytest.raises(error, match=message):
        FixedStepClock(**kwargs)


@pytest.mark.parametrize("substep", [1e-300, 9.9e-7, 1.01, 50.0, -1e-3])
def test_substeps_outside_the_clocks_range_are_refused(substep):
    """A substep float32 cannot resolve (1e-300 s dropped every frame's time) or one that
    samples the motion once a second or less is refused by the clock and by the Solver, which
    is then not made."""
    expected = re.escape(f"substep = {substep!r}: expected a substep in seconds in [1e-06, 1]")
    with pytest.raises(ValueError, match=expected):
        FrameClock(substep)
    with pytest.raises(InputError, match=expected) as refused:
        Solver(PointChainSet([2], 0.1, 0.0), backend="cpu", substep=substep)
    assert (refused.value.argument, refused.value.value) == ("substep", substep)


@pytest.mark.parametrize("substep", [1e-6, 1.0])
def test_substeps_at_the_ends_of_the_range_run(substep):
    solver = Solver(PointChainSet([2], 0.1, 0.0), backend="cpu", substep=substep, max_substeps=4)
    solver.set_pose(joint_positions=np.zeros((3, 3)) + [[0.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, -2.0, 0.0]])
    assert solver.advance(4 * substep) == 4
    assert solver.sim_time == pytest.approx(4 * substep, rel=1e-12)
    with pytest.raises(ValueError, match="substep: expected shape"):
        FrameClock([substep, substep])


def test_long_frames_in_a_row_are_each_accepted():
    """The limit is on one frame: frames of up to MAX_FRAME_SECONDS each, one after another,
    are all accepted, at both rates (the half-rate clock runs with two frames' time)."""
    clocks = FrameClock(1 / 120, 8)
    for dt in (MAX_FRAME_SECONDS, 1 / 60, 0.6 * MAX_FRAME_SECONDS, 0.6 * MAX_FRAME_SECONDS, 1 / 60):
        plan = clocks.plan(dt)
        clocks.commit(plan, dt)
    assert clocks.frames == 5
    # The half-rate clock ran frames 0 + 1 and 2 + 3 together, each pair past the one-frame limit.
    assert clocks.half.dropped_time > 1.1 * MAX_FRAME_SECONDS
    with pytest.raises(ValueError, match="frame_dt"):
        clocks.plan(2 * MAX_FRAME_SECONDS)


# -- frame times that look like milliseconds -----------------------------------------------------
def _run(clock, frame_times):
    """The hints of ``frame_times`` committed one after another on ``clock``."""
    hints = []
    for dt in frame_times:
        hints.append(clock.milliseconds_hint(dt))
        clock.commit(clock.plan(dt), dt)
    return hints


def test_a_long_frame_after_short_ones_is_taken_for_milliseconds_once():
    hints = _run(FrameClock(1 / 120, 8), [1 / 30, 1 / 30, 16.0, 16.0, 33.0])
    assert hints[:2] == [None, None] and hints[3:] == [None, None]
    assert hints[2].startswith("advance(16): a frame time of 16 s after frames of at most 0.0333 s; frame times "
                               "are in seconds (16 ms = 0.016 s).")


def test_a_first_frame_of_milliseconds_is_noticed():
    hints = _run(FrameClock(1 / 120, 8), [16.6667, 16.6667])
    assert hints[0].startswith("advance(16.6667): a frame time of 16.6667 s as the first frame; ")
    assert hints[1] is None


@pytest.mark.parametrize("frame_times", [
    [1 / 60] * 5,                    # a game's frames
    [0.0, 0.1, 1.0, 0.02],           # a pause, 10 fps, a hitch of exactly 1 s: none above it
    [1 / 60, 0.5, 3.0, 1 / 60],      # after a 0.5 s frame, long frames are meant (a slide show, a hitch)
])
def test_seconds_are_not_taken_for_milliseconds(frame_times):
    assert _run(FrameClock(1 / 120, 8), frame_times) == [None] * len(frame_times)

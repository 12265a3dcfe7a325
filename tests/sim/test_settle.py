"""``Solver.settle(seconds)``: a pre-roll in one call, bit-identical to the same time advanced
in frames of ``max_substeps`` substeps, with no frame-time warning and no time dropped."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, PointChainSet, Solver
from gpu_jiggle.sim.clock import FrameTimeWarning


def _posed(kind, backend):
    """A chain posed sideways under gravity, so that settling moves it."""
    if kind == "angle":
        solver = Solver(AngleChainSet([3, 2], 0.2, 2.0, 0.3, gravity=(0.0, -9.8)), backend=backend)
        solver.set_pose(np.array([[0.0, 0.0], [1.0, 2.0]]), np.zeros(2), np.full(5, 0.1))
    else:
        solver = Solver(PointChainSet([3], 2.0, 0.3, gravity=(0.0, -9.8, 0.0)), backend=backend)
        solver.set_pose(np.array([[0.0, 1.0, 0.0], [0.2, 1.0, 0.0], [0.4, 1.0, 0.0], [0.6, 1.0, 0.0]]))
    return solver


@pytest.mark.parametrize("kind", ["angle", "point"])
@pytest.mark.parametrize("seconds", [1.3, 0.05])
def test_settle_is_the_same_time_in_frames_of_the_cap_bit_for_bit(backend, kind, seconds):
    settled, framed = _posed(kind, backend), _posed(kind, backend)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FrameTimeWarning)
        run = settled.settle(seconds)
    frame = framed.max_substeps * framed.substep
    count = int(seconds // frame)
    ran = sum(framed.advance(frame) for _ in range(count)) + framed.advance(seconds - count * frame)
    assert run == ran > 0
    np.testing.assert_array_equal(settled.positions(), framed.positions())
    np.testing.assert_array_equal(settled.positions(raw=True), framed.positions(raw=True))
    assert settled.sim_time == framed.sim_time and settled.accumulator == framed.accumulator
    # and the same on: the next frames agree too
    for solver in (settled, framed):
        solver.advance(1 / 60)
    np.testing.assert_array_equal(settled.positions(), framed.positions())


def test_settle_drops_no_time_and_warns_where_one_long_advance_does():
    long_frame, settled = _posed("angle", "cpu"), _posed("angle", "cpu")
    with pytest.warns(FrameTimeWarning):
        long_frame.advance(4.0)
    assert long_frame.dropped_time > 3.9  # the cap kept 8 substeps of 4 s
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        settled.settle(4.0)
    assert not [w for w in caught if issubclass(w.category, FrameTimeWarning)]
    assert settled.dropped_time == 0.0
    assert abs(settled.sim_time + settled.accumulator - 4.0) < 1e-9
    # the chain has come to rest where gravity bends it (it started on its level pose)
    assert np.max(np.abs(settled.angular_velocities())) < 1e-2
    assert np.min(np.abs(settled.angles() - np.array([0.1, 0.2, 0.3, 0.1, 0.2]))) > 0.1
    with pytest.warns(FrameTimeWarning):  # a later frame in milliseconds is still pointed out
        settled.advance(16.0)


def test_bad_seconds_are_refused_and_change_nothing():
    solver = _posed("point", "cpu")
    solver.settle(0.5)
    before = solver.positions()
    for bad, error in ((-1.0, ValueError), (float("nan"), ValueError), (2e6, ValueError), ("1", TypeError)):
        with pytest.raises(error, match="seconds"):
            solver.settle(bad)
    np.testing.assert_array_equal(solver.positions(), before)
    assert solver.sim_time == pytest.approx(0.5, abs=solver.substep)
    with pytest.raises(RuntimeError, match="set_pose"):
        Solver(PointChainSet([1], 2.0, 0.3), backend="cpu").settle(1.0)

"""Smaller parts of the public API: slices into the flat arrays, release, backend choice."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, PointChainSet, Solver
from gpu_jiggle.sim.clock import FrameTimeWarning


def test_slices_split_flat_arrays_per_chain(backend):
    cs = AngleChainSet([2, 1, 3], [1.0, 1.0, 2.0, 0.5, 0.5, 0.5], 2.0, 0.5)
    s = Solver(cs, backend=backend)
    s.set_pose([[0, 0], [10, 0], [20, 0]], [0.0, np.pi / 2, np.pi], np.zeros(6))
    s.advance(1 / 60)
    p = s.positions()
    pivots = [p[sl][0] for sl in cs.joint_slices()]
    np.testing.assert_allclose(pivots, [[0, 0], [10, 0], [20, 0]])
    tips = [p[sl][-1] for sl in cs.joint_slices()]
    np.testing.assert_allclose(tips, [[2, 0], [10, 2], [18.5, 0]], atol=1e-5)
    assert [len(cs.lengths[sl]) for sl in cs.chain_slices()] == [2, 1, 3]


def test_release_frees_and_refuses_further_use(backend):
    with Solver(AngleChainSet([3], 1.0, 2.0, 0.5), backend=backend) as s:
        s.set_pose([[0, 0]], [0.0], np.zeros(3))
        s.advance(1 / 60)
    with pytest.raises(RuntimeError, match="released"):
        s.advance(1 / 60)


def test_reported_backend(backend):
    assert Solver(AngleChainSet([1], 1.0, 2.0, 0.5), backend=backend).backend == backend


def test_a_frame_time_in_milliseconds_warns_once_and_runs(backend):
    """advance(16) after 60 Hz frames warns once, pointing at the caller's line, and runs the
    frame (its substeps capped as for any long frame); the next long frames do not warn."""
    s = Solver(AngleChainSet([2], 1.0, 2.0, 0.5), backend=backend, max_substeps=8)
    s.set_pose([[0, 0]], [0.0], np.zeros(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # normal frames: no warning at all
        for _ in range(3):
            s.advance(1 / 60)
    with pytest.warns(FrameTimeWarning, match=r"^advance\(16\): a frame time of 16 s after frames of at most "
                                              r"0\.0167 s; frame times are in seconds \(16 ms = 0\.016 s\)") as hint:
        assert s.advance(16) == 8
    assert len(hint) == 1 and hint[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.advance(16)
        s.advance(33)


def test_the_warnings_are_filtered_by_their_names_in_the_package():
    """A caller silences a warning by the class ``gpu_jiggle`` exports: the one the solver gives."""
    import gpu_jiggle
    from gpu_jiggle.sim.root_motion import RootAccelerationWarning

    assert gpu_jiggle.FrameTimeWarning is FrameTimeWarning
    assert gpu_jiggle.RootAccelerationWarning is RootAccelerationWarning
    solver = Solver(PointChainSet([1], 2.0, 0.5), backend="cpu")
    solver.set_pose(np.array([[0.0, 0.0, 0.0], [0.0, -0.1, 0.0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=gpu_jiggle.FrameTimeWarning)
        solver.advance(16.0)  # milliseconds by the look of it: warned, and ignored by the filter
    fresh = Solver(PointChainSet([1], 2.0, 0.5), backend="cpu")
    fresh.set_pose(np.array([[0.0, 0.0, 0.0], [0.0, -0.1, 0.0]]))
    with pytest.warns(gpu_jiggle.FrameTimeWarning):  # unfiltered, the same frame warns
        fresh.advance(16.0)

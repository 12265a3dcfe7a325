"""Chains per compute work group (``Solver(work_group_size=...)``): a choice of speed only.
Each invocation runs one chain on its own, so every size gives the same numbers bit for bit,
with chain counts that do not fill the last group too; sizes the context cannot run, and
values that are not whole numbers, are refused before anything is made."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, PointChainSet, Solver
from gpu_jiggle.gl.dispatch import LOCAL_SIZE


def point_run(work_group_size, frames=12):
    counts = [3, 5, 4, 2, 6, 3, 4]  # 7 chains: never a whole number of groups of 3, 64 or 256
    chain_set = PointChainSet(counts, np.linspace(1.5, 4.0, 7), 0.35, rest_lengths=0.1, particle_radius=0.01,
                              gravity=(0, -9.8, 0), air_drag=0.3)
    # No colliders or wind: each work-group size is a program of its own, and those are the
    # costly ones to compile on llvmpipe; the chain-per-invocation mapping is the same in all.
    solver = Solver(chain_set, backend="gpu", work_group_size=work_group_size)
    base = np.concatenate([[[0.3 * c, -0.1 * k, 0.0] for k in range(n + 1)] for c, n in enumerate(counts)])
    for frame in range(frames):
        solver.set_pose(base + [0.2 * np.sin(0.4 * frame), 0.0, 0.05 * frame])
        solver.advance(1 / 60)
    assert solver.work_group_size == (work_group_size or LOCAL_SIZE)
    return solver.positions()


def angle_run(work_group_size, frames=12):
    chain_set = AngleChainSet([4, 2, 5], 0.2, [2.0, 3.0, 4.0], 0.3, gravity=(0, -9.8))
    solver = Solver(chain_set, backend="gpu", work_group_size=work_group_size)
    for frame in range(frames):
        solver.set_pose(np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.5]]) + [0.1 * frame, 0.0],
                        np.full(3, 0.3 * np.sin(0.5 * frame)), np.full(11, 0.1))
        solver.advance(1 / 60)
    return solver.positions()


@pytest.mark.parametrize("run", [point_run, angle_run])
def test_every_work_group_size_gives_the_same_numbers(gl, run):
    default = run(None)
    assert np.all(np.isfinite(default))
    assert not np.array_equal(default, run(None, frames=1)), "the chains should move, or the comparison says nothing"
    for size in (1, 3, 256):  # a group per chain, groups with one part full, one group part full
        np.testing.assert_array_equal(run(size), default, err_msg=f"work_group_size={size}")


def test_a_work_group_larger_than_the_context_runs_is_refused(gl):
    limit = min(int(gl.info["GL_MAX_COMPUTE_WORK_GROUP_SIZE"][0]), int(gl.info["GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS"]))
    with pytest.raises(ValueError, match=rf"work_group_size = {limit + 1}: .*at most {limit}"):
        Solver(PointChainSet([2], 2.0, 0.5), backend="gpu", work_group_size=limit + 1)


@pytest.mark.parametrize("value, error, words", [(0, ValueError, "work_group_size = 0: expected an integer >= 1"),
                                                 (-64, ValueError, "work_group_size = -64"),
                                                 (32.0, TypeError, "work_group_size: expected an integer"),
                                                 (True, TypeError, "work_group_size: expected an integer"),
                                                 ("64", TypeError, "work_group_size: expected an integer")])
def test_bad_work_group_sizes_are_refused_on_both_backends(backend, value, error, words):
    with pytest.raises(error, match=words):
        Solver(AngleChainSet([2], 0.1, 2.0, 0.5), backend=backend, work_group_size=value)


def test_the_numpy_path_has_no_work_groups():
    solver = Solver(PointChainSet([2], 2.0, 0.5), backend="cpu", work_group_size=32)
    assert solver.work_group_size is None


def test_a_loaded_state_takes_its_work_group_size(gl):
    chain_set = AngleChainSet([3, 1], 0.2, 2.0, 0.4, gravity=(0, -9.8))
    solver = Solver(chain_set, backend="gpu", work_group_size=8)

    def frame(s, f):
        s.set_pose([[0.1 * f, 0.0], [1.0, 0.0]], [0.2 * np.sin(f), 0.0], np.full(4, 0.1))
        s.advance(1 / 60)
        return s.positions().tobytes()

    for f in range(5):
        frame(solver, f)
    loaded = Solver.load_state(solver.save_state(), backend="gpu", work_group_size=32)
    assert loaded.work_group_size == 32
    assert [frame(loaded, f) for f in range(5, 15)] == [frame(solver, f) for f in range(5, 15)]

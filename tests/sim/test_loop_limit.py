"""Mesa's llvmpipe (the GPU path without a GPU, and CI's) stops every loop of a shader
invocation once the loops nested in its outermost loop have run 65535 iterations, and says
nothing: a long chain, many substeps or many colliders then silently left the frame
unfinished. The GPU backend runs such a frame over several dispatches of fewer substeps
(``gpu_jiggle.sim.backends.gpu``), and refuses, before anything changes, a chain that does not
fit even one substep."""
from __future__ import annotations

import logging

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, PointChainSet, Solver
from gpu_jiggle.sim.backends import gpu as gpu_backend

#: GPU and reference agree within this (as the cross-checks, SPEC 8.6); a frame cut short by
#: the limiter was 0.05 to 0.9 units off.
AGREE = 1e-4


def _point_run(backend, segments, substeps_per_frame, frames=3, colliders=False):
    cs = PointChainSet([segments, 3], 3.0, 0.3, gravity=(0.0, -9.8, 0.0), particle_radius=0.002)
    joints = np.concatenate([np.stack([np.arange(n + 1) * 0.02, np.zeros(n + 1), np.zeros(n + 1)], 1)
                             for n in (segments, 3)])
    with Solver(cs, backend=backend, substep=1 / (30 * substeps_per_frame), max_substeps=substeps_per_frame) as s:
        for k in range(frames + 1):
            s.set_pose(joints + [0.05 * k, 0.0, 0.0])
            if colliders:
                s.set_colliders(spheres=[[0.1, -0.05, 0.0, 0.03]], planes=[[0.0, 1.0, 0.0, -0.3]])
            s.advance(0.0 if k == 0 else 1 / 30)
        return s.positions(raw=True)


@pytest.mark.parametrize("segments, substeps", [(12, 128), (40, 64)])
def test_long_point_frames_finish_on_the_gpu(gl, segments, substeps):
    """12 × 128 and 40 × 64 segment-substeps per frame (the limiter cut them short at 96
    substeps for 12 segments): the GPU agrees with the reference."""
    gpu, cpu = (_point_run(b, segments, substeps, colliders=True) for b in ("gpu", "cpu"))
    assert np.abs(gpu - cpu).max() < AGREE


def test_long_angle_frames_finish_on_the_gpu(gl):
    """300 segments × 256 substeps = 76,800 segment-substeps in one frame."""
    out = []
    for backend in ("gpu", "cpu"):
        cs = AngleChainSet([300], 0.01, 2.0, 0.5, gravity=(0.0, -9.8))
        with Solver(cs, backend=backend, substep=1 / (30 * 256), max_substeps=256) as s:
            s.set_pose([[0.0, 0.0]], [0.0], np.zeros(300))
            s.advance(0.0)
            s.set_pose([[0.1, 0.0]], [0.0], np.zeros(300))
            s.advance(1 / 30)
            out.append(s.angles(raw=True))
    assert np.abs(out[0] - out[1]).max() < AGREE


def _mixed_frames(budget, monkeypatch):
    """Frames with teleports, a chain declared moving, levels of detail and colliders, with
    the loop budget ``budget`` (small: many dispatches per frame)."""
    monkeypatch.setattr(gpu_backend, "loop_limited", lambda ctx: True)
    monkeypatch.setattr(gpu_backend, "LLVMPIPE_LOOP_BUDGET", budget)
    cs = PointChainSet([4, 6, 2, 5], 4.0, 0.4, gravity=(0.0, -9.8, 0.0), particle_radius=0.01)
    joints = np.concatenate([np.stack([np.arange(n + 1) * 0.05 + c, np.zeros(n + 1), np.zeros(n + 1)], 1)
                             for c, n in enumerate((4, 6, 2, 5))])
    out = []
    with Solver(cs, backend="gpu", max_substeps=8) as s:
        s.teleport([1], moving=True)
        for k in range(40):
            s.set_pose(joints + [0.1 * np.sin(k / 5), 0.02 * k, 0.0])
            s.set_colliders(spheres=[[1.1, -0.1, 0.0, 0.05]], capsules=[[2.0, -0.2, -0.1, 2.0, -0.2, 0.1, 0.03]])
            if k == 10:
                s.set_lod([0, 1, 2, 0])
            if k == 20:
                s.teleport([3])
            if k == 25:
                s.teleport([0], keep_shape=True)
            s.advance(0.0 if k == 0 else (1 / 15 if k % 7 == 0 else 1 / 60))
            out.append(s.positions())
    return np.array(out)


def test_a_frame_over_several_dispatches_is_the_same_frame(gl, monkeypatch):
    """Run over many dispatches of one or two substeps, every frame is bit-identical to the
    one-dispatch run: teleports only in the first dispatch, outputs only after a chain's
    last substep, frozen and half-rate chains kept right."""
    whole = _mixed_frames(10 ** 9, monkeypatch)
    split = _mixed_frames(1200, monkeypatch)  # 1 or 2 substeps per dispatch for 6 segments
    assert np.array_equal(whole, split)


def _mixed_angle_frames(budget, monkeypatch):
    """Angle chains (wind, levels of detail, teleports, a chain declared moving) with the loop
    budget ``budget``."""
    monkeypatch.setattr(gpu_backend, "loop_limited", lambda ctx: True)
    monkeypatch.setattr(gpu_backend, "LLVMPIPE_LOOP_BUDGET", budget)
    cs = AngleChainSet([4, 6, 2, 5], 0.1, 3.0, 0.3, gravity=(0.0, -9.8), air_drag=0.2)
    out = []
    with Solver(cs, backend="gpu", max_substeps=12) as s:
        s.set_wind((0.4, 0.1), 0.8, (2.0, 1.0), 0.6)
        s.teleport([1], moving=True)
        for k in range(40):
            s.set_pose([[0.1 * np.sin(k / 5), 0.0], [1.0, 0.02 * k], [2.0, 0.0], [3.0, 0.0]],
                       [0.3 * np.sin(k / 4), 0.0, 1.0, -0.5], np.full(17, 0.1))
            if k == 10:
                s.set_lod([0, 1, 2, 0])
            if k == 20:
                s.teleport([3], mirror=True)
            if k == 25:
                s.teleport([0], keep_shape=True)
            s.advance(0.0 if k == 0 else (1 / 10 if k % 7 == 0 else 1 / 60))
            out.append(np.concatenate([s.positions().ravel(), s.angular_velocities()]))
    return np.array(out)


def test_an_angle_frame_over_several_dispatches_is_the_same_frame(gl, monkeypatch):
    """As for point chains: batches of substeps cut by dispatches, the frame's end (paths and
    output) only in the dispatch with a chain's last substep."""
    whole = _mixed_angle_frames(10 ** 9, monkeypatch)
    split = _mixed_angle_frames(40, monkeypatch)  # 1-3 substeps per dispatch for 6 segments
    assert np.array_equal(whole, split)


def test_a_chain_too_long_for_llvmpipe_is_refused_or_run_on_the_reference(gl, monkeypatch, caplog):
    monkeypatch.setattr(gpu_backend, "loop_limited", lambda ctx: True)
    cs = PointChainSet([700], 3.0, 0.5)
    with pytest.raises(ValueError, match=r"chain of 700 segments.*65535.*backend='cpu'"):
        Solver(cs, backend="gpu")
    with caplog.at_level(logging.WARNING, logger="gpu_jiggle"):
        assert Solver(cs, backend="auto").backend == "cpu"
    assert "700 segments" in caplog.text


def test_too_many_colliders_are_refused_before_anything_changes(gl, monkeypatch):
    monkeypatch.setattr(gpu_backend, "loop_limited", lambda ctx: True)
    cs = PointChainSet([200], 3.0, 0.5)
    joints = np.stack([np.arange(201) * 0.01, np.zeros(201), np.zeros(201)], 1)
    with Solver(cs, backend="gpu") as s:
        s.set_pose(joints)
        s.set_colliders(spheres=[[0.0, 1.0, 0.0, 0.1]])
        with pytest.raises(ValueError, match=r"set_colliders: 100 spheres, 0 capsules and 0 planes.*fewer colliders"):
            s.set_colliders(spheres=np.tile([[0.0, 1.0, 0.0, 0.1]], (100, 1)))
        s.advance(1 / 60)  # still runs, with the one sphere
        assert np.all(np.isfinite(s.positions()))

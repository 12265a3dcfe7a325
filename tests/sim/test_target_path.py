"""SPEC 2, the target path: the monotone path (the default) and the paths kept for comparison,
the same on both backends, and what the monotone path promises (it never leaves the span
between two poses, it stops where the poses stop, it stays C1 where it is not limited), with
the host's float64 form (the colliders' path) and the shaders' float32 form agreeing."""
from __future__ import annotations

import re

import numpy as np
import pytest

from gpu_jiggle import Solver
from gpu_jiggle.sim import inputs, layouts
from gpu_jiggle.sim.backends.reference import common as reference_walk
from gpu_jiggle.verify.scenarios import (RandomRootMotion, RigidBodyStrands, body_path, moving_colliders,
                                         random_angle_chain_set, random_frame_times, random_point_chain_set)
from tests.sim.test_cross_check import angle_difference, chain_lengths_per_joint

PATHS = ("monotone", "hermite", "linear")
ALPHAS = np.linspace(0.0, 1.0, 41)


def test_the_monotone_path_is_the_default():
    s = Solver(random_angle_chain_set(np.random.default_rng(1), chains=2), backend="cpu")
    assert s.target_path == "monotone"


def test_path_kinds_match_the_shaders():
    source = open("shaders/sim/common.glsl").read()
    defines = {name: int(value) for name, value in re.findall(r"#define\s+(\w+)\s+(\d+)u", source)}
    assert defines["OPTION_MONOTONE_PATH"] == layouts.OPTION_MONOTONE_PATH
    assert defines["OPTION_NO_ROTATION_OUTPUTS"] == layouts.OPTION_NO_ROTATION_OUTPUTS
    assert (defines["PATH_LINEAR"], defines["PATH_HERMITE"], defines["PATH_MONOTONE"]) == \
        (layouts.PATH_LINEAR, layouts.PATH_HERMITE, layouts.PATH_MONOTONE)
    assert layouts.path_kind(0) == layouts.PATH_LINEAR
    assert layouts.path_kind(layouts.OPTION_HERMITE_PATH) == layouts.PATH_HERMITE
    assert layouts.path_kind(layouts.OPTION_HERMITE_PATH | layouts.OPTION_MONOTONE_PATH) == layouts.PATH_MONOTONE


def _path(d, m0s, path):
    """x(α) - x0 (A, n, k) over ALPHAS, its end velocity × span (n, k), float64 host form."""
    m = inputs.start_tangent(d, m0s, path)
    w = np.array([inputs.path_weights(a, path) for a in ALPHAS])
    return w[:, 0, None, None] * d + w[:, 1, None, None] * m, w[-1, 2] * d + w[-1, 3] * m, m


def test_the_monotone_path_stays_between_its_poses():
    """Along the frame's move d the path goes from x0 to x1 without passing either, whatever
    velocity it starts with (Fritsch & Carlson's bound); a frame that does not move stays put."""
    rng = np.random.default_rng(3)
    d = rng.normal(size=(400, 3)) * rng.choice([0.0, 1e-3, 1.0], size=(400, 1))
    m0s = rng.normal(size=(400, 3)) * rng.choice([0.0, 0.5, 5.0], size=(400, 1))
    x, _, _ = _path(d, m0s, layouts.PATH_MONOTONE)
    along = np.einsum("aij,ij->ai", x, d)
    dd = np.einsum("ij,ij->i", d, d)
    assert (along >= -1e-12 * (1 + dd)).all() and (along <= dd * (1 + 1e-12) + 1e-15).all()
    still = dd == 0
    assert still.any() and np.array_equal(x[:, still], np.zeros_like(x[:, still]))
    # the chord-tangent Hermite does not: it overshoots where the motion stops
    x, _, _ = _path(d, m0s, layouts.PATH_HERMITE)
    assert np.abs(x[:, still]).max() > 0.1


def test_the_monotone_path_keeps_its_velocity_where_it_is_not_limited():
    """C1: the path starts each frame with the velocity it ended the last with, unless the
    motion stopped or turned back along d or the move is too short for it (|m0s| > 3|d|);
    its end velocity is the chord.
    The limit is continuous: a velocity turned back along d keeps only its part across d."""
    rng = np.random.default_rng(4)
    d = rng.normal(size=(200, 2))
    m0s = d * rng.uniform(0.1, 2.9, size=(200, 1)) + 0.05 * rng.normal(size=(200, 2))
    _, end, m = _path(d, m0s, layouts.PATH_MONOTONE)
    kept = (np.einsum("ij,ij->i", d, m0s) > 0) & (np.linalg.norm(m0s, axis=1) <= 3 * np.linalg.norm(d, axis=1))
    assert kept.sum() > 150
    np.testing.assert_allclose(m[kept], m0s[kept], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(end, d, rtol=1e-12, atol=1e-12)
    back = inputs.start_tangent(d, -m0s, layouts.PATH_MONOTONE)
    np.testing.assert_allclose(np.einsum("ij,ij->i", back[kept], d[kept]), 0.0, atol=1e-12)
    across = -m0s - np.einsum("ij,ij->i", -m0s, d)[:, None] * d / np.einsum("ij,ij->i", d, d)[:, None]
    np.testing.assert_allclose(back[kept], across[kept], rtol=1e-9, atol=1e-12)
    for scale in (1e-3, 1e-6):  # a shrinking move: the velocity it keeps shrinks with it
        kept_length = np.linalg.norm(inputs.start_tangent(scale * d, m0s, layouts.PATH_MONOTONE), axis=1)
        assert (kept_length <= 3 * np.sqrt(2) * scale * np.linalg.norm(d, axis=1) * (1 + 1e-9)).all()
    for path in (layouts.PATH_HERMITE, layouts.PATH_LINEAR):
        assert inputs.start_tangent(d, m0s, path) is m0s


@pytest.mark.parametrize("path", [layouts.PATH_MONOTONE, layouts.PATH_HERMITE, layouts.PATH_LINEAR])
def test_the_float32_path_is_the_float64_path(path):
    rng = np.random.default_rng(5)
    d = rng.normal(size=(300, 3)).astype(np.float32)
    m0s = (rng.normal(size=(300, 3)) * rng.choice([0.1, 1.0, 6.0], size=(300, 1))).astype(np.float32)
    angle_d, angle_m = d[:, 0], m0s[:, 0]
    for a in ALPHAS:
        w32 = reference_walk.path_weights(a, path)
        w64 = inputs.path_weights(float(np.float32(a)), path)
        assert all(v.dtype == np.float32 for v in w32)
        np.testing.assert_allclose(np.array(w32, np.float64), w64, rtol=0, atol=1e-6)
    np.testing.assert_allclose(reference_walk.start_tangent(d, m0s, path),
                               inputs.start_tangent(d.astype(np.float64), m0s.astype(np.float64), path),
                               rtol=1e-5, atol=1e-6)
    scalar = reference_walk.start_tangent(angle_d, angle_m, path)
    assert scalar.shape == angle_d.shape
    np.testing.assert_allclose(scalar, inputs.start_tangent(angle_d[:, None].astype(np.float64),
                                                            angle_m[:, None].astype(np.float64), path)[:, 0],
                               rtol=1e-6, atol=1e-7)


@pytest.mark.filterwarnings("ignore::gpu_jiggle.sim.clock.FrameTimeWarning")  # long frames on purpose
@pytest.mark.parametrize("path", PATHS)
def test_every_path_is_the_same_on_both_backends(gl, path):
    """Angle chains (root positions, headings, local angles) and point chains (pivots, joint
    targets, moving colliders) over random frames, within the cross-checks' tolerances; and
    the option reaches the kernels (the paths give different chains)."""
    rng = np.random.default_rng(31)
    cs = random_angle_chain_set(rng, chains=24, max_segments=6)
    motion = RandomRootMotion(rng, cs)
    runs = {(p, b): Solver(cs, backend=b, target_path=p) for p in (path, "linear" if path != "linear" else "monotone")
            for b in ("cpu", "gpu")}
    scale = chain_lengths_per_joint(cs)
    worst_angle = worst_position = apart = 0.0
    for dt in random_frame_times(rng, 90):
        pose = motion.step(dt)
        for s in runs.values():
            s.set_pose(*pose)
            s.advance(dt)
        cpu, gpu = runs[path, "cpu"], runs[path, "gpu"]
        worst_angle = max(worst_angle, angle_difference(cpu.angles(), gpu.angles()).max())
        worst_position = max(worst_position, (np.abs(cpu.positions() - gpu.positions()).max(axis=1) / scale).max())
        apart = max(apart, angle_difference(gpu.angles(), [s for (p, b), s in runs.items()
                                                           if p != path and b == "gpu"][0].angles()).max())
    assert worst_angle < 1e-3 and worst_position < 1e-3
    assert apart > 1e-2

    rng = np.random.default_rng(32)
    cs = random_point_chain_set(rng, chains=12, max_segments=8)
    strands = RigidBodyStrands(rng, cs)
    solvers = [Solver(cs, backend=b, target_path=path) for b in ("cpu", "gpu")]
    t, worst = 0.0, 0.0
    for dt in random_frame_times(rng, 60):
        t += dt
        position, yaw, pitch = body_path(t)
        for s in solvers:
            s.set_pose(joint_positions=strands.pose(position, yaw, pitch))
            s.set_colliders(**moving_colliders(t, position))
            s.advance(dt)
        cpu, gpu = solvers
        length = np.repeat(np.add.reduceat(cpu.rest_lengths, cs.first_segment), cs.segment_counts + 1)
        worst = max(worst, (np.abs(cpu.positions() - gpu.positions()).max(axis=1) / length).max())
    assert worst < 2e-2


@pytest.mark.parametrize("kind", ["angle", "point"])
def test_a_saved_monotone_path_goes_on_bit_for_bit(kind):
    """The path's state (x0 and m0 of every quantity, the colliders' on the host) is in the
    saved state: a solver restored mid-motion goes on exactly as the one that saved it."""
    rng = np.random.default_rng(6)
    if kind == "angle":
        cs = random_angle_chain_set(rng, chains=6, max_segments=5)
        motion = RandomRootMotion(rng, cs)
        drive = lambda s, t, pose: s.set_pose(*pose)  # noqa: E731
        step = motion.step
    else:
        cs = random_point_chain_set(rng, chains=5, max_segments=6)
        strands = RigidBodyStrands(rng, cs)

        def drive(s, t, pose):
            position, yaw, pitch = body_path(t)
            s.set_pose(joint_positions=strands.pose(position, yaw, pitch))
            s.set_colliders(**moving_colliders(t, position))
        step = lambda dt: None  # noqa: E731
    solver = Solver(cs, backend="cpu")
    frames = [0.0] + [1 / 12, 1 / 20, 1 / 12, 1 / 30, 1 / 10] * 3
    t = 0.0
    for dt in frames[:8]:
        t += dt
        drive(solver, t, step(dt))
        solver.advance(dt)
    restored = Solver.load_state(solver.save_state(), backend="cpu")
    assert restored.target_path == "monotone"
    for dt in frames[8:]:
        t += dt
        pose = step(dt)
        for s in (solver, restored):
            drive(s, t, pose)
            s.advance(dt)
        assert np.array_equal(solver.positions(), restored.positions())

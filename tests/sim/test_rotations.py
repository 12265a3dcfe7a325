"""Rotations built from two directions near antiparallel (docs/SPEC.md section 4): the swings
and world rotations read back, on both backends."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import PointChainSet, Solver
from gpu_jiggle.sim import layouts, state
from gpu_jiggle.sim.backends.reference.point_geometry import axis_code, axis_from_code


def rotate(q, v):
    u, w = q[..., :3], q[..., 3:]
    t = 2 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def turn_between(q, r):
    """The angle (rad) of the rotation taking unit quaternion r to q (either sign)."""
    qv, qw, rv, rw = q[:3], q[3], r[:3], r[3]
    vec = rw * qv - qw * rv - np.cross(qv, rv)  # the vector part of q·conj(r)
    return 2 * np.arctan2(np.linalg.norm(vec), abs(qw * rw + qv @ rv))


def angle_between(a, b):
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    return np.arctan2(np.linalg.norm(np.cross(a, b), axis=-1), np.sum(a * b, axis=-1))


@pytest.mark.parametrize("side", [(0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.6, 0.0, -0.8)])
def test_swings_through_antiparallel_are_smallest_and_continuous(backend, side):
    """A segment hangs still along +y while its animated direction sweeps past -y (within
    1.1 degrees of antiparallel, in the plane of +y and ``side``): every swing and world
    rotation takes the animated direction onto the simulated one within 1e-3 rad, and from
    frame to frame the swing turns no more than the animated direction did (twice it)."""
    length = 0.13
    pivot = np.array([0.4, -0.2, 1.5])
    solver = Solver(PointChainSet([1], 2.0, 0.5), backend=backend)
    solver.set_pose(np.array([pivot, pivot + [0.0, length, 0.0]]))
    solver.advance(1 / 60)  # snapped onto the pose, at rest
    side = np.array(side) / np.linalg.norm(side)
    step = np.radians(0.03)
    last = None
    for eps in np.radians(1.1) - step * (np.arange(73) + 0.37):  # never exactly antiparallel
        animated = length * (np.array([0.0, -np.cos(eps), 0.0]) + np.sin(eps) * side)
        joints = np.array([pivot, pivot + animated])
        solver.set_pose(joints, joint_rotations=np.array([[0, 0, 0, 1.0]] * 2))
        solver.advance(0.0)  # no substep: the chain stays where it hangs
        p = solver.positions()
        simulated = p[1] - p[0]
        swing = solver.segment_swings()[0].astype(np.float64)
        world = solver.segment_rotations()[0].astype(np.float64)
        assert angle_between(rotate(swing, animated), simulated) < 1e-3
        assert angle_between(rotate(world, animated), simulated) < 1e-3  # identity joint frames
        if last is not None:
            assert turn_between(swing, last) < 2 * step
        last = swing


def quat_about(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([axis * np.sin(angle / 2), [np.cos(angle / 2)]])


#: Sweep axes and, across each, the direction the segment is held along (section 4, step 2).
SWEEPS = {"x": ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)), "y": ((0.0, 1.0, 0.0), (0.0, 0.0, 1.0)),
          "z": ((0.0, 0.0, 1.0), (1.0, 0.0, 0.0)), "oblique": ((0.6, 0.0, -0.8), (0.8, 0.0, 0.6))}


def _swept_frames(solver, axis, held, angles, segments=1):
    """The pose of a chain along ``held`` whose animated direction is turned by each of
    ``angles`` about ``axis`` (exactly -held at π); yields each frame's animated direction."""
    for angle in angles:
        animated = -held if angle == np.pi else rotate(quat_about(axis, angle), held)
        solver.set_pose(np.outer(np.arange(segments + 1), animated),
                        joint_rotations=np.tile([0, 0, 0, 1.0], (segments + 1, 1)))
        yield animated


@pytest.mark.parametrize("sweep", SWEEPS)
def test_rotations_stay_continuous_through_exactly_antiparallel(backend, sweep):
    """A segment held along one direction while its animated direction turns about an axis
    across it through exactly antiparallel (0.04° a frame, one frame exactly opposite): the
    swing and the world rotation take the animated direction onto the simulated one within
    1e-3 rad, and turn no more than the animated direction did between frames (twice it), the
    frame exactly antiparallel included (before: 180° with axes other than the one a fixed
    half turn took). A state saved just before that frame and loaded into a new solver gives
    the same rotations there."""
    axis, held = (np.array(v) for v in SWEEPS[sweep])
    held = 0.125 * held
    step = np.radians(0.04)
    angles = [np.pi + step * j for j in range(-12, 13)]
    solver = Solver(PointChainSet([1], 2.0, 0.5), backend=backend)
    solver.set_pose(np.array([np.zeros(3), held]))
    solver.advance(1 / 60)
    last, saved = None, None
    for angle, animated in zip(angles, _swept_frames(solver, axis, held, angles)):
        if angle == np.pi:
            saved = solver.save_state()
        solver.advance(0.0)  # no substep: the segment stays along ``held``
        p = solver.positions()
        simulated = p[1] - p[0]
        swing = solver.segment_swings()[0].astype(np.float64)
        world = solver.segment_rotations()[0].astype(np.float64)
        assert angle_between(rotate(swing, animated), simulated) < 1e-3
        assert angle_between(rotate(world, animated), simulated) < 1e-3
        if last is not None:
            assert turn_between(swing, last[0]) < 2 * step, angle - np.pi
            assert turn_between(world, last[1]) < 2 * step, angle - np.pi
        last = swing, world
        if angle == np.pi:
            exact = swing, world
    assert saved is not None
    loaded = Solver.load_state(saved, backend=backend)
    for _ in _swept_frames(loaded, axis, held, [np.pi]):
        loaded.advance(0.0)
    assert np.array_equal(loaded.segment_swings()[0], exact[0].astype(np.float32))
    assert np.array_equal(loaded.segment_rotations()[0], exact[1].astype(np.float32))


@pytest.mark.parametrize("sweep", ["x", "oblique"])
def test_a_child_follows_its_parents_bend_through_antiparallel(backend, sweep):
    """Two segments, the first (0.01 Hz) left along one direction while its animated
    direction, and the second's in line with it, turn through antiparallel to it about an axis
    across it (0.02° a frame, with substeps); the second held on its target direction by a cone
    of 0. The step's and the output's R(u → w) take the parent's animated direction onto its
    simulated one, so the child lies along its parent within 1e-3 rad, after the substeps and in
    the output (before: 0.8° within 0.81° of antiparallel), and the child's world rotation turns
    smoothly (under 10 times the sweep's step a frame, 0.2°; before: 180° with swing axis x)."""
    axis, held = (np.array(v) for v in SWEEPS[sweep])
    held = 0.125 * held
    step = np.radians(0.02)
    angles = [np.pi + step * j for j in range(-60, 61)]
    solver = Solver(PointChainSet([2], 0.01, 1.0, angle_limit=np.array([np.pi, 0.0])), backend=backend)
    solver.set_pose(np.outer(np.arange(3), held))
    solver.advance(1 / 60)
    last = None
    for _ in _swept_frames(solver, axis, held, angles, segments=2):
        solver.advance(1 / 120)
        for raw in (True, False):
            p = solver.positions(raw=raw)
            assert angle_between(p[2] - p[1], p[1] - p[0]) < 1e-3
        world = solver.segment_rotations()[1].astype(np.float64)
        if last is not None:
            assert turn_between(world, last) < 10 * step
        last = world


def _child_sweep(backend, sweep, frames):
    """The two-segment chain of the test above, its parent's animated direction swept through
    antiparallel about ``sweep``'s axis (0.02° a frame, 1/120 s of substeps a frame), after the
    frames ``frames`` of that sweep."""
    axis, held = (np.array(v) for v in SWEEPS[sweep])
    held = 0.125 * held
    solver = Solver(PointChainSet([2], 0.01, 1.0, angle_limit=np.array([np.pi, 0.0])), backend=backend)
    solver.set_pose(np.outer(np.arange(3), held))
    solver.advance(1 / 60)
    for _ in _swept_frames(solver, axis, held, [np.pi + np.radians(0.02) * j for j in frames], segments=2):
        solver.advance(1 / 120)
    return solver, axis, held


def _carried_axes(solver):
    """(S, 3, 3) float32: each segment's carried axes (bend, swing, world), decoded from its state."""
    records = state.unpack(solver.save_state())["record.segment_state"].view(layouts.POINT_SEGMENT_STATE)
    codes = [np.stack([records[a][:, 3], records[b][:, 3]], axis=1) for a, b in layouts.AXIS_CODE_FIELDS.values()]
    return np.stack([axis_from_code(c) for c in codes], axis=1)


def test_the_carried_axes_fit_in_the_segment_state_and_agree_between_backends(gl):
    """The axes carried near antiparallel take no room of their own: a point segment's state
    is its eight vec4s, and after a sweep to 0.1° of antiparallel (inside the blend, where
    they act) the segments carry unit axes in their w, the same on both backends to 1e-5
    rad (they are saved with the state)."""
    assert layouts.POINT_SEGMENT_STATE.itemsize == 8 * 16
    axes = {}
    for backend in ("cpu", "gpu"):
        solver, _, _ = _child_sweep(backend, "oblique", range(-60, -4))
        axes[backend] = _carried_axes(solver).astype(np.float64)
        solver.release()
    norms = {backend: np.linalg.norm(carried, axis=-1) for backend, carried in axes.items()}
    for norm in norms.values():
        assert np.allclose(norm[0], 1.0, atol=1e-6)  # the parent's bend, swing and world turn
        assert np.allclose(norm[norm > 0], 1.0, atol=1e-6)  # the child's world turn is none (u·w > 0)
    assert np.array_equal(norms["cpu"] > 0, norms["gpu"] > 0)
    carried = norms["cpu"] > 0
    assert angle_between(axes["cpu"][carried], axes["gpu"][carried]).max() < 1e-5


def test_a_state_saved_near_antiparallel_goes_on_bit_for_bit(backend):
    """Saved mid-sweep 0.1° from antiparallel (the carried axes in use), loaded into a new
    solver, and both run on through exactly antiparallel and out (with substeps): the same
    raw state, outputs, swings and world rotations, bit for bit, every frame; the loaded one's
    child lies on its parent's bend (1e-3 rad; 0.8° before) and its frame turns smoothly
    through antiparallel and out of the last 0.81° (under 10 sweep steps a frame; 180° before)."""
    solver, axis, held = _child_sweep(backend, "x", range(-40, -4))
    saved = solver.save_state()
    loaded = Solver.load_state(saved, backend=backend)
    step = np.radians(0.02)
    angles = [np.pi + step * j for j in range(-4, 45)]  # out of the last 0.81° (40.5 steps)
    last = loaded.segment_rotations()[1].astype(np.float64)
    for _ in zip(_swept_frames(solver, axis, held, angles, segments=2),
                 _swept_frames(loaded, axis, held, angles, segments=2)):
        solver.advance(1 / 120)
        loaded.advance(1 / 120)
        for read in ("positions", "segment_swings", "segment_rotations"):
            assert getattr(solver, read)().tobytes() == getattr(loaded, read)().tobytes(), read
        assert solver.positions(raw=True).tobytes() == loaded.positions(raw=True).tobytes()
        p = loaded.positions()
        assert angle_between(p[2] - p[1], p[1] - p[0]) < 1e-3  # the child on its parent's bend
        world = loaded.segment_rotations()[1].astype(np.float64)
        assert turn_between(world, last) < 10 * step
        last = world
    assert solver.save_state() == loaded.save_state()


def test_an_axis_code_keeps_the_axis_and_zero_means_none():
    """The two-float code of a carried axis (SPEC 9, "Swings") gives back the unit axis within
    1e-6 rad, over the whole sphere (the axes and the octahedron's edges included), and (0, 0)
    for none carried, which decodes to none; every code lies in [1, 3] × [-1, 1]."""
    rng = np.random.default_rng(11)
    axes = rng.normal(size=(4000, 3))
    signs = np.array(np.meshgrid([-1, 0, 1], [-1, 0, 1], [-1, 0, 1])).reshape(3, -1).T
    axes = np.concatenate([axes, signs[np.any(signs != 0, axis=1)]])
    axes = (axes / np.linalg.norm(axes, axis=1, keepdims=True)).astype(np.float32)
    codes = axis_code(axes)
    assert codes.dtype == np.float32
    assert (codes[:, 0] >= 1).all() and (codes[:, 0] <= 3).all() and (np.abs(codes[:, 1]) <= 1).all()
    back = axis_from_code(codes).astype(np.float64)
    assert angle_between(back, axes.astype(np.float64)).max() < 1e-6
    assert np.allclose(np.linalg.norm(back, axis=1), 1.0, atol=1e-6)
    assert (axis_code(np.zeros((2, 3), np.float32)) == 0).all()
    assert (axis_from_code(np.zeros((2, 2), np.float32)) == 0).all()


@pytest.mark.parametrize("keep_shape", [True, False])
def test_a_teleport_turns_the_carried_axes_with_the_body_or_keeps_them(backend, keep_shape):
    """Mid-sweep 0.1° from antiparallel (the carried axes in use), the body jumps 3 units and
    turns 90° about an oblique axis (joint rotations given). keep_shape turns the chain and
    so every carried axis with it (as lines, within 1e-5 rad); a snap keeps them as they were."""
    solver, axis, held = _child_sweep(backend, "x", range(-40, -4))
    before = _carried_axes(solver).astype(np.float64)
    turn = quat_about((1.0, 2.0, 2.0), np.pi / 2)
    animated = rotate(quat_about(axis, np.pi + np.radians(0.02) * -5), held)  # the last pose
    joints = rotate(turn, np.outer(np.arange(3), animated)) + [3.0, 0.0, 0.0]
    solver.teleport(keep_shape=keep_shape)
    solver.set_pose(joints, joint_rotations=np.tile(turn, (3, 1)))
    solver.advance(0.0)
    after = _carried_axes(solver).astype(np.float64)
    carried = np.linalg.norm(before, axis=-1) > 0
    assert carried.sum() >= 5
    expected = rotate(turn, before[carried]) if keep_shape else before[carried]
    between = angle_between(after[carried], expected)
    assert np.minimum(between, np.pi - between).max() < 1e-5  # as lines: a carried axis's sign is free

"""Hinge and spherical limits of point chains, measured in each segment's target frame (its
base joint's animated rotation turned with its parent's simulated bend; docs/SPEC.md
section 9, "Joint frames" and "Angle limits"; VRMC_springBone_limit's hinge and spherical)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from gpu_jiggle import PointChainSet, Solver

#: The issue's bound: never more than 1e-5 rad outside the limit.
LIMIT_TOLERANCE = 1e-5
#: GPU and reference agree within this (SPEC 8.6's cross-checks use the same order).
AGREE = 1e-4
COUNTS = [4, 6, 3, 5]


def _cross(a, b):
    """a × b of two 3-vectors: np.cross's products and differences in its order (so the same
    bits), without its axis handling, which costs some 30 µs a call; the measurements below
    take thousands of cross products per frame."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _quat_rotate(q, u):
    t = 2 * _cross(q[:3], u)
    return u + q[3] * t + _cross(q[:3], t)


def _quat_multiply(a, b):
    return np.concatenate([a[3] * b[:3] + b[3] * a[:3] + _cross(a[:3], b[:3]), [a[3] * b[3] - a[:3] @ b[:3]]])


#: SPEC 4, step 2: within this sine of antiparallel R(u → w)'s half turn leans on the carried axis.
TURN_AXIS_BLEND = 0.014142
#: SPEC 4, step 2: below this u·w R(u → w) is built on the half turn.
HALF_TURN_COSINE = -0.9999


def _turn_axis(u, w, carried):
    """SPEC 4, step 2, float64: the axis of R(u → w)'s half turn past a right angle, u × w
    plus the carried axis times TURN_AXIS_BLEND - |u × w| (where positive), and the axis to
    carry on: the carried one (its sign along u × w) turned towards u × w (unit) by
    |u × w|/TURN_AXIS_BLEND - 1 of the way (0 to 1), or u × w past a right angle where none
    was carried."""
    u, w = u / np.linalg.norm(u), w / np.linalg.norm(w)
    if u @ w >= 0:  # short of a right angle nothing is carried on
        return None, carried
    v = _cross(u, w)
    lv = np.linalg.norm(v)
    n = v + math.copysign(max(TURN_AXIS_BLEND - lv, 0.0), 1.0 if carried @ v >= 0 else -1.0) * carried
    n -= (n @ u) * u
    if np.linalg.norm(n) < 1e-6:
        n = _cross(u, [1.0, 0, 0] if abs(u[0]) < 0.9 else [0, 1.0, 0])
    renew = 1.0 if u @ w < 0 and not carried.any() and lv >= 1e-6 else min(max(lv / TURN_AXIS_BLEND - 1.0, 0.0), 1.0)
    k = renew * v / max(lv, 1e-300) + (1.0 - renew) * (1.0 if carried @ v >= 0 else -1.0) * carried
    return n / np.linalg.norm(n), k / max(np.linalg.norm(k), 1e-300)


def _between(u, w, axis):
    """R(u → w) (quaternion), float64: the smallest rotation taking direction u onto w for
    u·w >= HALF_TURN_COSINE; below, the smallest rotation taking -u onto w after the half
    turn about ``axis`` (SPEC 4, step 2)."""
    u, w = u / np.linalg.norm(u), w / np.linalg.norm(w)
    c = float(u @ w)
    if c >= HALF_TURN_COSINE:
        q = np.concatenate([_cross(u, w), [1 + c]])
        return q / np.linalg.norm(q)
    q = np.concatenate([_cross(-u, w), [1 - c]])
    return _quat_multiply(q / np.linalg.norm(q), np.concatenate([axis, [0.0]]))


def _about_y(angle):
    return np.array([0.0, math.sin(angle / 2), 0.0, math.cos(angle / 2)])


def limit_frames(cs, joints, pose, rotations, carried=None):
    """Per segment: its unit target direction a, simulated direction u, and the limit's unit
    axis n across a (None where the axis lies along a), from the SPEC's definitions.
    ``carried``: segment → the axis of its bend's half turn at the last call (updated)."""
    carried = {} if carried is None else carried
    out = []
    for c, count in enumerate(cs.segment_counts):
        j0, s0 = int(cs.first_joint[c]), int(cs.first_segment[c])
        for i in range(count):
            bend = np.array([0.0, 0, 0, 1])
            if i:
                u_p, w_p = pose[j0 + i] - pose[j0 + i - 1], joints[j0 + i] - joints[j0 + i - 1]
                axis, carried[s0 + i - 1] = _turn_axis(u_p, w_p, carried.get(s0 + i - 1, np.zeros(3)))
                bend = _between(u_p, w_p, axis)
            a = _quat_rotate(bend, pose[j0 + i + 1] - pose[j0 + i])
            a /= np.linalg.norm(a)
            u = joints[j0 + i + 1] - joints[j0 + i]
            u /= np.linalg.norm(u)
            axis = _quat_rotate(_quat_multiply(bend, rotations[j0 + i]), cs.limit_axis[s0 + i])
            n = axis - (axis @ a) * a
            out.append((a, u, None if np.linalg.norm(n) < 1e-6 else n / np.linalg.norm(n)))
    return out


def worst_excess(cs, joints, pose, rotations, carried=None):
    """The largest angle (rad) by which a segment lies outside its hinge (off its plane, or
    beyond its range) or outside its spherical limit's ellipse (along the ellipse's radius);
    negative or 0: inside."""
    worst = -np.inf
    for s, (a, u, n) in enumerate(limit_frames(cs, joints, pose, rotations, carried)):
        side = _cross(n, a)
        if np.isfinite(cs.hinge_limit[s, 0]):
            lo, hi = cs.hinge_limit[s]
            theta = math.atan2(u @ side, u @ a)
            worst = max(worst, math.asin(min(abs(u @ n), 1.0)), theta - hi, lo - theta)
        elif np.isfinite(cs.spherical_limit[s, 0]):
            pitch, yaw = cs.spherical_limit[s]
            if pitch == 0 or yaw == 0:  # an arc: in the plane of a and the other axis's swing
                across, along = (side, n) if pitch == 0 else (n, side)
                worst = max(worst, math.asin(min(abs(u @ across), 1.0)),
                            abs(math.atan2(u @ along, u @ a)) - max(pitch, yaw))
                continue
            theta = math.atan2(np.linalg.norm(_cross(u, a)), u @ a)
            phi = math.atan2(u @ n, u @ side)
            bound = 1 / math.sqrt(math.cos(phi) ** 2 / pitch ** 2 + math.sin(phi) ** 2 / yaw ** 2)
            worst = max(worst, theta - bound)
    return worst


def _chains(**limits):
    rng = np.random.default_rng(3)
    cs = PointChainSet(COUNTS, rng.uniform(1.5, 5.0, 4), rng.uniform(0.05, 0.4, 4), gravity=(0.0, -9.81, 0.0),
                       **limits)
    pose = np.concatenate([np.array([[0.3 * c, 0.0, 0.0]]) + np.outer(np.arange(n + 1), [0.1, -0.05, 0.02 * c])
                           for c, n in enumerate(COUNTS)])
    return cs, pose


def _driven(pose, k, rng, spin_hz=2.0, fps=120.0):
    """The pose and its joint rotations spun about the vertical at ``spin_hz``, with random
    hitches and a twist of the joints that wobbles about the spin."""
    angle = 2 * math.pi * spin_hz * k / fps
    rot = np.array([[math.cos(angle), 0, math.sin(angle)], [0, 1, 0], [-math.sin(angle), 0, math.cos(angle)]])
    hitch = rng.normal(0.0, 0.04, 3) if k % 17 == 0 else np.zeros(3)
    spin = _about_y(angle)
    wobble = np.array([math.sin(0.3 * math.sin(3 * angle) / 2), 0.0, 0.0, math.cos(0.3 * math.sin(3 * angle) / 2)])
    rotations = np.tile(_quat_multiply(spin, wobble), (len(pose), 1))
    return pose @ rot.T + hitch, rotations


def _drive(cs, pose, backend, frames=1200, check=None):
    rng = np.random.default_rng(11)
    worst, bound = -np.inf, 0
    carried = {True: {}, False: {}}  # the bends' half-turn axes, after the substeps and in the output
    with Solver(cs, backend=backend, max_substeps=1) as solver:
        for k in range(frames):
            p, r = _driven(pose, k, rng)
            solver.set_pose(p, r)
            ran = solver.advance(0.0 if k == 0 else solver.substep)
            for raw in (True, False) if ran else (False,):
                excess = worst_excess(cs, solver.positions(raw=raw), p, r, carried[raw])
                worst = max(worst, excess)
                bound += excess > -1e-3
        return worst, bound, solver.positions()


HINGES = np.concatenate([np.tile([[-0.3, 0.4]], (4, 1)), np.tile([[-math.pi, math.pi]], (6, 1)),
                         np.zeros((3, 2)), np.tile([[0.1, 0.6]], (5, 1))])
SPHERICAL = np.concatenate([np.tile([[0.3, 0.1]], (4, 1)), np.tile([[0.6, 0.6]], (6, 1)),
                            np.tile([[0.0, 0.4]], (3, 1)), np.tile([[0.5, 0.0]], (5, 1))])


def test_driven_hinges_never_leave_their_range_or_plane(backend):
    """Spins at 2 turns/s with a wobbling joint twist, hitches and gravity, 1,200 substeps:
    after every substep and in the frame-time output no segment is more than 1e-5 rad off its
    hinge plane or outside its range; ranges of 0 and of ±π included; the limits bound."""
    cs, pose = _chains(hinge_limit=HINGES, limit_axis=(0.0, 0.0, 1.0))
    worst, bound, _ = _drive(cs, pose, backend)
    assert worst < LIMIT_TOLERANCE, worst
    assert bound > 100


def test_driven_spherical_limits_never_leave_their_ellipse(backend):
    """The same drive with elliptical limits (one axis 0 in two chains: a hinge about the
    other): no segment more than 1e-5 rad outside its ellipse."""
    cs, pose = _chains(spherical_limit=SPHERICAL, limit_axis=(0.0, 0.0, 1.0))
    worst, bound, _ = _drive(cs, pose, backend)
    assert worst < LIMIT_TOLERANCE, worst
    assert bound > 100


def test_a_hinge_about_z_keeps_a_chain_in_the_xy_plane_of_its_frame(backend):
    """A chain along x with joints unrotated and a hinge about z, forced by wind and gravity
    with z parts and hitches in z: it stays in the xy-plane (|z| < 1e-5 of its length)
    while swinging in it."""
    cs = PointChainSet([5], 3.0, 0.1, gravity=(0.0, -9.81, 2.0), hinge_limit=(-math.pi, math.pi),
                       limit_axis=(0.0, 0.0, 1.0))
    pose = np.outer(np.arange(6), [0.2, 0.0, 0.0])
    rotations = np.tile([0.0, 0.0, 0.0, 1.0], (6, 1))
    rng = np.random.default_rng(2)
    with Solver(cs, backend=backend) as solver:
        solver.set_wind(acceleration=(1.0, 0.0, 6.0), gust_amplitude=4.0, gust_frequency=1.3)
        worst_z, swing = 0.0, 0.0
        for k in range(240):
            hitch = np.array([0.0, 0.0, rng.normal(0.0, 0.05)]) if k % 13 == 0 else np.zeros(3)
            solver.set_pose(pose + hitch, rotations)
            solver.advance(1 / 60)
            joints = solver.positions() - (pose[0] + hitch)
            worst_z = max(worst_z, np.abs(joints[:, 2]).max())
            swing = max(swing, np.abs(joints[:, 1]).max())
    assert worst_z < 1e-5 * 1.0, worst_z
    assert swing > 0.1


def _held(backend, pose, rotations, **limits):
    cs, _ = _chains(**limits)
    with Solver(cs, backend=backend) as solver:
        out = []
        for k in range(60):
            solver.set_pose(pose, rotations)
            solver.advance(0.0 if k == 0 else 1 / 60)
            out.append(solver.positions())
    return np.array(out)


def test_limits_never_reached_change_nothing_bit_for_bit(backend):
    """Chains in the xy-plane sagging under gravity, joints unrotated: a hinge about z with a
    range of ±π (a plane, a limit of 180°), an elliptical limit wider than the angles they
    reach (1.1 ×) and one of (π, π) leave every frame exactly as without a limit."""
    cs, pose = _chains()
    pose[:, 2] = 0.0
    rotations = np.tile([0.0, 0.0, 0.0, 1.0], (len(pose), 1))
    free = _held(backend, pose, rotations)
    reached = max(math.atan2(np.linalg.norm(np.cross(u, a)), u @ a)
                  for joints in free for a, u, _ in limit_frames(cs, joints, pose, rotations))
    assert reached > 0.3  # they did swing off their targets
    z = (0.0, 0.0, 1.0)
    assert np.array_equal(free, _held(backend, pose, rotations, hinge_limit=(-math.pi, math.pi), limit_axis=z))
    wide = min(1.1 * reached, math.pi)
    assert np.array_equal(free, _held(backend, pose, rotations, spherical_limit=(wide, 0.999 * wide), limit_axis=z))
    assert np.array_equal(free, _held(backend, pose, rotations, spherical_limit=(math.pi, math.pi)))


def _one_segment_after(backend, pose, rotations, kick, **limits):
    cs = PointChainSet([1], 0.7, 0.2, **limits)
    with Solver(cs, backend=backend) as solver:
        solver.set_pose(pose, rotations)
        solver.advance(0.0)
        solver.set_wind(acceleration=kick)
        for _ in range(30):
            solver.set_pose(pose, rotations)
            solver.advance(1 / 60)
        return solver.positions()[1] - pose[0]


def test_singular_hinges_and_spherical_limits(backend):
    """A hinge axis along the target direction leaves no turn (the segment stays on its
    target); a hinge range of 0 likewise; a spherical limit with a pitch of 0 moves in its
    yaw plane only, within its yaw; a spherical axis along the target acts as a cone of the
    smaller limit."""
    pose = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    rotations = np.tile([0.0, 0.0, 0.0, 1.0], (2, 1))
    kick = (0.0, 40.0, 40.0)
    for limits in ({"hinge_limit": (-1.0, 1.0), "limit_axis": (1.0, 0.0, 0.0)},
                   {"hinge_limit": (0.0, 0.0), "limit_axis": (0.0, 0.0, 1.0)}):
        tip = _one_segment_after(backend, pose, rotations, kick, **limits)
        assert np.abs(tip - [1.0, 0.0, 0.0]).max() < 1e-5, (limits, tip)
    free = _one_segment_after(backend, pose, rotations, kick)
    assert math.atan2(np.linalg.norm(free[1:]), free[0]) > 0.5  # the kick would turn it far
    tip = _one_segment_after(backend, pose, rotations, kick, spherical_limit=(0.0, 0.3), limit_axis=(0, 0, 1.0))
    # pitch (about z) 0: no y; yaw, toward z, within 0.3
    assert abs(tip[1]) < 1e-5 and abs(math.atan2(tip[2], tip[0])) < 0.3 + 1e-5 and tip[2] > 0.1
    tip = _one_segment_after(backend, pose, rotations, kick, spherical_limit=(0.2, 0.5), limit_axis=(1.0, 0, 0))
    assert abs(math.atan2(np.linalg.norm(tip[1:]), tip[0]) - 0.2) < 1e-5


def test_hinge_and_spherical_limits_agree_on_both_backends(gl):
    cs, pose = _chains(hinge_limit=np.concatenate([HINGES[:10], np.tile([[-np.inf, np.inf]], (8, 1))]),
                       spherical_limit=np.concatenate([np.tile([[np.inf, np.inf]], (10, 1)), SPHERICAL[10:]]),
                       limit_axis=(0.3, 0.0, 1.0))
    out = [_drive(cs, pose, backend, frames=240)[2] for backend in ("gpu", "cpu")]
    assert np.abs(out[0] - out[1]).max() < AGREE


def test_hinge_and_spherical_limits_need_joint_rotations():
    cs, pose = _chains(hinge_limit=(-0.5, 0.5))
    with Solver(cs, backend="cpu") as solver:
        with pytest.raises(ValueError, match=r"joint_rotations are required: segment 0 \(chain 0, segment 0\) has a "
                                             r"hinge limit"):
            solver.set_pose(pose)
    cs, _ = _chains()
    with Solver(cs, backend="cpu") as solver:
        solver.set_pose(pose)
        with pytest.raises(ValueError, match="spherical limit"):
            solver.set_parameters(spherical_limit=(0.3, 0.3))
        assert np.all(np.isinf(solver.chain_set.spherical_limit))


@pytest.mark.parametrize("limits, match", [
    ({"hinge_limit": (0.5, -0.5)}, r"hinge_limit\[0, 0\] = 0.5: expected a least angle <= the greatest"),
    ({"hinge_limit": (-0.5, 4.0)}, r"hinge_limit\[0, 1\] = 4.0: expected an angle in \[-π, π\]"),
    ({"hinge_limit": (-np.inf, 0.5)}, r"hinge_limit\[0, 0\] = -inf"),
    ({"hinge_limit": [[0.0, math.nan]] * 5}, r"hinge_limit\[0, 1\] = nan"),
    ({"spherical_limit": [[0.2, 0.2], [0.2, -0.1], [0.1, 0.1], [0.1, 0.1], [0.1, 0.1]]},
     r"spherical_limit\[1, 1\] = -0.1: expected an angle in \[0, π\]"),
    ({"spherical_limit": (0.2, np.inf)}, r"spherical_limit\[0, 1\] = inf"),
    ({"limit_axis": (0.0, 0.0, 0.0)}, r"limit_axis\[0, 0\] = 0.0: expected a non-zero axis"),
    ({"limit_axis": [1.0, 0.0]}, r"limit_axis: expected one row \(3,\)"),
    ({"angle_limit": 0.3, "hinge_limit": (-0.2, 0.2)}, r"hinge_limit\[0, 0\] = -0.2: expected at most one limit"),
])
def test_bad_limits_are_refused(limits, match):
    with pytest.raises(ValueError, match=match):
        PointChainSet([2, 3], 3.0, 0.5, **limits)


@pytest.mark.parametrize("rotations, match", [
    (np.tile([0.0, 0.0, 0.0, 1.1], (6, 1)), r"joint_rotations\[0\] = 1.1: expected a unit quaternion .*its length"),
    (np.tile([0.0, 0.0, math.nan, 1.0], (6, 1)), r"joint_rotations\[0, 2\] = nan"),
    (np.tile([0.0, 0.0, 1.0], (6, 1)), r"joint_rotations"),
])
def test_bad_joint_rotations_are_refused_and_change_nothing(rotations, match):
    cs = PointChainSet([2, 2], 3.0, 0.5)
    pose = np.outer(np.arange(6), [0.1, 0.0, 0.0])
    with Solver(cs, backend="cpu") as solver:
        solver.set_pose(pose)
        solver.advance(1 / 60)
        before = solver.save_state()
        with pytest.raises(ValueError, match=match):
            solver.set_pose(pose + 1.0, rotations)
        assert solver.save_state() == before


def test_segment_rotations_carry_the_joints_twist(backend):
    """With joint rotations: at rest each segment's world rotation is its joint's (a twist
    about the bone included); swinging, each maps the bone's local direction onto its
    simulated direction. Without them, the smallest rotation from the animated direction."""
    twist = np.array([math.sin(0.35), 0.0, 0.0, math.cos(0.35)])  # 0.7 rad about the bone (x)
    pose = np.outer(np.arange(4), [0.25, 0.0, 0.0])
    rotations = np.tile(twist, (4, 1))
    cs = PointChainSet([3], 2.0, 0.3, gravity=(0.0, -9.81, 0.0))
    with Solver(cs, backend=backend) as solver:
        solver.set_pose(pose, rotations)
        solver.advance(0.0)
        q = solver.segment_rotations().astype(np.float64)
        assert np.abs(np.abs(q @ twist) - 1).max() < 1e-6
        for _ in range(20):
            solver.set_pose(pose, rotations)
            solver.advance(1 / 60)
        q = solver.segment_rotations().astype(np.float64)
        joints = solver.positions()
        for s in range(3):
            direction = (joints[s + 1] - joints[s]) / np.linalg.norm(joints[s + 1] - joints[s])
            assert np.abs(_quat_rotate(q[s], np.array([1.0, 0, 0])) - direction).max() < 1e-5
        assert joints[3, 1] < -0.05  # it sagged
        solver.set_pose(pose)
        solver.advance(1 / 60)
        swing = solver.segment_rotations()
        assert np.array_equal(swing, solver.segment_swings())
        assert abs(swing[0, 0]) < 1e-6  # no twist about x: the smallest rotation


def test_saved_state_keeps_the_joint_rotations_and_their_path(backend):
    """A solver saved mid-run with hinge limits and joint rotations, restored into a new one,
    continues bit for bit (the rotations' nlerp start is state; the pose's rotations are
    pending inputs)."""
    cs, pose = _chains(hinge_limit=HINGES, limit_axis=(0.0, 0.0, 1.0))
    rng = np.random.default_rng(4)
    drive = [_driven(pose, k, rng, fps=60.0) for k in range(40)]
    with Solver(cs, backend=backend) as solver:
        for p, r in drive[:20]:
            solver.set_pose(p, r)
            solver.advance(1 / 60)
        blob = solver.save_state()
        for p, r in drive[20:]:
            solver.set_pose(p, r)
            solver.advance(1 / 60)
        expected = solver.positions()
    with Solver.load_state(blob, backend=backend) as restored:
        for p, r in drive[20:]:
            restored.set_pose(p, r)
            restored.advance(1 / 60)
        assert np.array_equal(restored.positions(), expected)

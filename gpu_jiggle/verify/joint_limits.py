"""Hinge and spherical limits of point chains, driven hard (docs/SPEC.md section 9, "Joint
frames" and "Angle limits").

Four chains with a limit each (per chain below; hinge and pitch axis z in the joints' frame)
are spun at 2 turns/s about the vertical with random hitches under gravity, their joints'
rotations following the spin with a twist about x that wobbles (0.3 rad at 3 × the spin).
Frames of one substep (``max_substeps=1``): the raw state after every substep and the
frame-time output are measured here, in float64, from positions and the pose: each segment's
target frame (its base joint's rotation turned by the smallest rotation taking the parent's
animated direction onto its simulated one), the target direction a, the limit axis made
perpendicular to it, and the angle by which the segment lies outside its limit.
"""
from __future__ import annotations

import math

import numpy as np

from ..sim.chains import PointChainSet
from ..sim.solver import Solver
from .limits import GRAVITY, HALF_TURN_COSINE, LIMIT_TOLERANCE, PRESSED, SPIN_HZ, turn_axis, turned
from .result import CheckResult

COUNTS = (4, 6, 3, 5)
FREQUENCY, DAMPING = (2.0, 3.5, 4.0, 2.5), (0.1, 0.3, 0.2, 0.15)
#: Per chain: hinge (least, greatest) and spherical (pitch, yaw) limits, rad.
HINGES = ((-0.3, 0.4), (-math.pi, math.pi), (0.0, 0.0), (0.1, 0.6))
SPHERICAL = ((0.3, 0.1), (0.6, 0.6), (0.0, 0.4), (0.5, 0.0))
AXIS = (0.0, 0.0, 1.0)
SECONDS = 2.0
#: The joints' twist about x: amplitude (rad) and its rate as a multiple of the spin.
WOBBLE, WOBBLE_RATE = 0.3, 3.0


def _quat_rotate(q, u):
    t = 2.0 * np.cross(q[:, :3], u)
    return u + q[:, 3:] * t + np.cross(q[:, :3], t)


def _quat_multiply(a, b):
    xyz = a[:, 3:] * b[:, :3] + b[:, 3:] * a[:, :3] + np.cross(a[:, :3], b[:, :3])
    return np.concatenate([xyz, a[:, 3:] * b[:, 3:] - np.sum(a[:, :3] * b[:, :3], axis=1, keepdims=True)], axis=1)


def _between(u, w, axis):
    """(n, 4) R(u → w) for unit u, w (n, 3) (SPEC 4, step 2): for u·w >= HALF_TURN_COSINE the
    smallest rotation taking u onto w; below, the smallest rotation taking -u onto w times
    the half turn about ``axis`` (:func:`~gpu_jiggle.verify.limits.turn_axis`)."""
    c = np.sum(u * w, axis=1, keepdims=True)
    wide = c < HALF_TURN_COSINE
    q = np.concatenate([np.cross(np.where(wide, -u, u), w), 1.0 + np.where(wide, -c, c)], axis=1)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    half = np.concatenate([axis, np.zeros((len(axis), 1))], axis=1)
    return np.where(wide, _quat_multiply(q, half), q)


def _unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def limit_coordinates(cs: PointChainSet, joints, pose, rotations, carried=None):
    """Per segment (S,): the angle about the limit axis n from the target direction a (θ, the
    hinge's coordinate), the sine of the angle off the plane across n (u·n), and the swing
    vector (S, 2) = θ_a·(u·(n × a), u·n)/|…|, rad, float64. ``rotations`` (J, 4) the pose's;
    ``carried`` the parent bends' half-turn axes at the last call ((S, 3), updated) or None."""
    joints, pose = np.asarray(joints, np.float64), np.asarray(pose, np.float64)
    bases = np.concatenate([np.arange(f, f + n) for f, n in zip(cs.first_joint, cs.segment_counts)])
    animated = pose[bases + 1] - pose[bases]
    u = _unit(joints[bases + 1] - joints[bases])
    child = np.concatenate([np.arange(n) > 0 for n in cs.segment_counts])
    parent = bases[child] - 1
    parent_animated, parent_simulated = _unit(pose[parent + 1] - pose[parent]), _unit(joints[parent + 1] - joints[parent])
    carried = np.zeros((cs.segment_count, 3)) if carried is None else carried
    parent_segment = np.flatnonzero(child) - 1
    turn, carried[parent_segment] = turn_axis(parent_animated, parent_simulated, carried[parent_segment])
    a = animated.copy()
    a[child] = turned(parent_animated, parent_simulated, animated[child], turn)
    a = _unit(a)
    frame = np.asarray(rotations, np.float64)[bases]
    frame[child] = _quat_multiply(_between(parent_animated, parent_simulated, turn), frame[child])
    axis = _quat_rotate(frame, cs.limit_axis)
    n = _unit(axis - np.sum(axis * a, axis=1, keepdims=True) * a)
    side = np.cross(n, a)
    theta = np.arctan2(np.sum(u * side, axis=1), np.sum(u * a, axis=1))
    off = np.sum(u * n, axis=1)
    across = np.stack([np.sum(u * side, axis=1), off], axis=1)
    size = np.linalg.norm(across, axis=1, keepdims=True)
    heading = np.where(size > 0, across / np.where(size > 0, size, 1.0), [[1.0, 0.0]])  # (1, 0) on the target
    swing = np.arctan2(size[:, 0], np.sum(u * a, axis=1))[:, None] * heading
    return theta, off, swing


def excess(cs: PointChainSet, joints, pose, rotations, carried=None) -> np.ndarray:
    """(S,) the angle by which each segment lies outside its hinge (off the plane, or beyond
    the range) or its spherical limit (along the ellipse's radius; for a limit of 0 about
    one axis, off that arc), rad; -inf for a segment without either."""
    theta, off, swing = limit_coordinates(cs, joints, pose, rotations, carried)
    out = np.full(cs.segment_count, -np.inf)
    hinge = np.isfinite(cs.hinge_limit[:, 0])
    lo, hi = cs.hinge_limit[:, 0], cs.hinge_limit[:, 1]
    off_plane = np.arcsin(np.minimum(np.abs(off), 1.0))
    out[hinge] = np.maximum(off_plane, np.maximum(theta - hi, lo - theta))[hinge]
    pitch, yaw = cs.spherical_limit[:, 0], cs.spherical_limit[:, 1]
    spherical = np.isfinite(pitch)
    angle = np.linalg.norm(swing, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        heading = np.where(angle[:, None] > 0, swing / angle[:, None], [[1.0, 0.0]])  # on the target: inside
        bound = 1.0 / np.sqrt(heading[:, 0] ** 2 / pitch ** 2 + heading[:, 1] ** 2 / yaw ** 2)
    ellipse = spherical & (pitch > 0) & (yaw > 0)
    out[ellipse] = (angle - bound)[ellipse]
    for zero, across, along, limit in ((pitch == 0, 0, 1, yaw), (yaw == 0, 1, 0, pitch)):
        arc = spherical & zero & ~((pitch == 0) & (yaw == 0))
        sine = np.abs(np.sin(angle) * np.nan_to_num(heading[:, across]))
        out[arc] = np.maximum(np.arcsin(np.minimum(sine, 1.0)), np.abs(swing[:, along]) - limit)[arc]
    return out


def _drive(backend: str, **limits):
    """The spun chains with ``limits``; returns (times (T,) s, raw and read-back excess
    (T, S) rad, the chain set, and per frame the limit coordinates of the read-backs)."""
    counts = list(COUNTS)
    cs = PointChainSet(counts, np.repeat(FREQUENCY, counts), np.repeat(DAMPING, counts), gravity=GRAVITY,
                       limit_axis=AXIS, **limits)
    pose0 = np.concatenate([np.array([[0.3 * c, 0.0, 0.0]]) + np.outer(np.arange(n + 1), [0.1, -0.05, 0.02 * c])
                            for c, n in enumerate(counts)])
    rng = np.random.default_rng(11)
    times, raw, read, coordinates = [], [], [], []
    carried = np.zeros((2, cs.segment_count, 3))  # the parent bends' half-turn axes: raw, read back
    with Solver(cs, backend=backend, max_substeps=1) as solver:
        for k in range(int(round(SECONDS / solver.substep)) + 1):
            angle = 2.0 * math.pi * SPIN_HZ * k * solver.substep
            c, s = math.cos(angle), math.sin(angle)
            hitch = rng.normal(0.0, 0.04, 3) if k % 17 == 0 else np.zeros(3)
            pose = pose0 @ np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]).T + hitch
            twist = 0.5 * WOBBLE * math.sin(WOBBLE_RATE * angle)
            spin = np.array([[0.0, math.sin(angle / 2), 0.0, math.cos(angle / 2)]])
            rotation = _quat_multiply(spin, np.array([[math.sin(twist), 0.0, 0.0, math.cos(twist)]]))
            rotations = np.repeat(rotation, len(pose), axis=0)
            solver.set_pose(pose, rotations)
            if solver.advance(0.0 if k == 0 else solver.substep):
                times.append(k * solver.substep)
                raw.append(excess(cs, solver.positions(raw=True), pose, rotations, carried[0]))
                joints = solver.positions()
                read.append(excess(cs, joints, pose, rotations, carried[1]))
                coordinates.append(limit_coordinates(cs, joints, pose, rotations, carried[1].copy()))
    return np.asarray(times), np.asarray(raw), np.asarray(read), cs, coordinates


def _result(name, title, kind, limits_text, times, raw, read, cs, traces, pressed):
    figure = float(max(raw.max(), read.max()))
    details = {f"segment-frames pressed against their {kind}'s bound (read back within {PRESSED:g} rad of it; > 0)":
               pressed,
               f"raw states after a substep: largest angle outside the {kind}, rad": float(raw.max()),
               f"frame-time read-backs: largest angle outside the {kind}, rad": float(read.max())}
    traces.update({"time": times, "excess": np.maximum(raw, read).max(axis=1), "counts": list(cs.segment_counts)})
    passed = figure < LIMIT_TOLERANCE and pressed > 0
    return CheckResult(name, title, figure, LIMIT_TOLERANCE, passed,
                       f"largest angle of a segment outside its {kind} ({limits_text}), joints spun at "
                       f"{SPIN_HZ:g} turns/s with a wobbling twist and hitches, raw after every substep and read "
                       f"back (rad; negative: inside)", unit="rad", details=details, traces=traces, bound="<")


def hinge_limit(backend: str) -> CheckResult:
    """The largest angle by which any segment lies off its hinge plane or beyond its range
    (rad; negative: inside) over every raw state and read-back, held below
    ``LIMIT_TOLERANCE``, with segment-frames pressed against a bound (> 0)."""
    times, raw, read, cs, coordinates = _drive(backend, hinge_limit=np.repeat(HINGES, COUNTS, axis=0))
    tips = np.cumsum(COUNTS) - 1
    theta = np.array([c[0] for c in coordinates])
    lo, hi = cs.hinge_limit[:, 0], cs.hinge_limit[:, 1]
    ranged = hi - lo < 2 * math.pi - 1e-6  # the (-π, π) chain has no bound to press
    pressed = int(np.count_nonzero(((theta > hi - PRESSED) | (theta < lo + PRESSED))[:, ranged]))
    traces = {"theta": theta[:, tips], "bounds": np.asarray(HINGES),
              "off": np.array([np.abs(c[1]).max() for c in coordinates])}
    result = _result("hinge_limit", "hinge limit", "hinge", " / ".join(f"[{a:.2g}, {b:.2g}]" for a, b in HINGES),
                     times, raw, read, cs, traces, pressed)
    result.details["largest angle off the hinge plane, read back, rad"] = float(np.arcsin(traces["off"].max()))
    return result


def spherical_limit(backend: str) -> CheckResult:
    """The largest angle by which any segment lies outside its elliptical limit (rad), as
    :func:`hinge_limit`; traces: each chain tip's swing vector in units of its limits."""
    times, raw, read, cs, coordinates = _drive(backend, spherical_limit=np.repeat(SPHERICAL, COUNTS, axis=0))
    tips = np.cumsum(COUNTS) - 1
    traces = {"swing": np.array([c[2][tips] for c in coordinates]), "limits": np.asarray(SPHERICAL)}
    return _result("spherical_limit", "spherical limit", "ellipse",
                   " / ".join(f"({p:.2g}, {y:.2g})" for p, y in SPHERICAL), times, raw, read, cs, traces,
                   int(np.count_nonzero(read > -PRESSED)))

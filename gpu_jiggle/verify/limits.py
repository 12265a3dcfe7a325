"""Cone limits and inside colliders of point chains, driven hard (docs/SPEC.md section 9,
"Cone limits" and "Inside colliders"; section 4.2 for the colliders).

:func:`cone_limit`: chains with limits 0, 0.2 and 0.5 rad and one without, spun at 2 turns/s
about the vertical with random hitches under gravity. The angle of each segment off its
target direction is measured here in float64 from positions: the target direction of segment
i is its animated offset (pose joint i+1 - joint i) turned by the smallest rotation taking the
parent's animated direction onto the parent's simulated one (segment 0: not turned).

:func:`inside_colliders`: chains hanging from pivots inside one inside sphere and, in a second
run, one inside capsule, their poses reaching outside it, with random hitches, gravity and
gusty wind. The distance of each particle beyond the allowed region (the shape's radius less
the particle radius) is measured from positions.

Both run frames of one substep (``max_substeps=1``) and read the raw state after every
substep and the frame-time output.
"""
from __future__ import annotations

import math

import numpy as np

from ..sim.chains import PointChainSet
from ..sim.solver import Solver
from .result import CheckResult

GRAVITY = (0.0, -9.81, 0.0)
#: Outside the cone or the allowed region by no more than this (rad; units): float32 rounding.
LIMIT_TOLERANCE = 1e-5
#: Cone limits: segments per chain, the limit of each chain (rad; inf: none), spin, duration.
CONE_COUNTS = (4, 6, 3, 5)
CONE_LIMITS = (0.2, 0.5, 0.0, math.inf)
CONE_FREQUENCY, CONE_DAMPING = (2.0, 3.5, 4.0, 2.5), (0.1, 0.3, 0.2, 0.15)
SPIN_HZ, CONE_SECONDS = 2.0, 2.0
#: A segment within this of its cone is pressed against it, rad.
PRESSED = 1e-3
#: Inside colliders: segments per chain, particle radius (units), substeps per shape.
INSIDE_COUNTS = (4, 4, 4, 3)
RHO, INSIDE_SUBSTEPS = 0.01, 1800
#: A particle within this of the wall touches it, units.
TOUCHING = 1e-4
#: ("sphere", centre, radius) and ("capsule", end a, end b, radius), units.
SHAPES = (("sphere", (0.0, -0.3, 0.0), 0.45), ("capsule", (-0.3, -0.3, 0.0), (0.3, -0.3, 0.0), 0.25))
WIND = {"acceleration": [2.0, 0.0, 1.0], "gust_amplitude": 6.0, "gust_wave_vector": [3.0, 0.0, 1.0],
        "gust_frequency": 1.3}


#: SPEC 4, step 2: within this sine of antiparallel R(u → w)'s half turn leans on the axis
#: carried over from an earlier evaluation.
TURN_AXIS_BLEND = 0.014142
#: SPEC 4, step 2: below this u·w (where |u × w| = TURN_AXIS_BLEND) R(u → w) is built on the
#: half turn.
HALF_TURN_COSINE = -0.9999


def turn_axis(u, w, carried):
    """SPEC 4, step 2, float64 rows (n, 3), u and w unit: the axis of the half turn R(u → w)
    is built on past a right angle, u × w plus the carried axis (its sign along u × w) times
    TURN_AXIS_BLEND - |u × w| where that is positive, made perpendicular to u and unit (an
    axis perpendicular to u where it vanishes); and the axis to carry on: ``carried`` (its sign
    along u × w) where |u × w| <= TURN_AXIS_BLEND, turned towards u × w (unit) by
    (|u × w|/TURN_AXIS_BLEND - 1) of the way and normalised up to twice that, u × w beyond and,
    past a right angle, where none was carried (0); ``carried`` also where u·w >= 0.
    Returns (axis, carried)."""
    u, w, carried = (np.asarray(x, np.float64) for x in (u, w, carried))
    v = np.cross(u, w)
    lv = np.linalg.norm(v, axis=1, keepdims=True)
    sign = np.where(np.sum(carried * v, axis=1, keepdims=True) < 0, -1.0, 1.0)
    n = v + sign * np.maximum(TURN_AXIS_BLEND - lv, 0.0) * carried
    n -= np.sum(n * u, axis=1, keepdims=True) * u
    ln = np.linalg.norm(n, axis=1, keepdims=True)
    other = np.where(np.abs(u[:, :1]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]])
    perpendicular = np.cross(u, other)
    perpendicular /= np.linalg.norm(perpendicular, axis=1, keepdims=True)
    n = np.where(ln < 1e-6, perpendicular, n / np.where(ln < 1e-6, 1.0, ln))
    renew = np.clip(lv / TURN_AXIS_BLEND - 1.0, 0.0, 1.0)
    renew = np.where((np.sum(u * w, axis=1, keepdims=True) < 0) & ~carried.any(axis=1, keepdims=True) & (lv >= 1e-6),
                     1.0, renew)
    k = renew * v / np.where(lv > 0, lv, 1.0) + (1.0 - renew) * sign * carried
    lk = np.linalg.norm(k, axis=1, keepdims=True)
    used = np.sum(u * w, axis=1, keepdims=True) < 0
    return n, np.where(used, k / np.where(lk > 0, lk, 1.0), carried)


def turned(u, w, a, axis) -> np.ndarray:
    """Each a (n, 3) turned by R(u → w) (SPEC 4, step 2), unit u and w (n, 3), float64: for
    u·w >= 0 the smallest rotation taking u onto w, ``a·c + v × a + v·(v·a)/(1 + c)`` with
    v = u × w, c = u·w, down to u·w = HALF_TURN_COSINE; below, the half turn about ``axis``
    (:func:`turn_axis`) then the smallest rotation taking -u onto w."""
    u, w, a, axis = (np.asarray(x, np.float64) for x in (u, w, a, axis))
    c = np.sum(u * w, axis=1, keepdims=True)
    wide = c < HALF_TURN_COSINE
    a = np.where(wide, 2.0 * np.sum(axis * a, axis=1, keepdims=True) * axis - a, a)
    u, c = np.where(wide, -u, u), np.where(wide, -c, c)
    v = np.cross(u, w)
    return a * c + np.cross(v, a) + v * (np.sum(v * a, axis=1, keepdims=True) / (1.0 + c))


def _unit(x) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def off_target(cs: PointChainSet, joints, pose, carried=None) -> np.ndarray:
    """The angle of every segment off its target direction, rad, (segments,), from joint
    positions ``joints`` and the pose ``pose`` (joints, 3), float64. ``carried``: the parent
    bends' half-turn axes at the last call (:func:`turn_axis`; (segments, 3), updated), or
    None for none."""
    joints, pose = np.asarray(joints, np.float64), np.asarray(pose, np.float64)
    bases = np.concatenate([np.arange(f, f + n) for f, n in zip(cs.first_joint, cs.segment_counts)])
    animated, simulated = pose[bases + 1] - pose[bases], joints[bases + 1] - joints[bases]
    child = np.concatenate([np.arange(n) > 0 for n in cs.segment_counts])
    parent = bases[child] - 1
    target = animated.copy()
    parent_animated = _unit(pose[parent + 1] - pose[parent])
    parent_simulated = _unit(joints[parent + 1] - joints[parent])
    carried = np.zeros((cs.segment_count, 3)) if carried is None else carried
    parent_segment = np.flatnonzero(child) - 1
    axis, carried[parent_segment] = turn_axis(parent_animated, parent_simulated, carried[parent_segment])
    target[child] = turned(parent_animated, parent_simulated, animated[child], axis)
    sine = np.linalg.norm(np.cross(target, simulated), axis=1)
    return np.arctan2(sine, np.sum(target * simulated, axis=1))


def _spun_pose(pose, k: int, substep: float, rng) -> np.ndarray:
    """``pose`` (joints, 3) spun about the vertical through the origin at ``SPIN_HZ`` at frame
    k, with a random hitch (σ 0.03 units) every 17th frame."""
    angle = 2.0 * math.pi * SPIN_HZ * k * substep
    c, s = math.cos(angle), math.sin(angle)
    hitch = rng.normal(0.0, 0.03, 3) if k % 17 == 0 else np.zeros(3)
    return pose @ np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]).T + hitch


def cone_limit(backend: str) -> CheckResult:
    """The largest angle by which any limited segment lies outside its cone (rad; negative:
    inside), over the raw state after every substep and every frame-time read-back, held below
    ``LIMIT_TOLERANCE``; the segment-frames pressed against their cone (> 0, so the limits
    acted) and the limit-0 chain's largest angle also held, the unlimited chain's reported."""
    counts = list(CONE_COUNTS)
    limits = np.repeat(CONE_LIMITS, counts)
    cs = PointChainSet(counts, np.repeat(CONE_FREQUENCY, counts), np.repeat(CONE_DAMPING, counts), gravity=GRAVITY,
                       angle_limit=limits)
    pose0 = np.concatenate([np.array([[0.3 * c, 0.0, 0.0]]) + np.outer(np.arange(n + 1), [0.05, -0.1, 0.02 * c])
                            for c, n in enumerate(counts)])
    rng = np.random.default_rng(11)
    times, raw, read = [], [], []
    carried = np.zeros((2, cs.segment_count, 3))  # the parent bends' half-turn axes: raw, read back
    with Solver(cs, backend=backend, max_substeps=1) as solver:
        for k in range(int(round(CONE_SECONDS / solver.substep)) + 1):
            pose = _spun_pose(pose0, k, solver.substep, rng)
            solver.set_pose(pose)
            if solver.advance(0.0 if k == 0 else solver.substep):
                times.append(k * solver.substep)
                raw.append(off_target(cs, solver.positions(raw=True), pose, carried[0]))
                read.append(off_target(cs, solver.positions(), pose, carried[1]))
    raw, read = np.asarray(raw), np.asarray(read)
    limited, chain = np.isfinite(limits), np.repeat(np.arange(len(counts)), counts)
    raw_excess, read_excess = raw[:, limited] - limits[limited], read[:, limited] - limits[limited]
    figure = float(max(raw_excess.max(), read_excess.max()))
    pressed = int(np.count_nonzero(raw_excess > -PRESSED))
    zero = float(np.maximum(raw, read)[:, limits == 0.0].max())
    free = float(np.maximum(raw, read)[:, ~limited].max())
    details = {f"segment-frames pressed against their cone (raw state within {PRESSED:g} rad of it; > 0)": pressed,
               "raw states after a substep: largest angle outside the cone, rad": float(raw_excess.max()),
               "frame-time read-backs: largest angle outside the cone, rad": float(read_excess.max()),
               f"limit-0 chain: largest angle off its target, rad (limit {LIMIT_TOLERANCE:g})": zero,
               "unlimited chain: largest angle off its target, rad (not held)": free}
    # One segment drawn per chain: the one pressed against its cone longest (unlimited: the tip).
    shown = []
    for c, beta in enumerate(CONE_LIMITS):
        segs = np.flatnonzero(chain == c)
        near = np.count_nonzero(raw[:, segs] - limits[segs] > -PRESSED, axis=0)
        shown.append(int(segs[np.argmax(near)]) if np.isfinite(beta) else int(segs[-1]))
    traces = {"time": np.asarray(times), "raw": raw[:, shown], "read": read[:, shown], "limits": limits[shown],
              "segment": [s - int(cs.first_segment[chain[s]]) for s in shown], "counts": counts,
              "excess": np.maximum(raw_excess, read_excess).max(axis=1)}
    passed = figure < LIMIT_TOLERANCE and zero < LIMIT_TOLERANCE and pressed > 0
    return CheckResult("cone_limit", "cone limit", figure, LIMIT_TOLERANCE, passed,
                       f"largest angle of a limited segment outside its cone (limits "
                       f"{'/'.join(f'{b:g}' for b in CONE_LIMITS[:3])} rad), spun at {SPIN_HZ:g} turns/s with "
                       f"hitches, raw after every substep and read back (rad; negative: inside)",
                       unit="rad", details=details, traces=traces, bound="<")


def beyond(points, shape) -> np.ndarray:
    """How far each point (n, 3) lies beyond the allowed region of ``shape`` (``SHAPES``):
    its distance from the centre, or from the capsule's axis segment, less (radius - ρ);
    units, (n,), float64 (negative: inside)."""
    points = np.asarray(points, np.float64)
    if shape[0] == "sphere":
        return np.linalg.norm(points - shape[1], axis=1) - (shape[2] - RHO)
    a, b = np.asarray(shape[1]), np.asarray(shape[2])
    t = np.clip((points - a) @ (b - a) / np.dot(b - a, b - a), 0.0, 1.0)
    return np.linalg.norm(points - (a + t[:, None] * (b - a)), axis=1) - (shape[3] - RHO)


def inside_run(backend: str, shape):
    """Four chains hanging from pivots inside ``shape``, their poses reaching outside it, for
    ``INSIDE_SUBSTEPS`` frames of one substep: random hitches (a smoothed random walk of the
    pose), gravity and gusty wind. Returns (times (T,) s, raw and read-back distances beyond
    the allowed region, each (T, particles) units, the chains' tip particles (C,) as indices
    into the particle axis); frames that ran no substep are left out."""
    rng = np.random.default_rng(7)
    counts = list(INSIDE_COUNTS)
    cs = PointChainSet(counts, np.repeat(rng.uniform(1.0, 4.0, 4), counts),
                       np.repeat(rng.uniform(0.05, 0.5, 4), counts), gravity=GRAVITY, particle_radius=RHO)
    pivots = np.array([[-0.1, -0.2, 0.0], [0.1, -0.25, 0.05], [0.0, -0.15, -0.05], [0.05, -0.3, 0.0]])
    joints = np.concatenate([p + np.outer(np.arange(n + 1), [0.0, -0.14, 0.0]) for p, n in zip(pivots, counts)])
    colliders = ({"spheres": [[*shape[1], shape[2]]], "sphere_inside": [True]} if shape[0] == "sphere" else
                 {"capsules": [[*shape[1], *shape[2], shape[3]]], "capsule_inside": [True]})
    particles = np.delete(np.arange(len(joints)), cs.first_joint)
    times, raw, read = [], [], []
    carried = np.zeros((2, cs.segment_count, 3))  # the parent bends' half-turn axes: raw, read back
    with Solver(cs, backend=backend, max_substeps=1) as solver:
        solver.set_wind(**WIND)
        offset = np.zeros(3)
        for k in range(INSIDE_SUBSTEPS + 1):
            offset = 0.9 * offset + rng.normal(0.0, 0.01, 3)
            solver.set_pose(joints + offset)
            solver.set_colliders(**colliders)
            if solver.advance(0.0 if k == 0 else solver.substep):  # the first pose snaps onto the targets
                times.append(k * solver.substep)
                raw.append(beyond(solver.positions(raw=True)[particles], shape))
                read.append(beyond(solver.positions()[particles], shape))
    tips = np.cumsum(counts) - 1
    return np.asarray(times), np.asarray(raw), np.asarray(read), tips


def inside_colliders(backend: str) -> CheckResult:
    """The largest distance by which any particle lies beyond the allowed region of an inside
    sphere or capsule (units; negative: inside), over the raw state after every substep and
    every frame-time read-back, held below ``LIMIT_TOLERANCE``; the particle-frames touching
    the wall per shape (> 0, so it acted) also held."""
    figure, details, traces, touched = -math.inf, {}, {"shapes": {}}, []
    for shape in SHAPES:
        name = shape[0]
        times, raw, read, tips = inside_run(backend, shape)
        worst = float(max(raw.max(), read.max()))
        figure = max(figure, worst)
        touched.append(int(np.count_nonzero(raw > -TOUCHING)))
        details[f"{name}: largest distance beyond the allowed region, units"] = worst
        details[f"{name}: particle-frames touching the wall (raw state within {TOUCHING:g} of it; > 0)"] = touched[-1]
        allowed = shape[-1] - RHO
        traces["shapes"][name] = {"time": times, "tip raw": raw[:, tips] + allowed, "tip read": read[:, tips] + allowed,
                                  "allowed": allowed, "worst": np.maximum(raw, read).max(axis=1)}
    passed = figure < LIMIT_TOLERANCE and min(touched) > 0
    return CheckResult("inside_colliders", "inside colliders", figure, LIMIT_TOLERANCE, passed,
                       f"largest distance of a particle beyond an inside sphere's or capsule's radius less ρ = "
                       f"{RHO:g}, hitches, gravity and gusty wind, {INSIDE_SUBSTEPS} substeps each, raw after every "
                       f"substep and read back (units; negative: inside)",
                       unit="units", details=details, traces=traces, bound="<")

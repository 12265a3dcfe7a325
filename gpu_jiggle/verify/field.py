"""The field scenarios of model v2 (SPEC 2-4, properties 3, 7 and 8 of section 8), each run
with the v2 defaults and, for comparison, with v1's options (``target_path="linear"``,
``damping_frame="world"``; those figures are reported, not held):

- :func:`ear_frame_rates`: three 5 cm ear segments (3 Hz, ζ 0.2) after a 10 cm move in
  0.3 s, at 30, 60, 144 and 165 fps against a 1200 fps run (SPEC 8.3);
- :func:`tracking`: a hanging point chain carried sideways at 2 units/s, and an angle chain
  on a root turning 1 turn/s, settle onto their animated pose (SPEC 8.7);
- :func:`contact`: a 1 cm bar swept through a chain of 15 cm segments, and hair on a head
  spinning at 2 turns/s, never inside a collider (SPEC 8.8);
- :func:`precision`: an angle chain 1e4 and 1e5 units from the origin, and point chains
  2, 20 and 100 km apart in one set, move like a lone chain at the origin (SPEC 3.4, 4.4).

Units: lengths in units (metres), times in s, angles in rad unless a name says degrees.
"""
from __future__ import annotations

import math

import numpy as np

from ..sim.chains import AngleChainSet, PointChainSet
from .contact_geometry import capsule_segment_depth, sphere_segment_depth
from .result import CheckResult
from .measure import V1, V2, new_solver
from .scenarios import SUBSTEP, axis_rotation


# -- frame rates: the ears -------------------------------------------------------------------
EAR_FRAME_RATES = (30, 60, 144, 165)
EAR_DENSE_FPS = 1200
#: SPEC 8.3: the peak tip angle within 3 % of the dense run's at 30 fps, 1 % above.
EAR_LIMITS = {30: 0.03, 60: 0.01, 144: 0.01, 165: 0.01}
EAR_MOVE, EAR_MOVE_SECONDS, EAR_SECONDS = 0.1, 0.3, 1.5


def _ear_run(backend, fps, options):
    """The ear's tip angle (rad, unwrapped) at every frame time of ``fps``: three 0.05-unit
    segments standing up, 3 Hz, ζ 0.2, no gravity; the root moves 0.1 units sideways in 0.3 s
    (smoothstep ease, so the motion itself is C1)."""
    cs = AngleChainSet([3], 0.05, 3.0, 0.2)
    times, tips = [], []
    with new_solver(cs, backend, options) as solver:
        for k in range(int(round(EAR_SECONDS * fps)) + 1):
            t = k / fps
            u = min(t / EAR_MOVE_SECONDS, 1.0)
            solver.set_pose([[EAR_MOVE * u * u * (3 - 2 * u), 0.0]], [math.pi / 2], np.zeros(3))
            solver.advance(0.0 if k == 0 else 1.0 / fps)
            times.append(t)
            tips.append(float(solver.angles()[2]))
    return np.array(times), np.unwrap(np.array(tips))


def ear_frame_rates(backend: str) -> CheckResult:
    """SPEC 8.3 on the ears: per frame rate, |peak - dense peak| / dense peak of the tip's
    deviation from upright, the dense (1200 fps) run read at that rate's own frame times.
    The figure is the worst ratio of that error to its limit (``EAR_LIMITS``)."""
    details, traces, worst = {}, {}, 0.0
    for label, options in (("v2", V2), ("v1", V1)):
        dense_t, dense = _ear_run(backend, EAR_DENSE_FPS, options)
        traces[f"{label} dense"] = (dense_t, dense)
        for fps in EAR_FRAME_RATES:
            t, tip = _ear_run(backend, fps, options)
            reference = np.interp(t, dense_t, dense) - math.pi / 2
            peak, dense_peak = np.abs(tip - math.pi / 2).max(), np.abs(reference).max()
            error = float(abs(peak - dense_peak) / dense_peak)
            traces[f"{label} {fps}"] = (t, tip)
            if label == "v2":
                details[f"{fps} fps peak error (limit {EAR_LIMITS[fps]:g})"] = error
                worst = max(worst, error / EAR_LIMITS[fps])
            else:
                details[f"v1 {fps} fps peak error (not held)"] = error
    # The path alone: v2's spring on v1's linear path, at 30 fps (its dense run is v2's: at
    # 1200 fps the two paths coincide).
    t, tip = _ear_run(backend, 30, dict(V2, target_path="linear"))
    traces["linear path 30"] = (t, tip)
    dense_t, dense = traces["v2 dense"]
    reference = np.interp(t, dense_t, dense) - math.pi / 2
    details["v2 on a linear path, 30 fps peak error (not held)"] = float(
        abs(np.abs(tip - math.pi / 2).max() - np.abs(reference).max()) / np.abs(reference).max())
    return CheckResult("ear_frame_rates", "v2 frame rates (ears)", worst, 1.0, worst <= 1.0,
                       "worst peak tip-angle error against a 1200 fps run / its limit (3 % at 30 fps, "
                       "1 % at 60-165 fps)", "of limit", details=details, traces=traces, bound="<=")


# -- tracking ---------------------------------------------------------------------------------
TRACK_SPEED, TRACK_TURN_HZ, TRACK_SECONDS, TRACK_RAMP = 2.0, 1.0, 4.0, 0.5
TRACK_LIMIT, TRACK_TURN_LIMIT_DEG = 0.005, 1.0


def _ramped(t, rate):
    """Distance (or angle) travelled at time t by a body that eases up to ``rate`` over
    ``TRACK_RAMP`` s (smoothstep velocity), then keeps it."""
    if t >= TRACK_RAMP:
        return rate * (t - TRACK_RAMP / 2)
    u = t / TRACK_RAMP
    return rate * TRACK_RAMP * (u ** 3 - u ** 4 / 2)


def _carried_chain(backend, options, fps=60):
    """A 5 × 0.1 point chain hanging straight down (3 Hz, ζ 0.3, no gravity) carried along +x;
    worst joint distance from its animated place over the last second / chain length."""
    cs = PointChainSet([5], 3.0, 0.3)
    local = np.array([[0.0, -0.1 * k, 0.0] for k in range(6)])
    worst = 0.0
    with new_solver(cs, backend, options) as solver:
        frames = int(TRACK_SECONDS * fps)
        for k in range(frames + 1):
            pose = local + [_ramped(k / fps, TRACK_SPEED), 0.0, 0.0]
            solver.set_pose(joint_positions=pose)
            solver.advance(0.0 if k == 0 else 1.0 / fps)
            if k >= frames - fps:
                worst = max(worst, float(np.linalg.norm(solver.positions() - pose, axis=1).max()))
    return worst / 0.5


def _turning_chain(backend, options, fps=60):
    """A 5 × 0.1 angle chain (3 Hz, ζ 0.3, no gravity) on a root turning at 1 turn/s; the
    tip segment's worst lag behind its animated angle over the last second, degrees."""
    cs = AngleChainSet([5], 0.1, 3.0, 0.3)
    worst = 0.0
    with new_solver(cs, backend, options) as solver:
        frames = int(TRACK_SECONDS * fps)
        for k in range(frames + 1):
            heading = _ramped(k / fps, 2 * math.pi * TRACK_TURN_HZ)
            solver.set_pose([[0.0, 0.0]], [heading], np.zeros(5))
            solver.advance(0.0 if k == 0 else 1.0 / fps)
            if k >= frames - fps:
                lag = (solver.angles() - heading + math.pi) % (2 * math.pi) - math.pi
                worst = max(worst, float(np.degrees(np.abs(lag)).max()))
    return worst


def tracking(backend: str, options=None) -> CheckResult:
    """SPEC 8.7: after easing up to speed, a chain carried at 2 units/s stays within 0.5 % of
    its length of its animated pose, and a chain turning 1 turn/s within 1° of its heading
    (with the solver ``options``, default v2; the v1 figures beside them)."""
    options = options or V2
    carried, turned = _carried_chain(backend, options), _turning_chain(backend, options)
    details = {"carried at 2 units/s: worst offset / chain length (limit 0.005)": carried,
               "turning 1 turn/s: tip lag, degrees (limit 1)": turned,
               "v1: carried at 2 units/s / chain length (not held)": _carried_chain(backend, V1),
               "v1: turning, tip lag, degrees (not held)": _turning_chain(backend, V1)}
    return CheckResult("tracking", "v2 tracking", carried, TRACK_LIMIT,
                       carried <= TRACK_LIMIT and turned <= TRACK_TURN_LIMIT_DEG,
                       "a hanging chain carried at 2 units/s: worst joint offset from its pose / chain length",
                       details=details, bound="<=")


# -- contact ----------------------------------------------------------------------------------
CONTACT_LIMIT = 1e-4  # SPEC 8.8, of the chain's length


def _bar_sweep(backend, options=None, fps=120):
    """A 0.6-unit chain of 15 cm segments hanging under gravity; a bar of radius 0.005 along z
    sweeps through it in x at 0.5 units/s (4 mm per substep, less than its radius: a collider
    that moves further than its radius in one substep can tunnel), 0.4 units below the pivot. Returns the worst depth
    of a joint or segment inside the bar (raw state, one substep per frame, and frame time),
    and how far the tip was pushed aside."""
    cs = PointChainSet([4], 2.0, 0.3, gravity=(0.0, -9.81, 0.0))
    pose = np.array([[0.0, -0.15 * k, 0.0] for k in range(5)])
    depth, pushed = -np.inf, 0.0
    with new_solver(cs, backend, options) as solver:
        solver.set_pose(joint_positions=pose)
        for k in range(int(2.4 * fps) + 1):
            x = -0.6 + 0.5 * k / fps
            bar = np.array([x, -0.4, -1.0, x, -0.4, 1.0, 0.005])
            solver.set_colliders(capsules=[bar])
            solver.advance(0.0 if k == 0 else 1.0 / fps)
            for raw in (True, False):
                joints = solver.positions(raw=raw)
                depth = max(depth, capsule_segment_depth(bar, joints[:-1], joints[1:]).max())
            pushed = max(pushed, float(joints[-1, 0]))
    return depth / 0.6, pushed


def _spinning_head(backend, options=None, fps=60):
    """Twelve 4 × 0.05 strands rooted round the crown of a 0.1-radius head, lying down over it
    (each animated from the tangent down its meridian a little into the head, so the head
    holds it on the surface), while the head spins at 2 turns/s about a tilted axis; frame-time read-back
    at 60 fps. Worst depth of a joint or segment inside the head / chain length (against the
    head's radius: the roots sit on its surface, so the segments' own radius ρ overlaps it
    there)."""
    lat = math.radians(55.0)
    local = []
    for i in range(12):
        lon = 2 * math.pi * i / 12
        root = 0.1 * np.array([math.cos(lat) * math.cos(lon), math.sin(lat), math.cos(lat) * math.sin(lon)])
        down = np.array([math.sin(lat) * math.cos(lon), -math.cos(lat), math.sin(lat) * math.sin(lon)])
        down = down - 0.4 * root / 0.1  # animated a little into the head: the strands press on it
        local.append([root + 0.05 * k * down / np.linalg.norm(down) for k in range(5)])
    local = np.concatenate(local)
    cs = PointChainSet([4] * 12, 4.0, 0.4, particle_radius=0.005, gravity=(0.0, -9.81, 0.0))
    axis = np.array([0.3, 1.0, 0.2]) / np.linalg.norm([0.3, 1.0, 0.2])
    depth, nearest = -np.inf, np.inf
    with new_solver(cs, backend, options) as solver:
        for k in range(int(2.0 * fps) + 1):
            spin = _ramped(k / fps, 2 * 2 * math.pi)
            solver.set_pose(joint_positions=local @ axis_rotation(axis, spin).T)
            solver.set_colliders(spheres=[[0.0, 0.0, 0.0, 0.1]])
            solver.advance(0.0 if k == 0 else 1.0 / fps)
            joints = solver.positions().reshape(12, 5, 3)
            depth = max(depth, sphere_segment_depth(np.zeros(3), 0.1, joints[:, :-1], joints[:, 1:]).max())
            beyond_root = np.linalg.norm(joints[:, 2:], axis=-1) - 0.1
            nearest = min(nearest, float(beyond_root.min()))
    return depth / 0.2, nearest


def contact(backend: str, options=None) -> CheckResult:
    """SPEC 8.8: the swept bar and the spinning head, worst depth inside a collider / chain
    length (negative: never touched); ``options``: solver options (``V1`` or ``V2``, default v2)."""
    bar_depth, pushed = _bar_sweep(backend, options)
    head_depth, nearest = _spinning_head(backend, options)
    worst = max(bar_depth, head_depth)
    details = {"thin bar: worst depth / chain length": bar_depth,
               "thin bar: tip pushed aside to x, units (> 0.1)": pushed,
               "spinning head: worst depth / chain length": head_depth,
               "spinning head: closest joint past the first segment to the head's surface, units (not held)": nearest}
    return CheckResult("contact", "v2 contact", worst, CONTACT_LIMIT,
                       worst <= CONTACT_LIMIT and pushed > 0.1,
                       "worst depth of a joint or segment inside a collider / chain length (bar, head)",
                       details=details, bound="<=")


# -- precision --------------------------------------------------------------------------------
ANGLE_FAR = (1e4, 1e5)
POINT_APART = (2e3, 2e4, 1e5)
ANGLE_PRECISION_LIMIT_DEG, POINT_PRECISION_LIMIT = 0.01, 1e-5


def _angle_far(backend, offset, fps=60, seconds=3.0, options=None):
    cs = AngleChainSet([5], 0.1, 3.0, 0.5, gravity=(0.0, -9.81))
    out = []
    with new_solver(cs, backend, options) as solver:
        for k in range(int(seconds * fps) + 1):
            t = k / fps
            solver.set_pose([[offset + 0.3 * math.sin(2 * t), offset + 0.1 * math.sin(3 * t)]],
                            [0.4 * math.sin(1.5 * t)], np.full(5, 0.1))
            solver.advance(0.0 if k == 0 else 1.0 / fps)
            out.append(solver.angles())
    return np.array(out, np.float64)


def _point_set(backend, places, fps=60, seconds=3.0, options=None):
    """Chains of 5 × 0.1 (3 Hz, ζ 0.7, gravity), one at each of ``places`` (P, 3), resting over
    a sphere each and carried by the same smooth motion; positions relative to their place."""
    local = np.array([[0.02 * k, 0.05 - 0.1 * k, 0.0] for k in range(6)])
    cs = PointChainSet([5] * len(places), 3.0, 0.7, particle_radius=0.01, gravity=(0.0, -9.81, 0.0))
    out = []
    with new_solver(cs, backend, options) as solver:
        for k in range(int(seconds * fps) + 1):
            t = k / fps
            body = np.array([0.3 * math.sin(2 * t), 0.05 * math.sin(3 * t), 0.2 * t])
            solver.set_pose(joint_positions=np.concatenate([local + p + body for p in places]))
            solver.set_colliders(spheres=[[*(p + body + [0.12, -0.25, 0.0]), 0.1] for p in places])
            solver.advance(0.0 if k == 0 else 1.0 / fps)
            out.append(solver.positions().reshape(len(places), 6, 3) - np.asarray(places)[:, None])
    return np.array(out)


def precision(backend: str) -> CheckResult:
    """SPEC 3.4 and 4.4: an angle chain far from the origin against the same chain at it
    (worst angle difference, degrees), and two point chains a distance apart in one set
    against a lone chain at the origin (worst joint distance / chain length)."""
    details = {}
    near = _angle_far(backend, 0.0)
    angle_worst = 0.0
    for far in ANGLE_FAR:
        d = float(np.degrees(np.abs(_angle_far(backend, far) - near)).max())
        details[f"angle chain {far:g} units away: degrees (limit {ANGLE_PRECISION_LIMIT_DEG:g})"] = d
        angle_worst = max(angle_worst, d)
    lone = _point_set(backend, [np.zeros(3)])[:, 0]
    worst = 0.0
    for apart in POINT_APART:
        places = [np.zeros(3), np.array([apart, 0.0, 0.0])]
        both = _point_set(backend, places)
        d = float(np.linalg.norm(both - lone[:, None], axis=-1).max() / 0.5)
        details[f"point chains {apart / 1000:g} km apart: / chain length"] = d
        worst = max(worst, d)
    return CheckResult("precision", "v2 precision", worst, POINT_PRECISION_LIMIT,
                       worst <= POINT_PRECISION_LIMIT and angle_worst <= ANGLE_PRECISION_LIMIT_DEG,
                       "point chains up to 100 km apart in one set against a lone chain at the origin: worst "
                       "joint distance / chain length", details=details, bound="<=")


FIELD_CHECKS = (ear_frame_rates, tracking, contact, precision)

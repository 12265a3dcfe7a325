"""Level-of-detail switches on a moving character (SPEC 2, "Levels of detail"):
:func:`lod_switches`. A body walks steadily at 1.5 units/s with a hanging chain (point and
angle chains); one solver switches it full → half → frozen → full, another never switches.
A switch must not be seen: the first frame after each switch moves the chain no more than the
largest frame-to-frame motion before it, and from 1 s after the return to full rate the chain
is within 2° of the one that never switched. Each switch is made once on a frame that runs the
half rate and once on one that does not.

Units: lengths in units (metres), times in s, angles in degrees where a name says so.
"""
from __future__ import annotations

import numpy as np

from ..sim.chains import AngleChainSet, PointChainSet
from .measure import new_solver
from .result import CheckResult

#: The body's speed (units/s) and the frame rates the row runs at.
WALK_SPEED = 1.5
LOD_FRAME_RATES = (30, 60)
#: When each level starts (s): half, frozen, then full again; and how long the run lasts.
LOD_SWITCH_SECONDS = (1.0, 1.8, 2.3)
LOD_RUN_SECONDS = 3.6
#: Limits: the first frame's motion over the largest before it (the small excess allows for
#: float32 rounding of a motion that should be equal), and the angle 1 s after the return.
MOTION_RATIO_LIMIT = 1.001
SETTLED_DEGREES_LIMIT = 2.0
SEGMENTS, SEGMENT_LENGTH, FREQUENCY, DAMPING_RATIO, GRAVITY = 4, 0.1, 2.0, 0.4, 9.81


def _chain_set(kind):
    if kind == "point":
        return PointChainSet([SEGMENTS], FREQUENCY, DAMPING_RATIO, gravity=(0.0, -GRAVITY, 0.0))
    return AngleChainSet([SEGMENTS], SEGMENT_LENGTH, FREQUENCY, DAMPING_RATIO, gravity=(0.0, -GRAVITY))


def _pose(solver, kind, t):
    """The walking body at time t: the chain hangs straight down from a pivot at x = V·t."""
    x = WALK_SPEED * t
    if kind == "point":
        joints = np.array([[x, -SEGMENT_LENGTH * k, 0.0] for k in range(SEGMENTS + 1)])
        solver.set_pose(joint_positions=joints)
    else:
        solver.set_pose([[x, 0.0]], [-np.pi / 2], np.zeros(SEGMENTS))


def _directions(positions):
    d = np.diff(positions, axis=0)
    return d / np.linalg.norm(d, axis=1, keepdims=True)


def switch_run(backend: str, kind: str, fps: float, offset_frames: int = 0) -> dict:
    """One run: the switching solver and the reference, stepped together. Returns ``ratios``
    (the first frame's motion after each switch over the largest before it), ``settled_deg``
    (the largest segment angle between the two chains from 1 s after the return to full),
    ``worst_deg`` (the largest from the first switch on) and the traces."""
    switch_frames = [int(round(s * fps)) + offset_frames for s in LOD_SWITCH_SECONDS]
    levels = ("half", "frozen", "full")
    cs = _chain_set(kind)
    with new_solver(cs, backend) as reference, new_solver(cs, backend) as switching:
        for s in (reference, switching):
            s.teleport(moving=True)  # the body walks from the first frame
        angles, positions = [], []
        for f in range(int(round(LOD_RUN_SECONDS * fps)) + 1):
            if f in switch_frames:
                switching.set_lod(levels[switch_frames.index(f)])
            for s in (reference, switching):
                _pose(s, kind, f / fps)
                s.advance(0.0 if f == 0 else 1.0 / fps)
            a, b = reference.positions(), switching.positions()
            cosines = np.clip((_directions(a) * _directions(b)).sum(axis=1), -1.0, 1.0)
            angles.append(float(np.degrees(np.arccos(cosines)).max()))
            positions.append(b.astype(np.float64))
    positions, angles = np.array(positions), np.array(angles)
    motion = np.linalg.norm(np.diff(positions, axis=0), axis=2).max(axis=1)  # motion[k]: frame k to k + 1
    ratios = [float(motion[k - 1] / motion[:k - 1].max()) for k in switch_frames]
    settled = angles[switch_frames[-1] + int(round(fps)):]
    return {"ratios": ratios, "settled_deg": float(settled.max()), "worst_deg": float(angles[switch_frames[0]:].max()),
            "times": np.arange(len(angles)) / fps, "angles": angles}


def lod_switches(backend: str) -> CheckResult:
    """Level-of-detail switches on a steadily walking body, for point and angle chains at
    :data:`LOD_FRAME_RATES`, each switch on a frame that runs the half rate and on one that
    does not. The figure is the worst of (first-frame motion ratio / its limit) and (angle 1 s
    after the return to full / 2°)."""
    details, traces, worst = {}, {}, 0.0
    for kind in ("point", "angle"):
        for fps in LOD_FRAME_RATES:
            for offset in (0, 1):
                run = switch_run(backend, kind, fps, offset)
                label = f"{kind} {fps} fps, switches on frames {'even' if offset == 0 else 'odd'}"
                details[f"{label}: first-frame motion / largest before (limit {MOTION_RATIO_LIMIT:g})"] = \
                    max(run["ratios"])
                details[f"{label}: degrees from the unswitched chain 1 s after full (limit "
                        f"{SETTLED_DEGREES_LIMIT:g})"] = run["settled_deg"]
                details[f"{label}: degrees from it after the first switch (not held)"] = run["worst_deg"]
                traces[label] = (run["times"], run["angles"])
                worst = max(worst, max(run["ratios"]) / MOTION_RATIO_LIMIT,
                            run["settled_deg"] / SETTLED_DEGREES_LIMIT)
    return CheckResult("lod", "lod switches (walking body)", worst, 1.0, worst <= 1.0,
                       "worst of first-frame motion after a switch / largest before it (limit "
                       f"{MOTION_RATIO_LIMIT:g}) and degrees from an unswitched chain 1 s after the return to "
                       f"full / {SETTLED_DEGREES_LIMIT:g}", details=details, traces=traces, bound="<=",
                       note=f"full → half → frozen → full at {', '.join(f'{s:g}' for s in LOD_SWITCH_SECONDS)} s, "
                            f"{WALK_SPEED:g} units/s")

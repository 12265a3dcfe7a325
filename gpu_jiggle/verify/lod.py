"""Level-of-detail switches on a moving character (SPEC 2, "Levels of detail"):
:func:`lod_switches`. A body walks steadily at 1.5 units/s with a hanging chain (point and
angle chains); one solver switches it full → half →
frozen → full, another never switches. A switch must not be seen: the first frame after each
switch moves the chain no more than the largest frame-to-frame motion before it, and from 1 s
after the return to full rate the chain is within 2° of the one that never switched. Each
switch is made once on a frame that runs the half rate and once on one that does not, at frame
times that are multiples of two substeps (30, 60 fps) and that are not (50, 75, 144 fps and
uneven frame times). Runs on a body that also sways are reported beside them.

Units: lengths in units (metres), times in s, angles in degrees where a name says so.
"""
from __future__ import annotations

import numpy as np

from ..sim.chains import AngleChainSet, PointChainSet
from .measure import new_solver
from .result import CheckResult

#: The body's speed (units/s) and the frame rates the row runs at ("uneven": frame times
#: drawn in [0.6, 1.4] × 1/60 s from a fixed seed).
WALK_SPEED = 1.5
LOD_FRAME_RATES = (30, 50, 60, 75, 144, "uneven")
UNEVEN_FPS, UNEVEN_SPREAD, UNEVEN_SEED = 60.0, 0.4, 30
#: The sway: the body sways along its walk by SWAY_AMPLITUDE units at SWAY_HZ (it swings the
#: chain about 30°). Runs with it are reported, not held (see :func:`lod_switches`), at
#: SWAY_FRAME_RATES, with the switches on even frames.
SWAY_AMPLITUDE, SWAY_HZ = 0.05, 1.0
SWAY_FRAME_RATES = (30, "uneven")
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


def _pose(solver, kind, t, sway=False):
    """The walking body at time t: the chain hangs straight down from a pivot at x = V·t, plus
    SWAY_AMPLITUDE·sin(2π·SWAY_HZ·t) with ``sway``."""
    x = WALK_SPEED * t + (SWAY_AMPLITUDE * np.sin(2.0 * np.pi * SWAY_HZ * t) if sway else 0.0)
    if kind == "point":
        joints = np.array([[x, -SEGMENT_LENGTH * k, 0.0] for k in range(SEGMENTS + 1)])
        solver.set_pose(joint_positions=joints)
    else:
        solver.set_pose([[x, 0.0]], [-np.pi / 2], np.zeros(SEGMENTS))


def frame_times(fps, seconds: float) -> np.ndarray:
    """The frame times (s) of a run of ``seconds``: 1/fps each, or for ``"uneven"`` drawn in
    [1 - UNEVEN_SPREAD, 1 + UNEVEN_SPREAD] / UNEVEN_FPS from UNEVEN_SEED."""
    if fps == "uneven":
        rng = np.random.default_rng(UNEVEN_SEED)
        count = int(seconds * UNEVEN_FPS * 2)
        dts = (1.0 + UNEVEN_SPREAD * rng.uniform(-1.0, 1.0, count)) / UNEVEN_FPS
        return dts[:int(np.searchsorted(np.cumsum(dts), seconds)) + 1]
    return np.full(int(round(seconds * fps)), 1.0 / fps)


def _directions(positions):
    d = np.diff(positions, axis=0)
    return d / np.linalg.norm(d, axis=1, keepdims=True)


def switch_run(backend: str, kind: str, fps, offset_frames: int = 0, sway: bool = False) -> dict:
    """One run at ``fps`` frames a second (or ``"uneven"``, :func:`frame_times`): the
    switching solver and the reference, stepped together, with the body swaying or not.
    Returns ``ratios`` (the first frame's motion after each switch over the largest before it),
    ``settled_deg`` (the largest segment angle between the two chains from 1 s after the return
    to full), ``worst_deg`` (the largest from the first switch on) and the traces."""
    dts = frame_times(fps, LOD_RUN_SECONDS)
    times = np.concatenate([[0.0], np.cumsum(dts)])  # frame f is at times[f]
    switch_frames = [int(np.searchsorted(times, s - 1e-9)) + offset_frames for s in LOD_SWITCH_SECONDS]
    levels = ("half", "frozen", "full")
    cs = _chain_set(kind)
    with new_solver(cs, backend) as reference, new_solver(cs, backend) as switching:
        for s in (reference, switching):
            s.teleport(moving=True)  # the body walks from the first frame
        angles, positions = [], []
        for f in range(len(times)):
            if f in switch_frames:
                switching.set_lod(levels[switch_frames.index(f)])
            for s in (reference, switching):
                _pose(s, kind, times[f], sway)
                s.advance(0.0 if f == 0 else dts[f - 1])
            a, b = reference.positions(), switching.positions()
            cosines = np.clip((_directions(a) * _directions(b)).sum(axis=1), -1.0, 1.0)
            angles.append(float(np.degrees(np.arccos(cosines)).max()))
            positions.append(b.astype(np.float64))
    positions, angles = np.array(positions), np.array(angles)
    motion = np.linalg.norm(np.diff(positions, axis=0), axis=2).max(axis=1)  # motion[k]: frame k to k + 1
    ratios = [float(motion[k - 1] / motion[:k - 1].max()) for k in switch_frames]
    settled = angles[int(np.searchsorted(times, times[switch_frames[-1]] + 1.0 - 1e-9)):]
    return {"ratios": ratios, "settled_deg": float(settled.max()), "worst_deg": float(angles[switch_frames[0]:].max()),
            "times": times, "angles": angles}


def lod_switches(backend: str) -> CheckResult:
    """Level-of-detail switches on a steadily walking body, for point and angle chains at
    :data:`LOD_FRAME_RATES`, each switch on a frame that runs the half rate and on one that
    does not. The figure is the worst of (first-frame motion ratio / its limit) and (angle 1 s
    after the return to full / 2°). Runs on a swaying body (:data:`SWAY_FRAME_RATES`) are in the
    details and not held: there freezing itself is seen (a frozen chain sits on its targets
    and so drops the swing it had), and the difference it leaves decays with the chain's own
    damping (docs/SPEC.md section 9)."""
    details, traces, worst = {}, {}, 0.0
    runs = [(fps, offset, False) for fps in LOD_FRAME_RATES for offset in (0, 1)]
    runs += [(fps, 0, True) for fps in SWAY_FRAME_RATES]
    for kind in ("point", "angle"):
        for fps, offset, sway in runs:
            run = switch_run(backend, kind, fps, offset, sway)
            rate = "uneven frame times" if fps == "uneven" else f"{fps} fps"
            label = (f"{kind} {rate}{', swaying' if sway else ''}, switches on frames "
                     f"{'even' if offset == 0 else 'odd'}")
            held = "not held" if sway else "limit"
            details[f"{label}: first-frame motion / largest before ({held} {MOTION_RATIO_LIMIT:g})"] = \
                max(run["ratios"])
            details[f"{label}: degrees from the unswitched chain 1 s after full ({held} "
                    f"{SETTLED_DEGREES_LIMIT:g})"] = run["settled_deg"]
            details[f"{label}: degrees from it after the first switch (not held)"] = run["worst_deg"]
            traces[label] = (run["times"], run["angles"])
            if not sway:
                worst = max(worst, max(run["ratios"]) / MOTION_RATIO_LIMIT,
                            run["settled_deg"] / SETTLED_DEGREES_LIMIT)
    return CheckResult("lod", "lod switches (walking body)", worst, 1.0, worst <= 1.0,
                       "worst of first-frame motion after a switch / largest before it (limit "
                       f"{MOTION_RATIO_LIMIT:g}) and degrees from an unswitched chain 1 s after the return to "
                       f"full / {SETTLED_DEGREES_LIMIT:g}", details=details, traces=traces, bound="<=",
                       note=f"full → half → frozen → full at {', '.join(f'{s:g}' for s in LOD_SWITCH_SECONDS)} s, "
                            f"{WALK_SPEED:g} units/s, at {', '.join(map(str, LOD_FRAME_RATES))} fps; swaying "
                            f"({SWAY_AMPLITUDE:g} units at {SWAY_HZ:g} Hz) reported only")

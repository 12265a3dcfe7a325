"""The properties of SPEC section 8, measured: one function per check, for angle chains
(:func:`free_decay` ... :func:`cross_check`) and for point chains (:func:`point_free_decay`,
:func:`point_rest`, :func:`point_frame_rates`, :func:`point_teleport`,
:func:`point_cross_check`; property 4, wraparound, is about angles only).

Each check takes a backend name (``"cpu"`` or ``"gpu"``), drives the public
:class:`~gpu_jiggle.Solver` through a scripted motion and returns a :class:`CheckResult`
with the measured figure, the limit it is held to, and the traces the plots need. The point
checks also take ``variants``, the (gravity, wind) pairs to run (by default all four on the
GPU and fewer on the slower reference, see ``REFERENCE_VARIANTS``), and report the worst over
them. The tests (``tests/test_properties.py``, ``tests/test_point_properties.py``) and
``gpu-jiggle verify`` all call them.

The model makes one thing worth knowing before reading the checks: a segment's spring pulls
on its angle *relative to its parent*, while its damping acts on its *world* angular velocity,
and children never act back on parents. A chain is therefore a cascade of one-way coupled
oscillators, and a segment driven at its own resonance gains 1/(2ζ) over its parent (16× at
ζ = 0.03). So "target pinned" holds for a segment only while its ancestors are still, and the
free-decay check displaces one segment per chain below still ancestors; its descendants whip,
as the model says they should, and are not held to a decay.
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..sim.chains import AngleChainSet, PointChainSet
from ..sim.solver import Solver
from ..sim.spring import stable_frequency

__all__ = [
    "CheckResult",
    "standard_chains",
    "root_motion",
    "random_chains",
    "half_cycle_peaks",
    "wrap",
    "free_decay",
    "rest",
    "frame_rates",
    "wraparound",
    "teleport",
    "cross_check",
    "FORCE_VARIANTS",
    "REFERENCE_VARIANTS",
    "variant_name",
    "standard_point_chains",
    "standard_point_pose",
    "point_body_motion",
    "axis_rotation",
    "random_point_chains",
    "point_free_decay",
    "point_rest",
    "point_frame_rates",
    "point_teleport",
    "point_cross_check",
    "CHECKS",
    "run_all",
    "format_table",
    "write_plots",
    "gpu_available",
]

TWO_PI = 2.0 * math.pi
#: Gravity of the standard set, length units/s² (the chains are about 1 unit long: metres).
STANDARD_GRAVITY = (0.0, -9.81)
#: The fixed substep every check runs with (the solver's default), seconds.
SUBSTEP = 1.0 / 120.0


@dataclass
class CheckResult:
    """What one check measured.

    Attributes:
        name: short id (``"decay"``, ``"rest"``, ...), also the plot's file name.
        title: the line of the table, e.g. ``"1 free decay"``.
        figure: the measured number the check is judged on (see ``measure``), in ``unit``.
        limit: the bound on the figure: ``figure < limit``, or ``figure <= limit`` where
            ``bound`` is ``"<="``.
        passed: True or False; None when the check could not run (see ``note``).
        measure: what ``figure`` is, in words.
        unit: the unit of ``figure`` and ``limit`` ("" for a ratio).
        details: further measured numbers, by name (each also part of the verdict unless
            its name says otherwise).
        traces: numpy arrays for the plots, by name.
        note: why a check was skipped, or what else it held.
    """

    name: str
    title: str
    figure: float
    limit: float
    passed: bool | None
    measure: str
    unit: str = ""
    details: dict = field(default_factory=dict)
    traces: dict = field(default_factory=dict)
    note: str = ""
    bound: str = "<"

    @property
    def status(self) -> str:
        return "skipped" if self.passed is None else ("pass" if self.passed else "FAIL")


# -- the rig and helpers ------------------------------------------------------------------------
def _standard_lengths() -> np.ndarray:
    """(34,) the segment lengths of both standard sets: 0.5; 1.0; 4 × 0.25; 0.4 to 0.1;
    12 × 1/12; 12 tapered from 0.2 to 0.05 (1.5 in all)."""
    taper = np.linspace(0.2, 0.05, 12)
    return np.concatenate([[0.5], [1.0], np.full(4, 0.25), [0.4, 0.3, 0.2, 0.1], np.full(12, 1.0 / 12.0),
                           taper * (1.5 / taper.sum())])


def standard_chains(gravity=STANDARD_GRAVITY, frequency=None, damping_ratio=None) -> AngleChainSet:
    """The standard set: six chains of 1, 1, 4, 4, 12 and 12 segments, about 1 unit long
    (uniform and tapered lengths), f from 2 to 8 Hz, ζ from 0.1 to 1, inertia 0.5 to 1.5,
    and gravity. Every spring is at least 7× stiffer than gravity's pull on its segment
    (k > 7·|g|/L), so the chains hold their shape against it.

    ``frequency`` and ``damping_ratio`` (per chain, (6,)) replace the defaults.
    """
    lengths = _standard_lengths()
    f = [2.0, 6.0, 3.0, 8.0, 5.0, 6.0] if frequency is None else frequency
    zeta = [0.1, 1.0, 0.3, 0.15, 0.5, 0.7] if damping_ratio is None else damping_ratio
    return AngleChainSet([1, 1, 4, 4, 12, 12], lengths, f, zeta, inertia=[1.0, 0.5, 1.0, 1.5, 1.0, 0.8],
                         gravity=gravity)


def _chain_lengths(cs) -> np.ndarray:
    """(C,) each chain's total length."""
    return np.add.reduceat(cs.lengths, cs.first_segment) if cs.chain_count else np.zeros(0)


def _tip_joints(cs) -> np.ndarray:
    """(S,) index of each segment's tip in the (S + C) joint array."""
    return np.arange(cs.segment_count) + cs.chain_of_segment + 1


def _cumulative(cs, root_angle, local_angle) -> np.ndarray:
    """(S,) each segment's world target angle on the pose: Θ + Σ λ down its chain (unwrapped)."""
    total = np.cumsum(local_angle)
    start = (total - local_angle)[cs.first_segment]
    return total - np.repeat(start, cs.segment_counts) + np.repeat(root_angle, cs.segment_counts)


def _parent_angle(cs, angles, root_angle) -> np.ndarray:
    """(S,) the angle each segment's target hangs from: its parent's φ, or the root's Θ."""
    parent = np.empty(cs.segment_count)
    parent[1:] = angles[:-1]
    parent[cs.first_segment] = root_angle
    return parent


def wrap(a):
    """``a - 2π·floor((a + π)/2π)`` in float64: a value in [-π, π) (SPEC section 0)."""
    a = np.asarray(a, np.float64)
    return a - TWO_PI * np.floor((a + math.pi) / TWO_PI)


def _ramp(t, t0, t1):
    """0 before t0, 1 after t1, a smooth (C¹) step between."""
    x = np.clip((np.asarray(t, np.float64) - t0) / (t1 - t0), 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def half_cycle_peaks(deviation):
    """Split a deviation trace at its sign changes; return (index, |peak|) of every complete
    half-cycle (the stretch before the first and after the last sign change are left out,
    except that the first stretch counts when it starts at its peak, as a released spring does).
    """
    x = np.asarray(deviation, np.float64)
    sign = np.sign(x)
    change = np.flatnonzero(sign[1:] * sign[:-1] < 0) + 1
    bounds = np.concatenate([[0], change])
    index, peak = [], []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        i = lo + int(np.argmax(np.abs(x[lo:hi])))
        if lo == 0 and i != 0:
            continue  # the first stretch rose to its peak: no full half-cycle seen
        index.append(i)
        peak.append(abs(x[i]))
    return np.asarray(index, int), np.asarray(peak)


def _peak_ratios(peak_index, peak_value):
    """Per chain, from its half-cycle peaks (:func:`half_cycle_peaks`): the largest ratio of
    a peak to the one before (inf with fewer than two peaks), how many peaks, and the substep
    of the last one (0 without); and whether every chain's peaks strictly decrease.
    Returns ``(ratios, strictly, counts, last_peak_steps)``."""
    ratios, counts, last = [], [], []
    strictly = True
    for idx, pk in zip(peak_index, peak_value):
        counts.append(len(pk))
        last.append(int(idx[-1]) if len(idx) else 0)
        if len(pk) >= 2:
            ratios.append(float(np.max(pk[1:] / pk[:-1])))
            strictly &= bool(np.all(np.diff(pk) < 0))
        else:
            ratios.append(math.inf)
            strictly = False
    return ratios, strictly, counts, last


def gpu_available() -> tuple[bool, str]:
    """(True, "") when an OpenGL 4.3 context can be made, else (False, the reason)."""
    from ..gl.context import get_context

    try:
        get_context()
    except RuntimeError as exc:
        return False, str(exc)
    return True, ""


# -- 1. free decay ------------------------------------------------------------------------------
#: Light damping for the decay check, per chain of the standard set: ζ·f ≤ 0.3, so that every
#: half-cycle in 720 substeps is still far above float32 noise.
DECAY_FREQUENCY = [2.0, 1.0, 3.0, 2.5, 4.0, 3.0]
DECAY_DAMPING = [0.05, 0.3, 0.03, 0.1, 0.02, 0.04]
#: The segment each chain's displacement is applied to (depth in its chain).
DECAY_DEPTH = [0, 0, 3, 1, 11, 6]


def free_decay(backend: str, substeps: int = 720, displacement: float = 0.5) -> CheckResult:
    """SPEC 8.1: target pinned, one initial displacement, ζ > 0: every half-cycle's peak is
    strictly smaller than the one before, over at least 600 substeps.

    The standard set with light damping (``DECAY_FREQUENCY``, ``DECAY_DAMPING``) hangs
    straight down (Θ = -π/2, λ = 0), where gravity pulls symmetrically about every target.
    The first pose snaps the chains onto it, except that one segment per chain
    (``DECAY_DEPTH``) is turned by ``-displacement`` rad; then the straight pose is set and
    held. The displaced segment's ancestors are at rest on their targets, so its own target
    is pinned; its deviation from it is read after every substep (frames of one substep,
    ``raw=True``). Also held: the ancestors never move (≤ 1e-6 rad).
    """
    cs = standard_chains(frequency=DECAY_FREQUENCY, damping_ratio=DECAY_DAMPING)
    c, s = cs.chain_count, cs.segment_count
    root_position = np.zeros((c, 2))
    root_angle = np.full(c, -math.pi / 2)
    segment = cs.first_segment + np.asarray(DECAY_DEPTH)
    local = np.zeros(s)
    local[segment] = -displacement
    angles = np.empty((substeps + 1, s))
    with Solver(cs, backend=backend, substep=SUBSTEP) as solver:
        solver.set_pose(root_position, root_angle, local)  # the first pose snaps the chains here
        solver.advance(0.0)
        local[segment] = 0.0
        solver.set_pose(root_position, root_angle, local)
        angles[0] = solver.angles(raw=True)
        for j in range(1, substeps + 1):
            solver.advance(SUBSTEP)
            angles[j] = solver.angles(raw=True)
    start = angles[0]
    target = wrap(_cumulative(cs, root_angle, local))
    time = np.arange(substeps + 1) * SUBSTEP
    deviation = wrap(angles[:, segment] - target[segment])

    peaks = [half_cycle_peaks(deviation[:, k]) for k in range(c)]
    peak_index, peak_value = [p[0] for p in peaks], [p[1] for p in peaks]
    ratios, strictly, counts, last_peak_step = _peak_ratios(peak_index, peak_value)
    ancestors = np.concatenate([np.arange(cs.first_segment[k], segment[k]) for k in range(c)]).astype(int)
    ancestor_motion = float(np.max(np.abs(wrap(angles[:, ancestors] - start[ancestors])))) if ancestors.size else 0.0
    descendants = np.concatenate([np.arange(segment[k] + 1, cs.first_segment[k] + cs.segment_counts[k])
                                  for k in range(c)]).astype(int)
    excursion = np.abs(np.unwrap(angles[:, descendants], axis=0) - start[descendants])
    descendant_motion = float(excursion.max()) if descendants.size else 0.0
    worst = max(ratios)
    covered = min(last_peak_step)
    passed = strictly and worst < 1.0 and covered >= 600 and ancestor_motion <= 1e-6
    return CheckResult(
        "decay", "1 free decay", worst, 1.0, passed,
        "largest ratio of a half-cycle peak to the one before", "",
        details={"half-cycles (fewest in a chain)": min(counts),
                 "last peak at substep (earliest over chains, >= 600)": covered,
                 "ancestor motion, rad (<= 1e-6)": ancestor_motion,
                 "peaks strictly decreasing": strictly,
                 "largest excursion of a descendant, rad (not held: driven, see the module notes)":
                     descendant_motion},
        traces={"time": time, "deviation": deviation, "peak_index": peak_index, "peak_value": peak_value,
                "segment": segment, "depth": np.asarray(DECAY_DEPTH), "segment_counts": cs.segment_counts,
                "frequency": np.asarray(DECAY_FREQUENCY), "damping_ratio": np.asarray(DECAY_DAMPING),
                "length": cs.lengths[segment], "gravity": float(np.linalg.norm(cs.gravity))})


# -- 2. rest ------------------------------------------------------------------------------------
def rest(backend: str, duration: float = 60.0, fps: float = 60.0) -> CheckResult:
    """SPEC 8.2: targets still for ``duration`` s of sim time, with gravity: in the last second
    no tip moves more than 1e-6 × its chain's length between frames.

    The standard set is posed leaning sideways (Θ = 0.3, λ = 0.15 per segment) so that gravity
    bends it; the first pose snaps it onto the unbent targets and it swings into its sag.
    """
    cs = standard_chains()
    c, s = cs.chain_count, cs.segment_count
    frames = int(round(duration * fps))
    dt = 1.0 / fps
    tips = _tip_joints(cs)
    chain_length = _chain_lengths(cs)[cs.chain_of_segment]
    previous = None
    movement_time, movement = [], []
    with Solver(cs, backend=backend, substep=SUBSTEP) as solver:
        solver.set_pose(np.zeros((c, 2)), np.full(c, 0.3), np.full(s, 0.15))
        for k in range(1, frames + 1):
            solver.advance(dt)
            tip = solver.positions()[tips].astype(np.float64)
            if previous is not None:
                movement_time.append(k * dt)
                movement.append(np.linalg.norm(tip - previous, axis=1) / chain_length)
            previous = tip
        sim_time = solver.sim_time
    movement_time = np.asarray(movement_time)
    movement = np.asarray(movement)
    window = movement_time > duration - 1.0 + 1e-9
    worst = float(movement[window].max())
    per_chain = np.array([movement[window][:, cs.chain_of_segment == k].max() for k in range(c)])
    return CheckResult(
        "rest", "2 rest", worst, 1e-6, worst <= 1e-6,
        "largest tip movement between frames in the last second / chain length", "",
        details={"frames in the last second": int(window.sum()),
                 "sim time, s": sim_time},
        traces={"time": movement_time, "movement": movement, "per_chain": per_chain,
                "chain_of_segment": cs.chain_of_segment, "duration": duration}, bound="<=")


# -- 3. frame rates -----------------------------------------------------------------------------
#: Root motion of the frame-rate and teleport checks: amplitude (length units), frequencies (Hz).
MOTION_AMPLITUDE = 0.5
HEADING_AMPLITUDE = 0.6


def root_motion(t, chain_count: int, segment_count: int):
    """A smooth primary motion: the root sways in x (amplitude ``MOTION_AMPLITUDE``, 0.6 Hz)
    and y (half that, 1.1 Hz) and turns (amplitude ``HEADING_AMPLITUDE`` rad, 0.4 Hz) from a
    heading pointing down; it starts from rest (zero velocity at t = 0).
    Returns (P (C, 2), Θ (C,), λ (S,))."""
    a = MOTION_AMPLITUDE
    x = a * (1.0 - math.cos(TWO_PI * 0.6 * t))
    y = 0.5 * a * (1.0 - math.cos(TWO_PI * 1.1 * t))
    heading = -math.pi / 2 + HEADING_AMPLITUDE * (1.0 - math.cos(TWO_PI * 0.4 * t))
    position = np.tile([x, y], (chain_count, 1))
    return position, np.full(chain_count, heading), np.full(segment_count, 0.1)


FRAME_RATES = (30, 60, 144)
#: The frame-rate check's limit: tip paths agree within 3 % of the root motion's amplitude.
FRAME_RATE_LIMIT = 0.03


def _tip_paths(make_solver, pose, tips, duration: float, fps_list):
    """Run the same motion at each frame rate of ``fps_list``: a solver from
    ``make_solver()`` gets ``pose(solver, t)`` at every frame time t = k/fps, then
    ``advance(1/fps)`` (``advance(0)`` for the first pose, which snaps). Returns ``(paths,
    compared)``, per fps the frame-time positions of the joints ``tips`` at every frame,
    (frames + 1, len(tips), D), and at the multiples of 1/6 s that every rate shares."""
    paths, compared = {}, {}
    for fps in fps_list:
        frames = int(round(duration * fps))
        path = None
        with make_solver() as solver:
            for k in range(frames + 1):
                pose(solver, k / fps)
                solver.advance(0.0 if k == 0 else 1.0 / fps)
                tip = solver.positions()[tips]
                if path is None:
                    path = np.empty((frames + 1, *tip.shape))
                path[k] = tip
        paths[fps] = path
        compared[fps] = path[::fps // 6]
    return paths, compared


def _frame_rate_differences(compared, fps_list):
    """Tip distances between frame rates at the shared times, / ``MOTION_AMPLITUDE``:
    ``(largest over every pair, {"A vs B fps": largest}, (T,) largest against the last rate
    per shared time)``."""
    worst, pair_worst = 0.0, {}
    for i, a in enumerate(fps_list):
        for b in fps_list[i + 1:]:
            diff = float(np.linalg.norm(compared[a] - compared[b], axis=2).max()) / MOTION_AMPLITUDE
            pair_worst[f"{a} vs {b} fps"] = diff
            worst = max(worst, diff)
    difference = np.max([np.linalg.norm(compared[a] - compared[fps_list[-1]], axis=2).max(axis=1)
                         for a in fps_list[:-1]], axis=0) / MOTION_AMPLITUDE
    return worst, pair_worst, difference


def frame_rates(backend: str, duration: float = 3.0, fps_list=FRAME_RATES) -> CheckResult:
    """SPEC 8.3: the same primary motion (:func:`root_motion`) at 30, 60 and 144 fps, compared
    at the multiples of 1/6 s: every tip agrees within ``FRAME_RATE_LIMIT`` × the motion's
    amplitude (``MOTION_AMPLITUDE``) between every pair of rates.

    Frame k of a run is ``set_pose(root_motion(k/fps))`` then ``advance(1/fps)``; the first
    pose snaps, with ``advance(0)``. Positions are the frame-time output.
    """
    cs = standard_chains()
    c, s = cs.chain_count, cs.segment_count
    paths, compared = _tip_paths(lambda: Solver(cs, backend=backend, substep=SUBSTEP),
                                 lambda solver, t: solver.set_pose(*root_motion(t, c, s)), _tip_joints(cs), duration,
                                 fps_list)
    times = np.arange(len(compared[fps_list[0]])) / 6.0
    worst, pair_worst, diff_vs_time = _frame_rate_differences(compared, fps_list)
    return CheckResult(
        "frame_rates", "3 frame rates", worst, FRAME_RATE_LIMIT, worst < FRAME_RATE_LIMIT,
        "largest tip distance between two frame rates at the shared times / motion amplitude", "",
        details={**{f"max difference {k}": v for k, v in pair_worst.items()},
                 "times compared": len(times), "motion amplitude, units": MOTION_AMPLITUDE},
        traces={"paths": paths, "compared": compared, "times": times, "difference": diff_vs_time,
                "segment_counts": cs.segment_counts, "first_segment": cs.first_segment})


# -- 4. wraparound ------------------------------------------------------------------------------
#: The wraparound check's limit on |wrap(φ - τ)|: a segment that went the long way round
#: would pass ±π, and with frame steps below π/2 no such pass can hide between two frames
#: without one of them showing more than π/2.
WRAP_LIMIT = math.pi / 2


def _turns(t):
    """Root heading in turns at time t (s): ramps up to 0.5 turns/s, one turn at that rate,
    ramps to 2 turns/s, 3.4 turns at that rate, ramps down by 4.44 s and holds: five turns in
    all. Integrated exactly from the piecewise linear rate."""
    # (time, rate) knots of the turn rate, turns/s.
    knots_t = np.array([0.0, 0.25, 2.25, 2.5, 4.1875, 4.4375, 10.0])
    knots_r = np.array([0.0, 0.5, 0.5, 2.0, 2.0, 0.0, 0.0])
    t = np.atleast_1d(np.asarray(t, np.float64))
    out = np.zeros_like(t)
    for i in range(len(knots_t) - 1):
        t0, t1, r0, r1 = knots_t[i], knots_t[i + 1], knots_r[i], knots_r[i + 1]
        u = np.clip(t, t0, t1) - t0
        out += r0 * u + 0.5 * (r1 - r0) / (t1 - t0) * u * u
    return out


def wraparound(backend: str, fps: float = 60.0, duration: float = 7.5) -> CheckResult:
    """SPEC 8.4: the root's heading swept through full turns in both directions, and local
    targets crossing ±π: no segment ever takes the long way round.

    Two copies of the standard set: the first turns counter-clockwise, the second clockwise.
    0-4.4 s: the heading makes a full turn at 0.5 turns/s, then about four more at 2 turns/s
    (five in all, :func:`_turns`). 4.75-5.75 s, the heading held: every chain's first local
    target λ0 makes a full turn (same direction), and the last segment's λ goes from 0.1 to π;
    from 5.75 s it swings across ±π (π + 0.5·sin(2π·1.5 t)). Every frame, with φ the
    frame-time angles and τ = φ_parent + λ each segment's target, the figure is the largest
    |wrap(φ - τ)|: a segment going the long way round would pass ±π. Also held: the angle
    steps between frames stay below π/2 (so the unwrapped traces are unambiguous), and each
    segment's net turn count matches its target's on the pose (six turns, signed, plus the
    last segment's own change of λ) within a quarter turn.
    """
    base = standard_chains()
    c1 = base.chain_count
    # Two copies: counter-clockwise, then clockwise.
    cs = AngleChainSet(np.tile(base.segment_counts, 2), np.tile(base.lengths, 2), np.tile(base.frequency, 2),
                       np.tile(base.damping_ratio, 2), inertia=np.tile(base.inertia, 2), gravity=base.gravity)
    c, s = cs.chain_count, cs.segment_count
    direction = np.repeat([1.0, -1.0], c1)
    seg_direction = direction[cs.chain_of_segment]
    last = (cs.first_segment + cs.segment_counts - 1)[cs.segment_counts > 1]
    frames = int(round(duration * fps))
    time = np.arange(frames + 1) / fps
    heading = -math.pi / 2 + TWO_PI * _turns(time)[:, None] * direction[None, :]
    local = np.full((frames + 1, s), 0.1)
    local[:, cs.first_segment] += TWO_PI * _ramp(time, 4.75, 5.75)[:, None] * direction[None, :]
    swing = (0.1 + (math.pi - 0.1) * _ramp(time, 4.75, 5.75)
             + 0.5 * np.sin(TWO_PI * 1.5 * (time - 5.75)) * _ramp(time, 5.75, 6.0))
    local[:, last] = swing[:, None]
    phi = np.empty((frames + 1, s))
    tau = np.empty((frames + 1, s))
    with Solver(cs, backend=backend, substep=SUBSTEP) as solver:
        for k in range(frames + 1):
            solver.set_pose(np.zeros((c, 2)), heading[k], local[k])
            solver.advance(0.0 if k == 0 else 1.0 / fps)
            phi[k] = solver.angles()
            tau[k] = _parent_angle(cs, phi[k], heading[k]) + local[k]
    error = wrap(phi - tau)
    worst = float(np.max(np.abs(error)))
    largest_step = float(np.abs(wrap(np.diff(phi, axis=0))).max())
    phi_unwrapped = np.unwrap(phi, axis=0)
    tau_unwrapped = np.unwrap(tau, axis=0)
    # The pose's own targets, unwrapped by construction (heading and λ are given unwrapped).
    pose_start = _cumulative(cs, heading[0], local[0])
    pose_end = _cumulative(cs, heading[-1], local[-1])
    expected = (pose_end - pose_start) / TWO_PI
    turns_phi = (phi_unwrapped[-1] - phi_unwrapped[0]) / TWO_PI
    turn_error = float(np.max(np.abs(turns_phi - expected)))
    # Direction during the heading sweep (after the ramp-up, before the ramp-down).
    sweep = (time[1:] > 0.5) & (time[1:] < 4.1)
    moves = wrap(np.diff(phi, axis=0))[sweep] * seg_direction[None, :]
    backwards = float(np.max(-moves.min(axis=0)))
    passed = worst < WRAP_LIMIT and largest_step < math.pi / 2 and turn_error < 0.25
    return CheckResult(
        "wraparound", "4 wraparound", worst, WRAP_LIMIT, passed,
        "largest |wrap(segment angle - its target)| over all frames and segments", "rad",
        details={"largest angle step between frames, rad (< pi/2)": largest_step,
                 "largest |net turns of a segment - of its target on the pose| (< 0.25)": turn_error,
                 "net turns of the root segments (ccw, cw)": (round(float(turns_phi[0]), 3),
                                                              round(float(turns_phi[cs.first_segment[c1]]), 3)),
                 "largest backward step during the heading sweep, rad (not held)": backwards},
        traces={"time": time, "phi": phi_unwrapped, "tau": tau_unwrapped, "error": error,
                "heading": np.unwrap(heading, axis=0), "direction": direction,
                "chain_of_segment": cs.chain_of_segment, "first_segment": cs.first_segment,
                "segment_counts": cs.segment_counts, "turns_phi": turns_phi, "expected_turns": expected,
                "local": local})


# -- 5. teleport --------------------------------------------------------------------------------
TELEPORT_JUMP = np.array([1200.0, -1600.0])  # 2000 units
TELEPORT_TURN = 4.0  # the heading jumps too; after the jump it swings across ±π


def _teleport_run(cs, backend, fps, before, after):
    """Solver A moves about the origin for ``before`` s, then jumps by ``TELEPORT_JUMP`` (and
    turns by ``TELEPORT_TURN``) with ``teleport()``, then moves on for ``after`` s. Solver B is
    created at the jump frame at the destination and gets the same poses from then on.
    Returns per frame of A (angles, angular velocities, joint positions), the jump frame index,
    B's traces from the jump frame on, and the poses of the jump frame."""
    c, s = cs.chain_count, cs.segment_count
    jump = int(round(before * fps))
    frames = jump + int(round(after * fps))
    rec = {k: [] for k in ("a_angle", "a_omega", "a_pos", "b_angle", "b_omega", "b_pos")}
    jump_pose = None
    with contextlib.ExitStack() as solvers:  # both released at the end
        a = solvers.enter_context(Solver(cs, backend=backend, substep=SUBSTEP))
        b = None
        for k in range(frames + 1):
            position, heading, local = root_motion(k / fps, c, s)
            if k >= jump:
                position = position + TELEPORT_JUMP
                heading = heading + TELEPORT_TURN
            dt = 0.0 if k == 0 else 1.0 / fps
            a.set_pose(position, heading, local)
            if k == jump:
                a.teleport()
                jump_pose = (position, heading, local)
                b = solvers.enter_context(Solver(cs, backend=backend, substep=SUBSTEP))
            a.advance(dt)
            rec["a_angle"].append(a.angles())
            rec["a_omega"].append(a.angular_velocities())
            rec["a_pos"].append(a.positions().astype(np.float64))
            if b is not None:
                b.set_pose(position, heading, local)
                b.advance(dt)
                rec["b_angle"].append(b.angles())
                rec["b_omega"].append(b.angular_velocities())
                rec["b_pos"].append(b.positions().astype(np.float64))
    return {k: np.asarray(v, np.float64) for k, v in rec.items()}, jump, jump_pose


def teleport(backend: str, fps: float = 60.0, before: float = 1.0, after: float = 1.5) -> CheckResult:
    """SPEC 8.5: a 2000-unit jump with the flag: the next frame's velocities are zero and the
    chain sits on its targets; every later frame behaves as if it had always been there.

    Solver A plays :func:`root_motion` about the origin, then jumps by (1200, -1600) and
    turns by 4 rad with ``teleport()`` and plays on; solver B is made at the destination
    on the jump frame and is given the same poses. Frames are 1/60 s (two whole substeps, so
    the two clocks agree). Run twice: without gravity, where "at rest on the targets" holds
    exactly through the jump frame's substeps (with gravity the chain starts to sag within
    that frame), and with the standard set's gravity. The figure is the largest angle
    difference between A and B on any frame from the jump on (both runs); also held: on the
    jump frame without gravity, |ω| ≤ 1e-3 rad/s and |φ - target| ≤ 1e-5 rad, tips within
    1e-3 units of the targets' forward kinematics, and A vs B positions within 1e-3 units.
    """
    cs = standard_chains()
    runs = {"no gravity": _teleport_run(cs.replace(gravity=(0.0, 0.0)), backend, fps, before, after),
            "gravity": _teleport_run(cs, backend, fps, before, after)}
    worst_angle = worst_position = worst_omega_diff = 0.0
    for rec, _, _ in runs.values():
        n = len(rec["b_angle"])
        a_angle, a_pos, a_omega = rec["a_angle"][-n:], rec["a_pos"][-n:], rec["a_omega"][-n:]
        worst_angle = max(worst_angle, float(np.abs(wrap(a_angle - rec["b_angle"])).max()))
        worst_position = max(worst_position, float(np.abs(a_pos - rec["b_pos"]).max()))
        worst_omega_diff = max(worst_omega_diff, float(np.abs(a_omega - rec["b_omega"]).max()))
    rec, jump, (position, heading, local) = runs["no gravity"]
    target = _cumulative(cs, heading, local)
    snap_angle = float(np.abs(wrap(rec["a_angle"][jump] - target)).max())
    snap_omega = float(np.abs(rec["a_omega"][jump]).max())
    moving_before = float(np.abs(rec["a_omega"][jump - 1]).max())
    # Forward kinematics of the targets from the jump frame's root position.
    offset = np.stack([cs.lengths * np.cos(target), cs.lengths * np.sin(target)], axis=1)
    total = np.cumsum(offset, axis=0)
    start = (total - offset)[cs.first_segment]
    tips_fk = total - np.repeat(start, cs.segment_counts, axis=0) + position[cs.chain_of_segment]
    snap_position = float(np.abs(rec["a_pos"][jump][_tip_joints(cs)] - tips_fk).max())
    limit = 1e-5
    passed = (worst_angle <= limit and snap_angle <= 1e-5 and snap_omega <= 1e-3 and snap_position <= 1e-3
              and worst_position <= 1e-3 and moving_before > 0.1)
    g_rec, g_jump, _ = runs["gravity"]
    return CheckResult(
        "teleport", "5 teleport", worst_angle, limit, passed,
        "largest angle difference between the teleported solver and one made at the destination", "rad",
        details={"jump frame: largest |angle - target|, rad (<= 1e-5)": snap_angle,
                 "jump frame: largest |angular velocity|, rad/s (<= 1e-3)": snap_omega,
                 "jump frame: largest tip distance from the targets, units (<= 1e-3)": snap_position,
                 "later frames: largest position difference A vs B, units (<= 1e-3)": worst_position,
                 "later frames: largest angular velocity difference A vs B, rad/s (not held)": worst_omega_diff,
                 "frame before the jump: largest |angular velocity|, rad/s (> 0.1)": moving_before},
        traces={"time": np.arange(len(g_rec["a_angle"])) / fps, "jump": g_jump, "a_pos": g_rec["a_pos"],
                "b_pos": g_rec["b_pos"], "a_angle": g_rec["a_angle"], "b_angle": g_rec["b_angle"],
                "first_segment": cs.first_segment, "segment_counts": cs.segment_counts}, bound="<=")


# -- 6. cross-check -----------------------------------------------------------------------------
#: GPU vs reference: after one frame the two agree to float32 rounding; over a long run the
#: rounding differences (llvmpipe's sin/cos against numpy's, fused multiply-adds) are carried
#: along and amplified by chains that whip and by angle limits, so the whole run is held to a
#: looser bound. Angles in rad, positions relative to the chain's length, ω in rad/s relative
#: to max(1, |ω|).
CROSS_FIRST_FRAME_TOLERANCE = 1e-5
CROSS_TOLERANCE = 1e-3


def random_chains(rng, chain_count: int = 48, substep: float = SUBSTEP) -> AngleChainSet:
    """Ragged chains (1-16 segments) with random lengths, stable f and ζ (0-1.2), inertia,
    angle limits on a third of the segments, and gravity."""
    counts = rng.integers(1, 17, chain_count)
    s = int(counts.sum())
    zeta = rng.uniform(0.0, 1.2, s)
    zeta[rng.random(s) < 0.2] = 0.0
    zeta = np.where(zeta == 0.0, 0.0, np.maximum(zeta, 0.2))  # ζ = 0 or ≥ 0.2: no endless whip
    f = rng.uniform(0.5, 12.0, s)
    f = np.minimum(f, 0.8 * stable_frequency(zeta, substep))
    limit = np.where(rng.random(s) < 0.35, rng.uniform(0.3, 1.5, s), np.inf)
    return AngleChainSet(counts, rng.uniform(0.05, 0.4, s), f, zeta, inertia=rng.uniform(0.0, 2.0, s),
                         angle_limit=limit, gravity=rng.uniform(-10.0, 10.0, 2))


def _random_frame_times(rng, frames: int) -> np.ndarray:
    """(frames,) frame times (s) drawn from 1/30, 1/60, 1/144 and 0 (a frame that runs no
    substep), the first 0: the first pose snaps."""
    dts = rng.choice([1 / 30, 1 / 60, 1 / 60, 1 / 144, 1 / 144, 0.0], frames)
    dts[0] = 0.0
    return dts


def _more_damped(cs, extra: float):
    """``(frequency, damping_ratio)`` (S,) for a live change of the cross-checks: ζ raised by
    ``extra`` (at most 1.5) and f lowered where needed to 0.8 of what the substep keeps
    stable at that ζ."""
    damping = np.minimum(cs.damping_ratio + extra, 1.5)
    return np.minimum(cs.frequency, 0.8 * stable_frequency(damping, SUBSTEP)), damping


def _teleport_halves(solver, chain_count: int) -> None:
    """Flag a teleport for every chain: the even ones snap, the odd ones keep their shape."""
    solver.teleport(np.arange(0, chain_count, 2))
    solver.teleport(np.arange(1, chain_count, 2), keep_shape=True)


def cross_check(backend: str = "gpu", frames: int = 240, seed: int = 8) -> CheckResult:
    """SPEC 8.6: the compute shaders against the numpy reference on random ragged chains
    (:func:`random_chains`) and random motions: smooth root sway and turns, local targets
    crossing ±π, frame times of 1/30, 1/60, 1/144 s, zero and 0.2 s (past the substep cap),
    snap and keep-shape teleports, and live parameter changes. Every frame compares angles,
    angular velocities and joint positions, frame-time and raw. ``backend`` is accepted for a
    uniform signature; the check always needs both backends and is skipped without a GL 4.3
    context.
    """
    ok, reason = gpu_available()
    if not ok:
        return CheckResult("cross_check", "6 cross-check gpu vs cpu", math.nan, CROSS_TOLERANCE, None,
                           "largest difference gpu vs cpu", "", note=f"skipped: {reason}", bound="<=")
    rng = np.random.default_rng(seed)
    cs = random_chains(rng)
    c, s = cs.chain_count, cs.segment_count
    lengths = _chain_lengths(cs)
    joint_scale = np.concatenate([[lengths[k]] * (n + 1) for k, n in enumerate(cs.segment_counts)])[:, None]
    phase = rng.uniform(0, TWO_PI, (c, 4))
    freq = rng.uniform(0.2, 1.5, (c, 4))
    amp = rng.uniform(0.0, 0.6, (c, 3))
    spin = rng.uniform(-2.0, 2.0, c) * TWO_PI
    local_base = rng.uniform(-0.5, 0.5, s)
    local_base[rng.random(s) < 0.15] = math.pi - 0.05  # these swing across ±π
    local_amp = rng.uniform(0.0, 0.8, s)
    local_freq = rng.uniform(0.3, 2.0, s)
    new_frequency, new_damping = _more_damped(cs, 0.3)
    dts = _random_frame_times(rng, frames)
    dts[frames // 3] = 0.2
    t = 0.0
    per_frame = np.zeros(frames)
    worst = {"angle": 0.0, "angular velocity": 0.0, "position": 0.0, "raw angle": 0.0, "raw position": 0.0}
    first = None
    with Solver(cs, backend="cpu", substep=SUBSTEP) as ref, Solver(cs, backend="gpu", substep=SUBSTEP) as gpu:
        for k in range(frames):
            t += dts[k]
            position = np.stack([amp[:, 0] * np.sin(TWO_PI * freq[:, 0] * t + phase[:, 0]),
                                 amp[:, 1] * np.sin(TWO_PI * freq[:, 1] * t + phase[:, 1])], axis=1) * 3.0
            heading = phase[:, 3] + spin * t + amp[:, 2] * np.sin(TWO_PI * freq[:, 2] * t)
            local = local_base + local_amp * np.sin(TWO_PI * local_freq * t)
            if k >= frames // 2:
                position = position + np.array([300.0, -40.0])  # flagged below: a teleport
            for solver in (ref, gpu):
                solver.set_pose(position, heading, local)
                if k == frames // 2:
                    _teleport_halves(solver, c)
                if k == frames // 4:
                    solver.set_parameters(frequency=new_frequency, damping_ratio=new_damping, gravity=(0.0, -9.81))
                solver.advance(float(dts[k]))
            omega = ref.angular_velocities().astype(np.float64)
            frame = {
                "angle": np.abs(wrap(ref.angles().astype(np.float64) - gpu.angles())),
                "raw angle": np.abs(wrap(ref.angles(raw=True).astype(np.float64) - gpu.angles(raw=True))),
                "angular velocity": np.abs(omega - gpu.angular_velocities()) / np.maximum(1.0, np.abs(omega)),
                "position": np.abs(ref.positions().astype(np.float64) - gpu.positions()) / joint_scale,
                "raw position": np.abs(ref.positions(raw=True).astype(np.float64) - gpu.positions(raw=True))
                / joint_scale,
            }
            for name, value in frame.items():
                worst[name] = max(worst[name], float(value.max()))
            per_frame[k] = max(float(v.max()) for v in frame.values())
            if first is None and ref.sim_time > 0:
                first = per_frame[k]
    figure = max(worst.values())
    passed = figure <= CROSS_TOLERANCE and first is not None and first <= CROSS_FIRST_FRAME_TOLERANCE
    return CheckResult(
        "cross_check", "6 cross-check gpu vs cpu", figure, CROSS_TOLERANCE, passed,
        "largest difference gpu vs cpu over the run (rad; position / chain length; ω relative)", "",
        details={**{f"largest {k} difference": v for k, v in worst.items()},
                 f"first frame with substeps (<= {CROSS_FIRST_FRAME_TOLERANCE:g})": first,
                 "chains": c, "segments": s, "frames": frames},
        traces={"per_frame": per_frame, "dt": dts}, bound="<=")


# ==============================================================================================
# Point chains (SPEC section 4): properties 1, 2, 3, 5 and 6, each with gravity and wind on and
# off. Chains hang from pivots in 3D; a particle's spring pulls it toward its target, and its
# length keeps it on a sphere about its parent, so a segment whose parent is still is a
# spherical pendulum: with the target offset t (|t| = L) and the uniform force F = g + w0, the
# potential on that sphere is -x·(k·t + F), a uniform field G = k·t + F. The particle settles
# along G (not on its target when F ≠ 0), swings in the plane of G and its start, and near
# equilibrium with ω² = |G|/L. Children never act back on parents (the length step moves only
# the child), so the cascade caveat of the angle chains holds here too: a segment is held to a
# decay only while its ancestors are still.
# The length step is not energy-neutral: removing the velocity along the new direction after
# the particle moved damps the swing at a rate of about a_r·h/L (a_r: the particle's outward
# radial acceleration, h the substep), so hanging segments lose a little more than ζ says and a
# segment standing up against gravity gains energy when ζ is small (2ζω0 < |g|·h/L; see the
# xfail test in tests/test_point_properties.py). The chains of these checks hang.
# ==============================================================================================
#: Gravity of the point-chain checks when it is on (y up), length/s².
POINT_GRAVITY = (0.0, -9.81, 0.0)
#: The constant wind w0 when wind is on, length/s²: sideways, a little toward +z.
POINT_WIND = (3.0, 0.0, 1.5)
#: Gusts on top of w0 where a check may have time-varying forcing (frame rates, teleport,
#: cross-check): amplitude (length/s²), wave vector (rad per unit), frequency (Hz). At 1 Hz a
#: whole second is a whole gust period, which the teleport check relies on.
POINT_GUST = {"gust_amplitude": 2.0, "gust_wave_vector": (1.2, 0.0, 0.7), "gust_frequency": 1.0}
#: (gravity, wind) of the four variants. The point checks run all four on the GPU by default;
#: the numpy reference (about 2.5 ms a substep for the standard set, against 0.05 ms on
#: llvmpipe) runs ``REFERENCE_VARIANTS``, which between them take every path (no force;
#: gravity and wind together), and the tests run all four on both.
FORCE_VARIANTS = ((False, False), (True, False), (False, True), (True, True))
REFERENCE_VARIANTS = ((False, False), (True, True))
#: The standard point set: segments per chain, f (Hz) and ζ per chain.
POINT_SEGMENT_COUNTS = (1, 1, 4, 4, 12, 12)
POINT_FREQUENCY = (2.0, 6.0, 3.0, 5.0, 6.0, 5.0)
POINT_DAMPING = (0.3, 1.0, 0.4, 0.6, 0.7, 0.8)


def variant_name(gravity: bool, wind: bool) -> str:
    """``"none"``, ``"gravity"``, ``"wind"`` or ``"gravity + wind"``."""
    return " + ".join(n for n, on in (("gravity", gravity), ("wind", wind)) if on) or "none"


def standard_point_chains(gravity: bool = True, frequency=None, damping_ratio=None) -> PointChainSet:
    """The standard point set: six chains of 1, 1, 4, 4, 12 and 12 segments with the lengths of
    the angle set (about 1 unit long), f from 2 to 6 Hz, ζ from 0.3 to 1 (``POINT_FREQUENCY``,
    ``POINT_DAMPING``; per chain, replaced by ``frequency`` and ``damping_ratio``), rest lengths
    given (not taken from the first pose, so that a solver made anywhere has the same ones) and
    ``POINT_GRAVITY`` when ``gravity``. Every spring is at least 4.5× stronger than gravity and
    wind together on its segment (k·L > 4.5·|g + w0|), so the chains keep their shape.

    A point chain of many short segments is soft: each segment lags its parent's direction
    by about A/(ω0²·L) under a pivot acceleration A, and the lags add up along the chain. At
    f = 4 Hz, ζ = 0.5 the 12-segment chain folds over under :func:`point_body_motion` and
    whips its tip at 27 units/s, where the second-order error of frames' linear target
    interpolation (4× larger at 30 fps than at 60) grows to 7 % of the motion's amplitude;
    at 6 Hz, ζ = 0.7 it follows the body.
    """
    return PointChainSet(POINT_SEGMENT_COUNTS, POINT_FREQUENCY if frequency is None else frequency,
                         POINT_DAMPING if damping_ratio is None else damping_ratio,
                         rest_lengths=_standard_lengths(), gravity=POINT_GRAVITY if gravity else (0.0, 0.0, 0.0))


def standard_point_pose(cs: PointChainSet) -> np.ndarray:
    """(J, 3) float64: the standard set's animated pose in its body frame. Pivots on a row
    along x, 0.6 apart and centred on the origin, alternately 0.15 in front and behind; each
    chain hangs down and curves away from the vertical in its own vertical plane (azimuth
    60° × chain index), its polar angle growing from 0.15 to 0.75 rad root to tip."""
    lengths = cs.rest_lengths
    joints = np.empty((cs.joint_count, 3))
    for c, n in enumerate(cs.segment_counts):
        j0, s0 = int(cs.first_joint[c]), int(cs.first_segment[c])
        joints[j0] = [0.6 * (c - (cs.chain_count - 1) / 2), 0.0, 0.15 if c % 2 else -0.15]
        azimuth = c * math.pi / 3
        polar = 0.15 + 0.6 * np.arange(n) / max(n - 1, 1)
        direction = np.stack([np.sin(polar) * math.cos(azimuth), -np.cos(polar), np.sin(polar) * math.sin(azimuth)],
                             axis=1)
        joints[j0 + 1:j0 + n + 1] = joints[j0] + np.cumsum(direction * lengths[s0:s0 + n, None], axis=0)
    return joints


def _unit(v):
    v = np.asarray(v, np.float64)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def axis_rotation(axis, angle: float) -> np.ndarray:
    """(3, 3) the rotation by ``angle`` rad about ``axis`` (right-handed)."""
    x, y, z = _unit(axis)
    c, s = math.cos(angle), math.sin(angle)
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + s * k + (1.0 - c) * (k @ k)


def point_body_motion(t: float):
    """The primary motion of the point checks: the body (the pose of
    :func:`standard_point_pose`) moves by a translation of amplitude ``MOTION_AMPLITUDE`` (x,
    0.6 Hz; y half that, 1.1 Hz; z 0.3 of it, 0.8 Hz) and turns about the origin (yaw up to
    ``HEADING_AMPLITUDE`` rad, 0.4 Hz; pitch up to 0.25 rad, 0.7 Hz), from rest at t = 0.
    Returns (translation (3,), rotation (3, 3)); joints are ``translation + pose @ rotation.T``."""
    a = MOTION_AMPLITUDE
    translation = np.array([a * (1.0 - math.cos(TWO_PI * 0.6 * t)), 0.5 * a * (1.0 - math.cos(TWO_PI * 1.1 * t)),
                            0.3 * a * (1.0 - math.cos(TWO_PI * 0.8 * t))])
    yaw = 0.5 * HEADING_AMPLITUDE * (1.0 - math.cos(TWO_PI * 0.4 * t))
    pitch = 0.125 * (1.0 - math.cos(TWO_PI * 0.7 * t))
    return translation, axis_rotation((0.0, 1.0, 0.0), yaw) @ axis_rotation((1.0, 0.0, 0.0), pitch)


def _moved(pose, motion):
    translation, rotation = motion
    return translation + pose @ rotation.T


def _set_forces(solver, wind: bool, gusts: bool) -> None:
    if wind:
        solver.set_wind(POINT_WIND, **(POINT_GUST if gusts else {}))


def _force_vector(gravity: bool, wind: bool) -> np.ndarray:
    """(3,) the uniform acceleration g + w0 of a variant (gusts left out)."""
    return (np.asarray(POINT_GRAVITY) if gravity else np.zeros(3)) + (np.asarray(POINT_WIND) if wind else np.zeros(3))


def _point_chain_lengths(cs) -> np.ndarray:
    """(C,) each point chain's length (sum of its rest lengths)."""
    return np.add.reduceat(np.asarray(cs.rest_lengths, np.float64), cs.first_segment)


def _point_tip_joints(cs) -> np.ndarray:
    """(S,) each segment's tip in the (J,) joint arrays."""
    return np.arange(cs.segment_count) + np.repeat(np.arange(cs.chain_count), cs.segment_counts) + 1


def _settle(solver, seconds: float) -> None:
    """Run ``seconds`` in frames of ``max_substeps`` substeps (the pose held)."""
    step = solver.max_substeps * solver.substep
    for _ in range(int(round(seconds / step))):
        solver.advance(step)


def _run_variants(run, variants, backend, reference_default=REFERENCE_VARIANTS):
    """{variant name: run(gravity, wind)} for every (gravity, wind) of ``variants``; ``None``
    means ``FORCE_VARIANTS`` on the GPU and ``reference_default`` on the reference."""
    if variants is None:
        variants = FORCE_VARIANTS if backend == "gpu" else reference_default
    return {variant_name(g, w): run(bool(g), bool(w)) for g, w in variants}


# -- point 1. free decay --------------------------------------------------------------------
#: Light damping of the measured segment in the decay check, per chain (ζ·f ≤ 0.15: after 720
#: substeps the swing is still 1 % of the start, far above float32 noise), and which segment
#: that is in each chain. Every other segment keeps ζ = 1: a still, curved chain sits on its
#: targets only to float32 rounding (about 1e-8 here), and a lightly damped cascade amplifies
#: that by up to 1/(2ζ) per segment (at ζ = 0.02 a 12-segment chain left alone swings by a
#: third of its length within two seconds), so lightly damped ancestors would not stay still.
POINT_DECAY_FREQUENCY = (2.0, 6.0, 3.0, 4.0, 5.0, 3.0)
POINT_DECAY_DAMPING = (0.05, 0.02, 0.04, 0.03, 0.02, 0.04)
POINT_DECAY_DEPTH = (0, 0, 3, 1, 11, 6)
#: How far the measured segment's target is turned, rad, and the settling time (ζ = 1) before
#: and after the decay, s.
POINT_DECAY_TURN = 0.4
POINT_SETTLE = 2.0


def _point_decay_run(backend, gravity, wind, substeps, turn):
    cs = standard_point_chains(gravity, frequency=POINT_DECAY_FREQUENCY, damping_ratio=1.0)
    c = cs.chain_count
    depth = np.asarray(POINT_DECAY_DEPTH)
    pivot_joint = cs.first_joint
    base_joint = pivot_joint + depth          # the measured segment hangs from this joint
    tip_joint = base_joint + 1
    measured = cs.first_segment + depth
    pose = standard_point_pose(cs)
    displaced = pose.copy()
    for k, joints in enumerate(cs.joint_slices()):
        b = int(base_joint[k])
        axis = np.cross(pose[b + 1] - pose[b], [0.3, 0.4, 1.0])
        displaced[b + 1:joints.stop] = pose[b] + (pose[b + 1:joints.stop] - pose[b]) @ axis_rotation(axis, turn).T
    trace = np.empty((substeps + 1, cs.joint_count, 3))
    with Solver(cs, backend=backend, substep=SUBSTEP) as solver:
        _set_forces(solver, wind, gusts=False)
        solver.set_pose(joint_positions=pose)
        solver.advance(0.0)
        _settle(solver, POINT_SETTLE)           # ζ = 1: every particle comes to rest
        trace[0] = solver.positions(raw=True)
        light = np.ones(cs.segment_count)
        light[measured] = POINT_DECAY_DAMPING
        solver.set_parameters(damping_ratio=light)   # only the measured segments swing freely
        solver.set_pose(joint_positions=displaced)   # the one displacement, then held
        for j in range(1, substeps + 1):
            solver.advance(SUBSTEP)
            trace[j] = solver.positions(raw=True)
        solver.set_parameters(damping_ratio=1.0)
        _settle(solver, POINT_SETTLE)
        equilibrium = solver.positions(raw=True)
    base = equilibrium[base_joint]
    e1 = _unit(equilibrium[tip_joint] - base)               # along G: where it settles
    start = trace[0, tip_joint] - base
    e2 = _unit(start - np.sum(start * e1, axis=1, keepdims=True) * e1)
    e3 = np.cross(e1, e2)
    rel = trace[:, tip_joint] - base[None]
    deviation = np.arctan2(np.sum(rel * e2, axis=2), np.sum(rel * e1, axis=2))   # (T, C) rad, in plane
    lengths = np.asarray(cs.rest_lengths)[measured]
    out_of_plane = np.abs(np.sum(rel * e3, axis=2)) / lengths
    ancestors = np.concatenate([np.arange(pivot_joint[k] + 1, base_joint[k] + 1) for k in range(c)]).astype(int)
    chain_length = np.repeat(_point_chain_lengths(cs), cs.segment_counts + 1)
    ancestor_motion = (float((np.linalg.norm(trace[:, ancestors] - equilibrium[ancestors], axis=2)
                              / chain_length[ancestors]).max()) if ancestors.size else 0.0)
    peaks = [half_cycle_peaks(deviation[:, k]) for k in range(c)]
    return {"deviation": deviation, "peak_index": [p[0] for p in peaks], "peak_value": [p[1] for p in peaks],
            "e1": e1, "out_of_plane": float(out_of_plane.max()), "ancestor_motion": ancestor_motion,
            "length": lengths, "force": _force_vector(gravity, wind)}


def point_free_decay(backend: str, variants=None, substeps: int = 720,
                     turn: float = POINT_DECAY_TURN) -> CheckResult:
    """SPEC 8.1 for point chains: pivot pinned, one displacement, ζ > 0: every half-cycle's
    peak is strictly smaller than the one before, over at least 600 substeps.

    Per variant (gravity and constant wind w0 on or off; gusts would drive the chain): the
    standard point set with f = ``POINT_DECAY_FREQUENCY`` is posed, snapped and settled at
    ζ = 1 (``POINT_SETTLE`` s), so every particle rests where g + w0 holds it. Then the ζ of
    one segment per chain (``POINT_DECAY_DEPTH``) drops to ``POINT_DECAY_DAMPING`` and the
    pose changes once: in each chain the joints below that segment turn by ``turn`` rad about
    its base, so its target moves while its ancestors' targets stay. Its ancestors are at rest
    (and keep ζ = 1, see ``POINT_DECAY_DAMPING``), so its target is pinned.
    After ``substeps`` substeps (one per frame, ``raw=True``), ζ goes back to 1 and the chain
    settles again: that is the equilibrium. The measured coordinate is the segment's angle from
    its equilibrium direction in the plane of that direction and its start (the motion of a
    pendulum in a uniform field stays in that plane). Also held: the ancestors never move
    (≤ 1e-6 × chain length).
    """
    runs = _run_variants(lambda g, w: _point_decay_run(backend, g, w, substeps, turn), variants, backend)
    worst, covered, fewest, strictly = 0.0, substeps, 10 ** 9, True
    ancestor_motion = out_of_plane = 0.0
    details = {}
    for name, run in runs.items():
        ratios, decreasing, counts, last_peak_step = _peak_ratios(run["peak_index"], run["peak_value"])
        fewest = min([fewest] + counts)
        covered = min([covered] + last_peak_step)
        strictly &= decreasing
        worst = max(worst, max(ratios))
        ancestor_motion = max(ancestor_motion, run["ancestor_motion"])
        out_of_plane = max(out_of_plane, run["out_of_plane"])
        details[f"{name}: largest peak ratio"] = max(ratios)
    passed = strictly and worst < 1.0 and covered >= 600 and ancestor_motion <= 1e-6
    details.update({"half-cycles (fewest in a chain)": fewest,
                    "last peak at substep (earliest over chains, >= 600)": covered,
                    "ancestor motion / chain length (<= 1e-6)": ancestor_motion,
                    "peaks strictly decreasing": strictly,
                    "largest out-of-plane excursion / L (not held)": out_of_plane})
    return CheckResult(
        "point_decay", "point 1 free decay", worst, 1.0, passed,
        "largest ratio of a half-cycle peak to the one before, over the variants run", "", details=details,
        traces={"time": np.arange(substeps + 1) * SUBSTEP, "runs": runs, "depth": np.asarray(POINT_DECAY_DEPTH),
                "segment_counts": np.asarray(POINT_SEGMENT_COUNTS), "frequency": np.asarray(POINT_DECAY_FREQUENCY),
                "damping_ratio": np.asarray(POINT_DECAY_DAMPING), "turn": turn})


# -- point 2. rest --------------------------------------------------------------------------
#: The rest check's step: each chain's pose turns by this angle (rad) about its pivot.
POINT_REST_TURN = 0.5


def _point_rest_run(backend, gravity, wind, duration, fps):
    cs = standard_point_chains(gravity)
    pose = standard_point_pose(cs)
    turned = pose.copy()
    rotation = axis_rotation((1.0, 0.0, 1.0), POINT_REST_TURN)
    for joints in cs.joint_slices():
        turned[joints] = pose[joints.start] + (pose[joints] - pose[joints.start]) @ rotation.T
    tips = _point_tip_joints(cs)
    coarse = 8 * SUBSTEP         # the default max_substeps a frame, until the last two seconds
    coarse_frames = int(round((duration - 2.0) / coarse))
    fine_frames = int(round(2.0 * fps))
    times, positions = [], []
    with Solver(cs, backend=backend, substep=SUBSTEP) as solver:
        _set_forces(solver, wind, gusts=False)
        solver.set_pose(joint_positions=pose)    # snapped here
        solver.advance(0.0)
        solver.set_pose(joint_positions=turned)  # one step of the pose, then held
        for k in range(coarse_frames + fine_frames):
            solver.advance(coarse if k < coarse_frames else 1.0 / fps)
            times.append(solver.sim_time)
            positions.append(solver.positions()[tips])
        sim_time = solver.sim_time
        final = solver.positions()
    times = np.asarray(times)
    positions = np.asarray(positions)
    chain_length = np.repeat(_point_chain_lengths(cs), cs.segment_counts)
    movement = np.linalg.norm(np.diff(positions, axis=0), axis=2) / chain_length
    return {"time": times[1:], "movement": movement, "sim_time": sim_time, "fine_from": times[coarse_frames],
            "chain_of_segment": np.repeat(np.arange(cs.chain_count), cs.segment_counts), "final": final,
            "target": turned, "tips": tips, "chain_length": chain_length, "force": _force_vector(gravity, wind)}


def point_rest(backend: str, variants=None, duration: float = 60.0, fps: float = 60.0) -> CheckResult:
    """SPEC 8.2 for point chains: the targets still for ``duration`` s of sim time, with
    gravity and constant wind (each on or off in ``variants``; by default all four on the GPU,
    gravity + wind on the reference): in the last second no tip moves more than 1e-6 × its
    chain's length between frames.

    The standard point set is snapped onto its pose, then every chain's pose turns once by
    ``POINT_REST_TURN`` rad about its pivot and is held, so the chains swing (and sag under
    g + w0) before they rest. Frames are 1/15 s (8 substeps) until the last two seconds, then
    1/``fps`` s; the figure is over the frames of the last second.
    """
    # 60 s of sim time is about 15 s per variant in the reference: there only gravity + wind.
    runs = _run_variants(lambda g, w: _point_rest_run(backend, g, w, duration, fps), variants, backend,
                         reference_default=((True, True),))
    worst, details = 0.0, {}
    for name, run in runs.items():
        window = run["time"] > duration - 1.0 + 1e-9
        run["window"] = window
        figure = float(run["movement"][window].max())
        details[f"{name}: last second"] = figure
        details[f"{name}: first frame (did move, not held)"] = float(run["movement"][0].max())
        worst = max(worst, figure)
    first = next(iter(runs.values()))
    details["frames in the last second"] = int(first["window"].sum())
    details["sim time, s"] = first["sim_time"]
    return CheckResult(
        "point_rest", "point 2 rest", worst, 1e-6, worst <= 1e-6,
        "largest tip movement between frames in the last second / chain length, over the variants run", "",
        details=details, traces={"runs": runs, "duration": duration}, bound="<=")


# -- point 3. frame rates -------------------------------------------------------------------
def _point_frame_rate_run(backend, gravity, wind, duration, fps_list):
    cs = standard_point_chains(gravity)
    pose = standard_point_pose(cs)

    def make_solver():
        solver = Solver(cs, backend=backend, substep=SUBSTEP)
        _set_forces(solver, wind, gusts=True)
        return solver

    paths, compared = _tip_paths(make_solver,
                                 lambda solver, t: solver.set_pose(joint_positions=_moved(pose, point_body_motion(t))),
                                 _point_tip_joints(cs), duration, fps_list)
    worst, pair_worst, difference = _frame_rate_differences(compared, fps_list)
    pivots = np.array([_moved(pose, point_body_motion(k / 60.0))[cs.first_joint]
                       for k in range(int(round(duration * 60)) + 1)])
    excursion = float(np.linalg.norm(pivots - pivots[0], axis=2).max())
    return {"paths": paths, "compared": compared, "difference": difference, "pair_worst": pair_worst,
            "worst": worst, "pivot_excursion": excursion}


def point_frame_rates(backend: str, variants=None, duration: float = 3.0,
                      fps_list=FRAME_RATES) -> CheckResult:
    """SPEC 8.3 for point chains: the same primary motion (:func:`point_body_motion`: the
    whole rig translated and turned) at 30, 60 and 144 fps, compared at the multiples of 1/6 s:
    every tip agrees within ``FRAME_RATE_LIMIT`` × ``MOTION_AMPLITUDE`` between every pair of
    rates. Per variant: gravity on or off, and wind (w0 with ``POINT_GUST`` gusts, which depend
    on sim time and position) on or off. Positions are the frame-time output.
    """
    runs = _run_variants(lambda g, w: _point_frame_rate_run(backend, g, w, duration, fps_list), variants, backend)
    worst, details = 0.0, {}
    for name, run in runs.items():
        details[f"{name}: worst pair"] = run["worst"]
        worst = max(worst, run["worst"])
    first = next(iter(runs.values()))
    times = np.arange(len(first["compared"][fps_list[0]])) / 6.0
    details.update({"times compared": len(times), "motion amplitude, units": MOTION_AMPLITUDE,
                    "largest pivot excursion, units (not held)": first["pivot_excursion"]})
    cs = standard_point_chains()
    return CheckResult(
        "point_frame_rates", "point 3 frame rates", worst, FRAME_RATE_LIMIT, worst < FRAME_RATE_LIMIT,
        "largest tip distance between two frame rates at the shared times / motion amplitude, "
        "over the variants run", "",
        details=details, traces={"runs": runs, "times": times, "segment_counts": cs.segment_counts,
                                 "first_segment": cs.first_segment})


# -- point 5. teleport ----------------------------------------------------------------------
#: The point teleport: 2000 units, and the frame it happens on (at 60 fps the solver has then
#: simulated exactly 1 s, a whole gust period, so a solver made at the destination sees the
#: same gusts).
POINT_TELEPORT_JUMP = np.array([1200.0, 0.0, -1600.0])
POINT_TELEPORT_FRAME = 61
#: A solver that is rebased onto the destination when it jumps computes what one made there
#: computes (the same float32 numbers); one that keeps its origin holds its pivots 2000 units
#: away in float32 (spacing 1.2e-4), and agrees within this many of those spacings.
POINT_TELEPORT_SPACINGS = 10.0
POINT_TELEPORT_TOLERANCE = 1e-6


def _point_teleport_run(backend, gravity, wind, fps, after):
    """Two solvers play :func:`point_body_motion` about the origin and jump by
    ``POINT_TELEPORT_JUMP`` with ``teleport()`` on frame ``POINT_TELEPORT_FRAME``; one of them
    is rebased onto the destination as it jumps. A third is made at the destination on that
    frame. All get the same poses and wind; returns their frame-time positions (J, 3) and
    velocities (S, 3) per frame (the third from the jump frame on)."""
    cs = standard_point_chains(gravity)
    pose = standard_point_pose(cs)
    jump = POINT_TELEPORT_FRAME
    frames = jump + int(round(after * fps))
    names = ("rebased", "kept origin", "made there")
    positions = {name: [] for name in names}
    velocities = {name: [] for name in names}
    with contextlib.ExitStack() as stack:
        def new_solver():
            solver = stack.enter_context(Solver(cs, backend=backend, substep=SUBSTEP))
            _set_forces(solver, wind, gusts=True)
            return solver

        solvers = {"rebased": new_solver(), "kept origin": new_solver()}
        for k in range(frames + 1):
            joints = _moved(pose, point_body_motion(k / fps))
            if k >= jump:
                joints = joints + POINT_TELEPORT_JUMP
            if k == jump:
                jump_pose = joints
                sim_time_at_jump = solvers["rebased"].sim_time
                solvers["made there"] = new_solver()
            for name, solver in solvers.items():
                solver.set_pose(joint_positions=joints)
                if k == jump and name != "made there":
                    solver.teleport()
                    if name == "rebased":  # onto the origin a new solver picks: the mean pivot
                        solver.rebase(joints[cs.first_joint].mean(axis=0))
                solver.advance(0.0 if k == 0 else 1.0 / fps)
                positions[name].append(solver.positions())
                velocities[name].append(solver.velocities().astype(np.float64))
        origins = {name: solver.origin for name, solver in solvers.items()}
    return {"positions": {n: np.asarray(v) for n, v in positions.items()},
            "velocities": {n: np.asarray(v) for n, v in velocities.items()},
            "jump": jump, "jump_pose": jump_pose, "origins": origins, "sim_time_at_jump": sim_time_at_jump,
            "chain_length": np.repeat(_point_chain_lengths(cs), cs.segment_counts + 1),
            "tips": _point_tip_joints(cs), "pivots": np.asarray(cs.first_joint),
            "last_joints": cs.first_joint + cs.segment_counts,
            "force": _force_vector(gravity, wind), "gusts": wind}


def point_teleport(backend: str, variants=None, fps: float = 60.0, after: float = 1.5) -> CheckResult:
    """SPEC 8.5 for point chains: a 2000-unit jump with the flag: the next frame's velocities
    are zero and the chain sits on its targets; every later frame behaves as if it had always
    been there.

    See :func:`_point_teleport_run`: solvers A (rebased onto the destination as it jumps) and
    A' (keeping its origin, its pivots then 2000 units from it) against B, made at the
    destination on the jump frame. Frames are 1/60 s (two substeps), so the clocks agree.
    Wind (when on) has gusts at 1 Hz: A has run exactly 1 s at the jump, so B sees the same
    gusts. The jump frame runs its two substeps from the snapped state, so with g + w0 the
    chain has already started to move on it; it is held:
    * without gravity and wind: every tip within 1e-6 × chain length of its target and every
      velocity ≤ 1e-5 units/s;
    * with them: A and A' equal B on that frame (B's first pose snaps the same way), and no
      velocity exceeds what the frame's two substeps of g + w (gusts included) give from rest,
      n·h·(|g + w0| + A_gust).
    The figure: the largest position difference A vs B from the jump on, / chain length
    (≤ ``POINT_TELEPORT_TOLERANCE``); A' vs B is held to ``POINT_TELEPORT_SPACINGS`` float32
    spacings at 2000 units.
    """
    runs = _run_variants(lambda g, w: _point_teleport_run(backend, g, w, fps, after), variants, backend)
    spacing = float(np.spacing(np.float32(np.linalg.norm(POINT_TELEPORT_JUMP))))
    kept_limit = POINT_TELEPORT_SPACINGS * spacing
    worst = kept_worst = jump_position = jump_velocity = velocity_ratio = 0.0
    moving_before, jump_size = math.inf, math.inf
    details = {}
    substeps = int(round(1.0 / (fps * SUBSTEP)))
    for name, run in runs.items():
        jump, pos, vel = run["jump"], run["positions"], run["velocities"]
        scale = run["chain_length"][None, :, None]
        b_pos, b_vel = pos["made there"], vel["made there"]
        n = len(b_pos)
        a_diff = float((np.abs(pos["rebased"][-n:] - b_pos) / scale).max())
        kept_diff = float(np.abs(pos["kept origin"][-n:] - b_pos).max())
        velocity_diff = float(np.abs(vel["rebased"][-n:] - b_vel).max())
        worst, kept_worst = max(worst, a_diff), max(kept_worst, kept_diff)
        details[f"{name}: A vs B, / chain length"] = a_diff
        details[f"{name}: A' vs B, units"] = kept_diff
        details[f"{name}: A vs B velocity, units/s (not held)"] = velocity_diff
        tips = run["tips"]
        for solver in ("rebased", "kept origin"):
            on_target = float((np.linalg.norm(pos[solver][jump][tips] - run["jump_pose"][tips], axis=1)
                               / run["chain_length"][tips]).max())
            speed = float(np.linalg.norm(vel[solver][jump], axis=1).max())
            if not run["force"].any():
                jump_position, jump_velocity = max(jump_position, on_target), max(jump_velocity, speed)
            else:
                pull = np.linalg.norm(run["force"]) + (POINT_GUST["gust_amplitude"] if run["gusts"] else 0.0)
                velocity_ratio = max(velocity_ratio, speed / (substeps * SUBSTEP * pull))
            moving_before = min(moving_before, float(np.linalg.norm(vel[solver][jump - 1], axis=1).max()))
            pivots = run["pivots"]
            jump_size = min(jump_size, float(np.linalg.norm(pos[solver][jump][pivots] - pos[solver][jump - 1][pivots],
                                                            axis=1).min()))
    passed = (worst <= POINT_TELEPORT_TOLERANCE and kept_worst <= kept_limit and jump_position <= 1e-6
              and jump_velocity <= 1e-5 and velocity_ratio <= 1.0 and moving_before > 0.1 and jump_size > 1999.0)
    details.update({
        "jump frame, no forces: largest tip distance from target / chain length (<= 1e-6)": jump_position,
        "jump frame, no forces: largest |velocity|, units/s (<= 1e-5)": jump_velocity,
        "jump frame, forces: largest |velocity| / (n h |g + w|) (<= 1)": velocity_ratio,
        f"A' limit: {POINT_TELEPORT_SPACINGS:g} float32 spacings at 2000 units, units": kept_limit,
        "frame before the jump: largest |velocity|, units/s (> 0.1)": moving_before,
        "pivot jump, units (> 1999)": jump_size})
    return CheckResult(
        "point_teleport", "point 5 teleport", worst, POINT_TELEPORT_TOLERANCE, passed,
        "largest position difference, rebased teleported solver vs one made at the destination, "
        "/ chain length, over the variants run", "", details=details, traces={"runs": runs, "fps": fps}, bound="<=")


# -- point 6. cross-check -------------------------------------------------------------------
#: GPU vs reference for point chains. One substep agrees to float32 rounding; over a run the
#: rounding differences are carried along, and colliders and max distances are switches (a
#: particle a hair inside on one backend and outside on the other is pushed on one only), so
#: the whole run is held to a looser bound. Positions relative to the chain's length,
#: velocities relative to max(1 unit/s, |v|), rotations as quaternion distance.
POINT_CROSS_FIRST_FRAME_TOLERANCE = 1e-5
POINT_CROSS_TOLERANCE = 1e-2


def random_point_chains(rng, chain_count: int = 40, gravity: bool = True, substep: float = SUBSTEP) -> PointChainSet:
    """Ragged point chains (1-12 segments): rest lengths 0.03-0.15, ζ 0.3-1.2 (lighter damping
    makes long chains chaotic: a 1-ulp difference grows without bound), stable f up to 10 Hz,
    particle radii, max distances on a third of the segments, world influence (a fifth of the
    chains 1), collider masks over four groups, and ``POINT_GRAVITY`` when ``gravity``."""
    counts = rng.integers(1, 13, chain_count)
    s = int(counts.sum())
    zeta = rng.uniform(0.3, 1.2, s)
    f = np.minimum(rng.uniform(1.0, 10.0, s), 0.8 * stable_frequency(zeta, substep))
    influence = np.where(rng.random(chain_count) < 0.2, 1.0, rng.uniform(0.0, 1.0, chain_count))
    return PointChainSet(counts, f, zeta, rest_lengths=rng.uniform(0.03, 0.15, s),
                         particle_radius=rng.uniform(0.0, 0.02, s),
                         max_distance=np.where(rng.random(s) < 0.35, rng.uniform(0.05, 0.3, s), np.inf),
                         world_influence=influence, collider_mask=rng.integers(0, 16, chain_count),
                         gravity=POINT_GRAVITY if gravity else (0.0, 0.0, 0.0))


class _RandomBody:
    """Chains rooted on a moving body: pivots on a 0.4-unit sphere about its centre (upper
    part), each chain hanging out and down with a bend, swaying about its pivot; the body
    translates and turns. Colliders ride on it: a head sphere (group 0, radius 0.35), a
    shoulder capsule (group 1), a floor plane 1.2 below the start (group 2, still) and a
    sphere circling the body (group 3)."""

    def __init__(self, rng, cs):
        c = cs.chain_count
        self.cs = cs
        polar = rng.uniform(0.2, 1.7, c)
        azimuth = rng.uniform(0.0, TWO_PI, c)
        out = np.stack([np.sin(polar) * np.cos(azimuth), np.cos(polar), np.sin(polar) * np.sin(azimuth)], axis=1)
        self.pivot = 0.4 * out
        pose = np.empty((cs.joint_count, 3))
        lengths = np.asarray(cs.rest_lengths)
        for k, n in enumerate(cs.segment_counts):
            j0, s0 = int(cs.first_joint[k]), int(cs.first_segment[k])
            bend = np.linspace(0.0, 1.0, n)[:, None]
            direction = _unit(out[k] * (1.0 - bend) + np.array([0.0, -1.0, 0.0]) * (0.3 + bend))
            pose[j0] = self.pivot[k]
            pose[j0 + 1:j0 + n + 1] = self.pivot[k] + np.cumsum(direction * lengths[s0:s0 + n, None], axis=0)
        self.pose = pose
        self.sway_axis = _unit(rng.normal(size=(c, 3)))
        self.sway = rng.uniform(0.0, 0.5, c)
        self.sway_hz = rng.uniform(0.3, 2.0, c)
        self.phase = rng.uniform(0.0, TWO_PI, (4,))
        self.offset = np.zeros(3)

    def motion(self, t):
        p = self.phase
        translation = self.offset + np.array([0.6 * math.sin(TWO_PI * 0.5 * t + p[0]),
                                              0.3 * math.sin(TWO_PI * 0.9 * t + p[1]),
                                              0.4 * math.sin(TWO_PI * 0.35 * t + p[2])])
        rotation = (axis_rotation((0.0, 1.0, 0.0), 1.5 * math.sin(TWO_PI * 0.3 * t + p[3]))
                    @ axis_rotation((1.0, 0.0, 0.0), 0.4 * math.sin(TWO_PI * 0.7 * t)))
        return translation, rotation

    def joints(self, t):
        cs = self.cs
        local = self.pose.copy()
        for k, joints in enumerate(cs.joint_slices()):
            turn = axis_rotation(self.sway_axis[k], self.sway[k] * math.sin(TWO_PI * self.sway_hz[k] * t))
            local[joints] = self.pivot[k] + (self.pose[joints] - self.pivot[k]) @ turn.T
        return _moved(local, self.motion(t))

    def colliders(self, t):
        translation, rotation = self.motion(t)
        shoulder = translation + np.array([[-0.5, -0.45, 0.0], [0.5, -0.45, 0.0]]) @ rotation.T
        orbit = translation + 0.7 * np.array([math.cos(TWO_PI * 0.4 * t), -0.3, math.sin(TWO_PI * 0.4 * t)])
        return {"spheres": [[*translation, 0.35], [*orbit, 0.15]], "sphere_groups": [0, 3],
                "capsules": [[*shoulder[0], *shoulder[1], 0.12]], "capsule_groups": [1],
                "planes": [[0.0, 1.0, 0.0, self.offset[1] - 1.2]], "plane_groups": [2]}


def _quaternion_distance(a, b):
    """Per row, min(|a - b|, |a + b|): q and -q are the same rotation."""
    return np.minimum(np.linalg.norm(a - b, axis=-1), np.linalg.norm(a + b, axis=-1))


def _point_cross_events(frames: int) -> dict:
    """The frames of the cross-check's events, away from the phase boundaries."""
    return {"f, ζ change": int(0.2 * frames), "0.2 s frame": int(0.35 * frames), "teleport": int(0.55 * frames),
            "rebase": int(0.85 * frames)}


def point_cross_check(backend: str = "gpu", variants=FORCE_VARIANTS, frames: int = 240, seed: int = 11) -> CheckResult:
    """SPEC 8.6 for point chains: the compute shaders against the numpy reference on random
    ragged chains (:func:`random_point_chains`) rooted on a moving, turning body
    (:class:`_RandomBody`) with colliders of every kind and group riding on it.

    The run is cut into one phase per variant of ``variants`` (by default four phases of 60
    frames: no forces, gravity, wind, both; wind is w0 with ``POINT_GUST`` gusts), switched
    live with ``set_parameters(gravity=...)`` and ``set_wind``. Frame times of 1/30, 1/60,
    1/144 s, zero and 0.2 s (past the cap); a live change of f and ζ; snap and keep-shape
    teleports of the whole body by 330 units (colliders snapped); a rebase. Every frame
    compares joint positions (frame-time and raw), velocities (both) and segment rotations.
    ``backend`` is accepted for a uniform signature; the check needs both backends and is
    skipped without a GL 4.3 context.
    """
    name, title = "point_cross_check", "point 6 cross-check gpu vs cpu"
    ok, reason = gpu_available()
    if not ok:
        return CheckResult(name, title, math.nan, POINT_CROSS_TOLERANCE, None, "largest difference gpu vs cpu", "",
                           note=f"skipped: {reason}", bound="<=")
    variants = [(bool(g), bool(w)) for g, w in variants]
    rng = np.random.default_rng(seed)
    cs = random_point_chains(rng, gravity=False)
    c = cs.chain_count
    body = _RandomBody(rng, cs)
    scale = np.repeat(_point_chain_lengths(cs), cs.segment_counts + 1)[:, None]
    new_frequency, new_damping = _more_damped(cs, 0.2)
    dts = _random_frame_times(rng, frames)
    events = _point_cross_events(frames)
    dts[events["0.2 s frame"]] = 0.2       # past the substep cap
    phase = np.minimum(np.arange(frames) * len(variants) // frames, len(variants) - 1)
    kinds = ("position", "raw position", "velocity", "raw velocity", "rotation")
    worst = {variant_name(*v): dict.fromkeys(kinds, 0.0) for v in variants}
    per_frame = np.zeros(frames)
    first = None
    same_clock = True
    t = 0.0
    with Solver(cs, backend="cpu", substep=SUBSTEP) as ref, Solver(cs, backend="gpu", substep=SUBSTEP) as gpu:
        for k in range(frames):
            t += dts[k]
            gravity, wind = variants[phase[k]]
            if k == events["teleport"]:
                body.offset = body.offset + np.array([300.0, -40.0, 120.0])   # flagged below: a teleport
            joints = body.joints(t)
            for solver in (ref, gpu):
                if k == 0 or phase[k] != phase[k - 1]:
                    solver.set_parameters(gravity=POINT_GRAVITY if gravity else (0.0, 0.0, 0.0))
                    solver.set_wind(POINT_WIND, **POINT_GUST) if wind else solver.set_wind()
                solver.set_pose(joint_positions=joints)
                solver.set_colliders(**body.colliders(t), snap=k == events["teleport"])
                if k == events["teleport"]:
                    _teleport_halves(solver, c)
                if k == events["f, ζ change"]:
                    solver.set_parameters(frequency=new_frequency, damping_ratio=new_damping)
                if k == events["rebase"]:
                    solver.rebase(body.offset + np.array([0.0, -0.5, 0.0]))
                solver.advance(float(dts[k]))
            v_ref = ref.velocities().astype(np.float64)
            raw_v_ref = ref.velocities(raw=True).astype(np.float64)
            frame = {
                "position": np.abs(ref.positions() - gpu.positions()) / scale,
                "raw position": np.abs(ref.positions(raw=True) - gpu.positions(raw=True)) / scale,
                "velocity": np.abs(v_ref - gpu.velocities()) / np.maximum(1.0, np.abs(v_ref)),
                "raw velocity": np.abs(raw_v_ref - gpu.velocities(raw=True)) / np.maximum(1.0, np.abs(raw_v_ref)),
                "rotation": _quaternion_distance(ref.segment_rotations().astype(np.float64),
                                                 gpu.segment_rotations().astype(np.float64)),
            }
            phase_worst = worst[variant_name(gravity, wind)]
            for kind, value in frame.items():
                phase_worst[kind] = max(phase_worst[kind], float(value.max()))
            per_frame[k] = max(float(v.max()) for v in frame.values())
            if first is None and ref.sim_time > 0:
                first = per_frame[k]
            same_clock &= ref.sim_time == gpu.sim_time and ref.dropped_time == gpu.dropped_time
    figure = float(per_frame.max())
    details = {}
    for variant, by_kind in worst.items():
        details[f"{variant}: largest difference"] = max(by_kind.values())
        details[f"{variant}: by kind"] = ", ".join(f"{kind} {v:.2g}" for kind, v in by_kind.items())
    passed = (figure <= POINT_CROSS_TOLERANCE and first is not None and first <= POINT_CROSS_FIRST_FRAME_TOLERANCE
              and same_clock)
    details.update({f"first frame with substeps (<= {POINT_CROSS_FIRST_FRAME_TOLERANCE:g})": first,
                    "same sim and dropped time": same_clock, "chains": c, "segments": cs.segment_count,
                    "frames": frames})
    return CheckResult(
        name, title, figure, POINT_CROSS_TOLERANCE, passed,
        "largest difference gpu vs cpu over the run (position / chain length; velocity relative to "
        "max(1, |v|); rotation as quaternion distance)", "", details=details,
        traces={"per_frame": per_frame, "dt": dts, "phase": phase, "events": events,
                "phase_names": [variant_name(*v) for v in variants], "worst": worst}, bound="<=")

#: Every check ``run_all`` runs: the angle chains', then the point chains' (all four force
#: variants each).
CHECKS = (free_decay, rest, frame_rates, wraparound, teleport, cross_check,
          point_free_decay, point_rest, point_frame_rates, point_teleport, point_cross_check)


def run_all(backend: str, checks=None) -> list[CheckResult]:
    """Run every check of ``checks`` (default :data:`CHECKS`) on ``backend`` (``"cpu"`` or
    ``"gpu"``); the cross-check runs when an OpenGL 4.3 context can be made and is reported
    as skipped otherwise.

    A check that raises is reported as failed, with the exception in its note, and the
    others still run: one broken check should not hide what the rest measured.
    """
    results = []
    for check in CHECKS if checks is None else checks:
        try:
            results.append(check(backend))
        except Exception as exc:  # reported in the table, not swallowed
            name = check.__name__
            results.append(CheckResult(name, name.replace("_", " "), math.nan, math.nan, False, "the check raised",
                                       note=f"error: {type(exc).__name__}: {exc}"))
    return results


def format_table(results) -> str:
    """The results as a text table: check, figure, limit, pass/fail; then the details."""
    rows = [("check", "figure", "limit", "result")]
    for r in results:
        unit = f" {r.unit}" if r.unit else ""
        figure = "-" if r.passed is None else f"{r.figure:.3g}{unit}"
        rows.append((r.title, figure, f"{r.bound} {r.limit:.3g}{unit}", r.status))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("")
    for r in results:
        lines.append(f"{r.title}: {r.measure}")
        if r.note:
            lines.append(f"    {r.note}")
        for name, value in r.details.items():
            text = f"{value:.4g}" if isinstance(value, float) else str(value)
            lines.append(f"    {name}: {text}")
    return "\n".join(lines)


# -- plots --------------------------------------------------------------------------------------
def write_plots(results, out_dir) -> list[Path]:
    """One PNG per check that has traces, into ``out_dir`` (made if missing). Returns the paths.

    Figures are drawn with matplotlib's object API on the Agg canvas (no pyplot), so this
    neither needs a display nor changes the caller's matplotlib backend.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    painters = {"decay": _plot_decay, "rest": _plot_rest, "frame_rates": _plot_frame_rates,
                "wraparound": _plot_wraparound, "teleport": _plot_teleport, "cross_check": _plot_cross_check,
                "point_decay": _plot_point_decay, "point_rest": _plot_point_rest,
                "point_frame_rates": _plot_point_frame_rates, "point_teleport": _plot_point_teleport,
                "point_cross_check": _plot_point_cross_check}
    written = []
    for r in results:
        if r.name not in painters or not r.traces:
            continue
        fig, title = painters[r.name](r)
        fig.suptitle(f"{title} [{r.status}]")
        path = out / f"{r.name}.png"
        fig.savefig(path, dpi=100)
        written.append(path)
    return written


def _figure(figsize):
    from matplotlib.figure import Figure  # Agg canvas; no pyplot state

    return Figure(figsize=figsize, layout="constrained")


def _label_decay_panel(ax, log_ax, tr, k: int, bottom: bool, ylabel: str) -> None:
    """Title and axis labels of chain ``k``'s panel in a free-decay plot (``bottom``: the
    panel is in the bottom row, where the time axis is labelled)."""
    log_ax.set_ylabel("|peak| (rad, log)", fontsize=8)
    ax.set_title(f"chain {k}: segment {tr['depth'][k] + 1} of {tr['segment_counts'][k]}, "
                 f"f={tr['frequency'][k]:g} Hz, ζ={tr['damping_ratio'][k]:g}", fontsize=9)
    ax.set_ylabel(ylabel)
    if bottom:
        ax.set_xlabel("time (s)")


def _plot_decay(r):
    tr = r.traces
    n = len(tr["segment"])
    fig = _figure((15, 7))
    axes = fig.subplots(2, (n + 1) // 2, sharex=True)
    for k, ax in enumerate(axes.flat[:n]):
        dev = tr["deviation"][:, k]
        idx = tr["peak_index"][k]
        line, = ax.plot(tr["time"], dev, lw=1.0, label="angle - target (left)")
        dots, = ax.plot(tr["time"][idx], dev[idx], "o", ms=3.5, color="C3", label="half-cycle peaks (left)")
        mark = ax.axvline(600 * SUBSTEP, color="0.5", ls=":", lw=1, label="600 substeps")
        log_ax = ax.twinx()
        logs, = log_ax.semilogy(tr["time"][idx], tr["peak_value"][k], ".-", color="C2", lw=0.8, ms=3,
                                label="|peak| (right, log)")
        _label_decay_panel(ax, log_ax, tr, k, k >= n - axes.shape[1], "deviation from target (rad)")
        ax.legend(handles=[line, dots, logs, mark], fontsize=7, loc="upper right")
    return fig, (f"1 free decay: one displaced segment per chain, targets pinned "
                 f"(largest peak ratio {r.figure:.3f})")


def _plot_rest(r):
    tr = r.traces
    fig = _figure((10, 5))
    ax = fig.subplots()
    per_chain = np.stack([tr["movement"][:, tr["chain_of_segment"] == k].max(axis=1)
                          for k in range(len(tr["per_chain"]))], axis=1)
    floor = 1e-12
    for k in range(per_chain.shape[1]):
        ax.semilogy(tr["time"], np.maximum(per_chain[:, k], floor), lw=1, label=f"chain {k}")
    ax.axhline(r.limit, color="C3", ls="--", label=f"limit {r.limit:g}")
    ax.axvspan(tr["duration"] - 1.0, tr["duration"], color="0.85", label="last second")
    ax.set_xlabel("sim time (s)")
    ax.set_ylabel("largest tip movement between frames / chain length")
    ax.legend(fontsize=8, ncol=2)
    return fig, f"2 rest with gravity: tip movement per frame (last second: {r.figure:.2g}; zero drawn at {floor:g})"


def _plot_tip_paths(axes, chains, tr, paths, compared, before: str, after: str) -> None:
    """One panel per chain of ``chains``: its tip's path (x, y) at each frame rate, with
    crosses at the shared times; titles read ``before`` + "tip of chain …" + ``after``."""
    fps_list = sorted(paths)
    for ax, chain in zip(axes, chains):
        tip = tr["first_segment"][chain] + tr["segment_counts"][chain] - 1
        for i, fps in enumerate(fps_list):
            path = paths[fps][:, tip]
            ax.plot(path[:, 0], path[:, 1], lw=1.0 + 1.2 * (len(fps_list) - 1 - i), label=f"{fps} fps", alpha=0.8)
            cmp = compared[fps][:, tip]
            ax.plot(cmp[:, 0], cmp[:, 1], "x", ms=5, color=f"C{i}")
        n = tr["segment_counts"][chain]
        ax.set_title(f"{before}tip of chain {chain} ({n} segment{'s' if n > 1 else ''}){after}", fontsize=9)
        ax.set_xlabel("x (units)")
        ax.set_ylabel("y (units)")
        ax.set_aspect("equal", "datalim")
        ax.legend(fontsize=7)


def _label_difference_panel(ax, limit: float, ylabel: str) -> None:
    """The limit line and the labels of a frame-rate plot's last panel: the difference
    between frame rates (in % of the motion's amplitude) at the shared times."""
    ax.axhline(100 * limit, color="C3", ls="--", label=f"limit {100 * limit:g} %")
    ax.set_xlabel("time (s), multiples of 1/6")
    ax.set_ylabel(ylabel)
    ax.set_title("difference at the shared times", fontsize=9)
    ax.legend(fontsize=7)


def _plot_frame_rates(r):
    tr = r.traces
    fps_list = sorted(tr["paths"])
    shown = [1, 3, 4, 5]  # chains: 1-segment, 4-segment, and both 12-segment chains
    fig = _figure((19, 4.8))
    axes = fig.subplots(1, len(shown) + 1)
    _plot_tip_paths(axes, shown, tr, tr["paths"], tr["compared"], "", "")
    ax = axes[-1]
    ax.plot(tr["times"], 100 * tr["difference"], "o-", ms=3, label="largest tip distance vs 144 fps")
    _label_difference_panel(ax, r.limit, "distance / motion amplitude (%)")
    return fig, (f"3 frame rates: tip paths at {', '.join(map(str, fps_list))} fps (x: shared times), "
                 f"worst {100 * r.figure:.2f} % of the amplitude")


def _plot_wraparound(r):
    tr = r.traces
    cps = len(tr["segment_counts"]) // 2
    fig = _figure((15, 8))
    axes = fig.subplots(2, 2, sharex=True)
    for row, (name, offset) in enumerate((("counter-clockwise", 0), ("clockwise", cps))):
        ax = axes[row, 0]
        for i, chain in enumerate((offset + 1, offset + 4)):
            seg = tr["first_segment"][chain] + tr["segment_counts"][chain] - 1
            n = tr["segment_counts"][chain]
            ax.plot(tr["time"], tr["tau"][:, seg] / TWO_PI, color=f"C{2 * i}", lw=3, alpha=0.4,
                    label=f"target τ, tip of a {n}-segment chain")
            ax.plot(tr["time"], tr["phi"][:, seg] / TWO_PI, color=f"C{2 * i + 1}", lw=1,
                    label=f"angle φ, tip of a {n}-segment chain")
        ax.plot(tr["time"], tr["heading"][:, offset] / TWO_PI, "k:", lw=1, label="root heading Θ")
        ax.set_ylabel("unwrapped angle (turns)")
        ax.set_title(f"{name}: root turns 5×, then λ0 turns once and the tip's λ crosses ±π", fontsize=9)
        ax.legend(fontsize=7)
        ax = axes[row, 1]
        in_copy = (tr["chain_of_segment"] >= offset) & (tr["chain_of_segment"] < offset + cps)
        err = tr["error"][:, in_copy]
        ax.plot(tr["time"], err, lw=0.6, alpha=0.6)
        ax.plot([], [], lw=0.6, color="C0", label="wrap(φ - τ), every segment")
        ax.axhline(r.limit, color="C3", ls="--", label="±π/2 (limit)")
        ax.axhline(-r.limit, color="C3", ls="--")
        ax.set_ylim(-math.pi, math.pi)
        ax.set_ylabel("angle - target (rad)")
        ax.set_title(f"{name}: tracking error (a long way round would reach ±π)", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    for ax in axes[1]:
        ax.set_xlabel("time (s)")
    return fig, f"4 wraparound: largest |wrap(φ - τ)| = {r.figure:.3f} rad"


def _plot_teleport(r):
    tr = r.traces
    jump = tr["jump"]
    time = tr["time"]
    fig = _figure((14, 4.8))
    axes = fig.subplots(1, 2)
    chain = 4
    tip = tr["first_segment"][chain] + tr["segment_counts"][chain] + chain  # joint index of its tip
    root = tr["first_segment"][chain] + chain
    rel_a = tr["a_pos"][:, tip] - tr["a_pos"][:, root]
    rel_b = tr["b_pos"][:, tip] - tr["b_pos"][:, root]
    ax = axes[0]
    for axis, name in enumerate("xy"):
        ax.plot(time, rel_a[:, axis], lw=2.5, alpha=0.5, label=f"teleported, tip {name} - root {name}")
        ax.plot(time[jump:], rel_b[:, axis], lw=1, ls="--", label=f"made at destination, tip {name} - root {name}")
    ax.axvline(time[jump], color="0.4", ls=":", label="jump of 2000 units")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("tip relative to root (units)")
    ax.set_title("12-segment chain, with gravity", fontsize=9)
    ax.legend(fontsize=7)
    ax = axes[1]
    diff = np.abs(wrap(tr["a_angle"][jump:] - tr["b_angle"])).max(axis=1)
    ax.semilogy(time[jump:], np.maximum(diff, 1e-12), "o-", ms=2, label="largest angle difference")
    ax.axhline(r.limit, color="C3", ls="--", label=f"limit {r.limit:g} rad")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("angle difference (rad), zero drawn at 1e-12")
    ax.set_title("teleported vs made at the destination, all chains", fontsize=9)
    ax.legend(fontsize=7)
    return fig, "5 teleport: after the jump the chain moves as if it had always been there"


def _cross_check_axes(r, figsize, first_frame_limit):
    """A cross-check's figure and axes: the largest difference per frame (log), with the
    limit and the first frame's limit."""
    fig = _figure(figsize)
    ax = fig.subplots()
    per_frame = r.traces["per_frame"]
    ax.semilogy(np.arange(len(per_frame)), np.maximum(per_frame, 1e-12), lw=1, label="largest difference gpu vs cpu")
    ax.axhline(r.limit, color="C3", ls="--", label=f"limit {r.limit:g}")
    ax.axhline(first_frame_limit, color="C1", ls=":", label=f"first-frame limit {first_frame_limit:g}")
    return fig, ax


def _plot_cross_check(r):
    fig, ax = _cross_check_axes(r, (10, 4.8), CROSS_FIRST_FRAME_TOLERANCE)
    ax.set_xlabel("frame")
    ax.set_ylabel("difference (rad, or / chain length), zero drawn at 1e-12")
    ax.legend(fontsize=8)
    return fig, "6 cross-check: compute shaders vs numpy reference on random ragged chains"


_VARIANT_COLOURS = {"none": "C0", "gravity": "C1", "wind": "C2", "gravity + wind": "C3"}


def _plot_point_decay(r):
    tr = r.traces
    runs = tr["runs"]
    shown = list(runs)[-1]          # the trace drawn in full; the peaks of every variant
    run = runs[shown]
    n = len(tr["depth"])
    fig = _figure((16, 7.5))
    axes = fig.subplots(2, (n + 1) // 2, sharex=True)
    time = tr["time"]
    for k, ax in enumerate(axes.flat[:n]):
        dev = run["deviation"][:, k]
        idx = run["peak_index"][k]
        line, = ax.plot(time, dev, lw=0.9, color="0.35", label=f"angle from equilibrium, {shown} (left)")
        dots, = ax.plot(time[idx], dev[idx], "o", ms=3, color="k", label="its half-cycle peaks (left)")
        mark = ax.axvline(600 * SUBSTEP, color="0.5", ls=":", lw=1, label="600 substeps")
        log_ax = ax.twinx()
        handles = [line, dots, mark]
        for variant, other in runs.items():
            h, = log_ax.semilogy(time[other["peak_index"][k]], other["peak_value"][k], ".-", ms=2.5, lw=0.8,
                                 color=_VARIANT_COLOURS.get(variant, "C4"), label=f"|peak|, {variant} (right, log)")
            handles.append(h)
        _label_decay_panel(ax, log_ax, tr, k, k >= n - axes.shape[1], "angle from equilibrium (rad)")
        if k == 0:
            ax.legend(handles=handles, fontsize=6.5, loc="upper right")
    return fig, (f"point 1 free decay: one segment per chain displaced {tr['turn']:g} rad, its target pinned "
                 f"(largest peak ratio {r.figure:.3f})")


def _plot_point_rest(r):
    tr = r.traces
    runs = tr["runs"]
    fig = _figure((14, 4.2 * ((len(runs) + 1) // 2)))
    axes = np.atleast_1d(fig.subplots((len(runs) + 1) // 2, min(len(runs), 2), sharex=True, squeeze=False)).ravel()
    floor = 1e-12
    for ax, (variant, run) in zip(axes, runs.items()):
        chains = run["chain_of_segment"]
        for k in range(int(chains.max()) + 1):
            ax.semilogy(run["time"], np.maximum(run["movement"][:, chains == k].max(axis=1), floor), lw=0.9,
                        label=f"chain {k}")
        ax.axhline(r.limit, color="C3", ls="--", label=f"limit {r.limit:g}")
        ax.axvspan(tr["duration"] - 1.0, tr["duration"], color="0.85", label="last second")
        ax.axvline(run["fine_from"], color="0.5", ls=":", label="1/15 s frames | 1/60 s frames")
        ax.set_title(f"{variant}: last second {r.details[f'{variant}: last second']:.2g}", fontsize=9)
        ax.set_xlabel("sim time (s)")
        ax.set_ylabel("tip movement per frame / chain length")
        ax.legend(fontsize=7, ncol=3)
    return fig, f"point 2 rest: every chain's pose turned once, then held (zero drawn at {floor:g})"


def _plot_point_frame_rates(r):
    tr = r.traces
    runs = tr["runs"]
    shown = list(runs)[-1]
    run = runs[shown]
    fps_list = sorted(run["paths"])
    chains = [1, 3, 4, 5]
    fig = _figure((19, 4.8))
    axes = fig.subplots(1, len(chains) + 1)
    _plot_tip_paths(axes, chains, tr, run["paths"], run["compared"], f"{shown}: ", ", front view")
    ax = axes[-1]
    for variant, other in runs.items():
        ax.plot(tr["times"], 100 * other["difference"], "o-", ms=3, lw=1, color=_VARIANT_COLOURS.get(variant, "C4"),
                label=variant)
    _label_difference_panel(ax, r.limit, "largest tip distance vs 144 fps / amplitude (%)")
    return fig, (f"point 3 frame rates: tip paths at {', '.join(map(str, fps_list))} fps (x: shared times), "
                 f"worst {100 * r.figure:.2f} % of the amplitude")


def _plot_point_teleport(r):
    tr = r.traces
    runs = tr["runs"]
    shown = list(runs)[-1]
    run = runs[shown]
    jump = run["jump"]
    time = np.arange(len(run["positions"]["rebased"])) / tr["fps"]
    fig = _figure((15, 5.6))
    axes = fig.subplots(1, 2)
    chain = 4
    pivot = run["pivots"][chain]
    tip = run["last_joints"][chain]
    ax = axes[0]
    a = run["positions"]["rebased"]
    b = run["positions"]["made there"]
    for axis, name in enumerate("xyz"):
        ax.plot(time, a[:, tip, axis] - a[:, pivot, axis], lw=2.5, alpha=0.45, color=f"C{axis}",
                label=f"teleported: tip {name} - pivot {name}")
        ax.plot(time[jump:], b[:, tip, axis] - b[:, pivot, axis], lw=1, ls="--", color=f"C{axis}",
                label=f"made at the destination: tip {name} - pivot {name}")
    ax.axvline(time[jump], color="0.4", ls=":", label="jump of 2000 units")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("tip relative to pivot (units)")
    ax.set_title(f"chain {chain} (12 segments), {shown}", fontsize=9)
    ax.legend(fontsize=6.5, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.13))
    ax = axes[1]
    floor = 1e-12
    for variant, other in runs.items():
        pos = other["positions"]
        n = len(pos["made there"])
        colour = _VARIANT_COLOURS.get(variant, "C4")
        kept = np.abs(pos["kept origin"][-n:] - pos["made there"]).max(axis=(1, 2))
        rebased = np.abs(pos["rebased"][-n:] - pos["made there"]).max(axis=(1, 2))
        ax.semilogy(time[jump:], np.maximum(kept, floor), "-", lw=1, color=colour, label=f"kept origin, {variant}")
        ax.semilogy(time[jump:], np.maximum(rebased, floor), "o", ms=2, color=colour, label=f"rebased, {variant}")
    kept_limit = [v for k, v in r.details.items() if k.startswith("A' limit")][0]
    ax.axhline(kept_limit, color="C3", ls="--", label=f"kept-origin limit {kept_limit:.2g} units")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("largest position difference (units)")
    ax.set_title(f"teleported solvers vs one made at the destination, all joints (zero drawn at {floor:g})",
                 fontsize=9)
    ax.legend(fontsize=6.5, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.13))
    return fig, "point 5 teleport: after the jump the chains move as if they had always been there"


def _plot_point_cross_check(r):
    tr = r.traces
    fig, ax = _cross_check_axes(r, (11, 4.8), POINT_CROSS_FIRST_FRAME_TOLERANCE)
    phase = tr["phase"]
    for i, name in enumerate(tr["phase_names"]):
        where = np.flatnonzero(phase == i)
        if where.size:
            ax.axvline(where[0], color="0.6", lw=0.8)
            ax.text(where[0] + 1, r.limit * 1.3, name, fontsize=8, va="bottom")
    for label, frame in tr["events"].items():
        ax.annotate(label, (frame, tr["per_frame"][frame]), xytext=(0, 18), textcoords="offset points", fontsize=7,
                    ha="center", arrowprops={"arrowstyle": "->", "lw": 0.6})
    ax.set_ylim(1e-9, r.limit * 10)
    ax.set_xlabel("frame")
    ax.set_ylabel("difference (/ chain length, relative, quaternion)")
    ax.legend(fontsize=8, loc="lower right")
    return fig, "point 6 cross-check: compute shaders vs numpy reference, random chains, colliders, wind phases"

"""SPEC section 8, properties 1-5 on angle chains: :func:`free_decay`, :func:`rest`,
:func:`frame_rates`, :func:`wraparound`, :func:`teleport` (property 6 is in
:mod:`gpu_jiggle.verify.cross`).

Each check takes a backend name (``"cpu"`` or ``"gpu"``), drives the public
:class:`~gpu_jiggle.Solver` through a scripted motion (the rigs and motions are in
:mod:`gpu_jiggle.verify.scenarios`) and returns a :class:`CheckResult` with the measured
figure, the limit it is held to, and the traces the plots need.

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

import numpy as np

from ..sim.chains import AngleChainSet
from .measure import (new_solver, FRAME_RATE_LIMIT, FRAME_RATES, chain_lengths, cumulative, frame_rate_differences,
                      half_cycle_peaks, parent_angle, peak_ratios, ramp, tip_joints, tip_paths, wrap)
from .result import CheckResult
from .scenarios import MOTION_AMPLITUDE, SUBSTEP, TWO_PI, root_motion, standard_chains


# -- 1. free decay ------------------------------------------------------------------------------
#: Light damping for the decay check, per chain of the standard set: ζ·f ≤ 0.3, so that every
#: half-cycle in 720 substeps is still far above float32 noise.
DECAY_FREQUENCY = [2.0, 1.0, 3.0, 2.5, 4.0, 3.0]
DECAY_DAMPING = [0.05, 0.3, 0.03, 0.1, 0.02, 0.04]
#: The segment each chain's displacement is applied to (depth in its chain).
DECAY_DEPTH = [0, 0, 3, 1, 11, 6]


def free_decay(backend: str, substeps: int = 720, displacement: float = 0.5, options=None) -> CheckResult:
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
    with new_solver(cs, backend, options) as solver:
        solver.set_pose(root_position, root_angle, local)  # the first pose snaps the chains here
        solver.advance(0.0)
        local[segment] = 0.0
        solver.set_pose(root_position, root_angle, local)
        angles[0] = solver.angles(raw=True)
        for j in range(1, substeps + 1):
            solver.advance(SUBSTEP)
            angles[j] = solver.angles(raw=True)
    start = angles[0]
    target = wrap(cumulative(cs, root_angle, local))
    time = np.arange(substeps + 1) * SUBSTEP
    deviation = wrap(angles[:, segment] - target[segment])

    peaks = [half_cycle_peaks(deviation[:, k]) for k in range(c)]
    peak_index, peak_value = [p[0] for p in peaks], [p[1] for p in peaks]
    ratios, strictly, counts, last_peak_step = peak_ratios(peak_index, peak_value)
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
                "length": cs.lengths[segment], "gravity": float(np.linalg.norm(cs.gravity[0]))})


# -- 2. rest ------------------------------------------------------------------------------------
def rest(backend: str, duration: float = 60.0, fps: float = 60.0, options=None) -> CheckResult:
    """SPEC 8.2: targets still for ``duration`` s of sim time, with gravity: in the last second
    no tip moves more than 1e-6 × its chain's length between frames.

    The standard set is posed leaning sideways (Θ = 0.3, λ = 0.15 per segment) so that gravity
    bends it; the first pose snaps it onto the unbent targets and it swings into its sag.
    """
    cs = standard_chains()
    c, s = cs.chain_count, cs.segment_count
    frames = int(round(duration * fps))
    dt = 1.0 / fps
    tips = tip_joints(cs)
    chain_length = chain_lengths(cs)[cs.chain_of_segment]
    previous = None
    movement_time, movement = [], []
    with new_solver(cs, backend, options) as solver:
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


def frame_rates(backend: str, duration: float = 3.0, fps_list=FRAME_RATES, options=None) -> CheckResult:
    """SPEC 8.3: the same primary motion (:func:`root_motion`) at 30, 60 and 144 fps, compared
    at the multiples of 1/6 s: every tip agrees within ``FRAME_RATE_LIMIT`` × the motion's
    amplitude (``MOTION_AMPLITUDE``) between every pair of rates.

    Frame k of a run is ``set_pose(root_motion(k/fps))`` then ``advance(1/fps)``; the first
    pose snaps, with ``advance(0)``. Positions are the frame-time output.
    """
    cs = standard_chains()
    c, s = cs.chain_count, cs.segment_count
    paths, compared = tip_paths(lambda: new_solver(cs, backend, options),
                                lambda solver, t: solver.set_pose(*root_motion(t, c, s)), tip_joints(cs), duration,
                                fps_list)
    times = np.arange(len(compared[fps_list[0]])) / 6.0
    worst, pair_worst, diff_vs_time = frame_rate_differences(compared, fps_list)
    return CheckResult(
        "frame_rates", "3 frame rates", worst, FRAME_RATE_LIMIT, worst < FRAME_RATE_LIMIT,
        "largest tip distance between two frame rates at the shared times / motion amplitude", "",
        details={**{f"max difference {k}": v for k, v in pair_worst.items()},
                 "times compared": len(times), "motion amplitude, units": MOTION_AMPLITUDE},
        traces={"paths": paths, "compared": compared, "times": times, "difference": diff_vs_time,
                "segment_counts": cs.segment_counts, "first_segment": cs.first_segment})


# -- 4. wraparound ------------------------------------------------------------------------------
#: The wraparound check's limit: a segment that went the long way round would pass ±π. Its
#: error e = wrap(φ - τ) cannot have passed ±π between two frames when |e| at the first plus
#: how far e moves to the next, |wrap(Δe)|, stays below π. (|e| alone below π/2 was the bound
#: while the semi-implicit step's numerical damping kept the whipping tips small; the exact
#: integrator shows them swinging 2.5 rad off their targets, as the semi-implicit step does
#: at h = 1/1920 s.)
WRAP_LIMIT = math.pi
#: The wraparound check's frame rate: the tips' steps between frames stay below π/2 there,
#: so the unwrapped traces and turn counts are unambiguous.
WRAP_FPS = 120.0


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


def wraparound(backend: str, fps: float = WRAP_FPS, duration: float = 7.5, options=None) -> CheckResult:
    """SPEC 8.4: the root's heading swept through full turns in both directions, and local
    targets crossing ±π: no segment ever takes the long way round.

    Two copies of the standard set: the first turns counter-clockwise, the second clockwise.
    0-4.4 s: the heading makes a full turn at 0.5 turns/s, then about four more at 2 turns/s
    (five in all, :func:`_turns`). 4.75-5.75 s, the heading held: every chain's first local
    target λ0 makes a full turn (same direction), and the last segment's λ goes from 0.1 to π;
    from 5.75 s it swings across ±π (π + 0.5·sin(2π·1.5 t)). Every frame, with φ the
    frame-time angles and τ = φ_parent + λ each segment's target, e = wrap(φ - τ) and the
    figure is the largest |e| + |wrap(Δe)| (Δe: its change to the next frame): a segment going
    the long way round would pass ±π, which e cannot do between two frames while that sum
    stays below π. Frames are 1/120 s (``WRAP_FPS``). Also held: the angle
    steps between frames stay below π/2 (so the unwrapped traces are unambiguous), and each
    segment's net turn count matches its target's on the pose (six turns, signed, plus the
    last segment's own change of λ) within a quarter turn.
    """
    base = standard_chains()
    c1 = base.chain_count
    # Two copies: counter-clockwise, then clockwise.
    cs = AngleChainSet(np.tile(base.segment_counts, 2), np.tile(base.lengths, 2), np.tile(base.frequency, 2),
                       np.tile(base.damping_ratio, 2), inertia=np.tile(base.inertia, 2),
                       gravity=np.tile(base.gravity, (2, 1)))
    c, s = cs.chain_count, cs.segment_count
    direction = np.repeat([1.0, -1.0], c1)
    seg_direction = direction[cs.chain_of_segment]
    last = (cs.first_segment + cs.segment_counts - 1)[cs.segment_counts > 1]
    frames = int(round(duration * fps))
    time = np.arange(frames + 1) / fps
    heading = -math.pi / 2 + TWO_PI * _turns(time)[:, None] * direction[None, :]
    local = np.full((frames + 1, s), 0.1)
    local[:, cs.first_segment] += TWO_PI * ramp(time, 4.75, 5.75)[:, None] * direction[None, :]
    swing = (0.1 + (math.pi - 0.1) * ramp(time, 4.75, 5.75)
             + 0.5 * np.sin(TWO_PI * 1.5 * (time - 5.75)) * ramp(time, 5.75, 6.0))
    local[:, last] = swing[:, None]
    phi = np.empty((frames + 1, s))
    tau = np.empty((frames + 1, s))
    with new_solver(cs, backend, options) as solver:
        for k in range(frames + 1):
            solver.set_pose(np.zeros((c, 2)), heading[k], local[k])
            solver.advance(0.0 if k == 0 else 1.0 / fps)
            phi[k] = solver.angles()
            tau[k] = parent_angle(cs, phi[k], heading[k]) + local[k]
    error = wrap(phi - tau)
    reach = np.abs(error[:-1]) + np.abs(wrap(np.diff(error, axis=0)))  # how near ±π e came
    worst = float(np.max(reach))
    largest_step = float(np.abs(wrap(np.diff(phi, axis=0))).max())
    phi_unwrapped = np.unwrap(phi, axis=0)
    tau_unwrapped = np.unwrap(tau, axis=0)
    # The pose's own targets, unwrapped by construction (heading and λ are given unwrapped).
    pose_start = cumulative(cs, heading[0], local[0])
    pose_end = cumulative(cs, heading[-1], local[-1])
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
        "largest |e| + |Δe to the next frame| over all frames and segments, e = wrap(segment angle - "
        "its target)", "rad",
        details={"largest |wrap(segment angle - its target)|, rad (not held)": float(np.max(np.abs(error))),
                 "largest angle step between frames, rad (< pi/2)": largest_step,
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


def _teleport_run(cs, backend, fps, before, after, options):
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
        a = solvers.enter_context(new_solver(cs, backend, options))
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
                b = solvers.enter_context(new_solver(cs, backend, options))
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


def teleport(backend: str, fps: float = 60.0, before: float = 1.0, after: float = 1.5, options=None) -> CheckResult:
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
    runs = {"no gravity": _teleport_run(cs.replace(gravity=(0.0, 0.0)), backend, fps, before, after, options),
            "gravity": _teleport_run(cs, backend, fps, before, after, options)}
    worst_angle = worst_position = worst_omega_diff = 0.0
    for rec, _, _ in runs.values():
        n = len(rec["b_angle"])
        a_angle, a_pos, a_omega = rec["a_angle"][-n:], rec["a_pos"][-n:], rec["a_omega"][-n:]
        worst_angle = max(worst_angle, float(np.abs(wrap(a_angle - rec["b_angle"])).max()))
        worst_position = max(worst_position, float(np.abs(a_pos - rec["b_pos"]).max()))
        worst_omega_diff = max(worst_omega_diff, float(np.abs(a_omega - rec["b_omega"]).max()))
    rec, jump, (position, heading, local) = runs["no gravity"]
    target = cumulative(cs, heading, local)
    snap_angle = float(np.abs(wrap(rec["a_angle"][jump] - target)).max())
    snap_omega = float(np.abs(rec["a_omega"][jump]).max())
    moving_before = float(np.abs(rec["a_omega"][jump - 1]).max())
    # Forward kinematics of the targets from the jump frame's root position.
    offset = np.stack([cs.lengths * np.cos(target), cs.lengths * np.sin(target)], axis=1)
    total = np.cumsum(offset, axis=0)
    start = (total - offset)[cs.first_segment]
    tips_fk = total - np.repeat(start, cs.segment_counts, axis=0) + position[cs.chain_of_segment]
    snap_position = float(np.abs(rec["a_pos"][jump][tip_joints(cs)] - tips_fk).max())
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


"""SPEC section 8, properties 3 and 5 on point chains, both under the moving body of
:func:`~gpu_jiggle.verify.scenarios.point_body_motion`: :func:`point_frame_rates` (the same
motion at 30, 60 and 144 fps) and :func:`point_teleport` (a 2000-unit jump). Like the checks
of :mod:`gpu_jiggle.verify.point`, each runs the (gravity, wind) ``variants`` and reports the
worst; wind here is w0 with gusts (``POINT_GUST``), which depend on sim time and position.
"""
from __future__ import annotations

import contextlib
import math

import numpy as np

from .measure import (new_solver, FRAME_RATE_LIMIT, FRAME_RATES, force_vector, frame_rate_differences, point_chain_lengths,
                      point_tip_joints, run_variants, set_forces, tip_paths)
from .result import CheckResult
from .scenarios import (MOTION_AMPLITUDE, POINT_GUST, SUBSTEP, moved, point_body_motion, standard_point_chains,
                        standard_point_pose)


# -- point 3. frame rates -------------------------------------------------------------------
def _point_frame_rate_run(backend, gravity, wind, duration, fps_list, options):
    cs = standard_point_chains(gravity)
    pose = standard_point_pose(cs)

    def make_solver():
        solver = new_solver(cs, backend, options)
        set_forces(solver, wind, gusts=True)
        return solver

    paths, compared = tip_paths(make_solver,
                                lambda solver, t: solver.set_pose(joint_positions=moved(pose, point_body_motion(t))),
                                point_tip_joints(cs), duration, fps_list)
    worst, pair_worst, difference = frame_rate_differences(compared, fps_list)
    pivots = np.array([moved(pose, point_body_motion(k / 60.0))[cs.first_joint]
                       for k in range(int(round(duration * 60)) + 1)])
    excursion = float(np.linalg.norm(pivots - pivots[0], axis=2).max())
    return {"paths": paths, "compared": compared, "difference": difference, "pair_worst": pair_worst,
            "worst": worst, "pivot_excursion": excursion}


def point_frame_rates(backend: str, variants=None, duration: float = 3.0, options=None,
                      fps_list=FRAME_RATES) -> CheckResult:
    """SPEC 8.3 for point chains: the same primary motion (:func:`point_body_motion`: the
    whole rig translated and turned) at 30, 60 and 144 fps, compared at the multiples of 1/6 s:
    every tip agrees within ``FRAME_RATE_LIMIT`` × ``MOTION_AMPLITUDE`` between every pair of
    rates. Per variant: gravity on or off, and wind (w0 with ``POINT_GUST`` gusts, which depend
    on sim time and position) on or off. Positions are the frame-time output.
    """
    runs = run_variants(lambda g, w: _point_frame_rate_run(backend, g, w, duration, fps_list, options), variants, backend)
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


def _point_teleport_run(backend, gravity, wind, fps, after, options):
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
        def entered_solver():
            solver = stack.enter_context(new_solver(cs, backend, options))
            set_forces(solver, wind, gusts=True)
            return solver

        solvers = {"rebased": entered_solver(), "kept origin": entered_solver()}
        for k in range(frames + 1):
            joints = moved(pose, point_body_motion(k / fps))
            if k >= jump:
                joints = joints + POINT_TELEPORT_JUMP
            if k == jump:
                jump_pose = joints
                sim_time_at_jump = solvers["rebased"].sim_time
                solvers["made there"] = entered_solver()
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
            "chain_length": np.repeat(point_chain_lengths(cs), cs.segment_counts + 1),
            "tips": point_tip_joints(cs), "pivots": np.asarray(cs.first_joint),
            "last_joints": cs.first_joint + cs.segment_counts,
            "force": force_vector(gravity, wind), "gusts": wind}


def point_teleport(backend: str, variants=None, fps: float = 60.0, after: float = 1.5, options=None) -> CheckResult:
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
    runs = run_variants(lambda g, w: _point_teleport_run(backend, g, w, fps, after, options), variants, backend)
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
                # Each substep's pull·h, and at most as much again from the length step, whose
                # velocity is the constrained displacement over h (model v2).
                velocity_ratio = max(velocity_ratio, speed / (2 * substeps * SUBSTEP * pull))
            moving_before = min(moving_before, float(np.linalg.norm(vel[solver][jump - 1], axis=1).max()))
            pivots = run["pivots"]
            jump_size = min(jump_size, float(np.linalg.norm(pos[solver][jump][pivots] - pos[solver][jump - 1][pivots],
                                                            axis=1).min()))
    passed = (worst <= POINT_TELEPORT_TOLERANCE and kept_worst <= kept_limit and jump_position <= 1e-6
              and jump_velocity <= 1e-5 and velocity_ratio <= 1.0 and moving_before > 0.1 and jump_size > 1999.0)
    details.update({
        "jump frame, no forces: largest tip distance from target / chain length (<= 1e-6)": jump_position,
        "jump frame, no forces: largest |velocity|, units/s (<= 1e-5)": jump_velocity,
        "jump frame, forces: largest |velocity| / (2 n h |g + w|) (<= 1)": velocity_ratio,
        f"A' limit: {POINT_TELEPORT_SPACINGS:g} float32 spacings at 2000 units, units": kept_limit,
        "frame before the jump: largest |velocity|, units/s (> 0.1)": moving_before,
        "pivot jump, units (> 1999)": jump_size})
    return CheckResult(
        "point_teleport", "point 5 teleport", worst, POINT_TELEPORT_TOLERANCE, passed,
        "largest position difference, rebased teleported solver vs one made at the destination, "
        "/ chain length, over the variants run", "", details=details, traces={"runs": runs, "fps": fps}, bound="<=")


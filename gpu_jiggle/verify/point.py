"""SPEC section 8, properties 1 and 2 on point chains (SPEC section 4): :func:`point_free_decay`
and :func:`point_rest`; 3 and 5 are in :mod:`gpu_jiggle.verify.point_motion`, 6 in
:mod:`gpu_jiggle.verify.cross`, and property 4, wraparound, is about angles only.

Each check takes a backend name and ``variants``, the (gravity, wind) pairs to run (by default
all four on the GPU and fewer on the slower reference, see ``REFERENCE_VARIANTS``), and reports
the worst over them in a :class:`CheckResult`, with each variant's traces under
``traces["runs"][variant name]``.

Chains hang from pivots in 3D; a particle's spring pulls it toward its target, and its length
keeps it on a sphere about its parent, so a segment whose parent is still is a spherical
pendulum: with the target offset t (|t| = L) and the uniform force F = g + w0, the potential
on that sphere is -x·(k·t + F), a uniform field G = k·t + F. The particle settles along G (not
on its target when F ≠ 0), swings in the plane of G and its start, and near equilibrium with
ω² = |G|/L. Children never act back on parents (the length step moves only the child), so the
cascade caveat of the angle chains (:mod:`gpu_jiggle.verify.angle`) holds here too: a segment
is held to a decay only while its ancestors are still.

The length step is not energy-neutral: removing the velocity along the new direction after the
particle moved damps the swing at a rate of about a_r·h/L (a_r: the particle's outward radial
acceleration, h the substep), so hanging segments lose a little more than ζ says and a segment
standing up against gravity gains energy when ζ is small (2ζω0 < |g|·h/L; see the xfail test in
tests/verify/test_point_properties.py). The chains of these checks hang.
"""
from __future__ import annotations

import numpy as np

from .measure import (new_solver, force_vector, half_cycle_peaks, peak_ratios, point_chain_lengths, point_tip_joints,
                      run_variants, set_forces, settle)
from .result import CheckResult
from .scenarios import (POINT_SEGMENT_COUNTS, SUBSTEP, axis_rotation, standard_point_chains, standard_point_pose,
                        unit)


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


def _point_decay_run(backend, gravity, wind, substeps, turn, options):
    # No air drag: the decay measures the spring's own damping.
    cs = standard_point_chains(gravity, frequency=POINT_DECAY_FREQUENCY, damping_ratio=1.0, air_drag=0.0)
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
    with new_solver(cs, backend, options) as solver:
        set_forces(solver, wind, gusts=False)
        solver.set_pose(joint_positions=pose)
        solver.advance(0.0)
        settle(solver, POINT_SETTLE)           # ζ = 1: every particle comes to rest
        trace[0] = solver.positions(raw=True)
        light = np.ones(cs.segment_count)
        light[measured] = POINT_DECAY_DAMPING
        solver.set_parameters(damping_ratio=light)   # only the measured segments swing freely
        solver.set_pose(joint_positions=displaced)   # the one displacement, then held
        for j in range(1, substeps + 1):
            solver.advance(SUBSTEP)
            trace[j] = solver.positions(raw=True)
        solver.set_parameters(damping_ratio=1.0)
        settle(solver, POINT_SETTLE)
        equilibrium = solver.positions(raw=True)
    base = equilibrium[base_joint]
    e1 = unit(equilibrium[tip_joint] - base)               # along G: where it settles
    start = trace[0, tip_joint] - base
    e2 = unit(start - np.sum(start * e1, axis=1, keepdims=True) * e1)
    e3 = np.cross(e1, e2)
    rel = trace[:, tip_joint] - base[None]
    deviation = np.arctan2(np.sum(rel * e2, axis=2), np.sum(rel * e1, axis=2))   # (T, C) rad, in plane
    lengths = np.asarray(cs.rest_lengths)[measured]
    out_of_plane = np.abs(np.sum(rel * e3, axis=2)) / lengths
    ancestors = np.concatenate([np.arange(pivot_joint[k] + 1, base_joint[k] + 1) for k in range(c)]).astype(int)
    chain_length = np.repeat(point_chain_lengths(cs), cs.segment_counts + 1)
    ancestor_motion = (float((np.linalg.norm(trace[:, ancestors] - equilibrium[ancestors], axis=2)
                              / chain_length[ancestors]).max()) if ancestors.size else 0.0)
    peaks = [half_cycle_peaks(deviation[:, k]) for k in range(c)]
    return {"deviation": deviation, "peak_index": [p[0] for p in peaks], "peak_value": [p[1] for p in peaks],
            "e1": e1, "out_of_plane": float(out_of_plane.max()), "ancestor_motion": ancestor_motion,
            "length": lengths, "force": force_vector(gravity, wind)}


def point_free_decay(backend: str, variants=None, substeps: int = 720, options=None,
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
    (≤ 3e-6 × chain length: model v2's velocity is the length step's displacement over h, so
    the float32 rounding of that projection, ~1e-8, shows as jitter of a few 1e-6).
    """
    runs = run_variants(lambda g, w: _point_decay_run(backend, g, w, substeps, turn, options), variants, backend)
    worst, covered, fewest, strictly = 0.0, substeps, 10 ** 9, True
    ancestor_motion = out_of_plane = 0.0
    details = {}
    for name, run in runs.items():
        ratios, decreasing, counts, last_peak_step = peak_ratios(run["peak_index"], run["peak_value"])
        fewest = min([fewest] + counts)
        covered = min([covered] + last_peak_step)
        strictly &= decreasing
        worst = max(worst, max(ratios))
        ancestor_motion = max(ancestor_motion, run["ancestor_motion"])
        out_of_plane = max(out_of_plane, run["out_of_plane"])
        details[f"{name}: largest peak ratio"] = max(ratios)
    passed = strictly and worst < 1.0 and covered >= 600 and ancestor_motion <= 3e-6
    details.update({"half-cycles (fewest in a chain)": fewest,
                    "last peak at substep (earliest over chains, >= 600)": covered,
                    "ancestor motion / chain length (<= 3e-6)": ancestor_motion,
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
#: SPEC 8.2 for point chains: 2e-6 of the chain's length. The standard set's 12-segment chains
#: rest in a float32 rounding cycle that grows about 1.5 times a joint toward the tip; where it
#: ends after 60 s depends on the rounding of the first frames (GPU, wind alone, turns of 0.4 to
#: 0.7 rad: 1.8e-7 to 2.3e-6 on the Hermite path, 3.3e-7 to 1.6e-6 on the monotone one).
POINT_REST_LIMIT = 2e-6


def _point_rest_run(backend, gravity, wind, duration, fps, options):
    cs = standard_point_chains(gravity)
    pose = standard_point_pose(cs)
    turned = pose.copy()
    rotation = axis_rotation((1.0, 0.0, 1.0), POINT_REST_TURN)
    for joints in cs.joint_slices():
        turned[joints] = pose[joints.start] + (pose[joints] - pose[joints.start]) @ rotation.T
    tips = point_tip_joints(cs)
    coarse = 8 * SUBSTEP         # the default max_substeps a frame, until the last two seconds
    coarse_frames = int(round((duration - 2.0) / coarse))
    fine_frames = int(round(2.0 * fps))
    times, positions = [], []
    with new_solver(cs, backend, options) as solver:
        set_forces(solver, wind, gusts=False)
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
    chain_length = np.repeat(point_chain_lengths(cs), cs.segment_counts)
    movement = np.linalg.norm(np.diff(positions, axis=0), axis=2) / chain_length
    return {"time": times[1:], "movement": movement, "sim_time": sim_time, "fine_from": times[coarse_frames],
            "chain_of_segment": np.repeat(np.arange(cs.chain_count), cs.segment_counts), "final": final,
            "target": turned, "tips": tips, "chain_length": chain_length, "force": force_vector(gravity, wind)}


def point_rest(backend: str, variants=None, duration: float = 60.0, fps: float = 60.0, options=None) -> CheckResult:
    """SPEC 8.2 for point chains: the targets still for ``duration`` s of sim time, with
    gravity and constant wind (each on or off in ``variants``; by default all four on the GPU,
    gravity + wind on the reference): in the last second no tip moves more than
    ``POINT_REST_LIMIT`` × its chain's length between frames (SPEC 8.2).

    The standard point set is snapped onto its pose, then every chain's pose turns once by
    ``POINT_REST_TURN`` rad about its pivot and is held, so the chains swing (and sag under
    g + w0) before they rest. Frames are 1/15 s (8 substeps) until the last two seconds, then
    1/``fps`` s; the figure is over the frames of the last second.
    """
    # 60 s of sim time is about 15 s per variant in the reference: there only gravity + wind.
    runs = run_variants(lambda g, w: _point_rest_run(backend, g, w, duration, fps, options), variants, backend,
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
        "point_rest", "point 2 rest", worst, POINT_REST_LIMIT, worst <= POINT_REST_LIMIT,
        "largest tip movement between frames in the last second / chain length, over the variants run", "",
        details=details, traces={"runs": runs, "duration": duration}, bound="<=")


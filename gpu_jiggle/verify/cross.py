"""SPEC section 8, property 6: the compute shaders against the numpy reference, on angle chains
(:func:`cross_check`) and point chains (:func:`point_cross_check`), each on random ragged
chains (:mod:`gpu_jiggle.verify.scenarios`) and random motions, frame times, teleports and
live parameter changes. Both need an OpenGL 4.3 context and are reported as skipped without.
"""
from __future__ import annotations

import math

import numpy as np

from ..sim.spring import stable_frequency
from .measure import new_solver, chain_lengths, gpu_available, point_chain_lengths, wrap
from .result import CheckResult
from .scenarios import (FORCE_VARIANTS, FRAME_RATE_MIX, POINT_GRAVITY, POINT_GUST, POINT_WIND, SUBSTEP, TWO_PI,
                        RandomBody, random_chains, random_frame_times, random_point_chains, variant_name)

# -- angle chains ------------------------------------------------------------------------------
#: GPU vs reference: after one frame the two agree to float32 rounding; over a long run the
#: rounding differences (llvmpipe's sin/cos against numpy's, fused multiply-adds) are carried
#: along and amplified by chains that whip and by angle limits, so the whole run is held to a
#: looser bound. Angles in rad, positions relative to the chain's length, ω in rad/s relative
#: to max(1, |ω|).
CROSS_FIRST_FRAME_TOLERANCE = 1e-5
CROSS_TOLERANCE = 1e-3
#: Air drag (1/s) of the angle cross-check's undamped segments with the exact integrator: more
#: than the |g_eff|·h/(2L) ≈ 1.3/s its gravity, wind and shortest segments need (SPEC 1).
EXACT_UNDAMPED_AIR_DRAG = 3.0


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


def cross_check(backend: str = "gpu", frames: int = 240, seed: int = 8, options=None) -> CheckResult:
    """SPEC 8.6: the compute shaders against the numpy reference on random ragged chains
    (:func:`random_chains`) and random motions: smooth root sway and turns, local targets
    crossing ±π, frame times of 1/30, 1/60, 1/144 s, zero and 0.2 s (past the substep cap),
    chains that appear moving, snap, keep-shape and mirror teleports, and live parameter
    changes (f, ζ, gravity, air drag) and gusting wind. Every frame compares angles,
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
    if (options or {}).get("integrator") == "exact":
        # The exact step holds gravity over the substep, which grows an undamped segment
        # (SPEC 1, "Stability of the whole step"): its ζ = 0 segments get air drag enough.
        cs = cs.replace(air_drag=np.where(cs.damping_ratio == 0.0, EXACT_UNDAMPED_AIR_DRAG, 0.0))
    c, s = cs.chain_count, cs.segment_count
    lengths = chain_lengths(cs)
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
    air_drag = rng.uniform(0.0, 2.0, s)
    moving, mirrored = np.arange(0, c, 3), np.arange(1, c, 3)
    dts = random_frame_times(rng, frames, FRAME_RATE_MIX, first=0.0)
    dts[frames // 3] = 0.2
    t = 0.0
    per_frame = np.zeros(frames)
    worst = {"angle": 0.0, "angular velocity": 0.0, "position": 0.0, "raw angle": 0.0, "raw position": 0.0}
    first = None
    with new_solver(cs, "cpu", options) as ref, new_solver(cs, "gpu", options) as gpu:
        for k in range(frames):
            t += dts[k]
            position = np.stack([amp[:, 0] * np.sin(TWO_PI * freq[:, 0] * t + phase[:, 0]),
                                 amp[:, 1] * np.sin(TWO_PI * freq[:, 1] * t + phase[:, 1])], axis=1) * 3.0
            heading = phase[:, 3] + spin * t + amp[:, 2] * np.sin(TWO_PI * freq[:, 2] * t)
            local = local_base + local_amp * np.sin(TWO_PI * local_freq * t)
            if k >= frames // 2:
                position = position + np.array([300.0, -40.0])  # flagged below: a teleport
            if k == (3 * frames) // 4:
                mirror_x = position[mirrored, 0].copy()
            if k >= (3 * frames) // 4:  # the mirrored chains play their motion reflected about their roots
                position[mirrored, 0] = 2 * mirror_x - position[mirrored, 0]
                heading[mirrored] = math.pi - heading[mirrored]
                local = local.copy()
                local[np.isin(cs.chain_of_segment, mirrored)] *= -1
            for solver in (ref, gpu):
                solver.set_pose(position, heading, local)
                if k == 0:
                    solver.teleport(moving, moving=True)  # these appear already moving
                if k == frames // 2:
                    _teleport_halves(solver, c)
                if k == frames // 4:
                    solver.set_parameters(frequency=new_frequency, damping_ratio=new_damping, gravity=(0.0, -9.81),
                                          air_drag=air_drag)
                    solver.set_wind((1.5, 0.3), 2.0, (1.0, 0.5), 0.7)
                if k == (3 * frames) // 4:
                    solver.teleport(mirrored, mirror=True)
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


# -- point chains ------------------------------------------------------------------------------
#: GPU vs reference for point chains. One substep agrees to float32 rounding; over a run the
#: rounding differences are carried along, and colliders and max distances are switches (a
#: particle a hair inside on one backend and outside on the other is pushed on one only), so
#: the whole run is held to a looser bound. Positions relative to the chain's length,
#: velocities relative to max(1 unit/s, |v|), rotations as quaternion distance.
#: The first frame's bound is looser than the angle chains': chains that appear moving start
#: with their targets' velocity, a difference of float32 positions over one substep, so one
#: rounding of a position (~6e-8 of a unit) reads as ~1e-5 units/s.
POINT_CROSS_FIRST_FRAME_TOLERANCE = 1e-4
POINT_CROSS_TOLERANCE = 1e-2


def _quaternion_distance(a, b):
    """Per row, min(|a - b|, |a + b|): q and -q are the same rotation."""
    return np.minimum(np.linalg.norm(a - b, axis=-1), np.linalg.norm(a + b, axis=-1))


def _point_cross_events(frames: int) -> dict:
    """The frames of the cross-check's events, away from the phase boundaries."""
    return {"f, ζ change": int(0.2 * frames), "0.2 s frame": int(0.35 * frames), "teleport": int(0.55 * frames),
            "rebase": int(0.85 * frames)}


def _point_frame_difference(ref, gpu, scale) -> dict:
    """Each kind's differences of a frame, GPU against the reference: joint positions
    (frame-time and raw) over the chain's length, velocities (both) relative to max(1, |v|),
    segment rotations as quaternion distance."""
    v_ref = ref.velocities().astype(np.float64)
    raw_v_ref = ref.velocities(raw=True).astype(np.float64)
    return {
        "position": np.abs(ref.positions() - gpu.positions()) / scale,
        "raw position": np.abs(ref.positions(raw=True) - gpu.positions(raw=True)) / scale,
        "velocity": np.abs(v_ref - gpu.velocities()) / np.maximum(1.0, np.abs(v_ref)),
        "raw velocity": np.abs(raw_v_ref - gpu.velocities(raw=True)) / np.maximum(1.0, np.abs(raw_v_ref)),
        "rotation": _quaternion_distance(ref.segment_rotations().astype(np.float64),
                                         gpu.segment_rotations().astype(np.float64)),
    }


def point_cross_check(backend: str = "gpu", variants=FORCE_VARIANTS, frames: int = 240, seed: int = 11, options=None) -> CheckResult:
    """SPEC 8.6 for point chains: the compute shaders against the numpy reference on random
    ragged chains (:func:`random_point_chains`) rooted on a moving, turning body
    (:class:`RandomBody`) with colliders of every kind and group riding on it.

    The run is cut into one phase per variant of ``variants`` (by default four phases of 60
    frames: no forces, gravity, wind, both; wind is w0 with ``POINT_GUST`` gusts), switched
    live with ``set_parameters(gravity=...)`` and ``set_wind``. Frame times of 1/30, 1/60,
    1/144 s, zero and 0.2 s (past the cap); the chains appear moving (a body snapped at rest
    on its first pose whips light chains into motions where one rounding decides the rest);
    a live change of f,
    ζ and air drag; snap and keep-shape teleports of the whole body by 330 units (colliders
    snapped); a rebase. Every frame
    compares joint positions (frame-time and raw), velocities (both) and segment rotations.
    The two run free, so a difference in the last bit carries on; where it has grown past the
    bound (paths that parted at an event one rounding decides: a whipping tip brushing a
    collider goes round one side or the other), the GPU runs that frame again from the
    reference's state and the check holds that step to the bound (SPEC 8.6); the frames so
    re-synced are listed in the details.
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
    body = RandomBody(rng, cs)
    scale = np.repeat(point_chain_lengths(cs), cs.segment_counts + 1)[:, None]
    new_frequency, new_damping = _more_damped(cs, 0.2)
    air_drag = rng.uniform(1.0, 3.0, cs.segment_count)
    dts = random_frame_times(rng, frames, FRAME_RATE_MIX, first=0.0)
    events = _point_cross_events(frames)
    dts[events["0.2 s frame"]] = 0.2       # past the substep cap
    phase = np.minimum(np.arange(frames) * len(variants) // frames, len(variants) - 1)
    kinds = ("position", "raw position", "velocity", "raw velocity", "rotation")
    worst = {variant_name(*v): dict.fromkeys(kinds, 0.0) for v in variants}
    per_frame = np.zeros(frames)
    first = None
    same_clock = True
    resynced = []  # frames where the paths had parted and the GPU went on from the reference's state
    t = 0.0
    with new_solver(cs, "cpu", options) as ref, new_solver(cs, "gpu", options) as gpu:
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
                if k == 0:
                    solver.teleport(moving=True)  # the body is moving from its first pose: no start-up whip
                if k == events["teleport"]:
                    _teleport_halves(solver, c)
                if k == events["f, ζ change"]:
                    solver.set_parameters(frequency=new_frequency, damping_ratio=new_damping, air_drag=air_drag)
                if k == events["rebase"]:
                    solver.rebase(body.offset + np.array([0.0, -0.5, 0.0]))
                if solver is ref:
                    before = ref.save_state()  # the frame's start, its inputs given
                solver.advance(float(dts[k]))
            frame = _point_frame_difference(ref, gpu, scale)
            if max(float(v.max()) for v in frame.values()) > POINT_CROSS_TOLERANCE:
                # Paths that parted at an event one rounding decides (a whipping tip brushing a
                # collider) re-synced: the GPU runs the frame again from the reference's state,
                # and that step is what is held to the bound.
                gpu.restore(before)
                gpu.advance(float(dts[k]))
                frame = _point_frame_difference(ref, gpu, scale)
                resynced.append(k)
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
                    "frames": frames, "frames whose paths had parted, re-synced": resynced})
    return CheckResult(
        name, title, figure, POINT_CROSS_TOLERANCE, passed,
        "largest difference gpu vs cpu over the run (position / chain length; velocity relative to "
        "max(1, |v|); rotation as quaternion distance)", "", details=details,
        traces={"per_frame": per_frame, "dt": dts, "phase": phase, "events": events,
                "phase_names": [variant_name(*v) for v in variants], "worst": worst}, bound="<=")

"""A VRM avatar's spring bones as a gpu_jiggle :class:`~.model.Rig`: the same rig a TOML file
makes, so render, play, bake and the pipeline run ``.vrm`` files as they run glTF + TOML.

VRM's step is one Verlet update per frame, so what it does depends on the frame rate. The
mapping fixes a reference rate (:data:`REFERENCE_RATE`, 60 Hz) and linearises VRM's update
about the rest pose at that rate; each segment then gets the spring whose small-amplitude
motion has the same frequency and decay, and each chain the gravity that gives the same sag.
docs/VRM.md derives it:

- one segment of length L, stiffness S, drag d, at frame step Δt: the stiffness step pushes
  the tail by S·Δt along the rest direction and the length step projects it back onto its
  sphere, which shrinks its offset x from rest by ``1/(1 + κ)``, ``κ = S·Δt/L``:
  ``(1 + κ)·x' = x + (1 − d)(x − x_prev)`` per frame (gravity along the segment adds to S);
  the roots z of ``(1 + κ)·z² − (2 − d)·z + (1 − d) = 0`` are its poles, ``s = ln z / Δt``
  their continuous equals, ``ω₀² = s₁·s₂``;
- the poles' decay ``−(s₁ + s₂)`` is shared: the drag keeps ``1 − d`` of the tail's world
  velocity a frame, so behind a body moving at v VRM's tail lags by ``d·v·Δt/κ``; air drag
  ``μ = ω₀²·d·Δt/κ`` lags the same; the rest, from the projection's shrink of the offset from
  rest, is damping relative to the pose, ``2ζω₀ = −(s₁ + s₂) − μ``;
- gravity: VRM's tail rests along ``S·r̂ + P·ĝ``; the solver's gravity ``α·P·ĝ`` with
  ``α = ω₀²·L/(S + P·ĝ·r̂)`` gives the same sag and, with the spring's ``ω₀²·S/(S + P·ĝ·r̂)``,
  the same frequency (a chain takes its segments' mean).

A dragForce of 1 (no inertia), no stiffness, or gravity that tips a segment over have no
such equal and are matched approximately, with a logged warning naming the joint
(docs/VRM.md says how).
"""
from __future__ import annotations

import logging
import math

import numpy as np

from ..pose import quat
from .model import Rig, RigError
from .reader import rig_from_dict
from .reader import ZERO_SEGMENT
from ..gltf.vrm import VIRTUAL_TAIL, VrmError, VrmSprings, read_springs

log = logging.getLogger(__name__)

#: VRM's update is per frame; the mapping matches it at this frame rate (Hz).
REFERENCE_RATE = 60.0
#: The frame rates (Hz) a mapping may take: VRM runs once per rendered frame.
RATE_RANGE = (1.0, 1000.0)
#: The solver's substep for a VRM rig (s), as the TOML rigs' default.
SUBSTEP = 1.0 / 120.0
#: The frequency (Hz) given to a joint of stiffness 0, which VRM leaves free to swing.
FREE_FREQUENCY = 0.05
#: The integrator of a VRM rig: the exact one (SPEC 1) keeps the matched frequency and decay
#: at the substep, where the semi-implicit step moves a well-damped 4.5 Hz spring's by 4 and 9 %
#: at 1/120 s, and VRM's stiffest springs need no stability bound.
INTEGRATOR = "exact"


def spring_from_vrm(stiffness: float, drag_force: float, length: float, rate: float = REFERENCE_RATE,
                    gravity_along: float = 0.0):
    """The spring matching one VRM segment's small-amplitude motion at ``rate`` frames/s
    (docs/VRM.md).

    Args:
        stiffness: VRM stiffness S ≥ 0. drag_force: d in [0, 1]. length: the segment's rest
        length L > 0 (world units, metres in VRM). rate: VRM's frame rate (Hz) > 0.
        gravity_along: VRM's gravity P·(ĝ·r̂) along the segment's rest direction r̂ (it
        lengthens the step as stiffness does; a hanging segment swings as a pendulum).

    Returns:
        ``(frequency_hz, damping_ratio, air_drag_per_s, gravity_scale, exact)``: f, ζ and μ
        (1/s) of the spring, the factor α that makes VRM's gravity ``P·ĝ`` the solver's
        ``α·P·ĝ`` (1/s, so that the sag matches), and False where the match is approximate
        (see the module docstring).
    """
    dt = 1.0 / rate
    exact = True
    pull = stiffness + gravity_along
    if pull <= 0.0 < stiffness:  # gravity tips the segment over: its pull left out of the match
        pull, exact = stiffness, False
    kappa = pull * dt / length
    if kappa == 0.0:  # a free pendulum (no stiffness, no gravity along it): nothing to match
        air_drag = -math.log(1.0 - drag_force) / dt if drag_force < 1.0 else 2.0 * rate
        return FREE_FREQUENCY, 0.0, air_drag, rate, False
    if drag_force >= 1.0:  # no inertia: a first-order lag of rate ln(1 + κ)/Δt, matched critically damped
        omega = math.log1p(kappa) / dt
        return omega / (2.0 * math.pi), 1.0, 0.0, omega * omega * length / pull, False
    z = np.roots([1.0 + kappa, -(2.0 - drag_force), 1.0 - drag_force]).astype(complex)
    s = np.log(z) / dt
    omega_vrm = math.sqrt(abs(s[0] * s[1]))                 # all of VRM's restoring, gravity's included
    decay = -float((s[0] + s[1]).real)                      # all of its damping: 2ζω₀ + μ
    omega = omega_vrm * math.sqrt(stiffness / pull)         # the spring's part; the solver's gravity adds the rest
    # The drag keeps 1 - d of the world velocity a frame: behind a body moving at v, VRM's tail
    # lags by d·v·Δt/κ; the solver's by μ·v/ω². The rest of the decay is relative to the pose.
    air_drag = omega_vrm ** 2 * drag_force * dt / kappa
    if air_drag > decay:
        air_drag, exact = decay, False
    scale = omega_vrm ** 2 * length / pull
    if omega == 0.0:
        return FREE_FREQUENCY, 0.0, air_drag, scale, False
    return omega / (2.0 * math.pi), (decay - air_drag) / (2.0 * omega), air_drag, scale, exact


def rig_from_vrm(character, rate: float = REFERENCE_RATE, springs: VrmSprings | None = None) -> Rig:
    """The :class:`~.model.Rig` of a loaded VRM (:class:`~gpu_jiggle.character.gltf.loader.Character`) at ``rate``.

    Raises:
        VrmError (a ValueError): bad spring bones (:func:`~gpu_jiggle.character.gltf.vrm.read_springs`), or a rig the
        checks of the TOML path refuse (naming the chain). ValueError: rate outside :data:`RATE_RANGE`.
    """
    springs = springs or read_springs(character)
    data = rig_dict_from_vrm(character, rate, springs)
    source = f"{character.path} (VRM {springs.version})"
    try:
        return rig_from_dict(data, character.skeleton, source)
    except RigError as exc:
        raise VrmError(str(exc)) from None


def rig_dict_from_vrm(character, rate: float = REFERENCE_RATE, springs: VrmSprings | None = None) -> dict:
    """The rig of a VRM as the TOML rig's tables (a dict; ``gpu-jiggle rig`` writes it as TOML).

    Raises: VrmError (see :func:`rig_from_vrm`). ValueError: rate outside :data:`RATE_RANGE`."""
    if not (isinstance(rate, (int, float)) and RATE_RANGE[0] <= rate <= RATE_RANGE[1]):
        raise ValueError(f"rate = {rate!r}: expected a frame rate in [{RATE_RANGE[0]:g}, {RATE_RANGE[1]:g}] Hz "
                         f"(VRM's update runs once per rendered frame)")
    springs = springs or read_springs(character)
    sk = character.skeleton
    world = sk.world_matrices(sk.rest_pose())
    names = sk.names
    for node in {j.node for s in springs.springs for j in s.joints} | {c.node for c in springs.colliders}:
        if sk.index(names[node]) != node:
            raise VrmError(f"{character.path}: node {node} ({names[node]!r}) shares its name with node "
                           f"{sk.index(names[node])}; a rig names its joints, so they must be unique")
    chains = [_chain(character.path, s, world, sk, rate) for s in springs.springs]
    colliders = [_collider(c, names) for c in springs.colliders]
    return {"solver": {"substep": SUBSTEP, "max_substeps": 8, "integrator": INTEGRATOR}, "chain": chains,
            "collider": colliders}


def _chain(path, spring, world, sk, rate) -> dict:
    nodes = [j.node for j in spring.joints]
    last = nodes[-1]
    if spring.tail is not None:
        tip_local = sk.rest.translation[spring.tail]
        tip_world = world[spring.tail, :3, 3]
    else:  # VRM 0.x's virtual tail along the last bone, in its space
        axis = sk.rest.translation[last]
        if not np.linalg.norm(axis) > 0:
            raise VrmError(f"{path}: {spring.name}: node {last} ({sk.names[last]!r}) has no children and no offset "
                           f"from its parent: no bone direction for its virtual tail")
        tip_local = axis / np.linalg.norm(axis) * VIRTUAL_TAIL
        tip_world = world[last, :3, :3] @ tip_local + world[last, :3, 3]
    points = np.vstack([world[nodes, :3, 3], tip_world[None]])
    lengths = np.linalg.norm(np.diff(points, axis=0), axis=1)
    swings = lengths > ZERO_SEGMENT * lengths.max(initial=0.0)
    rest_direction = np.diff(points, axis=0) / np.maximum(lengths, 1e-300)[:, None]
    frequency, damping_ratio, air_drag, gravity = [], [], [], []
    for k, j in enumerate(spring.joints):
        if not swings[k]:  # carried rigidly by the rig; its values are dropped
            frequency.append(None), damping_ratio.append(None), air_drag.append(None)
            continue
        along = j.gravity_power * float(j.gravity_dir @ rest_direction[k])
        f, zeta, mu, scale, exact = spring_from_vrm(j.stiffness, j.drag_force, float(lengths[k]), rate, along)
        if not exact:
            log.warning("%s: %s: joint %d (%r, stiffness %g, dragForce %g, gravityPower %g): no spring has VRM's "
                        "poles at %g Hz; matched approximately (docs/VRM.md)", path, spring.name, k,
                        sk.names[j.node], j.stiffness, j.drag_force, j.gravity_power, rate)
        frequency.append(f), damping_ratio.append(zeta), air_drag.append(mu)
        gravity.append(scale * j.gravity_power * j.gravity_dir)
    def filled(values, default):  # a zero-length segment's value: any swinging one's (the rig drops it)
        first = next((v for v in values if v is not None), default)
        return [first if v is None else v for v in values]

    chain = {"name": spring.name, "group": spring.group or spring.name, "joints": [sk.names[n] for n in nodes],
             "tip_length": float(np.linalg.norm(tip_local)), "tip_axis": [float(x) for x in tip_local],
             "frequency": filled(frequency, 1.0), "damping_ratio": filled(damping_ratio, 0.0),
             "air_drag": filled(air_drag, 0.0),
             "particle_radius": [j.hit_radius for j in spring.joints],
             "gravity": [float(x) for x in np.mean(gravity, axis=0)] if gravity else [0.0, 0.0, 0.0],
             "colliders": spring.colliders}
    if spring.center is not None:
        log.warning("%s: %s: center node %d (%r): inertia is taken in world space (gpu_jiggle has no center "
                    "space; world_influence tames it)", path, spring.name, spring.center, sk.names[spring.center])
    chain.update(_limits(path, spring, sk))
    return chain


def _limits(path, spring, sk) -> dict:
    """The rig's limit keys for a spring's VRMC_springBone_limit entries, per segment: a cone's
    angle, a hinge's ±angle or a spherical limit's pitch and yaw (degrees), each about
    ``limit_axis``, the limit's rotation applied to +x in the joint's space."""
    limits = [j.limit for j in spring.joints]
    if not any(limits):
        return {}
    out = {"angle_limit_deg": [], "hinge_limit_deg": [], "spherical_limit_deg": [], "limit_axis": []}
    for lim in limits:
        kind, angles, rotation = lim if lim else (None, (), quat.IDENTITY)
        degrees = [math.degrees(a) for a in angles]
        out["angle_limit_deg"].append(degrees[0] if kind == "cone" else math.inf)
        out["hinge_limit_deg"].append([-degrees[0], degrees[0]] if kind == "hinge" else [-math.inf, math.inf])
        out["spherical_limit_deg"].append(degrees if kind == "spherical" else [math.inf, math.inf])
        out["limit_axis"].append([float(x) for x in quat.rotate(rotation, np.array([1.0, 0.0, 0.0]))])
        if kind == "cone" and not np.allclose(rotation, quat.IDENTITY):
            log.warning("%s: %s: a cone limit's rotation is not kept: gpu_jiggle's cone is about the target "
                        "direction", path, spring.name)
    return {key: rows for key, rows in out.items() if any(r != NO_LIMIT[key] for r in rows)}


#: A segment's value of each limit key when it has none (the rig's defaults).
NO_LIMIT = {"angle_limit_deg": math.inf, "hinge_limit_deg": [-math.inf, math.inf],
            "spherical_limit_deg": [math.inf, math.inf], "limit_axis": [1.0, 0.0, 0.0]}


def _collider(c, names) -> dict:
    out = {"name": c.name, "joint": names[c.node], "shape": c.shape, "offset": [float(x) for x in c.offset]}
    if c.shape == "plane":
        out["normal"] = [float(x) for x in c.normal]
        return out
    if c.shape == "capsule":
        out["end"] = [float(x) for x in c.tail]
    out["radius"] = float(c.radius)
    if c.inside:
        out["inside"] = True
    return out

"""A VRM avatar's spring bones as a gpu_jiggle :class:`~.rig.Rig`: the same rig a TOML file
makes, so render, play, bake and the pipeline run ``.vrm`` files as they run glTF + TOML.

VRM's step is one Verlet update per frame, so what it does depends on the frame rate. The
mapping fixes a reference rate (:data:`REFERENCE_RATE`, 60 Hz) and linearises VRM's update
about the rest pose at that rate; each segment then gets the spring whose small-amplitude
motion has the same frequency and decay, and each chain the gravity that gives the same sag.
docs/VRM.md derives it:

- one segment of length L (metres), stiffness S, drag d, at frame step Δt: its tail's angle
  off rest follows ``θ' = θ + (1 − d)(θ − θ_prev) − κ·θ`` per frame, ``κ = S·Δt/L``; the roots
  z of ``z² − (2 − d − κ)·z + (1 − d) = 0`` are the poles, ``s = ln z / Δt`` their continuous
  equals;
- VRM's drag slows the tail's world velocity, so it becomes gpu_jiggle's air drag
  ``μ = −(s₁ + s₂)`` (``= −ln(1 − d)/Δt`` for complex poles), its stiffness the spring
  ``ω₀² = s₁·s₂`` (``f = ω₀/2π``), with damping ratio 0 (no damping relative to the pose);
- gravity: VRM's tail sags by ``P/S`` radians at any rate; gpu_jiggle's by ``a/(ω₀²·L)``, so
  ``a = ω₀²·L·P/S`` along gravityDir (the chain's mean over its segments; ``P/Δt`` where
  S = 0).

Poles that have no continuous equal (a root ≤ 0: dragForce 1, or a stiffness that flips the
tail across its rest every frame) and S = 0 (no restoring force) are mapped approximately,
with a logged warning naming the joint (docs/VRM.md says how).
"""
from __future__ import annotations

import cmath
import logging
import math

import numpy as np

from . import quat
from .rig import Rig, RigError, rig_from_dict
from .rig_reader import ZERO_SEGMENT
from .vrm import VIRTUAL_TAIL, VrmError, VrmSprings, read_springs
from ..sim.spring import UnstableSpringError, check_stable

log = logging.getLogger(__name__)

#: VRM's update is per frame; the mapping matches it at this frame rate (Hz).
REFERENCE_RATE = 60.0
#: The solver's substep for a VRM rig (s), as the TOML rigs' default.
SUBSTEP = 1.0 / 120.0
#: The frequency (Hz) given to a joint of stiffness 0, which VRM leaves free to swing.
FREE_FREQUENCY = 0.05


def spring_from_vrm(stiffness: float, drag_force: float, length: float, rate: float = REFERENCE_RATE):
    """The spring matching one VRM segment's small-amplitude motion at ``rate`` frames/s.

    Args:
        stiffness: VRM stiffness S ≥ 0. drag_force: d in [0, 1]. length: the segment's rest
        length L > 0 (world units, metres in VRM). rate: VRM's frame rate (Hz) > 0.

    Returns:
        ``(frequency_hz, air_drag_per_s, exact)``: ω₀/2π, μ (1/s), and False where the match
        is approximate (see the module docstring).
    """
    dt = 1.0 / rate
    kappa = stiffness * dt / length
    b, c = 2.0 - drag_force - kappa, 1.0 - drag_force
    root = cmath.sqrt(b * b - 4.0 * c)
    z1, z2 = (b + root) / 2.0, (b - root) / 2.0
    if kappa == 0.0:  # a free pendulum (roots 1 and 1 - d): no restoring force to match
        return FREE_FREQUENCY, (-math.log(c) / dt if c > 0.0 else 2.0 * rate), False
    if abs(root.imag) > 0.0:
        s = cmath.log(z1) / dt
        return abs(s) / (2.0 * math.pi), -2.0 * s.real, True
    if z2.real > 0.0:
        s1, s2 = math.log(z1.real) / dt, math.log(z2.real) / dt
        return math.sqrt(s1 * s2) / (2.0 * math.pi), -(s1 + s2), True
    # A root at or below zero: VRM's tail flips across its target each frame, or drag 1 leaves
    # it no inertia. Critical damping with the slower root's decay per frame.
    slow = max(abs(z1), abs(z2))
    omega = -math.log(slow) / dt if slow > 0.0 else 2.0 * rate
    return omega / (2.0 * math.pi), 2.0 * omega, False


def rig_from_vrm(character, rate: float = REFERENCE_RATE, springs: VrmSprings | None = None) -> Rig:
    """The :class:`~.rig.Rig` of a loaded VRM (:class:`~.gltf.Character`) at ``rate``.

    Raises:
        VrmError (a ValueError): bad spring bones (:func:`~.vrm.read_springs`), or a rig the
        checks of the TOML path refuse (naming the chain). ValueError: rate not > 0.
    """
    data = rig_dict_from_vrm(character, rate, springs)
    source = f"{character.path} (VRM {(springs or read_springs(character)).version})"
    try:
        return rig_from_dict(data, character.skeleton, source)
    except RigError as exc:
        raise VrmError(str(exc)) from None


def rig_dict_from_vrm(character, rate: float = REFERENCE_RATE, springs: VrmSprings | None = None) -> dict:
    """The rig of a VRM as the TOML rig's tables (a dict; ``gpu-jiggle rig`` writes it as TOML).

    Raises: VrmError (see :func:`rig_from_vrm`). ValueError: rate not > 0 or not finite."""
    if not (isinstance(rate, (int, float)) and math.isfinite(rate) and rate > 0):
        raise ValueError(f"rate = {rate!r}: expected a frame rate > 0 (Hz)")
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
    data = {"solver": {"substep": SUBSTEP, "max_substeps": 8}, "chain": chains, "collider": colliders}
    try:
        for c in chains:
            check_stable(np.asarray(c["frequency"]), np.zeros(len(c["frequency"])), SUBSTEP)
    except UnstableSpringError:
        log.warning("%s: a spring is too stiff for the semi-implicit step of %.4g s: the rig uses the exact "
                    "integrator", character.path, SUBSTEP)
        data["solver"]["integrator"] = "exact"
    return data


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
    frequency, air_drag, gravity = [], [], []
    for k, j in enumerate(spring.joints):
        if not swings[k]:  # carried rigidly by the rig; its values are dropped
            frequency.append(None), air_drag.append(None)
            continue
        f, mu, exact = spring_from_vrm(j.stiffness, j.drag_force, float(lengths[k]), rate)
        if not exact:
            log.warning("%s: %s: joint %d (%r, stiffness %g, dragForce %g): no spring has VRM's poles at %g Hz; "
                        "matched approximately (docs/VRM.md)", path, spring.name, k, sk.names[j.node], j.stiffness,
                        j.drag_force, rate)
        frequency.append(f), air_drag.append(mu)
        sag = (2.0 * math.pi * f) ** 2 * lengths[k] / j.stiffness if j.stiffness > 0 else rate
        gravity.append(sag * j.gravity_power * j.gravity_dir)
    fill = next(f for f in frequency if f is not None) if any(swings) else 1.0
    fill_drag = next(m for m in air_drag if m is not None) if any(swings) else 0.0
    chain = {"name": spring.name, "joints": [sk.names[n] for n in nodes],
             "tip_length": float(np.linalg.norm(tip_local)), "tip_axis": [float(x) for x in tip_local],
             "frequency": [fill if f is None else f for f in frequency], "damping_ratio": 0.0,
             "air_drag": [fill_drag if m is None else m for m in air_drag],
             "particle_radius": [j.hit_radius for j in spring.joints],
             "gravity": [float(x) for x in np.mean(gravity, axis=0)] if gravity else [0.0, 0.0, 0.0],
             "colliders": list(spring.colliders)}
    if spring.center is not None:
        log.warning("%s: %s: center node %d (%r): inertia is taken in world space (gpu_jiggle has no center "
                    "space; world_influence tames it)", path, spring.name, spring.center, sk.names[spring.center])
    chain.update(_limits(path, spring, sk))
    return chain


def _limits(path, spring, sk) -> dict:
    """The rig's limit keys for a spring's VRMC_springBone_limit entries: cones per segment,
    a hinge or spherical limit per chain (the first joint's; others that differ are said)."""
    limits = [j.limit for j in spring.joints]
    if not any(limits):
        return {}
    out = {}
    cones = [math.degrees(lim[1][0]) if lim and lim[0] == "cone" else math.inf for lim in limits]
    if any(math.isfinite(a) for a in cones):
        out["angle_limit_deg"] = cones
    chained = [lim for lim in limits if lim and lim[0] != "cone"]
    if chained:
        kind, angles, rotation = chained[0]
        if any(lim[0] != kind or lim[1] != angles or not np.allclose(lim[2], rotation) for lim in chained[1:]):
            log.warning("%s: %s: its joints' %s limits differ; the chain takes the first one's", path, spring.name,
                        kind)
        axis = quat.rotate(rotation, np.array([1.0, 0.0, 0.0]))
        out["limit_axis"] = [float(x) for x in axis]
        if kind == "hinge":
            out["hinge_limit_deg"] = [-math.degrees(angles[0]), math.degrees(angles[0])]
        else:
            out["spherical_limit_deg"] = [math.degrees(a) for a in angles]
    if any(lim and lim[0] == "cone" and not np.allclose(lim[2], [0, 0, 0, 1]) for lim in limits):
        log.warning("%s: %s: a cone limit's rotation is not kept: gpu_jiggle's cone is about the target "
                    "direction", path, spring.name)
    return out


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

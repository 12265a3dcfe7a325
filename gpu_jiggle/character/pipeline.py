"""The per-frame pipeline for a glTF character: keyframes → IK/constraints → springs → skinning.

```python
from gpu_jiggle.character.gltf import Character
from gpu_jiggle.character.rig import load_rig
from gpu_jiggle.character.pipeline import Pipeline

fox = Character.load("data/fox/Fox.gltf")
rig = load_rig("rigs/fox.toml", fox.skeleton)
pipeline = Pipeline(fox, rig, clip="Run", backend="auto")
for frame in pipeline.play(fps=30, seconds=4):       # or pipeline.step(t, dt) by hand
    frame.world_matrices          # (N, 4, 4) float64, every node after springs
    frame.skinning_matrices[0]    # (J, 4, 4) float32, world(joint) · inverse bind, skin 0
    frame.strands                 # list of (segments + 1, 3) float64 world polylines
    frame.colliders               # ColliderShapes: spheres (K, 4), capsules (M, 7), world
```

Each :meth:`Pipeline.step` runs the four stages in this order, each also callable alone:

1. :meth:`Pipeline.sample_keyframes`: the clip sampled at the frame time (glTF rules,
   looped or held), giving a :class:`~gpu_jiggle.character.skeleton.Pose` of every node.
2. :meth:`Pipeline.apply_constraints`: look-at and two-bone IK (the rig's enabled ones, or
   those passed in), changing local joint rotations. This is the pose the springs follow.
3. :meth:`Pipeline.apply_springs`: the spring chains' joints and the procedural strands'
   points, taken from the constrained pose's world matrices, go to the
   :class:`~gpu_jiggle.Solver` (one per distinct gravity vector), with the rig's colliders
   placed on their joints; the solver advances by the frame's dt; each chain joint's local
   rotation is then replaced so that its bone turns by the solver's segment rotation
   (``new world rotation = segment_rotation · animated world rotation``). Joints outside
   the chains keep their local transforms; their children follow through the hierarchy.
4. :meth:`Pipeline.skin`: skinning matrices ``world(joint) · inverse_bind`` per skin.

The solver keeps state between steps: give frame times in order, with a fixed dt for one
run (the solver's substeps make the result nearly independent of the frame rate, SPEC 2).
:meth:`Pipeline.reset` starts over (the next step snaps every chain onto its pose).

Between steps, without reaching into the solvers:

- :meth:`Pipeline.set_parameters` changes f, ζ and the other spring values of one chain or
  strand group live (``pipeline.set_parameters("tail", frequency=[3.0, 2.5, 2.0])``),
  validated first, the motion going on from where it is;
- :meth:`Pipeline.teleport` says the character jumps before the next step: the chains are
  carried across (or snapped, ``keep_shape=False``) and the colliders start where they are
  instead of sweeping through the jump (SPEC 5);
- :meth:`Pipeline.solvers` and :meth:`Pipeline.solver_of` give the live
  :class:`~gpu_jiggle.Solver` s for read-backs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import quat
from ..sim.chains import PointChainSet
from .ik3d import look_at, two_bone_ik_3d
from .rig import LookAtSpec, Rig, TwoBoneIKSpec
from .skeleton import Pose
from ..sim.solver import Solver, check_stable

STAGES = ("keyframes", "constraints", "springs", "skinning")
# what Pipeline.set_parameters changes: per segment, except world_influence (per chain);
# gravity is not among them (it decides which solver a chain runs in: rig.solver_groups)
LIVE_PARAMETERS = ("frequency", "damping_ratio", "particle_radius", "max_distance", "world_influence")


@dataclass
class ColliderShapes:
    """The rig's colliders at one frame, world space.

    Attributes:
        spheres: (K, 4) float64, centre and radius. sphere_names: K names.
        capsules: (M, 7) float64, two ends and radius. capsule_names: M names.
    """

    spheres: np.ndarray
    sphere_names: list
    capsules: np.ndarray
    capsule_names: list


@dataclass
class Frame:
    """What one :meth:`Pipeline.step` gives.

    Attributes:
        time: the playing time asked for (s). clip_time: the time sampled in the clip (s).
        pose: the final local :class:`~gpu_jiggle.character.skeleton.Pose` (after springs).
        keyframe_world_matrices: (N, 4, 4) float64, nodes after stage 1 (raw keyframes).
        constrained_world_matrices: (N, 4, 4) float64, after stage 2 (what springs follow).
        world_matrices: (N, 4, 4) float64, after stage 3 (final).
        skinning_matrices: list per skin of (J, 4, 4) float32, ``world · inverse_bind``.
        chain_targets: list per rig chain of (segments + 1, 3) float64, the joints the
            springs were pulled toward (pivot, joints, virtual tip / strand points).
        chain_positions: list per rig chain of (segments + 1, 3) float64, simulated.
        segment_rotations: list per rig chain of (segments, 4) float32 quaternions.
        strands: the procedural strands' simulated polylines, (segments + 1, 3) float64
            each, in the order of ``rig.strand_chains``.
        colliders: :class:`ColliderShapes`.
        substeps: substeps the solver ran this frame.
    """

    time: float
    clip_time: float
    pose: Pose
    keyframe_world_matrices: np.ndarray
    constrained_world_matrices: np.ndarray
    world_matrices: np.ndarray
    skinning_matrices: list
    chain_targets: list = field(default_factory=list)
    chain_positions: list = field(default_factory=list)
    segment_rotations: list = field(default_factory=list)
    strands: list = field(default_factory=list)
    colliders: ColliderShapes | None = None
    substeps: int = 0


class Pipeline:
    """Keyframes → IK/constraints → springs → skinning for one character (module docstring).

    Args:
        character: a :class:`~gpu_jiggle.character.gltf.Character`.
        rig: a :class:`~gpu_jiggle.character.rig.Rig` for its skeleton, or None (no springs).
        clip: an animation name (or a :class:`~gpu_jiggle.character.animation.Clip`), or None for the
            rest pose. An unknown name raises ValueError listing the clips.
        loop: play the clip repeatedly (True) or hold its last frame after its end.
        backend: ``"auto"``, ``"gpu"`` or ``"cpu"``, for the spring solver.
        constraints: a list of :class:`~gpu_jiggle.character.rig.LookAtSpec` /
            :class:`~gpu_jiggle.character.rig.TwoBoneIKSpec`; None takes the rig's enabled ones.
        springs: False skips stage 3 (the animated pose, e.g. for a side-by-side compare).
        context: a moderngl context for the GPU solver (a window's), or None.
    """

    stages = STAGES

    def __init__(self, character, rig: Rig | None = None, clip=None, loop: bool = True, backend: str = "auto",
                 constraints=None, springs: bool = True, context=None):
        self.character = character
        self.skeleton = character.skeleton
        self.rig = rig
        if isinstance(clip, str):
            clip = character.clip(clip)
        self.clip = clip
        self.loop = bool(loop)
        if constraints is None:
            constraints = rig.enabled_constraints() if rig is not None else []
        for c in constraints:
            if not isinstance(c, (LookAtSpec, TwoBoneIKSpec)):
                raise TypeError(f"constraints: expected LookAtSpec or TwoBoneIKSpec objects, got {type(c).__name__}")
        self.constraints = list(constraints)
        self.springs = bool(springs) and rig is not None and bool(rig.chains)
        self.backend_name = backend
        self.context = context
        self._solvers = None
        self._groups = []
        self._teleport = None  # keep_shape of a teleport asked for, done by the next step
        self._rest = self.skeleton.rest_pose()

    # -- life cycle -------------------------------------------------------------------------
    def _make_solvers(self):
        rig = self.rig
        self._groups = rig.solver_groups()
        self._solvers = [Solver(chain_set, backend=self.backend_name, substep=rig.substep,
                                max_substeps=rig.max_substeps, context=self.context)
                         for chain_set, _ in self._groups]

    @property
    def backend(self) -> str | None:
        """The backend the solvers run on (``"gpu"``/``"cpu"``), None before the first step."""
        return self._solvers[0].backend if self._solvers else None

    def solvers(self) -> list:
        """The live :class:`~gpu_jiggle.Solver` s, one per group of ``rig.solver_groups()``
        (empty before the first step with springs, and after :meth:`reset`)."""
        return list(self._solvers or [])

    def solver_of(self, chain_name: str):
        """``(solver, index)``: the live solver running the rig chain ``chain_name`` (e.g.
        ``"tail"``, ``"mane[2]"``) and the chain's index among that solver's chains, or
        None before the first step with springs. ValueError for an unknown name."""
        index = self._chain_indices(chain_name, groups=False)[0]
        for solver, (_, members) in zip(self._solvers or [], self._groups):
            if index in members:
                return solver, members.index(index)
        return None

    def set_parameters(self, chain_name: str, **changes) -> None:
        """Change spring values of one rig chain, or of every strand of a strand group, from
        the next step on, without resetting the motion (``Solver.set_parameters``).

        Args:
            chain_name: a chain's name (``"tail"``, ``"mane[2]"``) or a strand group's
                (``"mane"``: all its strands).
            changes: any of ``frequency`` (Hz, > 0), ``damping_ratio`` (≥ 0),
                ``particle_radius`` (≥ 0) and ``max_distance`` (> 0), lengths in the model's
                unit, each a scalar or one value per segment of the chain; ``world_influence``,
                a scalar in [0, 1].

        The rig's chain specs take the new values too, so a :meth:`reset` (or another
        pipeline on the same rig, when it next makes its solvers) keeps them.

        Raises:
            ValueError: an unknown chain, a bad value, or f/ζ the rig's substep cannot keep
                stable (the message names the chain and gives the largest stable f).
            TypeError: an unknown parameter, or non-numbers. A refused change leaves the
                rig and the solvers as they were.
        """
        members = self._chain_indices(chain_name, groups=True)
        unknown = [k for k in changes if k not in LIVE_PARAMETERS]
        if unknown:
            raise TypeError(f"set_parameters: unknown parameter {unknown[0]!r}; expected one of "
                            f"{', '.join(LIVE_PARAMETERS)}")
        if not changes:
            return
        chains = self.rig.chains
        new = {}  # chain index -> {parameter: its new value, as ChainSpec holds it}
        for i in members:  # each chain checked alone: indices in messages are along that chain
            c = chains[i]
            try:
                one = PointChainSet(segment_counts=[c.segments],
                                    **{k: changes.get(k, getattr(c, k)) for k in LIVE_PARAMETERS})
                check_stable(one, self.rig.substep)
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"{c.name}: {exc}") from None
            new[i] = {k: float(one.world_influence[0]) if k == "world_influence" else np.array(getattr(one, k))
                      for k in changes}
        updates = []
        for solver, (_, group) in zip(self._solvers or [], self._groups):
            if any(i in new for i in group):
                values = [new.get(i) or {k: getattr(chains[i], k) for k in changes} for i in group]
                kwargs = {k: np.hstack([v[k] for v in values]) for k in changes}
                solver.chain_set.replace(**kwargs)  # every solver checked before any one changes
                updates.append((solver, kwargs))
        for solver, kwargs in updates:
            solver.set_parameters(**kwargs)
        for i, values in new.items():
            for k, v in values.items():
                setattr(chains[i], k, v)

    def teleport(self, keep_shape: bool = True) -> None:
        """Say that the character jumps before the next step (SPEC 5): that step flags every
        chain to jump (``Solver.teleport``: carried across with its shape and velocities, or
        with ``keep_shape=False`` snapped onto its pose at rest) and starts the colliders
        where they are instead of sweeping them through the jump. Before the first step (or
        after a reset) there is nothing to carry: the chains start on their pose anyway."""
        if not isinstance(keep_shape, (bool, np.bool_)):
            raise TypeError(f"keep_shape: expected a bool, got {type(keep_shape).__name__}")
        if self._solvers is not None:
            self._teleport = bool(keep_shape)

    def reset(self) -> None:
        """Drop the spring state: the next step starts the chains on their pose."""
        self.release()

    def release(self) -> None:
        """Free the solvers (GPU buffers) now; a later step makes new ones."""
        for s in self._solvers or []:
            s.release()
        self._solvers = None
        self._teleport = None

    def _chain_indices(self, chain_name, groups: bool) -> list:
        """Indices into ``rig.chains`` of the chain ``chain_name`` (or, with ``groups``, of
        the strand group of that name); ValueError naming the rig's chains."""
        chains = self.rig.chains if self.rig is not None else []
        found = [i for i, c in enumerate(chains) if c.name == chain_name or (groups and c.group == chain_name)]
        if not found:
            names = list(dict.fromkeys([n for c in chains for n in ((c.group, c.name) if groups else (c.name,))]))
            raise ValueError(f"chain_name = {chain_name!r}: no such chain"
                             f"{' or strand group' if groups else ''} in the rig; it has: {', '.join(names) or 'none'}")
        return found

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    # -- stages -----------------------------------------------------------------------------
    def sample_keyframes(self, time: float) -> Pose:
        """Stage 1: the clip at playing time ``time`` (s) over the rest pose."""
        if self.clip is None:
            return self._rest.copy()
        return self.clip.sample(self._rest, time, loop=self.loop)

    def apply_constraints(self, pose: Pose, time: float) -> Pose:
        """Stage 2: the constraints in order, each on the result of the one before."""
        pose = pose.copy()
        sk = self.skeleton
        for c in self.constraints:
            world = sk.world_matrices(pose)
            rot = sk.world_rotations(pose)
            if isinstance(c, LookAtSpec):
                new = look_at(world[c.node, :3, 3], rot[c.node], c.target_at(time), c.aim_axis, c.max_angle, c.weight)
                _set_world_rotation(sk, pose, rot, c.node, new)
            else:
                ik = two_bone_ik_3d(world[c.root, :3, 3], world[c.mid, :3, 3], world[c.end, :3, 3],
                                    c.target_at(time), c.pole)
                old_root, old_mid = rot[c.root].copy(), rot[c.mid].copy()
                _set_world_rotation(sk, pose, rot, c.root, quat.multiply(ik.root_rotation, old_root))
                rot = sk.world_rotations(pose)  # the mid joint's parent (the root) has turned
                _set_world_rotation(sk, pose, rot, c.mid, quat.multiply(ik.mid_rotation, old_mid))
        return pose

    def chain_targets(self, world) -> list:
        """Each rig chain's joints in world space (pivot first) from node world matrices:
        skeleton joints plus the virtual tip, or a strand's rest points on its joint."""
        out = []
        for c in self.rig.chains:
            if c.kind == "joints":
                pts = world[c.nodes, :3, 3]
                tip = world[c.nodes[-1]] @ np.append(c.local_points[0], 1.0)
                out.append(np.vstack([pts, tip[None, :3]]))
            else:
                m = world[c.nodes[0]]
                out.append(c.local_points @ m[:3, :3].T + m[:3, 3])
        return out

    def collider_shapes(self, world) -> ColliderShapes:
        """The rig's colliders placed on their joints' world matrices."""
        spheres, sphere_names, capsules, capsule_names = [], [], [], []
        for c in self.rig.colliders if self.rig is not None else []:
            m = world[c.node]
            scale = float(np.mean(np.linalg.norm(m[:3, :3], axis=0)))
            a = m[:3, :3] @ c.offset + m[:3, 3]
            if c.shape == "sphere":
                spheres.append([*a, c.radius * scale])
                sphere_names.append(c.name)
            else:
                b = m[:3, :3] @ c.end + m[:3, 3]
                capsules.append([*a, *b, c.radius * scale])
                capsule_names.append(c.name)
        return ColliderShapes(np.asarray(spheres, np.float64).reshape(-1, 4), sphere_names,
                              np.asarray(capsules, np.float64).reshape(-1, 7), capsule_names)

    def _collider_groups(self):
        groups = {c.name: c.group for c in self.rig.colliders}
        return groups

    def apply_springs(self, pose: Pose, dt: float):
        """Stage 3: advance the springs by ``dt`` seconds toward ``pose`` (the constrained
        pose); returns ``(final pose, details)`` where details holds chain_targets,
        chain_positions, segment_rotations, colliders and substeps."""
        sk = self.skeleton
        world = sk.world_matrices(pose)
        targets = self.chain_targets(world)
        shapes = self.collider_shapes(world)
        if self._solvers is None:
            self._make_solvers()
        teleport, self._teleport = self._teleport, None
        groups = self._collider_groups()
        sphere_groups = [groups[n] for n in shapes.sphere_names]
        capsule_groups = [groups[n] for n in shapes.capsule_names]
        positions = [None] * len(self.rig.chains)
        rotations = [None] * len(self.rig.chains)
        substeps = 0
        for solver, (chain_set, members) in zip(self._solvers, self._groups):
            if teleport is not None:
                solver.teleport(keep_shape=teleport)
            solver.set_pose(joint_positions=np.concatenate([targets[i] for i in members]))
            solver.set_colliders(spheres=shapes.spheres, sphere_groups=sphere_groups,
                                 capsules=shapes.capsules, capsule_groups=capsule_groups,
                                 snap=teleport is not None)
            substeps = solver.advance(dt)
            p = solver.positions()
            r = solver.segment_rotations()
            for i, js, ss in zip(members, chain_set.joint_slices(), chain_set.chain_slices()):
                positions[i] = p[js]
                rotations[i] = r[ss]
        final = pose.copy()
        rot = sk.world_rotations(pose)
        for c, q in zip(self.rig.chains, rotations):
            if c.kind != "joints":
                continue
            parent = sk.parents[c.nodes[0]]
            parent_world = quat.IDENTITY if parent < 0 else rot[parent]
            for node, bend in zip(c.nodes, q):
                new_world = quat.multiply(quat.normalize(bend.astype(np.float64)), rot[node])
                local = quat.normalize(quat.multiply(quat.conjugate(parent_world), new_world))
                if np.dot(local, pose.rotation[node]) < 0:  # stay in the animated rotation's hemisphere
                    local = -local
                final.rotation[node] = local
                parent_world = new_world
        details = dict(chain_targets=targets, chain_positions=positions, segment_rotations=rotations,
                       colliders=shapes, substeps=substeps)
        return final, details

    def skin(self, world) -> list:
        """Stage 4: per skin, (J, 4, 4) float32 ``world(joint) · inverse_bind``."""
        return [s.skinning_matrices(world).astype(np.float32) for s in self.character.skins]

    # -- frames -----------------------------------------------------------------------------
    def step(self, time: float, dt: float) -> Frame:
        """One frame: the four stages at playing time ``time`` (s), springs advanced by
        ``dt`` (s, ≥ 0; the same every frame of a run)."""
        time = float(time)
        if not math.isfinite(time):
            raise ValueError(f"time = {time!r}: expected a finite number of seconds")
        dt = float(dt)
        if not (math.isfinite(dt) and dt >= 0):
            raise ValueError(f"dt = {dt!r}: expected a finite number of seconds >= 0")
        sk = self.skeleton
        keyed = self.sample_keyframes(time)
        keyed_world = sk.world_matrices(keyed)
        constrained = self.apply_constraints(keyed, time) if self.constraints else keyed
        constrained_world = sk.world_matrices(constrained) if self.constraints else keyed_world
        clip_time = self.clip.local_time(time, self.loop) if self.clip is not None else 0.0
        if not self.springs:
            shapes = self.collider_shapes(constrained_world) if self.rig is not None else None
            targets = self.chain_targets(constrained_world) if self.rig is not None else []
            return Frame(time, clip_time, constrained, keyed_world, constrained_world, constrained_world,
                         self.skin(constrained_world), chain_targets=targets, chain_positions=targets,
                         strands=[t for t, c in zip(targets, self.rig.chains if self.rig else []) if c.kind == "strand"],
                         colliders=shapes)
        final, d = self.apply_springs(constrained, dt)
        world = sk.world_matrices(final)
        strands = [p for p, c in zip(d["chain_positions"], self.rig.chains) if c.kind == "strand"]
        return Frame(time, clip_time, final, keyed_world, constrained_world, world, self.skin(world),
                     chain_targets=d["chain_targets"], chain_positions=d["chain_positions"],
                     segment_rotations=d["segment_rotations"], strands=strands, colliders=d["colliders"],
                     substeps=d["substeps"])

    def play(self, fps: float, seconds: float, start: float = 0.0):
        """Yield frames at ``start + k/fps`` for k = 0 .. round(seconds·fps), each with
        dt = 1/fps (the first frame starts the chains on their pose)."""
        fps = float(fps)
        if not (math.isfinite(fps) and fps > 0):
            raise ValueError(f"fps = {fps!r}: expected a frame rate > 0")
        seconds = float(seconds)
        if not (math.isfinite(seconds) and seconds >= 0):
            raise ValueError(f"seconds = {seconds!r}: expected a finite duration >= 0")
        dt = 1.0 / fps
        for k in range(int(round(seconds * fps)) + 1):
            yield self.step(start + k / fps, dt)


def _set_world_rotation(skeleton, pose, world_rotations, node, new_world):
    """Give ``node`` the world rotation ``new_world`` by changing its local rotation."""
    parent = skeleton.parents[node]
    parent_world = quat.IDENTITY if parent < 0 else world_rotations[parent]
    local = quat.normalize(quat.multiply(quat.conjugate(parent_world), new_world))
    if np.dot(local, pose.rotation[node]) < 0:
        local = -local
    pose.rotation[node] = local

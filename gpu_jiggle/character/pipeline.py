"""The per-frame pipeline for a glTF character: keyframes → IK/constraints → springs → skinning.

```python
from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.character.rig.reader import load_rig
from gpu_jiggle.character.pipeline import Pipeline
from gpu_jiggle.data import fox_path, fox_rig_path

fox = Character.load(fox_path())                     # the bundled Fox sample
rig = load_rig(fox_rig_path(), fox.skeleton)
pipeline = Pipeline(fox, rig, clip="Run", backend="auto")
for frame in pipeline.play(fps=30, seconds=4):       # or pipeline.step(t, dt) by hand
    frame.world_matrices          # (N, 4, 4) float64, every node after springs
    frame.skinning_matrices[0]    # (J, 4, 4) float32, world(joint) · inverse bind, skin 0
    frame.strands                 # list of (segments + 1, 3) float64 world polylines
    frame.colliders               # ColliderShapes: spheres (K, 4), capsules (M, 7), world
    frame.morph_weights           # {node: (T,) float64} morph target weights, for the renderer
```

Each :meth:`Pipeline.step` runs the four stages in this order, each also callable alone:

1. :meth:`Pipeline.sample_keyframes`: the clip sampled at the frame time (glTF rules,
   looped or held), giving a :class:`~gpu_jiggle.character.pose.skeleton.Pose` of every node.
2. :meth:`Pipeline.apply_constraints`: look-at and two-bone IK (the rig's enabled ones, or
   those passed in), changing local joint rotations. This is the pose the springs follow.
3. :meth:`Pipeline.apply_springs`: the spring chains' joints and the procedural strands'
   points, taken from the constrained pose's world matrices, go to the character's one
   :class:`~gpu_jiggle.PointSolver` (``rig.chain_set``) with their animated world rotations
   (the limits' frames) and the rig's colliders placed on their joints; the solver advances
   by the frame's dt; each chain joint's local rotation is then replaced so that its world
   rotation is its segment's (docs/SPEC.md section 9, "Joint frames"). Joints outside
   the chains keep their local transforms; their children follow through the hierarchy. A
   chain joint on a zero-length segment (``ChainSpec.springy`` False) keeps its animated
   local rotation: it is carried rigidly with its parent.
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
- :attr:`Pipeline.solver` and :meth:`Pipeline.solver_of` give the live
  :class:`~gpu_jiggle.PointSolver` for read-backs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .pose import quat
from .pose.ik3d import look_at, two_bone_ik_3d
from .rig.live import LiveChanges
from .pose.chain_pose import posed_with_springs
from .rig.model import ColliderShapes, LookAtSpec, Rig, TwoBoneIKSpec
from .pose.skeleton import Pose
from ..sim.solver import Solver

STAGES = ("keyframes", "constraints", "springs", "skinning")


@dataclass
class Frame:
    """What one :meth:`Pipeline.step` gives.

    Attributes:
        time: the playing time asked for (s). clip_time: the time sampled in the clip (s).
        pose: the final local :class:`~gpu_jiggle.character.pose.skeleton.Pose` (after springs).
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
        morph_weights: {node index: (T,) float64} the morph target weights of every node
            whose mesh has targets (:meth:`Pipeline.morph_weights`).
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
    morph_weights: dict = field(default_factory=dict)


class Pipeline(LiveChanges):
    """Keyframes → IK/constraints → springs → skinning for one character (module docstring).

    Args:
        character: a :class:`~gpu_jiggle.character.gltf.loader.Character`.
        rig: a :class:`~gpu_jiggle.character.rig.model.Rig` for its skeleton, or None (no springs):
            what was authored. The pipeline plays its own copy (:attr:`rig`), which its live
            changes (``set_parameters``, ``set_wind``, ``set_collider``) change; the Rig given
            is never changed, so other pipelines made from it start from its values.
        clip: an animation name (or a :class:`~gpu_jiggle.character.pose.animation.Clip`), or None for the
            rest pose. An unknown name raises ValueError listing the clips.
        loop: play the clip repeatedly (True) or hold its last frame after its end.
        backend: ``"auto"``, ``"gpu"`` or ``"cpu"``, for the spring solver.
        constraints: a list of :class:`~gpu_jiggle.character.rig.model.LookAtSpec` /
            :class:`~gpu_jiggle.character.rig.model.TwoBoneIKSpec`; None takes the rig's enabled ones.
        springs: False skips stage 3 (the animated pose, e.g. for a side-by-side compare).
        context: a moderngl context for the GPU solver (a window's), or None.
    """

    stages = STAGES

    def __init__(self, character, rig: Rig | None = None, clip=None, loop: bool = True, backend: str = "auto",
                 constraints=None, springs: bool = True, context=None):
        self.character = character
        self.skeleton = character.skeleton
        #: The rig being played, with its live values: the pipeline's own copy of ``rig``.
        self.rig = rig.copy() if rig is not None else None
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
        self._solver = None
        self._teleport = None  # keep_shape of a teleport asked for, done by the next step
        self._rest = self.skeleton.rest_pose()
        self._morph_defaults = {m.node: m.morph_weights for m in character.meshes if m.morph_positions is not None}

    # -- life cycle -------------------------------------------------------------------------
    def _make_solver(self, origin):
        """The character's solver, its draw origin (SPEC 4.4: the buffers drawn from the GPU) on ``origin``: the first
        chain's pivot at the first step."""
        rig = self.rig
        self._solver = Solver(rig.chain_set, backend=self.backend_name, substep=rig.substep,
                              max_substeps=rig.max_substeps, context=self.context, origin=origin,
                              integrator=rig.integrator)
        if rig.wind is not None:
            self._solver.set_wind(**rig.wind.solver_arguments())

    @property
    def backend(self) -> str | None:
        """The backend the solver runs on (``"gpu"``/``"cpu"``), None before the first step."""
        return self._solver.backend if self._solver else None

    @property
    def solver(self):
        """The live :class:`~gpu_jiggle.PointSolver` of every rig chain (``rig.chain_set``, chain
        i of the solver = ``rig.chains[i]``), or None before the first step with springs and
        after :meth:`reset`."""
        return self._solver

    def solvers(self) -> list:
        """``[solver]``, or ``[]`` before the first step with springs (see :attr:`solver`)."""
        return [] if self._solver is None else [self._solver]

    def solver_of(self, chain_name: str):
        """``(solver, index)``: the live solver running the rig chain ``chain_name`` (e.g.
        ``"tail"``, ``"mane[2]"``) and the chain's index among its chains, or None before the
        first step with springs. ValueError for an unknown name."""
        index = self._chain_indices(chain_name, groups=False)[0]
        return None if self._solver is None else (self._solver, index)

    def teleport(self, keep_shape: bool = True) -> None:
        """Say that the character jumps before the next step (SPEC 5): that step flags every
        chain to jump (``Solver.teleport``: carried across with its shape and velocities, or
        with ``keep_shape=False`` snapped onto its pose at rest) and starts the colliders
        where they are instead of sweeping them through the jump. Before the first step (or
        after a reset) there is nothing to carry: the chains start on their pose anyway."""
        if not isinstance(keep_shape, (bool, np.bool_)):
            raise TypeError(f"keep_shape: expected a bool, got {type(keep_shape).__name__}")
        if self._solver is not None:
            self._teleport = bool(keep_shape)

    def reset(self) -> None:
        """Drop the spring state: the next step starts the chains on their pose."""
        self.release()

    def release(self) -> None:
        """Free the solver (GPU buffers) now; a later step makes a new one."""
        if self._solver is not None:
            self._solver.release()
        self._solver = None
        self._teleport = None

    def _chain_indices(self, chain_name, groups: bool) -> list:
        """Indices into ``rig.chains`` of the chain ``chain_name`` (or, with ``groups``, of
        the strand group of that name); ValueError naming the rig's chains."""
        if self.rig is None:
            raise ValueError(f"chain_name = {chain_name!r}: no such chain in the rig; it has: none")
        return self.rig.chain_indices(chain_name, groups)

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

    def morph_weights(self, time: float) -> dict:
        """{node: (T,) float64} morph weights at ``time`` (s) of every node whose mesh has targets:
        the clip's ``weights`` channel sampled like the others, else the node's defaults (glTF
        2.0 sections 3.7.2.2, 3.11). ValueError: a channel of another width than T."""
        out = {node: w.copy() for node, w in self._morph_defaults.items()}
        if self.clip is not None:
            for node, w in self.clip.sample_weights(time, loop=self.loop).items():
                if node in out:
                    if w.shape != out[node].shape:
                        raise ValueError(f"clip {self.clip.name!r}: node {node} has {len(out[node])} morph targets "
                                         f"but its weights channel gives {w.size} weights")
                    out[node] = w
        return out

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

    def apply_springs(self, pose: Pose, dt: float):
        """Stage 3: advance the springs by ``dt`` seconds toward ``pose`` (the constrained
        pose); returns ``(final pose, details)`` where details holds chain_targets,
        chain_positions, segment_rotations, colliders and substeps."""
        sk = self.skeleton
        world = sk.world_matrices(pose)
        targets = self.rig.chain_targets(world)
        shapes = self.rig.collider_shapes(world)
        if self._solver is None:
            self._make_solver(origin=targets[0][0])
        teleport, self._teleport = self._teleport, None
        groups, inside = self.rig.collider_groups(), self.rig.collider_inside()
        solver = self._solver
        if teleport is not None:
            solver.teleport(keep_shape=teleport)
        rot = sk.world_rotations(pose)
        solver.set_pose(joint_positions=np.concatenate(targets),
                        joint_rotations=np.concatenate(self.rig.chain_rotations(rot)))
        solver.set_colliders(spheres=shapes.spheres, sphere_groups=[groups[n] for n in shapes.sphere_names],
                             capsules=shapes.capsules, capsule_groups=[groups[n] for n in shapes.capsule_names],
                             sphere_inside=np.array([inside[n] for n in shapes.sphere_names], bool),
                             capsule_inside=np.array([inside[n] for n in shapes.capsule_names], bool),
                             planes=shapes.planes, plane_groups=[groups[n] for n in shapes.plane_names],
                             snap=teleport is not None)
        substeps = solver.advance(dt)
        p, r = solver.positions(), solver.segment_rotations()
        chain_set = solver.chain_set
        positions = [p[js] for js in chain_set.joint_slices()]
        rotations = [r[ss] for ss in chain_set.chain_slices()]
        final = posed_with_springs(self.rig, sk, pose, rot, rotations)
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
        morph = self.morph_weights(time)
        if not self.springs:
            shapes = self.rig.collider_shapes(constrained_world) if self.rig is not None else None
            targets = self.rig.chain_targets(constrained_world) if self.rig is not None else []
            return Frame(time, clip_time, constrained, keyed_world, constrained_world, constrained_world,
                         self.skin(constrained_world), chain_targets=targets, chain_positions=targets,
                         strands=[t for t, c in zip(targets, self.rig.chains if self.rig else []) if c.kind == "strand"],
                         colliders=shapes, morph_weights=morph)
        final, d = self.apply_springs(constrained, dt)
        world = sk.world_matrices(final)
        strands = [p for p, c in zip(d["chain_positions"], self.rig.chains) if c.kind == "strand"]
        return Frame(time, clip_time, final, keyed_world, constrained_world, world, self.skin(world),
                     chain_targets=d["chain_targets"], chain_positions=d["chain_positions"],
                     segment_rotations=d["segment_rotations"], strands=strands, colliders=d["colliders"],
                     substeps=d["substeps"], morph_weights=morph)

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
    pose.rotation[node] = quat.local_from_world(parent_world, new_world, pose.rotation[node])

"""Point chains on the host (SPEC section 4): :class:`PointSolver` — the draw origin, rest
lengths from the first pose, pose, collider and wind packing, and read-backs in world space.

Precision (SPEC 4.4): poses and colliders arrive in float64 world space. Each chain has an
anchor, its pivot in the latest pose (float64); the shader keeps the particles relative to
the pivot and the pivot's path relative to the anchor, which the state follows from frame to
frame (the kernel adds the anchor's move, old minus new, a small float32 number). Joint
targets go up as offsets from each chain's own pivot; colliders go up in float64 world
coordinates, taken relative to each chain's anchor in double precision in the shader. So a
chain anywhere, and chains any distance apart in one set, move like a lone chain at the
origin, colliders included. Outputs come back in world space as float64. A solver-wide
``origin`` remains only as the frame the drawing buffers use (``gpu_buffers``).
"""
from __future__ import annotations

import numpy as np

from . import layouts, packing, validation
from .chains import PointChainSet
from .collider_bounds import collider_fractions, fill_frame_bounds
from .inputs import ColliderPath, ColliderSet, Wind
from .point_records import checked_strands, pack_offsets, point_chain_rig, point_segment_rig
from .solver import Solver


class PointSolver(Solver):
    """A :class:`~gpu_jiggle.Solver` of 3D point chains (SPEC section 4); made by
    ``Solver(point_chain_set, ...)`` or directly, with the Solver's arguments and:

    Args:
        origin: (3,) world: the frame of the drawing buffers (``gpu_buffers``: the chain
            targets' ``pivot`` is relative to it); by default the mean pivot of the first pose.
            The simulation itself is relative to each chain's own pivot (SPEC 4.4).
        rotation_outputs: False for a solver whose segments' rotations nobody reads (strands
            drawn from their joints, grass): each frame's output is then the joints'
            positions and the segments' velocities alone, the same bits as with rotations,
            and :meth:`segment_rotations` and :meth:`segment_swings` raise (docs/SPEC.md
            section 9, "Frame-time output"). Fixed when the solver is made.

    Raises: as :class:`~gpu_jiggle.Solver`, and ValueError/TypeError for a bad origin;
    TypeError for a rotation_outputs that is not a bool.
    """

    KIND = "point"
    FRAME_PARAMS = layouts.POINT_FRAME_PARAMS
    DIM = 3
    CHAIN_SET = PointChainSet
    RECORDS = {"chain_state": layouts.POINT_CHAIN_STATE, "segment_state": layouts.POINT_SEGMENT_STATE,
               "joint_output": layouts.POINT_JOINT_OUTPUT, "segment_output": layouts.POINT_SEGMENT_OUTPUT}

    def __init__(self, chain_set, backend: str = "auto", substep: float = 1.0 / 120.0, max_substeps: int = 8,
                 context=None, origin=None, target_path: str = "monotone", damping_frame: str = "relative",
                 integrator: str = "semi-implicit", work_group_size: int | None = None,
                 rotation_outputs: bool = True):
        self.rotation_outputs = validation.flag("rotation_outputs", rotation_outputs)
        self._origin = None if origin is None else validation.coordinates("origin", origin, (3,))
        self._joint_positions = None      # this frame's pose, world, float64 (J, 3)
        self._joint_rotations = None      # and its joints' world rotations (J, 4) float64, if given
        self._state_anchor = None         # (C, 3) float64: the anchors the solver's state is relative to
        self._rest_lengths = getattr(chain_set, "rest_lengths", None)
        self._colliders = ColliderSet.empty()
        self._collider_path = ColliderPath.at_rest(ColliderSet.empty())   # where they were at the last substep
        self._snap_colliders = True
        self._identity_on_backend = True  # the backend's joint rotations are the identity (as made)
        if isinstance(chain_set, PointChainSet):
            self._pivot_of_segment = np.repeat(chain_set.first_joint, chain_set.segment_counts)
            counts = chain_set.segment_counts
            # Chains all of one length n: a pose splits into offsets by views (None otherwise).
            self._strand_length = int(counts[0]) if counts.size and (counts == counts[0]).all() else None
            self._tip_joint = np.delete(np.arange(chain_set.joint_count), chain_set.first_joint)
        super().__init__(chain_set, backend, substep, max_substeps, context, target_path, damping_frame,
                         integrator, work_group_size)

    # -- properties -------------------------------------------------------------------------
    @property
    def origin(self):
        """The drawing frame's origin (3,) float64, world space (None before the first pose)."""
        return None if self._origin is None else self._origin.copy()

    @property
    def rest_lengths(self):
        """(S,) float64 rest lengths in use (None before the first pose when they come from it)."""
        return None if self._rest_lengths is None else np.array(self._rest_lengths, dtype=np.float64)

    # -- per frame ----------------------------------------------------------------------------
    def set_pose(self, joint_positions, joint_rotations=None) -> None:
        """This frame's IK-final pose (SPEC sections 2 and 4).

        Args:
            joint_positions: (J, 3) float (float64 kept), world space: per chain its pivot,
                then one joint per segment tip. The first pose fixes the draw origin and,
                where the chain set has none, the rest lengths.
            joint_rotations: (J, 4) unit quaternions (x, y, z, w), float (normalised in
                float64), the joints' animated world rotations, in the order of the positions;
                each segment's limit frame is its base joint's (docs/SPEC.md section 9, "Joint
                frames"), followed per substep on the shorter arc (nlerp), and
                :meth:`segment_rotations` then gives world rotations, twist included. The
                tips' rotations are not used. Required when a segment has a hinge or
                spherical limit.

        Raises:
            ValueError: wrong shape or a non-finite value (argument, index and value named); a
                rotation whose length is off 1 by more than 1e-3; no ``joint_rotations`` while
                a segment has a hinge or spherical limit; a zero-length segment in a first pose
                that sets the rest lengths. Nothing is changed.
            TypeError: non-numeric input.
        """
        self._require_live("set_pose")
        cs = self._chain_set
        offsets = None
        if self._strand_length is not None:  # chains of one length: checked, copied and packed in one go
            joints, offsets = checked_strands("joint_positions", joint_positions, cs.chain_count, self._strand_length)
        else:
            joints = validation.coordinates("joint_positions", joint_positions, (cs.joint_count, 3))
        rotations = None
        if joint_rotations is not None:
            rotations = validation.float_array("joint_rotations", joint_rotations, (cs.joint_count, 4))
            norm = np.linalg.norm(rotations, axis=1)
            validation.require("joint_rotations", norm, np.abs(norm - 1.0) <= 1e-3,
                               "a unit quaternion (x, y, z, w) (its length within 1e-3 of 1); this is its length")
            rotations = rotations / norm[:, None]
        else:
            _require_rotations(cs, "set_pose")
        first = self._joint_positions is None
        new_rest = None
        if first and self._rest_lengths is None:
            new_rest = np.linalg.norm(joints[self._tip_joint] - joints[self._tip_joint - 1], axis=1)
            bad = ~(new_rest > 0)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                j = int(self._tip_joint[i])
                raise ValueError(f"joint_positions[{j}] = {joints[j].tolist()!r} coincides with joint {j - 1}: "
                                 f"segment {i} of the first pose has rest length 0 (pass rest_lengths to "
                                 f"PointChainSet, or pose the chain apart first)")
        if self._origin is None:
            self._origin = joints[cs.first_joint].mean(axis=0) if cs.chain_count else np.zeros(3)
        self._joint_positions = joints
        self._joint_rotations = rotations
        if new_rest is not None:
            self._rest_lengths = new_rest
            self._upload_rig(cs)
        self._pack_pose(offsets)

    def set_colliders(self, spheres=None, sphere_groups=None, capsules=None, capsule_groups=None, planes=None,
                      plane_groups=None, snap: bool = False, sphere_inside=None, capsule_inside=None) -> None:
        """This frame's colliders, world space (SPEC 4.2); replaces all of them.

        Args:
            spheres: (K, 4) centre xyz and radius ≥ 0. sphere_groups: (K,) ints in [0, 31].
            capsules: (M, 7) end a xyz, end b xyz, radius ≥ 0. capsule_groups: (M,).
            planes: (N, 4) unit normal xyz and offset o; particles keep n·x ≥ o + ρ.
                plane_groups: (N,).
            snap: start the colliders where they are now instead of interpolating from the
                last frame (use it with a teleport). A change in the number of colliders of a
                kind snaps that kind anyway.
            None or ``[]`` for none of a shape; a flat row of 4 (7) is one sphere or plane
            (capsule). Groups default to 0. A chain collides with a collider when its mask has
            the bit.
            sphere_inside: (K,) bools, capsule_inside: (M,) bools (default all False): True
                for a sphere or capsule that keeps particles inside it (a particle of radius ρ
                stays within its radius less ρ; the outward velocity removed), as
                VRMC_springBone_extended_collider's inside shapes. Segments need no stage of
                their own: both ends inside a convex shape keep the segment inside.

        Raises:
            ValueError: a wrong shape, non-finite value, negative radius, non-unit normal
            (off by more than 1e-3), or group outside [0, 31]; on llvmpipe, more colliders
            than its loop limit lets the longest chain take in one substep. TypeError: wrong
            types.
        """
        self._require_live("set_colliders")
        colliders = ColliderSet.validated(spheres, sphere_groups, capsules, capsule_groups, planes, plane_groups,
                                          sphere_inside, capsule_inside)
        self._backend.check_colliders(len(colliders.spheres), len(colliders.capsules), len(colliders.planes))
        kinds_before = self._kernel_kinds()
        self._colliders = colliders
        self._snap_colliders = self._snap_colliders or bool(snap)
        if self._kernel_kinds() != kinds_before:  # set every frame: the kernel changes only with these
            self._prepare_kernel()

    def rebase(self, origin) -> None:
        """Move the drawing frame's origin to ``origin`` (3,) world space: from the next
        ``advance``, the ``pivot`` of each chain in :meth:`gpu_buffers`' ``chain_output`` is
        relative to it. The simulation, relative to each chain's own pivot, is not affected.

        Raises: ValueError for a wrong shape or a non-finite value.
        """
        self._require_live("rebase")
        self._origin = validation.coordinates("origin", origin, (3,))

    # -- read-back -----------------------------------------------------------------------------
    def positions(self, raw: bool = False) -> np.ndarray:
        """(J, 3) float64 world-space joint positions: per chain its pivot, then its tips.

        At frame time the pivot is this frame's pose (SPEC section 2); ``raw=True`` gives the
        last substep's state, which starts at the last interpolated pivot (p_prev).

        Raises: RuntimeError before the first ``advance``.
        """
        out = self._read("joint_output", "raw_position" if raw else "position")
        cs = self._chain_set
        pivots = self._state_anchor
        if raw:
            pivots = pivots + self._backend.read("chain_state")["prev_pivot"][:, :3].astype(np.float64)
        per_joint = np.repeat(pivots, cs.segment_counts + 1, axis=0)
        return per_joint + out[:, :3].astype(np.float64)

    def velocities(self, raw: bool = False) -> np.ndarray:
        """(S, 3) float32 world velocities of the segment tips, length/s (frame time unless
        ``raw``). Raises: RuntimeError before the first ``advance``."""
        if raw:
            return np.ascontiguousarray(self._read("segment_state")["velocity"][:, :3])
        return np.ascontiguousarray(self._read("segment_output", "velocity")[:, :3])

    def segment_rotations(self) -> np.ndarray:
        """(S, 4) float32 unit quaternions (x, y, z, w), at frame time.

        When this frame's pose gave ``joint_rotations``: each simulated segment's world
        rotation, its target frame (its base joint's animated rotation turned with its
        parent's simulated bend) turned by the smallest rotation onto its simulated direction
        (docs/SPEC.md section 9, "Joint frames"): the animated twist kept; give them to a
        skeleton's bones as their world rotations. Otherwise: the smallest rotation taking each
        segment's animated direction onto its simulated one, to multiply onto the animated
        bone rotations (see :meth:`segment_swings`).

        Raises: RuntimeError before the first ``advance``, or for a solver made with
        ``rotation_outputs=False``."""
        self._require_rotations("segment_rotations")
        return self._read("segment_output", "world_rotation" if self._joint_rotations is not None else "rotation")

    def segment_swings(self) -> np.ndarray:
        """(S, 4) float32 quaternions (x, y, z, w), at frame time: the smallest rotation taking
        each segment's animated direction (this frame's pose) onto its simulated one, whether
        or not the pose gave rotations. Raises: RuntimeError before the first ``advance``, or
        for a solver made with ``rotation_outputs=False``."""
        self._require_rotations("segment_swings")
        return np.ascontiguousarray(self._read("segment_output", "rotation"))

    def _kind_options(self):
        return 0 if self.rotation_outputs else layouts.OPTION_NO_ROTATION_OUTPUTS

    def _option_names(self):
        return {**super()._option_names(), "rotation_outputs": self.rotation_outputs}

    def _require_rotations(self, method: str) -> None:
        if not self.rotation_outputs:
            raise RuntimeError(f"{method}: this solver was made with rotation_outputs=False, so its output holds "
                               "no rotations; make it with rotation_outputs=True to read them")

    # -- the kind's part of the host (see Solver) ------------------------------------------------
    def _rig_records(self, chain_set):
        lengths = self._rest_lengths if chain_set.rest_lengths is None else chain_set.rest_lengths
        if lengths is None:
            lengths = np.ones(chain_set.segment_count)  # placeholder until the first pose
        return point_chain_rig(chain_set), point_segment_rig(chain_set, lengths)

    def _has_pose(self):
        return self._joint_positions is not None

    def _pack_pose(self, offsets=None):
        """Pack this frame's pose once, when it is set: the anchors (the pivots, float64) and
        each tip's offset from its pivot, float64 → float32; ``offsets``: (S, 3) float32, the
        offsets :func:`checked_strands` packed already."""
        cs = self._chain_set
        joints = self._joint_positions
        self._target = np.zeros(cs.chain_count, layouts.POINT_CHAIN_TARGET)
        n = self._strand_length
        if n is not None:  # chains of one length: views, no gathers
            strands = joints.reshape(cs.chain_count, n + 1, 3)
            self._anchor = strands[:, 0].copy()
            self._offsets = offsets if offsets is not None else pack_offsets(
                strands, np.empty((cs.segment_count, 3), np.float32))
        else:
            self._offsets = np.empty((cs.segment_count, 3), np.float32)
            self._anchor = joints[cs.first_joint]
            np.subtract(joints[self._tip_joint], joints[self._pivot_of_segment], out=self._offsets,
                        casting="same_kind")
        self._target["anchor"] = self._anchor
        self._joint_rotation = None  # (S, 4) float32, each segment's base joint's rotation, if given
        if self._joint_rotations is not None:
            self._joint_rotation = self._joint_rotations[self._tip_joint - 1].astype(np.float32)
        self._offsets_fresh = True

    #: Whether the frame being made runs some chain at half rate (_upload_inputs, for the
    #: colliders' bounds: collider_fractions).
    _half_rate_chains = True

    def _upload_inputs(self, levels):
        """The targets (the offsets only when a new pose came) and the colliders on their path."""
        self._half_rate_chains = bool((levels == layouts.LOD_HALF).any())
        target = packing.copy_records(self._target)
        control = np.empty(self._chain_set.chain_count, layouts.POINT_CHAIN_CONTROL)
        control["teleport"], control["lod"] = self._teleport, levels
        fresh = self._offsets_fresh
        rotations_now = self._joint_rotation is not None if fresh else not self._identity_on_backend
        if rotations_now and not self._identity_on_backend:  # the jump's turn from the joints (SPEC 5)
            keep = (control["teleport"] & layouts.TELEPORT_MODE_MASK) == layouts.TELEPORT_KEEP_SHAPE
            control["teleport"] |= np.where(keep, np.uint32(layouts.TELEPORT_TURN_FROM_JOINTS), np.uint32(0))
        packing.anchor_shift(self._state_anchor, self._anchor, self._teleport, out=target["anchor_shift"])
        target["gust_phase"] = self._wind.space_phase(self._anchor)
        self._state_anchor = self._anchor
        rotation = self._joint_rotation if fresh else None
        if fresh and rotation is None and not self._identity_on_backend:  # the last pose had rotations
            rotation = np.tile(np.array([0, 0, 0, 1], np.float32), (self._chain_set.segment_count, 1))
        if rotation is not None:
            self._identity_on_backend = self._joint_rotation is None
        self._backend.upload_targets(target, control, self._offsets if fresh else None, rotation)
        self._offsets_fresh = False
        if self._snap_colliders or not self._collider_path.follows(self._colliders):
            self._collider_path = ColliderPath.at_rest(self._colliders)

    def _prepare_kernel(self):
        header = self._switch_header()
        (header["sphere_count"], header["capsule_count"], header["plane_count"]), inside, turning = self._kernel_kinds()
        self._backend.prepare(header, inside_colliders=inside, turning_planes=turning)

    def _kernel_kinds(self) -> tuple:
        """What of the colliders set the point kernel is compiled for: the counts of each shape,
        whether a sphere or capsule keeps particles inside, and whether a plane's normal turns
        over the next frame (it is not where the colliders' path starts, which a snap or a
        change of counts restarts at rest: _upload_inputs)."""
        colliders, path = self._colliders, self._collider_path
        turning = (not self._snap_colliders and path.follows(colliders)
                   and bool((colliders.planes[:, :3] != path.start.planes[:, :3]).any()))
        return colliders.counts(), bool(colliders.sphere_inside.any() or colliders.capsule_inside.any()), turning

    def _frame_buffer(self, plan):
        header, alphas = packing.frame_buffer(layouts.POINT_FRAME_PARAMS, plan, self._clock.substeps,
                                              self._chain_set.chain_count, self._wind.time_phases(plan))
        path = layouts.path_kind(self._options)
        records = self._collider_path.records(self._colliders, plan.full.span, path)
        fill_frame_bounds(*records, *collider_fractions(header[0], alphas, self._half_rate_chains), path)
        self._backend.upload_colliders(*records)
        header["sphere_count"], header["capsule_count"], header["plane_count"] = self._colliders.counts()
        header["options"] = self._options
        header["wind"], header["gust"], header["gust_direction"] = self._wind.records()
        header["origin"][..., :3] = self._origin
        header["contact_substep_cap"] = layouts.MAX_CONTACT_SUBSTEPS
        return packing.as_bytes(header, alphas)

    def _after_frame(self, plan):
        """Remember where the colliders were at the frame's last (full-rate) substep, and their
        path velocity there.

        Chains at half rate follow the colliders over their own span with the same start, so
        between their frames they see the colliders slightly ahead of time."""
        if plan.full.substep_count:
            self._collider_path = self._collider_path.advanced(self._colliders, float(plan.full.alphas[-1]),
                                                               plan.full.span, layouts.path_kind(self._options))
        self._snap_colliders = False

    def _parameters_changed(self, new, changes):
        if self._has_pose() and self._joint_rotations is None:
            _require_rotations(new, "set_parameters")
        if "rest_lengths" in changes:
            self._rest_lengths = new.rest_lengths
        self._upload_rig(new)

    def _inputs_arrays(self):
        path = self._collider_path
        out = {"snap_colliders": np.array(self._snap_colliders), "sphere_rate": path.sphere_rate,
               "capsule_rate": path.capsule_rate}
        for prefix, colliders in (("colliders.", self._colliders), ("applied_colliders.", path.start)):
            for name, value in colliders.arrays().items():
                out[prefix + name] = value
        out.update({"wind." + k: v for k, v in self._wind.arrays().items()})
        for name, value in (("joint_positions", self._joint_positions), ("joint_rotations", self._joint_rotations),
                            ("origin", self._origin),
                            ("rest_lengths", self._rest_lengths), ("state_anchor", self._state_anchor)):
            if value is not None:
                out[name] = np.asarray(value, np.float64)
        return out

    def _restore_inputs(self, arrays):
        from . import state
        cs = self._chain_set
        colliders = ColliderSet.from_arrays({k[len("colliders."):]: v for k, v in arrays.items()
                                             if k.startswith("colliders.")})
        applied = ColliderSet.from_arrays({k[len("applied_colliders."):]: v for k, v in arrays.items()
                                           if k.startswith("applied_colliders.")})
        wind = Wind.from_arrays({k[len("wind."):]: v for k, v in arrays.items() if k.startswith("wind.")})
        path = ColliderPath(applied, state.array(arrays, "sphere_rate", (len(applied.spheres), 3)),
                            state.array(arrays, "capsule_rate", (len(applied.capsules), 6)))
        snap = bool(state.array(arrays, "snap_colliders", ()))
        state_anchor = None
        if "state_anchor" in arrays:
            state_anchor = validation.coordinates("state anchor", state.array(arrays, "state_anchor", (cs.chain_count, 3)))
        joints = state.array(arrays, "joint_positions", (cs.joint_count, 3)) if "joint_positions" in arrays else None
        origin = state.array(arrays, "origin", (3,)) if "origin" in arrays else None
        rotations = state.array(arrays, "joint_rotations", (cs.joint_count, 4)) if "joint_rotations" in arrays else None
        if rotations is not None:
            rotations = validation.float_array("state joint_rotations", rotations)
        rest = state.array(arrays, "rest_lengths", (cs.segment_count,)) if "rest_lengths" in arrays else None
        if rest is not None:  # as PointChainSet checks rest_lengths
            rest = validation.coordinates("state rest_lengths", rest)
            validation.require("state rest_lengths", rest, rest > 0, "a finite value > 0")
        if joints is not None:
            joints = validation.coordinates("state joint_positions", joints)
            if origin is None:
                raise ValueError("state: its origin is missing")

        def apply():
            self._colliders, self._collider_path, self._wind, self._snap_colliders = colliders, path, wind, snap
            self._joint_positions, self._origin, self._state_anchor = joints, origin, state_anchor
            self._joint_rotations = rotations
            if rest is not None and cs.rest_lengths is None:
                self._rest_lengths = rest
                self._upload_rig(cs)
            if joints is not None:
                self._pack_pose()
        return apply

    def _inputs_snapshot(self):
        return {"joint_positions": None if self._joint_positions is None else self._joint_positions.copy(),
                "joint_rotations": None if self._joint_rotations is None else self._joint_rotations.copy(),
                "origin": None if self._origin is None else self._origin.copy(),
                "colliders": self._colliders, "applied_colliders": self._collider_path.start,
                "wind": self._wind, "rest_lengths": None if self._rest_lengths is None else self._rest_lengths.copy()}


def _require_rotations(chain_set, where):
    """Refuse a pose without joint rotations for a chain set with hinge or spherical limits."""
    if chain_set.requires_rotations:
        s = int(np.flatnonzero(chain_set.needs_rotations)[0])
        chain, local = chain_set.locate("hinge_limit", 2 * s)
        kind = "hinge" if np.isfinite(chain_set.hinge_limit[s, 0]) else "spherical"
        raise ValueError(f"{where}: joint_rotations are required: segment {s} (chain {chain}, segment {local}) has a "
                         f"{kind} limit, measured in its base joint's frame (pass "
                         f"set_pose(joint_positions, joint_rotations))")

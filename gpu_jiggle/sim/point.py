"""The host side of point chains (SPEC section 4): the floating origin, rest lengths from the
first pose, pose and collider packing, wind, frame parameters and read-backs, for
:class:`gpu_jiggle.Solver`.

Precision (SPEC 4.4): poses and colliders arrive in float64 world space. The host subtracts
a floating origin in float64 (by default the mean pivot of the first pose) and uploads
float32 values relative to it; each chain's joint targets go up as offsets from its own
pivot, and the shader keeps the particles relative to the pivot. Outputs come back in world
space as float64.
"""
from __future__ import annotations

import numpy as np

from . import packing as buffers, layouts, validation
from .inputs import NO_WIND, ColliderSet, pack_colliders


class PointModel:
    """Packs a :class:`~gpu_jiggle.PointChainSet`'s rig, poses and colliders for a backend."""

    kind = "point"

    def __init__(self, chain_set, origin=None):
        self.chain_set = chain_set
        self.origin = None if origin is None else validation.float_array("origin", origin, (3,))
        self.joint_positions = None      # this frame's pose, world, float64 (J, 3)
        self.rest_lengths = chain_set.rest_lengths
        self.colliders = ColliderSet.empty()
        self.applied_colliders = ColliderSet.empty()   # where they were at the last substep
        self.snap_colliders = True
        self.wind = NO_WIND
        c = chain_set.chain_count
        self._pivot_of_segment = np.repeat(chain_set.first_joint, chain_set.segment_counts)
        self._tip_joint = np.arange(chain_set.joint_count)[np.isin(np.arange(chain_set.joint_count),
                                                                   chain_set.first_joint, invert=True)]
        self._chain_count = c

    def backend_classes(self):
        from .backends.gpu import GpuPointBackend
        from .backends.reference_point import ReferencePointBackend
        return ReferencePointBackend, GpuPointBackend

    def rig(self, chain_set):
        lengths = self.rest_lengths if chain_set.rest_lengths is None else chain_set.rest_lengths
        if lengths is None:
            lengths = np.ones(chain_set.segment_count)  # placeholder until the first pose
        return buffers.point_chain_rig(chain_set), buffers.point_segment_rig(chain_set, lengths)

    # -- poses --------------------------------------------------------------------------------
    def prepare_pose(self, joint_positions):
        """Validate a pose (J, 3) float64 world; returns a callable that applies it.

        The first pose fixes the floating origin (unless given) and, where the chain set has
        none, the rest lengths; a zero-length segment in it is refused.
        """
        cs = self.chain_set
        joints = validation.float_array("joint_positions", joint_positions, (cs.joint_count, 3))
        rest = self.rest_lengths
        origin = self.origin
        first = self.joint_positions is None
        if first and rest is None:
            rest = np.linalg.norm(joints[self._tip_joint] - joints[self._tip_joint - 1], axis=1)
            bad = ~(rest > 0)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                j = int(self._tip_joint[i])
                raise ValueError(f"joint_positions[{j}] = {joints[j].tolist()!r} coincides with joint {j - 1}: "
                                 f"segment {i} of the first pose has rest length 0 (pass rest_lengths to "
                                 f"PointChainSet, or pose the chain apart first)")
        if origin is None:
            origin = joints[cs.first_joint].mean(axis=0) if cs.chain_count else np.zeros(3)
        new_rig = first and self.rest_lengths is None and cs.rest_lengths is None

        def apply():
            self.joint_positions = joints
            self.origin = origin
            if new_rig:
                self.rest_lengths = rest
            self.pack_pose()
        return apply, new_rig

    def pack_pose(self):
        """Pack this frame's pose once, when it is set (or the origin moves): the pivots
        relative to the origin and each tip's offset from its pivot, float64 → float32."""
        cs = self.chain_set
        joints = self.joint_positions
        self._target = np.zeros(cs.chain_count, layouts.POINT_CHAIN_TARGET)
        self._target["pivot"][:, :3] = joints[cs.first_joint] - self.origin
        self._offsets = np.zeros((cs.segment_count, 4), np.float32)
        self._offsets[:, :3] = joints[self._tip_joint] - joints[self._pivot_of_segment]
        self._offsets_fresh = True

    @property
    def has_pose(self):
        return self.joint_positions is not None

    def targets(self, teleport, lod):
        """This frame's POINT_CHAIN_TARGET records (with teleport flags and levels of detail)
        and the (S, 4) float32 joint offsets."""
        target = self._target.copy()
        target["teleport"] = teleport
        target["lod"] = lod
        return target, self._offsets

    def upload(self, backend, teleport, lod):
        """Upload the targets (the offsets only when a new pose came) and the colliders."""
        target, offsets = self.targets(teleport, lod)
        backend.upload_targets(target, offsets if self._offsets_fresh else None)
        self._offsets_fresh = False
        start = self.colliders if (self.snap_colliders or not self.applied_colliders.matches(self.colliders)) \
            else self.applied_colliders
        self._collider_start = start
        backend.upload_colliders(*pack_colliders(start, self.colliders, self.origin))

    def frame_params(self, plans, substeps, sim_times):
        return buffers.point_frame_params(plans, substeps, self.chain_set.chain_count, self.chain_set.gravity,
                                          self.wind.packet(self.origin, sim_times), self.colliders.counts())

    def after_frame(self, plan):
        """Remember where the colliders were at the frame's last (full-rate) substep.

        Chains at half rate interpolate the colliders over their own span with the same
        start, so between their frames they see the colliders slightly ahead of time."""
        if plan.substep_count:
            alpha = float(plan.alphas[-1])
            self.applied_colliders = self._collider_start.lerp(self.colliders, alpha)
        elif self.snap_colliders or not self.applied_colliders.matches(self.colliders):
            self.applied_colliders = self.colliders
        self.snap_colliders = False

    def snapshot(self):
        return {"joint_positions": None if self.joint_positions is None else self.joint_positions.copy(),
                "origin": None if self.origin is None else self.origin.copy(),
                "colliders": self.colliders, "applied_colliders": self.applied_colliders,
                "wind": self.wind, "rest_lengths": None if self.rest_lengths is None else self.rest_lengths.copy()}

    # -- read-back ------------------------------------------------------------------------------
    def world_positions(self, joint_output, chain_state, raw):
        """(J, 3) float64 world positions from the backend's output records."""
        cs = self.chain_set
        joint_pivot = np.repeat(cs.first_joint, cs.segment_counts + 1)
        if raw:
            pivots = self.origin + chain_state["prev_pivot"][:, :3].astype(np.float64)
            per_joint = np.repeat(pivots, cs.segment_counts + 1, axis=0)
            return per_joint + joint_output["raw_position"][:, :3].astype(np.float64)
        return self.joint_positions[joint_pivot] + joint_output["position"][:, :3].astype(np.float64)

"""The host side of angle chains (SPEC section 3): rig and pose packing, frame parameters and
read-backs, for :class:`gpu_jiggle.Solver`."""
from __future__ import annotations

import numpy as np

from . import packing as buffers, layouts, validation


class AngleModel:
    """Packs an :class:`~gpu_jiggle.AngleChainSet`'s rig and poses for a backend."""

    kind = "angle"

    def __init__(self, chain_set):
        self.chain_set = chain_set
        self.chain_target = None
        self.local_angle = None

    def backend_classes(self):
        from .backends.gpu import GpuAngleBackend
        from .backends.reference_angle import ReferenceAngleBackend
        return ReferenceAngleBackend, GpuAngleBackend

    @staticmethod
    def rig(chain_set):
        return buffers.chain_rig(chain_set), buffers.angle_segment_rig(chain_set)

    def prepare_pose(self, root_position, root_angle, local_angle):
        """Validate and pack a pose; returns a callable that applies it (nothing changes before)."""
        cs = self.chain_set
        position = validation.float_array("root_position", root_position, (cs.chain_count, 2))
        angle = validation.float_array("root_angle", root_angle, (cs.chain_count,))
        local = validation.float_array("local_angle", local_angle, (cs.segment_count,))
        target = np.zeros(cs.chain_count, layouts.ANGLE_CHAIN_TARGET)
        target["root_position"] = position
        target["root_angle"] = buffers.wrap_angle64(angle)
        local32 = buffers.wrap_angle64(local).astype(np.float32)

        def apply():
            self.chain_target, self.local_angle = target, local32
        return apply

    @property
    def has_pose(self):
        return self.chain_target is not None

    def upload(self, backend, teleport, lod):
        target = self.chain_target.copy()
        target["teleport"] = teleport
        target["lod"] = lod
        backend.upload_targets(target, self.local_angle)

    def frame_params(self, plans, substeps, sim_times):
        return buffers.frame_params(plans, substeps, self.chain_set.chain_count, self.chain_set.gravity)

    def after_frame(self, plan):
        pass

    def snapshot(self):
        return {"chain_target": None if self.chain_target is None else self.chain_target.copy(),
                "local_angle": None if self.local_angle is None else self.local_angle.copy()}

"""Angle chains on the GPU: ``shaders/sim/angle_chains.comp`` (see :mod:`gpu_jiggle.sim.backends`
for the interface, :mod:`.gpu` for what the GPU backends share)."""
from __future__ import annotations

import numpy as np

from .. import layouts
from .gpu import _GpuBackend
from .variants import batch_switches, each_batch, frame_substeps, fused_substeps, option_switches


class GpuAngleBackend(_GpuBackend):
    """Angle chains in ``angle_chains.comp``. See :mod:`gpu_jiggle.sim.backends` for the interface."""

    SHADER = "sim/angle_chains.comp"
    BINDINGS = layouts.ANGLE_BINDINGS
    UNIFORM_BLOCKS = layouts.ANGLE_UNIFORM_BLOCKS
    TEXTURES = layouts.ANGLE_TEXTURES
    VIEWS = layouts.ANGLE_VIEWS
    PARAMS = layouts.ANGLE_FRAME_PARAMS
    DTYPES = {"chain_state": layouts.ANGLE_CHAIN_STATE, "segment_state": layouts.ANGLE_SEGMENT_STATE,
              "joint_output": layouts.ANGLE_JOINT_OUTPUT, "segment_output": layouts.ANGLE_SEGMENT_OUTPUT,
              "chain_output": layouts.ANGLE_CHAIN_OUTPUT}

    def __init__(self, chain_set, ctx, work_group_size: int | None = None):
        c, s = chain_set.chain_count, chain_set.segment_count
        super().__init__(chain_set, ctx, {
            "params": layouts.ANGLE_FRAME_PARAMS.itemsize + 4 * layouts.INITIAL_ALPHA_CAPACITY,
            "chain_rig": c * layouts.ANGLE_CHAIN_RIG.itemsize,
            "chain_state": c * layouts.ANGLE_CHAIN_STATE.itemsize,
            "segment_state": s * layouts.ANGLE_SEGMENT_STATE.itemsize,
            "chain_target": c * layouts.ANGLE_CHAIN_TARGET.itemsize,
            "local_angle": s * layouts.ANGLE_LOCAL_ANGLE.itemsize,
            "joint_output": (s + c) * layouts.ANGLE_JOINT_OUTPUT.itemsize,
            "segment_output": s * layouts.ANGLE_SEGMENT_OUTPUT.itemsize,
            "chain_output": c * layouts.ANGLE_CHAIN_OUTPUT.itemsize, "exact_step": 0}, work_group_size,
            texture_records={"segment_rig": (layouts.ANGLE_SEGMENT_RIG.itemsize, s)})

    @staticmethod
    def loop_cost(header):
        """Loop iterations per segment (per substep, and for the frame-time output) of the
        angle kernel, with a margin over what llvmpipe was measured to count."""
        return 2, 4

    @staticmethod
    def switches(header) -> dict:
        """EXACT_STEPS: the exact integrator is on; WIND: w0 or the gust amplitude is not zero
        (the kernel's own test of ``params.wind``); FUSED_SUBSTEPS: the batch of substeps a
        segment runs with its state in registers, the frame's substeps rounded up to 2, 4 or 8
        (:func:`fused_substeps`); ONE_BATCH: the frame's substeps fit in one batch
        (:func:`batch_switches`); TARGET_PATH, RELATIVE_DAMPING: the solver's options
        (:func:`option_switches`)."""
        substeps = frame_substeps(header)
        return {"EXACT_STEPS": int(bool(int(header["options"]) & layouts.OPTION_EXACT_INTEGRATOR)),
                "WIND": int(bool((header["wind"][:3] != 0).any())),
                **batch_switches(fused_substeps(substeps), substeps), **option_switches(int(header["options"]))}

    def likely_switches(self, header) -> list:
        """One variant per batch of fused substeps that a frame of up to the header's
        substeps may take (frames of 1 to 8 substeps: 2, 4 and 8, each in one batch)."""
        return each_batch(self.switches(header), int(header["full_rate"]["substep_count"]))

    def upload_targets(self, chain_target, local_angle):
        with self.gl.current():
            self._write("chain_target", chain_target)
            self._write("local_angle", np.asarray(local_angle, np.float32))

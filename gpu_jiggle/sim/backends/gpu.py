"""The GLSL compute backends: ``shaders/angle_chains.comp`` and ``shaders/point_chains.comp``
over std430 storage buffers.

One invocation per chain walks root to tip through every substep of the frame in a single
dispatch; the state stays in GPU buffers between frames and is read back only on request.
"""
from __future__ import annotations

import numpy as np

from .. import layouts
from ...gl.glsl import compute_shader

LOCAL_SIZE = 64
MAX_GROUPS_X = 65535


def dispatch_size(count: int, local_size: int = LOCAL_SIZE) -> tuple[int, int]:
    """Work groups (x, y) for ``count`` invocations: rows of at most MAX_GROUPS_X groups
    (every kernel bounds-checks its ``invocation_index()``, common.glsl)."""
    groups = max(1, -(-count // local_size))
    rows = -(-groups // MAX_GROUPS_X)
    return -(-groups // rows), rows


class _GpuBackend:
    """Buffers by name, bound at fixed bindings, and one compute program per frame."""

    name = "gpu"
    SHADER = ""
    BINDINGS: dict = {}
    DTYPES: dict = {}

    def __init__(self, chain_set, ctx, sizes):
        self.ctx = ctx
        self.chain_count = chain_set.chain_count
        self.program = compute_shader(ctx, self.SHADER, {"LOCAL_SIZE": LOCAL_SIZE})
        self.sizes = dict(sizes)
        # Buffers may not be empty: an empty one still gets 16 bytes.
        self.buffers = {name: ctx.buffer(reserve=max(size, 16)) for name, size in sizes.items()}

    def write_state(self, chain_state, segment_state):
        self._write("chain_state", chain_state)
        self._write("segment_state", segment_state)

    def upload_rig(self, chain_rig, segment_rig):
        self._write("chain_rig", chain_rig)
        self._write("segment_rig", segment_rig)

    def read(self, name):
        data = self.buffers[name].read(size=self.sizes[name]) if self.sizes[name] else b""
        return np.frombuffer(data, self.DTYPES[name]).copy()

    def buffer(self, name):
        """The moderngl buffer behind ``name`` (for drawing straight from the solver's state)."""
        return self.buffers[name]

    def run_frame(self, params):
        if self.chain_count == 0:
            return
        self._write("params", params)
        for name, binding in self.BINDINGS.items():
            self.buffers[name].bind_to_storage_buffer(binding)
        group_x, group_y = dispatch_size(self.chain_count)
        self.program.run(group_x=group_x, group_y=group_y)
        self.ctx.memory_barrier()

    def release(self):
        for b in self.buffers.values():
            b.release()
        self.program.release()

    def _write(self, name, array):
        data = np.ascontiguousarray(array).tobytes()
        if name not in self.buffers:
            self.buffers[name] = self.ctx.buffer(reserve=max(len(data), 16))
        elif len(data) > self.buffers[name].size:
            self.buffers[name].orphan(len(data))
        self.sizes[name] = len(data)
        if data:
            self.buffers[name].write(data)


class GpuAngleBackend(_GpuBackend):
    """Angle chains in ``angle_chains.comp``. See :mod:`gpu_jiggle.sim.backends` for the interface."""

    SHADER = "angle_chains.comp"
    BINDINGS = {"params": 0, "chain_rig": 1, "segment_rig": 2, "chain_state": 3, "segment_state": 4,
                "chain_target": 5, "local_angle": 6, "joint_output": 7, "segment_output": 8}
    DTYPES = {"chain_state": layouts.ANGLE_CHAIN_STATE, "segment_state": layouts.ANGLE_SEGMENT_STATE,
              "joint_output": layouts.ANGLE_JOINT_OUTPUT, "segment_output": layouts.ANGLE_SEGMENT_OUTPUT}

    def __init__(self, chain_set, ctx):
        c, s = chain_set.chain_count, chain_set.segment_count
        super().__init__(chain_set, ctx, {
            "params": layouts.FRAME_PARAMS.itemsize + 4 * 64,
            "chain_rig": c * layouts.CHAIN_RIG.itemsize,
            "segment_rig": s * layouts.ANGLE_SEGMENT_RIG.itemsize,
            "chain_state": c * layouts.ANGLE_CHAIN_STATE.itemsize,
            "segment_state": s * layouts.ANGLE_SEGMENT_STATE.itemsize,
            "chain_target": c * layouts.ANGLE_CHAIN_TARGET.itemsize,
            "local_angle": s * 4,
            "joint_output": (s + c) * layouts.ANGLE_JOINT_OUTPUT.itemsize,
            "segment_output": s * layouts.ANGLE_SEGMENT_OUTPUT.itemsize})

    def upload_targets(self, chain_target, local_angle):
        self._write("chain_target", chain_target)
        self._write("local_angle", np.asarray(local_angle, np.float32))


class GpuPointBackend(_GpuBackend):
    """Point chains in ``point_chains.comp``. See :mod:`gpu_jiggle.sim.backends` for the interface."""

    SHADER = "point_chains.comp"
    BINDINGS = {"params": 0, "chain_rig": 1, "segment_rig": 2, "chain_state": 3, "segment_state": 4,
                "chain_target": 5, "joint_offset": 6, "joint_output": 7, "segment_output": 8,
                "spheres": 9, "capsules": 10, "planes": 11}
    DTYPES = {"chain_state": layouts.POINT_CHAIN_STATE, "segment_state": layouts.POINT_SEGMENT_STATE,
              "joint_output": layouts.POINT_JOINT_OUTPUT, "segment_output": layouts.POINT_SEGMENT_OUTPUT}

    def __init__(self, chain_set, ctx):
        c, s = chain_set.chain_count, chain_set.segment_count
        super().__init__(chain_set, ctx, {
            "params": layouts.POINT_FRAME_PARAMS.itemsize + 4 * 64,
            "chain_rig": c * layouts.POINT_CHAIN_RIG.itemsize,
            "segment_rig": s * layouts.POINT_SEGMENT_RIG.itemsize,
            "chain_state": c * layouts.POINT_CHAIN_STATE.itemsize,
            "segment_state": s * layouts.POINT_SEGMENT_STATE.itemsize,
            "chain_target": c * layouts.POINT_CHAIN_TARGET.itemsize,
            "joint_offset": s * 16,
            "joint_output": (s + c) * layouts.POINT_JOINT_OUTPUT.itemsize,
            "segment_output": s * layouts.POINT_SEGMENT_OUTPUT.itemsize,
            "spheres": 0, "capsules": 0, "planes": 0})

    def upload_targets(self, chain_target, joint_offset=None):
        """``joint_offset`` None: unchanged since the last upload."""
        self._write("chain_target", chain_target)
        if joint_offset is not None:
            self._write("joint_offset", np.asarray(joint_offset, np.float32))

    def upload_colliders(self, spheres, capsules, planes):
        self._write("spheres", spheres)
        self._write("capsules", capsules)
        self._write("planes", planes)

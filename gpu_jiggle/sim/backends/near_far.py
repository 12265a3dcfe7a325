"""Near and far chains on the GPU (docs/SPEC.md section 9, "Near and far chains"): a point-chain
frame with colliders runs as two passes of ``shaders/sim/point_chains.comp``, so that the
chains no collider comes near skip the contact stages' code (Mesa's llvmpipe runs both sides
of every branch; a GPU spends registers on it).

Per dispatch (a frame's range of substeps):

1. the state (``chain_state``, ``segment_state``) is copied to the near pass's own buffers;
2. the far pass (``NEAR_FAR`` 1) runs every chain without the contact stages, each segment
   through a batch of substeps with its state in registers. Where one could act on a chain
   (a collider within reach of the box holding the balls of the stages' own broad phase,
   ``contact_possible``, in a substep: ``shaders/sim/point_far.glsl``; or contact sub-steps
   needed), it marks the chain near (``contact_near`` of its state);
3. ``list_near`` (``shaders/sim/near_chains.comp``) lists the near chains and sizes the
   indirect dispatch of the next two steps, on the GPU: nothing is read back;
4. the near pass (``NEAR_FAR`` 2) runs every stage for the listed chains, on the copy, from
   the state the dispatch started with. It writes their outputs over the far pass's;
5. ``keep_near`` copies the listed chains' state back.

A far chain ran exactly the stages a single pass would have run (its contact stages were
no-ops), so the results are bit-identical to one pass of every stage; a near chain ran the
single pass itself.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...gl.dispatch import dispatch_size
from ...gl.glsl import compute_shader

SHADER = "sim/near_chains.comp"
#: The list of near chains (``near_chains.glsl``): its header (the near pass's work groups x,
#: y, z, read by the indirect dispatch, and the count) before each far pass, then a chain index
#: per near chain.
NEAR_CHAINS_BINDING = 14
NEAR_CHAINS_HEADER = np.array([0, 1, 1, 0], np.uint32)
NEAR_COUNT_OFFSET = 12  # bytes: the count after the work groups
#: The near pass's copy of the state, by the name of the state buffer it copies, as
#: ``list_near`` and ``keep_near`` bind it.
NEAR_STATE = {"chain_state": ("near_chain_state", 5), "segment_state": ("near_segment_state", 6)}


class NearFarPrograms(NamedTuple):
    """The point kernel compiled as the far pass (``NEAR_FAR`` 1) and the near pass (2)."""
    far: object
    near: object


def splits_near_far(switches: dict) -> bool:
    """Whether a frame with these point-kernel switches runs as near and far chains: it has
    spheres, capsules or planes, each shape in slots (at most 8), and none keeps particles
    inside (those act on particles far from them: every chain would be near)."""
    slots = [switches[name] for name in ("SPHERE_SLOTS", "CAPSULE_SLOTS", "PLANE_SLOTS")]
    return any(slots) and min(slots) >= 0 and not switches["INSIDE_COLLIDERS"]


class NearFarPasses:
    """The buffers and the two small kernels around the near and far passes of one
    :class:`~gpu_jiggle.sim.backends.gpu_point.GpuPointBackend` (its context current in every
    method): the near pass's copy of the state and the list of near chains, made on first use
    and resized with the state."""

    def __init__(self, backend):
        self.backend = backend
        self.programs = {}  # KEEP_NEAR → list_near (0) or keep_near (1)
        self.buffers = {}  # near_chain_state, near_segment_state (the near pass's copy), near_chains

    def prepare(self) -> None:
        """Compile ``list_near`` and ``keep_near`` and run each once on no chains (llvmpipe
        compiles at the first dispatch)."""
        b = self.backend
        self._size_buffers()
        for keep in (0, 1):
            if keep not in self.programs:
                program = b.gl.track(compute_shader(b.ctx, SHADER, {"LOCAL_SIZE": b.work_group_size,
                                                                    "KEEP_NEAR": keep}))
                self.buffers["near_chains"].write(NEAR_CHAINS_HEADER.tobytes())
                self._bind(b.no_chains())
                program.run(group_x=1)
                b.ctx.memory_barrier()
                self.programs[keep] = program

    def run(self, programs: NearFarPrograms) -> None:
        """One dispatch of the frame (the frame buffer written) as the five steps of the
        module's docstring."""
        b = self.backend
        self.prepare()
        group_x, group_y = dispatch_size(b.chain_count, b.work_group_size)
        near_chains = self.buffers["near_chains"]
        near_chains.write(NEAR_CHAINS_HEADER.tobytes())
        b.uploaded_bytes += NEAR_CHAINS_HEADER.nbytes
        for name, (copy, _) in NEAR_STATE.items():
            b.ctx.copy_buffer(self.buffers[copy], b.buffers[name], size=b.sizes[name])
        b.bind_buffers()
        b.bind_textures()
        programs.far.run(group_x=group_x, group_y=group_y)
        b.ctx.memory_barrier()
        self._bind(b.buffers["params"])
        self.programs[0].run(group_x=group_x, group_y=group_y)
        b.ctx.memory_barrier()
        b.bind_buffers()
        for name, (copy, _) in NEAR_STATE.items():
            self.buffers[copy].bind_to_storage_buffer(b.BINDINGS[name])
        b.bind_textures(views_of={name: self.buffers[copy] for name, (copy, _) in NEAR_STATE.items()})
        near_chains.bind_to_storage_buffer(NEAR_CHAINS_BINDING)
        programs.near.run_indirect(near_chains)
        b.ctx.memory_barrier()
        self._bind(b.buffers["params"])
        self.programs[1].run_indirect(near_chains)
        b.ctx.memory_barrier()

    def near_count(self) -> int:
        """How many chains the last dispatch listed as near (a read-back of 4 bytes)."""
        return int(np.frombuffer(self.buffers["near_chains"].read(4, offset=NEAR_COUNT_OFFSET), np.uint32)[0])

    def _bind(self, params) -> None:
        """The bindings of near_chains.comp, with ``params`` as its frame buffer."""
        b = self.backend
        params.bind_to_storage_buffer(b.BINDINGS["params"])
        for name in ("chain_rig", "chain_state", "segment_state"):
            b.buffers[name].bind_to_storage_buffer(b.BINDINGS[name])
        for copy, binding in NEAR_STATE.values():
            self.buffers[copy].bind_to_storage_buffer(binding)
        self.buffers["near_chains"].bind_to_storage_buffer(NEAR_CHAINS_BINDING)

    def _size_buffers(self) -> None:
        """The copy of the state as large as the state; the list with room for every chain."""
        b = self.backend
        sizes = {copy: b.sizes[name] for name, (copy, _) in NEAR_STATE.items()}
        sizes["near_chains"] = NEAR_CHAINS_HEADER.nbytes + 4 * b.chain_count
        for name, size in sizes.items():
            size = max(size, 16)
            if name not in self.buffers:
                self.buffers[name] = b.gl.track(b.ctx.buffer(reserve=size))
            elif self.buffers[name].size < size:
                self.buffers[name].orphan(size)

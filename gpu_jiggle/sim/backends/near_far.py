"""Near and far chains on the GPU (docs/SPEC.md section 9, "Near and far chains"): a point-chain
frame with colliders runs as two passes of ``shaders/sim/point_chains.comp``, so that the
chains no collider comes near skip the contact stages' code (Mesa's llvmpipe runs a branch's
body for all 8 chains of a vector where any of them takes it, and Mesa 22.3 even where none
does: ``benchmarks/bench_branches.py``; a GPU spends registers on it).

The state lives in two buffers of each record (``chain_state``, ``segment_state``, and the
spare of each, ``near_chain_state``, ``near_segment_state``). Per dispatch (a frame's range of
substeps):

1. the far pass (``NEAR_FAR`` 1) runs every chain without the contact stages, each segment
   through a batch of substeps with its state in registers. Where one could act on a chain
   (a collider within reach of the box holding the balls of the stages' own broad phase,
   ``contact_possible``, in a substep: ``shaders/sim/point_far.glsl``; or contact sub-steps
   needed), it marks the chain near (``contact_near`` of its state);
2. ``list_near`` (``shaders/sim/near_chains.comp``) lists the near chains and sizes the
   indirect dispatch of the next two steps, on the GPU: nothing is read back;
3. the near pass (``NEAR_FAR`` 2) runs every stage for the listed chains from the state the
   dispatch started with. It writes their outputs over the far pass's;
4. ``keep_near`` copies the listed chains' state to where the far pass wrote the others'.

Where the far pass reads the state only through its image views (one batch of substeps), in
a frame's first dispatch (no chain idle in it: each writes its state) and with no teleport
that keeps a chain's shape (its own walk reads the state the far pass wrote), the far pass
reads the state the dispatch started with and writes the spare, and the near pass runs on
the state it started with, in place; the two then swap names: nothing copied but the near
chains' state. Otherwise the state is first copied to the spare, the far pass runs in place,
the near pass on the copy (:attr:`NearFarPasses.swapped` says which ran).

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
#: The spare of each state buffer, by the name of the state buffer, at the binding where
#: ``keep_near`` reads the near pass's state.
NEAR_STATE = {"chain_state": ("near_chain_state", 5), "segment_state": ("near_segment_state", 6)}


class NearFarPrograms(NamedTuple):
    """The point kernel compiled as the far pass (``NEAR_FAR`` 1) and the near pass (2);
    ``far_reads_views``: whether the far pass reads the state only through its image views
    (``SEGMENT_STATE_VIEW`` and ``BUFFER_IMAGES`` of point_chains.comp)."""
    far: object
    near: object
    far_reads_views: bool = False


def splits_near_far(switches: dict) -> bool:
    """Whether a frame with these point-kernel switches runs as near and far chains: it has
    spheres, capsules or planes, each shape in slots (at most 8), none keeps particles inside
    (those act on particles far from them: every chain would be near), and no plane's normal
    turns over the frame (the far pass bounds a plane by its largest offset along one normal,
    gpu_jiggle/sim/collider_bounds.py)."""
    slots = [switches[name] for name in ("SPHERE_SLOTS", "CAPSULE_SLOTS", "PLANE_SLOTS")]
    return (any(slots) and min(slots) >= 0 and not switches["INSIDE_COLLIDERS"]
            and not switches.get("TURNING_PLANES", 0))


class NearFarPasses:
    """The buffers and the two small kernels around the near and far passes of one
    :class:`~gpu_jiggle.sim.backends.gpu_point.GpuPointBackend` (its context current in every
    method): the spare of each state buffer and the list of near chains, made on first use and
    resized with the state."""

    def __init__(self, backend):
        self.backend = backend
        self.programs = {}  # KEEP_NEAR → list_near (0) or keep_near (1)
        self.buffers = {}  # near_chain_state, near_segment_state (the state's spares), near_chains

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
                self._bind(b.no_chains(), self._state(), self._spares())
                program.run(group_x=1)
                b.ctx.memory_barrier()
                self.programs[keep] = program

    #: Whether the last dispatch swapped the state with its spare (the module's docstring).
    swapped = False

    def run(self, programs: NearFarPrograms, first_of_frame: bool = True) -> None:
        """One dispatch of the frame (the frame buffer written) as the steps of the module's
        docstring; ``first_of_frame``: it runs the frame's first substeps."""
        b = self.backend
        self.prepare()
        group_x, group_y = dispatch_size(b.chain_count, b.work_group_size)
        near_chains = self.buffers["near_chains"]
        near_chains.write(NEAR_CHAINS_HEADER.tobytes())
        b.uploaded_bytes += NEAR_CHAINS_HEADER.nbytes
        start, spare = self._state(), self._spares()
        self.swapped = programs.far_reads_views and first_of_frame and not b.keep_shape_teleports
        if self.swapped:  # the far pass reads start through its views and writes spare
            far_state, near_state = spare, start
        else:
            for name in NEAR_STATE:
                b.ctx.copy_buffer(spare[name], start[name], size=b.sizes[name])
            far_state, near_state = start, spare
        self._bind_state(far_state)
        b.bind_textures()
        programs.far.run(group_x=group_x, group_y=group_y)
        b.ctx.memory_barrier()
        self._bind(b.buffers["params"], far_state, near_state)
        self.programs[0].run(group_x=group_x, group_y=group_y)
        b.ctx.memory_barrier()
        self._bind_state(near_state)
        b.bind_textures(views_of=near_state)
        near_chains.bind_to_storage_buffer(NEAR_CHAINS_BINDING)
        programs.near.run_indirect(near_chains)
        b.ctx.memory_barrier()
        self._bind(b.buffers["params"], far_state, near_state)
        self.programs[1].run_indirect(near_chains)
        b.ctx.memory_barrier()
        if self.swapped:  # the far pass's buffers, with the near chains kept, are the state now
            for name, (copy, _) in NEAR_STATE.items():
                b.buffers[name], self.buffers[copy] = spare[name], start[name]

    def _bind_state(self, state: dict) -> None:
        """The point kernel's bindings, with ``state`` ({name: buffer}) as its state."""
        b = self.backend
        b.bind_buffers()
        for name, buffer in state.items():
            buffer.bind_to_storage_buffer(b.BINDINGS[name])

    def near_count(self) -> int:
        """How many chains the last dispatch listed as near (a read-back of 4 bytes)."""
        return int(np.frombuffer(self.buffers["near_chains"].read(4, offset=NEAR_COUNT_OFFSET), np.uint32)[0])

    def _state(self) -> dict:
        """The backend's state buffers, by name."""
        return {name: self.backend.buffers[name] for name in NEAR_STATE}

    def _spares(self) -> dict:
        """Their spares, by the name of the state buffer each stands for."""
        return {name: self.buffers[copy] for name, (copy, _) in NEAR_STATE.items()}

    def _bind(self, params, state: dict, near_state: dict) -> None:
        """The bindings of near_chains.comp, with ``params`` as its frame buffer, ``state``
        ({name: buffer}) where the far pass wrote (list_near reads the marks there, keep_near
        writes) and ``near_state`` where the near pass ran (keep_near reads)."""
        b = self.backend
        params.bind_to_storage_buffer(b.BINDINGS["params"])
        b.buffers["chain_rig"].bind_to_storage_buffer(b.BINDINGS["chain_rig"])
        for name, (_, binding) in NEAR_STATE.items():
            state[name].bind_to_storage_buffer(b.BINDINGS[name])
            near_state[name].bind_to_storage_buffer(binding)
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

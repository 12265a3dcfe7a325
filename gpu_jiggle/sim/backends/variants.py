"""The kernel variants of the GPU backends: each compute kernel is compiled with the feature
switches a frame needs (``#define NAME value`` lines of ``shaders/sim/*.comp``: a feature left
out where the frame cannot use it, the point kernel's colliders in a fixed number of slots,
the angle kernel's batch of fused substeps), compiled where the switches' inputs change
(``prepare``, called by the solver at set-up) and kept by their switches.

Mesa's llvmpipe runs a branch's body for all 8 lanes of a vector where any of them takes it,
and Mesa 22.3 even where none does (``benchmarks/bench_branches.py``), so code left in costs
there; on a GPU it costs registers. docs/SPEC.md section 9 ("GPU kernel variants") says what
a variant may change (rounding, not the model).
"""
from __future__ import annotations

import numpy as np

from .. import layouts
from ...gl.glsl import compute_shader


class KernelVariants:
    """The compiled variants of a backend's ``SHADER`` by their switches (``programs``, made by
    the backend's constructor), for a class that also has ``ctx``, ``gl`` (a
    :class:`~gpu_jiggle.gl.lifetime.GlOwner`), ``work_group_size``, ``buffers``,
    ``BINDINGS``, ``PARAMS``, ``buffer_images``, ``set_samplers(program)`` and
    ``bind_textures()``, and says its ``switches(header)`` (BUFFER_IMAGES is added here)."""

    programs: dict

    def program_for(self, header):
        """The kernel compiled with this frame's feature switches (:meth:`switches`), made on
        first use and kept: a feature the frame cannot use is left out of the code, which gives
        the same results faster (llvmpipe runs a branch's body for every lane of a vector any of
        them takes it in)."""
        return self._program(self.switches(header))

    def prepare(self, header) -> None:
        """Compile now the variants that frames with this header run (:meth:`likely_switches`),
        so that ``run_frame`` finds them made: the solver calls it where what the switches
        follow changes (its constructor, ``set_parameters``, ``set_wind``, ``set_colliders``, a
        restore), not inside ``advance``. ``header``: a frame buffer's header with the
        options, the wind, the collider counts and, as ``full_rate.substep_count``, the most
        substeps a frame runs."""
        for switches in self.likely_switches(header):
            self._program(switches)

    def likely_switches(self, header) -> list:
        """The switches of the variants :meth:`prepare` compiles for ``header``."""
        return [self.switches(header)]

    def _program(self, switches: dict):
        """The kernel with these switches, compiled on first use: made, then run once on no
        chains (a frame buffer of chain_count 0), since a driver may compile for the device
        only then (Mesa's llvmpipe does)."""
        switches = {**switches, "BUFFER_IMAGES": int(self.buffer_images)}
        key = tuple(sorted(switches.items()))
        if key not in self.programs:
            with self.gl.current():
                program = self.gl.track(compute_shader(self.ctx, self.SHADER,
                                                       {"LOCAL_SIZE": self.work_group_size, **switches}))
                for name, binding in self.BINDINGS.items():  # every block backed by a buffer, as GL asks
                    self.buffers[name].bind_to_storage_buffer(binding)
                for binding in self.UNIFORM_BLOCKS.values():  # zeros as large as any uniform block
                    self.no_chains().bind_to_uniform_block(binding)
                self.no_chains().bind_to_storage_buffer(self.BINDINGS["params"])
                self.set_samplers(program)
                self.bind_textures()
                program.run(group_x=1)
                self.ctx.memory_barrier()
                self.programs[key] = program
        return self.programs[key]

    _no_chains = None

    #: The largest uniform block the kernel declares beside its frame header, bytes.
    UNIFORM_BLOCK_BYTES = 0

    def no_chains(self):
        """A frame buffer of no chains (chain_count 0) for a kernel's first run, zeros as
        large as any uniform block, which it also backs there; the context is current."""
        if self._no_chains is None:
            size = max(self.PARAMS.itemsize, self.UNIFORM_BLOCK_BYTES)
            self._no_chains = self.gl.track(self.ctx.buffer(np.zeros(size, np.uint8)))
        return self._no_chains

    def switches(self, header) -> dict:
        """The kernel's feature switches (``#define NAME value``) for a frame's header."""
        raise NotImplementedError


#: The batch sizes of the angle kernel's FUSED_SUBSTEPS: a segment runs up to this many substeps
#: with its state in registers. Measured on llvmpipe, 1M segments (``gpu-jiggle bench``): a
#: batch of 8 runs 8 substeps 1.3-1.5x faster than one substep at a time, but 2 substeps
#: 10-20 % slower than a batch of 2 does (its per-substep arrays go to memory there), so the
#: batch follows the frame.
FUSED_BATCHES = (2, 4, 8)


def fused_substeps(substeps: int, batches: tuple = FUSED_BATCHES) -> int:
    """The smallest of the batch sizes ``batches`` (ascending; :data:`FUSED_BATCHES` unless
    given) that holds ``substeps``, else the largest."""
    return next((size for size in batches if substeps <= size), batches[-1])


def option_switches(options: int) -> dict:
    """TARGET_PATH (a ``layouts.PATH_*`` kind) and RELATIVE_DAMPING (0 or 1) of the solver
    ``options`` (OPTION_* bits), which are fixed when a solver is made: compiled in, the
    kernel leaves the other kinds' branches out (``frame_path_kind`` in common.glsl)."""
    return {"TARGET_PATH": layouts.path_kind(options),
            "RELATIVE_DAMPING": int(bool(options & layouts.OPTION_RELATIVE_DAMPING))}


def frame_substeps(header) -> int:
    """The most substeps a chain runs in a frame with this header (full or half rate)."""
    return max(int(header["full_rate"]["substep_count"]), int(header["half_rate"]["substep_count"]))


def batch_switches(fused: int, substeps: int) -> dict:
    """FUSED_SUBSTEPS and ONE_BATCH of a kernel whose segments run batches of ``fused``
    substeps, for a frame of ``substeps``: ONE_BATCH 1 where the frame's substeps fit in one
    batch (the kernel runs it without a loop around it; the same operations in the same order)."""
    return {"FUSED_SUBSTEPS": fused, "ONE_BATCH": int(max(substeps, 1) <= fused)}


def each_batch(switches: dict, most_substeps: int, batches: tuple = FUSED_BATCHES) -> list:
    """``switches`` with each batch that a frame of up to ``most_substeps`` may take, of the
    sizes ``batches`` (ascending; the smallest that holds the frame's substeps, else the
    largest): FUSED_BATCHES, up to 8 substeps 2, 4 and 8, each in one batch, past 8 batches of
    8 in a loop too; ``(2,)``, the far pass's, 2 in one batch and, past 2, in a loop. For
    ``likely_switches``."""
    most = max(most_substeps, 1)
    fits, largest = fused_substeps(most, batches), batches[-1]
    return [{**switches, **batch_switches(batch, batch)} for batch in batches if batch <= fits] \
        + ([{**switches, **batch_switches(largest, most)}] if most > largest else [])


#: The buckets of collider slots the point kernel is compiled with (SPHERE_SLOTS, CAPSULE_SLOTS,
#: PLANE_SLOTS): a frame's count of a shape rounded up to one of these, so that a scene whose
#: counts change from frame to frame compiles few variants; more than the last is a loop over
#: the frame's count (-1). Measured on llvmpipe (``gpu-jiggle bench``, 1M segments, a sphere and
#: a capsule): see docs/PERFORMANCE.md.
COLLIDER_SLOT_BUCKETS = (0, 1, 2, 4, 8)


def collider_slots(count: int) -> int:
    """The smallest of :data:`COLLIDER_SLOT_BUCKETS` that holds ``count`` colliders, else -1."""
    return next((slots for slots in COLLIDER_SLOT_BUCKETS if count <= slots), -1)

"""What the GLSL compute backends share (:class:`_GpuBackend`; the kinds' own in
``gpu_angle.py`` and ``gpu_point.py``): buffers by name over std430 storage buffers, the
frame's dispatches, the loop limit of Mesa's llvmpipe and the context's storage limits.

One invocation per chain walks root to tip through every substep of the frame in a single
dispatch; the state stays in GPU buffers between frames and is read back only on request.
"""
from __future__ import annotations

from contextlib import nullcontext

import numpy as np

from .. import layouts
from .interface import LoopLimitError
from .variants import KernelVariants
from ...gl.buffer_image import FORMATS as VIEW_FORMATS, BufferViews, views_unavailable
from ...gl.dispatch import LOCAL_SIZE, check_work_group_size, dispatch_size
from ...gl.lifetime import GlOwner
from ...gl.record_texture import RecordTexture, check_texture_rows
from ...gl.timing import GpuTimer

#: Buffers may not be empty: an empty one still gets this many bytes.
MIN_BUFFER_BYTES = 16
#: Mesa's llvmpipe ends every loop of a shader invocation once the loops nested in one
#: outermost loop have run 65535 iterations in all (its loop limiter), silently. A frame whose
#: chains would need more is run over several dispatches of fewer substeps each (the
#: ``substep_begin``/``substep_end`` of the frame buffer), with this margin below the limit.
LLVMPIPE_LOOP_BUDGET = 60000
#: On llvmpipe, a frame with spheres or capsules runs so few substeps per dispatch that each
#: substep of a chain has room for at least this many contact sub-steps (SPEC 9) where one
#: substep at a time allows it; the frame buffer's contact_substep_cap is what the budget leaves.
LLVMPIPE_CONTACT_SUBSTEPS = 16


class _GpuBackend(KernelVariants):
    """Buffers by name, bound at fixed bindings, and one compute program per frame. Every GL
    call runs with the backend's context current and from the thread that made it
    (:class:`~gpu_jiggle.gl.lifetime.GlOwner`); the buffers are freed on :meth:`release` or
    when the backend is garbage-collected."""

    name = "gpu"
    SHADER = ""
    BINDINGS: dict = {}
    #: Buffers also read as uniform blocks, name → uniform block binding
    #: (``layouts.POINT_UNIFORM_BLOCKS``).
    UNIFORM_BLOCKS: dict = {}
    #: Read-only records held in textures (:mod:`gpu_jiggle.gl.record_texture`), name → texture unit.
    TEXTURES: dict = {}
    #: Storage buffers read through read-only image views (:mod:`gpu_jiggle.gl.buffer_image`),
    #: name → (image unit, format); ``layouts.ANGLE_VIEWS``, ``layouts.POINT_VIEWS``.
    VIEWS: dict = {}
    #: Why the kernels read the storage buffers themselves, where they do (no buffer textures
    #: on the context, or too small ones); None where they read through ``VIEWS``.
    views_off_reason = None
    DTYPES: dict = {}
    #: Bytes written to GPU buffers so far (every upload: rig, targets, colliders, frame buffer).
    uploaded_bytes = 0
    #: A GpuTimer around every frame's dispatches while timing is on (:meth:`enable_timing`).
    timer = None

    def __init__(self, chain_set, ctx, sizes, work_group_size: int | None = None, texture_records=None):
        """``sizes``: bytes of each storage buffer by name; ``texture_records``: (record bytes,
        count) of each record texture of ``TEXTURES``."""
        texture_records = dict(texture_records or {})
        self.ctx = ctx
        self.chain_count = chain_set.chain_count
        self.longest_chain = int(chain_set.segment_counts.max()) if chain_set.chain_count else 0
        self.sizes = dict(sizes)
        self.gl = GlOwner(ctx, f"this solver of {chain_set!r}")
        with self.gl.current():
            check_storage_limits(ctx, type(chain_set).__name__, chain_set, self.sizes)
            for name, (record_bytes, count) in texture_records.items():
                check_texture_rows(ctx, f"chain_set: {type(chain_set).__name__} of {chain_set.chain_count} chains and "
                                        f"{chain_set.segment_count} segments", name, count * record_bytes // 16)
            #: Invocations (chains) per work group: the kernels' LOCAL_SIZE.
            self.work_group_size = check_work_group_size(ctx, work_group_size or LOCAL_SIZE)
            self.loop_limited = loop_limited(ctx)
            if self.loop_limited:
                self.substeps_per_dispatch(np.zeros(1, self.PARAMS)[0], 1)  # refuses a chain too long for one
            self.programs = {}  # feature switches → compiled variant (KernelVariants)
            self._last_written = {}  # buffer name → the records _write_changed last uploaded there
            self.buffers = {name: self.gl.track(ctx.buffer(reserve=max(size, MIN_BUFFER_BYTES)))
                            for name, size in sizes.items()}
            self.textures = {name: RecordTexture(ctx, record_bytes, count, self.gl.track)
                             for name, (record_bytes, count) in texture_records.items()}
            self.views_off_reason = views_unavailable(
                max((self.sizes.get(name, 0) // VIEW_FORMATS[fmt][1] for name, (_, fmt) in self.VIEWS.items()),
                    default=0), len(self.VIEWS)) if self.VIEWS else "the kernel has no views"
            self.views = BufferViews(self.gl.track)
            # GL leaves a reserved buffer's contents undefined: the state starts zeroed, as the
            # numpy one does (a zeroed point segment carries no turn axis yet, SPEC 9 "Swings").
            for name in ("chain_state", "segment_state"):
                if name in self.buffers:
                    self.buffers[name].clear()
        self.gl.attach_finalizer(self)

    def write_state(self, chain_state, segment_state):
        with self.gl.current():
            self._write("chain_state", chain_state)
            self._write("segment_state", segment_state)

    def write_outputs(self, joint_output, segment_output):
        with self.gl.current():
            self._write("joint_output", joint_output)
            self._write("segment_output", segment_output)

    def upload_rig(self, chain_rig, segment_rig, exact_step):
        with self.gl.current():
            for name, records in (("chain_rig", chain_rig), ("segment_rig", segment_rig), ("exact_step", exact_step)):
                if name in self.textures:
                    self.uploaded_bytes += self.textures[name].write(records)
                else:
                    self._write(name, records)

    def read(self, name):
        out = np.empty(self.sizes[name] // self.DTYPES[name].itemsize, self.DTYPES[name])
        if out.size:
            with self.gl.current():  # straight into the new array: one copy, not two
                self.buffers[name].read_into(out.view(np.uint8), size=out.nbytes)
        return out

    def read_field(self, name, field):
        return self.read(name)[field]

    def run_frame(self, params):
        if self.chain_count == 0:
            return
        params = np.array(params, np.uint8)  # the dispatches' ranges are written into a copy
        header = params[:self.PARAMS.itemsize].view(self.PARAMS)  # (1,), a view into it
        substeps = max(int(header["full_rate"]["substep_count"][0]), int(header["half_rate"]["substep_count"][0]))
        chunk = self.dispatch_chunk(header, substeps)
        program = self.program_for(header[0])
        with self.gl.current(), (self.timer.measure() if self.timer else nullcontext()):
            for begin in range(0, max(substeps, 1), chunk):
                header["substep_begin"] = begin
                header["substep_end"] = begin + chunk if begin + chunk < substeps else layouts.ALL_SUBSTEPS[1]
                self._write("params", params)
                self.dispatch(program, first_of_frame=begin == 0)

    def dispatch(self, program, first_of_frame: bool = True) -> None:
        """One dispatch of ``program`` (what :meth:`program_for` gave) over every chain, the
        frame buffer written; the context is current. ``first_of_frame``: whether it runs the
        frame's first substeps (substep_begin 0: no chain is idle in it)."""
        self.bind_buffers()
        self.bind_textures()
        group_x, group_y = dispatch_size(self.chain_count, self.work_group_size)
        program.run(group_x=group_x, group_y=group_y)
        self.ctx.memory_barrier()

    def all_buffers(self) -> dict:
        """Every GPU buffer the backend holds, by name (:meth:`gpu_jiggle.Solver.gpu_buffers`)."""
        return dict(self.buffers)

    def all_textures(self) -> dict:
        """Every record texture (``moderngl.Texture``) the backend holds, by name
        (:meth:`gpu_jiggle.Solver.gpu_textures`)."""
        return {name: records.texture for name, records in self.textures.items()}

    def bind_buffers(self) -> None:
        """Every buffer at its binding (``BINDINGS``) and those read as uniform blocks at theirs
        (``UNIFORM_BLOCKS``); the context is current."""
        for name, binding in self.BINDINGS.items():
            self.buffers[name].bind_to_storage_buffer(binding)
        for name, binding in self.UNIFORM_BLOCKS.items():
            self.buffers[name].bind_to_uniform_block(binding)

    def bind_textures(self, views_of: dict | None = None) -> None:
        """Every record texture at its unit (``TEXTURES``) and, where the kernels read through
        them, every view at its image unit (``VIEWS``), of the buffer of that name in
        ``views_of`` where given (the near pass's copies), else the backend's; the context is
        current."""
        for name, unit in self.TEXTURES.items():
            self.textures[name].use(unit)
        if self.buffer_images:
            buffers = {**self.buffers, **(views_of or {})}
            for name, (unit, image_format) in self.VIEWS.items():
                self.views.bind(unit, buffers[name], image_format)

    @property
    def buffer_images(self) -> bool:
        """Whether the kernels read the ``VIEWS`` buffers through image views (BUFFER_IMAGES)."""
        return self.views_off_reason is None

    def set_samplers(self, program) -> None:
        """Set ``program``'s samplers and row shifts to the record textures, once where it is
        compiled (a texture's unit and shape stay the backend's); the context is current."""
        for name, unit in self.TEXTURES.items():
            program[f"{name}_texels"] = unit
            program[f"{name}_row_shift"] = self.textures[name].row_shift

    def dispatch_chunk(self, header, substeps: int) -> int:
        """How many substeps each dispatch of a frame runs (all of them but on llvmpipe);
        ``header``: the frame buffer's header, (1,), which a kind may adjust for the plan."""
        return self.substeps_per_dispatch(header[0], substeps) if self.loop_limited else max(substeps, 1)

    @staticmethod
    def chain_loop_cost(header) -> int:
        """Loop iterations per chain (not per segment) of a substep and of the output."""
        return 0

    def enable_timing(self, enabled: bool) -> None:
        """Time every frame's dispatches on their own from now on (:class:`GpuTimer`: a timer
        query where the context has one), or stop."""
        if enabled and self.timer is None:
            with self.gl.current():
                self.timer = GpuTimer(self.ctx)
        elif not enabled:
            self.timer = None

    def dispatch_timing(self) -> tuple[float, str]:
        """(seconds, how measured) of the last frame's dispatches, while timing is on."""
        return self.timer.last_seconds, self.timer.how

    def substeps_per_dispatch(self, header, substeps: int) -> int:
        """How many substeps one dispatch may run on llvmpipe (``LLVMPIPE_LOOP_BUDGET``): the
        longest chain's loop iterations per substep and for its output (``LOOP_COST``), the
        frame's colliders included.

        Raises: LoopLimitError (a ValueError) when not even one substep fits (a chain too
        long, or too many colliders, for llvmpipe), before anything runs."""
        per_substep, per_output = self.loop_cost(header)
        n = self.longest_chain
        room = LLVMPIPE_LOOP_BUDGET - n * per_output - self.chain_loop_cost(header)
        chunk = room // (n * per_substep + 2 + self.chain_loop_cost(header)) if room > 0 else 0
        if chunk < 1:
            colliders = int(header["sphere_count"]) + int(header["capsule_count"]) + int(header["plane_count"]) \
                if self.PARAMS is layouts.POINT_FRAME_PARAMS else 0
            if colliders:
                raise LoopLimitError(
                    f"set_colliders: {int(header['sphere_count'])} spheres, {int(header['capsule_count'])} capsules "
                    f"and {int(header['plane_count'])} planes with the longest chain's {n} segments need about "
                    f"{n * (per_substep + per_output)} loop iterations for one substep here, and Mesa's llvmpipe "
                    f"stops a shader's loops after 65535: use fewer colliders (every collider is visited, whatever "
                    f"the masks), shorter chains, or a hardware GPU")
            raise LoopLimitError(
                f"chain_set: a chain of {n} segments needs about {n * (per_substep + per_output)} loop iterations for "
                f"one substep here, and Mesa's llvmpipe stops a shader's loops after 65535: use backend='cpu', "
                f"shorter chains{' or fewer colliders' if self.PARAMS is layouts.POINT_FRAME_PARAMS else ''}, "
                f"or a hardware GPU")
        return int(min(chunk, max(substeps, 1)))

    def release(self):
        self.gl.release()

    def _write_changed(self, name, array):
        """Upload ``array`` to buffer ``name`` unless it is what was last written there by this
        method (per-frame records that often stay: a static body's targets, colliders at rest);
        the context is current."""
        data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)  # bytes: 15x faster to compare than records
        last = self._last_written.get(name)
        if last is not None and np.array_equal(last, data):
            return
        self._write(name, data)
        self._last_written[name] = data.copy()

    def _write(self, name, array):
        """Upload ``array`` to buffer ``name`` (growing it when needed); the context is current."""
        self._last_written.pop(name, None)  # a later _write_changed compares with this upload
        data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)  # no copy of a contiguous array
        if name not in self.buffers:
            self.buffers[name] = self.gl.track(self.ctx.buffer(reserve=max(data.size, MIN_BUFFER_BYTES)))
        elif data.size > self.buffers[name].size:
            self.buffers[name].orphan(data.size)
        self.sizes[name] = data.size
        if data.size:
            self.buffers[name].write(data)
            self.uploaded_bytes += data.size


def loop_limited(ctx) -> bool:
    """Whether ``ctx`` runs on Mesa's llvmpipe, whose loop limiter (``LLVMPIPE_LOOP_BUDGET``)
    bounds what one dispatch may do per chain."""
    return "llvmpipe" in str(ctx.info.get("GL_RENDERER", "")).lower()


def check_storage_limits(ctx, what: str, chain_set, sizes: dict) -> None:
    """Refuse a chain set whose largest buffer exceeds the context's storage-block size
    (GL_MAX_SHADER_STORAGE_BLOCK_SIZE; OpenGL 4.3 guarantees 16 MiB, llvmpipe has 128 MiB),
    before anything is allocated.

    Raises: ValueError naming the buffer, its size, the limit, and what to do."""
    limit = int(ctx.info.get("GL_MAX_SHADER_STORAGE_BLOCK_SIZE") or 0)
    if not limit:
        return
    name, size = max(sizes.items(), key=lambda item: item[1])
    if size > limit:
        raise ValueError(
            f"chain_set: {what} of {chain_set.chain_count} chains and {chain_set.segment_count} segments needs a "
            f"{size / 2 ** 20:.0f} MiB {name} buffer; this OpenGL context's storage blocks hold at most "
            f"{limit / 2 ** 20:.0f} MiB (GL_MAX_SHADER_STORAGE_BLOCK_SIZE): split the chains over several solvers, "
            f"or use backend='cpu'")

"""The GLSL compute backends: ``shaders/sim/angle_chains.comp`` and
``shaders/sim/point_chains.comp`` over std430 storage buffers.

One invocation per chain walks root to tip through every substep of the frame in a single
dispatch; the state stays in GPU buffers between frames and is read back only on request.
"""
from __future__ import annotations

from contextlib import nullcontext

import numpy as np

from .. import layouts
from . import LoopLimitError
from .near_far import NearFarPasses, NearFarPrograms, splits_near_far
from .variants import FUSED_BATCHES, KernelVariants, collider_slots, fused_substeps
from ...gl.dispatch import LOCAL_SIZE, check_work_group_size, dispatch_size
from ...gl.lifetime import GlOwner
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
    DTYPES: dict = {}
    #: Bytes written to GPU buffers so far (every upload: rig, targets, colliders, frame buffer).
    uploaded_bytes = 0
    #: A GpuTimer around every frame's dispatches while timing is on (:meth:`enable_timing`).
    timer = None

    def __init__(self, chain_set, ctx, sizes, work_group_size: int | None = None):
        self.ctx = ctx
        self.chain_count = chain_set.chain_count
        self.longest_chain = int(chain_set.segment_counts.max()) if chain_set.chain_count else 0
        self.sizes = dict(sizes)
        self.gl = GlOwner(ctx, f"this solver of {chain_set!r}")
        with self.gl.current():
            check_storage_limits(ctx, type(chain_set).__name__, chain_set, self.sizes)
            #: Invocations (chains) per work group: the kernels' LOCAL_SIZE.
            self.work_group_size = check_work_group_size(ctx, work_group_size or LOCAL_SIZE)
            self.loop_limited = loop_limited(ctx)
            if self.loop_limited:
                self.substeps_per_dispatch(np.zeros(1, self.PARAMS)[0], 1)  # refuses a chain too long for one
            self.programs = {}  # feature switches → compiled variant (KernelVariants)
            self._last_written = {}  # buffer name → the records _write_changed last uploaded there
            self.buffers = {name: self.gl.track(ctx.buffer(reserve=max(size, MIN_BUFFER_BYTES)))
                            for name, size in sizes.items()}
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
            self._write("chain_rig", chain_rig)
            self._write("segment_rig", segment_rig)
            self._write("exact_step", exact_step)

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
                self.dispatch(program)

    def dispatch(self, program) -> None:
        """One dispatch of ``program`` (what :meth:`program_for` gave) over every chain, the
        frame buffer written; the context is current."""
        self.bind_buffers()
        group_x, group_y = dispatch_size(self.chain_count, self.work_group_size)
        program.run(group_x=group_x, group_y=group_y)
        self.ctx.memory_barrier()

    def all_buffers(self) -> dict:
        """Every GPU buffer the backend holds, by name (:meth:`gpu_jiggle.Solver.gpu_buffers`)."""
        return dict(self.buffers)

    def bind_buffers(self) -> None:
        """Every buffer at its binding (``BINDINGS``); the context is current."""
        for name, binding in self.BINDINGS.items():
            self.buffers[name].bind_to_storage_buffer(binding)

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


class GpuAngleBackend(_GpuBackend):
    """Angle chains in ``angle_chains.comp``. See :mod:`gpu_jiggle.sim.backends` for the interface."""

    SHADER = "sim/angle_chains.comp"
    BINDINGS = layouts.ANGLE_BINDINGS
    PARAMS = layouts.ANGLE_FRAME_PARAMS
    DTYPES = {"chain_state": layouts.ANGLE_CHAIN_STATE, "segment_state": layouts.ANGLE_SEGMENT_STATE,
              "joint_output": layouts.ANGLE_JOINT_OUTPUT, "segment_output": layouts.ANGLE_SEGMENT_OUTPUT}

    def __init__(self, chain_set, ctx, work_group_size: int | None = None):
        c, s = chain_set.chain_count, chain_set.segment_count
        super().__init__(chain_set, ctx, {
            "params": layouts.ANGLE_FRAME_PARAMS.itemsize + 4 * layouts.INITIAL_ALPHA_CAPACITY,
            "chain_rig": c * layouts.ANGLE_CHAIN_RIG.itemsize,
            "segment_rig": s * layouts.ANGLE_SEGMENT_RIG.itemsize,
            "chain_state": c * layouts.ANGLE_CHAIN_STATE.itemsize,
            "segment_state": s * layouts.ANGLE_SEGMENT_STATE.itemsize,
            "chain_target": c * layouts.ANGLE_CHAIN_TARGET.itemsize,
            "local_angle": s * layouts.ANGLE_LOCAL_ANGLE.itemsize,
            "joint_output": (s + c) * layouts.ANGLE_JOINT_OUTPUT.itemsize,
            "segment_output": s * layouts.ANGLE_SEGMENT_OUTPUT.itemsize, "exact_step": 0}, work_group_size)

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
        (:func:`fused_substeps`)."""
        substeps = max(int(header["full_rate"]["substep_count"]), int(header["half_rate"]["substep_count"]))
        return {"EXACT_STEPS": int(bool(int(header["options"]) & layouts.OPTION_EXACT_INTEGRATOR)),
                "WIND": int(bool((header["wind"][:3] != 0).any())), "FUSED_SUBSTEPS": fused_substeps(substeps)}

    def likely_switches(self, header) -> list:
        """One variant per batch of fused substeps that a frame of up to the header's
        substeps may take (frames of 1 to 8 substeps: 2, 4 and 8)."""
        most = max(int(header["full_rate"]["substep_count"]), 1)
        switches = self.switches(header)
        return [{**switches, "FUSED_SUBSTEPS": batch} for batch in FUSED_BATCHES if batch <= fused_substeps(most)]

    def upload_targets(self, chain_target, local_angle):
        with self.gl.current():
            self._write("chain_target", chain_target)
            self._write("local_angle", np.asarray(local_angle, np.float32))


class GpuPointBackend(_GpuBackend):
    """Point chains in ``point_chains.comp``. See :mod:`gpu_jiggle.sim.backends` for the interface."""

    SHADER = "sim/point_chains.comp"
    BINDINGS = layouts.POINT_BINDINGS
    PARAMS = layouts.POINT_FRAME_PARAMS
    DTYPES = {"chain_state": layouts.POINT_CHAIN_STATE, "segment_state": layouts.POINT_SEGMENT_STATE,
              "joint_output": layouts.POINT_JOINT_OUTPUT, "segment_output": layouts.POINT_SEGMENT_OUTPUT}

    def __init__(self, chain_set, ctx, work_group_size: int | None = None):
        c, s = chain_set.chain_count, chain_set.segment_count
        super().__init__(chain_set, ctx, {
            "params": layouts.POINT_FRAME_PARAMS.itemsize + 4 * layouts.INITIAL_ALPHA_CAPACITY,
            "chain_rig": c * layouts.POINT_CHAIN_RIG.itemsize,
            "segment_rig": s * layouts.POINT_SEGMENT_RIG.itemsize,
            "chain_state": c * layouts.POINT_CHAIN_STATE.itemsize,
            "segment_state": s * layouts.POINT_SEGMENT_STATE.itemsize,
            "chain_target": c * layouts.POINT_CHAIN_TARGET.itemsize,
            "chain_output": c * layouts.POINT_CHAIN_OUTPUT.itemsize,
            "chain_control": c * layouts.POINT_CHAIN_CONTROL.itemsize,
            "joint_offset": s * layouts.POINT_JOINT_OFFSET.itemsize,
            "joint_output": (s + c) * layouts.POINT_JOINT_OUTPUT.itemsize,
            "segment_output": s * layouts.POINT_SEGMENT_OUTPUT.itemsize,
            "spheres": 0, "capsules": 0, "planes": 0, "exact_step": 0,
            "joint_rotation": s * layouts.POINT_JOINT_ROTATION.itemsize}, work_group_size)
        with self.gl.current():  # identity until a pose gives rotations
            self._write("joint_rotation", np.tile(np.array([0, 0, 0, 1], np.float32), (s, 1)))

    spherical_limits = False  # whether any segment has a spherical limit (upload_rig)
    angle_limits = 7  # a bit for each kind of angle limit a segment has, as ANGLE_LIMITS (upload_rig)
    max_distances = True  # whether any segment has a finite max distance (upload_rig)
    inside_colliders = True  # whether a sphere or capsule keeps particles inside (upload_colliders)

    #: Whether frames with colliders run as near and far chains where they can
    #: (:mod:`~gpu_jiggle.sim.backends.near_far`); off, one pass runs every stage for every chain.
    split_near_far = True
    near_far = None  # NearFarPasses, made with the first frame that splits

    def prepare(self, header, inside_colliders: bool = False) -> None:
        """As :meth:`_GpuBackend.prepare`; ``inside_colliders``: whether a sphere or capsule of
        the colliders set keeps particles inside."""
        self.inside_colliders = bool(inside_colliders)
        super().prepare(header)
        if self.near_far is not None or self.splits(self.switches(header)):
            with self.gl.current():
                self._near_far().prepare()

    def splits(self, switches: dict) -> bool:
        """Whether a frame with these switches runs as near and far chains."""
        return self.split_near_far and splits_near_far(switches)

    def likely_switches(self, header) -> list:
        """The one variant a frame with this header runs, or its far and near passes."""
        switches = self.switches(header)
        return [{**switches, "NEAR_FAR": 1}, {**switches, "NEAR_FAR": 2}] if self.splits(switches) else [switches]

    def program_for(self, header):
        """The kernel for a frame with this header, or its far and near passes
        (:class:`~gpu_jiggle.sim.backends.near_far.NearFarPrograms`)."""
        switches = self.switches(header)
        if self.splits(switches):
            return NearFarPrograms(self._program({**switches, "NEAR_FAR": 1}), self._program({**switches, "NEAR_FAR": 2}))
        return self._program(switches)

    def dispatch(self, program) -> None:
        self.split_last = isinstance(program, NearFarPrograms)
        if self.split_last:
            self._near_far().run(program)
        else:
            super().dispatch(program)

    split_last = False  # whether the last dispatch ran as near and far chains

    def near_chain_count(self) -> int | None:
        """How many chains the last dispatch ran as near (read back), or None where it ran as
        one pass."""
        if not self.split_last:
            return None
        with self.gl.current():
            return self.near_far.near_count()

    def all_buffers(self) -> dict:
        """As :meth:`_GpuBackend.all_buffers`, with the near pass's (``near_`` names)."""
        extra = self.near_far.buffers if self.near_far is not None else {}
        return {**self.buffers, **{name if name.startswith("near_") else f"near_{name}": buffer
                                   for name, buffer in extra.items()}}

    def _near_far(self):
        if self.near_far is None:
            self.near_far = NearFarPasses(self)
        return self.near_far

    def switches(self, header) -> dict:
        """SPHERE_SLOTS, CAPSULE_SLOTS, PLANE_SLOTS: the frame's colliders of each shape,
        rounded up to a bucket (:func:`collider_slots`); INSIDE_COLLIDERS: a sphere or capsule
        keeps particles inside; EXACT_STEPS: the exact integrator is on; WIND: w0 or the gust
        amplitude is not zero (without it the kernel's wind is exactly 0); ANGLE_LIMITS: a bit
        for each kind of angle limit some segment has (1 cone, 2 hinge, 4 spherical);
        MAX_DISTANCE: a segment has a finite max distance."""
        counts = [int(header[name]) for name in ("sphere_count", "capsule_count", "plane_count")]
        return {"SPHERE_SLOTS": collider_slots(counts[0]), "CAPSULE_SLOTS": collider_slots(counts[1]),
                "PLANE_SLOTS": collider_slots(counts[2]),
                "INSIDE_COLLIDERS": int(counts[0] + counts[1] > 0 and self.inside_colliders),
                "EXACT_STEPS": int(bool(int(header["options"]) & layouts.OPTION_EXACT_INTEGRATOR)),
                "WIND": int(bool((header["wind"] != 0).any())), "ANGLE_LIMITS": self.angle_limits,
                "MAX_DISTANCE": int(self.max_distances), "NEAR_FAR": 0}

    def loop_cost(self, header):
        """Loop iterations per segment (per substep, and for the frame-time output) of the
        point kernel with this frame's colliders: measured on llvmpipe (Mesa 22.3) as 64 per
        substep plus 11.5 per sphere or capsule and 7 per plane, and 26 + 4.5 and 3 for the
        output, before the contact broad phase; its test (contact_possible) visits every
        collider once more, twice a substep and once for the output; rounded up here; a
        spherical limit's bisections (ELLIPSE_BISECTIONS, 24) add 26 to each where the rig has
        one."""
        round_colliders = int(header["sphere_count"]) + int(header["capsule_count"])
        planes = int(header["plane_count"])
        ellipse = 26 if self.spherical_limits else 0
        return 70 + 14 * round_colliders + 10 * planes + ellipse, 30 + 6 * round_colliders + 5 * planes + ellipse

    @staticmethod
    def chain_loop_cost(header) -> int:
        """place_colliders: one iteration per collider placed (at most PLACED_COLLIDERS, 8,
        of each shape) per chain, each substep and once for the output."""
        return sum(min(int(header[name]), 8) for name in ("sphere_count", "capsule_count", "plane_count"))

    def dispatch_chunk(self, header, substeps: int) -> int:
        """On llvmpipe with spheres or capsules: fewer substeps per dispatch where needed for
        LLVMPIPE_CONTACT_SUBSTEPS contact sub-steps each, and the header's contact_substep_cap
        lowered to what the loop budget leaves (each sub-step walks the chain and places the
        colliders again; each substep also counts its colliders' sub-steps, the chain's reach
        is summed once)."""
        chunk = super().dispatch_chunk(header, substeps)
        round_colliders = int(header["sphere_count"][0]) + int(header["capsule_count"][0])
        if not self.loop_limited or not round_colliders:
            return chunk
        per_substep, per_output = self.loop_cost(header[0])
        placed, n = self.chain_loop_cost(header[0]), self.longest_chain
        room = LLVMPIPE_LOOP_BUDGET - n * per_output - placed - n
        walk, extra = n * per_substep + placed, placed + round_colliders + 2
        chunk = max(1, min(chunk, room // (walk * LLVMPIPE_CONTACT_SUBSTEPS + extra)))
        cap = max(1, (room // chunk - extra) // walk)
        header["contact_substep_cap"] = min(cap, int(header["contact_substep_cap"][0]))
        return chunk

    def upload_rig(self, chain_rig, segment_rig, exact_step):
        self.spherical_limits = bool((segment_rig["limit_kind"] == layouts.LIMIT_SPHERICAL).any())
        kinds = np.unique(segment_rig["limit_kind"])
        self.angle_limits = int(sum(1 << (int(kind) - 1) for kind in kinds if kind != layouts.LIMIT_NONE))
        self.max_distances = bool(np.isfinite(segment_rig["max_distance"]).any())
        super().upload_rig(chain_rig, segment_rig, exact_step)

    def upload_targets(self, chain_target, chain_control, joint_offset=None, joint_rotation=None):
        """``joint_offset``, ``joint_rotation`` None: unchanged since the last upload;
        ``chain_target`` and ``chain_control`` are written only when they differ from the last
        ones written (a static body's targets, teleport flags and levels upload nothing)."""
        with self.gl.current():
            self._write_changed("chain_target", chain_target)
            self._write_changed("chain_control", chain_control)
            if joint_offset is not None:
                self._write("joint_offset", np.asarray(joint_offset, np.float32))
            if joint_rotation is not None:
                self._write("joint_rotation", np.asarray(joint_rotation, np.float32))

    def check_colliders(self, sphere_count: int, capsule_count: int, plane_count: int) -> None:
        """Refuse (LoopLimitError) colliders that would leave no substep room on llvmpipe."""
        if self.loop_limited:
            header = np.zeros(1, self.PARAMS)[0]
            header["sphere_count"], header["capsule_count"], header["plane_count"] = (sphere_count, capsule_count,
                                                                                      plane_count)
            self.substeps_per_dispatch(header, 1)

    def upload_colliders(self, spheres, capsules, planes):
        """The colliders' records, each shape padded with zeroed records to its kernel's slots
        (:func:`collider_slots`), which the kernel skips; a shape whose records are those last
        written (colliders at rest) uploads nothing."""
        self.inside_colliders = bool(spheres["inside"].any() or capsules["inside"].any())
        with self.gl.current():
            for name, records in (("spheres", spheres), ("capsules", capsules), ("planes", planes)):
                slots = collider_slots(len(records))
                if slots > len(records):
                    records = np.concatenate([records, np.zeros(slots - len(records), records.dtype)])
                self._write_changed(name, records)


"""Point chains on the GPU: ``shaders/sim/point_chains.comp`` (see :mod:`gpu_jiggle.sim.backends`
for the interface, :mod:`.gpu` for what the GPU backends share), its variants by the frame's
colliders and features, and its frames with colliders as near and far chains
(:mod:`.near_far`)."""
from __future__ import annotations

import logging

import numpy as np

from .. import layouts
from . import gpu
from .gpu import _GpuBackend
from .near_far import NearFarPasses, NearFarPrograms, splits_near_far
from .reference.point_sweep import CONTACT_STEP_FRACTION
from .variants import (COLLIDER_SLOT_BUCKETS, FUSED_BATCHES, batch_switches, collider_slots, each_batch,
                       frame_substeps, fused_substeps, option_switches)


log = logging.getLogger(__name__)

#: How much faster than its frame's average a pivot may move in one substep on its target path
#: (the cubic's peak speed is 4/3 of it), for the warning of dispatch_chunk.
PIVOT_PEAK_SPEED = 1.5


def segment_major(switches: dict) -> bool:
    """Whether the point kernel with these switches walks each segment through a batch of
    substeps (FUSED_SUBSTEPS; point_chains.comp SEGMENT_MAJOR): frames without colliders."""
    return not any(switches[name] for name in ("SPHERE_SLOTS", "CAPSULE_SLOTS", "PLANE_SLOTS"))


#: The far pass's batch sizes: 2 whatever the frame (each far variant costs seconds of
#: llvmpipe's compile), in one batch where the frame's substeps fit.
FAR_BATCHES = FUSED_BATCHES[:1]


def far_switches(switches: dict, substeps: int) -> dict:
    """The far pass's switches (NEAR_FAR 1) for a frame's of ``substeps``: batches of
    :data:`FAR_BATCHES`, in one batch where the frame's fit (:func:`batch_switches`)."""
    return {**switches, "NEAR_FAR": 1, **batch_switches(fused_substeps(substeps, FAR_BATCHES), substeps)}


def near_switches(switches: dict) -> dict:
    """The near pass's switches (NEAR_FAR 2) for a frame's: it walks one substep at a time."""
    return {**switches, "NEAR_FAR": 2, "FUSED_SUBSTEPS": FUSED_BATCHES[0], "ONE_BATCH": 0}


class GpuPointBackend(_GpuBackend):
    """Point chains in ``point_chains.comp``. See :mod:`gpu_jiggle.sim.backends` for the interface."""

    SHADER = "sim/point_chains.comp"
    BINDINGS = layouts.POINT_BINDINGS
    UNIFORM_BLOCKS = layouts.POINT_UNIFORM_BLOCKS
    #: A collider shape's uniform block: its records in the largest bucket of slots.
    UNIFORM_BLOCK_BYTES = COLLIDER_SLOT_BUCKETS[-1] * max(
        record.itemsize for record in (layouts.SPHERE_COLLIDER, layouts.CAPSULE_COLLIDER, layouts.PLANE_COLLIDER))
    VIEWS = layouts.POINT_VIEWS
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
    turning_planes = True  # whether a plane's normal turns over the frame (upload_colliders)
    #: Whether a chain of the last targets uploaded teleports keeping its shape (its segments'
    #: own walk, before the substeps', in the frame's first dispatch; upload_targets).
    keep_shape_teleports = True

    #: Whether frames with colliders run as near and far chains where they can
    #: (:mod:`~gpu_jiggle.sim.backends.near_far`); off, one pass runs every stage for every chain.
    split_near_far = True
    near_far = None  # NearFarPasses, made with the first frame that splits

    def prepare(self, header, inside_colliders: bool = False, turning_planes: bool = False) -> None:
        """As :meth:`_GpuBackend.prepare`; ``inside_colliders``: whether a sphere or capsule of
        the colliders set keeps particles inside; ``turning_planes``: whether a plane's normal
        will turn over the next frame."""
        self.inside_colliders = bool(inside_colliders)
        self.turning_planes = bool(turning_planes)
        super().prepare(header)
        if self.near_far is not None or self.splits(self.switches(header)):
            with self.gl.current():
                self._near_far().prepare()

    def splits(self, switches: dict) -> bool:
        """Whether a frame with these switches runs as near and far chains."""
        return self.split_near_far and splits_near_far(switches)

    def likely_switches(self, header) -> list:
        """The variant a frame with this header runs, or its far and near passes (the far pass
        in one batch, and in a loop of batches where a frame may take more than 2 substeps);
        without colliders, one per batch of fused substeps that a frame of up to the header's
        substeps may take (frames of 1 to 8 substeps: 2, 4 and 8)."""
        switches = self.switches(header)
        if self.splits(switches):
            far = each_batch({**switches, "NEAR_FAR": 1}, int(header["full_rate"]["substep_count"]), FAR_BATCHES)
            return far + [near_switches(switches)]
        if segment_major(switches):
            return each_batch(switches, int(header["full_rate"]["substep_count"]))
        return [switches]

    def program_for(self, header):
        """The kernel for a frame with this header, or its far and near passes
        (:class:`~gpu_jiggle.sim.backends.near_far.NearFarPrograms`)."""
        switches = self.switches(header)
        if self.splits(switches):
            far = far_switches(switches, frame_substeps(header))
            return NearFarPrograms(self._program(far), self._program(near_switches(switches)),
                                   far_reads_views=self.buffer_images and far["ONE_BATCH"] == 1)
        return self._program(switches)

    def dispatch(self, program, first_of_frame: bool = True) -> None:
        self.split_last = isinstance(program, NearFarPrograms)
        if self.split_last:
            self._near_far().run(program, first_of_frame)
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
        """As :meth:`_GpuBackend.all_buffers`, with the near pass's once a frame has split."""
        return {**self.buffers, **(self.near_far.buffers if self.near_far is not None else {})}

    def _near_far(self):
        if self.near_far is None:
            self.near_far = NearFarPasses(self)
        return self.near_far

    def switches(self, header) -> dict:
        """SPHERE_SLOTS, CAPSULE_SLOTS, PLANE_SLOTS: the frame's colliders of each shape,
        rounded up to a bucket (:func:`collider_slots`); INSIDE_COLLIDERS: a sphere or capsule
        keeps particles inside; TURNING_PLANES: a plane's normal turns over the frame (its
        record's delta.xyz is not zero); EXACT_STEPS: the exact integrator is on; WIND: w0 or the gust
        amplitude is not zero (without it the kernel's wind is exactly 0); ANGLE_LIMITS: a bit
        for each kind of angle limit some segment has (1 cone, 2 hinge, 4 spherical);
        MAX_DISTANCE: a segment has a finite max distance; NEAR_FAR 0 (one pass,
        :meth:`program_for` picks the passes); FUSED_SUBSTEPS: without colliders, the batch of
        substeps a segment runs with its state in registers, the frame's substeps rounded up
        to 2, 4 or 8 (:func:`fused_substeps`), and ONE_BATCH, whether they fit in one
        (:func:`batch_switches`); with colliders, 2 and 0 (one pass walks one substep at a
        time; the far pass takes batches of 2, :func:`far_switches`); TARGET_PATH,
        RELATIVE_DAMPING: the solver's options (:func:`option_switches`); ROTATION_OUTPUTS: 0
        for a solver made with ``rotation_outputs=False``."""
        counts = [int(header[name]) for name in ("sphere_count", "capsule_count", "plane_count")]
        substeps = frame_substeps(header)
        switches = {"SPHERE_SLOTS": collider_slots(counts[0]), "CAPSULE_SLOTS": collider_slots(counts[1]),
                    "PLANE_SLOTS": collider_slots(counts[2]),
                    "INSIDE_COLLIDERS": int(counts[0] + counts[1] > 0 and self.inside_colliders),
                    "TURNING_PLANES": int(counts[2] > 0 and self.turning_planes),
                    "EXACT_STEPS": int(bool(int(header["options"]) & layouts.OPTION_EXACT_INTEGRATOR)),
                    "WIND": int(bool((header["wind"] != 0).any())), "ANGLE_LIMITS": self.angle_limits,
                    "MAX_DISTANCE": int(self.max_distances), "NEAR_FAR": 0,
                    "ROTATION_OUTPUTS": int(not int(header["options"]) & layouts.OPTION_NO_ROTATION_OUTPUTS),
                    **option_switches(int(header["options"]))}
        if segment_major(switches):
            return {**switches, **batch_switches(fused_substeps(substeps), substeps)}
        return {**switches, "FUSED_SUBSTEPS": FUSED_BATCHES[0], "ONE_BATCH": 0}

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
        gpu.LLVMPIPE_CONTACT_SUBSTEPS contact sub-steps each, and the header's contact_substep_cap
        lowered to what the loop budget leaves (each sub-step walks the chain and places the
        colliders again; each substep also counts its colliders' sub-steps, the chain's reach
        is summed once)."""
        chunk = super().dispatch_chunk(header, substeps)
        round_colliders = int(header["sphere_count"][0]) + int(header["capsule_count"][0])
        if not self.loop_limited or not round_colliders:
            return chunk
        per_substep, per_output = self.loop_cost(header[0])
        placed, n = self.chain_loop_cost(header[0]), self.longest_chain
        room = gpu.LLVMPIPE_LOOP_BUDGET - n * per_output - placed - n
        walk, extra = n * per_substep + placed, placed + round_colliders + 2
        chunk = max(1, min(chunk, room // (walk * gpu.LLVMPIPE_CONTACT_SUBSTEPS + extra)))
        cap = max(1, (room // chunk - extra) // walk)
        header["contact_substep_cap"] = min(cap, int(header["contact_substep_cap"][0]))
        self._warn_of_cap(int(header["contact_substep_cap"][0]), substeps)
        return chunk

    warned_cap = False  # _warn_of_cap has warned (said once per backend)
    smallest_radius = 0.0  # the rig's smallest particle radius ρ (upload_rig)
    #: The last targets' anchor shifts (C, 3) and whether each chain is not teleported (C,)
    #: (upload_targets), for _warn_of_cap's longest pivot move.
    shifts = (np.zeros((0, 3), np.float32), np.zeros(0, bool))
    collider_moves = np.zeros((0, 2))  # per sphere and capsule: frame_move, frame_radius (upload_colliders)

    def _warn_of_cap(self, cap: int, substeps: int) -> None:
        """Log once where a sphere or capsule may pass a chain fast enough to ask for more
        contact sub-steps than llvmpipe's ``cap`` (SPEC 9, "Swept contact": ceil(relative move /
        (CONTACT_STEP_FRACTION·(r + ρ)))), the numpy path's being MAX_CONTACT_SUBSTEPS: a chain
        that needs more cuts the collider's path where the numpy path would not. Estimated on
        the host from each collider's longest move and smallest radius over the frame and the
        longest pivot move (a substep's share at PIVOT_PEAK_SPEED); the kernel's count is not
        read back. The longest pivot move is one pass of squared lengths over the chains,
        column by column (0.7 ms for 125,000 chains; a reduction along the chains of the
        records' strided (C, 3) field, or a gather of the chains that do not jump, took 4 ms
        each)."""
        if self.warned_cap or cap >= layouts.MAX_CONTACT_SUBSTEPS or not len(self.collider_moves):
            return
        moves, radii = self.collider_moves[:, 0], self.collider_moves[:, 1]
        size = float(CONTACT_STEP_FRACTION) * (radii + self.smallest_radius)
        if not (size > 0).any():
            return  # a collider of no size with particles of none takes one sub-step
        # ceil((move + pivot) / size) > cap where pivot > cap·size - move: the longest pivot move
        # over the frame that no collider asks more than the cap for
        room = float(np.min(np.where(size > 0, cap * size - moves, np.inf))) * max(substeps, 1) / PIVOT_PEAK_SPEED
        anchor_shift, kept = self.shifts
        if room >= 0 and not kept.any():
            return
        x, y, z = (anchor_shift[:, axis] for axis in range(3))
        squares = x * x + y * y + z * z  # float32, as np.linalg.norm sums them
        longest = float(np.sqrt(squares.max(where=kept, initial=0.0))) if len(squares) else 0.0
        if room >= 0 and longest <= room:
            return
        pivot = PIVOT_PEAK_SPEED * longest / max(substeps, 1)
        need = np.where(size > 0, np.ceil((moves + pivot) / np.where(size > 0, size, 1.0)), 1.0)
        if need.max() > cap:
            self.warned_cap = True
            k = int(np.argmax(need))
            log.warning("contact sub-steps: on llvmpipe a substep takes at most %d (the numpy path %d); a collider of "
                        "radius %.3g moving %.3g in a substep, with the pivots moving up to %.3g, may ask for %d, so "
                        "a chain's path may cut it (docs/SPEC.md section 9, \"Swept contact\"; a jump of a body is "
                        "a teleport)", cap, layouts.MAX_CONTACT_SUBSTEPS, float(radii[k]), float(moves[k]), pivot,
                        int(need[k]))

    def upload_rig(self, chain_rig, segment_rig, exact_step):
        self.spherical_limits = bool((segment_rig["limit_kind"] == layouts.LIMIT_SPHERICAL).any())
        kinds = np.unique(segment_rig["limit_kind"])
        self.angle_limits = int(sum(1 << (int(kind) - 1) for kind in kinds if kind != layouts.LIMIT_NONE))
        self.max_distances = bool(np.isfinite(segment_rig["max_distance"]).any())
        self.smallest_radius = float(segment_rig["particle_radius"].min()) if len(segment_rig) else 0.0
        super().upload_rig(chain_rig, segment_rig, exact_step)

    def upload_targets(self, chain_target, chain_control, joint_offset=None, joint_rotation=None):
        """``joint_offset``, ``joint_rotation`` None: unchanged since the last upload;
        ``chain_target`` and ``chain_control`` are written only when they differ from the last
        ones written (a static body's targets, teleport flags and levels upload nothing)."""
        modes = chain_control["teleport"] & layouts.TELEPORT_MODE_MASK
        self.keep_shape_teleports = bool((modes == layouts.TELEPORT_KEEP_SHAPE).any())
        self.shifts = (chain_target["anchor_shift"], modes == layouts.TELEPORT_NONE)  # looked at only to warn
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
        self.turning_planes = bool((planes["delta"][:, :3] != 0).any())
        self.collider_moves = np.concatenate([np.stack([shape["frame_move"], shape["frame_radius"]], axis=1)
                                              for shape in (spheres, capsules)]).astype(np.float64)
        with self.gl.current():
            for name, records in (("spheres", spheres), ("capsules", capsules), ("planes", planes)):
                slots = collider_slots(len(records))
                if slots > len(records):
                    records = np.concatenate([records, np.zeros(slots - len(records), records.dtype)])
                self._write_changed(name, records)


"""Angle chains on the host (SPEC section 3): :class:`AngleSolver`, and the packing of their rig,
poses and frame buffer into the std430 records of :mod:`.layouts`.

Precision (SPEC 3.4): root positions arrive in float64. Each chain has an anchor, its root in
the latest pose (float64, on the host); what reaches the shader is relative to it, and the
state follows it from frame to frame (the kernel adds the anchor's move, old minus new, a
small float32 number). Outputs are rebuilt in float64 world coordinates, so a chain 1e5
units from the origin moves like the same chain at the origin, and the chains of one set may
be any distance apart.
"""
from __future__ import annotations

import numpy as np

from . import layouts, packing, validation
from .chains import AngleChainSet
from .inputs import Wind
from .root_motion import RootAccelerationWatch, largest_root_accelerations
from .solver import Solver
from .spring import coefficients


class AngleSolver(Solver):
    """A :class:`~gpu_jiggle.Solver` of 2D angle chains (SPEC section 3); made by
    ``Solver(angle_chain_set, ...)`` or directly, with the same arguments (no ``origin``:
    each chain is simulated relative to its own root, SPEC 3.4)."""

    CHAIN_SET = AngleChainSet
    RECORDS = {"chain_state": layouts.ANGLE_CHAIN_STATE, "segment_state": layouts.ANGLE_SEGMENT_STATE,
               "joint_output": layouts.ANGLE_JOINT_OUTPUT, "segment_output": layouts.ANGLE_SEGMENT_OUTPUT}

    KIND = "angle"
    FRAME_PARAMS = layouts.ANGLE_FRAME_PARAMS
    DIM = 2

    def __init__(self, chain_set, backend: str = "auto", substep: float = 1.0 / 120.0, max_substeps: int = 8,
                 context=None, target_path: str = "monotone", damping_frame: str = "relative",
                 integrator: str = "semi-implicit", work_group_size: int | None = None):
        self._root_angle = None     # (C,) float32: this frame's root headings, wrapped (rad)
        self._frame_target = None   # (C,) ANGLE_CHAIN_TARGET records, filled in place each frame
        self._frame_lod = None      # (C,) uint32: the levels written into them
        self._frame_teleports = False  # whether teleport flags were written into them
        self._local_angle = None    # this frame's (S,) float32 local target angles
        self._anchor = None         # (C, 2) float64: each chain's root in the latest pose
        self._state_anchor = None   # (C, 2) float64: the anchors the solver's state is relative to
        self._levels = None         # (C,) uint32: the levels of detail this frame runs
        self._root_bounds = (None, None, None, False)  # (chain set, wind, (2, C) bounds at h and 2h, any finite)
        super().__init__(chain_set, backend, substep, max_substeps, context, target_path, damping_frame,
                         integrator, work_group_size)
        self._root_watch = RootAccelerationWatch(chain_set.chain_count)

    def set_pose(self, root_position, root_angle, local_angle) -> None:
        """This frame's IK-final pose (SPEC sections 2 and 3).

        Args:
            root_position: (C, 2) float (float64 kept), each chain's root (pivot) in world space.
            root_angle: (C,) float, radians, each chain's root heading in world space.
            local_angle: (S,) float, radians, each segment's target angle relative to its
                parent (segment 0: relative to the root heading).

        Raises:
            ValueError: wrong shape or a non-finite value (argument, index and value named).
            TypeError: non-numeric input.
        """
        self._require_live("set_pose")
        cs = self._chain_set
        position = validation.coordinates("root_position", root_position, (cs.chain_count, 2))
        root = wrapped_float32("root_angle", validation.float_array(
            "root_angle", root_angle, (cs.chain_count,), finite=False, copy=False))  # (both only read)
        local = wrapped_float32("local_angle", validation.float_array(
            "local_angle", local_angle, (cs.segment_count,), finite=False, copy=False))
        self._root_angle, self._local_angle, self._anchor = root, local, position

    def teleport(self, chains=None, keep_shape: bool = False, moving: bool = False, mirror: bool = False) -> None:
        """Flag chains to jump with the next ``advance`` (SPEC section 5); see
        :meth:`Solver.teleport <gpu_jiggle.Solver.teleport>` for ``keep_shape`` and ``moving``.

        Args:
            mirror: reflect the chains about the vertical through their root (φ → π - φ,
                ω → -ω, their targets' paths likewise), for a 2D character that turns round by
                flipping its sprite; the next pose gives the flipped heading and local angles.
                A reflection is no jump of its own: the chains go on swinging, reflected. A
                jump flagged for the same frame, by an earlier call or by ``keep_shape`` here,
                still applies after the reflection (SPEC 5: mirror, then snap or carry), and so
                does an earlier ``moving``.

        Raises: ValueError for an index out of range; TypeError for non-integer indices or
        non-bools."""
        self._require_live("teleport")
        mirror = validation.flag("mirror", mirror)  # checked before anything is flagged
        if not (mirror and self._has_pose()):  # before the first pose there is nothing to reflect
            super().teleport(chains, keep_shape, moving)
            return
        ids = validation.chain_ids("chains", chains, self._chain_set.chain_count)
        keep_shape, moving = validation.flag("keep_shape", keep_shape), validation.flag("moving", moving)
        pending = self._teleport[ids]
        mode = np.uint32(layouts.TELEPORT_KEEP_SHAPE) if keep_shape else pending & layouts.TELEPORT_MODE_MASK
        self._teleport[ids] = mode | (pending & layouts.TELEPORT_MOVING) | layouts.TELEPORT_MIRROR \
            | (layouts.TELEPORT_MOVING if moving else 0)

    # -- read-back -----------------------------------------------------------------------------
    def angles(self, raw: bool = False) -> np.ndarray:
        """(S,) float32, radians in [-π, π), each segment's world angle.

        At frame time by default (SPEC section 2); ``raw=True`` gives the last substep's.

        Raises: RuntimeError before the first ``advance``.
        """
        if raw:
            return self._read("segment_state")["angle"]
        return self._read("segment_output", "angle")

    def angular_velocities(self, raw: bool = False) -> np.ndarray:
        """(S,) float32, rad/s, each segment's angular velocity (frame time unless ``raw``).

        Raises: RuntimeError before the first ``advance``."""
        if raw:
            return self._read("segment_state")["angular_velocity"]
        return self._read("segment_output", "angular_velocity")

    def positions(self, raw: bool = False) -> np.ndarray:
        """(S + C, 2) float64 world-space joint positions: per chain its pivot, then its tips.

        At frame time the pivot is this frame's root position (SPEC section 2); ``raw=True``
        gives the last substep's state, which starts at the last interpolated root (P_prev).

        Raises: RuntimeError before the first ``advance``.
        """
        out = self._read("joint_output", "raw_position" if raw else "position")
        cs = self._chain_set
        per_joint = np.repeat(self._state_anchor, cs.segment_counts + 1, axis=0)
        return per_joint + out.astype(np.float64)

    # -- the kind's part of the host (see Solver) ------------------------------------------------
    def _rig_records(self, chain_set):
        return angle_chain_rig(chain_set), angle_segment_rig(chain_set)

    def _has_pose(self):
        return self._root_angle is not None

    def _upload_inputs(self, levels):
        target = self._frame_records(levels)
        packing.anchor_shift(self._state_anchor, self._anchor, self._teleport, out=target["anchor_shift"])
        target["gust_phase"] = self._wind.space_phase(self._anchor)
        self._state_anchor = self._anchor
        self._levels = levels
        self._backend.upload_targets(target, self._local_angle)

    def _frame_records(self, levels):
        """This frame's ANGLE_CHAIN_TARGET records but for the anchor's shift and the wind's
        phase: one array kept from frame to frame, whose fields are written only where they
        change (a field of 125,000 records costs a pass over all 4 MB of them); root_position
        stays 0, each chain's anchor being its root."""
        target = self._frame_target
        if target is None or len(target) != self._chain_set.chain_count:
            target = self._frame_target = np.zeros(self._chain_set.chain_count, layouts.ANGLE_CHAIN_TARGET)
            self._frame_lod = np.zeros(len(target), np.uint32)
            self._frame_teleports = False
        target["root_angle"] = self._root_angle
        teleports = bool(self._teleport.any())
        if teleports or self._frame_teleports:
            target["teleport"] = self._teleport
            self._frame_teleports = teleports
        if not np.array_equal(levels, self._frame_lod):
            target["lod"] = levels
            self._frame_lod = np.array(levels, np.uint32)
        return target

    def _after_frame(self, plan):
        """Warn for the chains whose root accelerated past what they stay stable under on this
        frame, by the largest |A| of its substeps that the kernel's ``watch_root`` gave
        (:class:`~gpu_jiggle.sim.root_motion.RootAccelerationWatch`; a read-back of 4 bytes a
        chain, none where every chain's bound is infinite, its inertia 0)."""
        bounds, finite = self._root_acceleration_bounds()
        if not finite and not self._root_watch.over.any():
            return  # no chain feels its root's acceleration (inertia 0): nothing to read back
        estimate = self._backend.read_field("chain_output", "root_acceleration")
        estimate = np.where(estimate < 0.0, np.float32(np.nan), estimate)  # ROOT_NOT_JUDGED
        if np.any(estimate > 0) or self._root_watch.over.any():
            levels = self._levels
            half = levels == layouts.LOD_HALF
            if half.any():
                bound, substep = np.where(half, bounds[1], bounds[0]), np.where(half, self._clock.half.substep,
                                                                                self.substep)
                frame_seconds = np.where(half, plan.half.span, plan.full.span)
            else:  # every chain at its full-rate bound and substep
                bound, substep = bounds[0], np.broadcast_to(self.substep, half.shape)
                frame_seconds = np.broadcast_to(plan.full.span, half.shape)
            self._root_watch.warn(estimate, bound, substep, self._chain_set.max_root_acceleration, frame_seconds,
                                  plan.full_start + plan.full.span)

    def _root_acceleration_bounds(self):
        """((2, C) float64, bool): the largest root acceleration (length/s²) each chain stays
        stable under at h and 2h, and whether any of them is finite (a chain whose segments all
        have inertia 0 feels none), kept until the chain set or the wind changes."""
        chain_set, wind, bounds, finite = self._root_bounds
        if chain_set is not self._chain_set or wind is not self._wind:
            bounds = np.stack([largest_root_accelerations(self._chain_set, self._wind, h, self.integrator)
                               for h in self._clock.substeps])
            finite = bool(np.isfinite(bounds).any())
            self._root_bounds = (self._chain_set, self._wind, bounds, finite)
        return bounds, finite

    def _frame_buffer(self, plan):
        header, alphas = packing.frame_buffer(layouts.ANGLE_FRAME_PARAMS, plan, self._clock.substeps,
                                              self._chain_set.chain_count, self._wind.time_phases(plan))
        header["options"] = self._options
        header["wind"], header["gust"], header["gust_direction"] = self._wind.records()
        return packing.as_bytes(header, alphas)

    def _inputs_arrays(self):
        out = {"wind." + k: v for k, v in self._wind.arrays().items()}
        if self._root_angle is None:
            return out
        out.update({"chain_target": self._pose_records().view(np.uint8), "local_angle": self._local_angle,
                    "anchor": self._anchor})
        out.update({"root_watch." + k: v for k, v in self._root_watch.arrays().items()})
        if self._state_anchor is not None:
            out["state_anchor"] = self._state_anchor
        return out

    def _restore_inputs(self, arrays):
        from . import state
        cs = self._chain_set
        target = local = anchor = state_anchor = None
        # States saved before the wind was kept have none: they restore without wind.
        winds = {k[len("wind."):]: v for k, v in arrays.items() if k.startswith("wind.")}
        wind = Wind.from_arrays(winds) if winds else Wind.none(self.DIM)
        if wind.acceleration.shape != (self.DIM,):
            raise ValueError(f"state: its wind is {wind.acceleration.size}D; angle chains take 2D wind")
        if "chain_target" in arrays:
            raw = state.array(arrays, "chain_target", (cs.chain_count * layouts.ANGLE_CHAIN_TARGET.itemsize,), np.uint8)
            target = validation.float_array("state chain_target root_angle",
                                            raw.view(layouts.ANGLE_CHAIN_TARGET)["root_angle"]).astype(np.float32)
            local = state.array(arrays, "local_angle", (cs.segment_count,), np.float32)
            anchor = validation.coordinates("state anchor", state.array(arrays, "anchor", (cs.chain_count, 2)))
            if "state_anchor" in arrays:
                state_anchor = validation.coordinates("state anchor", state.array(arrays, "state_anchor",
                                                                                   (cs.chain_count, 2)))
        watch = RootAccelerationWatch(cs.chain_count)  # what it has said (states saved before it was kept: nothing)
        if "root_watch.flags" in arrays:
            watch.restore({"quiet": validation.float_array("state root_watch.quiet", state.array(
                               arrays, "root_watch.quiet", (cs.chain_count,))),
                           "flags": state.array(arrays, "root_watch.flags", (cs.chain_count,), np.uint8)})

        def apply():
            self._root_angle, self._local_angle, self._anchor, self._state_anchor = target, local, anchor, state_anchor
            self._wind = wind
            self._root_watch = watch
        return apply

    def _pose_records(self):
        """(C,) ANGLE_CHAIN_TARGET records of the pose alone (root_angle; the rest 0), as saved
        states hold them."""
        records = np.zeros(len(self._root_angle), layouts.ANGLE_CHAIN_TARGET)
        records["root_angle"] = self._root_angle
        return records

    def _inputs_snapshot(self):
        return {"chain_target": None if self._root_angle is None else self._pose_records(),
                "local_angle": None if self._local_angle is None else self._local_angle.copy(),
                "wind": self._wind}


def angle_chain_rig(chain_set) -> np.ndarray:
    """(C,) ANGLE_CHAIN_RIG records: first segment, segment count, first joint (pivot), gravity."""
    rig = packing.chain_rig(layouts.ANGLE_CHAIN_RIG, chain_set)
    rig["gravity"] = chain_set.gravity
    return rig


def angle_segment_rig(chain_set) -> np.ndarray:
    """(S,) ANGLE_SEGMENT_RIG records with k and c from :func:`gpu_jiggle.sim.spring.coefficients`."""
    rig = np.zeros(chain_set.segment_count, layouts.ANGLE_SEGMENT_RIG)
    k, c = coefficients(chain_set.frequency, chain_set.damping_ratio)
    rig["length"] = chain_set.lengths
    rig["inv_length"] = (1.0 / chain_set.lengths).astype(np.float32)
    rig["stiffness"] = k
    rig["damping"] = c
    rig["inertia"] = chain_set.inertia
    rig["angle_limit"] = chain_set.angle_limit
    rig["air_drag"] = chain_set.air_drag
    return rig


#: Angles within ± this many radians are their own wrap (see :func:`wrap_angle64`).
WRAPPED_WITHIN = 3.0


def wrapped_float32(name: str, a: np.ndarray) -> np.ndarray:
    """(n,) float32: ``wrap(a)`` of the float64 angles ``a`` (rad) rounded to float32, each
    checked finite and within float32 range (SPEC section 0).

    Most poses' angles are wrapped already: ``a`` is rounded first, and where every rounded
    angle is within ±:data:`WRAPPED_WITHIN` so is every angle (to half a float32 step of 3
    rad, still under π), each is its own wrap and the rounding is the result: one conversion
    and two reductions over the float32 half of the bytes. Otherwise the float64 checks (which
    name a bad entry) and :func:`wrap_angle64` run.

    Raises: ValueError (an :class:`~gpu_jiggle.sim.validation.InputError`) for a non-finite
    angle or one beyond float32 range, named as ``name`` and its index."""
    with np.errstate(over="ignore", invalid="ignore"):  # beyond float32 range: inf, refused below
        rounded = a.astype(np.float32)
    if rounded.size and rounded.min() >= -WRAPPED_WITHIN and rounded.max() <= WRAPPED_WITHIN:  # NaN fails
        return rounded
    return wrap_angle64(a, validation.finite_within(name, a, WRAPPED_WITHIN)).astype(np.float32)


def wrap_angle64(a, wrapped: bool | None = None):
    """``wrap(a)`` in float64 on the host before rounding to float32 (SPEC section 0). A new
    array, or ``a`` itself where every entry is within ±:data:`WRAPPED_WITHIN` rad: there
    (a + π)/2π lies in (0.02, 0.98), so the floor is 0 and wrap(a) is a, exactly (two
    reductions instead of five passes: most poses give angles that are already wrapped).
    ``wrapped``: whether the caller found every entry within that bound already (None: look)."""
    a = np.asarray(a, dtype=np.float64)
    if wrapped is None:  # NaN fails these, and takes the full path
        wrapped = bool(a.size and a.min() >= -WRAPPED_WITHIN and a.max() <= WRAPPED_WITHIN)
    if wrapped:
        return a
    turns = a + np.pi  # the same operations as a - 2π·floor((a + π)/2π), in one temporary
    turns /= 2.0 * np.pi
    np.floor(turns, out=turns)
    turns *= 2.0 * np.pi
    return np.subtract(a, turns, out=turns)

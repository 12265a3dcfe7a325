"""Angle chains on the host (SPEC section 3): :class:`AngleSolver`, and the packing of their rig,
poses and frame buffer into the std430 records of :mod:`.layouts`."""
from __future__ import annotations

import numpy as np

from . import layouts, packing, validation
from .chains import AngleChainSet
from .solver import Solver
from .spring import coefficients


class AngleSolver(Solver):
    """A :class:`~gpu_jiggle.Solver` of 2D angle chains (SPEC section 3); made by
    ``Solver(angle_chain_set, ...)`` or directly, with the same arguments (no ``origin``:
    angle chains have no floating origin)."""

    KIND = "angle"
    CHAIN_SET = AngleChainSet
    RECORDS = {"chain_state": layouts.ANGLE_CHAIN_STATE, "segment_state": layouts.ANGLE_SEGMENT_STATE,
               "joint_output": layouts.ANGLE_JOINT_OUTPUT, "segment_output": layouts.ANGLE_SEGMENT_OUTPUT}

    def __init__(self, chain_set, backend: str = "auto", substep: float = 1.0 / 120.0, max_substeps: int = 8,
                 context=None):
        self._chain_target = None   # this frame's ANGLE_CHAIN_TARGET records (C,)
        self._local_angle = None    # this frame's (S,) float32 local target angles
        super().__init__(chain_set, backend, substep, max_substeps, context)

    def set_pose(self, root_position, root_angle, local_angle) -> None:
        """This frame's IK-final pose (SPEC sections 2 and 3).

        Args:
            root_position: (C, 2) float, each chain's root (pivot) in world space.
            root_angle: (C,) float, radians, each chain's root heading in world space.
            local_angle: (S,) float, radians, each segment's target angle relative to its
                parent (segment 0: relative to the root heading).

        Raises:
            ValueError: wrong shape or a non-finite value (argument, index and value named).
            TypeError: non-numeric input.
        """
        cs = self._chain_set
        position = validation.coordinates("root_position", root_position, (cs.chain_count, 2))
        angle = validation.float_array("root_angle", root_angle, (cs.chain_count,))
        local = validation.float_array("local_angle", local_angle, (cs.segment_count,))
        target = np.zeros(cs.chain_count, layouts.ANGLE_CHAIN_TARGET)
        target["root_position"] = position
        target["root_angle"] = wrap_angle64(angle)
        self._chain_target, self._local_angle = target, wrap_angle64(local).astype(np.float32)

    # -- read-back -----------------------------------------------------------------------------
    def angles(self, raw: bool = False) -> np.ndarray:
        """(S,) float32, radians in [-π, π), each segment's world angle.

        At frame time by default (SPEC section 2); ``raw=True`` gives the last substep's.

        Raises: RuntimeError before the first ``advance``.
        """
        if raw:
            return self._read("segment_state")["angle"]
        return self._read("segment_output")["angle"]

    def angular_velocities(self, raw: bool = False) -> np.ndarray:
        """(S,) float32, rad/s, each segment's angular velocity (frame time unless ``raw``).

        Raises: RuntimeError before the first ``advance``."""
        if raw:
            return self._read("segment_state")["angular_velocity"]
        return self._read("segment_output")["angular_velocity"]

    def positions(self, raw: bool = False) -> np.ndarray:
        """(S + C, 2) float32 world-space joint positions: per chain its pivot, then its tips.

        At frame time the pivot is this frame's root position (SPEC section 2); ``raw=True``
        gives the last substep's state, which starts at the last interpolated root (P_prev).

        Raises: RuntimeError before the first ``advance``.
        """
        out = self._read("joint_output")
        return np.ascontiguousarray(out["raw_position" if raw else "position"])

    # -- the kind's part of the host (see Solver) ------------------------------------------------
    def _rig_records(self, chain_set):
        return angle_chain_rig(chain_set), angle_segment_rig(chain_set)

    def _has_pose(self):
        return self._chain_target is not None

    def _upload_inputs(self):
        target = self._chain_target.copy()
        target["teleport"] = self._teleport
        target["lod"] = self._lod
        self._backend.upload_targets(target, self._local_angle)

    def _frame_buffer(self, plan):
        header, alphas = packing.frame_buffer(layouts.ANGLE_FRAME_PARAMS, plan, self._clock.substeps,
                                              self._chain_set.chain_count)
        return packing.as_bytes(header, alphas)

    def _inputs_arrays(self):
        if self._chain_target is None:
            return {}
        return {"chain_target": self._chain_target.view(np.uint8), "local_angle": self._local_angle}

    def _restore_inputs(self, arrays):
        from . import state
        cs = self._chain_set
        if not arrays:
            target = local = None
        else:
            raw = state.array(arrays, "chain_target", (cs.chain_count * layouts.ANGLE_CHAIN_TARGET.itemsize,), np.uint8)
            target = raw.view(layouts.ANGLE_CHAIN_TARGET).copy()
            local = state.array(arrays, "local_angle", (cs.segment_count,), np.float32)

        def apply():
            self._chain_target, self._local_angle = target, local
        return apply

    def _inputs_snapshot(self):
        return {"chain_target": None if self._chain_target is None else self._chain_target.copy(),
                "local_angle": None if self._local_angle is None else self._local_angle.copy()}


def angle_chain_rig(chain_set) -> np.ndarray:
    """(C,) ANGLE_CHAIN_RIG records: first segment, segment count, first joint (pivot), gravity."""
    rig = np.zeros(chain_set.chain_count, layouts.ANGLE_CHAIN_RIG)
    rig["first_segment"] = chain_set.first_segment
    rig["segment_count"] = chain_set.segment_counts
    rig["first_joint"] = chain_set.first_joint
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
    return rig


def wrap_angle64(a):
    """``wrap(a)`` in float64 on the host before rounding to float32 (SPEC section 0)."""
    a = np.asarray(a, dtype=np.float64)
    return a - 2.0 * np.pi * np.floor((a + np.pi) / (2.0 * np.pi))

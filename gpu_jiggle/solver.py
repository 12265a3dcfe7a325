"""The host: validation, the fixed-step clock, poses and teleports, and one backend.

A frame is ``set_pose(...)`` (the IK-final pose), optionally ``teleport(...)``, then
``advance(frame_dt)``; read-backs happen only when asked for.
Source: ``SPEC.md`` sections 2, 3, 5 and 7.
"""
from __future__ import annotations

import logging

import numpy as np

from . import buffers, layouts, validation
from .chains import AngleChainSet
from .clock import FixedStepClock
from .context import check_context, get_context
from .spring import is_stable, stable_frequency

log = logging.getLogger("gpu_jiggle")

BACKENDS = ("auto", "gpu", "cpu")


def make_backend(chain_set, backend: str, context=None):
    """The reference (``"cpu"``) or compute (``"gpu"``) backend for ``chain_set``.

    ``"auto"`` takes the GPU when an OpenGL 4.3 context can be made and otherwise the
    reference, with a logged warning. Raises RuntimeError for ``"gpu"`` without a context.
    """
    from .backends.gpu import GpuAngleBackend
    from .backends.reference import ReferenceAngleBackend

    if backend not in BACKENDS:
        raise ValueError(f"backend = {backend!r}: expected one of {', '.join(map(repr, BACKENDS))}")
    if backend == "cpu":
        return ReferenceAngleBackend(chain_set)
    if context is not None:
        return GpuAngleBackend(chain_set, check_context(context))
    try:
        ctx = get_context()
    except RuntimeError as exc:
        if backend == "gpu":
            raise
        log.warning("no OpenGL 4.3 context, running the numpy reference backend: %s", exc)
        return ReferenceAngleBackend(chain_set)
    return GpuAngleBackend(chain_set, ctx)


def check_stable(chain_set, substep: float) -> None:
    """Refuse f/ζ pairs that the semi-implicit step cannot keep stable (SPEC section 1)."""
    ok = is_stable(chain_set.frequency, chain_set.damping_ratio, substep)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        f, zeta = float(chain_set.frequency[i]), float(chain_set.damping_ratio[i])
        limit = stable_frequency(zeta, substep)
        raise ValueError(
            f"frequency[{i}] = {f!r} Hz with damping_ratio[{i}] = {zeta!r} is unstable for substep "
            f"{substep!r} s: the largest stable frequency for that damping ratio is {limit:.4g} Hz "
            f"(SPEC section 1); lower the frequency or the substep")


class Solver:
    """Damped-spring chains advanced with a fixed substep on the GPU or in numpy.

    Args:
        chain_set: an :class:`~gpu_jiggle.AngleChainSet` (the static rig).
        backend: ``"gpu"`` (GLSL compute over EGL), ``"cpu"`` (numpy reference) or ``"auto"``.
        substep: the fixed substep h in seconds (default 1/120).
        max_substeps: the most substeps one ``advance`` runs (default 8); frame time beyond it
            is dropped and counted in :attr:`dropped_time`.
        context: optional moderngl context (OpenGL ≥ 4.3) to run on, e.g. a window's.

    Raises:
        TypeError: chain_set is not a chain set. ValueError: bad substep, cap, backend name, or
        an unstable frequency (the message gives the largest stable one). RuntimeError:
        ``backend="gpu"`` without an OpenGL 4.3 context.
    """

    def __init__(self, chain_set, backend: str = "auto", substep: float = 1.0 / 120.0, max_substeps: int = 8,
                 context=None):
        if not isinstance(chain_set, AngleChainSet):
            raise TypeError(f"chain_set: expected an AngleChainSet, got {type(chain_set).__name__}")
        self._clock = FixedStepClock(substep, max_substeps)
        check_stable(chain_set, self._clock.substep)
        self.chain_set = chain_set
        self._backend = make_backend(chain_set, backend, context)
        self._backend.upload_rig(buffers.chain_rig(chain_set), buffers.angle_segment_rig(chain_set))
        self._chain_target = None
        self._local_angle = None
        self._teleport = np.full(chain_set.chain_count, layouts.TELEPORT_SNAP, np.uint32)
        self._advanced = False

    # -- properties -------------------------------------------------------------------------
    @property
    def backend(self) -> str:
        """``"gpu"`` or ``"cpu"``: the backend that runs."""
        return self._backend.name

    @property
    def substep(self) -> float:
        return self._clock.substep

    @property
    def max_substeps(self) -> int:
        return self._clock.max_substeps

    @property
    def sim_time(self) -> float:
        """Simulated seconds (substeps run × substep)."""
        return self._clock.sim_time

    @property
    def dropped_time(self) -> float:
        """Seconds of frame time discarded by the ``max_substeps`` cap so far."""
        return self._clock.dropped_time

    @property
    def accumulator(self) -> float:
        """Seconds of frame time not yet simulated (< substep)."""
        return self._clock.accumulator

    # -- per frame ----------------------------------------------------------------------------
    def set_pose(self, root_position, root_angle, local_angle) -> None:
        """This frame's IK-final pose (SPEC sections 2 and 3).

        Args:
            root_position: (C, 2) float, each chain's root (pivot) in world space, length unit.
            root_angle: (C,) float, radians, each chain's root heading in world space.
            local_angle: (S,) float, radians, each segment's target angle relative to its
                parent (segment 0: relative to the root heading).

        Raises:
            ValueError: wrong shape or a non-finite value (argument, index and value named).
            TypeError: non-numeric input.
        """
        cs = self.chain_set
        position = validation.float_array("root_position", root_position, (cs.chain_count, 2))
        angle = validation.float_array("root_angle", root_angle, (cs.chain_count,))
        local = validation.float_array("local_angle", local_angle, (cs.segment_count,))
        target = np.zeros(cs.chain_count, layouts.ANGLE_CHAIN_TARGET)
        target["root_position"] = position
        target["root_angle"] = buffers.wrap_angle64(angle)
        self._chain_target = target
        self._local_angle = buffers.wrap_angle64(local).astype(np.float32)

    def teleport(self, chains=None, keep_shape: bool = False) -> None:
        """Flag chains to jump with the next ``advance`` instead of being pulled (SPEC section 5).

        Args:
            chains: chain indices (int or sequence of ints); ``None`` means all chains.
            keep_shape: False snaps each chain onto its targets with zero velocity; True
                carries its current shape and velocities across the jump.

        Raises:
            ValueError: an index out of range. TypeError: non-integer indices.
        """
        ids = validation.chain_ids("chains", chains, self.chain_set.chain_count)
        if not isinstance(keep_shape, (bool, np.bool_)):
            raise TypeError(f"keep_shape: expected a bool, got {type(keep_shape).__name__}")
        flag = layouts.TELEPORT_KEEP_SHAPE if keep_shape else layouts.TELEPORT_SNAP
        if self._chain_target is None:  # the first pose snaps every chain anyway
            return
        self._teleport[ids] = flag

    def advance(self, frame_dt) -> int:
        """Advance by one frame of ``frame_dt`` seconds; returns the number of substeps run.

        Runs teleports, then ``n`` fixed substeps with targets interpolated from the last
        applied target to this frame's pose (SPEC section 2), and computes the frame-time
        outputs.

        Raises:
            ValueError: frame_dt negative or not finite. TypeError: not a number.
            RuntimeError: no pose was set yet.
        """
        plan = self._clock.plan(frame_dt)
        if self._chain_target is None:
            raise RuntimeError("advance() before set_pose(): give the solver a pose first")
        target = self._chain_target.copy()
        target["teleport"] = self._teleport
        self._backend.upload_targets(target, self._local_angle)
        self._backend.run_frame(buffers.frame_params(plan, self._clock.substep, self.chain_set.chain_count,
                                                     self.chain_set.gravity))
        self._clock.commit(plan)
        self._teleport[:] = layouts.TELEPORT_NONE
        self._advanced = True
        return plan.substep_count

    def set_parameters(self, **changes) -> None:
        """Change ``frequency``, ``damping_ratio``, ``inertia``, ``angle_limit`` or ``gravity``
        between frames without resetting the state (SPEC section 2).

        Values are given as to :class:`~gpu_jiggle.AngleChainSet` and validated the same
        way, stability included; a refused change leaves everything as it was.
        """
        new = self.chain_set.replace(**changes)
        check_stable(new, self._clock.substep)
        self._backend.upload_rig(buffers.chain_rig(new), buffers.angle_segment_rig(new))
        self.chain_set = new

    # -- read-back -----------------------------------------------------------------------------
    def angles(self, raw: bool = False) -> np.ndarray:
        """(S,) float32, radians in [-π, π): each segment's world angle.

        At frame time by default (SPEC section 2); ``raw=True`` gives the last substep's.
        """
        if raw:
            return self._read("segment_state")["angle"]
        return self._read("segment_output")["angle"]

    def angular_velocities(self, raw: bool = False) -> np.ndarray:
        """(S,) float32, rad/s: each segment's angular velocity (frame time unless ``raw``)."""
        if raw:
            return self._read("segment_state")["angular_velocity"]
        return self._read("segment_output")["angular_velocity"]

    def positions(self, raw: bool = False) -> np.ndarray:
        """(S + C, 2) float32, world space: per chain its pivot, then its segment tips.

        At frame time the pivot is this frame's root position; ``raw=True`` gives the last
        substep's state, which starts at the last interpolated root position (P_prev).
        """
        out = self._read("joint_output")
        return np.ascontiguousarray(out["raw_position" if raw else "position"])

    def state(self) -> dict:
        """A full copy of the dynamic state, the clock and the pending inputs (for checks)."""
        return {
            "chain_state": self._backend.read("chain_state"),
            "segment_state": self._backend.read("segment_state"),
            "joint_output": self._backend.read("joint_output"),
            "segment_output": self._backend.read("segment_output"),
            "clock": (self._clock.accumulator, self._clock.substeps_run, self._clock.dropped_time),
            "teleport": self._teleport.copy(),
            "chain_target": None if self._chain_target is None else self._chain_target.copy(),
            "local_angle": None if self._local_angle is None else self._local_angle.copy(),
            "rig": (buffers.angle_segment_rig(self.chain_set), self.chain_set.gravity.copy()),
        }

    def release(self) -> None:
        """Free the backend's GPU buffers and program now (the solver is unusable after)."""
        release = getattr(self._backend, "release", None)
        if release is not None:
            release()
        self._backend = _Released()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def _read(self, name):
        if not self._advanced:
            raise RuntimeError("nothing to read before the first advance()")
        return self._backend.read(name)

    def __repr__(self):
        return f"Solver({self.chain_set!r}, backend={self.backend!r}, substep={self.substep!r})"


class _Released:
    """Stands in for a released backend: every use says so."""

    name = "released"

    def __getattr__(self, attr):
        raise RuntimeError("this Solver was released")

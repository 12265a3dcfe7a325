"""The host: validation, the fixed-step clock, poses and teleports, and one backend.

A frame is ``set_pose(...)`` (the IK-final pose), optionally ``teleport(...)``, then
``advance(frame_dt)``; read-backs happen only when asked for.
Source: ``SPEC.md`` sections 2, 3, 5 and 7.
"""
from __future__ import annotations

import logging

import numpy as np

from . import layouts, validation
from .angle import AngleModel
from .chains import AngleChainSet, PointChainSet
from .inputs import ColliderSet, Wind
from .clock import FixedStepClock
from ..gl.context import check_context, get_context
from .point import PointModel
from .spring import is_stable, stable_frequency

log = logging.getLogger("gpu_jiggle")

BACKENDS = ("auto", "gpu", "cpu")


def make_backend(model, backend: str, context=None):
    """The reference (``"cpu"``) or compute (``"gpu"``) backend for ``model``'s chain set.

    ``"auto"`` takes the GPU when an OpenGL 4.3 context can be made and otherwise the
    reference, with a logged warning. Raises RuntimeError for ``"gpu"`` without a context.
    """
    reference, gpu = model.backend_classes()
    chain_set = model.chain_set
    if backend not in BACKENDS:
        raise ValueError(f"backend = {backend!r}: expected one of {', '.join(map(repr, BACKENDS))}")
    if backend == "cpu":
        return reference(chain_set)
    if context is not None:
        return gpu(chain_set, check_context(context))
    try:
        ctx = get_context()
    except RuntimeError as exc:
        if backend == "gpu":
            raise
        log.warning("no OpenGL 4.3 context, running the numpy reference backend: %s", exc)
        return reference(chain_set)
    return gpu(chain_set, ctx)


def check_stable(chain_set, substep: float, where=None, what: str = "") -> None:
    """Refuse f/ζ pairs that the semi-implicit step cannot keep stable (SPEC section 1),
    among the segments ``where`` (a boolean mask; all by default)."""
    ok = is_stable(chain_set.frequency, chain_set.damping_ratio, substep)
    if where is not None:
        ok = ok | ~where
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        f, zeta = float(chain_set.frequency[i]), float(chain_set.damping_ratio[i])
        limit = stable_frequency(zeta, substep)
        raise ValueError(
            f"frequency[{i}] = {f!r} Hz with damping_ratio[{i}] = {zeta!r} is unstable for substep "
            f"{substep!r} s{' ' + what if what else ''}: the largest stable frequency for that damping ratio is {limit:.4g} Hz "
            f"(SPEC section 1); lower the frequency or the substep")


class Solver:
    """Damped-spring chains advanced with a fixed substep on the GPU or in numpy.

    Args:
        chain_set: an :class:`~gpu_jiggle.AngleChainSet` (2D, SPEC 3) or a
            :class:`~gpu_jiggle.PointChainSet` (3D, SPEC 4): the static rig.
        backend: ``"gpu"`` (GLSL compute over EGL), ``"cpu"`` (numpy reference) or ``"auto"``.
        substep: the fixed substep h in seconds (default 1/120).
        max_substeps: the most substeps one ``advance`` runs (default 8); frame time beyond it
            is dropped and counted in :attr:`dropped_time`.
        context: optional moderngl context (OpenGL ≥ 4.3) to run on, e.g. a window's.
        origin: point chains only: the floating origin (3,) in world space; by default the
            mean pivot of the first pose (SPEC 4.4).

    Raises:
        TypeError: chain_set is not a chain set. ValueError: bad substep, cap, backend name, or
        an unstable frequency (the message gives the largest stable one). RuntimeError:
        ``backend="gpu"`` without an OpenGL 4.3 context.
    """

    def __init__(self, chain_set, backend: str = "auto", substep: float = 1.0 / 120.0, max_substeps: int = 8,
                 context=None, origin=None):
        if isinstance(chain_set, AngleChainSet):
            if origin is not None:
                raise TypeError("origin: only point chains have a floating origin")
            model = AngleModel(chain_set)
        elif isinstance(chain_set, PointChainSet):
            model = PointModel(chain_set, origin)
        else:
            raise TypeError(f"chain_set: expected an AngleChainSet or a PointChainSet, got {type(chain_set).__name__}")
        self._clock = FixedStepClock(substep, max_substeps)
        self._half_clock = FixedStepClock(2.0 * self._clock.substep, max_substeps)
        self._half_pending = 0.0
        self._frames = 0
        check_stable(chain_set, self._clock.substep)
        self._model = model
        self._backend = make_backend(model, backend, context)
        self._backend.upload_rig(*model.rig(chain_set))
        self._teleport = np.full(chain_set.chain_count, layouts.TELEPORT_SNAP, np.uint32)
        self._lod = np.zeros(chain_set.chain_count, np.uint32)
        self._advanced = False

    # -- properties -------------------------------------------------------------------------
    @property
    def chain_set(self):
        """The chain set in use (a new object after :meth:`set_parameters`)."""
        return self._model.chain_set

    @property
    def backend(self) -> str:
        """``"gpu"`` or ``"cpu"``: the backend that runs."""
        return self._backend.name

    @property
    def substep(self) -> float:
        """The fixed substep h in seconds."""
        return self._clock.substep

    @property
    def max_substeps(self) -> int:
        """The most substeps one ``advance`` runs; frame time beyond is dropped."""
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

    @property
    def origin(self):
        """Point chains: the floating origin (3,) float64, world space (None before the first pose)."""
        self._require("point", "origin")
        return None if self._model.origin is None else self._model.origin.copy()

    @property
    def rest_lengths(self):
        """Point chains: (S,) float64 rest lengths in use (None before the first pose when
        they come from it)."""
        self._require("point", "rest_lengths")
        r = self._model.rest_lengths
        return None if r is None else np.array(r, dtype=np.float64)

    # -- per frame ----------------------------------------------------------------------------
    def set_pose(self, root_position=None, root_angle=None, local_angle=None, *, joint_positions=None) -> None:
        """This frame's IK-final pose (SPEC sections 2, 3 and 4).

        Angle chains:
            root_position: (C, 2) float, each chain's root (pivot) in world space.
            root_angle: (C,) float, radians, each chain's root heading in world space.
            local_angle: (S,) float, radians, each segment's target angle relative to its
                parent (segment 0: relative to the root heading).
        Point chains:
            joint_positions: (J, 3) float (float64 kept), world space: per chain its pivot,
                then one joint per segment tip. The first pose fixes the floating origin and,
                where the chain set has none, the rest lengths.

        Raises:
            ValueError: wrong shape or a non-finite value (argument, index and value named); a
                zero-length segment in a first pose that sets the rest lengths.
            TypeError: non-numeric input, or arguments of the other chain kind.
        """
        if self._model.kind == "angle":
            if joint_positions is not None:
                raise TypeError("joint_positions is for point chains; an AngleChainSet takes "
                                "root_position, root_angle and local_angle")
            self._model.prepare_pose(root_position, root_angle, local_angle)()
            return
        if joint_positions is None or root_position is not None or root_angle is not None or local_angle is not None:
            raise TypeError("a PointChainSet takes set_pose(joint_positions=(J, 3))")
        apply, new_rig = self._model.prepare_pose(joint_positions)
        apply()
        if new_rig:
            self._backend.upload_rig(*self._model.rig(self.chain_set))

    def set_colliders(self, spheres=None, sphere_groups=None, capsules=None, capsule_groups=None, planes=None,
                      plane_groups=None, snap: bool = False) -> None:
        """Point chains: this frame's colliders, world space (SPEC 4.2); replaces all of them.

        Args:
            spheres: (K, 4) centre xyz and radius ≥ 0. sphere_groups: (K,) ints in [0, 31].
            capsules: (M, 7) end a xyz, end b xyz, radius ≥ 0. capsule_groups: (M,).
            planes: (N, 4) unit normal xyz and offset o; particles keep n·x ≥ o + ρ.
                plane_groups: (N,).
            snap: start the colliders where they are now instead of interpolating from the
                last frame (use it with a teleport). A change in the number of colliders of a
                kind snaps that kind anyway.
            Groups default to 0. A chain collides with a collider when its mask has the bit.

        Raises:
            ValueError: a wrong shape, non-finite value, negative radius, non-unit normal
            (off by more than 1e-3), or group outside [0, 31]. TypeError: wrong types.
        """
        self._require("point", "set_colliders")
        colliders = ColliderSet.validated(spheres, sphere_groups, capsules, capsule_groups, planes, plane_groups)
        self._model.colliders = colliders
        self._model.snap_colliders = self._model.snap_colliders or bool(snap)

    def set_wind(self, acceleration=(0.0, 0.0, 0.0), gust_amplitude=0.0, gust_wave_vector=(0.0, 0.0, 0.0),
                 gust_frequency=0.0) -> None:
        """Point chains: wind ``W(x, t) = w0 + A·u·sin(κ·x - 2π·f_w·t)`` (SPEC 4.1).

        Args:
            acceleration: w0 (3,), length/s². gust_amplitude: A, length/s².
            gust_wave_vector: κ (3,), radians per length unit. gust_frequency: f_w, Hz.

        Raises: ValueError for a wrong shape or non-finite value; TypeError for non-numbers.
        """
        self._require("point", "set_wind")
        self._model.wind = Wind.validated(acceleration, gust_amplitude, gust_wave_vector, gust_frequency)

    def rebase(self, origin) -> None:
        """Point chains: move the floating origin to ``origin`` (3,) world space, shifting the
        state with it so that the motion goes on unchanged (SPEC 4.4).

        Raises: ValueError for a wrong shape or a non-finite value; RuntimeError before the
        first pose.
        """
        self._require("point", "rebase")
        new = validation.float_array("origin", origin, (3,))
        if not self._model.has_pose:
            self._model.origin = new
            return
        shift = self._model.origin - new
        state = self._backend.read("chain_state")
        for name in ("prev_pivot", "last_pivot"):
            state[name][:, :3] = (state[name][:, :3].astype(np.float64) + shift).astype(np.float32)
        self._backend.write_state(state, self._backend.read("segment_state"))
        self._model.origin = new
        self._model.pack_pose()

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
        if not self._model.has_pose:  # the first pose snaps every chain anyway
            return
        self._teleport[ids] = flag

    def set_lod(self, levels) -> None:
        """Level of detail per chain, from the next ``advance`` on.

        Args:
            levels: (C,) or a scalar, each ``"full"`` (0: every frame at the substep h),
                ``"half"`` (1: every second frame, at substep 2h with both frames' time, so
                the motion keeps its speed at half the cost) or ``"frozen"`` (2: sits on its
                animated targets, nothing integrated).

        Raises:
            ValueError: an unknown level, a wrong shape, or a chain whose frequency is not
                stable at the substep 2h (the message gives the largest stable one).
            TypeError: levels that are neither names nor integers.
        """
        lod = validation.lod_array("levels", levels, self.chain_set.chain_count)
        half = np.repeat(lod == layouts.LOD_HALF, self.chain_set.segment_counts)
        if half.any():
            cs = self.chain_set
            check_stable(cs, self._half_clock.substep, where=half, what="at level of detail 'half'")
        self._lod = lod

    @property
    def lod(self) -> np.ndarray:
        """(C,) uint32 levels of detail (0 full, 1 half, 2 frozen)."""
        return self._lod.copy()

    def advance(self, frame_dt) -> int:
        """Advance by one frame of ``frame_dt`` seconds; returns the number of (full-rate)
        substeps run.

        Runs teleports, then ``n`` fixed substeps with targets interpolated from the last
        applied target to this frame's pose (SPEC section 2), and computes the frame-time
        outputs. Chains at level of detail "half" run on every second frame only.

        Raises:
            ValueError: frame_dt negative or not finite. TypeError: not a number.
            RuntimeError: no pose was set yet.
        """
        plan = self._clock.plan(frame_dt)
        if not self._model.has_pose:
            raise RuntimeError("advance() before set_pose(): give the solver a pose first")
        half_turn = self._frames % 2 == 1
        half_plan = self._half_clock.plan(self._half_pending + float(frame_dt) if half_turn else 0.0)
        self._model.upload(self._backend, self._teleport, self._lod)
        params = self._model.frame_params((plan, half_plan), (self._clock.substep, self._half_clock.substep),
                                          (self._clock.sim_time, self._half_clock.sim_time))
        self._backend.run_frame(params)
        self._model.after_frame(plan)
        self._clock.commit(plan)
        self._half_clock.commit(half_plan)
        self._half_pending = 0.0 if half_turn else self._half_pending + float(frame_dt)
        self._frames += 1
        self._teleport[:] = layouts.TELEPORT_NONE
        self._advanced = True
        return plan.substep_count

    def set_parameters(self, **changes) -> None:
        """Change spring and chain parameters between frames without resetting the state
        (SPEC section 2).

        Angle chains: ``frequency, damping_ratio, inertia, angle_limit, gravity``. Point
        chains: ``frequency, damping_ratio, particle_radius, max_distance, world_influence,
        collider_mask, gravity, rest_lengths``. Values are given as to the chain set's
        constructor and validated the same way, stability included; a refused change
        leaves everything as it was.
        """
        new = self.chain_set.replace(**changes)
        check_stable(new, self._clock.substep)
        half = np.repeat(self._lod == layouts.LOD_HALF, new.segment_counts)
        if half.any():
            check_stable(new, self._half_clock.substep, where=half, what="at level of detail 'half'")
        if "rest_lengths" in changes:
            self._model.rest_lengths = new.rest_lengths
        self._backend.upload_rig(*self._model.rig(new))
        self._model.chain_set = new

    # -- read-back -----------------------------------------------------------------------------
    def angles(self, raw: bool = False) -> np.ndarray:
        """Angle chains: (S,) float32, radians in [-π, π), each segment's world angle.

        At frame time by default (SPEC section 2); ``raw=True`` gives the last substep's.
        """
        self._require("angle", "angles")
        if raw:
            return self._read("segment_state")["angle"]
        return self._read("segment_output")["angle"]

    def angular_velocities(self, raw: bool = False) -> np.ndarray:
        """Angle chains: (S,) float32, rad/s, each segment's angular velocity (frame time
        unless ``raw``)."""
        self._require("angle", "angular_velocities")
        if raw:
            return self._read("segment_state")["angular_velocity"]
        return self._read("segment_output")["angular_velocity"]

    def positions(self, raw: bool = False) -> np.ndarray:
        """World-space joint positions: per chain its pivot, then its segment tips.

        Angle chains: (S + C, 2) float32. Point chains: (J, 3) float64.
        At frame time the pivot is this frame's pose (SPEC section 2); ``raw=True`` gives the
        last substep's state, which starts at the last interpolated pivot (P_prev, p_prev).
        """
        out = self._read("joint_output")
        if self._model.kind == "point":
            return self._model.world_positions(out, self._backend.read("chain_state"), raw)
        return np.ascontiguousarray(out["raw_position" if raw else "position"])

    def velocities(self, raw: bool = False) -> np.ndarray:
        """Point chains: (S, 3) float32 world velocities of the segment tips, length/s
        (frame time unless ``raw``)."""
        self._require("point", "velocities")
        if raw:
            return np.ascontiguousarray(self._read("segment_state")["velocity"][:, :3])
        return np.ascontiguousarray(self._read("segment_output")["velocity"][:, :3])

    def segment_rotations(self) -> np.ndarray:
        """Point chains: (S, 4) float32 unit quaternions (x, y, z, w), at frame time, each
        taking the segment's animated direction (this frame's pose) onto its simulated one:
        multiply them onto a skeleton's animated bone rotations (in world space)."""
        self._require("point", "segment_rotations")
        return np.ascontiguousarray(self._read("segment_output")["rotation"])

    def gpu_buffers(self) -> dict:
        """The GPU backend's storage buffers (``moderngl.Buffer``) by name, for drawing straight
        from the solver's state without a read-back: ``chain_rig``, ``chain_target``,
        ``joint_output``, ``segment_output`` (and the rest). Layouts are those of
        :mod:`gpu_jiggle.sim.layouts`; ``shaders/point_draw.glsl`` declares them for a vertex
        shader, with the world position of a joint at frame time. They change in place at
        every ``advance``; do not write to them.

        Raises: TypeError on the CPU backend.
        """
        if self.backend != "gpu":
            raise TypeError("gpu_buffers() needs the GPU backend; this solver runs on the CPU")
        return dict(self._backend.buffers)

    def state(self) -> dict:
        """A full copy of the dynamic state, the clock and the pending inputs (for checks)."""
        snapshot = {
            "chain_state": self._backend.read("chain_state"),
            "segment_state": self._backend.read("segment_state"),
            "joint_output": self._backend.read("joint_output"),
            "segment_output": self._backend.read("segment_output"),
            "clock": (self._clock.accumulator, self._clock.substeps_run, self._clock.dropped_time),
            "half_clock": (self._half_clock.accumulator, self._half_clock.substeps_run, self._half_pending,
                           self._frames),
            "lod": self._lod.copy(),
            "teleport": self._teleport.copy(),
            "rig": tuple(r.copy() for r in self._model.rig(self.chain_set)),
        }
        snapshot.update(self._model.snapshot())
        return snapshot

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

    def _require(self, kind, what):
        if self._model.kind != kind:
            raise TypeError(f"{what} is for {kind} chains; this solver runs {self._model.kind} chains")

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

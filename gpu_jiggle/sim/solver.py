"""The host of one chain set: validation, the fixed-step clocks, teleports, levels of detail and
one backend. :class:`Solver` is the entry point; it gives the solver of the chain set's kind,
:class:`~gpu_jiggle.sim.angle.AngleSolver` (2D, SPEC 3) or
:class:`~gpu_jiggle.sim.point.PointSolver` (3D, SPEC 4), each with only its own methods.

A frame is ``set_pose(...)`` (the IK-final pose), optionally ``teleport(...)``, then
``advance(frame_dt)``; read-backs happen only when asked for.
Source: ``SPEC.md`` sections 2, 3, 4, 5 and 7.
"""
from __future__ import annotations

import warnings

import numpy as np

from . import layouts, validation
from .backends import Backend, make_backend
from .clock import FrameClock, FrameTimeWarning
from .inputs import Wind
from .integrator import INTEGRATORS, exact_step_records
from .levels import LevelsOfDetail
from .release import Releasable
from .state import SavedState
from .timing import MeasuredDispatch

#: The solver options (SPEC 2, 3, 4) and their values; the first of each is the default (v2).
TARGET_PATHS = ("monotone", "hermite", "linear")
#: The option bits of each target path.
PATH_OPTIONS = {"monotone": layouts.OPTION_HERMITE_PATH | layouts.OPTION_MONOTONE_PATH,
                "hermite": layouts.OPTION_HERMITE_PATH, "linear": 0}
DAMPING_FRAMES = ("relative", "world")


class Solver(SavedState, LevelsOfDetail, MeasuredDispatch, Releasable):
    """Damped-spring chains advanced with a fixed substep on the GPU or in numpy.

    ``Solver(chain_set, ...)`` returns an :class:`~gpu_jiggle.AngleSolver` for an
    :class:`~gpu_jiggle.AngleChainSet` and a :class:`~gpu_jiggle.PointSolver` for a
    :class:`~gpu_jiggle.PointChainSet`; both are Solvers.

    Args:
        chain_set: the static rig, an AngleChainSet (2D, SPEC 3) or a PointChainSet (3D, SPEC 4).
        backend: ``"gpu"`` (GLSL compute over EGL), ``"cpu"`` (numpy reference) or ``"auto"``.
        substep: the fixed substep h in seconds (default 1/120).
        max_substeps: the most substeps one ``advance`` runs (default 8); frame time beyond it
            is dropped and counted in :attr:`dropped_time`.
        context: optional moderngl context (OpenGL ≥ 4.3) to run on, e.g. a window's, current
            when the solver is made.
        target_path: ``"monotone"`` (default: SPEC 2's C1 cubic whose start velocity is
            limited where the motion stops, turns back or slows sharply, so that it never
            passes a pose), ``"hermite"`` (v2 before it: the same cubic unlimited, which
            overshoots a pose where the body stops dead) or ``"linear"`` (v1: targets
            interpolated linearly within each frame).
        damping_frame: ``"relative"`` (default, v2: the spring compares state and target at
            the same instant and damping resists motion relative to the target, SPEC 3 and 4)
            or ``"world"`` (v1: spring toward the end-of-substep target, damping of world
            velocity; a moving body's chains trail by 2ζV/ω0).
        integrator: ``"semi-implicit"`` (default: Euler, velocity first; f must stay below
            its stability bound) or ``"exact"`` (the closed-form step of each spring over
            the substep, SPEC 1: no stability bound, frequency and decay exact for any f).
        origin, rotation_outputs: point chains only, see :class:`~gpu_jiggle.PointSolver`.
        work_group_size: chains per compute work group on the GPU path (None: 64, which
            ``gpu-jiggle bench --work-group-sizes`` measures against others); the numpy path
            has no work groups and only checks it.

    Raises:
        TypeError: chain_set is not a chain set (or not of this solver's kind). ValueError:
        bad substep, cap, backend name, option name (the closest valid one named), a
        work_group_size below 1 or over the context's limit (TypeError: not an integer), or an
        unstable frequency (the message gives the largest stable one). RuntimeError:
        ``backend="gpu"`` without an OpenGL 4.3 context.
    """

    #: The chain kind ("angle" or "point"), its chain set class, its dimension, the dtypes of
    #: its dynamic state and output records and of its frame buffer's header, set by each
    #: subclass.
    KIND = ""
    FRAME_PARAMS = None
    CHAIN_SET = None
    DIM = 0
    RECORDS: dict = {}

    #: kind ("angle", "point") -> the Solver subclass of that kind, filled as each is defined.
    _KINDS: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("KIND"):  # a kind's own class, not a subclass of it
            Solver._KINDS[cls.KIND] = cls

    @staticmethod
    def solver_kinds() -> dict:
        """Chain kind (``"angle"``, ``"point"``) → the Solver subclass that runs it (a copy)."""
        return dict(Solver._KINDS)

    def __new__(cls, chain_set=None, *args, **kwargs):
        return super().__new__(solver_class(chain_set) if cls is Solver else cls)

    def __init__(self, chain_set, backend: str = "auto", substep: float = 1.0 / 120.0, max_substeps: int = 8,
                 context=None, target_path: str = "monotone", damping_frame: str = "relative",
                 integrator: str = "semi-implicit", work_group_size: int | None = None):
        if not isinstance(chain_set, self.CHAIN_SET):
            raise TypeError(f"chain_set: expected a {self.CHAIN_SET.__name__}, got {type(chain_set).__name__}")
        self._options = (PATH_OPTIONS[validation.choice("target_path", target_path, TARGET_PATHS)]
                         | int(validation.choice("damping_frame", damping_frame, DAMPING_FRAMES) == "relative")
                         * layouts.OPTION_RELATIVE_DAMPING
                         | int(validation.choice("integrator", integrator, INTEGRATORS) == "exact")
                         * layouts.OPTION_EXACT_INTEGRATOR | self._kind_options())
        self.target_path, self.damping_frame, self.integrator = target_path, damping_frame, integrator
        self._wind = Wind.none(self.DIM)
        self._clock = FrameClock(substep, max_substeps)
        self._check_stable(chain_set, self._wind)
        self._chain_set = chain_set
        if work_group_size is not None:
            work_group_size = validation.whole_number("work_group_size", work_group_size)
        self._backend: Backend = make_backend(self.KIND, chain_set, backend, context, work_group_size)
        self._teleport = np.full(chain_set.chain_count, layouts.TELEPORT_SNAP, np.uint32)
        self._lod = np.zeros(chain_set.chain_count, np.uint32)
        self._lod_ran = self._lod.copy()  # the levels the last advance ran (see frame_levels)
        self._advanced = False
        self._upload_rig(chain_set)
        self._prepare_kernel()

    # -- properties -------------------------------------------------------------------------
    @property
    def chain_set(self):
        """The chain set in use (a new object after :meth:`set_parameters`)."""
        return self._chain_set

    @property
    def backend(self) -> str:
        """``"gpu"`` or ``"cpu"``: the backend that runs."""
        return self._backend.name

    @property
    def work_group_size(self) -> int | None:
        """Chains per compute work group on the GPU path; None on the numpy path."""
        return getattr(self._backend, "work_group_size", None)

    @property
    def substep(self) -> float:
        """The fixed substep h in seconds."""
        return self._clock.full.substep

    @property
    def max_substeps(self) -> int:
        """The most substeps one ``advance`` runs; frame time beyond is dropped."""
        return self._clock.full.max_substeps

    @property
    def sim_time(self) -> float:
        """Simulated seconds (substeps run × substep)."""
        return self._clock.full.sim_time

    @property
    def dropped_time(self) -> float:
        """Seconds of frame time discarded by the ``max_substeps`` cap so far."""
        return self._clock.full.dropped_time

    @property
    def accumulator(self) -> float:
        """Seconds of frame time not yet simulated (< substep)."""
        return self._clock.full.accumulator

    # -- per frame ----------------------------------------------------------------------------
    def teleport(self, chains=None, keep_shape: bool = False, moving: bool = False) -> None:
        """Flag chains to jump with the next ``advance`` instead of being pulled (SPEC section 5).

        Args:
            chains: chain indices (int or sequence of ints); ``None`` means all chains.
            keep_shape: False snaps each chain onto its targets at rest; True carries its
                current shape, velocities and target path velocities across the jump.
            moving: the body is already moving (it appears, respawns or is snapped while in
                motion): the first frame that runs substeps then measures no root
                acceleration, starts every segment moving with its target and the target
                path at the speed it is seen to have, so nothing is whipped. Also before the
                first pose, for the first pose.

        Raises:
            ValueError: an index out of range. TypeError: non-integer indices, non-bools.
        """
        self._require_live("teleport")
        ids = validation.chain_ids("chains", chains, self._chain_set.chain_count)
        keep_shape, moving = validation.flag("keep_shape", keep_shape), validation.flag("moving", moving)
        flag = layouts.TELEPORT_KEEP_SHAPE if keep_shape else layouts.TELEPORT_SNAP
        if not self._has_pose():  # the first pose snaps every chain anyway
            flag = layouts.TELEPORT_SNAP
        self._teleport[ids] = (self._teleport[ids] & layouts.TELEPORT_MIRROR) | flag \
            | (layouts.TELEPORT_MOVING if moving else 0)

    def set_wind(self, acceleration=None, gust_amplitude=0.0, gust_wave_vector=None, gust_frequency=0.0) -> None:
        """Wind ``W(x, t) = w0 + A·u·sin(κ·x - 2π·f_w·t)`` (SPEC 4.1; for angle chains its 2D
        form, SPEC 3), from the next ``advance`` on.

        Args:
            acceleration: w0, (3,) for point chains and (2,) for angle chains, length/s²
                (default zero). gust_amplitude: A, length/s². gust_wave_vector: κ, same shape
                as w0, radians per length unit (default zero). gust_frequency: f_w, Hz.

        Raises: ValueError for a wrong shape or non-finite value, or a wind the substep cannot
        keep stable (:func:`~gpu_jiggle.sim.spring.check_stable`: across an angle chain's
        segment the wind turns it like a spring of stiffness |g + W|/L, and a gust's gradient
        A·|κ| acts as one on either kind; the message names the segment and the shortest
        length, or the largest gust, that runs); TypeError for non-numbers.
        """
        self._require_live("set_wind")
        zero = np.zeros(self.DIM)
        wind = Wind.validated(zero if acceleration is None else acceleration, gust_amplitude,
                              zero if gust_wave_vector is None else gust_wave_vector, gust_frequency, dim=self.DIM)
        self._check_stable(self._chain_set, wind)
        self._check_half_rate(self._chain_set, self._lod, wind)
        self._wind = wind
        self._prepare_kernel()

    def advance(self, frame_dt) -> int:
        """Advance by one frame of ``frame_dt`` seconds; returns the number of (full-rate)
        substeps run.

        Runs teleports, then ``n`` fixed substeps with targets interpolated from the last
        applied target to this frame's pose (SPEC section 2), and computes the frame-time
        outputs. Chains at level of detail "half" run on every second frame only.

        Raises:
            ValueError: frame_dt negative or not finite. TypeError: not a number.
            RuntimeError: no pose was set yet.

        Warns:
            FrameTimeWarning, once per solver: a frame time that looks like milliseconds
            (:meth:`~gpu_jiggle.sim.clock.FrameClock.milliseconds_hint`); it runs as given.
        """
        plan = self._clock.plan(frame_dt)
        if not self._has_pose():
            raise RuntimeError("advance() before set_pose(): give the solver a pose first")
        self._clock.warn_if_milliseconds(frame_dt)
        levels = self.frame_levels()
        self._upload_inputs(levels)
        params = self._frame_buffer(plan)
        self._run_frame(params)
        self._after_frame(plan)
        self._clock.commit(plan, frame_dt)
        self._lod_ran = levels
        self._teleport[:] = layouts.TELEPORT_NONE
        self._advanced = True
        return plan.full.substep_count

    def settle(self, seconds) -> int:
        """Run ``seconds`` of simulation on the current pose in one call, for a pre-roll that
        lets the chains hang before the first frame that is shown; returns the substeps run.

        It is bit-identical to advancing the same time in frames of ``max_substeps ·
        substep`` seconds (each one dispatch of the cap's substeps): ``q = floor(seconds /
        (max_substeps·substep))`` calls of ``advance(max_substeps * substep)``, then one
        ``advance(seconds - q * max_substeps * substep)`` for the rest (fewer substeps, and
        what is left below one substep kept for the next frame, as ``advance`` keeps it).
        Unlike one long ``advance(seconds)`` it drops no time to the ``max_substeps`` cap and
        says no :class:`~gpu_jiggle.sim.clock.FrameTimeWarning`. Pending teleports apply on
        its first frame, as on ``advance``'s.

        Args:
            seconds: float, s, finite and >= 0 (at most 1e6).

        Raises:
            ValueError: seconds negative, not finite or beyond 1e6. TypeError: not a number.
            RuntimeError: no pose was set yet.
        """
        seconds = validation.frame_time("seconds", seconds)
        if not self._has_pose():
            raise RuntimeError("settle() before set_pose(): give the solver a pose first")
        frame = self.max_substeps * self.substep
        frames = int(seconds // frame)
        run = 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FrameTimeWarning)
            for _ in range(frames):
                run += self.advance(frame)
            rest = seconds - frames * frame
            if rest > 0 or frames == 0:
                run += self.advance(rest)
        return run

    def set_parameters(self, **changes) -> None:
        """Change spring and chain parameters between frames without resetting the state
        (SPEC section 2).

        The names are those of the chain set's ``replace`` (see
        :class:`~gpu_jiggle.AngleChainSet` and :class:`~gpu_jiggle.PointChainSet`). Values
        are given as to the chain set's constructor and validated the same way, stability
        included; a refused change leaves everything as it was.

        Raises: TypeError for an unknown name; ValueError (an
        :class:`~gpu_jiggle.sim.validation.InputError`) for a bad or unstable value.
        """
        new = self._chain_set.replace(**changes)
        self._check_stable(new, self._wind)
        self._check_half_rate(new, self._lod)
        self._check_half_rate(new, self.frame_levels())  # a switch out of "half" may come a frame late
        self._parameters_changed(new, changes)
        self._chain_set = new
        self._prepare_kernel()

    # -- read-back -----------------------------------------------------------------------------
    def gpu_buffers(self) -> dict:
        """The GPU backend's storage buffers (``moderngl.Buffer``) by name, for drawing straight
        from the solver's state without a read-back (angle chains' segment rig is a texture,
        :meth:`gpu_textures`): ``chain_rig``, ``joint_output``,
        ``segment_output``, ``chain_output`` (point chains: each pivot relative to
        :attr:`origin`, and the level of detail; angle chains: each chain's largest root
        acceleration of the frame) and the rest (with point chains' spare state,
        ``near_chain_state`` and ``near_segment_state``, and ``near_chains`` once a frame has
        run as near and far chains, :mod:`gpu_jiggle.sim.backends.near_far`). Layouts and
        bindings are those of :mod:`gpu_jiggle.sim.layouts`; ``shaders/draw/point_draw.glsl``
        declares them for a vertex shader, with the world position of a joint at frame time.
        They change in place at every ``advance``, but for point chains' state, which such a
        frame may swap with its spare: ask again after each ``advance``. Do not write to them.

        Raises: TypeError on the CPU backend.
        """
        self._require_live("gpu_buffers")
        if self.backend != "gpu":
            raise TypeError("gpu_buffers() needs the GPU backend; this solver runs on the CPU")
        return self._backend.all_buffers()

    def gpu_textures(self) -> dict:
        """The GPU backend's record textures (``moderngl.Texture``, ``RGBA32UI``) by name: the
        read-only records a kernel reads as texels (:mod:`gpu_jiggle.gl.record_texture`,
        ``layouts.ANGLE_TEXTURES``: angle chains' ``segment_rig``); empty for point chains.

        Raises: TypeError on the CPU backend."""
        self._require_live("gpu_textures")
        if self.backend != "gpu":
            raise TypeError("gpu_textures() needs the GPU backend; this solver runs on the CPU")
        return self._backend.all_textures()

    def state(self) -> dict:
        """A full copy of the dynamic state, the clocks and the pending inputs (for checks)."""
        snapshot = {name: self._backend.read(name)
                    for name in ("chain_state", "segment_state", "joint_output", "segment_output")}
        clock = self._clock.snapshot()
        snapshot.update(clock=clock[:3], half_clock=clock[3:], lod=self._lod.copy(), teleport=self._teleport.copy(),
                        rig=tuple(r.copy() for r in self._rig_records(self._chain_set)))
        snapshot.update(self._inputs_snapshot())
        return snapshot

    def __getattr__(self, name):
        # Only reached for names the solver lacks: say when it is the other kind's method.
        for other in Solver._KINDS.values():
            if other is not type(self) and callable(getattr(other, name, None)) and not name.startswith("_"):
                raise AttributeError(f"{name} is for {other.KIND} chains ({other.__name__}); this "
                                     f"{type(self).__name__} runs {self.KIND} chains")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _read(self, name, field=None):
        """The records ``name`` from the backend, or their ``field`` alone."""
        if not self._advanced:
            raise RuntimeError("nothing to read before the first advance()")
        return self._backend.read(name) if field is None else self._backend.read_field(name, field)

    def __repr__(self):
        return f"{type(self).__name__}({self._chain_set!r}, backend={self.backend!r}, substep={self.substep!r})"

    # -- what each kind provides ------------------------------------------------------------
    def _rig_records(self, chain_set) -> tuple:
        """(chain_rig, segment_rig) records of ``chain_set``."""
        raise NotImplementedError

    def _has_pose(self) -> bool:
        raise NotImplementedError

    def _upload_inputs(self, levels) -> None:
        """Upload this frame's targets (with the teleport flags and ``levels``, (C,) uint32, the
        levels of detail this frame runs)."""
        raise NotImplementedError

    def _frame_buffer(self, plan) -> np.ndarray:
        """The frame buffer (uint8) for a :class:`~gpu_jiggle.sim.clock.FramePlan`."""
        raise NotImplementedError

    def _after_frame(self, plan) -> None:
        """Host-side bookkeeping once the frame has run."""

    def _parameters_changed(self, new, changes) -> None:
        """Upload the rig of the validated chain set ``new``."""
        self._upload_rig(new)

    def _kind_options(self) -> int:
        """The OPTION_* bits of the kind's own options (set before Solver.__init__ runs)."""
        return 0

    def _prepare_kernel(self) -> None:
        """Have the backend compile, here at set-up, the kernel variants the next frames run
        (their switches follow the options, the wind, the rig and, for point chains, the
        colliders), so that ``advance`` does not stop to compile."""
        self._backend.prepare(self._switch_header())

    def _switch_header(self) -> np.ndarray:
        """A frame buffer header, (), with what the kernel's switches follow: the options, the
        wind and, as the full rate's substep count, the most substeps a frame runs."""
        header = np.zeros((), self.FRAME_PARAMS)
        header["options"] = self._options
        header["wind"], header["gust"], header["gust_direction"] = self._wind.records()
        header["full_rate"]["substep_count"] = self.max_substeps
        return header

    def _upload_rig(self, chain_set) -> None:
        """Upload the kind's rig records of ``chain_set`` and the exact integrator's steps
        (one placeholder record with the semi-implicit step)."""
        if self.integrator == "exact":
            steps = exact_step_records(chain_set, (self.substep, self._clock.half.substep))
        else:
            steps = np.zeros(1, layouts.EXACT_STEP)
        self._backend.upload_rig(*self._rig_records(chain_set), steps)

    def _inputs_snapshot(self) -> dict:
        """Copies of the pending per-frame inputs, for :meth:`state`."""
        raise NotImplementedError

    def _inputs_arrays(self) -> dict:
        """The per-frame inputs as numpy arrays, for :meth:`save_state`."""
        raise NotImplementedError

    def _restore_inputs(self, arrays) -> "callable":
        """Check saved inputs; returns what applies them (nothing changes before)."""
        raise NotImplementedError


def solver_class(chain_set) -> type:
    """The Solver subclass for ``chain_set``'s kind (the one whose ``CHAIN_SET`` it is).

    Raises: TypeError for anything but an AngleChainSet or a PointChainSet."""
    for kind_class in Solver._KINDS.values():
        if isinstance(chain_set, kind_class.CHAIN_SET):
            return kind_class
    raise TypeError(f"chain_set: expected an AngleChainSet or a PointChainSet, got {type(chain_set).__name__}")

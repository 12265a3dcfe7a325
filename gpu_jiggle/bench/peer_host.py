"""The host side of the benchmark's peers (:mod:`.peers`), shared by the numba and Warp
engines: the kernels' arrays in their order, the fixed-step clock of SPEC 2 as a user would
write it (:func:`frame_plan`), the wind's terms, and the drivers :class:`AnglePeer` and
:class:`PointPeer` (the case dict read, the first pose's snap, the per-frame uploads and the
read-back). An engine (``NumbaEngine``, ``WarpEngine``) holds the arrays by name (``load``,
``read``) and runs its kind's kernel on them with the frame's scalars (``run``).

The point arrays (:data:`POINT_ARRAYS`, float32): the rig; this frame's colliders
(``sphere_centre`` (K, 3), ``sphere_radius`` (K,), ``capsule_a``, ``capsule_b`` (M, 3),
``capsule_radius`` (M,)) and joint targets (``joint_target`` (J, 3), each tip as its offset
from its pivot); the colliders' paths: where they were at the last substep and their path
velocity there (``sphere_last``, ``sphere_rate`` (K, 3), ``sphere_radius_last`` (K,), the same
per capsule end), length units and length/s; the chains' state; the carried turn-axis codes
``bend_code``, ``swing_code``, ``world_code`` (S, 2) (SPEC 9, "Swings": octahedral, its first
component plus 2; (0, 0): none carried); the output: ``joint_output`` (J, 3), ``swing`` and
``world_rotation`` (S, 4).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..sim.spring import coefficients

F = np.float32
STEP_TOLERANCE = 1e-9  # n = floor(span/h + 1e-9), SPEC 2

#: The kernels' array arguments, in their order (rig, pose, state, output); the frame's
#: scalars follow them (:meth:`_Peer.frame_scalars`).
ANGLE_ARRAYS = ("length", "stiffness", "damping", "air_drag", "inertia", "gravity",
                "root_position", "root_angle", "local_angle",
                "root_last", "root_rate", "heading_last", "heading_rate", "root_prev", "root_velocity_prev",
                "angle", "angular_velocity", "angular_velocity_before", "target_angle", "local_last",
                "local_rate",
                "joint_output")
POINT_ARRAYS = ("rest_length", "stiffness", "damping", "air_drag", "particle_radius", "max_distance", "angle_limit",
                "gravity",
                "sphere_centre", "sphere_radius", "capsule_a", "capsule_b", "capsule_radius",
                "joint_target",
                "sphere_last", "sphere_rate", "sphere_radius_last", "capsule_a_last", "capsule_b_last",
                "capsule_a_rate", "capsule_b_rate", "capsule_radius_last",
                "joint_last", "joint_rate", "pivot_rate_before", "pivot", "pivot_before", "position", "velocity",
                "position_before", "velocity_before", "target", "bend_code", "swing_code", "world_code",
                "joint_output", "swing", "world_rotation")
#: The point arrays of this frame's colliders (``PointPeer.set_colliders``).
COLLIDER_ARRAYS = ("sphere_centre", "sphere_radius", "capsule_a", "capsule_b", "capsule_radius")


@dataclass(frozen=True)
class FramePlan:
    """One ``advance`` (SPEC 2): ``alphas`` (max(n, 1),) float32 (the first n used), the
    span, 1/span, 1/path step (1/s), σ and the accumulator left (s)."""

    substep_count: int
    alphas: np.ndarray
    span: float
    inv_span: float
    inv_path_step: float
    blend: float
    accumulator: float


def frame_plan(accumulator: float, frame_dt: float, substep: float, max_substeps: int) -> FramePlan:
    """The fixed-step accumulator of SPEC 2: ``n = floor(span/h + 1e-9)`` substeps at
    ``α_j = min(j·h/span, 1)``; past the cap, cap substeps at ``α_j = j/cap`` standing for
    span/cap seconds of path each, the rest dropped."""
    if not (math.isfinite(frame_dt) and frame_dt >= 0):
        raise ValueError(f"frame_dt = {frame_dt!r}: expected a finite value >= 0")
    h, span = substep, accumulator + frame_dt
    n = math.floor(span / h + STEP_TOLERANCE)
    if n > max_substeps:
        n, alphas = max_substeps, np.arange(1, max_substeps + 1) / max_substeps
        acc, blend, path_step = 0.0, 0.0, span / max_substeps
    else:
        alphas = np.minimum(np.arange(1, n + 1) * h / span, 1.0) if n else np.zeros(1)
        acc = max(span - n * h, 0.0)
        blend, path_step = min(acc / h, 1.0), h
    return FramePlan(n, alphas.astype(F), span, 1.0 / span if span > 0 else 0.0, 1.0 / path_step, blend, acc)


def wrap64(a):
    """``wrap(a)`` of SPEC 0 in float64 (on the host, before rounding to float32)."""
    a = np.asarray(a, np.float64)
    return a - 2.0 * np.pi * np.floor((a + np.pi) / (2.0 * np.pi))


def _array(name, value, shape, dtype=F):
    """``value`` broadcast to ``shape`` as a contiguous array of ``dtype``."""
    a = np.asarray(value, np.float64)
    if a.ndim == 1 and len(shape) == 1 and a.size not in (1, shape[0]):
        raise ValueError(f"{name}: expected shape {shape}, got {a.shape}")
    if a.ndim == 1 and len(shape) == 2 and a.size == shape[0] and shape[1] != a.size:
        a = a[:, None]
    try:
        return np.ascontiguousarray(np.broadcast_to(a, shape), dtype)
    except ValueError:
        raise ValueError(f"{name}: expected shape {shape}, got {a.shape}") from None


class _Peer:
    """The host side both kinds share: the case, the clock, the first pose's snap."""

    DIM = 0
    ARRAYS: tuple = ()

    def __init__(self, engine, case):
        if case.get("kind", self.kind) != self.kind:
            raise ValueError(f"a {case['kind']} case given to a {self.kind} peer")
        self.engine = engine
        self.library = engine.library
        self.name = engine.name
        self.chain_count = C = int(case["chain_count"])
        self.segments_per_chain = n = int(case["segments_per_chain"])
        self.segment_count = S = C * n
        self.joint_count = S + C
        self.first_joint = np.arange(C) * (n + 1)
        self.tip_joint = np.delete(np.arange(S + C), self.first_joint)
        self.substep = float(case.get("substep", 1.0 / 120.0))
        self.max_substeps = int(case.get("max_substeps", 8))
        k, c = coefficients(_array("frequency", case["frequency"], (S,), np.float64),
                            _array("damping_ratio", case["damping_ratio"], (S,), np.float64))
        self.rig = {"stiffness": k, "damping": c, "air_drag": _array("air_drag", case.get("air_drag", 0.0), (S,)),
                    "gravity": _array("gravity", case.get("gravity", np.zeros(self.DIM)), (C, self.DIM))}
        self.wind = wind_terms(case.get("wind"), self.DIM)
        self.accumulator = 0.0
        self.sim_time = 0.0
        self._pose = None
        self._started = False

    def advance(self, frame_dt) -> int:
        """One frame of ``frame_dt`` seconds: the first one snaps onto the first pose (SPEC 5);
        returns the substeps run. Raises RuntimeError before the first pose."""
        if self._pose is None:
            raise RuntimeError("advance() before set_pose()")
        plan = frame_plan(self.accumulator, float(frame_dt), self.substep, self.max_substeps)
        if not self._started:
            self.engine.load(self.ARRAYS, self._snap())
            self._started = True
        self.engine.run(self.frame_scalars(plan))
        self.accumulator = plan.accumulator
        self.sim_time += plan.substep_count * self.substep
        return plan.substep_count

    def synchronize(self) -> None:
        """Wait until the device has finished the frames launched."""
        self.engine.synchronize()

    def frame_scalars(self, plan) -> tuple:
        """The kernels' scalars after the arrays: alphas, substep count, segments per chain, h,
        span, 1/span, 1/path step, σ; then the wind: w0 (dim,), A, u (dim,), κ (dim,), 2π·f_w
        (rad/s) and the gust's phase at the frame's first substep, -2π·f_w·t mod 2π (rad)."""
        w0, amplitude, direction, wave_vector, angular_frequency = self.wind
        phase = F((-angular_frequency * self.sim_time) % (2.0 * math.pi))
        return (plan.alphas, plan.substep_count, self.segments_per_chain, F(self.substep), F(plan.span),
                F(plan.inv_span), F(plan.inv_path_step), F(plan.blend),
                w0, F(amplitude), direction, wave_vector, F(angular_frequency), phase)

    def positions(self, raw: bool = False) -> np.ndarray:
        """(J, dim) float64 world joints, per chain its pivot, then its tips: at frame time
        (SPEC 2), or ``raw`` the last substep's. Raises RuntimeError before the first advance."""
        if not self._started:
            raise RuntimeError("positions() before the first advance()")
        self.engine.synchronize()
        return self._raw() if raw else self.engine.read("joint_output").astype(np.float64)


class AnglePeer(_Peer):
    """Angle chains (SPEC 3) on a numba or Warp engine."""

    kind = "angle"
    DIM = 2
    ARRAYS = ANGLE_ARRAYS

    def __init__(self, engine, case):
        super().__init__(engine, case)
        S = self.segment_count
        self.rig.update(length=_array("lengths", case["lengths"], (S,)),
                        inertia=_array("inertia", case.get("inertia", 1.0), (S,)))

    def set_pose(self, root_position, root_angle, local_angle) -> None:
        """Roots (C, 2) world, headings (C,) rad, local target angles (S,) rad (SPEC 3)."""
        C, S = self.chain_count, self.segment_count
        self._pose = {"root_position": _array("root_position", root_position, (C, 2)),
                      "root_angle": wrap64(_array("root_angle", root_angle, (C,), np.float64)).astype(F),
                      "local_angle": wrap64(_array("local_angle", local_angle, (S,), np.float64)).astype(F)}
        if self._started:
            self.engine.load(("root_position", "root_angle", "local_angle"), self._pose)

    def _snap(self) -> dict:
        """Rig, pose and the state at rest on the first pose (SPEC 5)."""
        C, n = self.chain_count, self.segments_per_chain
        pose = self._pose
        wrap = lambda a: a - F(2 * np.pi) * np.floor((a + F(np.pi)) * F(1 / (2 * np.pi)))  # noqa: E731
        phi = np.empty((C, n), F)
        parent = pose["root_angle"]
        for i, local in enumerate(pose["local_angle"].reshape(C, n).T):
            phi[:, i] = parent = wrap(parent + local)
        phi = phi.ravel()
        zero_c, zero_s = np.zeros((C, 2), F), np.zeros(C * n, F)
        return {**self.rig, **pose, "root_last": pose["root_position"].copy(), "root_rate": zero_c,
                "heading_last": pose["root_angle"].copy(), "heading_rate": np.zeros(C, F),
                "root_prev": pose["root_position"].copy(), "root_velocity_prev": zero_c.copy(),
                "angle": phi, "angular_velocity": zero_s, "angular_velocity_before": zero_s.copy(),
                "target_angle": phi.copy(),
                "local_last": pose["local_angle"].copy(), "local_rate": zero_s.copy(),
                "joint_output": np.zeros((self.joint_count, 2), F)}

    def _raw(self):
        """The last substep's chain from its interpolated root P_prev (SPEC 3 step 3)."""
        C, n = self.chain_count, self.segments_per_chain
        phi = self.engine.read("angle").astype(np.float64).reshape(C, n)
        steps = self.rig["length"].reshape(C, n)[..., None] * np.stack([np.cos(phi), np.sin(phi)], -1)
        root = self.engine.read("root_prev").astype(np.float64)
        return np.concatenate([root[:, None], root[:, None] + np.cumsum(steps, 1)], 1).reshape(-1, 2)


class PointPeer(_Peer):
    """Point chains (SPEC 4) on a numba or Warp engine."""

    kind = "point"
    DIM = 3
    ARRAYS = POINT_ARRAYS

    def __init__(self, engine, case):
        super().__init__(engine, case)
        S = self.segment_count
        rest = case.get("rest_lengths")
        self.rig["rest_length"] = None if rest is None else _array("rest_lengths", rest, (S,))
        self.rig["particle_radius"] = _array("particle_radius", case.get("particle_radius", 0.0), (S,))
        self.rig["max_distance"] = _array("max_distance", case.get("max_distance", np.inf), (S,))
        cone = _array("angle_limit", case.get("angle_limit", np.inf), (S,), np.float64)
        self.rig["angle_limit"] = np.where(cone < np.pi, cone, np.inf).astype(F)  # π or more: none
        self.collider_counts = None
        self.set_colliders(case.get("spheres"), case.get("capsules"))

    def set_colliders(self, spheres=None, capsules=None) -> None:
        """This frame's colliders, world space (SPEC 4.2): spheres (K, 4) centre and radius,
        capsules (M, 7) end a, end b and radius; None for none. After the first frame they move
        there from where they were at the last substep along the monotone path, as the solver's
        (SPEC 2, 9); the counts stay those of the case. Raises ValueError for a wrong shape or
        a changed count."""
        spheres = np.zeros((0, 4)) if spheres is None else np.asarray(spheres, np.float64).reshape(-1, 4)
        capsules = np.zeros((0, 7)) if capsules is None else np.asarray(capsules, np.float64).reshape(-1, 7)
        counts = (len(spheres), len(capsules))
        if self.collider_counts is not None and counts != self.collider_counts:
            raise ValueError(f"{counts} spheres and capsules: the peer keeps the case's {self.collider_counts}")
        self.collider_counts = counts
        colliders = {"sphere_centre": spheres[:, :3].astype(F), "sphere_radius": spheres[:, 3].astype(F),
                     "capsule_a": capsules[:, 0:3].astype(F), "capsule_b": capsules[:, 3:6].astype(F),
                     "capsule_radius": capsules[:, 6].astype(F)}
        self.rig.update(colliders)
        if self._started:
            self.engine.load(COLLIDER_ARRAYS, colliders)

    def set_pose(self, joint_positions) -> None:
        """Joint targets (J, 3) world: per chain its pivot, then one per segment tip (SPEC 4).
        The kernels take them as the solver does: each pivot in the world, each tip as its
        offset from its pivot (``joint_target``; the path of each is kept in ``joint_last`` and
        ``joint_rate``), so the monotone path limits each tip's move relative to its pivot."""
        joints = _array("joint_positions", joint_positions, (self.joint_count, 3), np.float64)
        if self.rig["rest_length"] is None:  # from the first pose
            self.rig["rest_length"] = np.linalg.norm(joints[self.tip_joint] - joints[self.tip_joint - 1], axis=1).astype(F)
        target = joints.copy()
        target[self.tip_joint] -= joints[np.repeat(self.first_joint, self.segments_per_chain)]
        self._pose = {"joint_target": target.astype(F)}
        self._joints = joints.astype(F)
        if self._started:
            self.engine.load(("joint_target",), self._pose)

    def _snap(self) -> dict:
        """Rig, pose and the state at rest on the first pose (SPEC 5)."""
        joints = self._joints
        tips, pivots = joints[self.tip_joint], joints[self.first_joint]
        target = self._pose["joint_target"]
        rig, S = self.rig, self.segment_count
        colliders = {"sphere_last": rig["sphere_centre"].copy(), "sphere_rate": np.zeros_like(rig["sphere_centre"]),
                     "sphere_radius_last": rig["sphere_radius"].copy(), "capsule_a_last": rig["capsule_a"].copy(),
                     "capsule_b_last": rig["capsule_b"].copy(), "capsule_a_rate": np.zeros_like(rig["capsule_a"]),
                     "capsule_b_rate": np.zeros_like(rig["capsule_b"]),
                     "capsule_radius_last": rig["capsule_radius"].copy()}  # at rest where they are
        identity = np.tile(np.array([0, 0, 0, 1], F), (S, 1))
        return {**rig, **self._pose, **colliders, "joint_last": target.copy(), "joint_rate": np.zeros_like(target),
                "pivot_rate_before": np.zeros_like(pivots), "pivot": pivots.copy(), "pivot_before": pivots.copy(),
                "position": tips.copy(), "velocity": np.zeros_like(tips), "position_before": tips.copy(),
                "velocity_before": np.zeros_like(tips), "target": tips.copy(), "bend_code": np.zeros((S, 2), F),
                "swing_code": np.zeros((S, 2), F), "world_code": np.zeros((S, 2), F), "joint_output": joints.copy(),
                "swing": identity, "world_rotation": identity.copy()}

    def segment_swings(self) -> np.ndarray:
        """(S, 4) float64 quaternions (x, y, z, w), at frame time: each segment's smallest
        rotation from its animated direction (this frame's pose) onto its output one (SPEC 9,
        "Swings"). Raises RuntimeError before the first advance."""
        return self._read_output("swing")

    def segment_world_rotations(self) -> np.ndarray:
        """(S, 4) float64 quaternions (x, y, z, w), at frame time: each segment's world rotation,
        its target frame (identity joint rotations turned with its parent's output bend) turned
        onto its output direction (SPEC 9, "Joint frames"). Raises RuntimeError before the
        first advance."""
        return self._read_output("world_rotation")

    def _read_output(self, name):
        if not self._started:
            raise RuntimeError(f"{name} before the first advance()")
        self.engine.synchronize()
        return self.engine.read(name).astype(np.float64)

    def _raw(self):
        """The last substep's particles after the pivot on its path (p_prev)."""
        out = np.empty((self.joint_count, 3))
        out[self.first_joint] = self.engine.read("pivot")
        out[self.tip_joint] = self.engine.read("position")
        return out


def wind_terms(wind, dim: int) -> tuple:
    """(w0 (dim,) float32, A, u (dim,) float32, κ (dim,) float32, 2π·f_w) of SPEC 4.1 (its 2D
    form for angle chains, SPEC 3); u = w0/|w0|, or κ/|κ| when w0 = 0."""
    wind = wind or {}
    zero = np.zeros(dim)
    w0 = np.asarray(zero if wind.get("acceleration") is None else wind["acceleration"], np.float64).reshape(dim)
    wave_vector = np.asarray(zero if wind.get("gust_wave_vector") is None else wind["gust_wave_vector"],
                             np.float64).reshape(dim)
    direction = zero
    for v in (w0, wave_vector):
        if np.linalg.norm(v) > 0:
            direction = v / np.linalg.norm(v)
            break
    return (w0.astype(F), float(wind.get("gust_amplitude", 0.0)), direction.astype(F), wave_vector.astype(F),
            2.0 * math.pi * float(wind.get("gust_frequency", 0.0)))

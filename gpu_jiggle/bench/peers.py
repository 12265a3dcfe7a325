"""Peers of the benchmark: the model's angle-chain and point-chain substep (docs/SPEC.md
sections 1-4, v2 defaults) written as a user of numba (``numba.njit(parallel=True)``,
``prange`` over chains) or of NVIDIA Warp (``wp.kernel``, device "cpu", or "cuda" where an
NVIDIA GPU is present) would write it, to be timed beside the project's solver. They are
comparisons, not part of the solver.

Each chain is one thread (a ``prange`` iteration, a Warp thread) that walks it root to tip
through every substep of a frame, in float32 and in world coordinates: no per-chain anchor
(SPEC 3.4, 4.4), so they agree with the solver for chains near the origin only.

What both implement: the fixed-step accumulator with its cap and path step (SPEC 2); the
monotone target path (the v2 default, SPEC 2: the Hermite C1 cubic with its start velocity
limited along and across each frame's move) of roots, headings, local angles, pivots and the
tips' offsets from their pivot (as the solver takes them, SPEC 4); the first pose's
snap onto the targets (SPEC 5); semi-implicit Euler, velocity first, with damping relative to
the target and air drag (SPEC 1, 3, 4); the root's acceleration from the interpolated root
(SPEC 3 step 1); angle wrap (SPEC 0); the wind of SPEC 4.1 (angle chains: its 2D form at each
segment's tip from the last substep, SPEC 3 and 9); and the frame-time output of SPEC 2 and 9
(angle chains: each angle carried σ·h past the last substep at the angular velocity
extrapolated from the last two substeps, 2ω - ω_prev, then laid out from this frame's root;
point chains: each segment direction turned σ·h past the last substep at its angular velocity
extrapolated from the last two substeps, 2Ω - Ω_prev, rebuilt with the rest lengths from this
frame's pivot and taken out of the colliders).

What both also implement, for point chains (every stage the solver runs for the benchmark's
v2, "limits" and "all" cases; the Warp peer's stages are a port of the numba peer's, the same
float32 operations in the same order, its colliders' paths laid out and ended by a kernel of
their own before and after the chains' each frame): spheres and capsules moving from where
they were at the last substep toward each frame's (``PointPeer.set_colliders``) on the
monotone path (SPEC 2, 9); the contact sub-steps a substep takes where a collider moves fast
relative to the chain's pivot (SPEC 9, ``contact_substeps``, at most 256); the particle stage,
behind the broad phase (``contact_possible``): ``sweep_particle`` (SPEC 9, swept contact), then ``collide`` (spheres,
then capsules, twice, then the crevices between overlapping colliders, ``leave_crevice``,
SPEC 4.2); the length step with v += Δx/h less what contact moved without velocity (SPEC 9,
"Push-out velocity"); then ``settle_contact``: ``sweep_segment``, ``keep_outside``
(``slide_out`` and ``segment_out_of_sphere`` per collider, twice, then
``turn_out_of_crevice``) and ``collide`` again (SPEC 4, 9); at frame time the same
``keep_outside`` and ``collide`` on each rebuilt tip (``push_out_of_frame``); the targets turned
with the parent's bend whose half turn near antiparallel leans on the axis carried in state as
a two-float code (``bend_code``, SPEC 4 step 2, SPEC 9 "Swings"); and the rotation outputs:
each segment's swing, the smallest rotation taking its animated direction onto its output one,
and its world rotation, its target frame (identity joint rotations turned with the parent's
output bend) turned onto its output direction, each with its carried axis code
(``swing_code``, ``world_code``; SPEC 9, "Swings", "Joint frames"); the max distance from the
target (SPEC 4 step 2) and the cone angle limit about the target direction (SPEC 9, "Angle
limits"; also at frame time), which the benchmark's "limits" and "all" feature sets use.
What both leave out: hinge and spherical limits (which need animated joint rotations:
``set_pose`` takes joint positions only), the angle chains' angle limits, world influence
(always 1), collider masks and groups, planes, inside colliders (SPEC 4, 9), teleports after
the first pose, level of detail, the exact integrator, the other target paths ("hermite",
"linear") and the v1 options.

The case dict (:func:`case_from_chain_set` builds one from a project chain set and, optionally,
what gives a solver its wind and colliders); values are numpy arrays or numbers, float64 on
the way in, float32 inside:

- both kinds: ``"kind"`` ("angle" | "point", optional), ``"chain_count"`` C,
  ``"segments_per_chain"`` n (every chain; S = C·n segments, J = S + C joints),
  ``"frequency"`` (S,) Hz, ``"damping_ratio"`` (S,) ζ, ``"substep"`` h in s (default
  1/120), ``"max_substeps"`` (default 8). k = (2πf)² in 1/s², c = 2ζ·2πf in 1/s
  (:func:`gpu_jiggle.sim.spring.coefficients`). ``"air_drag"`` (S,) c_air in 1/s (default
  0). ``"gravity"`` (C, dim) or (dim,) length/s², dim = 2 (angle) or 3 (point).
  ``"wind"``: None, or {"acceleration": w0 (dim,) length/s², "gust_amplitude": A length/s²,
  "gust_wave_vector": κ (dim,) rad/length, "gust_frequency": f_w Hz} (SPEC 4.1).
- angle chains: ``"lengths"`` (S,) length units, ``"inertia"`` (S,) μ (default 1).
- point chains: ``"rest_lengths"`` (S,) length units (None: from the first pose),
  ``"max_distance"`` (S,) length units and ``"angle_limit"`` (S,) the cone's half-angle in
  rad (default inf: none; π or more is none),
  ``"particle_radius"`` (S,) length units (default 0), ``"spheres"`` (K, 4) world centre
  and radius, ``"capsules"`` (M, 7) world end a, end b and radius (the first frame's; later
  frames' through ``PointPeer.set_colliders``; default none).
Per-segment and per-chain values may also be given as scalars.

The peer (:func:`make_peer`): ``set_pose(...)`` with the arguments of the project's
``AngleSolver.set_pose(root_position (C, 2), root_angle (C,), local_angle (S,))`` or
``PointSolver.set_pose(joint_positions (J, 3))``; ``advance(frame_dt)`` (seconds; returns
the substeps run); ``positions(raw=False)`` (J, dim) float64 world joints (per chain its
pivot, then its tips; ``raw``: the last substep's state); ``synchronize()``; attributes
``name``, ``library``, ``kind``, ``chain_count``, ``segment_count``. Point peers also:
``set_colliders(spheres (K, 4), capsules (M, 7))`` (this frame's, the case's counts),
``segment_swings()`` and ``segment_world_rotations()`` (S, 4) float64 quaternions (x, y, z, w)
at frame time, as the solver's ``segment_swings()`` and, given joint rotations,
``segment_rotations()``.

The host side both libraries share (the kernels' arrays, the clock, the first pose's snap)
is in :mod:`.peer_host`.
"""
from __future__ import annotations

import numpy as np

from .peer_host import AnglePeer, PointPeer

LIBRARIES = ("numba", "warp")
KINDS = ("angle", "point")


def make_peer(library: str, kind: str, case: dict, device: str | None = None):
    """The ``library`` ("numba" | "warp") peer of ``kind`` ("angle" | "point") chains for
    ``case`` (see the module docstring); ``device``: Warp's ("cpu", "cuda", "cuda:0"; default
    "cuda" when available, else "cpu"); numba runs on the CPU only.

    Raises: ValueError for an unknown library or kind, a case of the other kind or a bad
    shape; :class:`gpu_jiggle.extras.MissingExtra` when the library is not installed.
    """
    if kind not in KINDS:
        raise ValueError(f"kind = {kind!r}: expected one of {KINDS}")
    if library == "numba":
        from .peer_numba import NumbaEngine as engine
    elif library == "warp":
        from .peer_warp import WarpEngine as engine
    else:
        raise ValueError(f"library = {library!r}: expected one of {LIBRARIES}")
    return (AnglePeer if kind == "angle" else PointPeer)(engine(kind, device), case)


def case_from_chain_set(chain_set, inputs=None, substep: float = 1.0 / 120.0, max_substeps: int = 8,
                        wind=None, spheres=None, capsules=None) -> dict:
    """A case dict from a project ``AngleChainSet`` or ``PointChainSet`` of equal chains.

    Args:
        inputs: None, or what gives a solver its wind and colliders: an object with a
            ``prepare(solver)`` method or a callable taking the solver; its ``set_wind`` and
            ``set_colliders`` calls (spheres and capsules only) are recorded into the case.
        wind, spheres, capsules: as in the case dict (or wind as ``set_wind``'s four
            arguments), when not given through ``inputs``.

    Raises: ValueError for unequal chains or a feature both peers leave out.
    """
    counts = np.asarray(chain_set.segment_counts)
    if counts.size == 0 or np.any(counts != counts[0]):
        raise ValueError("the peers take chains of equal segment counts")
    if chain_set.kind == "angle":
        unused = {"angle_limit": np.any(np.isfinite(chain_set.angle_limit))}
    else:
        unused = {"world_influence": np.any(chain_set.world_influence != 1),
                  "hinge_or_spherical_limit": np.any(chain_set.needs_rotations)}
    for name, used in unused.items():
        if used:
            raise ValueError(f"the peers do not implement {name}")
    recorded = _SolverInputs(wind, spheres, capsules)
    if inputs is not None:
        (inputs.prepare if hasattr(inputs, "prepare") else inputs)(recorded)
    case = {"kind": chain_set.kind, "chain_count": chain_set.chain_count, "segments_per_chain": int(counts[0]),
            "frequency": np.array(chain_set.frequency), "damping_ratio": np.array(chain_set.damping_ratio),
            "air_drag": np.array(chain_set.air_drag), "gravity": np.array(chain_set.gravity),
            "substep": float(substep), "max_substeps": int(max_substeps), "wind": recorded.wind}
    if chain_set.kind == "angle":
        if len(recorded.spheres) or len(recorded.capsules):
            raise ValueError("angle chains have no colliders")
        case.update(lengths=np.array(chain_set.lengths), inertia=np.array(chain_set.inertia))
    else:
        case.update(rest_lengths=None if chain_set.rest_lengths is None else np.array(chain_set.rest_lengths),
                    particle_radius=np.array(chain_set.particle_radius), spheres=recorded.spheres,
                    capsules=recorded.capsules, max_distance=np.array(chain_set.max_distance),
                    angle_limit=np.array(chain_set.angle_limit))
    return case


class _SolverInputs:
    """Stands in for a solver to record ``set_wind`` and ``set_colliders`` calls."""

    def __init__(self, wind=None, spheres=None, capsules=None):
        if wind is not None and not isinstance(wind, dict):
            wind = dict(zip(("acceleration", "gust_amplitude", "gust_wave_vector", "gust_frequency"), wind))
        self.wind = wind
        self.set_colliders(spheres, capsules=capsules)

    def set_wind(self, acceleration=None, gust_amplitude=0.0, gust_wave_vector=None, gust_frequency=0.0):
        self.wind = {"acceleration": acceleration, "gust_amplitude": gust_amplitude,
                     "gust_wave_vector": gust_wave_vector, "gust_frequency": gust_frequency}

    def set_colliders(self, spheres=None, sphere_groups=None, capsules=None, capsule_groups=None, planes=None,
                      plane_groups=None, snap=False, sphere_inside=None, capsule_inside=None):
        if any(a is not None and np.any(np.asarray(a) != 0) for a in (planes, sphere_inside, capsule_inside)):
            raise ValueError("the peers do not implement planes or inside colliders")
        self.spheres = np.zeros((0, 4)) if spheres is None else np.array(spheres, np.float64).reshape(-1, 4)
        self.capsules = np.zeros((0, 7)) if capsules is None else np.array(capsules, np.float64).reshape(-1, 7)

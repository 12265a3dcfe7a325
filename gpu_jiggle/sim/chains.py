"""Chain sets: the static rig (topology, lengths, spring parameters).

A chain set is immutable; :meth:`AngleChainSet.replace` validates a change and returns a new
one, so a refused change leaves the old set untouched. Arrays are flat and chain-ordered
("CSR", SPEC section 0): C chains, ``segment_counts`` (C,), S = its sum; chain c's segments
are contiguous, root first.
"""
from __future__ import annotations

import numpy as np

from . import footprint, validation


class _ChainTopology:
    """The CSR layout shared by both chain kinds: C chains, S segments, J = S + C joints
    (each chain's pivot, then one joint per segment tip)."""

    PARAMETERS: tuple = ()
    #: The parameters given per chain (the others are per segment).
    PER_CHAIN: tuple = ()

    def _set_topology(self, segment_counts):
        if hasattr(segment_counts, "__len__"):  # every chain has a segment: refused before any copy
            footprint.check_fits(self.kind, len(segment_counts), len(segment_counts))
        counts = validation.count_array("segment_counts", segment_counts)
        footprint.check_fits(self.kind, counts.size, int(counts.sum()))
        self.segment_counts = counts
        self.chain_count = int(counts.size)
        self.segment_count = int(counts.sum())
        self.joint_count = self.segment_count + self.chain_count
        self.first_segment = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64) if counts.size \
            else np.zeros(0, np.int64)
        self.first_joint = self.first_segment + np.arange(self.chain_count)
        for a in (self.segment_counts, self.first_segment, self.first_joint):
            a.flags.writeable = False
        return counts

    def _replaced(self, changes, extra=()):
        """A copy with the named parameters changed and validated by ``_set_parameters``."""
        known = self.PARAMETERS + tuple(extra)
        unknown = sorted(set(changes) - set(known))
        if unknown:
            close = validation.closest_name(unknown[0], known)
            raise TypeError(f"unknown parameter {unknown[0]!r}; {f'did you mean {close!r}? ' if close else ''}"
                            f"expected one of {', '.join(known)}")
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._set_parameters(**{name: changes.get(name, getattr(self, name)) for name in self.PARAMETERS})
        return new

    def locate(self, argument: str, index: int) -> tuple:
        """``(chain, local)``: the chain that entry ``index`` of a flat parameter array
        (``argument`` names it, as in an :class:`~gpu_jiggle.sim.validation.InputError`) belongs
        to, and the entry's index within that chain: its segment for per-segment values, its
        axis for ``gravity`` ((C, dim) flattened), None for other per-chain values."""
        if argument == "gravity":
            return divmod(int(index), self.gravity.shape[1])
        if argument in self.PER_CHAIN:
            return int(index), None
        index = int(index) // ROW_PARAMETERS.get(argument, 1)  # rows ((S, k) flattened): their segment
        chain = int(np.searchsorted(self.first_segment, index, side="right") - 1)
        return chain, int(index) - int(self.first_segment[chain])

    def chain_slices(self):
        """A list of ``slice`` objects, one per chain, into the flat (S,) per-segment arrays."""
        return [slice(int(f), int(f + n)) for f, n in zip(self.first_segment, self.segment_counts)]

    def joint_slices(self):
        """A list of ``slice`` objects, one per chain, into the (J,) = (S + C,) joint arrays
        that :meth:`Solver.positions` returns (each chain's pivot, then its tips)."""
        return [slice(int(f), int(f + n + 1)) for f, n in zip(self.first_joint, self.segment_counts)]

    @classmethod
    def concatenate(cls, chain_sets):
        """One chain set of every chain of ``chain_sets`` (a non-empty sequence of this kind's
        sets), in order: many characters' chains for one solver and one dispatch. Per-segment
        and per-chain parameters are joined; rest lengths are kept when every set gives them.

        Raises:
            ValueError: an empty sequence, or a set of another kind.
        """
        chain_sets = list(chain_sets)
        if not chain_sets:
            raise ValueError("chain_sets: expected at least one chain set, got none")
        for k, s in enumerate(chain_sets):
            if type(s) is not cls:
                raise ValueError(f"chain_sets[{k}]: expected a {cls.__name__}, got {type(s).__name__}")
        joined = {name: np.concatenate([getattr(s, name) for s in chain_sets]) for name in cls.PARAMETERS}
        counts = np.concatenate([s.segment_counts for s in chain_sets])
        extra = cls._joined_extra(chain_sets)
        return cls(counts, **extra, **joined)

    @staticmethod
    def _joined_extra(chain_sets) -> dict:
        return {}

    def __repr__(self):
        return f"{type(self).__name__}(chains={self.chain_count}, segments={self.segment_count})"


class AngleChainSet(_ChainTopology):
    """2D chains with one rotational degree of freedom per segment (SPEC section 3).

    Per-segment arguments accept a scalar, a per-chain array (C,) or a per-segment array (S,).

    Args:
        segment_counts: (C,) integers ≥ 1, segments per chain. An empty sequence makes an
            empty set (nothing to simulate, read-backs are empty).
        lengths: segment lengths L, > 0, in the caller's unit.
        frequency: f in Hz, > 0.
        damping_ratio: ζ, ≥ 0 (1 is critical).
        inertia: μ ≥ 0, how strongly the root's acceleration swings the chain (default 1).
        angle_limit: β in radians, > 0, the largest deviation from the target angle
            (default ∞: no limit).
        air_drag: c_air ≥ 0 in 1/s, damping of the segment's motion in the world (the
            spring's damping acts on motion relative to the target; default 0).
        gravity: g, acceleration in length/s², world: (2,) for every chain or (C, 2) one per
            chain (default (0, 0)).
        max_root_acceleration: a_max ≥ 0 in length/s², per chain (a scalar or (C,)): the
            largest acceleration of the chain's root that its segments must stay stable under.
            The inertia term μ·A of SPEC 3 turns a segment of length L like a spring of
            stiffness μ·|A|/L, so the :class:`Solver` refuses a segment too short for it (SPEC
            1, "Stability"). Default 0: none declared; the solver still warns on a frame
            whose root accelerates past what a chain stays stable under.

    Raises:
        ValueError: a bad value or shape, naming the argument, index and value (SPEC section 7).
        TypeError: non-numeric input.

    The stability of f and ζ depends on the substep and is checked by the :class:`Solver`.
    """

    kind = "angle"
    PARAMETERS = ("frequency", "damping_ratio", "inertia", "angle_limit", "gravity", "air_drag",
                  "max_root_acceleration")
    PER_CHAIN = ("gravity", "max_root_acceleration")

    def __init__(self, segment_counts, lengths, frequency, damping_ratio, inertia=1.0,
                 angle_limit=np.inf, gravity=(0.0, 0.0), air_drag=0.0, max_root_acceleration=0.0):
        counts = self._set_topology(segment_counts)
        self.chain_of_segment = np.repeat(np.arange(self.chain_count), counts)
        self.depth = np.arange(self.segment_count) - np.repeat(self.first_segment, counts)
        self.lengths = _per_segment_checked("lengths", lengths, counts, lambda a: a > 0, "a finite value > 0",
                                            validation.COORDINATE_LIMIT)
        self._set_parameters(frequency, damping_ratio, inertia, angle_limit, gravity, air_drag,
                             max_root_acceleration)
        for a in (self.chain_of_segment, self.depth, self.lengths):
            a.flags.writeable = False

    def _set_parameters(self, frequency, damping_ratio, inertia, angle_limit, gravity, air_drag,
                        max_root_acceleration=0.0):
        counts = self.segment_counts
        self.frequency = _per_segment_checked("frequency", frequency, counts, lambda a: a > 0,
                                              "a finite value > 0 (Hz)")
        self.damping_ratio = _per_segment_checked("damping_ratio", damping_ratio, counts, lambda a: a >= 0,
                                                  "a finite value >= 0")
        self.inertia = _per_segment_checked("inertia", inertia, counts, lambda a: a >= 0, "a finite value >= 0")
        self.angle_limit = _per_segment_checked("angle_limit", angle_limit, counts, lambda a: ~np.isnan(a) & (a > 0),
                                                "a value > 0 (radians; inf for none)", limit=None)
        self.gravity = _per_chain_vector("gravity", gravity, self.chain_count, 2)
        self.air_drag = _per_segment_checked("air_drag", air_drag, counts, lambda a: a >= 0, "a finite value >= 0 (1/s)")
        self.max_root_acceleration = _per_chain_checked(
            "max_root_acceleration", max_root_acceleration, self.chain_count,
            lambda a: (a >= 0) & (a <= validation.FLOAT32_MAX), "a finite value >= 0 (length/s²)")
        for a in (self.frequency, self.damping_ratio, self.inertia, self.angle_limit, self.gravity, self.air_drag,
                  self.max_root_acceleration):
            a.flags.writeable = False

    @staticmethod
    def _joined_extra(chain_sets) -> dict:
        return {"lengths": np.concatenate([s.lengths for s in chain_sets])}

    def replace(self, **changes) -> "AngleChainSet":
        """A copy with some of ``frequency, damping_ratio, inertia, angle_limit, gravity, air_drag,
        max_root_acceleration`` changed.

        Raises ``TypeError`` for an unknown name, and what the constructor raises for a bad value.
        """
        return self._replaced(changes)


class PointChainSet(_ChainTopology):
    """3D chains of particles, one per segment tip, pulled toward the animated joints
    (SPEC section 4).

    Per-segment arguments accept a scalar, a per-chain array (C,) or a per-segment array
    (S,); per-chain arguments a scalar or (C,).

    Args:
        segment_counts: (C,) integers ≥ 1. Chain c has J_c = segment_counts[c] + 1 joints:
            its pivot, then one per segment tip; J = S + C joints in all.
        frequency: f in Hz, > 0, per segment.
        damping_ratio: ζ ≥ 0, per segment.
        rest_lengths: segment lengths L > 0 in the caller's unit, per segment; ``None``
            takes them from the first pose the solver receives.
        particle_radius: ρ ≥ 0 per segment, added to collider radii.
        max_distance: D > 0 per segment, how far a particle may leave its target
            (default ∞).
        world_influence: w in [0, 1] per chain: the fraction of its pivot's motion the chain
            feels (SPEC 4): 1 leaves it behind in the world when its pivot moves (full
            inertia), 0 carries it along rigidly, 0.2 moves it as 1 would under a fifth of
            the motion (air drag, wind and colliders act in the world and feel all of it).
        collider_mask: per chain, a 32-bit integer: bit g set = collides with group g.
        air_drag: c_air ≥ 0 per segment, 1/s: damping of the particle's motion in the world
            (the spring's damping acts on motion relative to the target; default 0).
        gravity: g, acceleration in length/s², world: (3,) for every chain or (C, 3) one per
            chain (default (0, 0, 0)).
        angle_limit: β ≥ 0 per segment, radians: a cone about the segment's target direction
            (its animated direction turned with its parent's simulated bend) that the segment
            stays inside (docs/SPEC.md section 9, "Angle limits"); 0 holds it on the target
            direction, π or more (and the default, inf) is no limit.
        hinge_limit: (2,) for every segment, (C, 2) per chain or (S, 2) per segment: the least
            and greatest angle (rad, -π ≤ lo ≤ hi ≤ π) the segment may turn about its
            ``limit_axis``, kept in the plane through its target direction across the axis;
            (-inf, inf), the default, is no hinge.
        spherical_limit: (2,), (C, 2) or (S, 2): the pitch and yaw limits (rad, in [0, π]) of
            an elliptical cone about the target direction, pitch about ``limit_axis``, yaw
            about the axis across it and the target direction; (inf, inf), the default, is none.
        limit_axis: (3,), (C, 3) or (S, 3), non-zero: the hinge axis and the spherical limit's
            pitch axis in the frame of the joint at the segment's base (default (1, 0, 0), as
            VRMC_springBone_limit); stored unit. Hinge and spherical limits need the joints'
            rotations in every pose (``set_pose(..., joint_rotations=...)``). A segment has at
            most one limit.

    Raises:
        ValueError: a bad value or shape, naming the argument, index and value (SPEC section 7).
        TypeError: non-numeric input.
    """

    kind = "point"
    PARAMETERS = ("frequency", "damping_ratio", "particle_radius", "max_distance", "world_influence",
                  "collider_mask", "gravity", "air_drag", "angle_limit", "hinge_limit", "spherical_limit",
                  "limit_axis")
    PER_CHAIN = ("world_influence", "collider_mask", "gravity")

    def __init__(self, segment_counts, frequency, damping_ratio, rest_lengths=None, particle_radius=0.0,
                 max_distance=np.inf, world_influence=1.0, collider_mask=0xFFFFFFFF, gravity=(0.0, 0.0, 0.0),
                 air_drag=0.0, angle_limit=np.inf, hinge_limit=(-np.inf, np.inf), spherical_limit=(np.inf, np.inf),
                 limit_axis=(1.0, 0.0, 0.0)):
        counts = self._set_topology(segment_counts)
        self.rest_lengths = None if rest_lengths is None else _per_segment_checked(
            "rest_lengths", rest_lengths, counts, lambda a: a > 0, "a finite value > 0", validation.COORDINATE_LIMIT)
        self._set_parameters(frequency, damping_ratio, particle_radius, max_distance, world_influence,
                             collider_mask, gravity, air_drag, angle_limit, hinge_limit, spherical_limit, limit_axis)

    def _set_parameters(self, frequency, damping_ratio, particle_radius, max_distance, world_influence,
                        collider_mask, gravity, air_drag, angle_limit, hinge_limit, spherical_limit, limit_axis):
        counts = self.segment_counts
        self.frequency = _per_segment_checked("frequency", frequency, counts, lambda a: a > 0,
                                              "a finite value > 0 (Hz)")
        self.damping_ratio = _per_segment_checked("damping_ratio", damping_ratio, counts, lambda a: a >= 0,
                                                  "a finite value >= 0")
        self.particle_radius = _per_segment_checked("particle_radius", particle_radius, counts, lambda a: a >= 0,
                                                    "a finite value >= 0")
        self.max_distance = _per_segment_checked("max_distance", max_distance, counts,
                                                 lambda a: ~np.isnan(a) & (a > 0), "a value > 0 (inf for none)",
                                                 limit=None)
        self.world_influence = _per_chain_checked("world_influence", world_influence, self.chain_count,
                                                  lambda a: (a >= 0) & (a <= 1), "a value in [0, 1]")
        self.collider_mask = validation.mask_array("collider_mask", collider_mask, self.chain_count)
        self.gravity = _per_chain_vector("gravity", gravity, self.chain_count, 3)
        self.air_drag = _per_segment_checked("air_drag", air_drag, counts, lambda a: a >= 0, "a finite value >= 0 (1/s)")
        self.angle_limit = _per_segment_checked("angle_limit", angle_limit, counts, lambda a: ~np.isnan(a) & (a >= 0),
                                                "a value >= 0 in radians (inf for none)", limit=None)
        self.hinge_limit, self.spherical_limit, self.limit_axis = _limits(
            self.angle_limit, hinge_limit, spherical_limit, limit_axis, counts)
        for a in (self.frequency, self.damping_ratio, self.particle_radius, self.max_distance,
                  self.world_influence, self.collider_mask, self.gravity, self.air_drag, self.angle_limit,
                  self.hinge_limit, self.spherical_limit, self.limit_axis):
            a.flags.writeable = False
        self._needs_rotations = np.isfinite(self.hinge_limit[:, 0]) | (
            np.isfinite(self.spherical_limit[:, 0]) & ~(self.spherical_limit >= np.pi).all(axis=1))
        self._needs_rotations.flags.writeable = False
        self._requires_rotations = bool(self._needs_rotations.any())  # set_pose asks every frame

    @property
    def needs_rotations(self) -> np.ndarray:
        """(S,) bool, read-only: the segments whose limit (hinge or spherical) is measured in
        their joint's frame, so that every pose must give the joints' rotations."""
        return self._needs_rotations

    @property
    def requires_rotations(self) -> bool:
        """Whether any segment :attr:`needs_rotations`: every pose must then give them."""
        return self._requires_rotations

    @staticmethod
    def _joined_extra(chain_sets) -> dict:
        lengths = [s.rest_lengths for s in chain_sets]
        return {"rest_lengths": np.concatenate(lengths)} if all(x is not None for x in lengths) else {}

    def replace(self, **changes) -> "PointChainSet":
        """A copy with some of the :attr:`PARAMETERS` (and ``rest_lengths``) changed.

        Raises ``TypeError`` for an unknown name, and what the constructor raises for a bad value.
        """
        new = self._replaced(changes, extra=("rest_lengths",))
        if "rest_lengths" in changes:
            new.rest_lengths = _per_segment_checked("rest_lengths", changes["rest_lengths"], self.segment_counts,
                                                    lambda a: a > 0, "a finite value > 0", validation.COORDINATE_LIMIT)
        return new


#: Per-segment parameters given as rows: their width.
ROW_PARAMETERS = {"hinge_limit": 2, "spherical_limit": 2, "limit_axis": 3}


def _per_segment_rows(name, value, counts, width):
    """(S, width) float64 from one row (width,) for every segment, one per chain (C, width) or
    one per segment (S, width)."""
    a = validation.float_array(name, value, finite=False)
    s, c = int(counts.sum()), len(counts)
    if a.shape == (width,):
        return np.broadcast_to(a, (s, width)).copy()
    if a.shape == (s, width):
        return a.copy()
    if a.shape == (c, width):
        return np.repeat(a, counts, axis=0)
    raise ValueError(f"{name}: expected one row ({width},) for every segment, one per chain ({c}, {width}) or one "
                     f"per segment ({s}, {width}), got shape {a.shape}")


def _limits(angle_limit, hinge_limit, spherical_limit, limit_axis, counts):
    """The hinge and spherical limits and the limit axes, checked (docs/SPEC.md section 9,
    "Angle limits"): at most one limit per segment."""
    hinge = _per_segment_rows("hinge_limit", hinge_limit, counts, 2)
    validation.require("hinge_limit", hinge, ~np.isnan(hinge), "a number (-inf, inf for no hinge)")
    none = (hinge[:, 0] == -np.inf) & (hinge[:, 1] == np.inf)
    validation.require("hinge_limit", hinge, none[:, None] | ((np.abs(hinge) <= np.pi)),
                       "an angle in [-π, π] rad, or the row (-inf, inf) for no hinge")
    validation.require("hinge_limit", hinge, none[:, None] | (hinge[:, :1] <= hinge[:, 1:]),
                       "a least angle <= the greatest")
    spherical = _per_segment_rows("spherical_limit", spherical_limit, counts, 2)
    none_s = (spherical[:, 0] == np.inf) & (spherical[:, 1] == np.inf)
    validation.require("spherical_limit", spherical, none_s[:, None] | ((spherical >= 0) & (spherical <= np.pi)),
                       "an angle in [0, π] rad (π: free about that axis), or the row (inf, inf) for none")
    axis = _per_segment_rows("limit_axis", limit_axis, counts, 3)
    validation.require("limit_axis", axis, np.isfinite(axis) & (np.abs(axis) <= validation.FLOAT32_MAX),
                       "a finite number within float32 range")
    norm = np.linalg.norm(axis, axis=1)
    validation.require("limit_axis", axis, (norm > 1e-6)[:, None], "a non-zero axis")
    kinds = np.stack([angle_limit < np.pi, ~none, ~none_s], axis=1)
    validation.require("hinge_limit" if kinds[:, 1].any() else "spherical_limit",
                       hinge if kinds[:, 1].any() else spherical, (kinds.sum(axis=1) <= 1)[:, None],
                       "at most one limit per segment (this one also has another: a cone angle_limit, a "
                       "hinge_limit or a spherical_limit)")
    return hinge, spherical, axis / norm[:, None]


def _per_chain(name, value, chain_count):
    a = validation.float_array(name, value)
    if a.ndim == 0:
        return np.full(chain_count, float(a))
    if a.shape != (chain_count,):
        raise ValueError(f"{name}: expected a scalar or one value per chain ({chain_count},), got shape {a.shape}")
    return a.copy()


def _per_chain_checked(name, value, chain_count, ok, expected):
    """Per-chain values (C,) that pass ``ok``, checked as given: a scalar's refusal names no
    index."""
    a = _per_chain(name, value, chain_count)
    given = np.asarray(value, np.float64) if np.ndim(value) == 0 else a
    validation.require(name, given, ok(given), expected)
    return a


def _per_chain_vector(name, value, chain_count, dim):
    """(C, dim) float64 from one vector (dim,) for every chain or one per chain (C, dim)."""
    a = validation.float_array(name, value)
    if a.shape == (dim,):
        return np.broadcast_to(a, (chain_count, dim)).copy()
    if a.shape != (chain_count, dim):
        raise ValueError(f"{name}: expected one vector ({dim},) for every chain or one per chain "
                         f"({chain_count}, {dim}), got shape {a.shape}")
    return a


def _per_segment_checked(name, value, counts, ok, expected, limit=validation.FLOAT32_MAX):
    """Per-segment values that pass ``ok`` and, unless ``limit`` is None (values where inf
    means "none"), are finite and lie within ±``limit`` (float32 range; lengths: the
    coordinate limit, so that their squares fit float32)."""
    a = validation.per_segment(name, value, counts)
    # A scalar or a per-chain array is checked as given, so that a refusal names no index or
    # the chain's.
    per_chain = np.ndim(value) == 1 and len(value) == len(counts) != a.shape[0]
    given = np.asarray(value, np.float64) if per_chain or np.ndim(value) == 0 else a
    if limit is None:
        validation.require(name, given, ok(given), expected)
        return a
    validation.require(name, given, np.isfinite(given) & ok(given), expected)
    validation.require(name, given, np.abs(given) <= limit, "a number within float32 range"
                       if limit == validation.FLOAT32_MAX else f"a length within {limit:.3g} (its square must fit float32)")
    return a

"""Colliders and wind: validation, the colliders' target path (SPEC 2, 4.2) and packing (SPEC
4.1, 4.2, 4.4).

Colliders are uploaded per frame and move along a target path per substep like poses: the
host keeps, in float64, where they were at the last substep and their path velocity there
(:class:`ColliderPath`); each frame's buffer holds that start in float64 world coordinates
(the shader takes it relative to each chain's anchor in double precision), the frame's move
and the path velocity. A change in the number of colliders of a kind, or ``snap=True``,
starts them where they are now, at rest.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import layouts, validation

NORMAL_TOLERANCE = 1e-3


@dataclass(frozen=True)
class ColliderSet:
    """World-space colliders, float64. spheres (K, 4): centre, radius; capsules (M, 7): end a,
    end b, radius; planes (N, 4): unit normal, offset; and a group 0..31 for each.
    sphere_inside (K,), capsule_inside (M,): uint32 1 for one that keeps particles inside it
    (SPEC 4.2), 0 for one that keeps them out."""

    spheres: np.ndarray
    sphere_groups: np.ndarray
    capsules: np.ndarray
    capsule_groups: np.ndarray
    planes: np.ndarray
    plane_groups: np.ndarray
    sphere_inside: np.ndarray = None
    capsule_inside: np.ndarray = None

    def __post_init__(self):
        for name, rows in (("sphere_inside", self.spheres), ("capsule_inside", self.capsules)):
            if getattr(self, name) is None:
                object.__setattr__(self, name, np.zeros(len(rows), np.uint32))

    @staticmethod
    def empty() -> "ColliderSet":
        return ColliderSet(np.zeros((0, 4)), np.zeros(0, np.uint32), np.zeros((0, 7)), np.zeros(0, np.uint32),
                           np.zeros((0, 4)), np.zeros(0, np.uint32))

    @staticmethod
    def validated(spheres=None, sphere_groups=None, capsules=None, capsule_groups=None, planes=None,
                  plane_groups=None, sphere_inside=None, capsule_inside=None) -> "ColliderSet":
        """Check every argument (SPEC section 7) and return the set; nothing is kept on error.

        Raises:
            ValueError: a wrong shape, a non-finite value, a negative radius, a coordinate,
                offset or radius beyond ±1e15 (validation.COORDINATE_LIMIT), a plane normal
                whose length is off by more than 1e-3 (placed at its row's x, as given), a
                group outside [0, 31].
            TypeError: non-numeric values, non-integer groups, non-boolean inside flags.
        """
        s = _rows("spheres", spheres, radius_column=3)
        c = _rows("capsules", capsules, radius_column=6)
        p = _rows("planes", planes)
        norms = np.linalg.norm(p[:, :3], axis=1)
        bad = np.flatnonzero(~(np.abs(norms - 1.0) <= NORMAL_TOLERANCE))
        if len(bad):  # the row's normal, its place that of the normal's x as given
            row = int(bad[0])
            one_row = np.ndim(planes) == 1
            raise validation.InputError(
                "planes", 4 * row, p[row, :3].tolist(),
                f"a unit normal (length within {NORMAL_TOLERANCE} of 1) in columns 0-2; its length is {norms[row]:.6g}",
                "[0:3]" if one_row else f"[{row}, 0:3]", (0,) if one_row else (row, 0))
        p[:, :3] /= norms[:, None] if len(p) else 1.0
        return ColliderSet(s, validation.group_array("sphere_groups", sphere_groups, len(s)),
                           c, validation.group_array("capsule_groups", capsule_groups, len(c)),
                           p, validation.group_array("plane_groups", plane_groups, len(p)),
                           validation.flag_array("sphere_inside", sphere_inside, len(s)),
                           validation.flag_array("capsule_inside", capsule_inside, len(c)))

    def arrays(self) -> dict:
        """The eight arrays by field name (for a saved state)."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @staticmethod
    def from_arrays(arrays: dict) -> "ColliderSet":
        """The set saved by :meth:`arrays`, checked as :meth:`validated` checks, its values
        kept bit for bit (plane normals are not normalised again).

        Raises: ValueError for a missing or bad array."""
        names = tuple(ColliderSet.__dataclass_fields__)
        flags = ("sphere_inside", "capsule_inside")  # all 0 when absent (states saved before them)
        missing = [name for name in names if name not in arrays and name not in flags]
        if missing:
            raise ValueError(f"state: its colliders have no {missing[0]}")
        given = {name: arrays[name] for name in names if name in arrays}
        for name in flags:
            if name in given:
                given[name] = np.asarray(given[name]).astype(bool)
        checked = ColliderSet.validated(**given)
        return ColliderSet(*(np.asarray(given[name], getattr(checked, name).dtype) if name in given
                             else getattr(checked, name) for name in names))

    def counts(self):
        return len(self.spheres), len(self.capsules), len(self.planes)

    def matches(self, other: "ColliderSet") -> bool:
        return self.counts() == other.counts()


#: Each collider shape's columns, for the messages.
COLUMNS = {"spheres": ("centre x", "centre y", "centre z", "radius"),
           "capsules": ("end a x", "end a y", "end a z", "end b x", "end b y", "end b z", "radius"),
           "planes": ("normal x", "normal y", "normal z", "offset")}


def _rows(name, value, radius_column=None):
    """``value`` as a new (K, width) float64 array of colliders of shape ``name`` (one flat row
    of ``width`` is one collider; None or [] none): finite, positions and offsets within
    ±COORDINATE_LIMIT, the radius (``radius_column``) within [0, COORDINATE_LIMIT]. Raises
    TypeError, ValueError (an InputError at the first bad entry, its place as given)."""
    width = len(COLUMNS[name])
    if value is None:
        return np.zeros((0, width))
    given = validation.float_array(name, value)
    a = given.reshape(-1, width) if given.ndim == 1 and given.size in (0, width) else given
    if a.ndim != 2 or a.shape[1] != width:
        raise ValueError(f"{name}: expected shape (any, {width}), a row each ({', '.join(COLUMNS[name])}), or one "
                         f"row of {width}; got {given.shape}")
    limit = validation.COORDINATE_LIMIT
    good = np.abs(a) <= limit
    if radius_column is not None:
        good[:, radius_column] = (a[:, radius_column] >= 0) & (a[:, radius_column] <= limit)

    def expected(i):
        if i % width == radius_column:
            return f"a radius >= 0 and <= {limit:.3g}"
        return f"a coordinate within ±{limit:.3g}"

    validation.require(name, given, good.reshape(given.shape), expected)
    return a


def modulo_two_pi(x: np.ndarray) -> np.ndarray:
    """``x % 2π`` of a float64 array (a new one), the same bits as numpy's (and Python's) ``%``
    at under half its cost: numpy's floating remainder is ``fmod`` (exact), then 2π added
    where its sign is not 2π's, and a zero made +0; it also works out the quotient, which
    costs the rest. Here 2π or 0 is added to every entry (x + 0 is x, and -0 + 0 is +0), from
    the comparison's booleans times 2π: one pass fewer than an add under a mask, and numpy's
    masked add costs about three plain passes."""
    two_pi = 2.0 * math.pi
    out = np.fmod(x, two_pi)
    out += (out < 0.0) * two_pi
    return out


def path_weights(alpha: float, path: int) -> tuple:
    """(p, q, dp, dq) of the target path of kind ``path`` (``layouts.PATH_*``) at ``alpha`` in
    float64 (SPEC 2; ``common.glsl``)."""
    if path == layouts.PATH_LINEAR:
        return alpha, 0.0, 1.0, 0.0
    u = 1.0 - alpha
    return alpha * alpha * (2.0 - alpha), alpha * u * u, alpha * (4.0 - 3.0 * alpha), u * (1.0 - 3.0 * alpha)


def start_tangent(d: np.ndarray, m0s: np.ndarray, path: int) -> np.ndarray:
    """(n, k) float64: the start velocity × span of each row's path toward its move ``d``
    (n, k) this frame, from ``m0s`` (SPEC 2; ``start_tangent`` in ``common.glsl``): the monotone
    path clamps its part along d to [0, 3]·d (Fritsch & Carlson 1980) and its part across d to
    the length 3|d|; the others keep m0s."""
    if path != layouts.PATH_MONOTONE or not len(d):
        return m0s
    dd = _row_dots(d, d)
    moves = dd != 0
    along = _row_dots(m0s, d) / np.where(moves, dd, 1.0)
    across = m0s - _scaled_rows(along, d)
    aa = _row_dots(across, across)
    long = np.flatnonzero(aa > 9.0 * dd)
    if long.size:
        across[long] *= np.sqrt(9.0 * dd[long] / aa[long])[:, None]
    limited = _scaled_rows(np.clip(along, 0.0, 3.0), d) + across
    if not moves.all():
        limited[~moves] = 0.0
    return limited


def _row_dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n,) each row's dot product of (n, k) arrays, in their dtype: written out for k = 2 (the
    same sum as einsum's, at a tenth of its cost on a few hundred thousand rows), einsum's
    otherwise."""
    if a.shape[1] == 2:
        return a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1]
    return np.einsum("ij,ij->i", a, b)


def _scaled_rows(s: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``s[:, None] * a`` for (n,) s and (n, k) a, column by column (the same products, at a
    tenth of the cost of broadcasting over k = 2 or 3)."""
    out = np.empty_like(a, np.result_type(s, a))  # a's memory order: its columns stay contiguous
    for column in range(a.shape[1]):
        np.multiply(s, a[:, column], out=out[:, column])
    return out


@dataclass(frozen=True)
class ColliderPath:
    """Where the colliders were at the last substep (``start``, a float64 :class:`ColliderSet`)
    and their centres' and ends' path velocity there, per second of target path:
    ``sphere_rate`` (K, 3), ``capsule_rate`` (M, 6) (end a, then end b). Radii, normals and
    plane offsets move linearly."""

    start: ColliderSet
    sphere_rate: np.ndarray
    capsule_rate: np.ndarray
    #: The last :meth:`start_rates` (its ``end``, ``span``, ``path`` and result): a frame asks
    #: twice, for its records and for the path after it.
    _last_rates: list = field(default_factory=list, compare=False, repr=False)

    @staticmethod
    def at_rest(colliders: ColliderSet) -> "ColliderPath":
        """Colliders that start where they are, not moving."""
        return ColliderPath(colliders, np.zeros((len(colliders.spheres), 3)), np.zeros((len(colliders.capsules), 6)))

    def follows(self, end: ColliderSet) -> bool:
        """Whether ``end`` continues this path (the same number of colliders of each kind)."""
        return self.start.counts() == end.counts()

    def records(self, end: ColliderSet, span: float, path: int):
        """SPHERE/CAPSULE/PLANE_COLLIDER records from this path's start toward ``end`` over a
        frame of ``span`` seconds of target path, of kind ``path`` (``layouts.PATH_*``)."""
        start = self.start
        sphere_rate, capsule_rate = self.start_rates(end, span, path)
        spheres = np.zeros(len(end.spheres), layouts.SPHERE_COLLIDER)
        spheres["start"] = start.spheres
        spheres["delta"] = end.spheres - start.spheres
        spheres["start_rate"][:, :3] = sphere_rate
        spheres["group"] = end.sphere_groups
        spheres["inside"] = end.sphere_inside
        capsules = np.zeros(len(end.capsules), layouts.CAPSULE_COLLIDER)
        capsules["start_a"][:, :3], capsules["start_a"][:, 3] = start.capsules[:, 0:3], start.capsules[:, 6]
        capsules["start_b"][:, :3] = start.capsules[:, 3:6]
        capsules["delta_a"][:, :3] = end.capsules[:, 0:3] - start.capsules[:, 0:3]
        capsules["delta_a"][:, 3] = end.capsules[:, 6] - start.capsules[:, 6]
        capsules["delta_b"][:, :3] = end.capsules[:, 3:6] - start.capsules[:, 3:6]
        capsules["rate_a"][:, :3], capsules["rate_b"][:, :3] = capsule_rate[:, :3], capsule_rate[:, 3:]
        capsules["group"] = end.capsule_groups
        capsules["inside"] = end.capsule_inside
        planes = np.zeros(len(end.planes), layouts.PLANE_COLLIDER)
        planes["start"] = start.planes
        planes["delta"] = end.planes - start.planes
        planes["group"] = end.plane_groups
        return spheres, capsules, planes

    def start_rates(self, end: ColliderSet, span: float, path: int) -> tuple:
        """The path's start velocities × ``span`` toward ``end``, as :func:`start_tangent`
        limits them: sphere centres (K, 3), capsule ends (M, 6), float64."""
        last = self._last_rates
        if last and last[0] is end and last[1] == span and last[2] == path:
            return last[3]
        s = self.start
        k, m = len(end.spheres), len(end.capsules)
        # one row per centre and capsule end, all limited in one call (row by row, as apart)
        d = np.concatenate([end.spheres[:, :3] - s.spheres[:, :3], end.capsules[:, 0:3] - s.capsules[:, 0:3],
                            end.capsules[:, 3:6] - s.capsules[:, 3:6]])
        m0s = np.concatenate([span * self.sphere_rate, span * self.capsule_rate[:, 0:3],
                              span * self.capsule_rate[:, 3:6]])
        rows = start_tangent(d, m0s, path)
        rates = rows[:k], np.concatenate([rows[k:k + m], rows[k + m:]], 1)
        self._last_rates[:] = [end, span, path, rates]
        return rates

    def advanced(self, end: ColliderSet, alpha: float, span: float, path: int) -> "ColliderPath":
        """The path after a frame toward ``end`` whose last substep was at ``alpha``: its value
        and velocity there (float64; plane normals renormalised as the shader does); ``path``:
        its kind (``layouts.PATH_*``)."""
        p, q, dp, dq = path_weights(alpha, path)
        inv_span = 1.0 / span if span > 0 else 0.0
        sphere_m, capsule_m = self.start_rates(end, span, path)

        def along(x0, x1, m):
            d = x1 - x0
            return x0 + p * d + q * m, (dp * d + dq * m) * inv_span

        s, c = self.start, end
        centres, sphere_rate = along(s.spheres[:, :3], c.spheres[:, :3], sphere_m)
        ends, capsule_rate = along(s.capsules[:, :6], c.capsules[:, :6], capsule_m)
        planes = s.planes + alpha * (c.planes - s.planes)
        if len(planes):
            planes[:, :3] /= np.linalg.norm(planes[:, :3], axis=1)[:, None]
        spheres = np.concatenate([centres, (s.spheres[:, 3] + alpha * (c.spheres[:, 3] - s.spheres[:, 3]))[:, None]], 1)
        capsules = np.concatenate([ends, (s.capsules[:, 6] + alpha * (c.capsules[:, 6] - s.capsules[:, 6]))[:, None]],
                                  1)
        start = ColliderSet(spheres, c.sphere_groups, capsules, c.capsule_groups, planes, c.plane_groups,
                            c.sphere_inside, c.capsule_inside)
        return ColliderPath(start, sphere_rate, capsule_rate)


@dataclass(frozen=True)
class Wind:
    """SPEC 4.1 (and its 2D form, SPEC 3): ``W(x, t) = w0 + A·u·sin(κ·x - 2π·f_w·t)``, world space.

    acceleration: w0 (dim,), length/s². gust_amplitude: A, length/s². gust_wave_vector: κ
    (dim,), rad/length. gust_frequency: f_w, Hz. u = w0/|w0|, or κ/|κ| when w0 = 0. dim is 3
    for point chains and 2 for angle chains.
    """

    acceleration: np.ndarray
    gust_amplitude: float
    gust_wave_vector: np.ndarray
    gust_frequency: float

    @staticmethod
    def validated(acceleration=(0.0, 0.0, 0.0), gust_amplitude=0.0, gust_wave_vector=(0.0, 0.0, 0.0),
                  gust_frequency=0.0, dim: int = 3) -> "Wind":
        """Raises ValueError for a wrong shape or a non-finite value, TypeError for non-numbers."""
        return Wind(validation.float_array("acceleration", acceleration, (dim,)),
                    float(validation.float_array("gust_amplitude", gust_amplitude, ())),
                    validation.float_array("gust_wave_vector", gust_wave_vector, (dim,)),
                    float(validation.float_array("gust_frequency", gust_frequency, ())))

    @staticmethod
    def none(dim: int) -> "Wind":
        """No wind, in ``dim`` dimensions."""
        return Wind(np.zeros(dim), 0.0, np.zeros(dim), 0.0)

    def arrays(self) -> dict:
        """The four values as arrays by field name (for a saved state)."""
        return {name: np.asarray(getattr(self, name), np.float64) for name in self.__dataclass_fields__}

    @staticmethod
    def from_arrays(arrays: dict) -> "Wind":
        """The wind saved by :meth:`arrays`, validated. Raises: ValueError."""
        missing = [name for name in Wind.__dataclass_fields__ if name not in arrays]
        if missing:
            raise ValueError(f"state: its wind has no {missing[0]}")
        dim = np.asarray(arrays["acceleration"]).size
        return Wind.validated(**{name: arrays[name] for name in Wind.__dataclass_fields__}, dim=dim)

    @property
    def blows(self) -> bool:
        return bool(np.any(self.acceleration != 0) or self.gust_amplitude != 0)

    def direction(self) -> np.ndarray:
        for v in (self.acceleration, self.gust_wave_vector):
            n = np.linalg.norm(v)
            if n > 0:
                return v / n
        return np.zeros(self.acceleration.size)

    def records(self) -> tuple:
        """(wind, gust, gust_direction) as (4,) float64 rows for the frame buffer: (w0, A),
        (κ, 2π·f_w), (u, 0), each vector followed by its scalar and padded with zeros (3D:
        the scalar in w; 2D: in z)."""
        pad = np.zeros(3 - self.acceleration.size)
        return (np.concatenate([self.acceleration, [self.gust_amplitude], pad]),
                np.concatenate([self.gust_wave_vector, [2.0 * math.pi * self.gust_frequency], pad]),
                np.concatenate([self.direction(), [0.0], pad]))

    def time_phase(self, t: float) -> float:
        """``-2π·f_w·t`` reduced mod 2π in float64: the phase a schedule starting at ``t`` adds."""
        return (-2.0 * math.pi * self.gust_frequency * t) % (2.0 * math.pi)

    def time_phases(self, frame_plan) -> tuple:
        """The phase of each schedule of a :class:`~gpu_jiggle.sim.clock.FramePlan` (full, half)."""
        return self.time_phase(frame_plan.full_start), self.time_phase(frame_plan.half_start)

    def space_phase(self, anchors) -> np.ndarray:
        """(C,) ``κ·anchor`` reduced mod 2π in float64: the phase each chain adds (its
        positions reach the shader relative to its anchor)."""
        return modulo_two_pi(np.asarray(anchors, np.float64) @ self.gust_wave_vector)

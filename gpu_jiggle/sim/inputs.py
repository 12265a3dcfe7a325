"""Colliders and wind for point chains: validation, the host's float64 copy of what was last
applied, and packing relative to the floating origin (SPEC 4.1, 4.2, 4.4).

Colliders are uploaded per frame and interpolated per substep like poses: each frame's
buffer holds every collider "from" (where it was at the last substep, float64 on the host)
and "to" (this frame). A change in the number of colliders of a kind, or ``snap=True``,
starts them where they are now.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import layouts, validation

NORMAL_TOLERANCE = 1e-3


@dataclass(frozen=True)
class ColliderSet:
    """World-space colliders, float64. spheres (K, 4): centre, radius; capsules (M, 7): end a,
    end b, radius; planes (N, 4): unit normal, offset; and a group 0..31 for each."""

    spheres: np.ndarray
    sphere_groups: np.ndarray
    capsules: np.ndarray
    capsule_groups: np.ndarray
    planes: np.ndarray
    plane_groups: np.ndarray

    @staticmethod
    def empty() -> "ColliderSet":
        return ColliderSet(np.zeros((0, 4)), np.zeros(0, np.uint32), np.zeros((0, 7)), np.zeros(0, np.uint32),
                           np.zeros((0, 4)), np.zeros(0, np.uint32))

    @staticmethod
    def validated(spheres=None, sphere_groups=None, capsules=None, capsule_groups=None, planes=None,
                  plane_groups=None) -> "ColliderSet":
        """Check every argument (SPEC section 7) and return the set; nothing is kept on error.

        Raises:
            ValueError: a wrong shape, a non-finite value, a negative radius, a plane normal
                whose length is off by more than 1e-3, a group outside [0, 31].
            TypeError: non-numeric values or non-integer groups.
        """
        s = _rows("spheres", spheres, 4)
        validation.require("spheres", s, _column_ok(s, 3), "a radius >= 0 in column 3")
        c = _rows("capsules", capsules, 7)
        validation.require("capsules", c, _column_ok(c, 6), "a radius >= 0 in column 6")
        p = _rows("planes", planes, 4)
        norms = np.linalg.norm(p[:, :3], axis=1)
        validation.require("planes", norms, np.abs(norms - 1.0) <= NORMAL_TOLERANCE,
                           f"a unit normal (length within {NORMAL_TOLERANCE} of 1) in columns 0-2; this is its length")
        p = p.copy()
        p[:, :3] /= norms[:, None] if len(p) else 1.0
        return ColliderSet(s, validation.group_array("sphere_groups", sphere_groups, len(s)),
                           c, validation.group_array("capsule_groups", capsule_groups, len(c)),
                           p, validation.group_array("plane_groups", plane_groups, len(p)))

    def arrays(self) -> dict:
        """The six arrays by field name (for a saved state)."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @staticmethod
    def from_arrays(arrays: dict) -> "ColliderSet":
        """The set saved by :meth:`arrays`, checked as :meth:`validated` checks, its values
        kept bit for bit (plane normals are not normalised again).

        Raises: ValueError for a missing or bad array."""
        names = tuple(ColliderSet.__dataclass_fields__)
        missing = [name for name in names if name not in arrays]
        if missing:
            raise ValueError(f"state: its colliders have no {missing[0]}")
        checked = ColliderSet.validated(**{name: arrays[name] for name in names})
        return ColliderSet(*(np.asarray(arrays[name], getattr(checked, name).dtype) for name in names))

    def lerp(self, other: "ColliderSet", alpha: float) -> "ColliderSet":
        """Where the colliders are at fraction alpha from self to other (float64); plane
        normals are renormalised as the shader does."""
        p = self.planes + alpha * (other.planes - self.planes)
        if len(p):
            p[:, :3] /= np.linalg.norm(p[:, :3], axis=1)[:, None]
        return ColliderSet(self.spheres + alpha * (other.spheres - self.spheres), other.sphere_groups,
                           self.capsules + alpha * (other.capsules - self.capsules), other.capsule_groups,
                           p, other.plane_groups)

    def counts(self):
        return len(self.spheres), len(self.capsules), len(self.planes)

    def matches(self, other: "ColliderSet") -> bool:
        return self.counts() == other.counts()


def _column_ok(a, column):
    good = np.ones(a.shape, dtype=bool)
    good[:, column] = a[:, column] >= 0
    return good


def _rows(name, value, width):
    if value is None:
        return np.zeros((0, width))
    a = validation.coordinates(name, value)
    if a.ndim == 1 and a.size == width:
        a = a[None]
    if a.ndim != 2 or a.shape[1] != width:
        raise ValueError(f"{name}: expected shape (any, {width}), got {a.shape}")
    return a


def pack_colliders(start: ColliderSet, end: ColliderSet, origin):
    """SPHERE/CAPSULE/PLANE_COLLIDER records from ``start`` to ``end``, relative to ``origin``."""
    origin = np.asarray(origin, np.float64)
    spheres = np.zeros(len(end.spheres), layouts.SPHERE_COLLIDER)
    for field, src in (("from_sphere", start), ("to_sphere", end)):
        spheres[field][:, :3] = src.spheres[:, :3] - origin
        spheres[field][:, 3] = src.spheres[:, 3]
    spheres["group"] = end.sphere_groups
    capsules = np.zeros(len(end.capsules), layouts.CAPSULE_COLLIDER)
    for prefix, src in (("from", start), ("to", end)):
        capsules[f"{prefix}_a"][:, :3] = src.capsules[:, 0:3] - origin
        capsules[f"{prefix}_a"][:, 3] = src.capsules[:, 6]
        capsules[f"{prefix}_b"][:, :3] = src.capsules[:, 3:6] - origin
    capsules["group"] = end.capsule_groups
    planes = np.zeros(len(end.planes), layouts.PLANE_COLLIDER)
    for field, src in (("from_plane", start), ("to_plane", end)):
        planes[field][:, :3] = src.planes[:, :3]
        planes[field][:, 3] = src.planes[:, 3] - src.planes[:, :3] @ origin  # n·(x - o) >= offset - n·o
    planes["group"] = end.plane_groups
    return spheres, capsules, planes


@dataclass(frozen=True)
class Wind:
    """SPEC 4.1: ``W(x, t) = w0 + A·u·sin(κ·x - 2π·f_w·t)``, world space.

    acceleration: w0 (3,), length/s². gust_amplitude: A, length/s². gust_wave_vector: κ (3,),
    rad/length. gust_frequency: f_w, Hz. u = w0/|w0|, or κ/|κ| when w0 = 0.
    """

    acceleration: np.ndarray
    gust_amplitude: float
    gust_wave_vector: np.ndarray
    gust_frequency: float

    @staticmethod
    def validated(acceleration=(0.0, 0.0, 0.0), gust_amplitude=0.0, gust_wave_vector=(0.0, 0.0, 0.0),
                  gust_frequency=0.0) -> "Wind":
        """Raises ValueError for a wrong shape or a non-finite value, TypeError for non-numbers."""
        return Wind(validation.float_array("acceleration", acceleration, (3,)),
                    float(validation.float_array("gust_amplitude", gust_amplitude, ())),
                    validation.float_array("gust_wave_vector", gust_wave_vector, (3,)),
                    float(validation.float_array("gust_frequency", gust_frequency, ())))

    def arrays(self) -> dict:
        """The four values as arrays by field name (for a saved state)."""
        return {name: np.asarray(getattr(self, name), np.float64) for name in self.__dataclass_fields__}

    @staticmethod
    def from_arrays(arrays: dict) -> "Wind":
        """The wind saved by :meth:`arrays`, validated. Raises: ValueError."""
        missing = [name for name in Wind.__dataclass_fields__ if name not in arrays]
        if missing:
            raise ValueError(f"state: its wind has no {missing[0]}")
        return Wind.validated(**{name: arrays[name] for name in Wind.__dataclass_fields__})

    def direction(self) -> np.ndarray:
        for v in (self.acceleration, self.gust_wave_vector):
            n = np.linalg.norm(v)
            if n > 0:
                return v / n
        return np.zeros(3)

    def packet(self, origin, sim_times) -> "WindPacket":
        """The frame's wind for the shader, with the gust phase ``κ·origin - 2π·f_w·t`` at
        each schedule's first substep (``sim_times``), reduced mod 2π in float64."""
        omega = 2.0 * math.pi * self.gust_frequency
        spatial = float(self.gust_wave_vector @ np.asarray(origin, np.float64))
        phases = tuple((spatial - omega * t) % (2.0 * math.pi) for t in sim_times)
        return WindPacket(np.append(self.acceleration, self.gust_amplitude),
                          np.append(self.gust_wave_vector, omega), np.append(self.direction(), 0.0), phases)


@dataclass(frozen=True)
class WindPacket:
    wind: np.ndarray
    gust: np.ndarray
    gust_direction: np.ndarray
    phases: tuple


NO_WIND = Wind.validated()

"""What a rig attaches to a skeleton besides its spring chains: colliders (:class:`ColliderSpec`,
and their world shapes per frame, :class:`ColliderShapes`) and IK constraints toward moving
world targets (:class:`LookAtSpec`, :class:`TwoBoneIKSpec`). Read from TOML by
:mod:`.rig_reader`; :mod:`.rig` re-exports them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass
class ColliderSpec:
    """A sphere, capsule or plane attached to a joint: ``offset`` (and ``end``, capsules) (3,)
    in the joint's space (a plane: a point on it), ``radius`` in world length units, ``group``
    its collider group, ``inside`` True for one that keeps particles inside it (SPEC 4.2);
    ``normal`` (3,) a plane's normal in the joint's space (particles stay on its side)."""

    name: str
    node: int
    shape: str
    offset: np.ndarray
    end: np.ndarray
    radius: float
    group: int
    inside: bool = False
    normal: np.ndarray | None = None


class _MovingTarget:
    """What the constraints share: a world target that sweeps, ``target + sweep·sin(2π·
    sweep_hz·t)``, or ``target_fn(t)`` when that is set (attributes of the dataclasses below)."""

    def target_at(self, t: float) -> np.ndarray:
        """(3,) world target at playing time t: ``target_fn(t)`` when set, else the sweep."""
        if self.target_fn is not None:
            return np.asarray(self.target_fn(t), np.float64)
        return self.target + self.sweep * math.sin(2.0 * math.pi * self.sweep_hz * t)


@dataclass
class LookAtSpec(_MovingTarget):
    """Turn ``node`` so that its local ``aim_axis`` points at ``target + sweep·sin(2π·sweep_hz·t)``
    (or at ``target_fn(t)``, a callable returning a (3,) world point), by at most
    ``max_angle`` radians, blended by ``weight``."""

    name: str
    node: int
    aim_axis: np.ndarray
    target: np.ndarray
    sweep: np.ndarray
    sweep_hz: float
    max_angle: float
    weight: float
    enabled: bool = True
    target_fn: object = None


@dataclass
class TwoBoneIKSpec(_MovingTarget):
    """Reach ``target + sweep·sin(2π·sweep_hz·t)`` (or ``target_fn(t)``) with the limb
    root → mid → end (node indices), the mid joint bending toward ``pole`` (world) if given."""

    name: str
    root: int
    mid: int
    end: int
    target: np.ndarray
    sweep: np.ndarray
    sweep_hz: float
    pole: np.ndarray | None
    enabled: bool = True
    target_fn: object = None


@dataclass
class ColliderShapes:
    """The rig's colliders at one frame, world space.

    Attributes:
        spheres: (K, 4) float64, centre and radius. sphere_names: K names.
        capsules: (M, 7) float64, two ends and radius. capsule_names: M names.
        planes: (N, 4) float64, unit normal and offset o (points x with n·x ≥ o are outside).
            plane_names: N names.
    """

    spheres: np.ndarray
    sphere_names: list
    capsules: np.ndarray
    capsule_names: list
    planes: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    plane_names: list = field(default_factory=list)

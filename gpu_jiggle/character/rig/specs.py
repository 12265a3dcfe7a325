"""What a rig attaches to a skeleton besides its spring chains: colliders (:class:`ColliderSpec`,
and their world shapes per frame, :class:`ColliderShapes`), the wind (:class:`WindSpec`) and IK
constraints toward moving world targets (:class:`LookAtSpec`, :class:`TwoBoneIKSpec`). Read from TOML by
:mod:`.reader`; :mod:`.model` re-exports them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ...sim.inputs import Wind


#: The keys of a rig's ``[wind]`` table, and what each defaults to.
WIND_DEFAULTS = {"direction": (1.0, 0.0, 0.0), "strength": 0.0, "gust_amplitude": 0.0, "gust_frequency": 0.0,
                 "gust_wavelength": 0.0}


@dataclass(frozen=True)
class WindSpec:
    """A rig's ``[wind]`` table: the wind of SPEC 4.1 in an artist's terms, world space.

    Attributes:
        direction: (3,) float64, unit: where the wind blows to.
        strength: the steady acceleration |w0| along ``direction``, length/s² (≥ 0).
        gust_amplitude: A, length/s² (≥ 0): gusts add A·sin(κ·x − 2π·f_w·t) along ``direction``.
        gust_frequency: f_w, Hz (≥ 0).
        gust_wavelength: the gusts' wavelength along ``direction`` in length units (κ =
            2π/λ·direction), or 0 for gusts that rise and fall everywhere at once (κ = 0).
    """

    direction: np.ndarray
    strength: float = 0.0
    gust_amplitude: float = 0.0
    gust_frequency: float = 0.0
    gust_wavelength: float = 0.0

    @staticmethod
    def checked(direction=WIND_DEFAULTS["direction"], strength=0.0, gust_amplitude=0.0, gust_frequency=0.0,
                gust_wavelength=0.0) -> "WindSpec":
        """A WindSpec from its values, the direction normalised.

        Raises: ValueError naming the key and value: a direction of three finite numbers not
        all zero; the others finite and ≥ 0; gusts with neither a strength nor a wavelength
        to give them a direction (SPEC 4.1). TypeError: non-numbers."""
        from ...sim import validation

        d = validation.float_array("direction", direction, (3,))
        length = float(np.linalg.norm(d))
        if not length > 0:
            raise ValueError(f"direction = {d.tolist()}: expected a nonzero vector")
        values = {}
        for key, value in (("strength", strength), ("gust_amplitude", gust_amplitude),
                           ("gust_frequency", gust_frequency), ("gust_wavelength", gust_wavelength)):
            v = float(validation.float_array(key, value, ()))
            if not v >= 0:
                raise ValueError(f"{key} = {v!r}: expected a finite value >= 0")
            values[key] = v
        if values["gust_amplitude"] > 0 and values["strength"] == 0 and values["gust_wavelength"] == 0:
            # SPEC 4.1 takes the gusts' direction from w0, else from κ: with neither they have none
            raise ValueError(f"gust_amplitude = {values['gust_amplitude']!r} with strength = 0 and gust_wavelength = 0: "
                             f"gusts blow along the steady wind or their wave; give either a strength > 0 or a "
                             f"gust_wavelength > 0")
        return WindSpec(d / length, **values)

    def replaced(self, **changes) -> "WindSpec":
        """This wind with ``changes`` (any of the attributes), checked as :meth:`checked`."""
        unknown = [k for k in changes if k not in WIND_DEFAULTS]
        if unknown:
            raise TypeError(f"wind: unknown value {unknown[0]!r}; expected one of {', '.join(WIND_DEFAULTS)}")
        values = {k: getattr(self, k) for k in WIND_DEFAULTS}
        values.update(changes)
        return WindSpec.checked(**values)

    def solver_arguments(self) -> dict:
        """The keyword arguments of ``Solver.set_wind`` (SPEC 4.1) for this wind."""
        kappa = 0.0 if self.gust_wavelength == 0 else 2.0 * math.pi / self.gust_wavelength
        return {"acceleration": self.strength * self.direction, "gust_amplitude": self.gust_amplitude,
                "gust_wave_vector": kappa * self.direction, "gust_frequency": self.gust_frequency}

    def solver_wind(self) -> Wind:
        """This wind as a solver holds it (:class:`~gpu_jiggle.sim.inputs.Wind`), for the
        stability check (:func:`~gpu_jiggle.sim.levels.check_runs_stable`)."""
        return Wind.validated(**self.solver_arguments())


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

"""Live changes to the rig a pipeline plays, without resetting the motion: its chains' spring
values (:func:`changed_parameters`, handed to the solver), its wind and its colliders. Each
change is checked whole; a refused one changes nothing. :class:`LiveChanges` gives
:class:`~gpu_jiggle.character.pipeline.Pipeline` its ``set_parameters``,
``replace_parameters``, ``set_wind`` and ``set_collider``, which change the pipeline's own
copy of the rig (``pipeline.rig``), never the :class:`~.model.Rig` it was made from."""
from __future__ import annotations

import dataclasses

import numpy as np

from ...sim import validation
from ...sim.levels import check_runs_stable
from ...sim.validation import InputError, unknown_name
from .curves import curve_values, is_curve
from .specs import WIND_DEFAULTS, ColliderSpec, WindSpec

__all__ = ["LIVE_PARAMETERS", "COLLIDER_LIVE_KEYS", "LiveChanges", "changed_parameters", "changed_wind",
           "changed_collider", "collider_named"]

#: What ``Pipeline.set_parameters`` may change, per chain: these per segment, except the
#: per-chain ones below (their shape per chain).
LIVE_PARAMETERS = ("frequency", "damping_ratio", "particle_radius", "max_distance", "air_drag", "angle_limit_deg",
                   "world_influence", "gravity")
#: Live parameters given in another unit than the chain set's: its name and the factor.
LIVE_UNITS = {"angle_limit_deg": ("angle_limit", np.pi / 180.0)}
PER_CHAIN_PARAMETERS = {"world_influence": (), "gravity": (3,)}

#: What ``Pipeline.set_collider`` may change, by shape.
COLLIDER_LIVE_KEYS = {"sphere": ("radius", "offset"), "capsule": ("radius", "offset", "end"),
                      "plane": ("offset", "normal")}


def changed_wind(wind: WindSpec | None, changes: dict) -> WindSpec:
    """``wind`` (None: no wind yet, :data:`~.specs.WIND_DEFAULTS`) with ``changes``.

    Raises: TypeError for an unknown key (with the closest one) or non-numbers; ValueError
    for a bad value (:meth:`WindSpec.checked`)."""
    for key in changes:
        if key not in WIND_DEFAULTS:
            raise TypeError(f"wind: {validation.unknown_name('value', key, WIND_DEFAULTS)}")
    base = wind if wind is not None else WindSpec.checked()
    return base.replaced(**changes)


def collider_named(colliders: list, name: str) -> int:
    """The index in ``colliders`` of the collider ``name``; ValueError naming the closest."""
    names = [c.name for c in colliders]
    if name not in names:
        raise ValueError(f"collider: {validation.unknown_name('collider', name, names)}")
    return names.index(name)


def changed_collider(collider: ColliderSpec, changes: dict) -> ColliderSpec:
    """A copy of ``collider`` with ``changes``: ``radius`` (length ≥ 0; spheres, capsules),
    ``offset`` (3,) and ``end`` (3,, capsules) in its joint's space, ``normal`` (3,, planes,
    nonzero, normalised here).

    Raises: TypeError for a key its shape has not or non-numbers; ValueError for a bad value,
    naming the collider, the key and the value."""
    allowed = COLLIDER_LIVE_KEYS[collider.shape]
    where = f"collider {collider.name!r}"
    values = {}
    for key, value in changes.items():
        if key not in allowed:
            raise TypeError(f"{where}: a {collider.shape} has no live {key!r}; it has {', '.join(allowed)}")
        try:
            if key == "radius":
                r = float(validation.float_array("radius", value, ()))
                if not r >= 0:
                    raise ValueError(f"radius = {r!r}: expected a finite value >= 0")
                values[key] = r
            else:
                v = validation.float_array(key, value, (3,))
                if key == "normal":
                    length = float(np.linalg.norm(v))
                    if not length > 0:
                        raise ValueError(f"normal = {v.tolist()}: expected a nonzero vector")
                    v = v / length
                values[key] = v
        except (TypeError, ValueError) as exc:  # the base type: an InputError is not made from words
            raise (TypeError if isinstance(exc, TypeError) else ValueError)(f"{where}: {exc}") from None
    if collider.shape == "sphere" and "offset" in values:
        values["end"] = values["offset"].copy()  # a sphere's end is its centre
    return dataclasses.replace(collider, **values)


def changed_parameters(rig, members, changes: dict, arrays: dict | None = None) -> dict:
    """``rig``'s chain set's arrays with the chains ``members`` (indices) given ``changes``
    (name → a scalar, one value per segment or a curve table over the chain's segments,
    :mod:`.curves`; per-chain names: their shape), for
    ``chain_set.replace``; ``arrays``: arrays from an earlier call to change further
    (their other values kept). Only shapes are checked here; the values are validated
    once, by the chain set. Raises: ValueError/TypeError for a wrong shape or a
    non-number, naming the chain."""
    cs = rig.chain_set
    new = dict(arrays or {})
    for key, value in changes.items():
        name, factor = LIVE_UNITS.get(key, (key, 1.0))
        current = np.array(new[name] if name in new else getattr(cs, name), dtype=np.float64)
        for i in members:
            chain = rig.chains[i]
            rows = i if key in PER_CHAIN_PARAMETERS else slice(int(cs.first_segment[i]),
                                                                int(cs.first_segment[i]) + chain.segments)
            try:
                current[rows] = _chain_values(key, value, chain.segments) * factor
            except (TypeError, ValueError) as exc:  # the base type: an InputError is not made from words
                raise (TypeError if isinstance(exc, TypeError) else ValueError)(f"{chain.name}: {exc}") from None
        new[name] = current
    return new


def _chain_values(key, value, segments):
    """``value`` for one chain: a scalar, one per segment or a curve table (per-chain keys:
    their shape)."""
    if key in PER_CHAIN_PARAMETERS:
        return validation.float_array(key, value, PER_CHAIN_PARAMETERS[key], finite=False)
    if is_curve(value):
        return curve_values(key, value, segments)
    a = validation.float_array(key, value, finite=False)
    if a.ndim == 0 or a.shape == (segments,):
        return a
    raise ValueError(f"{key}: expected a scalar or one value per segment ({segments},), got shape {a.shape}")


class LiveChanges:
    """The live changes of a :class:`~gpu_jiggle.character.pipeline.Pipeline` (its own ``rig``,
    its solver ``_solver`` once made, and ``_chain_indices(name, groups)``)."""

    def set_parameters(self, chain_name: str, **changes) -> None:
        """Change spring values of one rig chain, or of every strand of a strand group, from
        the next step on, without resetting the motion (``Solver.set_parameters``).

        Args:
            chain_name: a chain's name (``"tail"``, ``"mane[2]"``) or a strand group's
                (``"mane"``: all its strands).
            changes: any of ``frequency`` (Hz, > 0), ``damping_ratio`` (≥ 0),
                ``particle_radius`` (≥ 0) and ``max_distance`` (> 0), lengths in the model's
                unit, each a scalar, one value per segment of the chain, or a curve table over
                the chain's depth (:mod:`~gpu_jiggle.character.rig.curves`); ``air_drag`` (1/s,
                ≥ 0) and ``angle_limit_deg`` (degrees, ≥ 0) the same way; ``world_influence``,
                a scalar in [0, 1]; ``gravity``, (3,) world, length/s².

        The pipeline's rig takes the new values too (``pipeline.rig.chain_set``: the
        pipeline's own copy, not the Rig it was made from), so a :meth:`reset` keeps them, and
        a pipeline made from ``pipeline.rig`` starts from them. The values are validated
        once, by the solver (before its first step, by the same check), and a refusal names
        the chain.

        Raises:
            ValueError: an unknown chain, a bad value, or f/ζ the rig's substep cannot keep
                stable (the message names the chain and gives the largest stable f).
            TypeError: an unknown parameter, or non-numbers. A refused change leaves the
                rig and the solver as they were.
        """
        members = self._chain_indices(chain_name, groups=True)
        unknown = [k for k in changes if k not in LIVE_PARAMETERS]
        if unknown:
            words = unknown_name("parameter", unknown[0], LIVE_PARAMETERS, listing="expected one of")
            raise TypeError(f"set_parameters: {words}")
        if not changes:
            return
        self.replace_parameters(**changed_parameters(self.rig, members, changes))

    def replace_parameters(self, **arrays) -> None:
        """Give the rig's chain set (all chains at once) new arrays, live: the names and shapes
        of ``PointChainSet.replace`` (e.g. ``frequency`` (S,) Hz over every segment, ``gravity``
        (C, 3)). Validated whole, stability included: a refusal (ValueError naming the chain
        and the index within it) changes nothing. :meth:`set_parameters` is the per-chain form."""
        try:
            if self._solver is not None:
                self._solver.set_parameters(**arrays)
                chain_set = self._solver.chain_set
            else:
                chain_set = self.rig.chain_set.replace(**arrays)
                wind = None if self.rig.wind is None else self.rig.wind.solver_wind()
                check_runs_stable(chain_set, self.rig.substep, self.rig.integrator, wind)
        except InputError as exc:
            raise ValueError(self.rig.refusal(exc)) from None
        self.rig.chain_set = chain_set

    def set_wind(self, **changes) -> None:
        """Change the rig's wind (SPEC 4.1) from the next step on, without resetting the
        motion: any of ``direction`` ((3,) world), ``strength``, ``gust_amplitude``
        (length/s²), ``gust_frequency`` (Hz) and ``gust_wavelength`` (length, 0: everywhere at
        once); a rig without ``[wind]`` starts from no wind. The rig keeps the new wind
        (``rig.wind``, a :class:`~gpu_jiggle.character.rig.specs.WindSpec`).

        Raises: TypeError (an unknown key, with the closest one; non-numbers), ValueError (a
        bad value); a refused change leaves the wind as it was."""
        if self.rig is None:
            raise ValueError("set_wind: this pipeline has no rig")
        wind = changed_wind(self.rig.wind, changes)
        if self._solver is not None:
            self._solver.set_wind(**wind.solver_arguments())
        self.rig.wind = wind

    def set_collider(self, name: str, **changes) -> None:
        """Change the rig's collider ``name`` from the next step on (its ``radius``,
        ``offset``, ``end``, ``normal``: :func:`~gpu_jiggle.character.rig.live.changed_collider`),
        without resetting the motion; it sweeps from where it was over the next frame.

        Raises: ValueError (an unknown collider, naming the closest; a bad value), TypeError (a
        key its shape has not); a refused change leaves the collider as it was."""
        if self.rig is None:
            raise ValueError("set_collider: this pipeline has no rig")
        i = collider_named(self.rig.colliders, name)
        self.rig.colliders[i] = changed_collider(self.rig.colliders[i], changes)

"""Live changes to what a rig attaches besides its chains' springs: its wind and its colliders
(``Pipeline.set_wind``, ``Pipeline.set_collider``). Each change is checked whole and gives a
new spec; the rig keeps the old one when a change is refused. The chains' spring values change
through ``Rig.changed_parameters`` and the solver (``Pipeline.set_parameters``)."""
from __future__ import annotations

import dataclasses

import numpy as np

from ..sim import validation
from .rig_specs import WIND_DEFAULTS, ColliderSpec, WindSpec

__all__ = ["COLLIDER_LIVE_KEYS", "changed_wind", "changed_collider", "collider_named"]

#: What ``Pipeline.set_collider`` may change, by shape.
COLLIDER_LIVE_KEYS = {"sphere": ("radius", "offset"), "capsule": ("radius", "offset", "end"),
                      "plane": ("offset", "normal")}


def changed_wind(wind: WindSpec | None, changes: dict) -> WindSpec:
    """``wind`` (None: no wind yet, :data:`~.rig_specs.WIND_DEFAULTS`) with ``changes``.

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

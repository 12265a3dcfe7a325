"""A rig table's hinge and spherical limits (docs/SPEC.md section 9, "Angle limits"), read for
the whole chain or strand group, or per segment (a list of rows): ``hinge_limit_deg =
[least, greatest]`` about ``limit_axis``, ``spherical_limit_deg = [pitch, yaw]``,
``limit_axis = [x, y, z]`` in each segment's base joint's space (default [1, 0, 0], as
VRMC_springBone_limit). Types and counts are checked here; the values by the chain set, whose
refusal names the key."""
from __future__ import annotations

import math

import numpy as np

from .curves import in_float32_range, short

#: The keys, their defaults (none) and what each holds.
LIMIT_KEYS = {"hinge_limit_deg": ((-math.inf, math.inf), "[least, greatest] angle in degrees"),
              "spherical_limit_deg": ((math.inf, math.inf), "[pitch, yaw] limits in degrees"),
              "limit_axis": ((1.0, 0.0, 0.0), "[x, y, z], the hinge or pitch axis in the joint's space")}
#: The chain set argument each key becomes, and its factor to the chain set's unit.
CHAIN_SET_ARGUMENT = {"hinge_limit_deg": ("hinge_limit", math.pi / 180.0),
                      "spherical_limit_deg": ("spherical_limit", math.pi / 180.0),
                      "limit_axis": ("limit_axis", 1.0)}


def read_limits(fail, where, table, segments: int) -> dict:
    """``{chain set argument: (segments, k) rows}`` for one table, in radians: a key gives one
    row for every segment (``[lo, hi]``), or one row per segment (``[[lo, hi], ...]``, with
    the defaults for segments without one: a VRM spring's joints each have their own limit);
    ``fail(where, message)`` raises the rig's error for a value of the wrong type or count."""
    out = {}
    for key, (default, expected) in LIMIT_KEYS.items():
        v = table.get(key, list(default))
        rows = v if isinstance(v, list) and v and all(isinstance(r, list) for r in v) else [v] * segments
        if len(rows) != segments or not all(_row(r, len(default)) for r in rows):
            fail(where, f"{key} = {short(v)}: expected {expected}, or one such per segment ({segments})")
        name, factor = CHAIN_SET_ARGUMENT[key]
        out[name] = np.asarray(rows, np.float64).reshape(segments, len(default)) * factor
    return out


def _row(v, width) -> bool:
    return (isinstance(v, list) and len(v) == width
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) and
                    (not isinstance(x, int) or in_float32_range(x)) for x in v))

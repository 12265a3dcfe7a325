"""Typed values of a rig's TOML tables, for :class:`~gpu_jiggle.character.rig.reader.RigReader`:
numbers, vectors, per-segment values (or curves) and joint names, each refused with the file,
the table and the key in the message."""
from __future__ import annotations

import math

import numpy as np

from .model import RigError
from .curves import CurveError, curve_values, in_float32_range as _in_float32_range, is_curve, short as _short
from ...sim.validation import unknown_name

#: Per-segment spring keys (a number, one per segment, or a curve table: rig_curves) and their
#: defaults; "frequency" has none.
PER_SEGMENT_DEFAULTS = {"frequency": None, "damping_ratio": 0.5, "particle_radius": 0.0, "max_distance": math.inf,
                        "air_drag": 0.0, "angle_limit_deg": math.inf}


class RigValues:
    """The value readers of one rig file (``source``) on ``skeleton``."""

    def __init__(self, source, skeleton):
        self.source = source
        self.skeleton = skeleton

    def fail(self, where, message):
        raise RigError(f"{self.source}: {where}: {message}")

    # -- values ---------------------------------------------------------------------------
    def keys(self, where, table, allowed):
        if not isinstance(table, dict):
            self.fail(where, f"expected a table, got {type(table).__name__}")
        unknown = [k for k in table if k not in allowed]
        if unknown:
            self.fail(where, unknown_name("key", unknown[0], allowed, listing="expected one of"))

    def number(self, where, table, key, default=None, check=None, expected="", integer=False):
        """``table[key]`` (or ``default``): an int, or with ``integer=False`` also a float,
        finite and within float32 range, passing ``check``."""
        if key not in table:
            if default is None:
                self.fail(where, f"missing {key!r}")
            return default
        v = table[key]
        ok_type = isinstance(v, int) if integer else isinstance(v, (int, float))
        if isinstance(v, bool) or not ok_type:
            self.fail(where, f"{key} = {_short(v)}: expected {'an integer' if integer else 'a number'}")
        if not _in_float32_range(v) or (check is not None and not check(v)):
            self.fail(where, f"{key} = {_short(v)}: expected {expected or 'a finite number'}"
                             f"{'' if _in_float32_range(v) else ' within float32 range'}")
        return v

    def vector(self, where, table, key, default=None, nonzero=False):
        if key not in table:
            if default is None:
                self.fail(where, f"missing {key!r}")
            return np.asarray(default, np.float64)
        v = table[key]
        if (not isinstance(v, list) or len(v) != 3
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)):
            self.fail(where, f"{key} = {_short(v)}: expected three numbers [x, y, z]")
        if not all(_in_float32_range(x) for x in v):
            self.fail(where, f"{key} = {_short(v)}: expected finite numbers within float32 range")
        a = np.asarray(v, np.float64)
        if nonzero and not np.linalg.norm(a) > 0:
            self.fail(where, f"{key} = {v!r}: expected a direction of length > 0")
        return a

    def per_segment(self, where, table, key, segments):
        """A number, a list of ``segments`` numbers or a curve table over the chain's depth
        (:mod:`.curves`, checked there); types and count only: the values are checked by
        the chain set."""
        v = table.get(key, PER_SEGMENT_DEFAULTS[key])
        if is_curve(v):
            try:
                return curve_values(key, v, segments)
            except CurveError as exc:
                self.fail(where, str(exc))
        values = v if isinstance(v, list) else [v]
        if isinstance(v, list) and len(v) != segments:
            self.fail(where, f"{key} has {len(v)} values; expected one, or one per segment ({segments})")
        for i, x in enumerate(values):
            if isinstance(x, bool) or not isinstance(x, (int, float)) or (isinstance(x, int) and not _in_float32_range(x)):
                self.fail(where, f"{key}{f'[{i}]' if isinstance(v, list) else ''} = {_short(x)}: expected a number")
        return np.broadcast_to(np.asarray(values, np.float64), (segments,))

    def joint(self, where, name, key="joint"):
        if not isinstance(name, str):
            self.fail(where, f"{key} = {_short(name)}: expected a joint name (a string)")
        try:
            return self.skeleton.index(name)
        except ValueError:
            self.fail(where, unknown_name("joint", name, self.skeleton.names, listing="the skeleton's joints are:"))

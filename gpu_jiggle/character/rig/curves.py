"""Parameter curves along a chain: a per-segment spring value given as an inline table over
the normalised depth along the chain, instead of a number or one number per segment.

```toml
frequency = { root = 6.0, tip = 3.0 }                    # curve = "linear" (the default)
frequency = { root = 6.0, tip = 3.0, curve = "smooth" }  # smoothstep of the depth
frequency = { root = 6.0, tip = 3.0, curve = [[0.0, 0.0], [0.5, 0.8], [1.0, 1.0]] }
```

Segment i of an n-segment chain has depth ``s = i / (n − 1)`` (0 at the first segment, 1 at
the last; a one-segment chain has depth 0) and takes ``value = root + w(s)·(tip − root)``, the
weight ``w`` blending root (0) into tip (1): ``w = s`` (``"linear"``), ``w = 3s² − 2s³``
(``"smooth"``), or piecewise linear through a list of ``[depth, weight]`` points (at least
two, depths finite, strictly increasing, the first 0 and the last 1; weights finite, and
free to leave [0, 1] to overshoot). Where ``w = 1`` the value is ``tip`` exactly.

:func:`curve_values` is the one place curves are evaluated (the rig reader,
:mod:`gpu_jiggle.character.rig.reader`, and the live changes of
:func:`gpu_jiggle.character.rig.live.changed_parameters`); it checks the table and says what
is wrong in the rig's words (``frequency.curve[1] = [1.5, 0.8]: ...``). The values it gives
are validated afterwards as lists are (f > 0 and the rest, SPEC section 7).
"""
from __future__ import annotations

import math

import numpy as np

from ...sim.validation import FLOAT32_MAX, unknown_name

#: The keys of a curve table, and the named curves.
CURVE_KEYS = ("root", "tip", "curve")
CURVE_NAMES = ("linear", "smooth")
_EXPECTED_CURVE = "'linear', 'smooth' or a list of [depth, weight] points"


class CurveError(ValueError):
    """A curve table that cannot be evaluated; the message starts with the key
    (``frequency.tip = nan: expected a finite number``), the caller adds the file and table."""


class CurveTypeError(CurveError, TypeError):
    """A curve table holding a value of the wrong type (a string or a bool for a number)."""


def is_curve(value) -> bool:
    """Whether ``value`` is given as a curve table (a dict)."""
    return isinstance(value, dict)


def depths(segments: int) -> np.ndarray:
    """(segments,) float64: segment i's normalised depth i / (segments − 1); a one-segment
    chain has depth 0."""
    if segments <= 1:
        return np.zeros(segments, np.float64)
    return np.arange(segments, dtype=np.float64) / (segments - 1)


def curve_values(key: str, table, segments: int) -> np.ndarray:
    """(segments,) float64: the curve table ``table`` of the per-segment value ``key``
    evaluated at each segment's depth (see the module docstring).

    Raises: CurveTypeError (also a TypeError) for a value of the wrong type, CurveError (a
    ValueError) for any other bad table, each naming the key and the value."""
    root, tip, weight = read_curve(key, table)
    w = weight(depths(segments))
    return np.where(w == 1.0, tip, root + w * (tip - root))  # the tip exactly where w = 1


def read_curve(key: str, table):
    """(root, tip, weight function of depth) from a checked curve table."""
    if not isinstance(table, dict):
        raise CurveTypeError(f"{key} = {short(table)}: expected a curve table {{ root = ..., tip = ... }}")
    for k in table:
        if k not in CURVE_KEYS:
            raise CurveError(f"{key} = {short(table)}: {unknown_name('key', k, CURVE_KEYS)}")
    for k, meaning in (("root", "the value at the first segment"), ("tip", "the value at the last segment")):
        if k not in table:
            raise CurveError(f"{key} = {short(table)}: missing {k!r} ({meaning})")
    root, tip = (_number(f"{key}.{k}", table[k]) for k in ("root", "tip"))
    curve = table.get("curve", "linear")
    if isinstance(curve, str):
        if curve not in CURVE_NAMES:
            raise CurveError(f"{key}.curve: {unknown_name('curve', curve, CURVE_NAMES)}")
        return root, tip, (_linear if curve == "linear" else _smooth)
    if not isinstance(curve, list):
        raise CurveTypeError(f"{key}.curve = {short(curve)}: expected {_EXPECTED_CURVE}")
    xs, ys = _points(f"{key}.curve", curve)
    return root, tip, lambda s: np.interp(s, xs, ys)


def _number(name, v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise CurveTypeError(f"{name} = {short(v)}: expected a number")
    if not in_float32_range(v):
        raise CurveError(f"{name} = {short(v)}: expected a finite number"
                         f"{' within float32 range' if _finite(v) else ''}")
    return float(v)


def _points(name, curve):
    """(depths, weights) of a list of [depth, weight] points, checked."""
    if len(curve) < 2:
        raise CurveError(f"{name} = {short(curve)}: expected at least two [depth, weight] points "
                         f"(the first at depth 0, the last at depth 1)")
    xs, ys = [], []
    for i, p in enumerate(curve):
        where = f"{name}[{i}] = {short(p)}"
        if (not isinstance(p, list) or len(p) != 2
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in p)):
            raise CurveTypeError(f"{where}: expected a point [depth, weight] (two numbers)")
        if not all(in_float32_range(x) for x in p):
            raise CurveError(f"{where}: expected finite numbers [depth, weight] within float32 range")
        depth, weight = float(p[0]), float(p[1])
        if not 0.0 <= depth <= 1.0:
            raise CurveError(f"{where}: its depth {p[0]!r} is outside [0, 1]")
        if xs and not depth > xs[-1]:
            raise CurveError(f"{where}: its depth {p[0]!r} is not greater than the previous point's "
                             f"({xs[-1]!r}); the depths must increase strictly")
        xs.append(depth)
        ys.append(weight)
    if xs[0] != 0.0:
        raise CurveError(f"{name}[0] = {short(curve[0])}: the first point's depth must be 0 (the root)")
    if xs[-1] != 1.0:
        raise CurveError(f"{name}[{len(curve) - 1}] = {short(curve[-1])}: the last point's depth must be 1 "
                         f"(the tip)")
    return np.asarray(xs), np.asarray(ys)


def _linear(s):
    return s


def _smooth(s):
    return 3.0 * s**2 - 2.0 * s**3


def _finite(x) -> bool:
    try:
        return math.isfinite(x)
    except OverflowError:  # an int too large for a float
        return True


def in_float32_range(x) -> bool:
    """A finite number no larger in magnitude than float32's largest (big ints included)."""
    try:
        return math.isfinite(x) and abs(x) <= FLOAT32_MAX
    except OverflowError:  # an int too large for a float
        return False


def short(value, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (a hostile file's value may be huge)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."

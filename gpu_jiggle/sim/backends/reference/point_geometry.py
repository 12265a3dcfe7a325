"""Vector geometry for the numpy point-chain reference, as ``shaders/sim/point_geometry.glsl``
writes it: float32 dot, length and cross over rows ((..., 3) arrays), the rotation between two
directions and the axis its half turn carries, stored as a two-float code (SPEC 4, step 2;
SPEC 9 "Swings"), a child's target turned with its parent's bend, and the closest points of
segments, used by the contact and the limit stages.
"""
from __future__ import annotations

import numpy as np

from ... import layouts

F = np.float32
MIN_LENGTH = F(1e-6)
UP = np.array([0.0, 1.0, 0.0], F)


def dot(a, b):
    """(...,) a·b of rows (..., 3), summed x + y, then + z. Rows against rows of the same shape
    take the three products at once (the same bits, at about 60 % of the cost on the small
    arrays of a walk's depth and 75 % on large ones); against one vector, broadcast, that is
    twice as slow on large arrays, so they are taken column by column."""
    if a.shape == b.shape:
        products = a * b
        return products[..., 0] + products[..., 1] + products[..., 2]
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def length(a):
    return np.sqrt(dot(a, a))


def cross(a, b):
    """(..., 3) a × b of rows (..., 3), each component written into its column (no stack to
    copy them: the same bits, at about three quarters of the cost on small arrays)."""
    shape = a.shape if a.shape == b.shape else np.broadcast_shapes(a.shape, b.shape)
    out = np.empty(shape, a.dtype if a.dtype == b.dtype else np.result_type(a, b))
    np.subtract(a[..., 1] * b[..., 2], a[..., 2] * b[..., 1], out=out[..., 0])
    np.subtract(a[..., 2] * b[..., 0], a[..., 0] * b[..., 2], out=out[..., 1])
    np.subtract(a[..., 0] * b[..., 1], a[..., 1] * b[..., 0], out=out[..., 2])
    return out


def safe_divide(a, d):
    """a / d[:, None] where d > 0, else a (the caller masks those rows)."""
    return a / np.where(d > 0, d, F(1))[..., None]


def perpendicular(u):
    """A unit vector perpendicular to each unit u (as ``perpendicular`` in the shader)."""
    axis = np.where((np.abs(u[..., 0]) < F(0.9))[..., None], np.array([1, 0, 0], F), np.array([0, 1, 0], F))
    p = cross(u, axis)
    return safe_divide(p, length(p))


def or_perpendicular(rows, u, value):
    """``value`` with ``perpendicular(u)`` on the rows (bool (n,)) where it is set, worked out
    on those rows alone (the fallback of a degenerate direction: rare, so not paid for by all)."""
    if not rows.any():
        return value
    value = value.copy()
    value[rows] = perpendicular(u[rows])
    return value


#: Within this sine of antiparallel (|u × w| < TURN_AXIS_BLEND with u·w < 0) the half turn of
#: R(u → w) leans on the axis carried over from an earlier evaluation (SPEC 4, step 2).
TURN_AXIS_BLEND = F(0.014142)
#: Below this u·w (where |u × w| = TURN_AXIS_BLEND) R(u → w) is built on the half turn (SPEC 4,
#: step 2); above it (u × w, 1 + u·w) keeps its digits (to about 2e-7/|u × w| rad).
HALF_TURN_COSINE = F(-0.9999)


def turn_axis(u, w, carried):
    """The axis of the half turn that R(u → w) is built on near antiparallel, and the axis to
    carry to the next evaluation (SPEC 4, step 2; as ``turn_axis`` in the shader). Rows (n, 3).

    Returns ``(axis, carried)``: axis, unit and perpendicular to u: u × w where
    |u × w| >= TURN_AXIS_BLEND; nearer antiparallel, where u × w loses its digits, u × w plus
    the carried axis (its sign taken along u × w) times TURN_AXIS_BLEND - |u × w|;
    ``perpendicular(u)`` where both vanish. carried: the one given (its sign along u × w) where
    |u × w| <= TURN_AXIS_BLEND, so that within the blend it does not drift; turned towards
    u × w (unit) by (|u × w|/TURN_AXIS_BLEND - 1) of the way and normalised up to twice that,
    u × w beyond, and past a right angle where none was carried yet (0); the one given where
    u·w >= 0 or a direction has no length."""
    lu, lw = length(u), length(w)
    degenerate = (lu < MIN_LENGTH) | (lw < MIN_LENGTH)
    u, w = safe_divide(u, lu), safe_divide(w, lw)
    v = cross(u, w)
    lv = length(v)
    along = np.where(dot(carried, v) < F(0), F(-1), F(1))
    n = v + (along * np.maximum(TURN_AXIS_BLEND - lv, F(0)))[..., None] * carried
    n = n - dot(n, u)[..., None] * u
    ln = length(n)
    n = or_perpendicular(ln < MIN_LENGTH, u, safe_divide(n, ln))
    # carried on: from the carried axis (its sign along u × w) to u × w as |u × w| goes from
    # TURN_AXIS_BLEND to twice it; u × w past a right angle where none was carried yet
    renew = np.clip(lv / TURN_AXIS_BLEND - F(1), F(0), F(1))
    first = (dot(u, w) < F(0)) & (dot(carried, carried) == F(0)) & (lv >= MIN_LENGTH)
    renew = np.where(first, F(1), renew)
    k = renew[..., None] * safe_divide(v, lv) + ((F(1) - renew) * along)[..., None] * carried
    kept = safe_divide(k, length(k))
    unused = degenerate | (dot(u, w) >= F(0))  # short of a right angle nothing is carried on
    return np.where(degenerate[..., None], carried, n), np.where(unused[..., None], carried, kept)


#: A carried axis code's first component is stored plus this (SPEC 9, "Swings").
AXIS_CODE_SHIFT = F(layouts.AXIS_CODE_SHIFT)


def axis_code(n):
    """The codes (..., 2) of carried axes n (..., 3), unit or 0, as ``axis_code`` in the shader
    (SPEC 9, "Swings"): the octahedral code, n over |x| + |y| + |z| with the lower half folded
    out onto the square's corners (Meyer et al., "On Floating-Point Normal Vectors", 2010),
    its first component plus AXIS_CODE_SHIFT; (0, 0) for n = 0, none carried yet."""
    l1 = np.abs(n[..., 0]) + np.abs(n[..., 1]) + np.abs(n[..., 2])
    p = n[..., :2] / np.where(l1 == F(0), F(1), l1)[..., None]
    folded = (F(1) - np.abs(p[..., ::-1])) * np.where(p >= F(0), F(1), F(-1))
    p = np.where((n[..., 2] < F(0))[..., None], folded, p)
    code = np.stack([p[..., 0] + AXIS_CODE_SHIFT, p[..., 1]], axis=-1)
    return np.where((l1 == F(0))[..., None], F(0), code).astype(F)


def axis_from_code(code):
    """The unit axes (..., 3) of codes (..., 2) made by :func:`axis_code` (as
    ``axis_from_code`` in the shader); 0 for none carried (a first component below
    AXIS_CODE_SHIFT - 1)."""
    p = np.stack([code[..., 0] - AXIS_CODE_SHIFT, code[..., 1]], axis=-1)
    z = F(1) - np.abs(p[..., 0]) - np.abs(p[..., 1])
    folded = (F(1) - np.abs(p[..., ::-1])) * np.where(p >= F(0), F(1), F(-1))
    n = np.concatenate([np.where((z < F(0))[..., None], folded, p), z[..., None]], axis=-1)
    n = n / length(n)[..., None]
    return np.where((code[..., 0] < AXIS_CODE_SHIFT - F(1))[..., None], F(0), n).astype(F)


def follow_parent(u, w, a, axis):
    """Each a turned by R(u → w) (SPEC 4, step 2): for u·w >= HALF_TURN_COSINE the smallest
    rotation taking u onto w; below, the half turn about ``axis`` (:func:`turn_axis`) followed
    by the smallest rotation taking -u onto w. a itself where a direction has no length."""
    lu, lw = length(u), length(w)
    degenerate = (lu < MIN_LENGTH) | (lw < MIN_LENGTH)
    u, w = safe_divide(u, lu), safe_divide(w, lw)
    c = dot(u, w)
    wide = c < HALF_TURN_COSINE
    # nearer antiparallel: a's half turn about the axis, then the turn from -u onto w
    b = np.where(wide[..., None], F(2) * dot(axis, a)[..., None] * axis - a, a)
    u = np.where(wide[..., None], -u, u)
    c = np.where(wide, -c, c)
    v = cross(u, w)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = b * c[..., None] + cross(v, b) + v * (dot(v, b) / (F(1) + c))[..., None]
    return np.where(degenerate[..., None], a, out)


def rotation_between(u, w, axis):
    """Quaternions (x, y, z, w) of R(u → w) (as :func:`follow_parent` turns vectors): for
    u·w >= HALF_TURN_COSINE the smallest rotation taking u onto w, (u × w, 1 + u·w)
    normalised; below, the smallest rotation taking -u onto w times the half turn (axis, 0) about ``axis``
    (:func:`turn_axis`), which is the smallest rotation taking u onto w where the axis is
    u × w, and keeps its digits up to antiparallel. Identity where a direction has no length."""
    lu, lw = length(u), length(w)
    degenerate = (lu < MIN_LENGTH) | (lw < MIN_LENGTH)
    u, w = safe_divide(u, lu), safe_divide(w, lw)
    c = dot(u, w)
    wide = c < HALF_TURN_COSINE
    u = np.where(wide[..., None], -u, u)
    c = np.where(wide, -c, c)
    q = np.concatenate([cross(u, w), (F(1) + c)[..., None]], axis=-1)
    q = q / np.sqrt(np.sum(q * q, axis=-1, dtype=F))[..., None].clip(min=F(1e-30))
    half = np.concatenate([q[..., 3:4] * axis + cross(q[..., :3], axis), -dot(q[..., :3], axis)[..., None]], axis=-1)
    q = np.where(wide[..., None], half, q)
    return np.where(degenerate[..., None], np.array([0, 0, 0, 1], F), q)


def segment_fraction(a, b, x):
    """Where on each segment [a, b] the point closest to x lies, as a fraction in [0, 1]."""
    ab = b - a
    return np.clip(dot(x - a, ab) / np.maximum(dot(ab, ab), F(1e-12)), F(0), F(1))


def closest_on_segment(a, b, x):
    return a + segment_fraction(a, b, x)[..., None] * (b - a)


def closest_to_segment(a, b, p, x):
    """The points of segments [a, b] closest to segments [p, x]."""
    d1, d2, r = b - a, x - p, a - p
    aa, ee, f, cc, bb = dot(d1, d1), dot(d2, d2), dot(d2, r), dot(d1, r), dot(d1, d2)
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = aa * ee - bb * bb
        s = np.where(denom > F(1e-12), np.clip((bb * f - cc * ee) / denom, F(0), F(1)), F(0))
        t = (bb * s + f) / ee
        s = np.where(t < F(0), np.clip(-cc / aa, F(0), F(1)), np.where(t > F(1), np.clip((bb - cc) / aa, F(0), F(1)), s))
        s = np.where(ee < F(1e-12), np.clip(-cc / aa, F(0), F(1)), s)
        s = np.where(aa < F(1e-12), F(0), s)
    return a + s[..., None] * d1

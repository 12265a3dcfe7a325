"""Vector geometry for the numpy point-chain reference, as ``shaders/sim/point_contact.glsl``
writes it: float32 dot, length and cross over rows ((..., 3) arrays), the rotation between two
directions (SPEC 4; the swings read back, SPEC 9 "Swings"), a child's target turned with its
parent's bend, and the closest points of segments, used by the contact and the limit stages.
"""
from __future__ import annotations

import numpy as np

F = np.float32
MIN_LENGTH = F(1e-6)
UP = np.array([0.0, 1.0, 0.0], F)


def dot(a, b):
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def length(a):
    return np.sqrt(dot(a, a))


def cross(a, b):
    return np.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                     a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)


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


def follow_parent(u, w, a):
    """Each a turned by the smallest rotation taking u onto w (SPEC 4, step 2)."""
    lu, lw = length(u), length(w)
    degenerate = (lu < MIN_LENGTH) | (lw < MIN_LENGTH)
    u, w = safe_divide(u, lu), safe_divide(w, lw)
    c = dot(u, w)
    v = cross(u, w)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = a * c[..., None] + cross(v, a) + v * (dot(v, a) / (F(1) + c))[..., None]
    opposite = c < F(-0.9999)
    if opposite.any():  # a half turn about an axis perpendicular to u
        axis, a_rows = perpendicular(u[opposite]), a[opposite]
        out[opposite] = F(2) * dot(axis, a_rows)[..., None] * axis - a_rows
    return np.where(degenerate[..., None], a, out)


def rotation_between(u, w):
    """Quaternions (x, y, z, w) of the smallest rotations taking u onto w."""
    lu, lw = length(u), length(w)
    degenerate = (lu < MIN_LENGTH) | (lw < MIN_LENGTH)
    u, w = safe_divide(u, lu), safe_divide(w, lw)
    c = dot(u, w)
    q = np.concatenate([cross(u, w), (F(1) + c)[..., None]], axis=-1)
    q = q / np.sqrt(np.sum(q * q, axis=-1, dtype=F))[..., None].clip(min=F(1e-30))
    opposite = c < F(-0.9999)
    if opposite.any():  # a half turn about an axis perpendicular to u
        q[opposite] = np.concatenate([perpendicular(u[opposite]), np.zeros((int(opposite.sum()), 1), F)], axis=-1)
    return np.where(degenerate[..., None], np.array([0, 0, 0, 1], F), q)


def swing_between(u, w):
    """Quaternions (x, y, z, w) of the smallest rotations taking u onto w for the swings and
    world rotations read back (as ``swing_between`` in the shader): past a right angle built
    on the half-way direction s = u + w, accurate up to antiparallel; a half turn about an axis
    perpendicular to u only where |u + w| < MIN_LENGTH."""
    lu, lw = length(u), length(w)
    degenerate = (lu < MIN_LENGTH) | (lw < MIN_LENGTH)
    u, w = safe_divide(u, lu), safe_divide(w, lw)
    c = dot(u, w)
    s = u + w
    wide = c < F(0)
    q = np.concatenate([np.where(wide[..., None], cross(u, s), cross(u, w)),
                        np.where(wide, dot(u, s), F(1) + c)[..., None]], axis=-1)
    q = q / np.sqrt(np.sum(q * q, axis=-1, dtype=F))[..., None].clip(min=F(1e-30))
    opposite = length(s) < MIN_LENGTH
    if opposite.any():  # a half turn about an axis perpendicular to u
        q[opposite] = np.concatenate([perpendicular(u[opposite]), np.zeros((int(opposite.sum()), 1), F)], axis=-1)
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

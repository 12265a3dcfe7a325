"""How deep segments lie inside colliders, in float64, for the contact checks (SPEC 8.8).

A sphere's depth is the closed-form distance from its centre to the segment. For a capsule,
the distance from its axis (a convex set) to the points of a segment is a convex function
along the segment, so its minimum is found by a golden-section search, exact to far below the
checks' limits whatever the geometry (crossing, grazing or parallel segments alike).
"""
from __future__ import annotations

import numpy as np

_GOLDEN = (np.sqrt(5.0) - 1.0) / 2.0
_ITERATIONS = 48  # the bracket shrinks to 0.618^48 ≈ 1e-10 of the segment


def point_segment_distance(p, a, b):
    """Distance from points ``p`` (..., 3) to the segments [a, b] (..., 3), broadcast."""
    ab = b - a
    t = np.clip(np.sum((p - a) * ab, axis=-1) / np.maximum(np.sum(ab * ab, axis=-1), 1e-300), 0.0, 1.0)
    return np.linalg.norm(p - (a + t[..., None] * ab), axis=-1)


def _segment_minimum(distance, a, b):
    """min over s in [0, 1] of distance(a + s·(b - a)), for a convex distance; (...,).
    ``distance`` takes points (2, ..., 3): each step's two probes go in one call."""
    lo, hi = np.zeros(a.shape[:-1]), np.ones(a.shape[:-1])
    ab = b - a
    probes = np.empty((2,) + lo.shape)
    for _ in range(_ITERATIONS):
        np.subtract(hi, _GOLDEN * (hi - lo), out=probes[0])
        np.add(lo, _GOLDEN * (hi - lo), out=probes[1])
        f = distance(a + probes[..., None] * ab)
        nearer = f[0] < f[1]
        lo, hi = np.where(nearer, lo, probes[0]), np.where(nearer, probes[1], hi)
    s = (lo + hi) / 2
    ends = np.minimum(distance(a), distance(b))
    return np.minimum(distance(a + s[..., None] * (b - a)), ends)


def _axis_distance(ca, cb):
    """``point_segment_distance(p, ca, cb)`` as a function of ``p``, with what depends on the
    segment alone worked out once (the same operations, so the same results)."""
    axis = cb - ca
    axis_squared = np.maximum(np.sum(axis * axis, axis=-1), 1e-300)

    def distance(p):
        t = np.clip(np.add.reduce((p - ca) * axis, axis=-1) / axis_squared, 0.0, 1.0)
        off = p - (ca + t[..., None] * axis)
        return np.sqrt(np.add.reduce(off * off, axis=-1))
    return distance


def sphere_segment_depth(centre, radius, a, b):
    """``radius`` minus the distance from ``centre`` (3,) to each segment [a, b] (..., 3):
    how deep each segment reaches inside the sphere (negative: outside)."""
    return radius - point_segment_distance(np.asarray(centre, np.float64), a, b)


def capsule_segment_depth(capsule, a, b):
    """``capsule`` (7,): end points and radius. Its radius minus each segment's distance
    from its axis: how deep each segment [a, b] (..., 3) reaches inside (negative: outside)."""
    ca, cb, r = np.asarray(capsule[:3]), np.asarray(capsule[3:6]), float(capsule[6])
    return r - _segment_minimum(_axis_distance(ca, cb), a, b)

"""Limits of the numba peer's point chains (see :mod:`gpu_jiggle.bench.peer_numba`), one
particle at a time in float32: the max distance from the target (SPEC 4 step 2) and the cone
angle limit about the segment's target direction (SPEC 9, "Angle limits"). Hinge and
spherical limits, which need the joints' animated rotations, are left out.

A segment without a limit has an infinite max distance and an infinite cone half-angle
(a half-angle of π or more is no limit: the peer stores it as infinite).
"""
from __future__ import annotations

import math

import numpy as np

from .peer_numba_geometry import (MIN_LENGTH, ZERO, add, cross, div, dot, jit, norm, perpendicular, safe_divide,
                                  scale, sub)

F = np.float32
NO_LIMIT = F(np.inf)


@jit
def limit_distance(max_distance, t, x, v):
    """SPEC 4 step 2, max distance: a particle x further than ``max_distance`` (length units)
    from its target t is put back on that sphere, its velocity away from t removed."""
    e = sub(x, t)
    d = norm(e)
    if not d > max_distance:
        return x, v
    n = safe_divide(e, d)
    return add(t, scale(n, max_distance)), sub(v, scale(n, max(dot(v, n), ZERO)))


@jit
def limit_cone(beta, base, a, un, lu, v_t, x, v):
    """SPEC 9, "Angle limits", the cone of half-angle ``beta`` (rad) about the unit target
    direction a: a segment (unit direction un, length lu) further out is turned onto the cone
    in the plane of a and un, its length kept; the tip's velocity relative to the target's
    (``v_t``, length/s) loses its part out of the cone (β = 0: its part across a)."""
    if not math.atan2(norm(cross(un, a)), dot(un, a)) > beta:
        return x, v
    side = sub(un, scale(a, dot(un, a)))
    ls = norm(side)
    side = perpendicular(a) if ls < MIN_LENGTH else div(side, ls)
    cos_b, sin_b = math.cos(beta), math.sin(beta)
    x = add(base, scale(add(scale(a, cos_b), scale(side, sin_b)), lu))
    relative = sub(v, v_t)
    if beta == ZERO:
        return x, sub(v, sub(relative, scale(a, dot(relative, a))))
    outward = sub(scale(side, cos_b), scale(a, sin_b))
    return x, sub(v, scale(outward, max(dot(relative, outward), ZERO)))


@jit
def limit_angle(beta, base, t, v_t, x, v):
    """SPEC 9, "Angle limits" (its cone kind): the segment base → x kept within ``beta`` (rad;
    infinite: no limit) of its target direction t - base; nothing where either has no length."""
    if not beta < NO_LIMIT:
        return x, v
    a, u = sub(t, base), sub(x, base)
    la, lu = norm(a), norm(u)
    if la < MIN_LENGTH or lu < MIN_LENGTH:
        return x, v
    return limit_cone(beta, base, div(a, la), div(u, lu), lu, v_t, x, v)

"""Limits of the Warp peer's point chains (see :mod:`gpu_jiggle.bench.peer_warp`), one particle at
a time in float32: the max distance from the target (SPEC 4 step 2) and the cone angle limit
about the segment's target direction (SPEC 9, "Angle limits"). Hinge and spherical limits,
which need the joints' animated rotations, are left out.

A segment without a limit has an infinite max distance and an infinite cone half-angle (a
half-angle of π or more is no limit: the peer stores it as infinite).
"""
from __future__ import annotations

from .peer_warp_geometry import MIN_LENGTH, NO_LIMIT, perpendicular, safe_divide, wp


@wp.func
def limit_distance(max_distance: float, t: wp.vec3, x: wp.vec3, v: wp.vec3):
    """SPEC 4 step 2, max distance: a particle x further than ``max_distance`` (length units)
    from its target t is put back on that sphere, its velocity away from t removed (nothing for
    an infinite one)."""
    if not (max_distance < NO_LIMIT):
        return x, v
    e = x - t
    d = wp.length(e)
    if not (d > max_distance):
        return x, v
    n = safe_divide(e, d)
    return t + n * max_distance, v - n * wp.max(wp.dot(v, n), 0.0)


@wp.func
def limit_cone(beta: float, base: wp.vec3, a: wp.vec3, un: wp.vec3, lu: float, v_t: wp.vec3, x: wp.vec3,
               v: wp.vec3):
    """SPEC 9, "Angle limits", the cone of half-angle ``beta`` (rad) about the unit target
    direction a: a segment (unit direction un, length lu) further out is turned onto the cone
    in the plane of a and un, its length kept; the tip's velocity relative to the target's
    (``v_t``, length/s) loses its part out of the cone (β = 0: its part across a)."""
    if not (wp.atan2(wp.length(wp.cross(un, a)), wp.dot(un, a)) > beta):
        return x, v
    side = un - a * wp.dot(un, a)
    ls = wp.length(side)
    if ls < MIN_LENGTH:
        side = perpendicular(a)
    else:
        side = side / ls
    cos_b = wp.cos(beta)
    sin_b = wp.sin(beta)
    out = base + (a * cos_b + side * sin_b) * lu
    relative = v - v_t
    if beta == 0.0:
        return out, v - (relative - a * wp.dot(relative, a))
    outward = side * cos_b - a * sin_b
    return out, v - outward * wp.max(wp.dot(relative, outward), 0.0)


@wp.func
def limit_angle(beta: float, base: wp.vec3, t: wp.vec3, v_t: wp.vec3, x: wp.vec3, v: wp.vec3):
    """SPEC 9, "Angle limits" (its cone kind): the segment base → x kept within ``beta`` (rad;
    infinite: no limit) of its target direction t - base; nothing where either has no length."""
    if not (beta < NO_LIMIT):
        return x, v
    a = t - base
    u = x - base
    la = wp.length(a)
    lu = wp.length(u)
    if la < MIN_LENGTH or lu < MIN_LENGTH:
        return x, v
    return limit_cone(beta, base, a / la, u / lu, lu, v_t, x, v)

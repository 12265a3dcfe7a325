"""Swept contact for the numpy point-chain reference (SPEC 9, "Swept contact"), as
``sweep_past``, ``sweep_particle``, ``sweep_segment_past`` and ``sweep_segment`` in
``shaders/sim/point_sweep.glsl``: a particle's, or a segment's nearest point's, straight path
over the substep in the frame of a collider that moved by ``move``, tested against the sphere
it ends as; arrays are rows over the chains of one depth, float32.
"""
from __future__ import annotations

import numpy as np

from .reference_geometry import F, closest_to_segment, dot, length, safe_divide, segment_fraction


def sweep_past(q, r, start, h, move, x, v, active):
    """SPEC 9, swept contact (as ``sweep_past`` in the shader), in the frame of a collider
    that moved by ``move`` over the substep h and ends as the sphere (q, r): a point whose path
    from ``start`` (already in that frame) to x, longer than r/2, enters the sphere, having
    started outside it or on it,
    ends on the near side of the tangent plane at the point where it entered, and its velocity
    into the collider, relative to the collider's own (move/h), is removed. The first root of
    |start - q + τ·(x - start)| = r is taken as ``c / (-b + √(b² - a·c))``, which has no
    cancellation and no division by a path of no length. Returns x, v and where it acted."""
    e, d = start - q, x - start
    b = dot(e, d)
    c = dot(e, e) - r * r
    disc = b * b - dot(d, d) * c
    # Only a path longer than half the radius (shorter ones cannot pass through; a particle
    # resting on the surface stays the particle stage's, never decided by rounding), started
    # outside or on the surface (to 1e-3 of r).
    fast = dot(d, d) > (F(0.5) * r) * (F(0.5) * r)
    hit = active & fast & (c >= F(-2e-3) * r * r) & (b < 0) & (disc > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = c / (-b + np.sqrt(np.maximum(disc, F(0))))
    hit &= tau <= F(1)
    if not hit.any():
        return x, v, hit
    n = e + np.where(hit, np.maximum(tau, F(0)), F(0))[..., None] * d
    n = safe_divide(n, length(n))
    xq = x - q
    depth = r - dot(xq, n)
    # An end inside on the side it came in from is left to the particle stage's push-out
    # (so a particle resting on the surface is never decided by rounding between the two).
    hit &= (depth > 0) & ((dot(xq, xq) >= r * r) | (dot(xq, n) < 0))
    x = np.where(hit[..., None], x + np.where(hit, depth, F(0))[..., None] * n, x)
    relative = dot(v - move / h, n)
    v = np.where(hit[..., None], v - np.minimum(relative, F(0))[..., None] * n, v)
    return x, v, hit


def sweep_particle(ct, rho, h, start, x, v):
    """SPEC 9, swept contact of a particle that moved from ``start`` to x over the substep:
    spheres, then capsules (a capsule as the sphere about the point of its axis nearest the
    path, which the path enters exactly when it enters the capsule)."""
    for (active, centre, radius), move in zip(ct.spheres, ct.sphere_moves):
        x, v, _ = sweep_past(centre, radius + rho, start + move, h, move, x, v, active)
    for (active, a, b, radius), (move_a, move_b) in zip(ct.capsules, ct.capsule_moves):
        f = segment_fraction(a - move_a, b - move_b, start)[..., None]
        move = move_a + f * (move_b - move_a)
        moved_start = start + move
        x, v, _ = sweep_past(closest_to_segment(a, b, moved_start, x), radius + rho, moved_start, h, move, x, v,
                             active)
    return x, v


def sweep_segment_past(q, r, base_start, start, h, move, base, x, v, active):
    """SPEC 9, swept contact of a segment (as ``sweep_segment_past``), in the collider's frame
    (it ends as the sphere (q, r), having moved by ``move``): the segment's point that passes
    nearest q (the one nearest q at the middle of the substep, at fraction f) is swept as a
    particle from ``base_start + f·(start - base_start)``; where it went through, the segment
    turns about its base onto the side it came from (towards x moved by the point's push-out
    over f), its length kept, and the tip's velocity into the collider, relative to the
    collider's, is removed."""
    mid_base, mid_x = F(0.5) * (base_start + base), F(0.5) * (start + x)
    f = np.maximum(segment_fraction(mid_base, mid_x, q), F(1e-3))[..., None]
    point = base + f * (x - base)
    swept, _, hit = sweep_past(q, r, base_start + f * (start - base_start), h, move, point, np.zeros_like(v), active)
    if not hit.any():
        return x, v
    u = x + (swept - point) / f - base
    lu = length(x - base)
    turned = base + safe_divide(u, length(u)) * lu[..., None]
    n = safe_divide(swept - point, length(swept - point))
    relative = dot(v - move / h, n)
    new_v = v - np.minimum(relative, F(0))[..., None] * n
    return np.where(hit[..., None], turned, x), np.where(hit[..., None], new_v, v)


def sweep_segment(ct, rho, h, base_start, start, base, x, v):
    """SPEC 9, swept contact of the segment from base to x (from base_start to start at the
    start of the substep): spheres, then capsules (each as the sphere about the point of its
    axis nearest the segment, moved as that point moved)."""
    for (active, centre, radius), move in zip(ct.spheres, ct.sphere_moves):
        x, v = sweep_segment_past(centre, radius + rho, base_start + move, start + move, h, move, base, x, v, active)
    for (active, a, b, radius), (move_a, move_b) in zip(ct.capsules, ct.capsule_moves):
        f = segment_fraction(a - move_a, b - move_b, F(0.5) * (base_start + start))[..., None]
        move = move_a + f * (move_b - move_a)
        q = closest_to_segment(a, b, base, x)
        x, v = sweep_segment_past(q, radius + rho, base_start + move, start + move, h, move, base, x, v, active)
    return x, v

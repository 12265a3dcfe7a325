"""Swept contact for the numpy point-chain reference (SPEC 9, "Swept contact"), as
``sweep_past``, ``sweep_particle``, ``sweep_segment_past`` and ``sweep_segment`` in
``shaders/sim/point_sweep.glsl``: a particle's, or a segment's nearest point's, straight path
over the substep in the frame of a collider that moved by ``move``, tested against the sphere
it ends as; arrays are rows over the chains of one depth, float32. ``contact_substeps``: how
many sub-steps a chain's substep takes where a collider moves fast relative to it.
"""
from __future__ import annotations

import numpy as np

from .point_geometry import F, closest_on_segment, closest_to_segment, dot, length, safe_divide, segment_fraction


def sweep_past(q, r, start, rate, x, v, active):
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
    relative = dot(v - rate, n)
    v = np.where(hit[..., None], v - np.minimum(relative, F(0))[..., None] * n, v)
    return x, v, hit


def sweep_particle(ct, rho, h, start, x, v):
    """SPEC 9, swept contact of a particle that moved from ``start`` to x over the substep:
    spheres, then capsules (a capsule as the sphere about the point of its axis nearest the
    path, which the path enters exactly when it enters the capsule)."""
    for (active, centre, radius), move in zip(ct.spheres, ct.sphere_moves):
        x, v, _ = sweep_past(centre, radius + rho, start + move, ct.collider_rate(move, h), x, v, active)
    for (active, a, b, radius), (move_a, move_b) in zip(ct.capsules, ct.capsule_moves):
        f = segment_fraction(a - move_a, b - move_b, start)[..., None]
        move = move_a + f * (move_b - move_a)
        moved_start = start + move
        x, v, _ = sweep_past(closest_to_segment(a, b, moved_start, x), radius + rho, moved_start,
                             ct.collider_rate(move, h), x, v, active)
    return x, v


def sweep_segment_past(q, r, base_start, start, rate, base, x, v, active):
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
    swept, _, hit = sweep_past(q, r, base_start + f * (start - base_start), rate, point, np.zeros_like(v), active)
    if not hit.any():
        return x, v
    u = x + (swept - point) / f - base
    lu = length(x - base)
    turned = base + safe_divide(u, length(u)) * lu[..., None]
    n = safe_divide(swept - point, length(swept - point))
    relative = dot(v - rate, n)
    new_v = v - np.minimum(relative, F(0))[..., None] * n
    return np.where(hit[..., None], turned, x), np.where(hit[..., None], new_v, v)


def sweep_segment(ct, rho, h, base_start, start, base, x, v):
    """SPEC 9, swept contact of the segment from base to x (from base_start to start at the
    start of the substep): spheres, then capsules (each as the sphere about the point of its
    axis nearest the segment, moved as that point moved)."""
    for (active, centre, radius), move in zip(ct.spheres, ct.sphere_moves):
        x, v = sweep_segment_past(centre, radius + rho, base_start + move, start + move, ct.collider_rate(move, h), base,
                                  x, v, active)
    for (active, a, b, radius), (move_a, move_b) in zip(ct.capsules, ct.capsule_moves):
        f = segment_fraction(a - move_a, b - move_b, F(0.5) * (base_start + start))[..., None]
        move = move_a + f * (move_b - move_a)
        q = closest_to_segment(a, b, base, x)
        x, v = sweep_segment_past(q, radius + rho, base_start + move, start + move, ct.collider_rate(move, h), base, x,
                                  v, active)
    return x, v


#: SPEC 9, contact sub-steps: a chain's substep is split into sub-steps only where a collider
#: near it moves, relative to the chain's pivot, more than this many times its radius (with the
#: chain's smallest particle radius) in one substep, the regime where it can pass through a
#: joint or segment between two substeps (CONTACT_SUBSTEP_TRIGGER in the shader).
CONTACT_SUBSTEP_TRIGGER = F(0.6)
#: SPEC 9, contact sub-steps: once split, no such collider moves more than this fraction of its
#: radius (with ρ) relative to the pivot in one sub-step (CONTACT_STEP_FRACTION in the shader).
CONTACT_STEP_FRACTION = F(1) / F(2)


def contact_substeps(ct, moved, reach, rho, cap):
    """SPEC 9, contact sub-steps (as ``contact_substeps`` in the shader): (n,) int, how many
    equal sub-steps each chain's substep takes, from its colliders (``ct``: the contact at the
    substep's end, with the colliders' moves), its pivot's move ``moved`` (n, 3) over the
    substep, its reach (n,) (rest lengths and largest particle radius; the chain lies within it
    of its pivot) and its smallest particle radius ``rho`` (n,). A sphere or capsule counts
    where its path passes within its radius of the ball about the pivot's path middle that
    holds the chain over the substep, and its move relative to the pivot is over
    CONTACT_SUBSTEP_TRIGGER times its radius with ρ; then ceil(|move| / (fraction·(r + ρ))), the
    largest over the chain's colliders, at most ``cap`` (the frame's contact_substep_cap).
    Returns (k, whether the cap cut it)."""
    n = len(moved)
    need = np.ones(n, F)
    middle = F(-0.5) * moved
    ball = reach + F(0.5) * length(moved)

    def count(active, distance, radius, relative):
        size = CONTACT_STEP_FRACTION * (radius + rho)
        near = active & (size > 0) & (distance <= ball + radius) & (relative > CONTACT_SUBSTEP_TRIGGER * (radius + rho))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(near, np.ceil(relative / size), F(1))
    for (active, centre, radius), move in zip(ct.spheres, ct.sphere_moves):
        path = closest_on_segment(centre - move, centre, middle)
        need = np.maximum(need, count(active, length(middle - path), radius, length(move - moved)))
    for (active, a, b, radius), (move_a, move_b) in zip(ct.capsules, ct.capsule_moves):
        sweep = np.maximum(length(move_a), length(move_b))
        distance = length(middle - closest_on_segment(a, b, middle)) - sweep
        relative = np.maximum(length(move_a - moved), length(move_b - moved))
        need = np.maximum(need, count(active, distance, radius, relative))
    cap = F(max(int(cap), 1))
    return np.minimum(need, cap).astype(np.int64), need > cap

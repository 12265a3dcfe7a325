"""The segment stage of the Warp peer's point-chain contact (see :mod:`gpu_jiggle.bench.peer_warp`
and :mod:`.peer_warp_contact`), one segment at a time in float32 world coordinates, with the
stage names of SPEC 4 and 9: after the length step ``settle_contact`` (``sweep_segment``,
``keep_outside`` with ``slide_out``, ``segment_out_of_sphere`` and ``turn_out_of_crevice``,
then the particle stage's ``collide`` again), and the frame-time push-out
(``push_out_of_frame``).

The colliders come as in :mod:`.peer_warp_contact` (``paths``, ``spheres``, ``colliders``,
placed at ``w``); ρ the particle's radius, a segment's base and tip (x) world, length units;
h the substep's length (s); rest_length the segment's (length units).
"""
from __future__ import annotations

from .peer_warp_colliders import Placement, capsule_at, round_collider, sphere_at
from .peer_warp_contact import CONTACT_PASSES, Paths, collide, contact_possible, deepest_round, sweep_past
from .peer_warp_geometry import (MIN_LENGTH, closest_on_segment, closest_to_segment, perpendicular, ring_point,
                                 safe_divide, segment_fraction, unit, wp)

#: A tip left deeper than this fraction of r + ρ inside a collider after the segment passes
#: turns out of the crevice (SPEC 9, overlapping colliders).
CREVICE_DEPTH = wp.constant(1e-5)
#: Swept contact of a segment: the least fraction along it of the point swept.
SEGMENT_FRACTION_FLOOR = wp.constant(1e-3)


# -- the segment stage ----------------------------------------------------------------------
@wp.func
def sweep_segment_past(q: wp.vec3, r: float, base_start: wp.vec3, start: wp.vec3, rate: wp.vec3, base: wp.vec3,
                       x: wp.vec3, v: wp.vec3):
    """SPEC 9, swept contact of a segment in the collider's frame (it ends as the sphere
    (q, r)): its point at the fraction f nearest q at mid-substep is swept as a particle from
    where it was; where it went through, the segment turns about its base onto the side it
    came from, its length kept, the tip's velocity into the collider (relative) removed."""
    f = wp.max(segment_fraction((base_start + base) * 0.5, (start + x) * 0.5, q), SEGMENT_FRACTION_FLOOR)
    point = base + (x - base) * f
    swept, unused, hit = sweep_past(q, r, base_start + (start - base_start) * f, rate, point, wp.vec3(0.0))
    if not hit:
        return x, v
    push = swept - point
    u = x + push / f - base
    turned = base + unit(u) * wp.length(x - base)
    n = unit(push)
    return turned, v - n * wp.min(wp.dot(v - rate, n), 0.0)


@wp.func
def sweep_segment(paths: Paths, spheres: int, colliders: int, w: Placement, rho: float, h: float,
                  base_start: wp.vec3, start: wp.vec3, base: wp.vec3, x_in: wp.vec3, v_in: wp.vec3):
    """SPEC 9, swept contact of the segment base-x (base_start-start at the substep's start):
    spheres, then capsules (as the sphere about the axis point nearest the segment, moved as
    the axis point nearest its mid-substep moved)."""
    x = x_in
    v = v_in
    for k in range(colliders):
        if k < spheres:
            centre, radius, move = sphere_at(paths, k, w)
            x, v = sweep_segment_past(centre, radius + rho, base_start + move, start + move, move / h, base, x, v)
        else:
            a, b, radius, move_a, move_b = capsule_at(paths, k, w)
            f = segment_fraction(a - move_a, b - move_b, (base_start + start) * 0.5)
            move = move_a + (move_b - move_a) * f
            q = closest_to_segment(a, b, base, x)
            x, v = sweep_segment_past(q, radius + rho, base_start + move, start + move, move / h, base, x, v)
    return x, v


@wp.func
def slide_out(base: wp.vec3, rest_length: float, q: wp.vec3, r: float, x: wp.vec3, v: wp.vec3):
    """SPEC 9: a tip inside the ball (q, r) slides back out along its length sphere about base,
    to the nearest point of the ring where the two spheres meet; its velocity into the ball
    removed."""
    delta = x - q
    bq = q - base
    d = wp.length(bq)
    if not (wp.dot(delta, delta) < r * r and d >= MIN_LENGTH):
        return x, v
    axis = bq / d
    h = (d * d + rest_length * rest_length - r * r) / (2.0 * d)
    ring2 = rest_length * rest_length - h * h
    if not (ring2 > 0.0):
        return x, v
    out = ring_point(base + axis * h, axis, wp.sqrt(ring2), x)
    n = unit(out - q)
    return out, v - n * wp.min(wp.dot(v, n), 0.0)


@wp.func
def segment_out_of_sphere(base: wp.vec3, q: wp.vec3, r: float, h: float, rate: wp.vec3, x: wp.vec3, v: wp.vec3):
    """SPEC 4, segments: a segment passing through the ball (q, r) between its ends turns about
    its base until it touches it; the tip's velocity takes the turn over h but leaves the
    collider (moving at ``rate``) no faster than before, or than the collider (SPEC 9)."""
    d = q - base
    dq = wp.length(d)
    lu = wp.length(x - base)
    u = safe_divide(x - base, lu)
    along = wp.dot(d, u)
    if not (dq >= MIN_LENGTH and lu >= MIN_LENGTH and along > 0.0 and along < lu
            and wp.length(d - u * along) < r):
        return x, v
    dh = d / dq
    side = u - dh * wp.dot(u, dh)
    ls = wp.length(side)
    if ls < MIN_LENGTH:
        side = perpendicular(dh)
    else:
        side = safe_divide(side, ls)
    sine = wp.min(r / dq, 1.0)
    turned = dh * wp.sqrt(wp.max(1.0 - sine * sine, 0.0)) + side * sine
    new_x = base + turned * lu
    push = new_x - x
    new_v = v + push / h
    n = unit(push)
    excess = wp.dot(new_v - rate, n) - wp.max(wp.dot(v - rate, n), 0.0)
    return new_x, new_v - n * wp.max(excess, 0.0)


@wp.func
def turn_out_of_crevice(paths: Paths, spheres: int, colliders: int, w: Placement, rho: float, base: wp.vec3,
                        rest_length: float, x: wp.vec3, v: wp.vec3):
    """SPEC 9, overlapping colliders: a tip the passes left inside a collider (deeper than
    CREVICE_DEPTH of its r + ρ) turns about its base, its length kept, along the sum of the
    outward normals at the base of every collider within its length of the base; its velocity
    into the one it was in removed."""
    inside, q_in, r_in = deepest_round(paths, spheres, colliders, w, rho, x, -1)
    if inside < 0 or not (r_in - wp.length(x - q_in) > CREVICE_DEPTH * r_in):
        return x, v
    direction = wp.vec3(0.0)
    for k in range(colliders):
        q, r = round_collider(paths, spheres, k, w, rho, base)
        out = base - q
        d = wp.length(out)
        if d < r + rest_length:
            direction = direction + safe_divide(out, d)
    ld = wp.length(direction)
    if not (ld > MIN_LENGTH):
        return x, v
    turned = base + direction / ld * rest_length
    n = unit(turned - q_in)
    return turned, v - n * wp.min(wp.dot(v, n), 0.0)


@wp.func
def keep_outside(paths: Paths, spheres: int, colliders: int, w: Placement, rho: float, base: wp.vec3,
                 rest_length: float, h: float, x_in: wp.vec3, v_in: wp.vec3):
    """SPEC 4 and 9, the colliders again keeping the rest length, CONTACT_PASSES times: each
    sphere ``slide_out`` then ``segment_out_of_sphere``; each capsule twice both, about its axis
    point nearest x, then nearest the segment; then ``turn_out_of_crevice``."""
    x = x_in
    v = v_in
    for unused in range(CONTACT_PASSES):
        for k in range(colliders):
            if k < spheres:
                centre, radius, move = sphere_at(paths, k, w)
                x, v = slide_out(base, rest_length, centre, radius + rho, x, v)
                x, v = segment_out_of_sphere(base, centre, radius + rho, h, move / h, x, v)
            else:
                a, b, radius, move_a, move_b = capsule_at(paths, k, w)
                for twice in range(2):
                    x, v = slide_out(base, rest_length, closest_on_segment(a, b, x), radius + rho, x, v)
                    q = closest_to_segment(a, b, base, x)
                    move = move_a + (move_b - move_a) * segment_fraction(a, b, q)
                    x, v = segment_out_of_sphere(base, q, radius + rho, h, move / h, x, v)
    return turn_out_of_crevice(paths, spheres, colliders, w, rho, base, rest_length, x, v)


@wp.func
def settle_contact(paths: Paths, spheres: int, colliders: int, w: Placement, rho: float, base: wp.vec3,
                   rest_length: float, h: float, base_start: wp.vec3, start: wp.vec3, x: wp.vec3, v: wp.vec3):
    """After the length step, for a segment the broad phase finds near a collider (it moved
    from base_start-start to base-x over the substep h): ``sweep_segment``, ``keep_outside``,
    then ``collide`` again (no penetration wins over the exact length)."""
    travel = wp.max(wp.length(base - base_start), wp.length(x - start))
    if colliders == 0 or not contact_possible(paths, spheres, colliders, w, rho, base, x, travel):
        return x, v
    x1, v1 = sweep_segment(paths, spheres, colliders, w, rho, h, base_start, start, base, x, v)
    x2, v2 = keep_outside(paths, spheres, colliders, w, rho, base, rest_length, h, x1, v1)
    return collide(paths, spheres, colliders, w, rho, x2, v2)


@wp.func
def push_out_of_frame(paths: Paths, spheres: int, colliders: int, w: Placement, rho: float, base: wp.vec3,
                      rest_length: float, x: wp.vec3):
    """SPEC 2 and 9, output: a frame-time tip (colliders at rest at this frame's pose, ``w``)
    slid out along its length sphere (``keep_outside``, h = 1 s), then pushed out; positions
    only."""
    if colliders == 0 or not contact_possible(paths, spheres, colliders, w, rho, base, x, 0.0):
        return x
    x1, v1 = keep_outside(paths, spheres, colliders, w, rho, base, rest_length, 1.0, x, wp.vec3(0.0))
    x2, v2 = collide(paths, spheres, colliders, w, rho, x1, v1)
    return x2

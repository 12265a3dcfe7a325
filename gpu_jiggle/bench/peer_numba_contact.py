"""Contact of the numba peer's point chains (see :mod:`gpu_jiggle.bench.peer_numba`), one
particle or segment at a time in float32 world coordinates, with the stage names of SPEC 4.2
and 9: the broad phase (``contact_possible``), the particle stage (``collide_near``:
``sweep_particle``, then ``collide`` with ``leave_crevice``), the segment stage after the length
step (``settle_contact``: ``sweep_segment``, ``keep_outside`` with ``slide_out``,
``segment_out_of_sphere`` and ``turn_out_of_crevice``, then ``collide`` again), the frame-time
push-out (``push_out_of_frame``) and the contact sub-steps (``contact_substeps``).

The colliders of one substep (or contact sub-step) come placed in a float32 array ``placed``
(R, PLACED_WIDTH), the K spheres first, then the capsules (:mod:`.peer_numba_colliders`); ρ is
the particle's radius (length units), h the substep's length (s). A collider's velocity over
the substep is its move/h (world influence 1, so the particles' velocities are world
velocities, SPEC 9 "Push-out velocity"). Spheres and capsules only: no planes, inside
colliders, masks or groups (every chain collides with every collider).
"""
from __future__ import annotations

import math

import numpy as np

from .peer_numba_colliders import capsule_at, sphere_at
from .peer_numba_geometry import (HALF, MIN_LENGTH, ONE, TWO, UP, ZERO, add, closest_on_segment,
                                  closest_to_segment, div, dot, inline_jit, jit, norm, perpendicular, ring_point,
                                  safe_divide, scale, segment_fraction, sub, unit)

F = np.float32
#: Each contact stage runs over all the colliders this many times (SPEC 4.2).
CONTACT_PASSES = 2
#: A tip left deeper than this fraction of r + ρ inside a sphere or capsule after the segment
#: passes turns out of the crevice (SPEC 9, overlapping colliders).
CREVICE_DEPTH = F(1e-5)
#: SPEC 9, contact sub-steps: a substep splits where a collider near the chain moves, relative
#: to its pivot, more than this many times its radius (with ρ) in one substep ...
CONTACT_SUBSTEP_TRIGGER = F(0.6)
#: ... into sub-steps in which it moves at most this fraction of it ...
CONTACT_STEP_FRACTION = F(0.5)
#: ... and at most this many (SPEC 9, ``MAX_CONTACT_SUBSTEPS``).
CONTACT_SUBSTEP_CAP = 256
#: The broad phase's margin over float32 rounding, a fraction of the sizes involved.
CLEAR_MARGIN = F(1e-3)
#: Swept contact: a path may start this fraction of r² inside the sphere (on its surface, to
#: rounding), and is swept only where longer than this fraction of r.
SWEEP_START_SLACK = F(-2e-3)
SWEEP_SHORTEST = F(0.5)
#: Swept contact of a segment: the least fraction along it of the point swept.
SEGMENT_FRACTION_FLOOR = F(1e-3)


@jit
def round_collider(placed, spheres, k, rho, x):
    """Collider ``k`` as the sphere (centre, radius + ρ) nearest x (a capsule: about the point
    of its axis closest to x)."""
    if k < spheres:
        return (placed[k, 0], placed[k, 1], placed[k, 2]), placed[k, 3] + rho
    a, b, radius, _, _ = capsule_at(placed, k)
    return closest_on_segment(a, b, x), radius + rho


# -- broad phase ----------------------------------------------------------------------------
@jit
def clear_of(distance, reach, size):
    """Whether a ball at ``distance`` stays beyond ``reach`` by a margin over float32
    rounding (``size``: the magnitude of the coordinates involved)."""
    return distance > reach + CLEAR_MARGIN * (reach + abs(distance) + size)


@inline_jit
def contact_possible(placed, spheres, rho, base, x, travel):
    """SPEC 4.2, broad phase: whether a contact stage can act on the segment from base to x
    (x alone when base is x), which moved by at most ``travel`` over the substep: the ball
    about its midpoint holding it, grown by that travel and each collider's move, meets a
    sphere or capsule (with ρ). Every stage is a no-op where it does not."""
    m = scale(add(base, x), HALF)
    half_length = HALF * norm(sub(x, base))
    size = norm(m)
    for k in range(placed.shape[0]):
        if k < spheres:
            centre, radius, move = sphere_at(placed, k)
            if not clear_of(norm(sub(m, centre)), radius + rho + half_length + (travel + norm(move)), size):
                return True
        else:
            a, b, radius, move_a, move_b = capsule_at(placed, k)
            sweep = travel + max(norm(move_a), norm(move_b))
            if not clear_of(norm(sub(m, closest_on_segment(a, b, m))), radius + rho + half_length + sweep, size):
                return True
    return False


# -- the particle stage ---------------------------------------------------------------------
@jit
def push_out(q, r, x, v):
    """SPEC 4.2: x out of the ball (q, r), its velocity into it removed."""
    delta = sub(x, q)
    d = norm(delta)
    if d < r:
        n = UP if d < MIN_LENGTH else div(delta, d)
        x = add(q, scale(n, r))
        v = sub(v, scale(n, min(dot(v, n), ZERO)))
    return x, v


@jit
def deepest_round(placed, spheres, rho, x, skip):
    """(k or -1, centre, radius + ρ) of the sphere or capsule x lies deepest inside, other than
    ``skip`` (the first of equal depths)."""
    found, best = -1, ZERO
    q_best, r_best = round_collider(placed, spheres, 0, rho, x)
    for k in range(placed.shape[0]):
        q, r = round_collider(placed, spheres, k, rho, x)
        depth = r - norm(sub(x, q))
        if k != skip and depth > ZERO and depth > best:
            found, best, q_best, r_best = k, depth, q, r
    return found, q_best, r_best


@jit
def leave_crevice(placed, spheres, rho, x, v):
    """SPEC 4.2, overlapping colliders resolved together: x inside collider A is pushed out of
    it; where that lands it inside another, B, whose sphere (about the point nearest) cuts
    A's, x goes instead to the nearest point of the ring where the two spheres meet, its
    velocity into each removed."""
    a, qa, ra = deepest_round(placed, spheres, rho, x, -1)
    if a < 0:
        return x, v
    da = sub(x, qa)
    lda = norm(da)
    na = UP if lda < MIN_LENGTH else safe_divide(da, lda)
    out_a = add(qa, scale(na, ra))
    b, qb, rb = deepest_round(placed, spheres, rho, out_a, a)
    ab = sub(qb, qa)
    d = norm(ab)
    if b < 0 or d < MIN_LENGTH or d >= ra + rb or d <= abs(ra - rb):
        return out_a, sub(v, scale(na, min(dot(v, na), ZERO)))
    axis = div(ab, d)
    h = (d * d + ra * ra - rb * rb) / (TWO * d)
    ring_x = ring_point(add(qa, scale(axis, h)), axis, math.sqrt(max(ra * ra - h * h, ZERO)), x)
    n1, n2 = unit(sub(ring_x, qa)), unit(sub(ring_x, qb))
    v = sub(v, scale(n1, min(dot(v, n1), ZERO)))
    v = sub(v, scale(n2, min(dot(v, n2), ZERO)))
    return ring_x, v


@jit
def collide(placed, spheres, rho, x, v):
    """SPEC 4.2: spheres, then capsules (about the point of the axis closest to x), each
    pushing x out, CONTACT_PASSES times; then the crevices between overlapping ones."""
    for _ in range(CONTACT_PASSES):
        for k in range(placed.shape[0]):
            q, r = round_collider(placed, spheres, k, rho, x)
            x, v = push_out(q, r, x, v)
    for _ in range(CONTACT_PASSES):
        x, v = leave_crevice(placed, spheres, rho, x, v)
    return x, v


@jit
def sweep_past(q, r, start, rate, x, v):
    """SPEC 9, swept contact, in the frame of a collider that ends the substep as the sphere
    (q, r) and moves at ``rate`` (length/s): a path from ``start`` (in that frame) to x longer
    than r/2, started outside the sphere or on it, that enters it at its first root τ of
    |start - q + τ·(x - start)| = r (taken as c/(-b + √(b² - a·c))) ends on the near side of
    the tangent plane there, its velocity into the collider relative to the collider's removed.
    Returns (x, v, whether it acted)."""
    e, d = sub(start, q), sub(x, start)
    b = dot(e, d)
    c = dot(e, e) - r * r
    dd = dot(d, d)
    disc = b * b - dd * c
    if not (dd > (SWEEP_SHORTEST * r) * (SWEEP_SHORTEST * r) and c >= SWEEP_START_SLACK * r * r and b < ZERO
            and disc > ZERO):
        return x, v, False
    tau = c / (-b + math.sqrt(disc))
    if not tau <= ONE:
        return x, v, False
    n = unit(add(e, scale(d, max(tau, ZERO))))
    xq = sub(x, q)
    depth = r - dot(xq, n)
    if not (depth > ZERO and (dot(xq, xq) >= r * r or dot(xq, n) < ZERO)):
        return x, v, False
    x = add(x, scale(n, depth))
    v = sub(v, scale(n, min(dot(sub(v, rate), n), ZERO)))
    return x, v, True


@jit
def sweep_particle(placed, spheres, rho, h, start, x, v):
    """SPEC 9, swept contact of a particle that moved from ``start`` to x over the substep h:
    spheres, then capsules (each as the sphere about the point of its axis nearest the path,
    taken in the frame of that point's move)."""
    for k in range(placed.shape[0]):
        if k < spheres:
            centre, radius, move = sphere_at(placed, k)
            x, v, _ = sweep_past(centre, radius + rho, add(start, move), div(move, h), x, v)
        else:
            a, b, radius, move_a, move_b = capsule_at(placed, k)
            f = segment_fraction(sub(a, move_a), sub(b, move_b), start)
            move = add(move_a, scale(sub(move_b, move_a), f))
            moved_start = add(start, move)
            q = closest_to_segment(a, b, moved_start, x)
            x, v, _ = sweep_past(q, radius + rho, moved_start, div(move, h), x, v)
    return x, v


@inline_jit
def collide_near(placed, spheres, rho, h, start, x, v):
    """The particle stage of a substep (SPEC 4.2 and 9) for a particle the broad phase finds
    near a collider: ``sweep_particle`` from ``start``, then ``collide``."""
    if placed.shape[0] == 0 or not contact_possible(placed, spheres, rho, x, x, norm(sub(x, start))):
        return x, v
    x, v = sweep_particle(placed, spheres, rho, h, start, x, v)
    return collide(placed, spheres, rho, x, v)


# -- the segment stage ----------------------------------------------------------------------
@jit
def sweep_segment_past(q, r, base_start, start, rate, base, x, v):
    """SPEC 9, swept contact of a segment in the collider's frame (it ends as the sphere
    (q, r)): its point at the fraction f nearest q at mid-substep is swept as a particle from
    where it was; where it went through, the segment turns about its base onto the side it
    came from, its length kept, the tip's velocity into the collider (relative) removed."""
    f = max(segment_fraction(scale(add(base_start, base), HALF), scale(add(start, x), HALF), q),
            SEGMENT_FRACTION_FLOOR)
    point = add(base, scale(sub(x, base), f))
    swept, _, hit = sweep_past(q, r, add(base_start, scale(sub(start, base_start), f)), rate, point,
                               (ZERO, ZERO, ZERO))
    if not hit:
        return x, v
    push = sub(swept, point)
    u = sub(add(x, div(push, f)), base)
    turned = add(base, scale(unit(u), norm(sub(x, base))))
    n = unit(push)
    return turned, sub(v, scale(n, min(dot(sub(v, rate), n), ZERO)))


@jit
def sweep_segment(placed, spheres, rho, h, base_start, start, base, x, v):
    """SPEC 9, swept contact of the segment base-x (base_start-start at the substep's start):
    spheres, then capsules (as the sphere about the axis point nearest the segment, moved as
    the axis point nearest its mid-substep moved)."""
    for k in range(placed.shape[0]):
        if k < spheres:
            centre, radius, move = sphere_at(placed, k)
            x, v = sweep_segment_past(centre, radius + rho, add(base_start, move), add(start, move), div(move, h),
                                      base, x, v)
        else:
            a, b, radius, move_a, move_b = capsule_at(placed, k)
            f = segment_fraction(sub(a, move_a), sub(b, move_b), scale(add(base_start, start), HALF))
            move = add(move_a, scale(sub(move_b, move_a), f))
            q = closest_to_segment(a, b, base, x)
            x, v = sweep_segment_past(q, radius + rho, add(base_start, move), add(start, move), div(move, h), base,
                                      x, v)
    return x, v


@jit
def slide_out(base, rest_length, q, r, x, v):
    """SPEC 9: a tip inside the ball (q, r) slides back out along its length sphere about
    base, to the nearest point of the ring where the two spheres meet; its velocity into the
    ball removed."""
    delta = sub(x, q)
    bq = sub(q, base)
    d = norm(bq)
    if not (dot(delta, delta) < r * r and d >= MIN_LENGTH):
        return x, v
    axis = div(bq, d)
    h = (d * d + rest_length * rest_length - r * r) / (TWO * d)
    ring2 = rest_length * rest_length - h * h
    if not ring2 > ZERO:
        return x, v
    x = ring_point(add(base, scale(axis, h)), axis, math.sqrt(ring2), x)
    n = unit(sub(x, q))
    return x, sub(v, scale(n, min(dot(v, n), ZERO)))


@jit
def segment_out_of_sphere(base, q, r, h, rate, x, v):
    """SPEC 4, segments: a segment passing through the ball (q, r) between its ends turns about
    its base until it touches it; the tip's velocity takes the turn over the substep h but
    leaves the collider (moving at ``rate``) no faster than before, or than the collider
    (SPEC 9)."""
    d = sub(q, base)
    dq = norm(d)
    u = sub(x, base)
    lu = norm(u)
    u = safe_divide(u, lu)
    along = dot(d, u)
    if not (dq >= MIN_LENGTH and lu >= MIN_LENGTH and along > ZERO and along < lu
            and norm(sub(d, scale(u, along))) < r):
        return x, v
    dh = div(d, dq)
    side = sub(u, scale(dh, dot(u, dh)))
    ls = norm(side)
    side = perpendicular(dh) if ls < MIN_LENGTH else safe_divide(side, ls)
    sine = min(r / dq, ONE)
    turned = add(scale(dh, math.sqrt(max(ONE - sine * sine, ZERO))), scale(side, sine))
    new_x = add(base, scale(turned, lu))
    push = sub(new_x, x)
    new_v = add(v, div(push, h))
    n = unit(push)
    excess = dot(sub(new_v, rate), n) - max(dot(sub(v, rate), n), ZERO)
    return new_x, sub(new_v, scale(n, max(excess, ZERO)))


@jit
def turn_out_of_crevice(placed, spheres, rho, base, rest_length, x, v):
    """SPEC 9, overlapping colliders: a tip the passes left inside a sphere or capsule (deeper
    than CREVICE_DEPTH of its r + ρ) turns about its base, its length kept, along the sum of
    the outward normals at the base of every collider within its length of the base; its
    velocity into the one it was in removed."""
    inside, q_in, r_in = deepest_round(placed, spheres, rho, x, -1)
    if inside < 0 or not r_in - norm(sub(x, q_in)) > CREVICE_DEPTH * r_in:
        return x, v
    direction = (ZERO, ZERO, ZERO)
    for k in range(placed.shape[0]):
        q, r = round_collider(placed, spheres, k, rho, base)
        out = sub(base, q)
        d = norm(out)
        if d < r + rest_length:
            direction = add(direction, safe_divide(out, d))
    ld = norm(direction)
    if not ld > MIN_LENGTH:
        return x, v
    turned = add(base, scale(div(direction, ld), rest_length))
    n = unit(sub(turned, q_in))
    return turned, sub(v, scale(n, min(dot(v, n), ZERO)))


@jit
def keep_outside(placed, spheres, rho, base, rest_length, h, x, v):
    """SPEC 4 and 9, the colliders again keeping the rest length, CONTACT_PASSES times:
    each sphere ``slide_out`` then ``segment_out_of_sphere``; each capsule twice both, about
    its axis point nearest x, then nearest the segment; then ``turn_out_of_crevice``."""
    for _ in range(CONTACT_PASSES):
        for k in range(placed.shape[0]):
            if k < spheres:
                centre, radius, move = sphere_at(placed, k)
                x, v = slide_out(base, rest_length, centre, radius + rho, x, v)
                x, v = segment_out_of_sphere(base, centre, radius + rho, h, div(move, h), x, v)
            else:
                a, b, radius, move_a, move_b = capsule_at(placed, k)
                for _ in range(2):
                    x, v = slide_out(base, rest_length, closest_on_segment(a, b, x), radius + rho, x, v)
                    q = closest_to_segment(a, b, base, x)
                    move = add(move_a, scale(sub(move_b, move_a), segment_fraction(a, b, q)))
                    x, v = segment_out_of_sphere(base, q, radius + rho, h, div(move, h), x, v)
    return turn_out_of_crevice(placed, spheres, rho, base, rest_length, x, v)


@inline_jit
def settle_contact(placed, spheres, rho, base, rest_length, h, base_start, start, x, v):
    """After the length step, for a segment the broad phase finds near a collider (it moved
    from base_start-start to base-x over the substep h): ``sweep_segment``, ``keep_outside``,
    then ``collide`` again (no penetration wins over the exact length)."""
    travel = max(norm(sub(base, base_start)), norm(sub(x, start)))
    if placed.shape[0] == 0 or not contact_possible(placed, spheres, rho, base, x, travel):
        return x, v
    x, v = sweep_segment(placed, spheres, rho, h, base_start, start, base, x, v)
    x, v = keep_outside(placed, spheres, rho, base, rest_length, h, x, v)
    return collide(placed, spheres, rho, x, v)


@inline_jit
def push_out_of_frame(placed, spheres, rho, base, rest_length, x):
    """SPEC 2 and 9, output: a frame-time tip (colliders at rest, at this frame's pose) slid
    out along its length sphere (``keep_outside``, h = 1 s), then pushed out; positions only."""
    if placed.shape[0] == 0 or not contact_possible(placed, spheres, rho, base, x, ZERO):
        return x
    zero = (ZERO, ZERO, ZERO)
    x, v = keep_outside(placed, spheres, rho, base, rest_length, ONE, x, zero)
    x, _ = collide(placed, spheres, rho, x, v)
    return x


# -- contact sub-steps ----------------------------------------------------------------------
@jit
def substeps_for(distance, ball, radius, rho, relative):
    """SPEC 9, contact sub-steps of one collider: ceil(relative / (CONTACT_STEP_FRACTION·(r +
    ρ))) where it passes within ``ball`` + r of the chain and moves more than
    CONTACT_SUBSTEP_TRIGGER·(r + ρ) relative to the pivot; else 1."""
    size = CONTACT_STEP_FRACTION * (radius + rho)
    if size > ZERO and distance <= ball + radius and relative > CONTACT_SUBSTEP_TRIGGER * (radius + rho):
        return np.ceil(relative / size)
    return ONE


@jit
def contact_substeps(placed, spheres, pivot, moved, reach, rho):
    """SPEC 9, contact sub-steps: how many equal sub-steps a chain's substep takes (at most
    CONTACT_SUBSTEP_CAP), from the colliders placed at its end with their moves, its pivot's
    place there and move ``moved`` over it, its reach (rest lengths and largest particle
    radius) and smallest particle radius ``rho``. A collider counts where its path passes
    within its radius of the ball about the pivot's mid-substep place that holds the chain."""
    need = ONE
    middle = sub(pivot, scale(moved, HALF))
    ball = reach + HALF * norm(moved)
    for k in range(placed.shape[0]):
        if k < spheres:
            centre, radius, move = sphere_at(placed, k)
            path = closest_on_segment(sub(centre, move), centre, middle)
            need = max(need, substeps_for(norm(sub(middle, path)), ball, radius, rho, norm(sub(move, moved))))
        else:
            a, b, radius, move_a, move_b = capsule_at(placed, k)
            distance = norm(sub(middle, closest_on_segment(a, b, middle))) - max(norm(move_a), norm(move_b))
            relative = max(norm(sub(move_a, moved)), norm(sub(move_b, moved)))
            need = max(need, substeps_for(distance, ball, radius, rho, relative))
    return int(min(need, F(CONTACT_SUBSTEP_CAP)))


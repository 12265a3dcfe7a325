"""Contact of the Warp peer's point particles (see :mod:`gpu_jiggle.bench.peer_warp`), one
particle at a time in float32 world coordinates, with the stage names of SPEC 4.2 and 9: the
broad phase (``contact_possible``), the particle stage (``collide_near``: ``sweep_particle``,
then ``collide`` with ``leave_crevice``) and the contact sub-steps (``contact_substeps``). The
segment stage after the length step is in :mod:`.peer_warp_segment_contact`.

The colliders come as their paths (``paths``, (R,) :class:`~.peer_warp_colliders.ColliderPath`,
the ``spheres`` K first, R = ``colliders``) placed at a
:class:`~.peer_warp_colliders.Placement` ``w``; ρ is the particle's radius (length units), h
the substep's length (s). A collider's velocity over the substep is its move/h (world
influence 1, SPEC 9 "Push-out velocity"). Spheres and capsules only: no planes, inside
colliders, masks or groups (every chain collides with every collider).
"""
from __future__ import annotations

from .peer_warp_colliders import ColliderPath, Placement, capsule_at, round_collider, sphere_at
from .peer_warp_geometry import (MIN_LENGTH, closest_on_segment, closest_to_segment, ring_point, safe_divide,
                                 segment_fraction, unit, wp)

#: Each contact stage runs over all the colliders this many times (SPEC 4.2).
CONTACT_PASSES = 2
#: SPEC 9, contact sub-steps: a substep splits where a collider near the chain moves, relative
#: to its pivot, more than this many times its radius (with ρ) in one substep, into sub-steps
#: in which it moves at most CONTACT_STEP_FRACTION of it, at most CONTACT_SUBSTEP_CAP of them.
CONTACT_SUBSTEP_TRIGGER = wp.constant(0.6)
CONTACT_STEP_FRACTION = wp.constant(0.5)
CONTACT_SUBSTEP_CAP = wp.constant(256.0)
#: The broad phase's margin over float32 rounding, a fraction of the sizes involved.
CLEAR_MARGIN = wp.constant(1e-3)
#: Swept contact: a path may start this fraction of r² inside the sphere, and is swept only
#: where longer than SWEEP_SHORTEST of r.
SWEEP_START_SLACK = wp.constant(-2e-3)
SWEEP_SHORTEST = wp.constant(0.5)
Paths = wp.array(dtype=ColliderPath)


# -- broad phase ----------------------------------------------------------------------------
@wp.func
def clear_of(distance: float, reach: float, size: float):
    """Whether a ball at ``distance`` stays beyond ``reach`` by a margin over float32 rounding."""
    return distance > reach + CLEAR_MARGIN * (reach + wp.abs(distance) + size)


@wp.func
def contact_possible(paths: Paths, spheres: int, colliders: int, w: Placement, rho: float, base: wp.vec3,
                     x: wp.vec3, travel: float):
    """SPEC 4.2, broad phase: whether a contact stage can act on the segment base-x (x alone
    when base is x) that moved by at most ``travel`` over the substep: the ball about its
    midpoint holding it, grown by that travel and each collider's move, meets a collider."""
    m = (base + x) * 0.5
    half_length = 0.5 * wp.length(x - base)
    size = wp.length(m)
    for k in range(colliders):
        if k < spheres:
            centre, radius, move = sphere_at(paths, k, w)
            if not clear_of(wp.length(m - centre), radius + rho + half_length + (travel + wp.length(move)), size):
                return True
        else:
            a, b, radius, move_a, move_b = capsule_at(paths, k, w)
            sweep = travel + wp.max(wp.length(move_a), wp.length(move_b))
            if not clear_of(wp.length(m - closest_on_segment(a, b, m)), radius + rho + half_length + sweep, size):
                return True
    return False


# -- the particle stage ---------------------------------------------------------------------
@wp.func
def push_out(q: wp.vec3, r: float, x: wp.vec3, v: wp.vec3):
    """SPEC 4.2: x out of the ball (q, r), its velocity into it removed."""
    delta = x - q
    d = wp.length(delta)
    if d < r:
        n = wp.vec3(0.0, 1.0, 0.0)
        if d >= MIN_LENGTH:
            n = delta / d
        return q + n * r, v - n * wp.min(wp.dot(v, n), 0.0)
    return x, v


@wp.func
def deepest_round(paths: Paths, spheres: int, colliders: int, w: Placement, rho: float, x: wp.vec3, skip: int):
    """(k or -1, centre, radius + ρ) of the collider x lies deepest inside, other than ``skip``."""
    found = int(-1)
    best = float(0.0)
    q_best, r_best = round_collider(paths, spheres, 0, w, rho, x)
    for k in range(colliders):
        q, r = round_collider(paths, spheres, k, w, rho, x)
        depth = r - wp.length(x - q)
        if k != skip and depth > 0.0 and depth > best:
            found = k
            best = depth
            q_best = q
            r_best = r
    return found, q_best, r_best


@wp.func
def leave_crevice(paths: Paths, spheres: int, colliders: int, w: Placement, rho: float, x: wp.vec3, v: wp.vec3):
    """SPEC 4.2, overlapping colliders resolved together: x inside collider A is pushed out of
    it; where that lands it inside another, B, whose sphere cuts A's, x goes instead to the
    nearest point of the ring where the two spheres meet, its velocity into each removed."""
    a, qa, ra = deepest_round(paths, spheres, colliders, w, rho, x, -1)
    if a < 0:
        return x, v
    da = x - qa
    lda = wp.length(da)
    na = wp.vec3(0.0, 1.0, 0.0)
    if lda >= MIN_LENGTH:
        na = safe_divide(da, lda)
    out_a = qa + na * ra
    b, qb, rb = deepest_round(paths, spheres, colliders, w, rho, out_a, a)
    ab = qb - qa
    d = wp.length(ab)
    if b < 0 or d < MIN_LENGTH or d >= ra + rb or d <= wp.abs(ra - rb):
        return out_a, v - na * wp.min(wp.dot(v, na), 0.0)
    axis = ab / d
    h = (d * d + ra * ra - rb * rb) / (2.0 * d)
    ring_x = ring_point(qa + axis * h, axis, wp.sqrt(wp.max(ra * ra - h * h, 0.0)), x)
    n1 = unit(ring_x - qa)
    n2 = unit(ring_x - qb)
    v1 = v - n1 * wp.min(wp.dot(v, n1), 0.0)
    v2 = v1 - n2 * wp.min(wp.dot(v1, n2), 0.0)
    return ring_x, v2


@wp.func
def collide(paths: Paths, spheres: int, colliders: int, w: Placement, rho: float, x_in: wp.vec3, v_in: wp.vec3):
    """SPEC 4.2: spheres, then capsules (about the point of the axis closest to x), each pushing
    x out, CONTACT_PASSES times; then the crevices between overlapping ones."""
    x = x_in
    v = v_in
    for unused in range(CONTACT_PASSES):
        for k in range(colliders):
            q, r = round_collider(paths, spheres, k, w, rho, x)
            x, v = push_out(q, r, x, v)
    for unused in range(CONTACT_PASSES):
        x, v = leave_crevice(paths, spheres, colliders, w, rho, x, v)
    return x, v


@wp.func
def sweep_past(q: wp.vec3, r: float, start: wp.vec3, rate: wp.vec3, x: wp.vec3, v: wp.vec3):
    """SPEC 9, swept contact, in the frame of a collider that ends the substep as the sphere
    (q, r) and moves at ``rate`` (length/s): a path from ``start`` to x longer than r/2, started
    outside the sphere or on it, that enters it at its first root τ ends on the near side of
    the tangent plane there, its velocity into the collider relative to the collider's removed.
    Returns (x, v, whether it acted)."""
    e = start - q
    d = x - start
    b = wp.dot(e, d)
    c = wp.dot(e, e) - r * r
    dd = wp.dot(d, d)
    disc = b * b - dd * c
    shortest = SWEEP_SHORTEST * r
    if not (dd > shortest * shortest and c >= SWEEP_START_SLACK * r * r and b < 0.0 and disc > 0.0):
        return x, v, False
    tau = c / (-b + wp.sqrt(disc))
    if not (tau <= 1.0):
        return x, v, False
    n = unit(e + d * wp.max(tau, 0.0))
    xq = x - q
    depth = r - wp.dot(xq, n)
    if not (depth > 0.0 and (wp.dot(xq, xq) >= r * r or wp.dot(xq, n) < 0.0)):
        return x, v, False
    return x + n * depth, v - n * wp.min(wp.dot(v - rate, n), 0.0), True


@wp.func
def sweep_particle(paths: Paths, spheres: int, colliders: int, w: Placement, rho: float, h: float, start: wp.vec3,
                   x_in: wp.vec3, v_in: wp.vec3):
    """SPEC 9, swept contact of a particle that moved from ``start`` to x over the substep h:
    spheres, then capsules (as the sphere about the point of its axis nearest the path, in the
    frame of that point's move)."""
    x = x_in
    v = v_in
    for k in range(colliders):
        if k < spheres:
            centre, radius, move = sphere_at(paths, k, w)
            x, v, hit = sweep_past(centre, radius + rho, start + move, move / h, x, v)
        else:
            a, b, radius, move_a, move_b = capsule_at(paths, k, w)
            f = segment_fraction(a - move_a, b - move_b, start)
            move = move_a + (move_b - move_a) * f
            moved_start = start + move
            q = closest_to_segment(a, b, moved_start, x)
            x, v, hit = sweep_past(q, radius + rho, moved_start, move / h, x, v)
    return x, v


@wp.func
def collide_near(paths: Paths, spheres: int, colliders: int, w: Placement, rho: float, h: float, start: wp.vec3,
                 x: wp.vec3, v: wp.vec3):
    """The particle stage of a substep (SPEC 4.2 and 9) for a particle the broad phase finds
    near a collider: ``sweep_particle`` from ``start``, then ``collide``."""
    if colliders == 0 or not contact_possible(paths, spheres, colliders, w, rho, x, x, wp.length(x - start)):
        return x, v
    xs, vs = sweep_particle(paths, spheres, colliders, w, rho, h, start, x, v)
    return collide(paths, spheres, colliders, w, rho, xs, vs)


# -- contact sub-steps ----------------------------------------------------------------------
@wp.func
def substeps_for(distance: float, ball: float, radius: float, rho: float, relative: float):
    """SPEC 9, contact sub-steps of one collider: ceil(relative / (CONTACT_STEP_FRACTION·(r +
    ρ))) where it passes within ``ball`` + r of the chain and moves more than
    CONTACT_SUBSTEP_TRIGGER·(r + ρ) relative to the pivot; else 1."""
    size = CONTACT_STEP_FRACTION * (radius + rho)
    if size > 0.0 and distance <= ball + radius and relative > CONTACT_SUBSTEP_TRIGGER * (radius + rho):
        return wp.ceil(relative / size)
    return 1.0


@wp.func
def contact_substeps(paths: Paths, spheres: int, colliders: int, w: Placement, pivot: wp.vec3, moved: wp.vec3,
                     reach: float, rho: float):
    """SPEC 9, contact sub-steps: how many equal sub-steps a chain's substep takes (at most
    CONTACT_SUBSTEP_CAP), from the colliders placed at its end (``w``) with their moves, its
    pivot's place there and move ``moved`` over it, its reach (rest lengths and largest
    particle radius) and smallest particle radius ``rho``. A collider counts where its path
    passes within its radius of the ball about the pivot's mid-substep place that holds the
    chain."""
    need = float(1.0)
    middle = pivot - moved * 0.5
    ball = reach + 0.5 * wp.length(moved)
    for k in range(colliders):
        if k < spheres:
            centre, radius, move = sphere_at(paths, k, w)
            path = closest_on_segment(centre - move, centre, middle)
            need = wp.max(need, substeps_for(wp.length(middle - path), ball, radius, rho,
                                             wp.length(move - moved)))
        else:
            a, b, radius, move_a, move_b = capsule_at(paths, k, w)
            distance = wp.length(middle - closest_on_segment(a, b, middle)) - wp.max(wp.length(move_a),
                                                                                   wp.length(move_b))
            relative = wp.max(wp.length(move_a - moved), wp.length(move_b - moved))
            need = wp.max(need, substeps_for(distance, ball, radius, rho, relative))
    return int(wp.min(need, CONTACT_SUBSTEP_CAP))

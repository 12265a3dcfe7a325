"""Contact for the numpy point-chain reference: ``shaders/sim/point_colliders.glsl``
and ``point_contact.glsl`` written again in float32 numpy, vectorised over the chains of one
depth, with the same stage names and operation order (SPEC 4 and 4.2).

The colliders are held as their records (:data:`~gpu_jiggle.sim.layouts.SPHERE_COLLIDER`, ...):
where they were at the last substep in float64 world coordinates, their move and path
velocity in float32. :class:`Contact` takes them relative to each chain's anchor in float64
and rounds once, as the shader does in double precision. The vector geometry is in
``point_geometry.py``, the swept stages in ``point_sweep.py``.
"""
from __future__ import annotations

import numpy as np

from .point_geometry import (F, MIN_LENGTH, UP, closest_on_segment, closest_to_segment, dot, length, or_perpendicular,
                                 safe_divide, segment_fraction)
from .point_sweep import sweep_particle, sweep_segment

#: Each contact stage runs over all the colliders this many times (CONTACT_PASSES in the shader).
CONTACT_PASSES = 2
#: A tip the segment stage leaves deeper than this fraction of r + ρ inside a sphere or capsule
#: turns out of the crevice (CREVICE_DEPTH in the shader); shallower is rounding, for ``collide``.
CREVICE_DEPTH = F(1e-5)


class Contact:
    """The colliders of one substep for some chains, relative to their pivots (as the shader's
    ``Contact`` with ``sphere_at``, ``capsule_at`` and ``plane_at``).

    Args:
        colliders: {"spheres", "capsules", "planes"}: the collider records.
        mask: (n,) uint32 collider masks. anchor: (n, 3) float64 anchors. pivot: (n, 3)
        float32 pivots relative to the anchors. alpha, w: the colliders' path fraction and
        its (p, q, dp, dq) weights. Spheres and capsules that keep particles in (``inside``)
        are listed apart; every other stage sees only the ones that keep them out.
        start: None (the colliders at rest), or the path weights (p, q, dp, dq) of where they
        were at the start of the substep: each outside sphere's and capsule's move over the
        substep (``sphere_moves`` (n, 3) and ``capsule_moves`` ((n, 3), (n, 3)), relative to the
        same pivot) then sweeps the contact stages (SPEC 9, swept contact).
    """

    def __init__(self, colliders, mask, anchor, pivot, alpha, w, start=None):
        p, q = w[0], w[1]
        self.spheres, self.capsules, self.planes = [], [], []
        self.inside_spheres, self.inside_capsules = [], []  # the ones that keep particles in
        self.sphere_moves, self.capsule_moves = [], []  # of the outside ones, zero at rest
        #: (n, 3) the velocity of the chains' carriage (SPEC 4, world influence), which the
        #: particles' velocities are relative to; zero unless the caller sets it.
        self.carriage = np.zeros_like(pivot)

        def at(start_xyz, delta, rate, weights):
            return (start_xyz - anchor).astype(F) + weights[0] * delta + weights[1] * rate - pivot

        for s in colliders["spheres"]:
            centre = (s["start"][:3] - anchor).astype(F) + p * s["delta"][:3] + q * s["start_rate"][:3]
            (self.inside_spheres if s["inside"] else self.spheres).append(
                (((mask >> s["group"]) & 1) != 0, centre - pivot, F(s["start"][3]) + F(alpha) * s["delta"][3]))
            if not s["inside"]:
                self.sphere_moves.append(np.zeros_like(pivot) if start is None else (centre - pivot) - at(
                    s["start"][:3], s["delta"][:3], s["start_rate"][:3], start))
        for c in colliders["capsules"]:
            a = (c["start_a"][:3] - anchor).astype(F) + p * c["delta_a"][:3] + q * c["rate_a"][:3] - pivot
            b = (c["start_b"][:3] - anchor).astype(F) + p * c["delta_b"][:3] + q * c["rate_b"][:3] - pivot
            (self.inside_capsules if c["inside"] else self.capsules).append(
                (((mask >> c["group"]) & 1) != 0, a, b, F(c["start_a"][3]) + F(alpha) * c["delta_a"][3]))
            if not c["inside"]:
                self.capsule_moves.append((np.zeros_like(pivot), np.zeros_like(pivot)) if start is None else
                                          (a - at(c["start_a"][:3], c["delta_a"][:3], c["rate_a"][:3], start),
                                           b - at(c["start_b"][:3], c["delta_b"][:3], c["rate_b"][:3], start)))
        for pl in colliders["planes"]:
            n = pl["start"][:3].astype(F) + F(alpha) * pl["delta"][:3]
            n = n / np.sqrt(dot(n, n))
            offset = (pl["start"][3] - anchor @ n.astype(np.float64)).astype(F) + F(alpha) * pl["delta"][3]
            self.planes.append((((mask >> pl["group"]) & 1) != 0, np.broadcast_to(n, pivot.shape),
                                offset - dot(np.broadcast_to(n, pivot.shape), pivot)))

    def rows(self, index):
        """The same colliders for the chains at ``index`` alone (an integer array, or a slice:
        then views)."""
        sub = object.__new__(Contact)
        sub.spheres = [(active[index], centre[index], radius) for active, centre, radius in self.spheres]
        sub.capsules = [(active[index], a[index], b[index], radius) for active, a, b, radius in self.capsules]
        sub.planes = [(active[index], n[index], offset[index]) for active, n, offset in self.planes]
        sub.inside_spheres = [(active[index], centre[index], radius)
                              for active, centre, radius in self.inside_spheres]
        sub.inside_capsules = [(active[index], a[index], b[index], radius)
                               for active, a, b, radius in self.inside_capsules]
        sub.sphere_moves = [move[index] for move in self.sphere_moves]
        sub.capsule_moves = [(move_a[index], move_b[index]) for move_a, move_b in self.capsule_moves]
        sub.carriage = self.carriage[index]
        return sub

    def collider_rate(self, move, h):
        """A collider's velocity over the substep h (it moved by ``move`` (n, 3), relative to
        the pivot held) in the frame of the particles' velocities, relative to the chains'
        carriage (as ``collider_rate`` in the shader; SPEC 9, "Push-out velocity")."""
        return move / h - self.carriage


def clear_of(distance, reach, size):
    """Whether a ball at ``distance`` stays beyond ``reach`` by a margin over float32
    rounding (as ``clear_of`` in the shader, which takes the point m and works out its
    ``size`` = |m| there; here the caller does, once for every collider)."""
    return distance > reach + F(1e-3) * (reach + np.abs(distance) + size)


def contact_possible(ct, rho, base, x, travel=None):
    """SPEC 4.2, broad phase (as ``contact_possible`` in the shader): (n,) bool, whether a
    contact stage can act on the segment from base to x (x alone when base is x). The segment
    lies in the ball about its midpoint with half its length as radius; every stage is an exact
    no-op while that ball stays clear of each sphere and capsule a chain collides with, and x
    clear of each plane (the plane stages look at x alone), so running the stages on the near
    rows alone changes nothing. Inside colliders, which act on particles far from them, make
    their chains' rows near. Swept (``travel`` (n,): how far base and x moved over the
    substep; None: they did not): the ball grows by that travel and by each collider's own
    move, so that it holds the whole path the swept stages look at, in the collider's frame."""
    m = F(0.5) * (base + x)
    half_length = F(0.5) * length(x - base)
    near = np.zeros(len(x), bool)
    size_m = length(m) if ct.spheres or ct.capsules else None
    if travel is None:
        travel = np.zeros(len(x), F)
    for (active, centre, radius), move in zip(ct.spheres, ct.sphere_moves):
        near |= active & ~clear_of(length(m - centre), radius + rho + half_length + (travel + length(move)), size_m)
    for (active, a, b, radius), (move_a, move_b) in zip(ct.capsules, ct.capsule_moves):
        sweep = travel + np.maximum(length(move_a), length(move_b))
        near |= active & ~clear_of(length(m - closest_on_segment(a, b, m)), radius + rho + half_length + sweep, size_m)
    size_x = length(x) if ct.planes else None
    for active, n, offset in ct.planes:
        near |= active & ~clear_of(dot(n, x) - offset, rho, size_x)
    for active, *_ in ct.inside_spheres + ct.inside_capsules:
        near |= active
    return near


def on_near_rows(near, stage, ct, x, v, *row_args):
    """``stage(ct, *row_args, x, v)`` run on the rows where ``near`` is set, the other rows
    of x and v left as they are: row_args are (n, ...) arrays taken at the same rows."""
    rows = np.flatnonzero(near)
    if len(rows) == len(x):
        return stage(ct, *row_args, x, v)
    x, v = x.copy(), v.copy()
    if len(rows):
        x[rows], v[rows] = stage(ct.rows(rows), *(a[rows] for a in row_args), x[rows], v[rows])
    return x, v


def push_out(q, r, x, v, active):
    delta = x - q
    d = length(delta)
    inside = active & (d < r)
    n = np.where((d < MIN_LENGTH)[..., None], UP, safe_divide(delta, d))
    x = np.where(inside[..., None], q + n * r[..., None], x)
    v = np.where(inside[..., None], v - np.minimum(dot(v, n), F(0))[..., None] * n, v)
    return x, v


def pull_in(q, r, x, v, active):
    """SPEC 4.2, inside colliders (as ``pull_in``): x kept within r of q (at q when r ≤ 0),
    the outward velocity removed."""
    delta = x - q
    d = length(delta)
    room = np.maximum(r, F(0))
    out = active & (d > room)
    n = safe_divide(delta, d)
    x = np.where(out[..., None], q + n * room[..., None], x)
    v = np.where(out[..., None], v - np.maximum(dot(v, n), F(0))[..., None] * n, v)
    return x, v


def keep_inside(ct, rho, x, v):
    """SPEC 4.2, inside colliders: spheres, then capsules, each pulling the particles in."""
    for active, centre, radius in ct.inside_spheres:
        x, v = pull_in(centre, np.broadcast_to(radius - rho, x.shape[:1]), x, v, active)
    for active, a, b, radius in ct.inside_capsules:
        x, v = pull_in(closest_on_segment(a, b, x), np.broadcast_to(radius - rho, x.shape[:1]), x, v, active)
    return x, v


def round_colliders(ct, rho, x):
    """Every sphere and capsule as a sphere near each x (as ``local_sphere``): (K, n, 3)
    centres, (K, n) radii with ρ, (K, n) activity."""
    q = [centre for _, centre, _ in ct.spheres] + [closest_on_segment(a, b, x) for _, a, b, _ in ct.capsules]
    r = [radius + rho for _, _, radius in ct.spheres] + [radius + rho for _, _, _, radius in ct.capsules]
    on = [active for active, _, _ in ct.spheres] + [active for active, _, _, _ in ct.capsules]
    n = len(x)
    return (np.stack([np.broadcast_to(c, (n, 3)) for c in q]), np.stack([np.broadcast_to(c, (n,)) for c in r]),
            np.stack([np.broadcast_to(c, (n,)) for c in on]))


def deepest_round(ct, rho, x, skip):
    """(index (n,) or -1, centre (n, 3), radius (n,)) of the sphere or capsule each x lies
    deepest inside, other than ``skip`` (n,) (as ``deepest_round``)."""
    q, r, on = round_colliders(ct, rho, x)
    depth = r - length(x[None] - q)
    depth = np.where(on & (np.arange(len(q))[:, None] != skip[None]) & (depth > 0), depth, F(0))
    k = np.argmax(depth, axis=0)
    rows = np.arange(len(x))
    found = np.where(depth[k, rows] > 0, k, -1)
    return found, q[k, rows], r[k, rows]


def leave_crevice(ct, rho, x, v):
    """SPEC 4.2, overlapping colliders resolved together (as ``leave_crevice`` in the shader)."""
    if not ct.spheres and not ct.capsules:
        return x, v
    none = np.full(len(x), -1)
    a, qa, ra = deepest_round(ct, rho, x, none)
    da = x - qa
    lda = length(da)
    na = np.where((lda < MIN_LENGTH)[:, None], UP, safe_divide(da, lda))
    out_a = qa + na * ra[:, None]
    b, qb, rb = deepest_round(ct, rho, out_a, a)
    ab = qb - qa
    d = length(ab)
    single = (a >= 0) & ((b < 0) | (d < MIN_LENGTH) | (d >= ra + rb) | (d <= np.abs(ra - rb)))
    pair = (a >= 0) & ~single
    axis = safe_divide(ab, d)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = np.where(pair, (d * d + ra * ra - rb * rb) / (F(2) * d), F(0))
    centre = qa + axis * h[:, None]
    xc = x - centre
    radial = xc - dot(xc, axis)[:, None] * axis
    lr = length(radial)
    direction = or_perpendicular(lr < MIN_LENGTH, axis, safe_divide(radial, lr))
    ring_x = centre + direction * np.sqrt(np.maximum(ra * ra - h * h, F(0)))[:, None]
    n1, n2 = ring_x - qa, ring_x - qb
    n1, n2 = safe_divide(n1, length(n1)), safe_divide(n2, length(n2))
    ring_v = v - np.minimum(dot(v, n1), F(0))[:, None] * n1
    ring_v = ring_v - np.minimum(dot(ring_v, n2), F(0))[:, None] * n2
    single_v = v - np.minimum(dot(v, na), F(0))[:, None] * na
    x = np.where(single[:, None], out_a, np.where(pair[:, None], ring_x, x))
    v = np.where(single[:, None], single_v, np.where(pair[:, None], ring_v, v))
    return x, v


def collide(ct, rho, x, v):
    """SPEC 4.2: spheres, then capsules, then planes, each pushing the particles out, then the
    inside colliders pulling them in; then the crevices between overlapping outside ones."""
    for _ in range(CONTACT_PASSES):
        for active, centre, radius in ct.spheres:
            x, v = push_out(centre, radius + rho, x, v, active)
        for active, a, b, radius in ct.capsules:
            x, v = push_out(closest_on_segment(a, b, x), radius + rho, x, v, active)
        for active, n, offset in ct.planes:
            depth = dot(n, x) - (offset + rho)
            hit = active & (depth < 0)
            x = np.where(hit[:, None], x - depth[:, None] * n, x)
            v = np.where(hit[:, None], v - np.minimum(dot(v, n), F(0))[:, None] * n, v)
        x, v = keep_inside(ct, rho, x, v)
    for _ in range(CONTACT_PASSES):  # a capsule's nearest point moves with x
        x, v = leave_crevice(ct, rho, x, v)
    return x, v


def slide_out(base, rest_length, q, r, x, v, active):
    """As ``slide_out`` in the shader: back out of a sphere along the length sphere."""
    delta = x - q
    inside = active & (dot(delta, delta) < r * r)
    bq = q - base
    d = length(bq)
    ok = inside & (d >= MIN_LENGTH)
    axis = safe_divide(bq, d)
    with np.errstate(divide="ignore", invalid="ignore"):  # d = 0 rows are masked by ok
        h = (d * d + rest_length * rest_length - r * r) / (F(2) * d)
        ring2 = rest_length * rest_length - h * h
        ok &= ring2 > 0
        centre = base + axis * np.where(ok, h, F(0))[..., None]
    xc = x - centre
    radial = xc - dot(xc, axis)[..., None] * axis
    lr = length(radial)
    direction = or_perpendicular(lr < MIN_LENGTH, axis, safe_divide(radial, lr))
    new_x = centre + direction * np.sqrt(np.maximum(ring2, 0))[..., None]
    nq = new_x - q
    n = safe_divide(nq, length(nq))
    new_v = v - np.minimum(dot(v, n), F(0))[..., None] * n
    return np.where(ok[..., None], new_x, x), np.where(ok[..., None], new_v, v)


def slide_out_of_plane(base, rest_length, n, offset, x, v, active):
    depth = dot(n, x) - offset
    base_height = dot(n, base) - offset
    ok = active & (depth < 0) & (np.abs(base_height) <= rest_length)
    centre = base - base_height[..., None] * n
    xc = x - centre
    radial = xc - dot(xc, n)[..., None] * n
    lr = length(radial)
    direction = or_perpendicular(lr < MIN_LENGTH, n, safe_divide(radial, lr))
    new_x = centre + direction * np.sqrt(np.maximum(rest_length * rest_length - base_height * base_height,
                                                    F(0)))[..., None]
    new_v = v - np.minimum(dot(v, n), F(0))[..., None] * n
    return np.where(ok[..., None], new_x, x), np.where(ok[..., None], new_v, v)


def segment_out_of_sphere(base, q, r, h, rate, x, v, active):
    """SPEC 4, segments: as ``segment_out_of_sphere`` in the shader (the tip's velocity takes
    the turn's displacement over the substep h, but leaves the collider, which moved by
    ``move`` over the substep, no faster than it left it before, or than the collider's own
    motion: SPEC 9)."""
    d = q - base
    dq = length(d)
    u = x - base
    lu = length(u)
    u = safe_divide(u, lu)
    along = dot(d, u)
    ok = active & (dq >= MIN_LENGTH) & (lu >= MIN_LENGTH) & (along > 0) & (along < lu) & \
        (length(d - along[..., None] * u) < r)
    dh = safe_divide(d, dq)
    side = u - dot(u, dh)[..., None] * dh
    ls = length(side)
    side = or_perpendicular(ls < MIN_LENGTH, dh, safe_divide(side, ls))
    with np.errstate(divide="ignore", invalid="ignore"):
        sine = np.where(ok, np.minimum(r / dq, F(1)), F(0))
    turned = np.sqrt(np.maximum(F(1) - sine * sine, F(0)))[..., None] * dh + sine[..., None] * side
    new_x = base + turned * lu[..., None]
    new_v = v + (new_x - x) / h
    push = new_x - x
    n = safe_divide(push, length(push))
    excess = dot(new_v - rate, n) - np.maximum(dot(v - rate, n), F(0))
    new_v = new_v - np.maximum(excess, F(0))[..., None] * n
    return np.where(ok[..., None], new_x, x), np.where(ok[..., None], new_v, v)


def keep_outside(ct, rho, base, rest_length, h, x, v):
    """Colliders again, keeping the rest length (spheres, capsules, planes), then the segment,
    then out of a crevice the passes left it in."""
    for _ in range(CONTACT_PASSES):
        for (active, centre, radius), move in zip(ct.spheres, ct.sphere_moves):
            x, v = slide_out(base, rest_length, centre, radius + rho, x, v, active)
            x, v = segment_out_of_sphere(base, centre, radius + rho, h, ct.collider_rate(move, h), x, v, active)
        for (active, a, b, radius), (move_a, move_b) in zip(ct.capsules, ct.capsule_moves):
            for _ in range(2):
                x, v = slide_out(base, rest_length, closest_on_segment(a, b, x), radius + rho, x, v, active)
                q = closest_to_segment(a, b, base, x)
                move = move_a + segment_fraction(a, b, q)[..., None] * (move_b - move_a)
                x, v = segment_out_of_sphere(base, q, radius + rho, h, ct.collider_rate(move, h), x, v, active)
        for active, n, offset in ct.planes:
            x, v = slide_out_of_plane(base, rest_length, n, offset + rho, x, v, active)
    return turn_out_of_crevice(ct, rho, base, rest_length, x, v)


def turn_out_of_crevice(ct, rho, base, rest_length, x, v):
    """SPEC 9, overlapping colliders (as ``turn_out_of_crevice`` in the shader): a tip that the
    passes left inside a sphere or capsule (between two, each sliding it into the other) turns
    about its base, its length kept, straight out of every sphere and capsule within its
    length of the base (along the sum of their outward normals at the base, which leads away
    from each of them), its velocity into the one it was in removed."""
    if not ct.spheres and not ct.capsules:
        return x, v
    inside, q_in, r_in = deepest_round(ct, rho, x, np.full(len(x), -1))
    inside = np.where(r_in - length(x - q_in) > CREVICE_DEPTH * r_in, inside, -1)  # over rounding
    if not (inside >= 0).any():
        return x, v
    direction = np.zeros_like(x)
    for q, r, on in zip(*round_colliders(ct, rho, base)):
        out = base - q
        d = length(out)
        direction = direction + np.where((on & (d < r + rest_length))[:, None], safe_divide(out, d), F(0))
    ld = length(direction)
    stuck = (inside >= 0) & (ld > MIN_LENGTH)
    turned = base + safe_divide(direction, ld) * rest_length[:, None]
    n = safe_divide(turned - q_in, length(turned - q_in))
    new_v = v - np.minimum(dot(v, n), F(0))[:, None] * n
    return np.where(stuck[:, None], turned, x), np.where(stuck[:, None], new_v, v)


def collide_near(ct, rho, x, v, h=None, start=None):
    """``collide`` for the particles the broad phase finds near a collider; the others are left
    as they are (as ``collide_near`` in the shader). In a substep (``start`` (n, 3): where the
    particles were at its start; h its length) ``sweep_particle`` runs first."""
    if start is None:
        return on_near_rows(contact_possible(ct, rho, x, x), collide, ct, x, v, rho)

    def swept(ct, rho, start, x, v):
        return collide(ct, rho, *sweep_particle(ct, rho, h, start, x, v))
    return on_near_rows(contact_possible(ct, rho, x, x, length(x - start)), swept, ct, x, v, rho, start)


def settle_contact(ct, rho, base, rest_length, h, x, v, base_start=None, start=None):
    """After the length and angle steps, for the segments the broad phase finds near a
    collider: ``keep_outside``, then ``collide`` again (no penetration wins over the exact
    length); the others are left as they are (as ``settle_contact`` in the shader). In a
    substep (``base_start``, ``start`` (n, 3): where base and x were at its start)
    ``sweep_segment`` runs first."""
    if start is None:
        def settle(ct, rho, base, rest_length, x, v):
            return collide(ct, rho, *keep_outside(ct, rho, base, rest_length, h, x, v))
        return on_near_rows(contact_possible(ct, rho, base, x), settle, ct, x, v, rho, base, rest_length)

    def swept(ct, rho, base, rest_length, base_start, start, x, v):
        x, v = sweep_segment(ct, rho, h, base_start, start, base, x, v)
        return collide(ct, rho, *keep_outside(ct, rho, base, rest_length, h, x, v))
    travel = np.maximum(length(base - base_start), length(x - start))
    return on_near_rows(contact_possible(ct, rho, base, x, travel), swept, ct, x, v, rho, base, rest_length,
                        base_start, start)


def push_out_of_frame(ct, rho, base, rest_length, x):
    """SPEC 2, output (as ``push_out_of_frame``): a frame-time particle slid out along its
    length sphere (``keep_outside``), then pushed out where that leaves no room; positions only."""
    x, _ = settle_contact(ct, rho, base, rest_length, F(1), x, np.zeros_like(x))
    return x

"""The colliders of the Warp peer's point chains (see :mod:`gpu_jiggle.bench.peer_warp`): their
paths over a frame and where they are in each substep or contact sub-step (SPEC 2 and 9,
moving colliders).

Spheres and capsules move from where they were at the frame's last substep toward this
frame's pose along the monotone path of SPEC 2 (centres and capsule ends; radii linearly),
as the solver's do. Each frame runs three kernels: :func:`collider_paths` (one thread per
collider) lays the paths out as an array of :class:`ColliderPath` (R,), the K spheres first,
then the M capsules; the chain kernel reads them at a :class:`Placement` (the path weights of
a substep's end and start) through :func:`sphere_at` and :func:`capsule_at`; then
:func:`end_collider_paths` moves each path's start to the frame's last substep.
"""
from __future__ import annotations

from .peer_warp_geometry import closest_on_segment, path_weights, start_tangent, wp


@wp.struct
class ColliderPath:
    """One collider's path this frame, world, length units: a sphere's centre (or a capsule's
    end a) x(p, q) = start_a + p·d_a + q·m_a (m: the limited start tangent × span), a capsule's
    end b the same with ``*_b``; the radius r0 + α·dr."""

    start_a: wp.vec3
    d_a: wp.vec3
    m_a: wp.vec3
    start_b: wp.vec3
    d_b: wp.vec3
    m_b: wp.vec3
    r0: float
    dr: float


@wp.struct
class Placement:
    """Where the colliders are: path weights (p, q) at the end of a substep (or sub-step), its
    radii's path fraction ``alpha``, and the weights (sp, sq) at its start (for their moves)."""

    p: float
    q: float
    alpha: float
    sp: float
    sq: float


@wp.func
def placement(p: float, q: float, alpha: float, sp: float, sq: float):
    """A :class:`Placement`."""
    w = Placement()
    w.p = p
    w.q = q
    w.alpha = alpha
    w.sp = sp
    w.sq = sq
    return w


@wp.func
def sphere_at(paths: wp.array(dtype=ColliderPath), k: int, w: Placement):
    """(centre, radius, move over the substep) of sphere ``k`` placed at ``w``."""
    path = paths[k]
    now = path.start_a + path.d_a * w.p + path.m_a * w.q
    before = path.start_a + path.d_a * w.sp + path.m_a * w.sq
    return now, path.r0 + w.alpha * path.dr, now - before


@wp.func
def capsule_at(paths: wp.array(dtype=ColliderPath), k: int, w: Placement):
    """(a, b, radius, move of a, move of b) of the capsule in row ``k`` placed at ``w``."""
    path = paths[k]
    a = path.start_a + path.d_a * w.p + path.m_a * w.q
    b = path.start_b + path.d_b * w.p + path.m_b * w.q
    a0 = path.start_a + path.d_a * w.sp + path.m_a * w.sq
    b0 = path.start_b + path.d_b * w.sp + path.m_b * w.sq
    return a, b, path.r0 + w.alpha * path.dr, a - a0, b - b0


@wp.func
def round_collider(paths: wp.array(dtype=ColliderPath), spheres: int, k: int, w: Placement, rho: float,
                   x: wp.vec3):
    """Collider ``k`` as the sphere (centre, radius + ρ) nearest x (a capsule: about the point
    of its axis closest to x)."""
    if k < spheres:
        centre, radius, move = sphere_at(paths, k, w)
        return centre, radius + rho
    a, b, radius, move_a, move_b = capsule_at(paths, k, w)
    return closest_on_segment(a, b, x), radius + rho


@wp.kernel
def collider_paths(sphere_centre: wp.array(dtype=wp.vec3), sphere_radius: wp.array(dtype=float),
                   capsule_a: wp.array(dtype=wp.vec3), capsule_b: wp.array(dtype=wp.vec3),
                   capsule_radius: wp.array(dtype=float), sphere_last: wp.array(dtype=wp.vec3),
                   sphere_rate: wp.array(dtype=wp.vec3), sphere_radius_last: wp.array(dtype=float),
                   capsule_a_last: wp.array(dtype=wp.vec3), capsule_b_last: wp.array(dtype=wp.vec3),
                   capsule_a_rate: wp.array(dtype=wp.vec3), capsule_b_rate: wp.array(dtype=wp.vec3),
                   capsule_radius_last: wp.array(dtype=float), span: float,
                   paths: wp.array(dtype=ColliderPath)):
    """This frame's path of collider ``tid`` (SPEC 2 and 9, moving colliders): each centre or
    capsule end from where it was at the last substep (``*_last``, with its path velocity
    ``*_rate``, length/s) toward this frame's on the monotone path, the radius linearly."""
    k = wp.tid()
    spheres = sphere_radius.shape[0]
    path = ColliderPath()
    if k < spheres:
        path.start_a = sphere_last[k]
        path.d_a = sphere_centre[k] - sphere_last[k]
        path.m_a = start_tangent(path.d_a, sphere_rate[k] * span)
        path.r0 = sphere_radius_last[k]
        path.dr = sphere_radius[k] - sphere_radius_last[k]
    else:
        m = k - spheres
        path.start_a = capsule_a_last[m]
        path.d_a = capsule_a[m] - capsule_a_last[m]
        path.m_a = start_tangent(path.d_a, capsule_a_rate[m] * span)
        path.start_b = capsule_b_last[m]
        path.d_b = capsule_b[m] - capsule_b_last[m]
        path.m_b = start_tangent(path.d_b, capsule_b_rate[m] * span)
        path.r0 = capsule_radius_last[m]
        path.dr = capsule_radius[m] - capsule_radius_last[m]
    paths[k] = path


@wp.kernel
def end_collider_paths(paths: wp.array(dtype=ColliderPath), spheres: int, alpha: float, inv_span: float,
                       sphere_last: wp.array(dtype=wp.vec3), sphere_rate: wp.array(dtype=wp.vec3),
                       sphere_radius_last: wp.array(dtype=float), capsule_a_last: wp.array(dtype=wp.vec3),
                       capsule_b_last: wp.array(dtype=wp.vec3), capsule_a_rate: wp.array(dtype=wp.vec3),
                       capsule_b_rate: wp.array(dtype=wp.vec3), capsule_radius_last: wp.array(dtype=float)):
    """SPEC 2: collider ``tid``'s path's x0 and m0 become its value and velocity at ``alpha``,
    the frame's last substep (the radius: its value)."""
    k = wp.tid()
    path = paths[k]
    p, q, dp, dq = path_weights(alpha)
    a = path.start_a + path.d_a * p + path.m_a * q
    a_rate = (path.d_a * dp + path.m_a * dq) * inv_span
    radius = path.r0 + alpha * path.dr
    if k < spheres:
        sphere_last[k] = a
        sphere_rate[k] = a_rate
        sphere_radius_last[k] = radius
    else:
        m = k - spheres
        capsule_a_last[m] = a
        capsule_a_rate[m] = a_rate
        capsule_b_last[m] = path.start_b + path.d_b * p + path.m_b * q
        capsule_b_rate[m] = (path.d_b * dp + path.m_b * dq) * inv_span
        capsule_radius_last[m] = radius

"""The colliders of the numba peer's point chains (see :mod:`gpu_jiggle.bench.peer_numba`):
their paths over a frame and where they are in each substep or contact sub-step (SPEC 2 and
9, moving colliders).

Spheres and capsules move from where they were at the frame's last substep toward this
frame's pose along the monotone path of SPEC 2 (centres and capsule ends; radii linearly),
as the solver's do. :func:`collider_paths` lays each frame's paths out as an array ``paths``
(R, PATH_WIDTH) float32, the K spheres first, then the capsules: per centre (capsules: end
a, then end b in columns 9-17) its start xyz, change d and limited tangent m (× span), so that
x(p, q) = start + p·d + q·m; the start radius and its change in columns 18 and 19. :func:`place`
fills an array ``placed`` (R, PLACED_WIDTH) float32 with the colliders of one substep, which
the contact stages (:mod:`.peer_numba_contact`) read:

- a sphere's row: centre xyz (world, length units), radius, then its move xyz over the
  substep (where it is, less where it was at the substep's start);
- a capsule's row: end a xyz, radius, move of a, end b xyz, move of b.
"""
from __future__ import annotations

import numpy as np

from .peer_numba_geometry import add, jit, load, path_weights, scale, start_tangent3, store, sub

F = np.float32
#: Columns of a placed collider's row and of a collider's path (module docstring).
PLACED_WIDTH = 13
PATH_WIDTH = 20


@jit
def place(placed, paths, spheres, w, w_start, alpha):
    """Fill ``placed`` (R, PLACED_WIDTH) with the colliders on their path (SPEC 2, 9) at the
    path weights ``w`` = (p, q) and path fraction ``alpha`` (radii move linearly), and their
    moves since the weights ``w_start``. ``paths`` (R, PATH_WIDTH), spheres first: per
    centre (capsules: end a, then end b in columns 9-17) its start xyz, change d and limited
    tangent m (× span) toward this frame's pose, x(p, q) = start + p·d + q·m; the start radius
    and its change in columns 18 and 19."""
    for k in range(placed.shape[0]):
        for e in range(1 if k < spheres else 2):
            for i in range(3):
                s, d, m = paths[k, 9 * e + i], paths[k, 9 * e + 3 + i], paths[k, 9 * e + 6 + i]
                now = s + w[0] * d + w[1] * m
                placed[k, 7 * e + i] = now
                placed[k, 6 * e + 4 + i] = now - (s + w_start[0] * d + w_start[1] * m)
        placed[k, 3] = paths[k, 18] + alpha * paths[k, 19]


@jit
def sphere_at(placed, k):
    """(centre, radius, move) of placed sphere ``k``."""
    return ((placed[k, 0], placed[k, 1], placed[k, 2]), placed[k, 3], (placed[k, 4], placed[k, 5], placed[k, 6]))


@jit
def capsule_at(placed, k):
    """(a, b, radius, move of a, move of b) of placed capsule row ``k``."""
    return ((placed[k, 0], placed[k, 1], placed[k, 2]), (placed[k, 7], placed[k, 8], placed[k, 9]), placed[k, 3],
            (placed[k, 4], placed[k, 5], placed[k, 6]), (placed[k, 10], placed[k, 11], placed[k, 12]))


@jit
def collider_paths(sphere_centre, sphere_radius, capsule_a, capsule_b, capsule_radius, sphere_last, sphere_rate,
                   sphere_radius_last, capsule_a_last, capsule_b_last, capsule_a_rate, capsule_b_rate,
                   capsule_radius_last, span):
    """This frame's collider paths (SPEC 2 and 9, moving colliders), (R, PATH_WIDTH) float32
    as :func:`~.peer_numba_contact.place` takes them: each centre or capsule end from where it
    was at the last substep (``*_last``, with its path velocity ``*_rate``, length/s) toward
    this frame's (``sphere_centre``, ``capsule_a``, ``capsule_b``) on the monotone path, the
    radius linearly."""
    spheres = sphere_radius.shape[0]
    paths = np.zeros((spheres + capsule_radius.shape[0], PATH_WIDTH), F)
    for k in range(spheres):
        write_path(paths, k, 0, load(sphere_last, k), load(sphere_rate, k), load(sphere_centre, k), span)
        paths[k, 18], paths[k, 19] = sphere_radius_last[k], sphere_radius[k] - sphere_radius_last[k]
    for m in range(capsule_radius.shape[0]):
        write_path(paths, spheres + m, 0, load(capsule_a_last, m), load(capsule_a_rate, m), load(capsule_a, m), span)
        write_path(paths, spheres + m, 1, load(capsule_b_last, m), load(capsule_b_rate, m), load(capsule_b, m), span)
        paths[spheres + m, 18] = capsule_radius_last[m]
        paths[spheres + m, 19] = capsule_radius[m] - capsule_radius_last[m]
    return paths


@jit
def write_path(paths, k, end, last, rate, pose, span):
    """Row ``k`` of :func:`collider_paths`, its centre (``end`` 0) or capsule end b (1)."""
    d = sub(pose, last)
    tangent = start_tangent3(d, scale(rate, span))
    for i in range(3):
        paths[k, 9 * end + i], paths[k, 9 * end + 3 + i], paths[k, 9 * end + 6 + i] = last[i], d[i], tangent[i]


@jit
def end_collider_paths(paths, spheres, alpha, inv_span, sphere_last, sphere_rate, sphere_radius_last,
                       capsule_a_last, capsule_b_last, capsule_a_rate, capsule_b_rate, capsule_radius_last):
    """SPEC 2: each collider path's x0 and m0 become its value and velocity at ``alpha``, the
    frame's last substep (the radii: their value)."""
    p, q, dp, dq = path_weights(alpha)
    for k in range(paths.shape[0]):
        for e in range(1 if k < spheres else 2):
            o = 9 * e
            last = (paths[k, o], paths[k, o + 1], paths[k, o + 2])
            d = (paths[k, o + 3], paths[k, o + 4], paths[k, o + 5])
            m = (paths[k, o + 6], paths[k, o + 7], paths[k, o + 8])
            value = add(add(last, scale(d, p)), scale(m, q))
            rate = scale(add(scale(d, dp), scale(m, dq)), inv_span)
            if k < spheres:
                store(sphere_last, k, value)
                store(sphere_rate, k, rate)
            elif e == 0:
                store(capsule_a_last, k - spheres, value)
                store(capsule_a_rate, k - spheres, rate)
            else:
                store(capsule_b_last, k - spheres, value)
                store(capsule_b_rate, k - spheres, rate)
        radius = paths[k, 18] + alpha * paths[k, 19]
        if k < spheres:
            sphere_radius_last[k] = radius
        else:
            capsule_radius_last[k - spheres] = radius

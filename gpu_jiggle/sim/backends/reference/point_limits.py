"""Angle limits of point segments for the numpy reference: ``shaders/sim/point_limits.glsl``
written again in float32 numpy, vectorised over the segments of one depth, with the same
names and operation order (docs/SPEC.md section 9, "Angle limits").

Quaternions are (x, y, z, w) rows. Every function takes and returns (n, ...) float32 arrays;
rows a stage does not touch come back as they were, bit for bit.
"""
from __future__ import annotations

import numpy as np

from ... import layouts
from .point_geometry import MIN_LENGTH, cross, dot, length, or_perpendicular, rotation_between, safe_divide

F = np.float32
PI = F(np.pi)
TWO_PI = F(2 * np.pi)
#: As HINGE_PLANE_TOLERANCE in the shader: a hinge leaves a segment alone when it is within its
#: range and this close to the hinge plane (the sine of its angle off it).
HINGE_PLANE_TOLERANCE = F(1e-6)
#: As ELLIPSE_BISECTIONS in the shader.
ELLIPSE_BISECTIONS = 24


def quat_multiply(a, b):
    xyz = a[..., 3:4] * b[..., :3] + b[..., 3:4] * a[..., :3] + cross(a[..., :3], b[..., :3])
    return np.concatenate([xyz, (a[..., 3] * b[..., 3] - dot(a[..., :3], b[..., :3]))[..., None]], axis=-1)


def quat_rotate(q, u):
    t = F(2) * cross(q[..., :3], u)
    return u + q[..., 3:4] * t + cross(q[..., :3], t)


def dot4(a, b):
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2] + a[..., 3] * b[..., 3]


def nlerp(a, b, f):
    """The normalised blend from a to b by f (scalar or (n,)) on the shorter arc."""
    to = np.where((dot4(a, b) < 0)[..., None], -b, b)
    q = a + np.asarray(f, F)[..., None] * (to - a) if np.ndim(f) else a + F(f) * (to - a)
    return q / np.sqrt(dot4(q, q))[..., None]


def target_frame(parent_animated, parent_simulated, joint_rotation, axis):
    """The frame a segment's limit is measured in (as ``target_frame`` in the shader): the
    joint's rotation turned by the parent's bend R(u → w), its half turn about ``axis``."""
    return quat_multiply(rotation_between(parent_animated, parent_simulated, axis), joint_rotation)


def limit_cone(beta, base, a, un, lu, v_t, x, v, rows):
    """The cone of half-angle beta (n,) about a, for the rows ``rows`` (bool (n,))."""
    over = rows & (np.arctan2(length(cross(un, a)), dot(un, a)) > beta)
    if not over.any():
        return x, v
    beta = np.where(over, beta, F(0))
    side = un - dot(un, a)[:, None] * a
    ls = length(side)
    side = or_perpendicular(ls < MIN_LENGTH, a, safe_divide(side, ls))
    cos_b, sin_b = np.cos(beta)[:, None], np.sin(beta)[:, None]
    new_x = base + (cos_b * a + sin_b * side) * lu[:, None]
    relative = v - v_t
    pinned = relative - dot(relative, a)[:, None] * a
    outward = cos_b * side - sin_b * a
    opened = np.maximum(dot(relative, outward), F(0))[:, None] * outward
    new_v = v - np.where((beta == 0)[:, None], pinned, opened)
    return np.where(over[:, None], new_x, x), np.where(over[:, None], new_v, v)


def limit_hinge(lo, hi, n, base, a, un, lu, v_t, x, v, rows):
    """The hinge about unit n (⟂ a) with the range [lo, hi] (n,), for ``rows``."""
    side = cross(n, a)
    along, across, off = dot(un, a), dot(un, side), dot(un, n)
    in_plane = np.sqrt(along * along + across * across)
    theta = np.where(in_plane < MIN_LENGTH, F(0), np.arctan2(across, along))
    outside = (theta > hi) | (theta < lo)
    to_hi = np.where(theta > hi, theta - hi, theta + TWO_PI - hi)
    to_lo = np.where(theta < lo, lo - theta, lo + TWO_PI - theta)
    bounded = np.where(outside, np.where(to_hi <= to_lo, hi, lo), theta)
    act = rows & ~((bounded == theta) & (np.abs(off) <= HINGE_PLANE_TOLERANCE))
    if not act.any():
        return x, v
    cos_b, sin_b = np.cos(bounded)[:, None], np.sin(bounded)[:, None]
    new_x = base + (cos_b * a + sin_b * side) * lu[:, None]
    relative = v - v_t
    new_v = v - dot(relative, n)[:, None] * n
    tangent = cos_b * side - sin_b * a
    outward = np.where((bounded == hi)[:, None], tangent, -tangent)
    pinned = dot(relative, tangent)[:, None] * tangent
    opened = np.maximum(dot(relative, outward), F(0))[:, None] * outward
    new_v = np.where((lo == hi)[:, None], new_v - pinned,
                     np.where((bounded != theta)[:, None], new_v - opened, new_v))
    return np.where(act[:, None], new_x, x), np.where(act[:, None], new_v, v)


def ellipse_normal_gap(psi, q, pitch, yaw):
    c, s = np.cos(psi), np.sin(psi)
    return (pitch * pitch - yaw * yaw) * c * s - q[:, 0] * pitch * s + q[:, 1] * yaw * c


def limit_ellipse(pitch, yaw, n, base, a, un, lu, v_t, x, v, rows):
    """The spherical limit (pitch, yaw > 0, (n,)) about a with pitch axis n, for ``rows``."""
    side = cross(n, a)
    across = np.stack([dot(un, side), dot(un, n)], axis=-1)
    la = np.sqrt(across[:, 0] * across[:, 0] + across[:, 1] * across[:, 1])
    heading = np.where((la < MIN_LENGTH)[:, None], np.array([1, 0], F), safe_divide(across, la))
    swing = np.arctan2(la, dot(un, a))[:, None] * heading
    with np.errstate(divide="ignore", invalid="ignore"):
        sx, sy = swing[:, 0] / pitch, swing[:, 1] / yaw
        over = rows & ~(sx * sx + sy * sy <= F(1))
    if not over.any():
        return x, v
    pitch, yaw = np.where(over, pitch, F(1)), np.where(over, yaw, F(1))
    q = np.abs(swing)
    psi_lo, psi_hi = np.zeros_like(pitch), np.full_like(pitch, F(0.5) * PI)
    for _ in range(ELLIPSE_BISECTIONS):
        mid = F(0.5) * (psi_lo + psi_hi)
        positive = ellipse_normal_gap(mid, q, pitch, yaw) > F(0)
        psi_lo, psi_hi = np.where(positive, mid, psi_lo), np.where(positive, psi_hi, mid)
    psi = F(0.5) * (psi_lo + psi_hi)
    signs = np.where(swing < 0, F(-1), F(1))
    boundary = np.stack([pitch * np.cos(psi), yaw * np.sin(psi)], axis=-1) * signs
    angle = np.sqrt(boundary[:, 0] * boundary[:, 0] + boundary[:, 1] * boundary[:, 1])
    d = boundary / angle[:, None]
    radial = d[:, 0:1] * side + d[:, 1:2] * n
    cos_t, sin_t = np.cos(angle)[:, None], np.sin(angle)[:, None]
    new_x = base + (cos_t * a + sin_t * radial) * lu[:, None]
    normal = boundary / np.stack([pitch * pitch, yaw * yaw], axis=-1)
    normal = normal / np.sqrt(normal[:, 0] * normal[:, 0] + normal[:, 1] * normal[:, 1])[:, None]
    e_theta = cos_t * radial - sin_t * a
    e_phi = d[:, 0:1] * n - d[:, 1:2] * side
    n_r = normal[:, 0] * d[:, 0] + normal[:, 1] * d[:, 1]
    n_phi = -normal[:, 0] * d[:, 1] + normal[:, 1] * d[:, 0]
    outward = n_r[:, None] * e_theta + (n_phi * (angle / np.maximum(np.sin(angle), MIN_LENGTH)))[:, None] * e_phi
    outward = outward / length(outward)[:, None]
    new_v = v - np.maximum(dot(v - v_t, outward), F(0))[:, None] * outward
    return np.where(over[:, None], new_x, x), np.where(over[:, None], new_v, v)


def limit_angle(rig, frame, base, t, v_t, x, v):
    """SPEC 4 (docs/SPEC.md section 9, "Angle limits"), as ``limit_angle`` in the shader: each
    segment (rows of ``rig``, POINT_SEGMENT_RIG records) measured from its target direction
    t - base, in its target frame ``frame`` (n, 4) for the hinge and spherical kinds."""
    kind = rig["limit_kind"]
    if not (kind != layouts.LIMIT_NONE).any():
        return x, v
    a, u = t - base, x - base
    la, lu = length(a), length(u)
    live = (kind != layouts.LIMIT_NONE) & (la >= MIN_LENGTH) & (lu >= MIN_LENGTH)
    a, un = safe_divide(a, la), safe_divide(u, lu)
    first, second = rig["limit_bounds"][:, 0], rig["limit_bounds"][:, 1]
    x, v = limit_cone(first, base, a, un, lu, v_t, x, v, live & (kind == layouts.LIMIT_CONE))
    turned = live & (kind >= layouts.LIMIT_HINGE)
    if not turned.any():
        return x, v
    axis = quat_rotate(frame, rig["limit_axis"][:, :3])
    n = axis - dot(axis, a)[:, None] * a
    ln = length(n)
    degenerate = ln < MIN_LENGTH
    n = safe_divide(n, ln)
    hinge = turned & (kind == layouts.LIMIT_HINGE)
    x, v = limit_cone(np.zeros_like(first), base, a, un, lu, v_t, x, v, hinge & degenerate)
    x, v = limit_hinge(first, second, n, base, a, un, lu, v_t, x, v, hinge & ~degenerate)
    spherical = turned & (kind == layouts.LIMIT_SPHERICAL)
    as_cone = spherical & (degenerate | ((first == 0) & (second == 0)))
    x, v = limit_cone(np.minimum(first, second), base, a, un, lu, v_t, x, v, as_cone)
    rest = spherical & ~as_cone
    x, v = limit_hinge(-first, first, n, base, a, un, lu, v_t, x, v, rest & (second == 0))
    x, v = limit_hinge(-second, second, cross(n, a), base, a, un, lu, v_t, x, v, rest & (first == 0) & (second != 0))
    return limit_ellipse(first, second, n, base, a, un, lu, v_t, x, v, rest & (first != 0) & (second != 0))

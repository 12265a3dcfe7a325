"""Quaternion and transform helpers for skeletons, float64, vectorised over leading axes.

Quaternions are (x, y, z, w) as in glTF (SPEC section 0), unit length, and act on column
vectors: ``rotate(q, v) = q·v·q*``. ``multiply(a, b)`` is "b first, then a", like the matrix
product ``A @ B``. Matrices are 4×4, column-vector convention (translation in column 3).
"""
from __future__ import annotations

import numpy as np

IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])


def normalize(q) -> np.ndarray:
    """(..., 4) unit quaternions; a zero quaternion becomes the identity."""
    q = np.asarray(q, np.float64)
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    out = np.where(n > 0, q / np.where(n > 0, n, 1.0), IDENTITY)
    return out


def multiply(a, b) -> np.ndarray:
    """(..., 4) Hamilton product a·b: the rotation b, then a."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    ax, ay, az, aw = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bx, by, bz, bw = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), np.float64)
    out[..., 0] = aw * bx + ax * bw + ay * bz - az * by
    out[..., 1] = aw * by - ax * bz + ay * bw + az * bx
    out[..., 2] = aw * bz + ax * by - ay * bx + az * bw
    out[..., 3] = aw * bw - ax * bx - ay * by - az * bz
    return out


def conjugate(q) -> np.ndarray:
    """(..., 4) the inverse rotation of unit quaternions."""
    q = np.array(q, np.float64)
    q[..., :3] *= -1.0
    return q


def local_from_world(parent_world, world, near) -> np.ndarray:
    """The unit local rotation that gives ``world`` under ``parent_world`` (all (..., 4) x, y,
    z, w), with the sign of ``near`` (the rotation it replaces: the same hemisphere)."""
    local = normalize(multiply(conjugate(parent_world), world))
    return np.where(np.sum(local * near, axis=-1, keepdims=True) < 0, -local, local)


def rotate(q, v) -> np.ndarray:
    """(..., 3) vectors v rotated by unit quaternions q."""
    q = np.asarray(q, np.float64)
    v = np.asarray(v, np.float64)
    u = q[..., :3]
    w = q[..., 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def from_axis_angle(axis, angle) -> np.ndarray:
    """(..., 4) rotation by ``angle`` radians about ``axis`` (any length > 0)."""
    axis = np.asarray(axis, np.float64)
    angle = np.asarray(angle, np.float64)
    axis = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    half = 0.5 * angle[..., None]
    return np.concatenate([axis * np.sin(half), np.cos(half)], axis=-1)


def between(u, v) -> np.ndarray:
    """(..., 4) the smallest rotation taking direction u onto direction v (any lengths > 0).

    Nearly opposite directions (u·v < -0.9999 after normalising), where ``(u × v, 1 + u·v)``
    loses its digits, are turned as SPEC section 4 turns them: the half turn about the unit
    axis u × v (an axis perpendicular to u where that vanishes), then the smallest rotation
    taking -u onto v, which is exact up to antiparallel.
    """
    u = np.asarray(u, np.float64)
    v = np.asarray(v, np.float64)
    u = u / np.maximum(np.linalg.norm(u, axis=-1, keepdims=True), 1e-300)
    v = v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-300)
    d = np.sum(u * v, axis=-1, keepdims=True)
    q = np.concatenate([np.cross(u, v), 1.0 + d], axis=-1)
    opposite = d[..., 0] < -0.9999
    if np.any(opposite):
        uo = np.broadcast_to(u, q[..., :3].shape)[opposite]
        vo = np.broadcast_to(v, q[..., :3].shape)[opposite]
        axis = np.cross(uo, vo)
        size = np.linalg.norm(axis, axis=-1, keepdims=True)
        helper = np.where(np.abs(uo[:, :1]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]])
        across = np.cross(uo, helper)
        across /= np.linalg.norm(across, axis=-1, keepdims=True)
        axis = np.where(size > 1e-12, axis / np.maximum(size, 1e-300), across)
        axis -= np.sum(axis * uo, axis=-1, keepdims=True) * uo  # across u to the last digit
        axis /= np.linalg.norm(axis, axis=-1, keepdims=True)
        small = normalize(np.concatenate([np.cross(-uo, vo), 1.0 - d[opposite]], axis=-1))
        q[opposite] = multiply(small, np.concatenate([axis, np.zeros((len(axis), 1))], axis=-1))
    return normalize(q)


def slerp(a, b, t) -> np.ndarray:
    """(..., 4) spherical interpolation from a (t = 0) to b (t = 1) the short way round.

    As the glTF 2.0 specification's implementation note: ``θ = acos(|a·b|)``,
    ``s = sign(a·b)``, ``(sin((1-t)θ)·a + s·sin(tθ)·b) / sin θ``; nearly equal quaternions
    (``|a·b| > 1 - 1e-9``) fall back to a normalised lerp.
    """
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    t = np.asarray(t, np.float64)[..., None]
    d = np.sum(a * b, axis=-1, keepdims=True)
    s = np.where(d < 0.0, -1.0, 1.0)
    ad = np.minimum(np.abs(d), 1.0)
    theta = np.arccos(ad)
    near = ad > 1.0 - 1e-9
    sin_theta = np.where(near, 1.0, np.sin(theta))
    wa = np.where(near, 1.0 - t, np.sin((1.0 - t) * theta) / sin_theta)
    wb = np.where(near, t, np.sin(t * theta) / sin_theta)
    out = wa * a + s * wb * b
    return np.where(near, normalize(out), out)


def to_matrix(q) -> np.ndarray:
    """(..., 3, 3) rotation matrices of unit quaternions."""
    q = np.asarray(q, np.float64)
    x, y, z, w = np.moveaxis(q, -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], axis=-1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], axis=-1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=-1),
    ], axis=-2)


def from_matrix(m) -> np.ndarray:
    """(..., 4) unit quaternions of (..., 3, 3) rotation matrices (Shepperd's method:
    the largest of w², x², y², z² picks the numerically safe formula)."""
    m = np.asarray(m, np.float64)
    shape = m.shape[:-2]
    m = m.reshape(-1, 3, 3)
    out = np.empty((len(m), 4))
    tr = m[:, 0, 0] + m[:, 1, 1] + m[:, 2, 2]
    diag = np.stack([m[:, 0, 0], m[:, 1, 1], m[:, 2, 2], tr], axis=-1)
    pick = np.argmax(diag, axis=-1)
    for i in range(len(m)):
        r = m[i]
        k = pick[i]
        if k == 3:
            s = 2.0 * np.sqrt(max(1.0 + tr[i], 0.0))
            out[i] = [(r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s, 0.25 * s]
        elif k == 0:
            s = 2.0 * np.sqrt(max(1.0 + r[0, 0] - r[1, 1] - r[2, 2], 0.0))
            out[i] = [0.25 * s, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s, (r[2, 1] - r[1, 2]) / s]
        elif k == 1:
            s = 2.0 * np.sqrt(max(1.0 - r[0, 0] + r[1, 1] - r[2, 2], 0.0))
            out[i] = [(r[0, 1] + r[1, 0]) / s, 0.25 * s, (r[1, 2] + r[2, 1]) / s, (r[0, 2] - r[2, 0]) / s]
        else:
            s = 2.0 * np.sqrt(max(1.0 - r[0, 0] - r[1, 1] + r[2, 2], 0.0))
            out[i] = [(r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, 0.25 * s, (r[1, 0] - r[0, 1]) / s]
    out = normalize(out)
    out *= np.where(out[:, 3:4] < 0, -1.0, 1.0)
    return out.reshape(shape + (4,))


def compose(translation, rotation, scale) -> np.ndarray:
    """(..., 4, 4) matrices T·R·S from (..., 3) translations, (..., 4) rotations and
    (..., 3) scales, as glTF composes a node's TRS."""
    translation = np.asarray(translation, np.float64)
    r = to_matrix(rotation) * np.asarray(scale, np.float64)[..., None, :]
    m = np.zeros(r.shape[:-2] + (4, 4))
    m[..., :3, :3] = r
    m[..., :3, 3] = translation
    m[..., 3, 3] = 1.0
    return m


def decompose(m) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(translation (..., 3), rotation (..., 4), scale (..., 3)) of affine (..., 4, 4)
    matrices without shear; a negative determinant flips the x scale."""
    m = np.asarray(m, np.float64)
    t = m[..., :3, 3].copy()
    a = m[..., :3, :3]
    s = np.linalg.norm(a, axis=-2)
    sign = np.where(np.linalg.det(a) < 0, -1.0, 1.0)
    s[..., 0] *= sign
    r = a / np.where(s == 0, 1.0, s)[..., None, :]
    return t, from_matrix(r), s

"""Analytic 3D constraints on world-space joints: two-bone IK and look-at.

IK belongs to the primary animation: a frame is keyframes, then IK and constraints, then
springs (SPEC section 2), so chains hanging off a constrained joint follow the constrained
pose. These functions work on world positions and rotations and return world-space
rotations; :mod:`gpu_jiggle.character.pipeline` turns them into local joint rotations of a skeleton.

Quaternions are (x, y, z, w); lengths in the caller's unit; angles in radians.

Two-bone IK (root → mid → end, e.g. hip → knee → ankle), from the law of cosines: with
``a = |mid - root|``, ``b = |end - mid|`` and ``d`` the distance root → target (clamped into
``[|a - b|, a + b]``), the interior angle at the mid joint is
``acos((a² + b² - d²) / (2ab))``. The lower bone is turned about the mid joint, in the plane
of the limb, to that angle; the whole limb is then turned about the root so that the end
points at the target (the smallest such rotation); last, when a pole is given, the limb is
turned about the line root → target so that the mid joint lies on the pole's side.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from . import quat
from ...sim import validation

__all__ = ["TwoBoneIK3D", "two_bone_ik_3d", "look_at"]


class TwoBoneIK3D(NamedTuple):
    """The result of :func:`two_bone_ik_3d`.

    Attributes:
        root_rotation: (4,) float64, a world-space rotation to put onto the upper bone's
            world rotation (``new = root_rotation · old``); it carries the lower bone along.
        mid_rotation: (4,) float64, the same for the lower bone: its new world rotation is
            ``mid_rotation · old`` (this already includes root_rotation).
        mid: (3,) float64, the new world position of the mid joint.
        end: (3,) float64, the new world position of the end joint.
        reachable: bool, False when the target was out of reach (too far or too close) and
            the limb was posed at the nearest reachable distance, pointing at it.
    """

    root_rotation: np.ndarray
    mid_rotation: np.ndarray
    mid: np.ndarray
    end: np.ndarray
    reachable: bool


def _perpendicular(v):
    helper = np.array([1.0, 0.0, 0.0]) if abs(v[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    p = np.cross(v, helper)
    return p / np.linalg.norm(p)


def two_bone_ik_3d(root, mid, end, target, pole=None) -> TwoBoneIK3D:
    """Pose a two-bone limb so that its end reaches ``target`` (see the module docstring).

    Args:
        root, mid, end: (3,) float, world positions of the three joints (animated pose).
        target: (3,) float, the world position the end should reach.
        pole: optional (3,) float, a world point the mid joint (knee, elbow) should bend
            toward; without it the limb keeps its current bend plane.

    Returns:
        A :class:`TwoBoneIK3D`. Bone lengths are kept exactly.

    Raises:
        ValueError: wrong shapes, non-finite values, or a zero-length bone (named).
        TypeError: non-numeric input.
    """
    a_pos = validation.float_array("root", root, (3,))
    b_pos = validation.float_array("mid", mid, (3,))
    c_pos = validation.float_array("end", end, (3,))
    t_pos = validation.float_array("target", target, (3,))
    p_pos = None if pole is None else validation.float_array("pole", pole, (3,))
    upper = float(np.linalg.norm(b_pos - a_pos))
    lower = float(np.linalg.norm(c_pos - b_pos))
    if upper <= 0.0:
        raise ValueError("mid: coincides with root (the upper bone has length 0)")
    if lower <= 0.0:
        raise ValueError("end: coincides with mid (the lower bone has length 0)")

    to_target = t_pos - a_pos
    distance = float(np.linalg.norm(to_target))
    shortest, longest = abs(upper - lower), upper + lower
    reachable = shortest <= distance <= longest
    d = min(max(distance, shortest), longest)

    # 1. bend at the mid joint to the interior angle that puts the end at distance d
    e = (a_pos - b_pos) / upper
    u = (c_pos - b_pos) / lower
    w = u - np.dot(u, e) * e
    if np.linalg.norm(w) < 1e-9:  # straight or folded limb: bend toward the pole, or anywhere
        side = None if p_pos is None else (p_pos - b_pos) - np.dot(p_pos - b_pos, e) * e
        # the end goes to the side opposite the pole, so that the mid joint points at it
        w = -side if side is not None and np.linalg.norm(side) > 1e-9 else _perpendicular(e)
    w = w / np.linalg.norm(w)
    cos_mid = (upper * upper + lower * lower - d * d) / (2.0 * upper * lower)
    interior = math.acos(min(max(cos_mid, -1.0), 1.0))
    u_new = math.cos(interior) * e + math.sin(interior) * w
    bend = quat.between(u, u_new)
    c1 = b_pos + lower * u_new

    # 2. turn the limb about the root so that the end points at the target
    aim_dir = to_target if distance > 1e-12 else c1 - a_pos
    aim = quat.between(c1 - a_pos, aim_dir)
    b2 = a_pos + quat.rotate(aim, b_pos - a_pos)
    c2 = a_pos + quat.rotate(aim, c1 - a_pos)

    # 3. swing about the line root -> target so that the mid joint faces the pole
    swing = quat.IDENTITY.copy()
    if p_pos is not None:
        k = (c2 - a_pos) / max(np.linalg.norm(c2 - a_pos), 1e-300)
        m = (b2 - a_pos) - np.dot(b2 - a_pos, k) * k
        p = (p_pos - a_pos) - np.dot(p_pos - a_pos, k) * k
        if np.linalg.norm(m) > 1e-9 and np.linalg.norm(p) > 1e-9:
            angle = math.atan2(np.dot(np.cross(m, p), k), np.dot(m, p))
            swing = quat.from_axis_angle(k, angle)
    root_rotation = quat.normalize(quat.multiply(swing, aim))
    mid_rotation = quat.normalize(quat.multiply(root_rotation, bend))
    new_mid = a_pos + quat.rotate(swing, b2 - a_pos)
    new_end = a_pos + quat.rotate(swing, c2 - a_pos)
    return TwoBoneIK3D(root_rotation, mid_rotation, new_mid, new_end, bool(reachable))


def look_at(position, rotation, target, aim_axis=(0.0, 0.0, 1.0), max_angle=math.pi, weight=1.0) -> np.ndarray:
    """Turn a joint so that its aim axis points at ``target``; returns its new world rotation.

    The turn is the smallest rotation taking the joint's current aim direction onto the
    direction to the target (no roll about the aim), limited to ``max_angle`` and scaled
    by ``weight`` (0: unchanged, 1: fully on target).

    Args:
        position: (3,) float, the joint's world position.
        rotation: (4,) float, its world rotation (x, y, z, w).
        target: (3,) float, the world point to look at.
        aim_axis: (3,) float, the looking direction in the joint's local space (any length > 0).
        max_angle: float > 0, radians, the largest turn away from the current direction.
        weight: float in [0, 1].

    Returns:
        (4,) float64 unit quaternion, the joint's new world rotation. A target on the joint
        itself gives the rotation unchanged.

    Raises:
        ValueError: wrong shapes, non-finite values, a zero aim axis, max_angle ≤ 0 or a weight
        outside [0, 1] (named). TypeError: non-numeric input.
    """
    p = validation.float_array("position", position, (3,))
    r = quat.normalize(validation.float_array("rotation", rotation, (4,)))
    t = validation.float_array("target", target, (3,))
    axis = validation.float_array("aim_axis", aim_axis, (3,))
    if np.linalg.norm(axis) <= 0:
        raise ValueError("aim_axis = [0, 0, 0]: expected a direction of length > 0")
    limit = float(validation.positive("max_angle", max_angle, ()))
    w = float(validation.float_array("weight", weight, ()))
    if not 0.0 <= w <= 1.0:
        raise ValueError(f"weight = {w!r}: expected a value in [0, 1]")
    want = t - p
    if np.linalg.norm(want) < 1e-12:
        return r
    current = quat.rotate(r, axis)
    turn = quat.between(current, want)
    angle = 2.0 * math.atan2(np.linalg.norm(turn[:3]), turn[3])
    applied = min(angle, limit) * w
    if angle < 1e-12 or applied <= 0.0:
        return r
    turn = quat.from_axis_angle(turn[:3], applied)
    return quat.normalize(quat.multiply(turn, r))

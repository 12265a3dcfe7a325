"""Analytic two-bone inverse kinematics in 2D (shoulder → elbow → hand).

IK belongs to the primary animation: a frame's pose is keyframes, then IK, then springs
(SPEC section 2), so the chains hanging off an IK-driven limb get the IK-final joints.

Source: the law of cosines. For a triangle with sides ``a = upper_length``,
``b = lower_length`` and ``d = |target - root|``, the angle opposite ``d`` satisfies
``d² = a² + b² - 2·a·b·cos γ``, and the angle at the root between the upper bone and the
line root → target satisfies ``b² = a² + d² - 2·a·d·cos β``.

Conventions as in SPEC section 0: x right, y up, angles in radians counter-clockwise from +x,
lengths in the caller's unit.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from gpu_jiggle.sim import validation

__all__ = ["TwoBoneIK", "two_bone_ik_2d", "two_bone_fk_2d"]


class TwoBoneIK(NamedTuple):
    """The result of :func:`two_bone_ik_2d`.

    Attributes:
        shoulder_angle: float, radians in [-π, π), the upper bone's world angle.
        elbow_angle: float, radians in [-π, π], the lower bone's angle relative to the upper
            bone (0: straight arm; its sign is ``bend_sign``'s).
        reachable: bool, True when the hand lands on the target; False when the target was
            closer than ``|upper_length - lower_length|`` or farther than their sum, and the
            arm was posed at the nearest reachable distance along the same direction.
    """

    shoulder_angle: float
    elbow_angle: float
    reachable: bool


def _wrap(angle: float) -> float:
    """``a - 2π·floor((a + π) / 2π)``, a value in [-π, π) (SPEC section 0)."""
    return angle - 2.0 * math.pi * math.floor((angle + math.pi) / (2.0 * math.pi))


def _check_lengths(upper_length, lower_length) -> tuple[float, float]:
    upper = float(validation.positive("upper_length", upper_length, ()))
    lower = float(validation.positive("lower_length", lower_length, ()))
    return upper, lower


def two_bone_ik_2d(root, target, upper_length, lower_length, bend_sign: int = +1) -> TwoBoneIK:
    """Pose a two-bone limb rooted at ``root`` so that its end reaches ``target``.

    Args:
        root: (2,) float, world position of the shoulder (hip, ...), length unit.
        target: (2,) float, world position the hand should reach, length unit.
        upper_length: float > 0, shoulder → elbow, length unit.
        lower_length: float > 0, elbow → hand, length unit.
        bend_sign: +1 or -1, which of the two mirror solutions: +1 bends the elbow
            counter-clockwise (positive ``elbow_angle``), so the elbow lies clockwise of the
            line root → target.

    Returns:
        A :class:`TwoBoneIK` ``(shoulder_angle, elbow_angle, reachable)``. With
        ``two_bone_fk_2d`` these give the elbow and hand positions. An unreachable target
        is met as closely as the geometry allows: the distance is clamped into
        ``[|upper - lower|, upper + lower]`` (out of reach: the arm points straight at the
        target). A target on the root itself has no direction; +x is used.

    Raises:
        ValueError: non-positive or non-finite lengths, a non-finite or wrongly shaped
            ``root``/``target``, or ``bend_sign`` not ±1 (the argument is named).
        TypeError: non-numeric input.
    """
    p = validation.float_array("root", root, (2,))
    q = validation.float_array("target", target, (2,))
    upper, lower = _check_lengths(upper_length, lower_length)
    if isinstance(bend_sign, (bool, np.bool_)) or bend_sign not in (1, -1):
        raise ValueError(f"bend_sign = {bend_sign!r}: expected +1 or -1")
    sign = float(bend_sign)

    delta = q - p
    distance = math.hypot(delta[0], delta[1])
    heading = math.atan2(delta[1], delta[0]) if distance > 0.0 else 0.0
    shortest, longest = abs(upper - lower), upper + lower
    reachable = shortest <= distance <= longest
    d = min(max(distance, shortest), longest)

    # Law of cosines, solved for the two angles; the clip only absorbs rounding.
    cos_elbow = (d * d - upper * upper - lower * lower) / (2.0 * upper * lower)
    elbow = sign * math.acos(min(max(cos_elbow, -1.0), 1.0))
    if d > 0.0:
        cos_root = (upper * upper + d * d - lower * lower) / (2.0 * upper * d)
        root_offset = math.acos(min(max(cos_root, -1.0), 1.0))
    else:  # equal bones folded onto the root: any shoulder angle works
        root_offset = 0.0
    shoulder = _wrap(heading - sign * root_offset)
    return TwoBoneIK(shoulder, elbow, bool(reachable))


def two_bone_fk_2d(root, shoulder_angle, elbow_angle, upper_length, lower_length):
    """Forward kinematics: the elbow and hand positions of a posed two-bone limb.

    Args:
        root: (2,) float, shoulder position, length unit.
        shoulder_angle: float, radians, the upper bone's world angle.
        elbow_angle: float, radians, the lower bone's angle relative to the upper one.
        upper_length, lower_length: float > 0, length unit.

    Returns:
        ``(elbow, hand)``: two (2,) float64 arrays in world space, length unit.
    """
    p = validation.float_array("root", root, (2,))
    a1 = float(validation.float_array("shoulder_angle", shoulder_angle, ()))
    a2 = float(validation.float_array("elbow_angle", elbow_angle, ()))
    upper, lower = _check_lengths(upper_length, lower_length)
    elbow = p + upper * np.array([math.cos(a1), math.sin(a1)])
    hand = elbow + lower * np.array([math.cos(a1 + a2), math.sin(a1 + a2)])
    return elbow, hand

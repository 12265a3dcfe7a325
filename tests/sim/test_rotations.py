"""Rotations built from two directions near antiparallel (docs/SPEC.md section 4): the swings
and world rotations read back, on both backends."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import PointChainSet, Solver


def rotate(q, v):
    u, w = q[..., :3], q[..., 3:]
    t = 2 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def turn_between(q, r):
    """The angle (rad) of the rotation taking unit quaternion r to q (either sign)."""
    qv, qw, rv, rw = q[:3], q[3], r[:3], r[3]
    vec = rw * qv - qw * rv - np.cross(qv, rv)  # the vector part of q·conj(r)
    return 2 * np.arctan2(np.linalg.norm(vec), abs(qw * rw + qv @ rv))


def angle_between(a, b):
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    return np.arctan2(np.linalg.norm(np.cross(a, b), axis=-1), np.sum(a * b, axis=-1))


@pytest.mark.parametrize("side", [(0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.6, 0.0, -0.8)])
def test_swings_through_antiparallel_are_smallest_and_continuous(backend, side):
    """A segment hangs still along +y while its animated direction sweeps past -y (within
    1.1 degrees of antiparallel, in the plane of +y and ``side``): every swing and world
    rotation takes the animated direction onto the simulated one within 1e-3 rad, and from
    frame to frame the swing turns no more than the animated direction did (twice it)."""
    length = 0.13
    pivot = np.array([0.4, -0.2, 1.5])
    solver = Solver(PointChainSet([1], 2.0, 0.5), backend=backend)
    solver.set_pose(np.array([pivot, pivot + [0.0, length, 0.0]]))
    solver.advance(1 / 60)  # snapped onto the pose, at rest
    side = np.array(side) / np.linalg.norm(side)
    step = np.radians(0.03)
    last = None
    for eps in np.radians(1.1) - step * (np.arange(73) + 0.37):  # never exactly antiparallel
        animated = length * (np.array([0.0, -np.cos(eps), 0.0]) + np.sin(eps) * side)
        joints = np.array([pivot, pivot + animated])
        solver.set_pose(joints, joint_rotations=np.array([[0, 0, 0, 1.0]] * 2))
        solver.advance(0.0)  # no substep: the chain stays where it hangs
        p = solver.positions()
        simulated = p[1] - p[0]
        swing = solver.segment_swings()[0].astype(np.float64)
        world = solver.segment_rotations()[0].astype(np.float64)
        assert angle_between(rotate(swing, animated), simulated) < 1e-3
        assert angle_between(rotate(world, animated), simulated) < 1e-3  # identity joint frames
        if last is not None:
            assert turn_between(swing, last) < 2 * step
        last = swing

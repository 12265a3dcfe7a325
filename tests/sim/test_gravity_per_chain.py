"""Gravity per chain (SPEC 3 and 4): one solver whose chains each have their own gravity moves
each chain exactly as a solver of that chain alone with that gravity would."""
from __future__ import annotations

import numpy as np

from gpu_jiggle import AngleChainSet, PointChainSet, Solver

ANGLE_GRAVITY = [(0.0, -9.8), (0.0, 9.8), (0.0, 0.0)]
POINT_GRAVITY = [(0.0, -9.8, 0.0), (0.0, 0.0, 4.0), (0.0, 0.0, 0.0)]


def test_angle_chains_each_feel_their_own_gravity(backend):
    together = Solver(AngleChainSet([3, 3, 3], 0.5, 2.0, 0.3, gravity=ANGLE_GRAVITY), backend=backend)
    alone = [Solver(AngleChainSet([3], 0.5, 2.0, 0.3, gravity=g), backend=backend) for g in ANGLE_GRAVITY]
    for frame in range(90):
        roots = np.array([[np.sin(frame / 20), 0.0], [0.0, 2.0], [4.0, 0.0]])
        together.set_pose(roots, np.zeros(3), np.zeros(9))
        together.advance(1 / 60)
        for c, s in enumerate(alone):
            s.set_pose(roots[c:c + 1], np.zeros(1), np.zeros(3))
            s.advance(1 / 60)
    angles = together.angles()
    for c, s in enumerate(alone):
        np.testing.assert_array_equal(angles[3 * c:3 * c + 3], s.angles())
    # and the gravities did differ: the chains hang differently
    assert np.ptp(angles.reshape(3, 3)[:, -1]) > 0.5


def test_point_chains_each_feel_their_own_gravity(backend):
    origin = np.zeros(3)  # the same floating origin for every solver, so float32 rounding is alike
    hang = np.array([[0.0, -0.2 * k, 0.0] for k in range(4)])
    pivots = np.array([[0.0, 1.0, 0.0], [1.0, 1.0, 0.0], [2.0, 1.0, 0.0]])
    together = Solver(PointChainSet([3, 3, 3], 2.0, 0.4, gravity=POINT_GRAVITY), backend=backend, origin=origin)
    alone = [Solver(PointChainSet([3], 2.0, 0.4, gravity=g), backend=backend, origin=origin) for g in POINT_GRAVITY]
    for frame in range(90):
        sway = np.array([0.3 * np.sin(frame / 15), 0.0, 0.0])
        joints = pivots[:, None] + sway + hang[None]
        together.set_pose(joint_positions=joints.reshape(-1, 3))
        together.advance(1 / 60)
        for c, s in enumerate(alone):
            s.set_pose(joint_positions=joints[c])
            s.advance(1 / 60)
    positions = together.positions()
    for c, s in enumerate(alone):
        np.testing.assert_array_equal(positions[4 * c:4 * c + 4], s.positions())
    tips = positions.reshape(3, 4, 3)[:, -1] - pivots
    assert tips[1, 2] > 0.1 > abs(tips[0, 2])  # chain 1 blown along +z, chain 0 not


def test_gravity_changes_live_per_chain(backend):
    s = Solver(AngleChainSet([2, 2], 0.5, 2.0, 0.5, gravity=(0.0, -9.8)), backend=backend)
    s.set_parameters(gravity=[(0.0, -9.8), (0.0, 9.8)])
    np.testing.assert_array_equal(s.chain_set.gravity, [[0.0, -9.8], [0.0, 9.8]])
    for _ in range(120):
        s.set_pose(np.zeros((2, 2)), np.zeros(2), np.zeros(4))
        s.advance(1 / 60)
    tips = s.positions()[[2, 5], 1]
    assert tips[0] < -0.1 and tips[1] > 0.1  # one chain sags down, the other up

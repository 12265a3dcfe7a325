"""The frame-time output rule (docs/SPEC.md sections 2 and 9): what a read-back draws between
substeps, on both backends."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, Solver


def wrap(a):
    return (np.asarray(a, np.float64) + np.pi) % (2 * np.pi) - np.pi


def drawn(backend, chain_set, fps, seconds, pose):
    """Play ``pose(t) -> (root_position, root_angle, local_angle)`` at ``fps``; per frame the
    drawn (frame-time) angles and joint positions."""
    solver = Solver(chain_set, backend=backend)
    angles, positions = [], []
    for k in range(int(round(seconds * fps))):
        solver.set_pose(*pose((k + 1) / fps))
        solver.advance(1.0 / fps)
        angles.append(solver.angles().astype(np.float64))
        positions.append(solver.positions())
    return np.array(angles), np.array(positions)


def turn(t):
    """A turn that speeds up and slows down (rad): 0.25 turns/s with a 0.7 rad sway."""
    return 0.7 * np.sin(2.3 * t) + 2 * np.pi * 0.25 * t


@pytest.mark.parametrize("fps", [30, 75, 144])
def test_a_turn_is_drawn_alike_as_root_heading_or_first_local_angle(backend, fps):
    """The same turn given as the root's heading or as the first segment's local angle is
    the same simulation, so the drawn chains agree (within 0.1 mm on segments of 0.12 m)."""
    n = 5
    rig = AngleChainSet([n], 0.12, 2.5, 0.4, gravity=(0.0, -9.81))
    zeros = np.zeros(n - 1)
    _, by_heading = drawn(backend, rig, fps, 1.2, lambda t: ([[0.3, -0.2]], [turn(t)], np.r_[0.0, zeros]))
    _, by_local = drawn(backend, rig, fps, 1.2, lambda t: ([[0.3, -0.2]], [0.0], np.r_[turn(t), zeros]))
    assert np.abs(by_heading - by_local).max() <= 1e-4


@pytest.mark.parametrize("fps", [30, 60, 144, 240])
def test_a_step_turn_of_the_root_rises_to_its_first_peak_without_falling_back(backend, fps):
    """The root's heading turns 25 degrees in one frame: every segment's drawn angle rises
    (never falling back) to its first peak, which is its largest swing."""
    n = 3
    rig = AngleChainSet([n], 0.1, 2.0, 0.3)
    step = np.radians(25.0)
    angles, _ = drawn(backend, rig, fps, 1.4, lambda t: ([[0.0, 0.0]], [step if t > 0.4 else 0.0], np.zeros(n)))
    after = angles[int(round(0.4 * fps)):]
    rise = np.diff(after, axis=0)
    for s in range(n):
        falls = np.flatnonzero(rise[:, s] < -1e-6)
        first_peak = int(falls[0]) if falls.size else len(after) - 1
        assert after[first_peak, s] == after[:, s].max(), (s, np.degrees(after[:first_peak + 2, s]))
        assert after[first_peak, s] > step  # it swings past the new heading: a real peak


@pytest.mark.parametrize("fps", [45, 144])
@pytest.mark.parametrize("how", ["heading", "local angles", "walk"])
def test_steady_motion_is_drawn_on_the_pose(backend, fps, how):
    """A chain carried by a root turning steadily (given as its heading, or spread over its
    local angles) or walking steadily, without gravity, is drawn on its animated pose."""
    n = 4
    rig = AngleChainSet([n], 0.1, 3.0, 0.6)
    rate = 2 * np.pi * 0.6  # rad/s
    bend = np.array([0.3, -0.2, 0.25, 0.1])

    def pose(t):
        if how == "heading":
            return [[1.0, 2.0]], [rate * t], bend
        if how == "local angles":
            return [[1.0, 2.0]], [0.4], bend + rate * t / n
        return [[1.0 + 1.7 * t, 2.0 - 0.4 * t]], [0.4], bend

    angles, _ = drawn(backend, rig, fps, 3.0, pose)
    t = np.arange(1, len(angles) + 1) / fps
    heading, local = [], []
    for ti in t:
        _, h, lam = pose(ti)
        heading.append(h[0])
        local.append(lam)
    expected = np.array(heading)[:, None] + np.cumsum(np.array(local), axis=1)
    settled = t > 2.0
    assert np.abs(wrap(angles[settled] - expected[settled])).max() < 1e-3



@pytest.mark.parametrize("fps", [60, 144])
def test_a_step_turn_of_a_point_chain_is_drawn_rising_without_a_flick(backend, fps):
    """A point chain's whole pose turns 30 degrees about the vertical in one frame and holds:
    the drawn first segment turns towards it without first jumping ahead and falling back (a
    frame-time rule that carried the output with the targets' motion drew 15.7 degrees, then
    4.6, at 60 fps)."""
    from gpu_jiggle import PointChainSet

    rest = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.2, 0.0, 0.0], [0.3, 0.0, 0.0]])
    step = np.radians(30.0)
    turned = rest @ np.array([[np.cos(step), 0.0, -np.sin(step)], [0.0, 1.0, 0.0], [np.sin(step), 0.0, np.cos(step)]])
    solver = Solver(PointChainSet([3], 2.0, 0.3), backend=backend)
    headings = []
    for k in range(int(0.25 * fps)):
        solver.set_pose(turned if k >= 5 else rest)
        solver.advance(1.0 / fps)
        d = solver.positions()[1] - solver.positions()[0]
        headings.append(np.arctan2(-d[2], d[0]))
    after = np.array(headings[4:])
    assert after[-1] > np.radians(5.0)  # it does turn within the quarter second
    assert (np.diff(after) >= -1e-6).all(), np.degrees(after)


def turned_about_y(angle):
    """(3, 3): the rotation by ``angle`` rad about +y, for row vectors as ``points @ R.T``."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


@pytest.mark.parametrize("fps", [40, 90, 200])
def test_a_point_chain_on_a_steadily_turning_body_is_drawn_where_it_is_simulated(backend, fps):
    """A point chain bent out of line on a body that walks and turns steadily about the
    vertical settles into a shape that is still in the body's frame, so the drawn chain (at the
    frame's time) and the simulated one (at the last substep's), each seen in the body's frame
    at its own time, agree: within 0.1 mm on segments of 0.12 m (measured 0.003 mm; the drawn
    chain was a substep behind, 7.0 mm, when the frame-time output blended the last two
    substeps)."""
    from gpu_jiggle import PointChainSet

    rate = 2 * np.pi * 0.4  # rad/s
    bends = np.array([[1.0, 0.1, 0.0], [0.9, -0.3, 0.2], [0.7, -0.2, -0.4]])
    offsets = np.vstack([np.zeros(3), np.cumsum(0.12 * bends / np.linalg.norm(bends, axis=1)[:, None], axis=0)])
    walk = np.array([0.8, 0.0, 0.5])  # units/s
    solver = Solver(PointChainSet([3], 2.5, 0.5, rest_lengths=0.12), backend=backend)
    worst = 0.0
    for k in range(int(round(2.5 * fps))):
        t = (k + 1) / fps
        solver.set_pose(np.array([0.1, 1.2, -0.3]) + walk * t + offsets @ turned_about_y(rate * t).T)
        solver.advance(1.0 / fps)
        if t > 2.0:  # settled into the turn
            drawn, simulated = solver.positions(), solver.positions(raw=True)
            drawn_in_body = (drawn - drawn[0]) @ turned_about_y(rate * t)
            simulated_in_body = (simulated - simulated[0]) @ turned_about_y(rate * solver.sim_time)
            worst = max(worst, float(np.linalg.norm(drawn_in_body - simulated_in_body, axis=1).max()))
    assert worst <= 1e-4, worst

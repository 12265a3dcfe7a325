"""Cone limits of point chains (docs/SPEC.md section 9, "Angle limits"; KawaiiPhysics, Magica
Cloth, VRChat PhysBones and VRMC_springBone_limit's cone): each segment stays within β of its
target direction, its animated direction turned with its parent's simulated bend."""
from __future__ import annotations

import math

import numpy as np
import pytest

from gpu_jiggle import PointChainSet, Solver
from test_joint_limits import _between, _cross, _quat_rotate, _turn_axis

#: The issue's bound: never more than 1e-5 rad outside the limit.
LIMIT_TOLERANCE = 1e-5
#: GPU and reference agree within this (SPEC 8.6's cross-checks use the same order).
AGREE = 1e-4


def worst_excess(cs, joints, pose, limits, carried=None):
    """The largest angle by which a segment lies outside its cone, rad (negative: inside).
    ``carried``: segment → the axis of its bend's half turn at the last call (SPEC 4, step 2;
    updated)."""
    carried = {} if carried is None else carried
    worst = -np.inf
    for c, n in enumerate(cs.segment_counts):
        j0, s0 = int(cs.first_joint[c]), int(cs.first_segment[c])
        for i in range(n):
            animated = pose[j0 + i + 1] - pose[j0 + i]
            if i:
                parent_a = pose[j0 + i] - pose[j0 + i - 1]
                parent_s = joints[j0 + i] - joints[j0 + i - 1]
                axis, carried[s0 + i - 1] = _turn_axis(parent_a, parent_s, carried.get(s0 + i - 1, np.zeros(3)))
                animated = _quat_rotate(_between(parent_a, parent_s, axis), animated)
            simulated = joints[j0 + i + 1] - joints[j0 + i]
            cosine = np.dot(animated, simulated) / (np.linalg.norm(animated) * np.linalg.norm(simulated))
            sine = np.linalg.norm(_cross(animated, simulated)) / (np.linalg.norm(animated) * np.linalg.norm(simulated))
            worst = max(worst, math.atan2(sine, cosine) - limits[s0 + i])
    return worst


def _spun_chains(limits=None, **kwargs):
    counts = [4, 6, 3, 5]
    rng = np.random.default_rng(3)
    cs = PointChainSet(counts, rng.uniform(1.5, 5.0, 4), rng.uniform(0.05, 0.4, 4), gravity=(0.0, -9.81, 0.0),
                       angle_limit=np.inf if limits is None else limits, **kwargs)
    pose = np.concatenate([np.array([[0.3 * c, 0.0, 0.0]]) + np.outer(np.arange(n + 1), [0.05, -0.1, 0.02 * c])
                           for c, n in enumerate(counts)])
    return cs, pose


def _driven_pose(pose, k, rng, spin_hz=2.0, fps=120.0):
    """The pose spun about the vertical through the origin at ``spin_hz`` with random hitches."""
    angle = 2 * math.pi * spin_hz * k / fps
    rot = np.array([[math.cos(angle), 0, math.sin(angle)], [0, 1, 0], [-math.sin(angle), 0, math.cos(angle)]])
    hitch = rng.normal(0.0, 0.03, 3) if k % 17 == 0 else np.zeros(3)
    return pose @ rot.T + hitch


def test_driven_chains_never_leave_their_cones(backend):
    """Fast spins (2 turns/s), hitches and gravity, 1,200 substeps: after every substep (raw)
    and in every frame-time read-back, no segment is more than 1e-5 rad outside its cone; one
    chain with a limit of 0 stays on its target directions; the limits did bind."""
    cs0, pose = _spun_chains()
    limits = np.concatenate([np.full(4, 0.3), np.linspace(0.1, 0.9, 6), np.zeros(3), np.full(5, 0.6)])
    cs, _ = _spun_chains(limits)
    rng = np.random.default_rng(11)
    worst, bound = -np.inf, 0
    carried = {True: {}, False: {}}  # the bends' half-turn axes, after the substeps and in the output
    with Solver(cs, backend=backend, max_substeps=1) as solver:
        for k in range(1200):
            p = _driven_pose(pose, k, rng)
            solver.set_pose(p)
            ran = solver.advance(0.0 if k == 0 else solver.substep)
            for raw in (True, False) if ran else (False,):
                excess = worst_excess(cs, solver.positions(raw=raw), p, limits, carried[raw])
                worst = max(worst, excess)
                bound += excess > -1e-3
    assert worst < LIMIT_TOLERANCE, worst
    assert bound > 100


def _held(backend, limits, pose):
    cs, _ = _spun_chains(limits)
    with Solver(cs, backend=backend) as solver:
        out = []
        for k in range(60):
            solver.set_pose(pose)  # held: the chains sag under gravity and swing to rest
            solver.advance(0.0 if k == 0 else 1 / 60)
            out.append(solver.positions())
    return cs, np.array(out)


def test_a_limit_of_180_degrees_or_one_never_reached_changes_nothing(backend):
    """Bit for bit: a limit of π is none; chains that stay inside their limits (1.2 × the
    largest angle they reach without one) move exactly as without them."""
    _, pose = _spun_chains()
    cs, free = _held(backend, None, pose)
    reached = max(worst_excess(cs, joints, pose, np.zeros(cs.segment_count)) for joints in free)
    assert reached > 0.05  # they did swing off their targets
    assert np.array_equal(free, _held(backend, math.pi, pose)[1])
    assert np.array_equal(free, _held(backend, 1.2 * reached, pose)[1])


def test_cone_limits_agree_on_both_backends(gl):
    limits = 0.25
    cs, pose = _spun_chains(limits)
    out = []
    for backend in ("gpu", "cpu"):
        rng = np.random.default_rng(5)
        with Solver(cs, backend=backend) as solver:
            for k in range(120):
                solver.set_pose(_driven_pose(pose, k, rng, fps=60.0))
                solver.advance(0.0 if k == 0 else 1 / 60)
            out.append(solver.positions())
    assert np.abs(out[0] - out[1]).max() < AGREE


@pytest.mark.parametrize("value, match", [(-0.1, r"angle_limit(\[0\])? = -0.1: expected a value >= 0"),
                                          ([0.2, math.nan], r"angle_limit\[1\] = nan")])
def test_bad_angle_limits_are_refused(value, match):
    with pytest.raises(ValueError, match=match):
        PointChainSet([2, 2], 3.0, 0.5, angle_limit=value)


def test_set_parameters_changes_the_limit_and_checks_it():
    cs, pose = _spun_chains()
    with Solver(cs, backend="cpu") as solver:
        solver.set_pose(pose)
        solver.advance(0.0)
        solver.set_parameters(angle_limit=0.2)
        assert np.all(solver.chain_set.angle_limit == 0.2)
        with pytest.raises(ValueError, match="angle_limit"):
            solver.set_parameters(angle_limit=-1.0)
        assert np.all(solver.chain_set.angle_limit == 0.2)

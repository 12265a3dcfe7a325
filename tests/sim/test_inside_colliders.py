"""Inside colliders (SPEC 4.2; VRMC_springBone_extended_collider's inside sphere and inside
capsule): spheres and capsules that keep particles, and so segments, inside them."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import PointChainSet, Solver

#: Nothing outside beyond this (float32 rounding of positions about 1 unit from the pivot).
OUTSIDE_TOLERANCE = 1e-5
RHO = 0.01
#: Substeps of the random drive: the shaders 10,000 (about 20 s on llvmpipe); the numpy
#: reference, some 8× slower per substep for four short chains, the first 2,000 of the same
#: drive (same seed), in which particles touch the sphere's wall in some 350 substeps and the
#: capsule's in more than 1,000.
SUBSTEPS = {"gpu": 10_000, "cpu": 2_000}


def _distance_beyond(points, shape):
    """How far each point (n, 3) lies beyond the allowed region of ``shape``: ("sphere",
    centre, radius) or ("capsule", a, b, radius), the particle radius taken off."""
    if shape[0] == "sphere":
        return np.linalg.norm(points - shape[1], axis=1) - (shape[2] - RHO)
    a, b, r = np.asarray(shape[1]), np.asarray(shape[2]), shape[3]
    t = np.clip((points - a) @ (b - a) / np.dot(b - a, b - a), 0, 1)
    return np.linalg.norm(points - (a + t[:, None] * (b - a)), axis=1) - (r - RHO)


@pytest.mark.parametrize("shape", [("sphere", np.array([0.0, -0.3, 0.0]), 0.45),
                                   ("capsule", [-0.3, -0.3, 0.0], [0.3, -0.3, 0.0], 0.25)])
def test_random_substeps_never_leave_an_inside_collider(backend, shape):
    """Chains hanging from pivots inside the shape (their poses reach outside it), driven by
    random hitches, gravity and gusty wind (``SUBSTEPS``): no particle is ever outside, after
    any substep (raw state) or in the frame-time output; and they do press against the wall
    (so it acted)."""
    rng = np.random.default_rng(7)
    counts = [3, 5, 8, 2]
    cs = PointChainSet(counts, rng.uniform(1.0, 4.0, 4), rng.uniform(0.05, 0.5, 4), gravity=(0.0, -9.81, 0.0),
                       particle_radius=RHO)
    pivots = np.array([[-0.1, -0.2, 0.0], [0.1, -0.25, 0.05], [0.0, -0.15, -0.05], [0.05, -0.3, 0.0]])
    joints = np.concatenate([p + np.outer(np.arange(n + 1), [0.0, -0.09, 0.0]) for p, n in zip(pivots, counts)])
    kwargs = ({"spheres": [[*shape[1], shape[2]]], "sphere_inside": [True]} if shape[0] == "sphere" else
              {"capsules": [[*shape[1], *shape[2], shape[3]]], "capsule_inside": [True]})
    worst, touched = -np.inf, 0
    with Solver(cs, backend=backend, max_substeps=1) as solver:
        solver.set_wind([2.0, 0.0, 1.0], gust_amplitude=6.0, gust_wave_vector=[3.0, 0.0, 1.0], gust_frequency=1.3)
        offset = np.zeros(3)
        for k in range(SUBSTEPS[backend]):
            offset = 0.9 * offset + rng.normal(0.0, 0.01, 3)
            solver.set_pose(joints + offset)
            solver.set_colliders(**kwargs)
            ran = solver.advance(0.0 if k == 0 else solver.substep)
            for raw in (True, False) if ran else (False,):  # the first pose snaps onto the targets
                beyond = _distance_beyond(solver.positions(raw=raw)[np.delete(np.arange(len(joints)),
                                                                              cs.first_joint)], shape)
                worst = max(worst, float(beyond.max()))
            touched += int((beyond > -1e-4).any())
    assert worst < OUTSIDE_TOLERANCE, worst
    assert touched > 100


def test_inside_and_outside_flags_are_checked():
    cs = PointChainSet([2], 3.0, 0.5)
    with Solver(cs, backend="cpu") as solver:
        solver.set_pose(np.array([[0.0, 0, 0], [0.1, 0, 0], [0.2, 0, 0]]))
        with pytest.raises(ValueError, match=r"sphere_inside: expected shape \(1,\), got \(2,\)"):
            solver.set_colliders(spheres=[[0, 0, 0, 1.0]], sphere_inside=[True, False])
        with pytest.raises(TypeError, match="capsule_inside: expected booleans"):
            solver.set_colliders(capsules=[[0, 0, 0, 1, 0, 0, 0.5]], capsule_inside=[1])


def test_an_inside_sphere_holds_and_an_outside_one_repels(backend):
    """The same sphere about a hanging chain: as an inside collider it holds the tip within
    its radius; as an ordinary one it pushes the chain out of it."""
    cs = PointChainSet([4], 2.0, 0.3, gravity=(0.0, -9.81, 0.0), particle_radius=RHO)
    joints = np.array([[0.0, 0.0, 0.0]] + [[0.0, -0.1 * k, 0.0] for k in range(1, 5)])
    sphere = [[0.0, -0.1, 0.0, 0.25]]
    tips = {}
    for inside in (True, False):
        with Solver(cs, backend=backend) as solver:
            for k in range(120):
                solver.set_pose(joints)
                solver.set_colliders(spheres=sphere, sphere_inside=[inside])
                solver.advance(0.0 if k == 0 else 1 / 60)
            tips[inside] = solver.positions()[-1]
    assert np.linalg.norm(tips[True] - [0.0, -0.1, 0.0]) <= 0.25 - RHO + OUTSIDE_TOLERANCE
    assert np.linalg.norm(tips[False] - [0.0, -0.1, 0.0]) >= 0.25 + RHO - OUTSIDE_TOLERANCE

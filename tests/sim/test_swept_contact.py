"""Swept contact (docs/SPEC.md section 9, "Swept contact"): a collider faster than its own
radius per substep does not pass through a chain (both backends)."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import PointChainSet, Solver

SEGMENTS, LENGTH = 6, 0.08
JOINTS = np.array([[0.0, 0.0, 0.0]] + [[0.0, -LENGTH * k, 0.0] for k in range(1, SEGMENTS + 1)])


def _distance_to_segments(a, b, p):
    """Distance from point p (3,) to each segment [a, b] (n, 3)."""
    ab = b - a
    t = np.clip(np.sum((p - a) * ab, axis=-1) / np.maximum(np.sum(ab * ab, axis=-1), 1e-30), 0.0, 1.0)
    return np.linalg.norm(a + t[..., None] * ab - p, axis=-1)


@pytest.mark.parametrize("kind, radius", [("sphere", 0.08), ("capsule", 0.04)])
def test_a_fast_collider_does_not_pass_through_a_hanging_chain(backend, kind, radius):
    """A collider crossing a hanging chain at 20 m/s (about twice its diameter per substep), one
    frame per substep: after every substep no joint and no segment is inside it, and no joint
    went through it: the straight path of each joint relative to the collider over a substep
    stays beyond a third of its radius from the centre (a joint pushed round the surface cuts a
    chord; one that passed through came within 1 cm)."""
    speed, y = 20.0, -0.25  # the collider's centre line passes 1 cm from a joint
    cs = PointChainSet([SEGMENTS], 3.0, 0.5, gravity=(0.0, -9.81, 0.0))
    worst_sampled, worst_path = np.inf, np.inf
    with Solver(cs, backend=backend, max_substeps=1) as solver:
        h, previous = solver.substep, None
        for k in range(int(1.2 / (speed * h)) + 4):
            centre = np.array([-0.6 + speed * h * k, y, 0.0])
            solver.set_pose(JOINTS)
            if kind == "sphere":
                solver.set_colliders(spheres=[[*centre, radius]])
            else:  # along z, across the chain
                solver.set_colliders(capsules=[[centre[0], y, -0.3, centre[0], y, 0.3, radius]])
            solver.advance(0.0 if k == 0 else h)
            joints = solver.positions(raw=True)
            joints[:, 2] = 0.0  # the capsule's axis runs along z through z = 0: its distance is in xy
            worst_sampled = min(worst_sampled, np.linalg.norm(joints[1:] - centre, axis=1).min(),
                                _distance_to_segments(joints[:-1], joints[1:], centre).min())
            if previous is not None:
                for tau in np.linspace(0.0, 1.0, 41):
                    relative = ((previous[0] + tau * (joints - previous[0]))
                                - (previous[1] + tau * (centre - previous[1])))
                    worst_path = min(worst_path, np.linalg.norm(relative[1:], axis=1).min())
            previous = (joints, centre)
    assert worst_sampled > radius - 1e-4, worst_sampled
    assert worst_path > radius / 3, worst_path


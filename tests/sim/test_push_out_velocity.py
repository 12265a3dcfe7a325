"""Push-out velocity (docs/SPEC.md section 9): a chain posed through a collider leaves it with
no more velocity than springs and gravity give, and comes to rest where it would hang (both
backends)."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import PointChainSet, Solver

SEGMENTS, LENGTH = 6, 0.08
JOINTS = np.array([[0.0, -LENGTH * k, 0.0] for k in range(SEGMENTS + 1)])
# The bound is 10 m/s; springs and gravity alone give this chain about 3 m/s after the
# collider slides in from the side, so the bound leaves a clear margin over both.
FASTEST = 5.0
CASES = [("sphere", 0.2, 0.08), ("sphere", 0.2, 0.1), ("capsule", 0.12, 0.08), ("capsule", 0.12, 0.1)]


def _run(backend, kind, radius, depth, seconds, slide_in=False, fps=60.0):
    """The chain with its middle joint ``depth`` inside the collider (or, ``slide_in``, the
    collider moved into that place from 0.5 to the side over the first second): the fastest
    joint (m/s) at the end of any frame, and the last raw positions."""
    cs = PointChainSet([SEGMENTS], 2.0, 0.5, gravity=(0.0, -9.81, 0.0))
    centre = np.array([radius - depth, -3 * LENGTH, 0.0])
    fastest = 0.0
    with Solver(cs, backend=backend) as solver:
        for k in range(int(seconds * fps) + 1):
            c = centre + [max(0.0, 0.5 * (1.0 - k / fps)) if slide_in else 0.0, 0.0, 0.0]
            solver.set_pose(JOINTS)
            if kind == "sphere":
                solver.set_colliders(spheres=[[*c, radius]])
            else:  # along z, across the chain
                solver.set_colliders(capsules=[[c[0], c[1], -0.3, c[0], c[1], 0.3, radius]])
            solver.advance(0.0 if k == 0 else 1.0 / fps)
            velocity = solver.state()["segment_state"]["velocity"][:, :3]
            fastest = max(fastest, float(np.linalg.norm(velocity, axis=1).max()))
        return fastest, solver.positions(raw=True)


@pytest.mark.parametrize("kind, radius, depth", CASES)
def test_a_chain_posed_through_a_collider_is_not_flung_out(backend, kind, radius, depth):
    """Pushed out of a sphere or capsule it starts inside, no joint moves faster than springs
    and gravity make it (before, the length step turned the push-out into the tips' velocity:
    10.0 and 15.7 m/s at 10 cm deep)."""
    fastest, _ = _run(backend, kind, radius, depth, 1.0)
    assert fastest < FASTEST, fastest


@pytest.mark.parametrize("kind, radius, depth", CASES)
def test_a_chain_posed_through_a_collider_comes_to_rest_where_it_would_hang(kind, radius, depth):
    """After 3 s the chain lies within 2 mm of where the same chain lies when the collider slides
    in from the side instead (a chain flung over the top lies centimetres away; at 8 cm deep in
    the sphere the tips of both still sway by about 1 mm, as they did before; the numpy path,
    the cross-checks hold the GPU to it)."""
    _, posed = _run("cpu", kind, radius, depth, 3.0)
    _, slid_in = _run("cpu", kind, radius, depth, 3.0, slide_in=True)
    assert np.linalg.norm(posed - slid_in, axis=1).max() < 2e-3

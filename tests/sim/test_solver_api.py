"""Smaller parts of the public API: slices into the flat arrays, release, backend choice."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, Solver


def test_slices_split_flat_arrays_per_chain(backend):
    cs = AngleChainSet([2, 1, 3], [1.0, 1.0, 2.0, 0.5, 0.5, 0.5], 2.0, 0.5)
    s = Solver(cs, backend=backend)
    s.set_pose([[0, 0], [10, 0], [20, 0]], [0.0, np.pi / 2, np.pi], np.zeros(6))
    s.advance(1 / 60)
    p = s.positions()
    pivots = [p[sl][0] for sl in cs.joint_slices()]
    np.testing.assert_allclose(pivots, [[0, 0], [10, 0], [20, 0]])
    tips = [p[sl][-1] for sl in cs.joint_slices()]
    np.testing.assert_allclose(tips, [[2, 0], [10, 2], [18.5, 0]], atol=1e-5)
    assert [len(cs.lengths[sl]) for sl in cs.chain_slices()] == [2, 1, 3]


def test_release_frees_and_refuses_further_use(backend):
    with Solver(AngleChainSet([3], 1.0, 2.0, 0.5), backend=backend) as s:
        s.set_pose([[0, 0]], [0.0], np.zeros(3))
        s.advance(1 / 60)
    with pytest.raises(RuntimeError, match="released"):
        s.advance(1 / 60)


def test_reported_backend(backend):
    assert Solver(AngleChainSet([1], 1.0, 2.0, 0.5), backend=backend).backend == backend

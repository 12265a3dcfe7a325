"""Large chain sets build, advance and read back on both backends."""
from __future__ import annotations

import numpy as np

from gpu_jiggle import AngleChainSet, Solver


def test_half_a_million_segments(backend):
    c = 50_000
    cs = AngleChainSet(np.full(c, 10), 0.1, 3.0, 0.5, gravity=(0.0, -9.8))
    s = Solver(cs, backend=backend)
    i = np.arange(c)
    roots = np.stack([(i % 250) * 0.3, (i // 250) * 0.3], axis=1)  # a 75 x 60 field
    s.set_pose(roots, np.zeros(c), np.zeros(cs.segment_count))
    assert s.advance(1 / 30) == 4
    p = s.positions()
    assert p.shape == (cs.segment_count + c, 2)
    assert np.isfinite(p).all()
    tips = p.reshape(c, 11, 2)[:, -1]
    assert (tips[:, 1] < roots[:, 1]).all()  # every chain sagged under gravity
    np.testing.assert_allclose(tips[:, 0] - roots[:, 0], tips[0, 0] - roots[0, 0], atol=1e-4)  # all alike (float32 at 75 units: ulp 7.6e-6, ten segments summed)

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


def test_a_million_point_segments_on_the_gpu(gl):
    """125,000 strands of 8 segments build, advance and read back (about 200 bytes per
    segment on the GPU; see docs/PERFORMANCE.md)."""
    from gpu_jiggle import PointChainSet

    c = 125_000
    cs = PointChainSet(np.full(c, 8), 3.0, 0.5, rest_lengths=0.02, gravity=(0.0, -9.8, 0.0))
    assert cs.segment_count == 1_000_000
    s = Solver(cs, backend="gpu")
    i = np.arange(c)
    pivots = np.stack([(i % 350) * 0.05, np.zeros(c), (i // 350) * 0.05], 1)
    strand = np.array([[0.0, 0.02 * k, 0.0] for k in range(9)])  # standing straight up
    s.set_pose(joint_positions=np.repeat(pivots, 9, axis=0) + np.tile(strand, (c, 1)))
    s.set_wind((1.0, 0.0, 0.0), 0.5, (0.5, 0.0, 0.2), 0.5)  # gusts never reverse it
    assert s.advance(1 / 30) == 4
    p = s.positions()
    assert p.shape == (1_125_000, 3) and np.isfinite(p).all()
    tips = p.reshape(c, 9, 3)[:, -1]
    assert (tips[:, 0] > pivots[:, 0]).all()  # every strand leans with the wind
    s.release()


def test_more_work_groups_than_one_row_holds(gl, monkeypatch):
    """Chains beyond 65535 work groups go on further rows of the dispatch grid; shown here
    with rows of 3 groups (192 chains), against the reference."""
    from gpu_jiggle.gl import dispatch

    monkeypatch.setattr(dispatch, "MAX_GROUPS_X", 3)
    assert dispatch.dispatch_size(1000) == (3, 6)
    rng = np.random.default_rng(2)
    cs = AngleChainSet(rng.integers(1, 4, 1000), 0.2, 2.0, 0.5, gravity=(0.0, -9.8))
    solvers = [Solver(cs, backend=b) for b in ("cpu", "gpu")]
    for f in range(5):
        for s in solvers:
            s.set_pose(rng.normal(size=(1000, 2)) * 0 + [[f * 0.1, 0.0]], np.full(1000, 0.3), np.zeros(cs.segment_count))
            s.advance(1 / 60)
    np.testing.assert_allclose(solvers[1].positions(), solvers[0].positions(), atol=1e-5)
    assert np.abs(solvers[1].positions()[1:] - solvers[1].positions()[0]).max() > 0  # every chain written


def test_dispatch_rows_for_the_largest_sets():
    from gpu_jiggle.gl.dispatch import MAX_GROUPS_X, dispatch_size

    x, y = dispatch_size(4_194_241)
    assert y == 2 and x * y * 64 >= 4_194_241 and x <= MAX_GROUPS_X
    assert dispatch_size(0) == (1, 1)

"""Cutting an angle chain finer (docs/SPEC.md section 9, "Cutting a chain finer"): with the
same (f, ζ) per segment the response changes with the cut; :func:`recut` keeps it."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, Solver
from gpu_jiggle.sim.spring import recut
from gpu_jiggle import verify
from gpu_jiggle.verify.cut import tip_swing

LENGTH = 0.48
CUTS = (2, 6, 12)


def test_recut_keeps_the_static_bend_and_the_resonance_gain():
    f0, z0, n0 = 3.0, 0.4, 6
    for n in (1, 2, 5, 6, 12, 40):
        f, z = recut(f0, z0, n0, n)
        assert f == pytest.approx(f0 * math.sqrt(n * (n + 1) / (n0 * (n0 + 1))), rel=1e-12)
        # The resonance gain of the n-level cascade equals the tuned cut's.
        assert n * math.log(1 + 1 / (4 * z * z)) == pytest.approx(n0 * math.log(1 + 1 / (4 * z0 * z0)), rel=1e-9)
        back = recut(f, z, n, n0)
        assert back == pytest.approx((f0, z0), rel=1e-9)
    assert recut(f0, z0, n0, n0) == (f0, z0)
    f, z = recut([3.0, 2.0], [0.3, 0.6], [6, 4], [12, 2])
    assert f.shape == z.shape == (2,) and f[1] == pytest.approx(2.0 * math.sqrt(6 / 20))
    f, z = recut([3.0, 2.0], 0.5, 6, 12)  # broadcast: one ζ per chain too
    assert f.shape == z.shape == (2,) and z[0] == z[1]


@pytest.mark.parametrize("zeta", [1e-200, 1e-8, 0.4999999, 0.5, 1.0, 50.0])
def test_recut_is_exact_for_tiny_and_large_damping(zeta):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow or division by zero on the way
        _, z = recut(3.0, zeta, 1, 12)
    assert z > zeta  # shared over more levels, each level may resonate less
    # (1 + 1/(4ζ'²))^12 = 1 + 1/(4ζ²), in logs written for the range of each side.
    lhs = 12 * (math.log1p(4 * z * z) - 2 * math.log(2 * z))
    rhs = math.log1p(4 * zeta * zeta) - 2 * math.log(2 * zeta)
    assert lhs == pytest.approx(rhs, rel=1e-9)


@pytest.mark.parametrize("args, error, message", [
    ((0.0, 0.3, 6, 12), ValueError, "frequency_hz = 0.0"),
    ((3.0, 0.0, 6, 12), ValueError, "damping_ratio = 0.0"),
    ((3.0, float("nan"), 6, 12), ValueError, "damping_ratio = nan"),
    ((3.0, 0.3, 0, 12), ValueError, "tuned_segment_count = 0: expected an integer in [1, "),
    ((3.0, 0.3, 6, 2 ** 70), ValueError, "segment_count = 1180591620717411303424"),
    ((3.0, 0.3, [6, 0], [1, 2]), ValueError, "tuned_segment_count[1] = 0"),
    ((3.0, 0.3, 6, 2.5), TypeError, "segment_count = 2.5: expected an integer"),
    ((3.0, 0.3, True, 2), TypeError, "tuned_segment_count = True"),
    (([3.0, 2.0], [0.5, 0.4, 0.3], 6, 12), ValueError, "do not broadcast"),
    ((3.0, 1e-300, 100000, 1), ValueError, "below the smallest float64"),
])
def test_recut_refuses_bad_values(args, error, message):
    with pytest.raises(error, match=re.escape(message)):
        recut(*args)


def _settled_tip_drop(backend, segments, frequency, damping_ratio):
    """A chain held out horizontally under light gravity, settled: how far its tip hangs
    below the horizontal, per unit of chain length."""
    cs = AngleChainSet([segments], LENGTH / segments, frequency, damping_ratio, gravity=(0.0, -0.2))
    with Solver(cs, backend=backend) as solver:
        solver.set_pose([[0.0, 0.0]], [0.0], np.zeros(segments))
        for _ in range(600):
            solver.advance(1 / 60)
        return -float(solver.positions()[-1, 1]) / LENGTH


def test_recut_keeps_the_static_bend_under_gravity(backend):
    drops = {n: _settled_tip_drop(backend, n, *recut(2.0, 0.7, 6, n)) for n in CUTS}
    same = {n: _settled_tip_drop(backend, n, 2.0, 0.7) for n in CUTS}
    for n in CUTS:
        assert drops[n] == pytest.approx(drops[6], rel=0.02), drops
    # The same values per segment: the tip hangs n·(n+1)/2 times as far as one segment's.
    assert same[12] / same[2] == pytest.approx(12 * 13 / (2 * 3), rel=0.1), same


def test_recut_keeps_the_tip_swing_of_a_jumping_cape(backend):
    """The cape of :mod:`gpu_jiggle.verify.cut` (a small hop): the tuned cut (6 segments, 3 Hz, ζ 0.6)
    against 2 and 12 with the same values and with recut values."""
    r = verify.cut_response(backend)
    tuned = tip_swing(backend, 6, 3.0, 0.6)
    for n in (2, 12):
        swing = tip_swing(backend, n, *recut(3.0, 0.6, 6, n))
        assert swing == pytest.approx(tuned, rel=0.25), (n, swing, tuned)
    # With the tuned values on every segment the 12-segment cape swings more than twice as far.
    assert tip_swing(backend, 12, 3.0, 0.6) > 2 * tuned
    assert r.passed and r.figure <= 0.25


def test_the_cut_row_is_in_the_verify_table():
    assert verify.cut_response in verify.CHECKS

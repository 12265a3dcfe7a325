"""The verify check of the exact integrator (SPEC section 1, ``integrator="exact"``): a 1 rad
target step against the analytic step response, the semi-implicit step beside it, and a 60 Hz
chain at h = 1/30 s. The bounds are written here, not taken from the check.
"""
from __future__ import annotations

import math

import pytest

from gpu_jiggle import verify

#: The exact step's worst error at h = 1/30 s, rad of the 1 rad step (float32 state).
EXACT_LIMIT = 1e-5
#: The semi-implicit step is off the analytic response by more than this many times the
#: exact step's error (at h = 1/120 s, where it is stable).
SEMI_FACTOR = 10.0
#: The 60 Hz tip under gravity sags 6·g/k below its pose (g/k per level, 1 + 2 + 3 levels).
SAG = 6 * 9.81 / (120 * math.pi) ** 2


def _detail(r, start):
    keys = [k for k in r.details if k.startswith(start)]
    assert len(keys) == 1, (start, list(r.details))
    return r.details[keys[0]]


def test_exact_integrator_check(backend):
    r = verify.exact_integrator(backend)
    assert r.passed, (r.figure, r.details)
    assert r.name == "exact_integrator" and r.title == "exact integrator"
    assert 0.0 <= r.figure < EXACT_LIMIT
    assert _detail(r, "exact, h = 1/120 s: worst error") < EXACT_LIMIT
    assert _detail(r, "semi-implicit, h = 1/120 s: worst error") > SEMI_FACTOR * r.figure
    # 60 Hz at h = 1/30 s: refused by the semi-implicit step, finite and settled with the exact one.
    assert _detail(r, "60 Hz at h = 1/30 s: semi-implicit refused") is True
    assert _detail(r, "60 Hz at h = 1/30 s: exact positions finite") is True
    assert abs(_detail(r, "60 Hz exact: tip off its pose after 8 s") - SAG) < 0.1 * SAG
    assert _detail(r, "60 Hz exact: tip movement over the last second") < 1e-6
    # The measured frequency and successive-peak ratio of the exact run are the analytic ones.
    analytic = [float(v) for v in _detail(r, "ζ 0.05 analytic:").split(" / ")]
    exact = [float(v) for v in _detail(r, "ζ 0.05 exact, h = 1/30 s:").split(" / ")]
    assert analytic[0] == pytest.approx(2.0 * math.sqrt(1 - 0.05 ** 2), abs=1e-4)
    assert analytic[1] == pytest.approx(math.exp(-2 * math.pi * 0.05 / math.sqrt(1 - 0.05 ** 2)), abs=1e-4)
    assert exact == pytest.approx(analytic, abs=2e-4)


def test_exact_integrator_is_listed_and_plotted(tmp_path):
    pytest.importorskip("matplotlib")
    assert verify.exact_integrator in verify.CHECKS
    assert verify.CHECKS.index(verify.exact_integrator) == verify.CHECKS.index(verify.cut_response) + 1
    r = verify.exact_integrator("cpu")
    paths = verify.write_plots([r], tmp_path)
    assert [p.name for p in paths] == ["exact_integrator.png"]
    assert paths[0].stat().st_size > 10_000

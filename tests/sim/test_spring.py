"""SPEC section 1: coefficients, the stability bound and the parameter converters."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import stable_frequency, to_frequency_damping_ratio, to_mass_stiffness_damping
from gpu_jiggle.sim.spring import coefficients, is_stable


@pytest.mark.parametrize("zeta, bound", [(0.0, 2.0), (1.0, 2 * (np.sqrt(2) - 1))])
def test_stable_frequency_matches_the_closed_forms(zeta, bound):
    h = 1 / 120
    assert stable_frequency(zeta, h) * 2 * np.pi * h == pytest.approx(bound, rel=1e-12)


@pytest.mark.parametrize("zeta", [0.0, 0.1, 0.5, 1.0, 1.2, 3.0])
def test_stable_frequency_is_the_edge_of_growth(zeta):
    """Just below the bound a free oscillation does not grow; just above, it grows without end."""
    h = 1 / 120
    f_max = stable_frequency(zeta, h)

    def growth(f):
        k, c = coefficients(f, zeta)
        k, c = float(k), float(c)
        x, v, peaks = 1.0, 0.0, []
        for _ in range(4000):
            v += (-k * x - c * v) * h
            x += v * h
            peaks.append(abs(x))
            if peaks[-1] > 1e6:
                return np.inf
        return max(peaks[3000:]) / max(peaks[:1000])

    assert growth(f_max * 0.999) <= 1.01  # ζ = 0 holds its amplitude (up to where peaks are sampled)
    assert growth(f_max * 1.01) > 10.0
    assert is_stable(f_max * 0.999, zeta, h) and not is_stable(f_max * 1.001, zeta, h)


def test_converters_round_trip():
    f, zeta = to_frequency_damping_ratio(mass=2.0, stiffness=50.0, damping=3.0)
    assert f == pytest.approx(np.sqrt(25.0) / (2 * np.pi))
    assert zeta == pytest.approx(3.0 / (2 * np.sqrt(100.0)))
    m, s, d = to_mass_stiffness_damping(f, zeta, mass=2.0)
    assert (m, s, d) == pytest.approx((2.0, 50.0, 3.0))
    k, c = coefficients(f, zeta)
    assert float(k) == pytest.approx(25.0, rel=1e-6) and float(c) == pytest.approx(1.5, rel=1e-6)


@pytest.mark.parametrize("call, message", [
    (lambda: to_frequency_damping_ratio(0.0, 1.0, 1.0), "mass = 0.0"),
    (lambda: to_frequency_damping_ratio(1.0, -1.0, 1.0), "stiffness = -1.0"),
    (lambda: to_frequency_damping_ratio(1.0, 1.0, [0.0, float("nan")]), "damping[1] = nan"),
    (lambda: to_mass_stiffness_damping(-2.0, 0.5), "frequency_hz = -2.0"),
    (lambda: stable_frequency(-0.1, 1 / 120), "damping_ratio = -0.1"),
    (lambda: stable_frequency(0.5, 0.0), "substep = 0.0"),
])
def test_converters_refuse_bad_values(call, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        call()

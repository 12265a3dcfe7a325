"""describe(): one spring's step response and its semi-implicit substep, checked against
closed forms written out here, dense scans of exact trajectories, a fine RK4 integration of the
continuous spring, and actual runs of the semi-implicit step."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from gpu_jiggle.sim.response import SpringResponse, describe

H = 1 / 120


def step_error(t, f, zeta):
    """e(t) = 1 - x(t) of x'' = -k(x - 1) - c x' from rest at 0, by the textbook closed forms."""
    w0 = 2 * np.pi * f
    if zeta < 1:
        wd = w0 * np.sqrt(1 - zeta ** 2)
        return np.exp(-zeta * w0 * t) * (np.cos(wd * t) + zeta * w0 / wd * np.sin(wd * t))
    if zeta == 1:
        return (1 + w0 * t) * np.exp(-w0 * t)
    a, b = sorted(-np.roots([1, 2 * zeta * w0, w0 * w0]).real)  # slow and fast rates
    return (b * np.exp(-a * t) - a * np.exp(-b * t)) / (b - a)


def scanned_settling(f, zeta, t_max, n=2_000_000):
    """(t_i, t_i+1): the grid interval holding the last time |e| = 2 %."""
    t = np.linspace(0.0, t_max, n)
    outside = np.flatnonzero(np.abs(step_error(t, f, zeta)) > 0.02)
    assert outside[-1] < n - 1000, "scan too short"
    return t[outside[-1]], t[outside[-1] + 1]


def rk4_settling(f, zeta, dt=2e-6, t_max=1.0):
    """Last time |e| > 2 % for the continuous spring, integrated with RK4 (no closed form)."""
    w0 = 2 * np.pi * f
    k, c = w0 * w0, 2 * zeta * w0
    n = int(t_max / dt)
    e, v, last = 1.0, 0.0, 0.0

    def acc(e, v):
        return -k * e - c * v

    for i in range(n):
        k1e, k1v = v, acc(e, v)
        k2e, k2v = v + 0.5 * dt * k1v, acc(e + 0.5 * dt * k1e, v + 0.5 * dt * k1v)
        k3e, k3v = v + 0.5 * dt * k2v, acc(e + 0.5 * dt * k2e, v + 0.5 * dt * k2v)
        k4e, k4v = v + dt * k3v, acc(e + dt * k3e, v + dt * k3v)
        e_new = e + dt / 6 * (k1e + 2 * k2e + 2 * k3e + k4e)
        v += dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        if abs(e) > 0.02 >= abs(e_new):  # interpolate the crossing of the band edge
            last = (i + (abs(e) - 0.02) / (abs(e) - abs(e_new))) * dt
        e = e_new
    return last


def semi_implicit_run(f, zeta, h, steps, x=1.0, v=0.0):
    """x after each of ``steps`` SPEC section 1 steps: v += a·h; x += v·h, a = -k x - c v."""
    w0 = 2 * np.pi * f
    k, c = w0 * w0, 2 * zeta * w0
    xs = np.empty(steps)
    for i in range(steps):
        v += (-k * x - c * v) * h
        x += v * h
        xs[i] = x
    return xs


def step_matrix(f, zeta, h):
    """The update matrix, found by stepping the unit states (not by the derivation under test)."""
    columns = []
    for x0, v0 in ((1.0, 0.0), (0.0, 1.0)):
        w0 = 2 * np.pi * f
        v = v0 + (-w0 * w0 * x0 - 2 * zeta * w0 * v0) * h
        columns.append((x0 + v * h, v))
    return np.array(columns).T


# -- the continuous spring --------------------------------------------------------------------------
def test_overshoot_period_and_half_life_of_zeta_0_2():
    r = describe(3.0, 0.2)
    assert r.overshoot_fraction == pytest.approx(math.exp(-math.pi * 0.2 / math.sqrt(0.96)), rel=1e-13)
    t = np.linspace(0, 0.5, 500_001)
    assert -step_error(t, 3.0, 0.2).min() == pytest.approx(r.overshoot_fraction, rel=1e-8)  # the first peak
    assert r.period_s == pytest.approx(1 / 3, rel=1e-14)
    assert r.damped_period_s == pytest.approx(1 / (3 * math.sqrt(0.96)), rel=1e-13)
    assert r.half_life_s == pytest.approx(math.log(2) / (0.2 * 6 * math.pi), rel=1e-13)
    assert r.substep_s is None and r.semi_implicit_stable is None and r.semi_implicit_decay_error is None


@pytest.mark.parametrize("f, zeta", [(3.0, 0.05), (3.0, 0.2), (3.0, 0.4), (1.5, 0.7), (3.0, 0.77), (3.0, 0.79),
                                     (3.0, 0.95), (3.0, 1.0), (3.0, 1.5), (0.5, 4.0), (40.0, 0.3)])
def test_settling_time_is_the_last_exit_of_a_dense_exact_trajectory(f, zeta):
    w0 = 2 * np.pi * f
    slow = zeta * w0 if zeta <= 1 else w0 * (zeta - math.sqrt(zeta ** 2 - 1))
    lo, hi = scanned_settling(f, zeta, t_max=2.5 * math.log(50 / math.sqrt(1 - min(zeta, 0.99) ** 2)) / slow + 1 / f)
    got = describe(f, zeta).settling_time_2pct_s
    assert lo < got <= hi + 1e-12, (lo, got, hi)


def test_settling_time_is_not_the_rule_of_thumb():
    """4/(ζω0) is 0.531 s for f = 3, ζ = 0.4; the exact last exit is ~16 % earlier."""
    got = describe(3.0, 0.4).settling_time_2pct_s
    assert abs(got / (4 / (0.4 * 6 * math.pi)) - 1) > 0.1


def test_settling_time_jumps_where_the_overshoot_is_2_percent():
    zeta_c = math.log(50) / math.sqrt(math.pi ** 2 + math.log(50) ** 2)  # overshoot exactly 2 %
    below, above = describe(3.0, zeta_c * (1 - 1e-6)), describe(3.0, zeta_c * (1 + 1e-6))
    assert below.overshoot_fraction > 0.02 > above.overshoot_fraction
    # below: the response last leaves the band just after its first peak (t = π/ω_d), above it never
    # leaves the band again once it has entered it
    assert below.damped_period_s / 2 < below.settling_time_2pct_s < 1.01 * below.damped_period_s / 2
    assert above.settling_time_2pct_s < 0.75 * below.settling_time_2pct_s


@pytest.mark.parametrize("zeta", [0.999999, 1.0, 1.000001])
def test_near_critical_damping_is_continuous_and_matches_rk4(zeta):
    r = describe(3.0, zeta)
    assert r.settling_time_2pct_s == pytest.approx(rk4_settling(3.0, zeta), abs=1e-6)
    critical = describe(3.0, 1.0)
    u = 5.834  # (1 + u)·exp(-u) = 0.02, the critically damped settling time in units of 1/ω0
    assert (1 + u) * math.exp(-u) == pytest.approx(0.02, rel=1e-3)
    assert critical.settling_time_2pct_s * 6 * math.pi == pytest.approx(u, rel=1e-4)
    assert r.settling_time_2pct_s == pytest.approx(critical.settling_time_2pct_s, rel=1e-5)
    assert r.half_life_s == pytest.approx(math.log(2) / (6 * math.pi), rel=1e-2)
    assert 0.0 <= r.overshoot_fraction < 1e-300
    assert r.damped_period_s > 200 and (zeta < 1 or r.damped_period_s == math.inf)
    assert all(math.isfinite(v) for v in (r.settling_time_2pct_s, r.half_life_s))


def test_overdamped_half_life_is_the_slow_roots():
    r = describe(2.0, 3.0)
    t = np.array([1.0, 1.0 + r.half_life_s])  # late enough that the fast root is gone
    e = step_error(t, 2.0, 3.0)
    assert e[1] / e[0] == pytest.approx(0.5, rel=1e-9)
    assert r.overshoot_fraction == 0.0 and r.damped_period_s == math.inf


def test_undamped_spring_never_settles():
    r = describe(3.0, 0)
    assert r.settling_time_2pct_s == math.inf and r.half_life_s == math.inf
    assert r.overshoot_fraction == 1.0 and r.damped_period_s == pytest.approx(1 / 3)


# -- the semi-implicit substep --------------------------------------------------------------------
@pytest.mark.parametrize("zeta", [0.0, 0.3, 1.0, 2.5])
def test_stability_flag_flips_at_the_bound(zeta):
    x = 2 * (math.sqrt(zeta ** 2 + 1) - zeta)  # root of x² + 4ζx = 4
    bound = x / (2 * math.pi * H)
    below, above = describe(bound * (1 - 1e-9), zeta, H), describe(bound * (1 + 1e-9), zeta, H)
    assert below.semi_implicit_stable is True and above.semi_implicit_stable is False
    assert below.largest_stable_frequency_hz == pytest.approx(bound, rel=1e-12)
    assert below.semi_implicit_decay_error is not None
    assert above.semi_implicit_frequency_error is None and above.semi_implicit_decay_error is None
    radius = [max(abs(np.linalg.eigvals(step_matrix(f, zeta, H)))) for f in (bound * 0.999, bound * 1.001)]
    assert radius[1] > 1 and (radius[0] < 1 if zeta > 0 else radius[0] == pytest.approx(1, abs=1e-12))


@pytest.mark.parametrize("f, zeta, h", [(3.0, 0.4, H), (10.0, 0.1, H), (20.0, 0.0, H), (8.0, 0.3, 1 / 60),
                                        (3.0, 0.9, 1 / 300)])
def test_frequency_error_is_the_period_of_a_simulated_run(f, zeta, h):
    r = describe(f, zeta, h)
    w0 = 2 * np.pi * f
    xs = semi_implicit_run(f, zeta, h, 20_000 if zeta == 0 else int(300 / (zeta * w0 * h)))
    xs = xs[np.abs(xs) > 1e-280]  # before underflow
    i = np.flatnonzero(np.sign(xs[1:]) != np.sign(xs[:-1]))
    crossings = (i + xs[i] / (xs[i] - xs[i + 1])) * h
    assert len(crossings) > 20
    measured = np.pi * (len(crossings) - 1) / (crossings[-1] - crossings[0]) / (w0 * math.sqrt(1 - zeta ** 2)) - 1
    assert abs(measured) > 1e-3  # there is an error to find
    assert r.semi_implicit_frequency_error == pytest.approx(measured, abs=2e-5)


@pytest.mark.parametrize("f, zeta, h", [(3.0, 0.4, H), (8.0, 0.3, 1 / 60), (10.0, 0.1, H)])
def test_decay_error_is_the_envelope_of_a_simulated_run(f, zeta, h):
    r = describe(f, zeta, h)
    w0 = 2 * np.pi * f
    xs = np.abs(semi_implicit_run(f, zeta, h, int(200 / (zeta * w0 * h))))
    peaks = np.flatnonzero((xs[1:-1] > xs[:-2]) & (xs[1:-1] >= xs[2:])) + 1
    rate = np.polyfit(peaks * h, np.log(xs[peaks]), 1)[0]
    measured = -rate / (zeta * w0) - 1
    assert abs(measured) > 1e-2
    assert r.semi_implicit_decay_error == pytest.approx(measured, abs=2e-4)


@pytest.mark.parametrize("zeta, x", [(1.0, 0.2), (2.0, 0.1), (1.000001, 0.05), (1.0, 0.8)])
def test_overdamped_decay_error_is_the_slowest_mode_of_a_simulated_run(zeta, x):
    f = 3.0
    h = x / (2 * np.pi * f)
    r = describe(f, zeta, h)
    assert r.semi_implicit_stable and r.semi_implicit_frequency_error is None
    w0 = 2 * np.pi * f
    slow = w0 * (zeta - math.sqrt(zeta ** 2 - 1))
    xs = semi_implicit_run(f, zeta, h, 2000)
    measured = -math.log(abs(xs[-1] / xs[-2])) / h / slow - 1  # late ratio: the dominant eigenvalue
    assert r.semi_implicit_decay_error == pytest.approx(measured, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("f, zeta", [(3.0, 0.0), (3.0, 0.4), (30.0, 0.05), (15.0, 0.9), (12.0, 0.75)])
def test_errors_match_the_eigenvalues_of_the_stepped_matrix(f, zeta):
    r = describe(f, zeta, H)
    lam = np.linalg.eigvals(step_matrix(f, zeta, H))
    dominant = lam[np.argmax(abs(lam))]
    w0 = 2 * np.pi * f
    wd = w0 * math.sqrt(1 - zeta ** 2)
    assert r.semi_implicit_frequency_error == pytest.approx(abs(np.angle(dominant)) / H / wd - 1, abs=1e-9)
    if zeta == 0:
        assert r.semi_implicit_decay_error == 0.0
    else:
        assert r.semi_implicit_decay_error == pytest.approx(-math.log(abs(dominant)) / H / (zeta * w0) - 1, abs=1e-9)


def test_a_step_that_does_not_oscillate_has_frequency_error_minus_one():
    r = describe(3.0, 0.95, 1 / 30)  # ζ + ω0h/2 > 1: the step's eigenvalues are real
    assert r.semi_implicit_frequency_error == -1.0
    xs = semi_implicit_run(3.0, 0.95, 1 / 30, 400, x=1.0)
    assert np.all(xs > 0)


def test_small_steps_converge_to_the_continuous_spring():
    r = describe(3.0, 0.4, 1e-6)
    assert abs(r.semi_implicit_frequency_error) < 1e-4 and abs(r.semi_implicit_decay_error) < 1e-4


# -- input, output ----------------------------------------------------------------------------------
@pytest.mark.parametrize("args, name, shown", [((-1.0, 0.5), "frequency", "-1.0"), ((0, 0.5), "frequency", "0.0"),
                                               ((math.inf, 0.5), "frequency", "inf"),
                                               ((3.0, -0.1), "damping_ratio", "-0.1"),
                                               ((3.0, math.nan), "damping_ratio", "nan"),
                                               ((3.0, 0.5, 0.0), "substep", "0.0"),
                                               ((3.0, 0.5, -H), "substep", "-0.0083")])
def test_bad_values_name_the_argument_and_value(args, name, shown):
    with pytest.raises(ValueError, match=rf"^{name} = {shown}.*: expected a finite value >=? 0"):
        describe(*args)


def test_the_message_of_the_brief():
    with pytest.raises(ValueError) as info:
        describe(-1.0, 0.4)
    assert str(info.value) == "frequency = -1.0: expected a finite value > 0 (Hz)"


@pytest.mark.parametrize("args", [(True, 0.5), (3.0, False), ("3", 0.5), (None, 0.5), (3.0, 0.5, "1/120"),
                                  (np.array([3.0]), 0.5), (3.0, [0.5]), (np.bool_(True), 0.5)])
def test_non_numbers_are_type_errors(args):
    with pytest.raises(TypeError):
        describe(*args)


def test_numpy_and_integer_scalars_are_accepted():
    assert describe(np.float32(3.0), np.int64(1), np.float64(H)) == describe(3.0, 1.0, H)


def test_the_response_is_frozen_and_formats_with_units():
    r = describe(3, 0.4, H)
    assert isinstance(r, SpringResponse)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.frequency_hz = 4.0
    text = str(r)
    assert text == r.format() and len(text.splitlines()) >= 10
    assert "f = 3 Hz" in text and "0.4" in text
    assert f"{100 * math.exp(-math.pi * 0.4 / math.sqrt(0.84)):.4g}" in text  # overshoot, percent
    for unit in (" s", "Hz", "%"):
        assert unit in text
    assert "substep" not in str(describe(3, 0.4)) and "NO" in str(describe(100, 0.5, H))
    assert 'integrator="exact"' in str(describe(100, 0.5, H))  # what to choose instead

"""The exact integrator (SPEC section 1, ``integrator="exact"``): the closed-form step of each
damped spring over a substep, in every damping regime, with no stability bound.

The analytic solutions here are written independently of ``gpu_jiggle.sim.integrator``: the
roots of ``s² + c·s + k`` as complex numbers (their real forms where they coincide).
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, PointChainSet, Solver
from gpu_jiggle.sim import integrator
from gpu_jiggle.sim.spring import UnstableSpringError

ZETAS = (0.0, 0.05, 0.5, 0.999999, 1.0, 1.000001, 2.0, 10.0)
SUBSTEPS = (1 / 30, 1 / 120, 1 / 1000)
FREQUENCY = 2.0
SECONDS = 10.0
#: The issue's bound for the integrator's math (float64): 1e-6 of the step.
MATH_LIMIT = 1e-6
#: The backends keep φ in float32 (SPEC: the reference is float32, as the shader) and round it
#: once per substep, by up to 6e-8 near 1 rad; a slow creep (ζ = 10) rounds the same way at
#: every substep, so the bound grows with the substeps run: 2e-6 + 1.5e-8 per substep (1.5e-4
#: of the step over 10 s at h = 1/1000; a wrong coefficient is off by 1e-2 or more).
FLOAT32_BASE, FLOAT32_PER_SUBSTEP = 2e-6, 1.5e-8


def free_and_impulse(frequency, zeta, t):
    """u(t), the free response from (1, 0), and s(t), from (0, 1), of d'' = -k·d - c·d'
    (float64; t an array ≥ 0)."""
    w0 = 2 * math.pi * frequency
    beta = zeta * w0
    if zeta == 1.0:
        e = np.exp(-beta * t)
        return e * (1 + beta * t), t * e
    root = np.sqrt(complex(beta * beta - w0 * w0))
    r1, r2 = -beta + root, -beta - root
    if zeta > 1.0:  # the slow root without cancellation
        r1 = -w0 * w0 / (beta + root)
    e1, e2 = np.exp(r1 * t), np.exp(r2 * t)
    u = (r1 * e2 - r2 * e1) / (r1 - r2)
    s = (e1 - e2) / (r1 - r2)
    return u.real, s.real


def step_response(frequency, zeta, t, substep, relative: bool):
    """The angle φ(t) of one segment whose target steps from 0 to 1 at the first substep, as
    the solver samples it. v1 (world damping): the target jumps, φ = 1 - u(t). v2 (relative
    damping): the target ramps over the first substep, φ = 1 - (s(t) - s(t - h))/h."""
    u, s = free_and_impulse(frequency, zeta, t)
    if not relative:
        return 1 - u
    _, s_late = free_and_impulse(frequency, zeta, np.maximum(t - substep, 0.0))
    return 1 - (s - s_late) / substep


@pytest.mark.parametrize("substep", SUBSTEPS)
@pytest.mark.parametrize("zeta", ZETAS)
def test_the_coefficients_give_the_analytic_solution(zeta, substep):
    """Iterated in float64 for 10 s, the exact step (with the target's ramp over the first
    substep, v2) stays on the analytic step response to 1e-6 of the step."""
    w0 = 2 * math.pi * FREQUENCY
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow, no 0/0 near ζ = 1
        d_d, d_v, d_b, v_d, v_v, v_b = integrator.step_coefficients([w0 * w0], [2 * zeta * w0], substep)[0]
    n = int(round(SECONDS / substep))
    phi, omega, reference, rate = 0.0, 0.0, 0.0, 1.0 / substep
    out = np.empty(n)
    for i in range(n):
        d, d_rate = phi - reference, omega - rate
        phi, omega = phi + rate * substep + d_d * d + d_v * d_rate, omega + v_d * d + v_v * d_rate
        reference, rate = 1.0, 0.0
        out[i] = phi
    t = np.arange(1, n + 1) * substep
    assert np.max(np.abs(out - step_response(FREQUENCY, zeta, t, substep, True))) < MATH_LIMIT


def test_the_coefficients_hold_a_constant_force_exactly():
    """d_b and v_b: a spring at rest under a held force b settles at b/k, and its first step
    is the analytic one, for tiny and large ω0·h."""
    for f, zeta, h in ((1e-3, 0.3, 1e-3), (0.5, 0.0, 1 / 120), (60.0, 1.0, 1 / 30), (300.0, 10.0, 1 / 30)):
        w0 = 2 * math.pi * f
        k, c, b = w0 * w0, 2 * zeta * w0, 9.81
        d_d, d_v, d_b, v_d, v_v, v_b = integrator.step_coefficients([k], [c], h)[0]
        t = np.linspace(0.0, h, 2001)
        _, s = free_and_impulse(f, zeta, t)
        integral = (h / 6000) * (s[0] + s[-1] + 4 * s[1:-1:2].sum() + 2 * s[2:-1:2].sum())  # Simpson
        assert d_b == pytest.approx(integral, rel=1e-9)
        assert v_b == pytest.approx(s[-1], rel=1e-9)
        # At rest on its equilibrium offset b/k it stays there.
        assert abs(d_d * (b / k) + d_b * b) <= 1e-9 * b / k
        assert abs(v_d * (b / k) + v_b * b) <= 1e-9 * b / k / h


def run_step(backend, relative, substep, frame_substeps=8):
    """One angle chain per ζ of ZETAS, its target stepped to 1 at the first substep; φ at the
    end of every frame for 10 s (frames of ``frame_substeps`` substeps after the first)."""
    cs = AngleChainSet([1] * len(ZETAS), 1.0, FREQUENCY, list(ZETAS))
    solver = Solver(cs, backend=backend, substep=substep, integrator="exact", target_path="linear",
                    damping_frame="relative" if relative else "world")
    roots = np.zeros((len(ZETAS), 2))
    solver.set_pose(roots, np.zeros(len(ZETAS)), np.zeros(len(ZETAS)))
    solver.advance(0.0)
    solver.set_pose(roots, np.zeros(len(ZETAS)), np.ones(len(ZETAS)))
    times, angles = [], []
    solver.advance(substep)  # the step, within one substep
    elapsed = 1
    while elapsed * substep < SECONDS - 1e-9:
        solver.advance(frame_substeps * substep)
        elapsed += frame_substeps
        times.append(elapsed * substep)
        angles.append(solver.angles(raw=True))
    return np.array(times), np.array(angles)


@pytest.mark.parametrize("substep", SUBSTEPS)
@pytest.mark.parametrize("relative", [True, False], ids=["v2", "v1-damping"])
def test_a_step_target_follows_the_analytic_solution(backend, relative, substep):
    times, angles = run_step(backend, relative, substep)
    for j, zeta in enumerate(ZETAS):
        want = step_response(FREQUENCY, zeta, times, substep, relative)
        err = np.abs(angles[:, j] - want)
        limit = FLOAT32_BASE + FLOAT32_PER_SUBSTEP * times / substep
        worst = int(np.argmax(err / limit))
        assert err[worst] < limit[worst], f"ζ = {zeta}: {err[worst]:.3g} off the analytic step response at " \
                                          f"t = {times[worst]:.3f} s"


def _ramp_then_hold(backend, substep, integrator_name, zetas=ZETAS):
    cs = AngleChainSet([1] * len(zetas), 1.0, FREQUENCY, list(zetas))
    solver = Solver(cs, backend=backend, substep=substep, integrator=integrator_name, target_path="linear")
    roots = np.zeros((len(zetas), 2))
    solver.set_pose(roots, np.zeros(len(zetas)), np.zeros(len(zetas)))
    solver.advance(0.0)
    solver.set_pose(roots, np.zeros(len(zetas)), np.ones(len(zetas)))
    angles = []
    for _ in range(300):  # 5 s in frames of 2/120 s
        solver.advance(2 / 120)
        angles.append(solver.angles(raw=True))
    return np.array(angles)


def test_runs_at_h_and_half_h_agree(backend):
    """A target ramp over the first 2/120 s, then held (v2): the substeps h and h/2 sample the
    same continuous path, and the exact step integrates it exactly, so both runs give the
    same angles at the common frame times, to float32 rounding (1200 substeps at h/2). The
    semi-implicit step, whose error is of order h, parts by far more."""
    exact = [_ramp_then_hold(backend, h, "exact") for h in (1 / 120, 1 / 240)]
    assert np.max(np.abs(exact[0] - exact[1])) < FLOAT32_BASE + FLOAT32_PER_SUBSTEP * 1200
    assert np.max(np.abs(exact[0][:30] - 1)) > 0.1  # it did move
    semi = [_ramp_then_hold(backend, h, "semi-implicit", (0.05, 0.5, 1.0)) for h in (1 / 120, 1 / 240)]
    assert np.max(np.abs(semi[0] - semi[1])) > 1e-3


def test_60_hz_at_a_30th_of_a_second(backend):
    """f = 60 Hz with h = 1/30 s (ω0·h = 12.6): refused by the semi-implicit step, whose
    message suggests the exact integrator; stable with it, settling on its pose."""
    cs = PointChainSet([3], 60.0, 0.3, gravity=(0.0, -9.81, 0.0))
    with pytest.raises(UnstableSpringError, match='integrator="exact"'):
        Solver(cs, backend=backend, substep=1 / 30)
    solver = Solver(cs, backend=backend, substep=1 / 30, integrator="exact")
    joints = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.2, 0.0, 0.0], [0.3, 0.0, 0.0]])
    solver.set_pose(joints)
    for i in range(240):  # 8 s, the pivot shaken for the first 2
        shake = 0.05 * math.sin(2 * math.pi * 3 * i / 30) if i < 60 else 0.0
        solver.set_pose(joints + [0.0, shake, 0.0])
        solver.advance(1 / 30)
        assert np.all(np.isfinite(solver.positions()))
    # Under gravity a 60 Hz spring sags by g/k per level: (1 + 2 + 3)·9.81/(120π)² m at the tip.
    sag = 6 * 9.81 / (120 * math.pi) ** 2
    tip = solver.positions()[-1]
    assert abs(tip[1] + sag) < 0.1 * sag and abs(tip[0] - 0.3) < 1e-3


def test_exact_in_a_rig_and_set_parameters(backend):
    """set_parameters with the exact integrator takes a frequency the semi-implicit step
    refuses, and the step changes with it (the chain settles at the new g/k)."""
    cs = AngleChainSet([1], 1.0, 2.0, 0.7, gravity=(0.0, -9.81))
    solver = Solver(cs, backend=backend, substep=1 / 60, integrator="exact")
    solver.set_pose([[0.0, 0.0]], [0.0], [0.0])
    solver.advance(1 / 60)
    solver.set_parameters(frequency=80.0)
    for _ in range(120):
        solver.advance(1 / 60)
    k = (2 * math.pi * 80.0) ** 2
    assert solver.angles()[0] == pytest.approx(-9.81 / k, rel=2e-2)
    semi = Solver(cs, backend=backend, substep=1 / 60)
    with pytest.raises(UnstableSpringError):
        semi.set_parameters(frequency=80.0)
    assert semi.chain_set.frequency[0] == 2.0


def test_integrator_name_is_checked():
    cs = AngleChainSet([1], 1.0, 2.0, 0.5)
    with pytest.raises(ValueError, match="did you mean 'exact'"):
        Solver(cs, backend="cpu", integrator="exakt")
    with pytest.raises(TypeError, match="integrator"):
        Solver(cs, backend="cpu", integrator=1)


@pytest.mark.parametrize("options", [{"integrator": "exact"},
                                     {"target_path": "linear", "damping_frame": "world", "integrator": "exact"},
                                     {"target_path": "linear"}, {"target_path": "hermite"}])
def test_a_saved_state_keeps_the_solver_options(options):
    """save_state records the options: load_state makes a solver with them (a 60 Hz spring
    at h = 1/30 s only runs exactly) that goes on bit for bit, and restore refuses a blob
    saved with other options, leaving the solver as it was."""
    frequency = 60.0 if options.get("integrator") == "exact" else 2.0
    cs = AngleChainSet([2], 0.5, frequency, 0.3, gravity=(0.0, -9.81))
    solver = Solver(cs, backend="cpu", substep=1 / 30, **options)
    for k in range(5):
        solver.set_pose([[0.1 * k, 0.0]], [0.0], [0.3, 0.0])
        solver.advance(0.0 if k == 0 else 1 / 30)
    blob = solver.save_state()
    loaded = Solver.load_state(blob, backend="cpu")
    assert (loaded.integrator, loaded.target_path, loaded.damping_frame) == \
        (solver.integrator, solver.target_path, solver.damping_frame)
    for s in (solver, loaded):
        s.set_pose([[0.6, 0.0]], [0.2], [0.3, 0.0])
        s.advance(1 / 30)
    assert np.array_equal(solver.angles(), loaded.angles())
    other = Solver(AngleChainSet([2], 0.5, 2.0, 0.3, gravity=(0.0, -9.81)), backend="cpu", substep=1 / 30)
    before = other.save_state()
    if frequency == 2.0:
        with pytest.raises(ValueError, match=rf"state: saved with target_path='{options['target_path']}'; this "
                                             r"solver has target_path='monotone'"):
            other.restore(blob)
        assert other.save_state() == before

"""The exact integrator (docs/SPEC.md section 1, ``integrator="exact"``; section 9, "Exact
integrator") against the analytic step response, beside the semi-implicit step.

One angle segment per damping ratio (f = 2 Hz, no gravity, v2's relative damping, the linear
target path): its local target steps from 0 to 1 rad on the first substep, then is held. The
solver's angle φ (rad) at the end of every frame is compared with the analytic response

    φ(t) = 1 - (s(t) - s(t - h))/h        (t ≥ h; s = 0 for t < 0)

where s is the impulse response of ``d'' = -k·d - c·d'`` (k = ω0², c = 2ζω0, ω0 = 2πf): the
target ramps from 0 to 1 over the first substep h and the damping acts on the offset. s is
written here from the roots of ``r² + c·r + k`` (complex for ζ < 1), independently of
:mod:`gpu_jiggle.sim.integrator`.
"""
from __future__ import annotations

import math

import numpy as np

from ..sim.chains import AngleChainSet, PointChainSet
from ..sim.solver import Solver
from ..sim.spring import UnstableSpringError, is_stable, stable_frequency
from .measure import V2
from .result import CheckResult

FREQUENCY = 2.0
ZETAS = (0.05, 0.5, 1.0, 2.0)
#: The damping ratios drawn, and measured for frequency and decay (the first).
TRACED = (0.05, 0.5)
COARSE, FINE = 1.0 / 30.0, 1.0 / 120.0
DURATION, FRAME_SUBSTEPS = 5.0, 8
#: The exact step's worst error, rad of the 1 rad step (float32 state, rounded every substep).
EXACT_LIMIT = 1e-5
#: The 60 Hz row: a 3-segment point chain at h = 1/30 s (ω0·h = 12.6), shaken, then held.
STIFF_FREQUENCY, STIFF_DAMPING, GRAVITY = 60.0, 0.3, 9.81
STIFF_SECONDS, SHAKE_SECONDS, SHAKE_HZ, SHAKE_AMPLITUDE = 8.0, 2.0, 3.0, 0.05
#: Settled: the tip moves less than this over the last second, units (chain length 0.3).
SETTLED_LIMIT = 1e-6
#: The solver options compared: v2's relative damping, the linear target path, each step.
EXACT_LINEAR = {**V2, "target_path": "linear", "integrator": "exact"}
SEMI_LINEAR = {**V2, "target_path": "linear", "integrator": "semi-implicit"}


def impulse_response(frequency: float, zeta: float, t) -> np.ndarray:
    """s(t) of ``d'' = -k·d - c·d'`` from (d, d') = (0, 1): (T,) float64 for t (T,) in s;
    0 for t < 0. Critical damping is ``t·e^(-βt)`` (β = ζω0); over-damped, the slow root is
    ``-k/(β + γ)`` (γ = √(β² - k)), free of cancellation."""
    t = np.asarray(t, np.float64)
    w0 = 2.0 * math.pi * frequency
    beta = zeta * w0
    if zeta == 1.0:
        s = t * np.exp(-beta * t)
    else:
        root = np.sqrt(complex(beta * beta - w0 * w0))
        fast, slow = -beta - root, (-w0 * w0 / (beta + root) if zeta > 1.0 else -beta + root)
        s = ((np.exp(slow * t) - np.exp(fast * t)) / (slow - fast)).real
    return np.where(t >= 0.0, s, 0.0)


def step_response(frequency: float, zeta: float, t, substep: float) -> np.ndarray:
    """φ(t), rad, (T,) for t (T,) ≥ 0 in s: the analytic response to a 1 rad target ramped
    over the first substep, ``τ(t) - (s(t) - s(t - h))/h`` with τ = min(t/h, 1)."""
    t = np.asarray(t, np.float64)
    ramp = np.clip(t / substep, 0.0, 1.0)
    return ramp - (impulse_response(frequency, zeta, t) - impulse_response(frequency, zeta, t - substep)) / substep


def step_run(backend: str, zetas, substep: float, options, frame_substeps: int = FRAME_SUBSTEPS):
    """One segment per ζ, the target stepped on the first substep (a frame of one substep),
    then frames of ``frame_substeps``. Returns (times (T,) s, angles (T, Z) rad)."""
    cs = AngleChainSet([1] * len(zetas), 1.0, FREQUENCY, list(zetas))
    roots, zero = np.zeros((len(zetas), 2)), np.zeros(len(zetas))
    times, angles = [], []
    with Solver(cs, backend=backend, substep=substep, **options) as solver:
        solver.set_pose(roots, zero, zero)
        solver.advance(0.0)
        solver.set_pose(roots, zero, np.ones(len(zetas)))
        elapsed, frame = 0, 1
        while elapsed * substep < DURATION - 1e-9:
            elapsed += solver.advance(frame * substep)
            times.append(elapsed * substep)
            angles.append(solver.angles(raw=True).astype(np.float64))
            frame = frame_substeps
    return np.asarray(times), np.asarray(angles)


def worst_error(backend, zetas, substep, options, frame_substeps=FRAME_SUBSTEPS) -> float:
    """The largest |φ - analytic| over the ζ runs, rad."""
    t, phi = step_run(backend, zetas, substep, options, frame_substeps)
    want = np.stack([step_response(FREQUENCY, z, t, substep) for z in zetas], 1)
    return float(np.max(np.abs(phi - want)))


def frequency_and_ratio(deviation, substep: float):
    """(Hz, successive-peak ratio) of a free oscillation sampled every substep, (T,): the
    recurrence ``x[n+1] = p·x[n] + q·x[n-1]`` fitted (Prony's method) has the root
    ``z = e^((-β + iω)·h)``, so f = arg z / (2πh) and the ratio is ``|z|^(2π / arg z)``."""
    x = np.asarray(deviation, np.float64)
    (p, q), *_ = np.linalg.lstsq(np.stack([x[1:-1], x[:-2]], 1), x[2:], rcond=None)
    z = 0.5 * (p + np.sqrt(complex(p * p + 4.0 * q)))
    turn = abs(np.angle(z))
    return turn / (2.0 * math.pi * substep), abs(z) ** (2.0 * math.pi / turn)


def stiff_row(backend: str):
    """The 60 Hz chain at h = 1/30 s: (semi-implicit refused, exact positions finite, exact
    tip's distance from its pose after 8 s, its largest movement over the last second), units."""
    cs = PointChainSet([3], STIFF_FREQUENCY, STIFF_DAMPING, gravity=(0.0, -GRAVITY, 0.0))
    try:
        Solver(cs, backend=backend, substep=COARSE).close()
        refused = False
    except UnstableSpringError:
        refused = True
    joints = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.2, 0.0, 0.0], [0.3, 0.0, 0.0]])
    frames, finite, tips = int(round(STIFF_SECONDS / COARSE)), True, []
    with Solver(cs, backend=backend, substep=COARSE, integrator="exact") as solver:
        for i in range(frames):
            t = i * COARSE
            shake = SHAKE_AMPLITUDE * math.sin(2.0 * math.pi * SHAKE_HZ * t) if t < SHAKE_SECONDS else 0.0
            solver.set_pose(joints + [0.0, shake, 0.0])
            solver.advance(0.0 if i == 0 else COARSE)
            positions = solver.positions().astype(np.float64)
            finite &= bool(np.all(np.isfinite(positions)))
            tips.append(positions[-1])
    tips = np.asarray(tips)
    last_second = tips[-int(round(1.0 / COARSE)) - 1:]
    movement = float(np.max(np.linalg.norm(last_second - tips[-1], axis=1)))
    return refused, finite, float(np.linalg.norm(tips[-1] - joints[-1])), movement


def exact_integrator(backend: str) -> CheckResult:
    """The exact step's worst |φ - analytic| at h = 1/30 s for ζ in ``ZETAS`` (the figure,
    held below ``EXACT_LIMIT``), with the 60 Hz row (refused by the semi-implicit step, run
    finite and settled by the exact one) also held; the semi-implicit step's errors and the
    measured frequency and decay are reported beside them."""
    exact_coarse, exact_fine = (worst_error(backend, ZETAS, h, EXACT_LINEAR) for h in (COARSE, FINE))
    details = {"exact, h = 1/120 s: worst error, rad": exact_fine}
    for label, h in (("1/120", FINE), ("1/30", COARSE)):
        semi = worst_error(backend, ZETAS, h, SEMI_LINEAR)
        details[f"semi-implicit, h = {label} s: worst error, rad (not held)"] = semi
    refused, finite, offset, movement = stiff_row(backend)
    sag = 6.0 * GRAVITY / (2.0 * math.pi * STIFF_FREQUENCY) ** 2  # g/k per level: (1 + 2 + 3)·g/k at the tip
    details.update({"60 Hz at h = 1/30 s: semi-implicit refused": refused,
                    "60 Hz at h = 1/30 s: exact positions finite": finite,
                    f"60 Hz exact: tip off its pose after 8 s, units (not held; sag 6·g/k = {sag:.3g})": offset,
                    f"60 Hz exact: tip movement over the last second, units (limit {SETTLED_LIMIT:g})": movement})
    traces = {"zetas": TRACED, "substep": COARSE, "frequency": FREQUENCY}
    for name, options in (("exact", EXACT_LINEAR), ("semi-implicit", SEMI_LINEAR)):
        traces["time"], traces[name] = step_run(backend, TRACED, COARSE, options, 1)
    traces["analytic"] = np.stack([step_response(FREQUENCY, z, traces["time"], COARSE) for z in TRACED], 1)
    traces["dense time"] = np.linspace(0.0, DURATION, 2001)
    traces["dense analytic"] = np.stack([step_response(FREQUENCY, z, traces["dense time"], COARSE) for z in TRACED], 1)
    zeta = TRACED[0]
    damped = math.sqrt(1.0 - zeta * zeta)
    measured = {"analytic": (FREQUENCY * damped, math.exp(-2.0 * math.pi * zeta / damped)),
                "exact, h = 1/30 s": frequency_and_ratio(traces["exact"][:, 0] - 1.0, COARSE),
                "semi-implicit, h = 1/30 s": frequency_and_ratio(traces["semi-implicit"][:, 0] - 1.0, COARSE)}
    # The largest substep 1/n the semi-implicit step keeps stable at this f and ζ.
    n = math.floor(FREQUENCY / stable_frequency(zeta, 1.0)) + 1  # f < stable_frequency(ζ, 1)/h
    while not is_stable(FREQUENCY, zeta, 1.0 / n):
        n += 1
    t, phi = step_run(backend, (zeta,), 1.0 / n, SEMI_LINEAR, 1)
    measured[f"semi-implicit, h = 1/{n} s (largest 1/n stable)"] = frequency_and_ratio(phi[:, 0] - 1.0, 1.0 / n)
    for label, (f, ratio) in measured.items():
        details[f"ζ {zeta:g} {label}: frequency, Hz / successive-peak ratio (not held)"] = f"{f:.4f} / {ratio:.4f}"
    held = exact_coarse < EXACT_LIMIT and exact_fine < EXACT_LIMIT
    passed = held and refused and finite and movement < SETTLED_LIMIT
    return CheckResult("exact_integrator", "exact integrator", exact_coarse, EXACT_LIMIT, passed,
                       f"worst |φ - analytic step response| of the exact step at h = 1/30 s, f = {FREQUENCY:g} Hz, "
                       f"ζ {'/'.join(f'{z:g}' for z in ZETAS)} (rad, of a 1 rad step)",
                       unit="rad", details=details, traces=traces, bound="<")

"""What one damped spring does: its step response, and how the semi-implicit substep changes it.

:func:`describe` turns a frequency f (Hz) and damping ratio ζ into the numbers a person tuning
a spring asks for (period, overshoot, settling time, half-life) and, for a substep h, whether
the solver's step is stable there and how far its oscillation and decay are from the
continuous spring's.

Sources: ``docs/SPEC.md`` section 1 (ω0 = 2πf, k = ω0², c = 2ζω0, the step ``v += a·h;
x += v·h`` and its stability bound, through :mod:`gpu_jiggle.sim.spring`); the standard
results for the second-order system ``x'' = -k·(x - 1) - c·x'`` (e.g. Ogata, *Modern Control
Engineering*, the step response of a second-order system).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from . import spring, validation
from ..spec import cite

__all__ = ["describe", "SpringResponse", "SETTLING_BAND"]

#: The settling band: the step response stays within this fraction of the step (2 %).
SETTLING_BAND = 0.02


@dataclass(frozen=True)
class SpringResponse:
    """One spring's response (all plain floats; times in seconds; fractions, not percent).

    Continuous spring (its step response from rest at 0 toward 1):
        frequency_hz, damping_ratio: the input. period_s: the undamped period 1/f.
        damped_period_s: 2π/ω_d with ω_d = ω0·√(1 - ζ²) for ζ < 1, inf for ζ ≥ 1.
        overshoot_fraction: exp(-πζ/√(1 - ζ²)) for ζ < 1 (1 at ζ = 0), 0 for ζ ≥ 1.
        settling_time_2pct_s: the time after which the response stays within 2 % of the step
        (inf for ζ = 0). half_life_s: the envelope's half-life, ln2/(ζω0) for ζ ≤ 1, ln2 over
        the slow root's rate ω0·(ζ - √(ζ² - 1)) for ζ > 1 (inf for ζ = 0).

    Semi-implicit substep (None when no substep was given):
        substep_s: h. semi_implicit_stable: ``(ω0·h)² + 4ζ(ω0·h) < 4`` (SPEC section 1).
        largest_stable_frequency_hz: the largest stable f for this ζ and h.
        semi_implicit_frequency_error: discrete oscillation frequency / ω_d - 1, for ζ < 1,
        the discrete frequency being arg(λ)/h of the step's dominant eigenvalue λ (-1 where
        the step does not oscillate at all, ζ + ω0h/2 ≥ 1; π/h where λ is negative, the
        state flipping sign each substep; None for ζ ≥ 1 and when unstable).
        semi_implicit_decay_error: discrete decay rate -ln|λ|/h over the continuous one,
        minus 1 (ζω0 for ζ < 1, the slow root's rate for ζ ≥ 1; 0 at ζ = 0, where both are
        0; None when unstable).
    """

    frequency_hz: float
    damping_ratio: float
    period_s: float
    damped_period_s: float
    overshoot_fraction: float
    settling_time_2pct_s: float
    half_life_s: float
    substep_s: float | None = None
    semi_implicit_stable: bool | None = None
    largest_stable_frequency_hz: float | None = None
    semi_implicit_frequency_error: float | None = None
    semi_implicit_decay_error: float | None = None

    def format(self) -> str:
        """A multi-line table: quantity, value, unit."""
        zeta = self.damping_ratio
        regime = "undamped" if zeta == 0 else "underdamped" if zeta < 1 else \
            "critically damped" if zeta == 1 else "overdamped"
        rows = [("undamped period", _g(self.period_s), "s"),
                ("damped period", _g(self.damped_period_s), "s" if zeta < 1 else "s (no oscillation)"),
                ("overshoot", _g(100 * self.overshoot_fraction), "% of the step"),
                ("settling time (2 %)", _g(self.settling_time_2pct_s), "s"),
                ("envelope half-life", _g(self.half_life_s), "s")]
        lines = [f"damped spring: f = {self.frequency_hz:.10g} Hz, damping ratio = {zeta:.10g} ({regime})"]
        lines += _table(rows)
        if self.substep_s is not None:
            h = self.substep_s
            x = 2.0 * math.pi * self.frequency_hz * h
            bound = f"(ω0·h)² + 4ζ(ω0·h) = {x * x + 4.0 * zeta * x:.4g}, stable below 4"
            rows = [("stable", "yes" if self.semi_implicit_stable else "NO", bound),
                    ("largest stable frequency", _g(self.largest_stable_frequency_hz), "Hz")]
            if self.semi_implicit_stable:
                error = self.semi_implicit_frequency_error
                rows += [("frequency error", _percent(error),
                          "(no oscillation at damping ratio >= 1)" if error is None else
                          "% (the substep does not oscillate)" if error == -1.0 else "% of the damped frequency"),
                         ("decay error", _percent(self.semi_implicit_decay_error),
                          "% of the decay rate" if zeta < 1 else "% of the slow root's decay rate")]
            lines += [f"semi-implicit Euler, substep h = {h:.6g} s ({1 / h:.4g} substeps/s)"] + _table(rows)
            lines += [f'exact integrator (integrator="exact", {cite(1)}): stable at any frequency; frequency and '
                      'decay exact (errors 0)']
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def describe(frequency, damping_ratio, substep=None) -> SpringResponse:
    """The response of one spring (scalars; see :class:`SpringResponse` for every field).

    Args:
        frequency: float, Hz, finite and > 0.
        damping_ratio: float, dimensionless, finite and ≥ 0 (1 is critical damping).
        substep: float seconds, finite and > 0, or None to leave out the substep's fields.

    Returns:
        :class:`SpringResponse`.

    Raises:
        TypeError: an argument that is not a real number (bools, strings, arrays refused).
        ValueError: (an :class:`~gpu_jiggle.sim.validation.InputError`) naming the argument
        and value, e.g. ``frequency = -1.0: expected a finite value > 0 (Hz)``.
    """
    f = _scalar("frequency", frequency, "Hz")
    zeta = _scalar("damping_ratio", damping_ratio, "dimensionless", allow_zero=True)
    h = None if substep is None else _scalar("substep", substep, "s")
    w0 = 2.0 * math.pi * f
    if not math.isfinite(w0):
        raise validation.InputError("frequency", None, f, "a value whose 2π·f is finite (Hz)")
    under = zeta < 1.0
    root = math.sqrt(abs((1.0 - zeta) * (1.0 + zeta)))  # √|1 - ζ²|, accurate near ζ = 1
    wd = w0 * root if under else 0.0
    slow = _slow_rate(w0, zeta)
    result = dict(frequency_hz=f, damping_ratio=zeta, period_s=1.0 / f,
                  damped_period_s=2.0 * math.pi / wd if under else math.inf,
                  overshoot_fraction=math.exp(-math.pi * zeta / root) if under else 0.0,
                  settling_time_2pct_s=_settling_time(w0, zeta),
                  half_life_s=math.log(2.0) / slow if slow > 0 else math.inf)
    if h is not None:
        stable = bool(spring.is_stable(f, zeta, h))
        result.update(substep_s=h, semi_implicit_stable=stable,
                      largest_stable_frequency_hz=spring.stable_frequency(zeta, h))
        if stable:
            rate, omega = _discrete_rates(w0 * h, zeta)
            result["semi_implicit_decay_error"] = _relative(rate / h, slow)
            if under:
                result["semi_implicit_frequency_error"] = omega / h / wd - 1.0
    return SpringResponse(**result)


def _scalar(name, value, unit, allow_zero=False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a real number ({unit}), got {type(value).__name__}")
    x = float(value)
    if not (math.isfinite(x) and (x >= 0.0 if allow_zero else x > 0.0)):
        raise validation.InputError(name, None, x, f"a finite value {'>=' if allow_zero else '>'} 0 ({unit})")
    return x


def _slow_rate(w0, zeta) -> float:
    """The envelope's decay rate (1/s): ζω0 for ζ ≤ 1, the slow root ω0·(ζ - √(ζ² - 1)) for
    ζ > 1, written as ω0 / (ζ + √(ζ² - 1)) so that no cancellation occurs."""
    if zeta <= 1.0:
        return zeta * w0
    return w0 / (zeta + math.sqrt((zeta - 1.0) * (zeta + 1.0)))


def _error(t, w0, zeta) -> float:
    """e(t) = 1 - x(t) for the step response from rest: ``e'' = -ω0²·e - 2ζω0·e'``, e(0) = 1,
    e'(0) = 0, so ``e = exp(-σt)·(C(t) + σ·S(t))`` with σ = ζω0, C = cos ω_d t and
    S = sin(ω_d t)/ω_d for ζ < 1, C = cosh βt and S = sinh(βt)/β (β = ω0√(ζ² - 1)) for ζ ≥ 1.
    Both limits at ζ = 1 are (1 + ω0t)·exp(-ω0t), which the forms below reach without 0/0."""
    sigma = zeta * w0
    if zeta < 1.0:
        wd = w0 * math.sqrt((1.0 - zeta) * (1.0 + zeta))
        return math.exp(-sigma * t) * (math.cos(wd * t) + sigma * math.sin(wd * t) / wd)
    beta = w0 * math.sqrt((zeta - 1.0) * (zeta + 1.0))
    slow = _slow_rate(w0, zeta)  # σ - β; exp(-σt)·cosh and ·sinh/β rewritten around exp(-slow·t)
    fast = math.exp(-2.0 * beta * t)
    s = t if beta == 0.0 else -math.expm1(-2.0 * beta * t) / (2.0 * beta)
    return math.exp(-slow * t) * (0.5 * (1.0 + fast) + sigma * s)


def _settling_time(w0, zeta) -> float:
    """The last time |e(t)| = 2 % (see :func:`_error`); inf for ζ = 0.

    ζ ≥ 1: e falls monotonically from 1, so bisect e(t) = 0.02. ζ < 1: e has its extrema at
    t_n = nπ/ω_d with |e(t_n)| = q^n, q = exp(-πζ/√(1 - ζ²)); after the last one above the
    band (n*), e falls monotonically through the band edge within (t_n*, t_n* + π/ω_d), where
    e(t_n* + τ) = ±q^n*·e(τ): bisect e(τ) = 0.02 / q^n* for τ in [0, π/ω_d].
    """
    if zeta == 0.0:
        return math.inf
    if zeta >= 1.0:
        hi = 1.0 / w0
        while _error(hi, w0, zeta) > SETTLING_BAND:
            hi *= 2.0
        return _bisect(lambda t: _error(t, w0, zeta), 0.0, hi, SETTLING_BAND)
    log_q = -math.pi * zeta / math.sqrt((1.0 - zeta) * (1.0 + zeta))  # ln of the peak ratio
    peaks = math.log(SETTLING_BAND) / log_q  # extrema n < peaks lie outside the band
    if not math.isfinite(peaks):  # ζ so small (subnormal) that the time overflows anyway
        return math.inf
    n = math.ceil(peaks) - 1
    for _ in range(2):  # rounding in the ceil: make n the last extremum outside the band
        if n > 0 and math.exp(n * log_q) <= SETTLING_BAND:
            n -= 1
        elif math.exp((n + 1) * log_q) > SETTLING_BAND:
            n += 1
    half_period = math.pi / (w0 * math.sqrt((1.0 - zeta) * (1.0 + zeta)))
    level = min(SETTLING_BAND * math.exp(-n * log_q), 1.0)  # 0.02 / q^n, in (0, 1]
    return n * half_period + _bisect(lambda t: _error(t, w0, zeta), 0.0, half_period, level)


def _bisect(fn, lo, hi, level) -> float:
    """The t in [lo, hi] where the decreasing ``fn`` crosses ``level`` (fn(lo) > level ≥ fn(hi)),
    to the last bit of float64."""
    for _ in range(2000):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if fn(mid) > level:
            lo = mid
        else:
            hi = mid
    return hi


def _discrete_rates(x, zeta):
    """``(decay, angle)`` per substep of the step's dominant eigenvalue λ: -ln|λ| and arg λ.

    With a = -ω0²·x - 2ζω0·v the step ``v += a·h; x += v·h`` maps (x, v) by
    ``M = [[1 - (ω0h)², h·(1 - 2ζω0h)], [-ω0²h, 1 - 2ζω0h]]``: with x = ω0h, trace
    T = 2 - x² - 2ζx, det D = 1 - 2ζx, and T²/4 - D = x²·((ζ + x/2)² - 1). The eigenvalues are
    complex (|λ|² = D) iff ζ + x/2 < 1, else real; then 1 - λ± = x² / (1 - λ∓) keeps the one
    near 1 accurate. A negative dominant λ alternates each substep: angle π.
    """
    half_trace = 1.0 - 0.5 * x * x - zeta * x
    disc = x * x * (zeta + 0.5 * x - 1.0) * (zeta + 0.5 * x + 1.0)
    if disc < 0.0:
        return -0.5 * math.log1p(-2.0 * zeta * x), math.atan2(math.sqrt(-disc), half_trace)
    far = 0.5 * x * x + zeta * x + math.sqrt(disc)  # 1 - λ-, > 0
    near = x * x / far                               # 1 - λ+, ≤ far
    lam = 1.0 - far if abs(1.0 - far) > abs(1.0 - near) else 1.0 - near
    decay = -math.log1p(-near) if lam == 1.0 - near and near < 1.0 else -math.log(abs(lam))
    return decay, (math.pi if lam < 0 else 0.0)


def _relative(value, reference) -> float:
    if reference == 0.0:
        return 0.0 if value == 0.0 else math.inf
    return value / reference - 1.0


def _g(value) -> str:
    return "inf" if value == math.inf else f"{value:.4g}"


def _percent(value) -> str:
    return "n/a" if value is None else f"{100 * value:+.3g}"


def _table(rows) -> list:
    width = max(len(r[0]) for r in rows)
    value_width = max(len(r[1]) for r in rows)
    return [f"  {name:<{width}}  {value:>{value_width}}  {unit}" for name, value, unit in rows]

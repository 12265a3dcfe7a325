"""The exact integrator of one damped spring over a substep (SPEC section 1, "Exact integrator").

Over one substep of h seconds the offset from the target, ``d = x - t``, with the target
moving at its path velocity and the external acceleration ``b`` held, obeys

    d'' = -k·d - c·d' + b        (k = ω0², c = 2ζω0 + c_air)

whose solution is linear in (d, d', b):

    d(h)  = d + d_d·d + d_v·d' + d_b·b
    d'(h) = d' + v_d·d + v_v·d' + v_b·b

The six coefficients depend only on k, c and h, so they are computed here once per segment
and substep length, in float64, and rounded once to float32 (:data:`EXACT_STEP`): both
backends then integrate with the same numbers and the shader needs no transcendental
function. ``d_d`` and ``v_v`` are stored less one so that a tiny ω0·h loses nothing to
rounding.

With ``u`` the free response from (1, 0) and ``s`` the one from (0, 1) (the impulse
response), ``d_d = u - 1``, ``d_v = v_b = s``, ``v_d = u'``, ``v_v = s' - 1`` and
``d_b = ∫₀ʰ s = (1 - u)/k``. Three forms, chosen per segment:

- small ω0·h and c·h (``c·h + √(k·h²) ≤ 1``): the Taylor series in h, from the recurrence
  ``y⁽ⁿ⁺²⁾ = -c·y⁽ⁿ⁺¹⁾ - k·y⁽ⁿ⁾`` of every solution's derivatives at 0 (no cancellation in
  ``u - 1`` or ``1 - u``);
- otherwise, with ``a = c·h/2``, ``q = a² - k·h²`` and ``E = e^(-a)``: ``u = E·(C + a·S)``,
  ``s = h·E·S``, ``u' = -k·h·E·S``, ``s' = E·(C - a·S)`` where ``C = cosh √q`` and
  ``S = sinh(√q)/√q`` (their cos/sin continuation for q < 0), each by its even series for
  ``|q| < 0.1`` so that ζ = 1 (q = 0) has no 0/0;
- over-damped with q ≥ 0.1: the two decaying exponentials ``e^(-(a ∓ √q))`` apart, with
  ``a - √q = k·h²/(a + √q)``, so a strongly over-damped segment neither overflows nor cancels.

Source: the closed-form solution of the damped harmonic oscillator (e.g. Goldstein,
*Classical Mechanics*, section 2.6); the recurrence is the ODE itself.
"""
from __future__ import annotations

import math

import numpy as np

from . import layouts

#: The integrators a solver offers (SPEC section 1); the first is the default.
INTEGRATORS = ("semi-implicit", "exact")
#: Terms of the Taylor series in h (``c·h + ω0·h ≤ 1``: the last term is below 1e-25).
TAYLOR_TERMS = 26
#: Terms of the even series of C and S in q (``|q| < 0.1``: the last term is below 1e-30).
SERIES_TERMS = 10
NEAR_CRITICAL_Q = 0.1


def _taylor(k: float, c: float, h: float):
    """(u - 1, s, ∫s, u', s' - 1) by the Taylor series in h."""
    u = [1.0, 0.0]
    s = [0.0, 1.0]
    for n in range(TAYLOR_TERMS):
        u.append(-c * u[n + 1] - k * u[n])
        s.append(-c * s[n + 1] - k * s[n])
    u_minus_1 = s_h = integral = du = ds_minus_1 = 0.0
    power = 1.0  # h^n / n!
    for n in range(TAYLOR_TERMS):
        if n >= 1:
            u_minus_1 += u[n] * power
            ds_minus_1 += s[n + 1] * power
        s_h += s[n] * power
        du += u[n + 1] * power
        integral += s[n] * power * h / (n + 1)
        power *= h / (n + 1)
    return u_minus_1, s_h, integral, du, ds_minus_1


def _closed_form(k: float, c: float, h: float):
    """(u - 1, s, ∫s, u', s' - 1) by the closed forms (outside the Taylor range)."""
    a = 0.5 * c * h
    kh2 = k * h * h
    q = a * a - kh2
    if q >= NEAR_CRITICAL_Q:  # over-damped: two real exponentials
        g = math.sqrt(q)
        slow = kh2 / (a + g)  # a - g, without cancellation
        r1, r2 = math.exp(-slow), math.exp(-(a + g))
        e_s = (r1 - r2) / (2.0 * g)  # E·S
        one_minus_u = -(g + a) / (2.0 * g) * math.expm1(-slow) - (g - a) / (2.0 * g) * math.expm1(-(a + g))
        u = 1.0 - one_minus_u
        ds = r1 * (g - a) / (2.0 * g) + r2 * (g + a) / (2.0 * g)
    else:
        if abs(q) < NEAR_CRITICAL_Q:  # near critical: even series of cosh √q and sinh(√q)/√q
            cosh_q = sinh_q = 0.0
            term = 1.0
            for n in range(SERIES_TERMS):
                cosh_q += term / math.factorial(2 * n)
                sinh_q += term / math.factorial(2 * n + 1)
                term *= q
        else:  # under-damped
            w = math.sqrt(-q)
            cosh_q, sinh_q = math.cos(w), math.sin(w) / w
        e = math.exp(-a)
        e_s = e * sinh_q
        u = e * (cosh_q + a * sinh_q)
        one_minus_u = 1.0 - u
        ds = e * (cosh_q - a * sinh_q)
    return u - 1.0, h * e_s, one_minus_u / k, -k * h * e_s, ds - 1.0


def step_coefficients(stiffness, damping, substep: float) -> np.ndarray:
    """The exact step's coefficients for each segment.

    Args:
        stiffness: (S,) k = ω0² in 1/s², float64, > 0.
        damping: (S,) total damping per unit mass c = 2ζω0 + c_air in 1/s, float64, ≥ 0.
        substep: h in seconds, > 0.

    Returns:
        (S, 6) float64: ``d_d, d_v, d_b, v_d, v_v, v_b`` (see the module docstring).
    """
    k, c = np.broadcast_arrays(np.asarray(stiffness, np.float64).ravel(), np.asarray(damping, np.float64).ravel())
    pairs, inverse = np.unique(np.stack([k, c], 1), axis=0, return_inverse=True)  # rigs share values
    unique = np.empty((len(pairs), 6), np.float64)
    for i, (ki, ci) in enumerate(pairs.tolist()):
        small = ci * substep + math.sqrt(ki) * substep <= 1.0
        d_d, d_v, d_b, v_d, v_v = (_taylor if small else _closed_form)(ki, ci, substep)
        unique[i] = d_d, d_v, d_b, v_d, v_v, d_v
    return unique[np.ravel(inverse)]


def exact_step_records(chain_set, substeps) -> np.ndarray:
    """The :data:`~gpu_jiggle.sim.layouts.EXACT_STEP` records of ``chain_set`` (either kind)
    for the substep lengths ``substeps`` (h at full rate, 2h at half rate): (2·S,), record
    ``2·s + rate`` for segment s. Frequency, damping ratio and air drag come from the chain
    set (SPEC sections 1, 3, 4)."""
    omega = 2.0 * np.pi * np.asarray(chain_set.frequency, np.float64)
    k = omega * omega
    c = 2.0 * np.asarray(chain_set.damping_ratio, np.float64) * omega + np.asarray(chain_set.air_drag, np.float64)
    rates = len(substeps)
    out = np.zeros(rates * k.size, layouts.EXACT_STEP)
    for rate, h in enumerate(substeps):
        coefficients = step_coefficients(k, c, float(h)).astype(np.float32)
        for j, name in enumerate(layouts.EXACT_STEP_FIELDS):
            out[name][rate::rates] = coefficients[:, j]
    return out

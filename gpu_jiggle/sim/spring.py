"""One damped spring: parameter conversions and the stability bound of the substep.

Physical parameters (frequency in Hz, damping ratio) are what users set. The solver turns
them into the per-segment coefficients it integrates with in one place, :func:`coefficients`.

Source: ``SPEC.md`` section 1; the damped-spring article in ``seeds/``.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from . import validation
from ..spec import cite

__all__ = [
    "coefficients",
    "stable_frequency",
    "is_stable",
    "check_stable",
    "UnstableSpringError",
    "to_frequency_damping_ratio",
    "to_mass_stiffness_damping",
    "recut",
]


def coefficients(frequency_hz, damping_ratio):
    """Stiffness and damping per unit mass for the acceleration ``a = -k·(x - t) - c·v``.

    ``ω0 = 2π·f``, ``k = ω0²`` (1/s²) and ``c = 2·ζ·ω0`` (1/s) (SPEC section 1).

    Args:
        frequency_hz: array_like, float, Hz, > 0.
        damping_ratio: array_like, float, dimensionless, ≥ 0 (1 is critical damping).

    Returns:
        ``(k, c)`` as float32 arrays broadcast to a common shape. The products are formed
        in float64 and rounded once, so both backends integrate with the same numbers.
    """
    omega = 2.0 * np.pi * np.asarray(frequency_hz, dtype=np.float64)
    zeta = np.asarray(damping_ratio, dtype=np.float64)
    k = omega * omega
    c = 2.0 * zeta * omega
    k, c = np.broadcast_arrays(k, c)
    return k.astype(np.float32), c.astype(np.float32)


def stable_frequency(damping_ratio, substep):
    """Largest frequency (Hz) that the semi-implicit Euler step keeps stable.

    The update ``v += a·h; x += v·h`` with ``a = -ω0²·x - 2ζω0·v`` has an update matrix whose
    eigenvalues stay inside the unit circle iff ``(ω0·h)² + 4·ζ·(ω0·h) < 4`` (SPEC section 1). Solving the quadratic
    in ``x = ω0·h`` gives ``x < 2·(√(ζ² + 1) - ζ)``, so ``f < (√(ζ² + 1) - ζ) / (π·h)``.
    The bound is strict: a frequency equal to the returned value is unstable.

    Args:
        damping_ratio: float or array_like, ≥ 0.
        substep: the fixed substep h in seconds, > 0.

    Returns:
        float (or float64 array), Hz.

    Raises:
        ValueError: a negative or non-finite damping ratio, or a substep that is not > 0.
    """
    zeta = validation.non_negative("damping_ratio", damping_ratio)
    substep = float(validation.positive("substep", substep))
    f = (np.sqrt(zeta * zeta + 1.0) - zeta) / (math.pi * substep)
    return float(f) if f.ndim == 0 else f


def is_stable(frequency_hz, damping_ratio, substep):
    """Boolean array: where ``(ω0·h)² + 4·ζ·(ω0·h) < 4`` holds (SPEC section 1)."""
    x = 2.0 * np.pi * np.asarray(frequency_hz, dtype=np.float64) * substep
    zeta = np.asarray(damping_ratio, dtype=np.float64)
    return x * x + 4.0 * zeta * x < 4.0


class UnstableSpringError(validation.InputError):
    """A frequency the substep cannot keep stable for its damping ratio (SPEC section 1); a
    ``ValueError``. Besides the :class:`~gpu_jiggle.sim.validation.InputError` attributes
    (``argument`` is ``"frequency"``, ``index`` the segment) it has ``damping_ratio``,
    ``substep`` (s) and ``limit``, the largest stable frequency (Hz), and
    :meth:`describe` words the refusal for a caller that names the index its own way."""

    def __init__(self, index, frequency, damping_ratio, substep, what=""):
        self.damping_ratio, self.substep, self.what = damping_ratio, substep, what
        self.limit = stable_frequency(damping_ratio, substep)
        where = "" if index is None else f"[{index}]"
        super().__init__("frequency", index, frequency, "a frequency below the largest stable one", where)

    def describe(self, where: str = "", remedy: str = "the substep", exact: str = 'integrator="exact"') -> str:
        """The message with ``where`` (e.g. ``"[2]"``) after both parameter names; ``remedy``
        names the substep and ``exact`` how to choose the exact integrator, in the caller's terms."""
        return (f"frequency{where} = {self.value!r} Hz with damping_ratio{where} = {self.damping_ratio!r} is unstable "
                f"for the substep {self.substep!r} s{self.what}: the largest stable frequency for that damping ratio "
                f"is {self.limit:.4g} Hz ({cite(1)}); lower the frequency or {remedy}, or choose the exact "
                f"integrator ({exact}), which has no stability bound")


def check_stable(frequency_hz, damping_ratio, substep, where=None, what: str = "",
                 integrator: str = "semi-implicit") -> None:
    """Refuse f/ζ pairs that the semi-implicit step of ``substep`` seconds cannot keep stable
    (SPEC section 1): the one stability check of the project. The exact integrator has no
    stability bound: with ``integrator="exact"`` nothing is refused.

    Args:
        frequency_hz, damping_ratio: (S,) float arrays, Hz and dimensionless.
        substep: h in seconds. where: an (S,) bool mask of the segments to check (all when
            None). what: words added after the substep in the message (e.g. " at level of
            detail 'half'"). integrator: ``"semi-implicit"`` or ``"exact"``.

    Raises:
        UnstableSpringError (a ValueError): at the first unstable segment, with its index,
        both values and the largest stable frequency for its damping ratio.
    """
    if integrator == "exact":
        return
    frequency_hz = np.asarray(frequency_hz, dtype=np.float64)
    damping_ratio = np.asarray(damping_ratio, dtype=np.float64)
    ok = is_stable(frequency_hz, damping_ratio, substep)
    if where is not None:
        ok = ok | ~np.asarray(where, dtype=bool)
    if not np.all(ok):
        i = int(np.flatnonzero(~np.ravel(ok))[0])
        raise UnstableSpringError(i, float(np.ravel(frequency_hz)[i]), float(np.ravel(damping_ratio)[i]),
                                  float(substep), f" {what}" if what else "")


def to_frequency_damping_ratio(mass, stiffness, damping):
    """Convert (mass, stiffness, damping) to (frequency in Hz, damping ratio).

    ``k = s/m``, ``c = d/m``, so ``f = √(s/m) / 2π`` and ``ζ = d / (2·√(s·m))``
    (SPEC section 1). Arguments broadcast; mass and stiffness must be > 0, damping ≥ 0.

    Raises:
        ValueError: naming the argument, index and value of the first bad entry.
    """
    m = validation.positive("mass", mass)
    s = validation.positive("stiffness", stiffness)
    d = validation.non_negative("damping", damping)
    f = np.sqrt(s / m) / (2.0 * np.pi)
    zeta = d / (2.0 * np.sqrt(s * m))
    return _scalar(f), _scalar(zeta)


def to_mass_stiffness_damping(frequency_hz, damping_ratio, mass=1.0):
    """Convert (frequency in Hz, damping ratio) to (mass, stiffness, damping) for a given mass.

    Inverse of :func:`to_frequency_damping_ratio`: ``s = m·ω0²``, ``d = 2·ζ·ω0·m``.

    Raises:
        ValueError: naming the argument, index and value of the first bad entry.
    """
    f = validation.positive("frequency_hz", frequency_hz)
    zeta = validation.non_negative("damping_ratio", damping_ratio)
    m = validation.positive("mass", mass)
    omega = 2.0 * np.pi * f
    return _scalar(m + 0.0 * omega), _scalar(m * omega * omega), _scalar(2.0 * zeta * omega * m)


def recut(frequency_hz, damping_ratio, tuned_segment_count, segment_count):
    """The frequency and damping ratio that keep a chain's response when it is cut into
    ``segment_count`` equal segments instead of the ``tuned_segment_count`` it was tuned with.

    Each segment springs toward its parent's simulated direction and feels the chain's
    forces (gravity, the root's acceleration, wind) over its own length, so with the same
    (f, ζ) per segment a chain cut finer bends more: a small static bend puts the tip
    ``a·n·(n+1)/(2k)`` off the pose (a the force across the chain, per unit mass), and each
    level of the chain follows its parent through ``H(s) = (c·s + k) / (s² + c·s + k)``,
    whose peak gain ``√(1 + 1/(4ζ²))`` compounds from level to level (docs/SPEC.md
    section 9, "Cutting a chain finer"). This keeps both:

    - ``f' = f · √(n·(n+1) / (n0·(n0+1)))``: the tip's static offset under gravity, a steady
      acceleration of the root, or steady wind;
    - ``ζ'`` with ``(1 + 1/(4ζ'²))^n = (1 + 1/(4ζ²))^n0``: the chain's resonance gain.

    It is derived for the v2 damping (relative to the target); with ``damping_frame="world"``
    it holds for the static bend only. The frequencies it gives may exceed what the
    substep keeps stable: the :class:`~gpu_jiggle.Solver` refuses those as for any others.

    Args:
        frequency_hz: float or array_like, Hz, > 0, as tuned.
        damping_ratio: float or array_like, > 0, as tuned (ζ = 0 has no finite resonance
            gain to keep: refused).
        tuned_segment_count: integer ≥ 1 (or one per chain, (C,)), n0, the cut the values
            were tuned with.
        segment_count: integer ≥ 1 (or (C,)), n, the new cut.

    Returns:
        ``(frequency_hz, damping_ratio)`` for the new cut, float64, all four arguments
        broadcast to one shape (scalars for scalar input); ``n == n0`` gives the input back.

    Raises:
        ValueError: naming the argument, index and value of the first bad entry; arguments
            that do not broadcast together.
        TypeError: non-numeric input or non-integer counts.
    """
    f = validation.positive("frequency_hz", frequency_hz)
    zeta = validation.positive("damping_ratio", damping_ratio)
    n0 = _counts("tuned_segment_count", tuned_segment_count)
    n = _counts("segment_count", segment_count)
    try:
        f, zeta, n0, n = np.broadcast_arrays(f, zeta, n0, n)
    except ValueError:
        raise ValueError(f"recut: frequency_hz {np.shape(f)}, damping_ratio {np.shape(zeta)}, tuned_segment_count "
                         f"{np.shape(n0)} and segment_count {np.shape(n)} do not broadcast to one shape") from None
    f_new = f * np.sqrt(n * (n + 1.0) / (n0 * (n0 + 1.0)))
    # g = log(1 + 1/(4ζ²)), the log of the squared resonance gain per level, shared out over
    # n levels instead of n0; written so that neither tiny nor large ζ overflows or cancels.
    small = zeta < 0.5
    low, high = np.where(small, zeta, 0.5), np.where(small, 0.5, zeta)  # each branch on its own range
    g = np.where(small, np.log1p(4.0 * low * low) - 2.0 * np.log(2.0 * low), np.log1p(0.25 / (high * high)))
    g = g * (n0 / n)
    # 1/(4ζ'²) = expm1(g), so ζ' = 0.5·exp(-g/2) / √(-expm1(-g)).
    zeta_new = 0.5 * np.exp(-0.5 * g) / np.sqrt(-np.expm1(-g))
    zeta_new = np.where(n == n0, zeta, zeta_new)
    if np.any(zeta_new == 0):
        i = int(np.flatnonzero(np.ravel(zeta_new) == 0)[0])
        raise ValueError(f"recut: damping_ratio {float(np.ravel(zeta)[i])!r} shared over {int(np.ravel(n)[i])} "
                         f"segments instead of {int(np.ravel(n0)[i])} is below the smallest float64")
    return _scalar(f_new), _scalar(zeta_new)


def _counts(name, value):
    if np.ndim(value) == 0:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name} = {value!r}: expected an integer >= 1")
        if not 1 <= value <= validation.MAX_SEGMENTS:
            raise validation.InputError(name, 0, value, f"an integer in [1, {validation.MAX_SEGMENTS}]", "")
        return int(value)
    return validation.count_array(name, value)


def _scalar(a):
    return float(a) if np.ndim(a) == 0 else a

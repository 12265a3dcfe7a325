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
    "step_margins",
    "largest_external_stiffness",
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


def is_stable(frequency_hz, damping_ratio, substep, air_drag=0.0, external_stiffness=0.0,
              integrator: str = "semi-implicit"):
    """Boolean array: where one substep of ``substep`` seconds keeps the linearised segment
    stable (SPEC section 1, "Stability"). The semi-implicit step needs
    ``h²·(k + K) + 2h·(c + c_air) < 4`` (for K = c_air = 0 the familiar
    ``(ω0·h)² + 4·ζ·(ω0·h) < 4``); the exact step is stable without K and needs, with it, the
    eigenvalues of its update matrix inside the unit circle (:func:`step_margins`).

    Args:
        frequency_hz, damping_ratio: array_like, Hz and dimensionless.
        substep: h in seconds.
        air_drag: array_like, c_air in 1/s (default 0).
        external_stiffness: array_like, K in 1/s²: the stiffness the explicit external terms
            add, e.g. ``|g_eff|/L`` for a segment of an angle chain (default 0).
        integrator: ``"semi-implicit"`` or ``"exact"``.
    """
    return np.all(step_margins(frequency_hz, damping_ratio, substep, air_drag, external_stiffness, integrator) < 0,
                  axis=0)


def step_margins(frequency_hz, damping_ratio, substep, air_drag=0.0, external_stiffness=0.0,
                 integrator: str = "semi-implicit", raw: bool = False):
    """The stability margins of one substep, (3, ...) float64: the segment is stable where all
    three are < 0 (SPEC section 1, "Stability").

    The step maps (offset from the target d, its rate d') linearly to the next substep's:
    the spring and drag (k = ω0², C = 2ζω0 + c_air), and the external terms linearised about
    the segment's equilibrium, ``α_ext ≈ -K·d``. A 2×2 map with trace T and determinant D has
    both eigenvalues inside the unit circle iff ``D < 1`` and ``|T| < 1 + D`` (the Jury
    conditions); the margins are ``D - 1``, ``T - 1 - D`` and ``-T - 1 - D``.

    - semi-implicit (``v += a·h; x += v·h``): ``T = 2 - h·C - h²·(k + K)``, ``D = 1 - h·C``, so
      the first two hold for any C > 0, K > -k, and the third is ``h²·(k + K) + 2h·C - 4``.
      Undamped (C = 0) D = 1: the step is symplectic and keeps |λ| = 1, so that margin is
      given as -1 there.
    - exact: the spring and drag are integrated in closed form and the external acceleration
      held over the substep (:mod:`~gpu_jiggle.sim.integrator`): ``T = 2 + d_d + v_v -
      K·d_b``, ``D = (1 + d_d - K·d_b)(1 + v_v) - d_v·(v_d - K·v_b)``. Without K it is stable
      for any k, C (its margins are given as -1 where K = 0); with K, D exceeds 1 by about
      ``K·h²/2 - C·h`` for small ω0·h: undamped, any K > 0 grows. ``raw=True`` gives its
      margins as computed at K = 0 too (for :func:`largest_external_stiffness`).
    """
    h = float(substep)
    omega = 2.0 * np.pi * np.asarray(frequency_hz, dtype=np.float64)
    zeta = np.asarray(damping_ratio, dtype=np.float64)
    c_air = np.asarray(air_drag, dtype=np.float64)
    stiff = np.asarray(external_stiffness, dtype=np.float64)
    omega, zeta, c_air, stiff = np.broadcast_arrays(omega, zeta, c_air, stiff)
    if integrator != "exact":
        x = omega * h
        third = x * x + 4.0 * zeta * x + (h * h * stiff + 2.0 * h * c_air) - 4.0
        # D - 1 = -h·C: 0 for an undamped spring, which the symplectic step keeps (|λ| = 1).
        first = np.where(zeta * x + h * c_air > 0, -(2.0 * zeta * x + h * c_air), -1.0)
        second = np.where(stiff + omega * omega > 0, -1.0, 1.0)  # T - 1 - D = -h²·(k + K)
        return np.stack([first, second, third])
    from .integrator import step_coefficients  # the exact step's own coefficients

    k = omega * omega
    coefficients = step_coefficients(k.ravel(), (2.0 * zeta * omega + c_air).ravel(), h)
    d_d, d_v, d_b, v_d, v_v, v_b = (coefficients[:, j].reshape(k.shape) for j in range(6))
    trace = 2.0 + d_d + v_v - stiff * d_b
    det = (1.0 + d_d - stiff * d_b) * (1.0 + v_v) - d_v * (v_d - stiff * v_b)
    margins = np.stack([det - 1.0, trace - 1.0 - det, -trace - 1.0 - det])
    return margins if raw else np.where(stiff == 0, -1.0, margins)  # the closed form alone: |λ| ≤ 1


def largest_external_stiffness(frequency_hz, damping_ratio, substep, air_drag=0.0,
                               integrator: str = "semi-implicit"):
    """The largest external stiffness K (1/s², float64 array) that the step keeps stable with
    these springs, or 0 where none does. Every margin of :func:`step_margins` is affine in K
    (T and D are), so the bound is where the first of them reaches 0."""
    at0 = step_margins(frequency_hz, damping_ratio, substep, air_drag, 0.0, integrator, raw=True)
    at1 = step_margins(frequency_hz, damping_ratio, substep, air_drag, 1.0, integrator, raw=True)
    slope = at1 - at0
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.where(slope > 0, -at0 / slope, np.inf)
    bound = np.where(np.any(at0 >= 0, axis=0), 0.0, np.min(bound, axis=0))
    return np.maximum(bound, 0.0)


class UnstableSpringError(validation.InputError):
    """A value the substep cannot keep stable (SPEC section 1, "Stability"); a ``ValueError``.
    Besides the :class:`~gpu_jiggle.sim.validation.InputError` attributes (``argument`` is
    ``"frequency"``, ``"air_drag"`` or ``"lengths"``, ``index`` the segment) it has
    ``damping_ratio``, ``substep`` (s) and ``limit``, the largest stable value (Hz, 1/s) or,
    for ``"lengths"``, the shortest length that runs (0 when none does) and
    ``largest_root_acceleration``, the largest ``max_root_acceleration`` (length/s²) the segment
    runs under as it is (None for the others), and :meth:`describe` words the refusal for a
    caller that names the index its own way."""

    def __init__(self, index, frequency, damping_ratio, substep, what="", argument="frequency", value=None,
                 limit=None, detail=""):
        self.damping_ratio, self.substep, self.what, self.frequency = damping_ratio, substep, what, frequency
        self.detail = detail
        self.largest_root_acceleration = None
        self.limit = stable_frequency(damping_ratio, substep) if limit is None else limit
        where = "" if index is None else f"[{index}]"
        expected = {"frequency": "a frequency below the largest stable one",
                    "air_drag": "an air drag below the largest stable one",
                    "lengths": "a length at least the shortest one that runs",
                    "gust_amplitude": "a gust amplitude below the largest stable one"}[argument]
        super().__init__(argument, index, frequency if value is None else value, expected, where)

    def in_chain(self, chain: int, segment: int) -> "UnstableSpringError":
        """This refusal (its ``index`` into the flat per-segment arrays), its message now
        naming the chain and the segment within it after the values: ``frequency[3] = 90.0 Hz
        with damping_ratio[3] = 0.5 (segment 0 of chain 1) is unstable ...``. Returns itself."""
        self.args = (self.describe(f"[{self.index}]", f" (segment {segment} of chain {chain})"),)
        return self

    def describe(self, where: str = "", located: str = "", remedy: str = "the substep",
                 exact: str = 'integrator="exact"') -> str:
        """The message with ``where`` (e.g. ``"[2]"``) after the parameter names and
        ``located`` (e.g. ``" (segment 0 of chain 1)"``) after their values; ``remedy`` names
        the substep and ``exact`` how to choose the exact integrator, in the caller's terms."""
        detail = located + self.detail
        pair = f"with frequency{where} = {self.frequency!r} Hz and damping_ratio{where} = {self.damping_ratio!r}{detail}"
        if self.argument == "air_drag":
            return (f"air_drag{where} = {self.value!r} 1/s {pair} is unstable for the substep {self.substep:.6g} "
                    f"s{self.what}: the largest stable air drag there is {self.limit:.4g} 1/s ({cite(1)}); lower it "
                    f"or {remedy}, or choose the exact integrator ({exact}), which integrates air drag exactly")
        if self.argument == "gust_amplitude":
            return (f"gust_amplitude = {self.value!r} length/s² {pair} is unstable for the substep {self.substep:.6g} "
                    f"s{self.what}: the gust's change along the wave turns with the particle like a spring "
                    f"(A·|κ|, {cite(1)}); the largest stable gust amplitude at this wave vector is {self.limit:.4g}; "
                    f"lower it or the wave number, or raise damping_ratio or air_drag")
        if self.argument == "lengths":
            shortest = (f"the shortest length that runs with these values is {self.limit:.4g}" if self.limit > 0 else
                        "no length runs with these values: raise damping_ratio or air_drag")
            return (f"lengths{where} = {self.value!r} is too short for the substep {self.substep:.6g} s{self.what} "
                    f"{pair}: gravity, wind, their gusts and the root's acceleration across a segment turn it like "
                    f"a spring of stiffness |g_eff|/L that the step cannot keep stable ({cite(1)}); {shortest}; or "
                    f"lower {remedy} or max_root_acceleration")
        return (f"frequency{where} = {self.value!r} Hz with damping_ratio{where} = {self.damping_ratio!r}"
                f"{detail} is unstable "
                f"for the substep {self.substep:.6g} s{self.what}: the largest stable frequency for that damping ratio "
                f"is {self.limit:.4g} Hz ({cite(1)}); lower the frequency or {remedy}, or choose the exact "
                f"integrator ({exact}), which has no stability bound")


def check_stable(frequency_hz, damping_ratio, substep, where=None, what: str = "",
                 integrator: str = "semi-implicit", air_drag=0.0, lengths=None, load=0.0,
                 gust=(0.0, 0.0), inertia=0.0, root_acceleration=0.0) -> None:
    """Refuse segments that one substep of ``substep`` seconds cannot keep stable (SPEC
    section 1, "Stability"): the one stability check of the project, covering every term of
    the step: the spring (f, ζ), air drag, and the external accelerations that turn with the
    segment (gravity and wind over an angle chain's segment, the gust's gradient).

    The external terms add the stiffness ``K = (load + μ·a_max)/L + gust_stiffness`` where
    ``lengths`` are given (angle chains: gravity, wind and the root's acceleration felt
    through the inertia μ act on the tip, a length L from the pivot), else
    ``K = gust_stiffness`` (point chains: the length step holds the particle on its sphere,
    and a uniform force adds no stiffness). The checks run in this order, and the first that
    fails names its value: the spring alone (``frequency``, with the largest stable one), the
    spring with air drag (``air_drag``, the largest stable one), then with K (``lengths``, the
    shortest length that runs; for point chains ``gust_amplitude``, the largest that runs).
    The exact integrator has no bound on the spring and drag; it is checked for K alone.

    Args:
        frequency_hz, damping_ratio: (S,) float arrays, Hz and dimensionless.
        substep: h in seconds. where: an (S,) bool mask of the segments to check (all when
            None). what: words added after the substep in the message (e.g. " at level of
            detail 'half'"). integrator: ``"semi-implicit"`` or ``"exact"``.
        air_drag: (S,) or scalar, c_air in 1/s. lengths: (S,) segment lengths (angle chains) or
            None. load: (S,) or scalar, the largest acceleration across each segment in
            length/s², ``|g + w0| + A`` (gravity, the steady wind and the gust amplitude).
            gust: ``(A, |κ|)``, the gust's amplitude (length/s²) and wave number (rad/length):
            ``A·|κ|`` (1/s²) is the wind's change per length of motion, a stiffness.
            inertia: (S,) or scalar, μ (angle chains). root_acceleration: (S,) or scalar,
            a_max, the largest root acceleration (length/s²) each segment's chain must stay
            stable under (``max_root_acceleration``).

    Raises:
        UnstableSpringError (a ValueError): at the first unstable segment, with its index, its
        values and the largest stable value (the shortest length for ``lengths``, and then its
        ``largest_root_acceleration``, the largest a_max that runs).
    """
    frequency_hz = np.asarray(frequency_hz, dtype=np.float64)
    damping_ratio = np.asarray(damping_ratio, dtype=np.float64)
    shape = frequency_hz.shape
    air_drag = np.broadcast_to(np.asarray(air_drag, dtype=np.float64), shape)
    load = np.broadcast_to(np.asarray(load, dtype=np.float64), shape)
    inertia = np.broadcast_to(np.asarray(inertia, dtype=np.float64), shape)
    root_acceleration = np.broadcast_to(np.asarray(root_acceleration, dtype=np.float64), shape)
    gust_stiffness = float(gust[0]) * float(gust[1])
    if lengths is None:
        stiffness = np.full(shape, gust_stiffness)
    else:
        lengths = np.broadcast_to(np.asarray(lengths, dtype=np.float64), shape)
        stiffness = (load + inertia * root_acceleration) / lengths + gust_stiffness
    mask = np.ones(shape, bool) if where is None else np.asarray(where, dtype=bool)
    words = f" {what}" if what else ""
    exact = integrator == "exact"
    h = float(substep)
    checks = [] if exact else [("frequency", 0.0, 0.0), ("air_drag", air_drag, 0.0)]
    checks.append(("external", air_drag, stiffness))
    for step, drag, stiff in checks:
        ok = is_stable(frequency_hz, damping_ratio, h, drag, stiff, integrator) | ~mask
        if np.all(ok):
            continue
        i = int(np.flatnonzero(~np.ravel(ok))[0])
        f, zeta = float(np.ravel(frequency_hz)[i]), float(np.ravel(damping_ratio)[i])
        c_air, k_ext = float(np.ravel(air_drag)[i]), float(np.ravel(stiffness)[i])
        if step == "frequency":
            limit = _largest_frequency(zeta, h, c_air, k_ext)
            raise UnstableSpringError(i, f, zeta, h, words, limit=limit)
        drag_words = f" and air_drag = {c_air!r} 1/s" if c_air else ""
        if step == "air_drag":  # the largest with K as it is, or, where K leaves none, without it
            limit = _largest_air_drag(f, zeta, h, k_ext) or _largest_air_drag(f, zeta, h, 0.0)
            raise UnstableSpringError(i, f, zeta, h, words, "air_drag", c_air, limit)
        largest = float(largest_external_stiffness(f, zeta, h, c_air, integrator)) - gust_stiffness
        if largest <= 1e-9 / (h * h):  # rounding of a bound that is 0 (undamped, exact step)
            largest = 0.0
        if lengths is None:  # point chains: only the gust's gradient turns with the particle
            amplitude, wave_number = gust
            raise UnstableSpringError(i, f, zeta, h, words, "gust_amplitude", float(amplitude),
                                      max(largest, 0.0) / float(wave_number), drag_words)
        length, steady = float(np.ravel(lengths)[i]), float(np.ravel(load)[i])
        mu, a_max = float(np.ravel(inertia)[i]), float(np.ravel(root_acceleration)[i])
        across = steady + mu * a_max
        shortest = across / largest if largest > 0 else 0.0
        strongest = f"; the strongest acceleration across it that runs is {max(largest, 0.0) * length:.4g} " \
                    f"length/s²" if largest > 0 else ""
        felt = ""
        room = max(largest, 0.0) * length - steady  # what the root's acceleration may add
        root_limit = room / mu if mu > 0 and room > 0 else 0.0
        if mu * a_max > 0:
            runs = (f"the largest it runs under is {root_limit:.4g} length/s²" if root_limit > 0 else
                    "it runs under none")
            felt = (f" (gravity and wind {steady:.4g}, and the root's acceleration max_root_acceleration = "
                    f"{a_max:.4g} length/s² felt through inertia {mu:.4g}: {runs})")
        error = UnstableSpringError(i, f, zeta, h, words + f" under |g_eff| = {across:.4g} length/s²{felt}{strongest}",
                                    "lengths", length, shortest, drag_words)
        error.largest_root_acceleration = root_limit if mu > 0 else (np.inf if room > 0 else 0.0)
        raise error


def _largest_frequency(zeta, h, c_air, k_ext):
    """The largest stable f (Hz) of the semi-implicit step with these other terms: the root of
    ``h²·(ω² + K) + 4ζ·h·ω + 2h·c_air = 4``; the spring's own bound where they leave none."""
    room = 4.0 * zeta * zeta + 4.0 - h * h * k_ext - 2.0 * h * c_air
    if room <= 4.0 * zeta * zeta:
        return stable_frequency(zeta, h)
    return (math.sqrt(room) - 2.0 * zeta) / (2.0 * math.pi * h)


def _largest_air_drag(frequency_hz, zeta, h, k_ext):
    """The largest stable c_air (1/s) of the semi-implicit step with this spring and external
    stiffness: ``2h·c_air < 4 - h²·(k + K) - 4ζ·ω0·h`` (0 where none is)."""
    x = 2.0 * math.pi * frequency_hz * h
    return max((4.0 - x * x - h * h * k_ext - 4.0 * zeta * x) / (2.0 * h), 0.0)


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

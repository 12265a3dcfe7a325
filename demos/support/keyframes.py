"""A small keyframe track: the primary animation that drives a demo body.

A track holds K key times and K values (scalars or vectors) and is sampled at any time,
optionally looping. Two interpolations:

- ``"linear"``: straight lines between keys (a sudden turn keyed over a few frames).
- ``"smooth"``: a monotone cubic Hermite curve (Fritsch–Butland tangents, the rule used by
  PCHIP): the value and its slope are continuous, and between two keys the curve never
  leaves the range of those two keys, so a hold (two equal keys) really holds and a stop
  does not overshoot.

Keyframes are the first stage of a frame's pose: keyframes, then IK, then springs
(SPEC section 2).
"""
from __future__ import annotations

import numpy as np

from gpu_jiggle.sim import validation

__all__ = ["KeyframeTrack", "INTERPOLATIONS"]

INTERPOLATIONS = ("linear", "smooth")


class KeyframeTrack:
    """Values keyed at times, sampled by interpolation.

    Args:
        times: (K,) float, seconds, finite and strictly increasing, K ≥ 2.
        values: (K,) or (K, D) float, finite, in the caller's unit (radians for angles;
            angles are interpolated as plain numbers, without wrapping).
        interpolation: ``"linear"`` or ``"smooth"`` (see the module docstring).
        loop: when True, time is taken modulo the track's span ``times[-1] - times[0]``, so
            the track repeats; give the last key the first key's value for a seamless loop.
            When False, times before the first key or after the last hold the end values.

    Raises:
        ValueError: fewer than two keys, times not strictly increasing, shapes that do not
            match, non-finite numbers, or an unknown interpolation (the argument is named).
        TypeError: non-numeric input or a non-bool ``loop``.
    """

    def __init__(self, times, values, interpolation: str = "smooth", loop: bool = True):
        t = validation.float_array("times", times, (None,))
        if t.size < 2:
            raise ValueError(f"times: expected at least 2 keys, got {t.size}")
        step = np.diff(t)
        validation.require("times", t[1:], step > 0, "a time greater than the key before it (strictly increasing)")
        v = validation.float_array("values", values)
        if v.ndim not in (1, 2) or v.shape[0] != t.size:
            raise ValueError(f"values: expected shape ({t.size},) or ({t.size}, D), one value per key, got {v.shape}")
        if interpolation not in INTERPOLATIONS:
            raise ValueError(f"interpolation = {interpolation!r}: expected one of "
                             f"{', '.join(map(repr, INTERPOLATIONS))}")
        if not isinstance(loop, (bool, np.bool_)):
            raise TypeError(f"loop: expected a bool, got {type(loop).__name__}")
        self.times = t
        self.values = v
        self.interpolation = interpolation
        self.loop = bool(loop)
        self.tangents = _monotone_tangents(t, v.reshape(t.size, -1), self.loop).reshape(v.shape)
        for a in (self.times, self.values, self.tangents):
            a.flags.writeable = False

    @property
    def duration(self) -> float:
        """Seconds from the first key to the last (the loop period when looping)."""
        return float(self.times[-1] - self.times[0])

    def sample(self, time):
        """The track's value at ``time`` (seconds).

        Args:
            time: float or array (N...) of seconds, finite.

        Returns:
            float64: ``time.shape + values.shape[1:]``; a Python float for a scalar time on
            a scalar track.
        """
        t = validation.float_array("time", time)
        keys, values = self.times, self.values.reshape(self.times.size, -1)
        if self.loop:
            local = keys[0] + np.mod(t - keys[0], self.duration)
        else:
            local = np.clip(t, keys[0], keys[-1])
        i = np.clip(np.searchsorted(keys, local, side="right") - 1, 0, keys.size - 2)
        span = keys[i + 1] - keys[i]
        u = ((local - keys[i]) / span)[..., None]
        v0, v1 = values[i], values[i + 1]
        if self.interpolation == "linear":
            out = v0 + (v1 - v0) * u
        else:
            m = self.tangents.reshape(keys.size, -1)
            m0, m1 = m[i] * span[..., None], m[i + 1] * span[..., None]
            u2, u3 = u * u, u * u * u
            out = ((2 * u3 - 3 * u2 + 1) * v0 + (u3 - 2 * u2 + u) * m0
                   + (-2 * u3 + 3 * u2) * v1 + (u3 - u2) * m1)
        out = out.reshape(t.shape + self.values.shape[1:])
        return float(out) if out.ndim == 0 else out

    __call__ = sample

    def __repr__(self):
        return (f"KeyframeTrack(keys={self.times.size}, duration={self.duration:g} s, "
                f"interpolation={self.interpolation!r}, loop={self.loop})")


def _monotone_tangents(times: np.ndarray, values: np.ndarray, loop: bool) -> np.ndarray:
    """Slopes (K, D) at each key for a monotone cubic Hermite curve.

    Interior key k with neighbouring secant slopes δ0 (before) and δ1 (after), interval
    lengths h0 and h1: the slope is 0 where δ0 and δ1 differ in sign or either is 0 (a local
    extremum or a hold), else the weighted harmonic mean
    ``(w0 + w1) / (w0/δ0 + w1/δ1)`` with ``w0 = 2·h1 + h0`` and ``w1 = h1 + 2·h0``
    (Fritsch and Butland), which keeps each piece inside its two keys. End keys of a looping
    track use the wrapped neighbours; otherwise they take their interval's secant slope.
    """
    h = np.diff(times)[:, None]
    delta = np.diff(values, axis=0) / h
    if loop:  # neighbours across the seam: the last interval before key 0, the first after key K-1
        h_before = np.concatenate([h[-1:], h])
        d_before = np.concatenate([delta[-1:], delta])
        h_after = np.concatenate([h, h[:1]])
        d_after = np.concatenate([delta, delta[:1]])
    else:
        h_before = np.concatenate([h[:1], h])
        d_before = np.concatenate([delta[:1], delta])
        h_after = np.concatenate([h, h[-1:]])
        d_after = np.concatenate([delta, delta[-1:]])
    w0 = 2 * h_after + h_before
    w1 = h_after + 2 * h_before
    same = (d_before * d_after) > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = (w0 + w1) / (w0 / d_before + w1 / d_after)
    return np.where(same, mean, 0.0)

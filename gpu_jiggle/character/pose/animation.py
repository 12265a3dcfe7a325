"""glTF animation clips sampled exactly as the glTF 2.0 specification says.

A :class:`Clip` is a named list of :class:`Channel` s, each driving one node's
``translation``, ``rotation``, ``scale`` (or morph ``weights``) through a :class:`Sampler`
of key times and values. Sampling (glTF 2.0, "Animations" and Appendix C):

- ``STEP``: the value of the last key at or before t.
- ``LINEAR``: straight-line interpolation; rotations by spherical linear interpolation
  the short way round (``quat.slerp``).
- ``CUBICSPLINE``: each key stores (in-tangent, value, out-tangent); between keys k and
  k+1, with ``td = t_{k+1} - t_k`` and ``s = (t - t_k)/td``,
  ``p(s) = (2s³ - 3s² + 1)·v_k + td·(s³ - 2s² + s)·b_k + (-2s³ + 3s²)·v_{k+1} + td·(s³ - s²)·a_{k+1}``
  with b_k the out-tangent of key k and a_{k+1} the in-tangent of key k+1; rotations are
  normalised after it.
- Before the first key a sampler gives its first value, after the last its last value.

A clip spans ``[start, end]``: the earliest and the latest key time of all its channels.
``Clip.sample(pose, t, loop=True)`` plays it repeatedly (``start + (t - start) mod
duration``); ``loop=False`` holds the end values past the end (and the start values before
it). Keyframes are the first stage of a frame: keyframes, then IK, then springs (SPEC 2).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import quat
from .skeleton import Pose

INTERPOLATIONS = ("STEP", "LINEAR", "CUBICSPLINE")
PATHS = ("translation", "rotation", "scale", "weights")


@dataclass(frozen=True)
class Sampler:
    """Key times and values of one channel.

    Attributes:
        times: (K,) float64 seconds, strictly increasing, K ≥ 1.
        values: (K, D) float64 for STEP and LINEAR; (K, 3, D) for CUBICSPLINE (in-tangent,
            value, out-tangent per key). D is 3 (translation, scale), 4 (rotation) or the
            number of morph weights.
        interpolation: ``"STEP"``, ``"LINEAR"`` or ``"CUBICSPLINE"``.
    """

    times: np.ndarray
    values: np.ndarray
    interpolation: str = "LINEAR"

    def __post_init__(self):
        t = np.asarray(self.times, np.float64).reshape(-1)
        if self.interpolation not in INTERPOLATIONS:
            raise ValueError(f"interpolation = {self.interpolation!r}: expected one of {', '.join(INTERPOLATIONS)}")
        if t.size < 1 or not np.all(np.isfinite(t)):
            raise ValueError("times: expected at least one finite key time")
        if t.size > 1 and not np.all(np.diff(t) > 0):
            i = int(np.flatnonzero(~(np.diff(t) > 0))[0]) + 1
            raise ValueError(f"times[{i}] = {t[i]!r}: expected a time greater than the key before it "
                             f"({t[i - 1]!r})")
        v = np.asarray(self.values, np.float64)
        per_key = 3 if self.interpolation == "CUBICSPLINE" else 1
        rows = t.size * per_key
        if v.size == 0 or v.size % rows or not np.all(np.isfinite(v)):
            raise ValueError(f"values: expected finite values in a multiple of {rows} numbers for {t.size} keys "
                             f"({self.interpolation}), got shape {v.shape}")
        v = v.reshape(t.size, 3, -1) if per_key == 3 else v.reshape(t.size, -1)
        object.__setattr__(self, "times", t)
        object.__setattr__(self, "values", v)

    @property
    def width(self) -> int:
        return self.values.shape[-1]

    def sample(self, t: float, rotation: bool = False) -> np.ndarray:
        """The value (D,) float64 at time ``t`` seconds (clamped to the keys)."""
        return self.sample_many(np.array([t], np.float64), rotation)[0]

    def sample_many(self, t, rotation: bool = False) -> np.ndarray:
        """The values (T, D) float64 at the (T,) times ``t`` seconds (clamped to the keys):
        each row as :meth:`sample` gives it."""
        t = np.asarray(t, np.float64).reshape(-1)
        times = self.times
        cubic = self.interpolation == "CUBICSPLINE"
        keys = self.values[:, 1] if cubic else self.values
        if times.size == 1:
            return np.repeat(keys[:1], t.size, axis=0)
        k = np.clip(np.searchsorted(times, t, side="right") - 1, 0, times.size - 2)
        if self.interpolation == "STEP":
            out = self.values[k].copy()
        else:
            t0, t1 = times[k], times[k + 1]
            td = (t1 - t0)[:, None]
            s = (t[:, None] - t0[:, None]) / td
            if not cubic:
                a, b = self.values[k], self.values[k + 1]
                out = quat.slerp(a, b, s[:, 0]) if rotation else a + (b - a) * s
            else:
                s2, s3 = s * s, s * s * s
                v0, b0 = self.values[k, 1], self.values[k, 2]
                v1, a1 = self.values[k + 1, 1], self.values[k + 1, 0]
                out = ((2 * s3 - 3 * s2 + 1) * v0 + td * (s3 - 2 * s2 + s) * b0
                       + (-2 * s3 + 3 * s2) * v1 + td * (s3 - s2) * a1)
                out = quat.normalize(out) if rotation else out
        out[t <= times[0]] = keys[0]
        out[t >= times[-1]] = keys[-1]
        return out


@dataclass(frozen=True)
class Channel:
    """One animated property: ``node`` (index), ``path`` (one of :data:`PATHS`) and its
    :class:`Sampler`."""

    node: int
    path: str
    sampler: Sampler


class Clip:
    """A named glTF animation.

    Attributes:
        name: str. channels: list of :class:`Channel`. start, end: seconds, the earliest
        and latest key time. duration: ``end - start`` seconds.
    """

    def __init__(self, name: str, channels):
        self.name = name
        self.channels = list(channels)
        if self.channels:
            self.start = float(min(c.sampler.times[0] for c in self.channels))
            self.end = float(max(c.sampler.times[-1] for c in self.channels))
        else:
            self.start = self.end = 0.0

    @property
    def duration(self) -> float:
        return self.end - self.start

    def local_time(self, t: float, loop: bool = True) -> float:
        """The clip time that playing time ``t`` (seconds) maps to: looped by the clip's
        duration, or clamped to ``[start, end]`` when not looping."""
        t = float(t)
        if not math.isfinite(t):
            raise ValueError(f"time = {t!r}: expected a finite number of seconds")
        if loop and self.duration > 0:
            return self.start + math.fmod(t - self.start, self.duration) % self.duration
        return min(max(t, self.start), self.end)

    def sample(self, pose: Pose, t: float, loop: bool = True) -> Pose:
        """A copy of ``pose`` with the clip's channels applied at time ``t`` seconds.

        Nodes without a channel keep ``pose``'s values (usually the rest pose). Morph
        ``weights`` channels do not change a :class:`Pose`; see :meth:`sample_weights`.
        """
        many = self.sample_many(pose, np.array([t], np.float64), loop)
        return Pose(many.translation[0], many.rotation[0], many.scale[0])

    def sample_many(self, pose: Pose, t, loop: bool = True) -> Pose:
        """:meth:`sample` at each of the (T,) times ``t``: a :class:`Pose` of (T, N, ...)
        arrays (a crowd's copies, each at its own time)."""
        t = np.asarray(t, np.float64).reshape(-1)
        local = np.array([self.local_time(float(x), loop) for x in t])
        out = Pose(*(np.repeat(getattr(pose, f)[None], t.size, axis=0) for f in ("translation", "rotation", "scale")))
        for c in self.channels:
            if c.path == "translation":
                out.translation[:, c.node] = c.sampler.sample_many(local)
            elif c.path == "rotation":
                out.rotation[:, c.node] = quat.normalize(c.sampler.sample_many(local, rotation=True))
            elif c.path == "scale":
                out.scale[:, c.node] = c.sampler.sample_many(local)
        return out

    def sample_weights(self, t: float, loop: bool = True) -> dict:
        """Morph target weights at time ``t``: {node index: (W,) float64}."""
        local = self.local_time(t, loop)
        return {c.node: c.sampler.sample(local) for c in self.channels if c.path == "weights"}

    def __repr__(self):
        return f"Clip({self.name!r}, channels={len(self.channels)}, duration={self.duration:g} s)"

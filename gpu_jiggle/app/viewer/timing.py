"""The viewer's timings: a ring of OpenGL timer queries that never stalls (:class:`GpuTimer`),
the frame-rate cap (:class:`FrameLimiter`) and the rolling means and plotted history of the
panel's times (:class:`Stats`), all in milliseconds. What each time measures is said by
:class:`~gpu_jiggle.app.viewer.session.Session`.
"""
from __future__ import annotations

import math
import time
from collections import deque
from contextlib import contextmanager

import numpy as np

__all__ = ["GpuTimer", "FrameLimiter", "Stats", "MS_PER_SECOND", "MEAN_FRAMES", "PLOT_FRAMES"]

PANEL_REFRESH_SECONDS = 0.25     # how often the numbers on the panel change (readable, cheap)
CADENCE_RESTART_SECONDS = 0.1    # a frame this late restarts the frame-rate cap's cadence
MEAN_FRAMES = 60                 # the panel's times are means over this many frames
PLOT_FRAMES = 240                # and its plots show this many (4 s at 60 fps)
MS_PER_SECOND = 1e3
NS_PER_MS = 1e6


class GpuTimer:
    """GPU time of the commands issued inside :meth:`measure`, from OpenGL timer queries.

    A ring of ``depth`` queries: each measurement reads the result of the query used
    ``depth`` measurements ago, which the GPU has finished by then, so reading never waits.
    :attr:`available` is False when the context has no timer queries; :attr:`last_ms` is
    None until a result came back.
    """

    def __init__(self, ctx, depth: int = 3):
        try:
            self._queries = [ctx.query(time=True) for _ in range(depth)]
        except Exception:  # no ARB_timer_query: moderngl raises its own error type
            self._queries = []
        self._count = 0
        self.last_ms = None

    @property
    def available(self) -> bool:
        return bool(self._queries)

    @contextmanager
    def measure(self):
        if not self._queries:
            yield
            return
        query = self._queries[self._count % len(self._queries)]
        if self._count >= len(self._queries):
            self.last_ms = query.elapsed / NS_PER_MS  # nanoseconds of its previous use
        with query:
            yield
        self._count += 1

    def release(self) -> None:
        self._queries = []  # moderngl frees a query when it is collected


class FrameLimiter:
    """Sleeps so that frames start no more often than ``cap`` per second (None: never sleeps)."""

    def __init__(self, cap=None):
        self.cap = cap
        self._next = None

    def wait(self) -> None:
        if self.cap is None:
            self._next = None
            return
        now = time.perf_counter()
        if self._next is None or now - self._next > CADENCE_RESTART_SECONDS:  # late by far: start again
            self._next = now
        if self._next > now:
            time.sleep(self._next - now)
        self._next += 1.0 / self.cap


class Stats:
    """Rolling means over the last ``window`` frames, in milliseconds, and the last ``plotted``
    values for the panel's plots, by name: ``frame``; ``solver``, the solver's time as
    :attr:`Session.solver_kind` says (finish-bracketed wall time of the step, the
    dispatches' GPU time, or the step's host time); ``solver_cpu``, the step's host time;
    ``dispatch``, the solvers' dispatches alone; ``draw``, the drawing's (finish-bracketed
    wall time, or GPU time); ``draw_cpu``, its host time. :meth:`shown` gives the means
    refreshed a few times a second."""

    NAMES = ("frame", "solver", "solver_cpu", "dispatch", "draw", "draw_cpu")

    def __init__(self, window: int = MEAN_FRAMES, plotted: int = PLOT_FRAMES):
        self.window = window
        self.history = {name: deque(maxlen=max(window, plotted)) for name in self.NAMES}
        self._shown = {name: None for name in self.NAMES}
        self._shown_at = -math.inf

    def add(self, name: str, ms) -> None:
        if ms is not None:
            self.history[name].append(float(ms))

    def mean(self, name: str):
        h = list(self.history[name])[-self.window:]
        return sum(h) / len(h) if h else None

    def shown(self) -> dict:
        now = time.perf_counter()
        if now - self._shown_at >= PANEL_REFRESH_SECONDS:
            self._shown = {name: self.mean(name) for name in self.NAMES}
            self._shown_at = now
        return self._shown

    def series(self, name: str) -> np.ndarray:
        """(N,) float32: the last values of ``name``, oldest first (what the plots show)."""
        return np.array(self.history[name], np.float32)

    def frame_times(self) -> np.ndarray:
        return self.series("frame")

"""What one frame's dispatch cost, for benchmarks and for a viewer's honest timings.

:meth:`gpu_jiggle.Solver.measure_dispatch` (:class:`MeasuredDispatch`) turns it on; after each
``advance``, :attr:`gpu_jiggle.Solver.dispatch_timing` holds a :class:`DispatchTiming`.
"""
from __future__ import annotations

import time
from typing import NamedTuple

from . import validation

#: How the numpy reference's time is measured: the host's wall time around its frame.
HOST_WALL = "host wall time"


class DispatchTiming(NamedTuple):
    """One frame's dispatch.

    seconds: the frame's substeps and outputs alone (float, s): on the GPU backend the
    dispatches (and the frame buffer they read), by a timer query where the context has one,
    else between two glFinish calls; on the numpy backend its ``run_frame``, wall time.
    how: which of those (``"timer query"``, ``"finish-fenced wall time"``, ``"host wall time"``).
    uploaded_bytes: bytes written to GPU buffers by this frame's ``advance`` and what was set
    since the last one (pose, colliders, frame buffer, parameters; int; 0 on numpy).
    near_chains: point chains with colliders on the GPU, how many chains the frame's last
    dispatch ran as near (docs/SPEC.md section 9, "Near and far chains"; int); None where the
    frame ran as one pass.
    """

    seconds: float
    how: str
    uploaded_bytes: int
    near_chains: int | None = None


def uploaded_total(backend) -> int:
    """Bytes the backend has written to GPU buffers so far (0 for the numpy reference)."""
    return int(getattr(backend, "uploaded_bytes", 0))


def timed_frame(backend, params, uploaded_mark: int) -> DispatchTiming:
    """Run ``backend.run_frame(params)`` and say what it cost; ``uploaded_mark`` is
    :func:`uploaded_total` after the last frame, so the uploads counted are this frame's."""
    started = time.perf_counter()
    backend.run_frame(params)
    wall = time.perf_counter() - started
    seconds, how = backend.dispatch_timing() if getattr(backend, "timer", None) is not None else (wall, HOST_WALL)
    near = backend.near_chain_count() if hasattr(backend, "near_chain_count") else None
    return DispatchTiming(seconds, how, uploaded_total(backend) - uploaded_mark, near)


class MeasuredDispatch:
    """The solver's side of the timing: :meth:`measure_dispatch`, :attr:`dispatch_timing`, and
    ``_run_frame``, which runs the backend's frame timed while it is on (a class that also has
    ``_backend``)."""

    _timing = None  # DispatchTiming of the last advance while measure_dispatch is on
    _upload_mark = 0  # uploaded_total after the last timed frame

    def measure_dispatch(self, enabled: bool = True) -> None:
        """Time each frame's dispatch on its own from the next ``advance`` on (or stop):
        :attr:`dispatch_timing` then says what the last frame's cost. On a GPU a timer query is
        issued around the dispatch; on Mesa's llvmpipe, whose timer query does not cover
        compute, the wall time between two ``glFinish`` calls; on the numpy backend the host's
        wall time. Either way each frame waits for its dispatch to finish.

        Raises: TypeError for a non-bool ``enabled``."""
        enabled = validation.flag("enabled", enabled)
        if hasattr(self._backend, "enable_timing"):
            self._backend.enable_timing(enabled)
        self._timing = DispatchTiming(float("nan"), "", 0) if enabled else None
        self._upload_mark = uploaded_total(self._backend)

    @property
    def dispatch_timing(self):
        """A :class:`~gpu_jiggle.sim.timing.DispatchTiming` (seconds, how, uploaded_bytes) of
        the last ``advance`` while :meth:`measure_dispatch` is on (seconds NaN before the first
        one), else None."""
        return self._timing

    def _run_frame(self, params) -> None:
        """``backend.run_frame(params)``, timed while :meth:`measure_dispatch` is on."""
        if self._timing is None:
            self._backend.run_frame(params)
        else:
            self._timing = timed_frame(self._backend, params, self._upload_mark)
            self._upload_mark = uploaded_total(self._backend)

"""What one frame's dispatch cost, for benchmarks and for a viewer's honest timings.

:meth:`gpu_jiggle.Solver.measure_dispatch` turns it on; after each ``advance``,
:attr:`gpu_jiggle.Solver.dispatch_timing` holds a :class:`DispatchTiming`.
"""
from __future__ import annotations

import time
from typing import NamedTuple

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
    """

    seconds: float
    how: str
    uploaded_bytes: int


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
    return DispatchTiming(seconds, how, uploaded_total(backend) - uploaded_mark)

"""Timing GPU work on its own: a timer query around it where the context has one, else the
wall time between two ``glFinish`` calls.

A timer query (``GL_TIME_ELAPSED``, OpenGL 3.3 core) measures the GPU's time for the commands
between its begin and end, without the host's work before them; reading its result waits for
it. Mesa's software renderers (llvmpipe) run a compute dispatch on the CPU threads outside
what their timer query counts (it reads about 1 ns), so there the wall time between two
``glFinish`` calls is used: the "GPU" is then this machine's CPU. ``how`` says which was used.
The query object lives as long as the context (moderngl gives queries no release).
"""
from __future__ import annotations

import time
from contextlib import contextmanager

#: The two ways of timing, as :attr:`GpuTimer.how` reports them.
TIMER_QUERY, FINISH_FENCED_WALL = "timer query", "finish-fenced wall time"


class GpuTimer:
    """Seconds of GPU time spent in ``with timer.measure(): ...`` blocks.

    Args:
        ctx: the moderngl context the timed commands run on; it must be current inside the
            block (the solver's backends make their own context current around their GL calls).
        use_query: False forces the finish-fenced wall time (for a context whose timer query
            is missing or untrustworthy).

    After each block, :attr:`last_seconds` holds its time in seconds (float).
    """

    def __init__(self, ctx, use_query: bool = True):
        self.ctx = ctx
        self._query = None
        if use_query and not software_renderer(ctx):
            try:
                self._query = ctx.query(time=True)
            except Exception:  # moderngl raises plain Errors for a context without timer queries
                self._query = None
        self.how = TIMER_QUERY if self._query is not None else FINISH_FENCED_WALL
        self.last_seconds = 0.0

    @contextmanager
    def measure(self):
        """Time the GL commands issued inside the block (the block's host work is not counted
        with a timer query; it is with the wall time, so keep the block to GL calls)."""
        if self._query is not None:
            with self._query:
                yield
            self.last_seconds = self._query.elapsed * 1e-9  # waits for the result
            return
        self.ctx.finish()
        started = time.perf_counter()
        yield
        self.ctx.finish()
        self.last_seconds = time.perf_counter() - started


def software_renderer(ctx) -> bool:
    """Whether ``ctx`` is one of Mesa's software renderers (llvmpipe, softpipe, swrast)."""
    renderer = str(ctx.info.get("GL_RENDERER", "")).lower()
    return any(name in renderer for name in ("llvmpipe", "softpipe", "swrast"))

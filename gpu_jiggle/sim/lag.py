"""First-order lag of any number of values (SPEC section 6).

``x ← t + (x - t)·exp(-rate·Δt)`` with ``rate = ln 2 / half_life``: no velocity, no
overshoot, and exactly frame-rate independent (two half steps equal one whole step). It uses
the frame's Δt directly and needs no substeps.
"""
from __future__ import annotations

import math

import numpy as np

from . import validation


class LagFollower:
    """Values that follow their targets with a half-life.

    Args:
        half_life: seconds, > 0; a scalar or one per value (shape of ``initial``, flattened).
        initial: array_like of any shape: the starting values (float32 inside).
        backend: ``"cpu"`` (numpy), ``"gpu"`` (compute shader ``lag.comp``) or ``"auto"``.
        context: optional moderngl context for the GPU backend.

    Raises:
        ValueError: a half-life ≤ 0, a non-finite value, or a half-life array of the wrong
        size. RuntimeError: ``backend="gpu"`` without an OpenGL 4.3 context.
    """

    def __init__(self, half_life, initial, backend: str = "auto", context=None):
        x = validation.float_array("initial", initial)
        self.shape = x.shape
        hl = validation.float_array("half_life", half_life)
        if hl.ndim and hl.size != x.size:
            raise ValueError(f"half_life: expected a scalar or {x.size} values, got shape {hl.shape}")
        validation.require("half_life", hl, hl > 0, "a finite number of seconds > 0")
        self._rate = np.broadcast_to(math.log(2.0) / hl.ravel(), (x.size,)).astype(np.float32)
        self._value = x.ravel().astype(np.float32)
        self._gpu = None
        if backend not in ("auto", "gpu", "cpu"):
            raise ValueError(f"backend = {backend!r}: expected 'auto', 'gpu' or 'cpu'")
        if backend != "cpu":
            self._gpu = _make_gpu(backend, context, self._value, self._rate)
        self.backend = "gpu" if self._gpu else "cpu"

    @property
    def value(self) -> np.ndarray:
        """The current values, float32, in the shape of ``initial``."""
        if self._gpu:
            return self._gpu.read().reshape(self.shape)
        return self._value.reshape(self.shape).copy()

    def update(self, target, dt) -> np.ndarray:
        """Move toward ``target`` (same shape as ``initial``) over ``dt`` seconds (≥ 0).

        Returns the new values (float32, shape of ``initial``).
        Raises ValueError for a wrong shape, non-finite values or a bad dt.
        """
        t = validation.float_array("target", target, self.shape).ravel().astype(np.float32)
        dt = validation.frame_time("dt", dt)
        if self._gpu:
            self._gpu.follow(t, dt)
            return self.value
        self._value = self.follow(self._value, t, self._rate, np.float32(dt))
        return self.value

    @staticmethod
    def follow(value, target, rate, dt):
        """The numpy stage, float32: ``t + (x - t)·exp(-rate·dt)``."""
        return target + (value - target) * np.exp(-rate * dt)


def _make_gpu(backend, context, value, rate):
    from ..gl.context import check_context, get_context
    try:
        ctx = check_context(context) if context is not None else get_context()
    except RuntimeError:
        if backend == "gpu":
            raise
        import logging
        logging.getLogger("gpu_jiggle").warning("no OpenGL 4.3 context: LagFollower runs in numpy")
        return None
    return _GpuLag(ctx, value, rate)


class _GpuLag:
    def __init__(self, ctx, value, rate):
        from .backends.gpu import LOCAL_SIZE, dispatch_size
        from ..gl.glsl import compute_shader
        self.ctx = ctx
        self.count = value.size
        self.groups = dispatch_size(self.count, LOCAL_SIZE)
        self.program = compute_shader(ctx, "lag.comp", {"LOCAL_SIZE": LOCAL_SIZE})
        size = max(4 * self.count, 16)
        self.value = ctx.buffer(reserve=size)
        self.target = ctx.buffer(reserve=size)
        self.rate = ctx.buffer(reserve=size)
        if self.count:
            self.value.write(value.tobytes())
            self.rate.write(rate.tobytes())

    def follow(self, target, dt):
        if not self.count:
            return
        self.target.write(target.tobytes())
        for binding, buf in enumerate((self.value, self.target, self.rate)):
            buf.bind_to_storage_buffer(binding)
        self.program["value_count"] = self.count
        self.program["frame_dt"] = dt
        self.program.run(group_x=self.groups[0], group_y=self.groups[1])
        self.ctx.memory_barrier()

    def read(self):
        if not self.count:
            return np.zeros(0, np.float32)
        return np.frombuffer(self.value.read(size=4 * self.count), np.float32).copy()

"""First-order lag of any number of values (SPEC section 6).

``x ← t + (x - t)·exp(-rate·Δt)`` with ``rate = ln 2 / half_life``: no velocity, no
overshoot, and exactly frame-rate independent (two half steps equal one whole step). It uses
the frame's Δt directly and needs no substeps.
"""
from __future__ import annotations

import math

import numpy as np

from . import validation
from ..gl.dispatch import LOCAL_SIZE, dispatch_size
from ..gl.glsl import compute_shader
from ..gl.lifetime import GlOwner
from .backends import gpu_context
from .backends.gpu import MIN_BUFFER_BYTES


class LagFollower:
    """Values that follow their targets with a half-life.

    Args:
        half_life: seconds, > 0; a scalar or one per value (shape of ``initial``, flattened).
        initial: array_like of any shape: the starting values (float32 inside).
        backend: ``"cpu"`` (numpy), ``"gpu"`` (compute shader ``shaders/sim/lag.comp``) or ``"auto"``.
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
        ctx = gpu_context(backend, context, what="LagFollower in numpy")
        self._gpu = None if ctx is None else _GpuLag(ctx, self._value, self._rate)
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

    def release(self) -> None:
        """Free the GPU buffers and program now (a second call does nothing; they are also
        freed when the follower is garbage-collected). The values stay readable."""
        if self._gpu:
            self._value = self._gpu.read()
            self._gpu.gl.release()
            self._gpu = None
            self.backend = "cpu"

    @staticmethod
    def follow(value, target, rate, dt):
        """The numpy stage, float32: ``t + (x - t)·exp(-rate·dt)``."""
        return target + (value - target) * np.exp(-rate * dt)


class _GpuLag:
    """The lag on the GPU: ``shaders/sim/lag.comp`` over three float buffers."""

    def __init__(self, ctx, value, rate):
        self.count = value.size
        self.groups = dispatch_size(self.count, LOCAL_SIZE)
        self.gl = GlOwner(ctx, "this LagFollower")
        size = max(4 * self.count, MIN_BUFFER_BYTES)
        with self.gl.current():
            self.program = self.gl.track(compute_shader(ctx, "sim/lag.comp", {"LOCAL_SIZE": LOCAL_SIZE}))
            self.value, self.target, self.rate = (self.gl.track(ctx.buffer(reserve=size)) for _ in range(3))
            if self.count:
                self.value.write(value.tobytes())
                self.rate.write(rate.tobytes())
        self.gl.attach_finalizer(self)

    def follow(self, target, dt):
        if not self.count:
            return
        with self.gl.current() as ctx:
            self.target.write(target.tobytes())
            for binding, buf in enumerate((self.value, self.target, self.rate)):
                buf.bind_to_storage_buffer(binding)
            self.program["value_count"] = self.count
            self.program["frame_dt"] = dt
            self.program.run(group_x=self.groups[0], group_y=self.groups[1])
            ctx.memory_barrier()

    def read(self):
        if not self.count:
            return np.zeros(0, np.float32)
        with self.gl.current():
            return np.frombuffer(self.value.read(size=4 * self.count), np.float32).copy()

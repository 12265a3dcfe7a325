"""The yardstick: how many bytes per second a plain copy shader moves on this context.

``shaders/bench/copy.comp`` copies a buffer of vec4s into another, one invocation each, so a
dispatch reads every byte once and writes it once. Its bytes moved per second (read plus
written) is the memory bandwidth a compute kernel can reach here; the solver's compulsory
bytes per second (:func:`gpu_jiggle.bench.measure.compulsory_bytes`) are reported as a
fraction of it.
"""
from __future__ import annotations

import numpy as np

from ..gl.dispatch import dispatch_size
from ..gl.glsl import compute_shader
from ..gl.lifetime import GlOwner
from ..gl.timing import GpuTimer

#: Invocations per work group of the copy shader (its LOCAL_SIZE).
COPY_LOCAL_SIZE = 256
#: Repeats of the copy; the median is kept.
COPY_REPEATS = 5


def copy_bandwidth(ctx, nbytes: int, repeats: int = COPY_REPEATS) -> dict:
    """Bytes per second (read + written) of the copy shader over a buffer of ``nbytes``
    (rounded up to whole vec4s, capped at the context's storage-block size).

    Returns a dict: ``bytes`` (the buffer size copied, int), ``seconds`` (median of
    ``repeats`` copies after one warm-up, float), ``bytes_per_second`` (2·bytes / seconds)
    and ``how`` (timer query or finish-fenced wall time).

    Raises: ValueError for ``nbytes`` < 16 or ``repeats`` < 1.
    """
    if nbytes < 16 or repeats < 1:
        raise ValueError(f"copy_bandwidth: nbytes = {nbytes} and repeats = {repeats}: expected ≥ 16 and ≥ 1")
    limit = int(ctx.info.get("GL_MAX_SHADER_STORAGE_BLOCK_SIZE") or nbytes)
    count = min(-(-int(nbytes) // 16), limit // 16)
    owner = GlOwner(ctx, "the bandwidth copy")
    try:
        with owner.current():
            program = owner.track(compute_shader(ctx, "bench/copy.comp", {"LOCAL_SIZE": COPY_LOCAL_SIZE}))
            source = owner.track(ctx.buffer(np.ones(count * 4, np.float32)))
            destination = owner.track(ctx.buffer(reserve=count * 16))
            program["vec4_count"] = count
            source.bind_to_storage_buffer(0)
            destination.bind_to_storage_buffer(1)
            group_x, group_y = dispatch_size(count, COPY_LOCAL_SIZE)
            timer = GpuTimer(ctx)
            times = []
            for i in range(repeats + 1):
                with timer.measure():
                    program.run(group_x=group_x, group_y=group_y)
                if i:
                    times.append(timer.last_seconds)
            if destination.read(size=16) != source.read(size=16):
                raise RuntimeError("the copy shader did not copy")  # a driver that skipped it would flatter us
    finally:
        owner.release()
    seconds = float(np.median(times))
    return {"bytes": count * 16, "seconds": seconds, "bytes_per_second": 2 * count * 16 / seconds, "how": timer.how}

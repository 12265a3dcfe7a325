"""Read-only records held in a texture, for kernels that read them through ``texelFetch``.

An array of records of a fixed size (a multiple of 16 bytes: four 32-bit words a texel, a
record ``record_bytes / 16`` texels side by side) lies in a 2D ``RGBA32UI`` texture in rows
of ``2**row_shift`` texels, texel ``t`` of the array at ``(t mod 2**row_shift,
t >> row_shift)``. The words pass through unchanged (an integer texture converts nothing; a
kernel takes its floats with ``uintBitsToFloat``); ``record_texel`` in
``shaders/sim/record_texture.glsl`` reads one.

Why not a storage buffer: Mesa's llvmpipe reads a storage buffer one invocation at a time
(per vector, a loop over its 8 lanes), where a texel fetch is one gather for all 8
(docs/PERFORMANCE.md, "What a storage access costs on llvmpipe"). Only data that a dispatch
does not write can go there: a texture read of what the same dispatch wrote is not ordered.
"""
from __future__ import annotations

import moderngl
import numpy as np

#: The widest row, in texels (a power of two, so that the kernel finds a texel's row with a
#: shift); OpenGL 4.3 guarantees textures of 16384 × 16384.
MAX_ROW_TEXELS = 4096
TEXEL_BYTES = 16


def texture_shape(texels: int) -> tuple[int, int]:
    """(row_shift, rows) of a texture holding ``texels`` texels: rows of the smallest power of
    two of texels that holds them all, at most :data:`MAX_ROW_TEXELS`; at least one texel."""
    width = 1
    while width < min(max(texels, 1), MAX_ROW_TEXELS):
        width *= 2
    return width.bit_length() - 1, max(1, -(-texels // width))


def check_texture_rows(ctx, what: str, name: str, texels: int) -> None:
    """Refuse records that a texture of this context cannot hold (its rows over
    GL_MAX_TEXTURE_SIZE), before anything is allocated.

    Raises: ValueError naming ``what``, the texture, its rows and the context's limit."""
    limit = int(ctx.info.get("GL_MAX_TEXTURE_SIZE") or 0)
    rows = texture_shape(texels)[1]
    if limit and rows > limit:
        raise ValueError(f"{what} needs a {name} texture of {rows} rows of {MAX_ROW_TEXELS} texels; this OpenGL "
                         f"context's textures hold at most {limit} rows (GL_MAX_TEXTURE_SIZE): split the chains "
                         f"over several solvers, or use backend='cpu'")


class RecordTexture:
    """``count`` records of ``record_bytes`` each (a multiple of 16) in an ``RGBA32UI`` texture
    on ``ctx`` (the caller makes the context current around every call; ``track``, when given,
    takes ownership of the GL texture, as :meth:`gpu_jiggle.gl.lifetime.GlOwner.track` does).

    Attributes: ``row_shift`` (rows of ``2**row_shift`` texels), ``texture`` (the
    ``moderngl.Texture``), ``nbytes`` (the texture's bytes, rows padded).

    Raises: ValueError for a record size that is not a positive multiple of 16 bytes.
    """

    def __init__(self, ctx, record_bytes: int, count: int, track=lambda obj: obj):
        if record_bytes <= 0 or record_bytes % TEXEL_BYTES:
            raise ValueError(f"record_bytes = {record_bytes}: a record texture holds records of a positive multiple "
                             f"of {TEXEL_BYTES} bytes")
        self.record_bytes, self.count = int(record_bytes), int(count)
        self.row_shift, rows = texture_shape(self.count * self.record_bytes // TEXEL_BYTES)
        self.texture = track(ctx.texture((1 << self.row_shift, rows), 4, dtype="u4"))
        self.texture.filter = (moderngl.NEAREST, moderngl.NEAREST)  # an integer texture is complete only so
        self.nbytes = (1 << self.row_shift) * rows * TEXEL_BYTES

    def write(self, records) -> int:
        """Upload ``records`` (``count`` records: a structured array, or bytes of that length);
        the padding past them is zeros. Returns the bytes written.

        Raises: ValueError for another length (nothing is written)."""
        data = np.ascontiguousarray(records).view(np.uint8).reshape(-1)
        if data.size != self.count * self.record_bytes:
            raise ValueError(f"records: {data.size} bytes, this texture holds {self.count} records of "
                             f"{self.record_bytes} bytes ({self.count * self.record_bytes})")
        padded = np.zeros(self.nbytes, np.uint8)
        padded[:data.size] = data
        self.texture.write(padded)
        return self.nbytes

    def read(self) -> np.ndarray:
        """The ``count`` records as raw bytes, (count · record_bytes,) uint8, for checks."""
        return np.frombuffer(self.texture.read(), np.uint8)[:self.count * self.record_bytes].copy()

    def use(self, unit: int) -> None:
        """Bind the texture to texture unit ``unit``."""
        self.texture.use(location=unit)

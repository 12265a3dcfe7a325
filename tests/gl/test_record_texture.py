"""Records held in a texture (gpu_jiggle.gl.record_texture, shaders/sim/record_texture.glsl):
every bit pattern comes back unchanged, to the host and to a kernel reading it as texels,
over one row and several."""
from __future__ import annotations

import types

import numpy as np
import pytest

from gpu_jiggle.gl import glsl
from gpu_jiggle.gl.record_texture import MAX_ROW_TEXELS, RecordTexture, check_texture_rows, texture_shape

COPY_KERNEL = """#version 430
layout(local_size_x = 64) in;
RECORD_TEXTURE_GLSL
uniform usampler2D records_texels;
uniform uint records_row_shift;
uniform uint texel_count;
layout(std430, binding = 0) writeonly buffer Copy { uvec4 copied[]; };
void main() {
    uint t = gl_GlobalInvocationID.x;
    if (t < texel_count) {
        copied[t] = record_texel(records_texels, records_row_shift, t);
    }
}
"""


def awkward_words(rng, count):
    """uint32 words: random bits, and floats that a conversion would change (denormals, NaNs
    with payloads, -0, infinities)."""
    words = rng.integers(0, 2 ** 32, count, dtype=np.uint64).astype(np.uint32)
    special = np.array([0x00000001, 0x807FFFFF, 0x7FC01234, 0xFFA00001, 0x80000000, 0x7F800000, 0xFF800000], np.uint32)
    words[:min(count, special.size)] = special[:count]
    return words


@pytest.mark.parametrize("texels", [1, 3, MAX_ROW_TEXELS, 2 * MAX_ROW_TEXELS + 5])
def test_a_kernel_reads_every_texel_unchanged(gl, texels):
    words = awkward_words(np.random.default_rng(texels), 4 * texels)
    records = RecordTexture(gl, 32, texels // 2) if texels % 2 == 0 else RecordTexture(gl, 16, texels)
    try:
        records.write(words)
        assert np.array_equal(records.read().view(np.uint32), words)
        program = gl.compute_shader(COPY_KERNEL.replace("RECORD_TEXTURE_GLSL", glsl.read("sim/record_texture.glsl")))
        copy = gl.buffer(reserve=16 * texels)
        records.use(3)
        program["records_texels"] = 3
        program["records_row_shift"] = records.row_shift
        program["texel_count"] = texels
        copy.bind_to_storage_buffer(0)
        program.run(group_x=-(-texels // 64))
        gl.memory_barrier()
        assert np.array_equal(np.frombuffer(copy.read(), np.uint32), words)
        copy.release()
        program.release()
    finally:
        records.texture.release()


@pytest.mark.parametrize("texels", [0, 1, 2, 3, 1000, MAX_ROW_TEXELS, MAX_ROW_TEXELS + 1, 10 ** 7])
def test_the_shape_holds_the_texels_in_rows_of_a_power_of_two(texels):
    row_shift, rows = texture_shape(texels)
    width = 1 << row_shift
    assert width <= MAX_ROW_TEXELS and rows >= 1
    assert width * rows >= texels
    assert width * (rows - 1) < max(texels, 1)  # no row wholly empty
    if texels <= MAX_ROW_TEXELS:
        assert rows == 1 and width < 2 * max(texels, 1)  # one row, at most twice what it holds


def test_records_a_texture_cannot_hold_are_refused_before_anything_is_made():
    ctx = types.SimpleNamespace(info={"GL_MAX_TEXTURE_SIZE": 16})
    check_texture_rows(ctx, "chain_set: 9 chains", "segment_rig", 16 * MAX_ROW_TEXELS)
    with pytest.raises(ValueError, match=r"chain_set: 9 chains needs a segment_rig texture of 17 rows .* at most 16 "
                                         r"rows \(GL_MAX_TEXTURE_SIZE\)"):
        check_texture_rows(ctx, "chain_set: 9 chains", "segment_rig", 16 * MAX_ROW_TEXELS + 1)


def test_a_write_of_another_length_is_refused_and_changes_nothing(gl):
    records = RecordTexture(gl, 32, 4)
    try:
        words = np.arange(32, dtype=np.uint32)
        records.write(words)
        with pytest.raises(ValueError, match="records: 96 bytes, this texture holds 4 records of 32 bytes"):
            records.write(np.zeros(24, np.uint32))
        assert np.array_equal(records.read().view(np.uint32), words)
    finally:
        records.texture.release()


@pytest.mark.parametrize("record_bytes", [0, 8, 24, -16])
def test_a_record_not_a_multiple_of_a_texel_is_refused(gl, record_bytes):
    with pytest.raises(ValueError, match=f"record_bytes = {record_bytes}"):
        RecordTexture(gl, record_bytes, 4)

"""Image views of storage buffers (gpu_jiggle.gl.buffer_image, shaders/sim/buffer_views.glsl):
a kernel reads the buffer's own bits through a view of each format, including a write the same
invocation made through the buffer; the limits refuse with a reason; the views are freed."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from gpu_jiggle.gl import buffer_image
from gpu_jiggle.gl.buffer_image import BufferViews, views_unavailable

KERNEL = """#version 430
layout(local_size_x = 64) in;
layout(std430, binding = 0) coherent buffer Words { uint words[]; };
layout(std430, binding = 1) writeonly buffer Copy { uvec4 copied[]; };
layout(FORMAT, binding = 2) coherent readonly uniform uimageBuffer view;
uniform uint texel_count;
void main() {
    uint t = gl_GlobalInvocationID.x;
    if (t < texel_count) {
        copied[2u * t] = imageLoad(view, int(t));
        words[COMPONENTS * t] = ~words[COMPONENTS * t];  // written through the buffer, read back through the view
        memoryBarrier();
        copied[2u * t + 1u] = imageLoad(view, int(t));
    }
}
"""


@pytest.fixture(params=buffer_image._LIBRARIES)
def library(request, monkeypatch):
    """Each dispatch library the views may call through (glvnd's libOpenGL, or libGL, which
    tools/setup-system.sh installs), where this machine has it."""
    try:
        ctypes.CDLL(request.param)
    except OSError:
        pytest.skip(f"{request.param} is not installed here")
    monkeypatch.setattr(buffer_image, "_gl", None)
    monkeypatch.setattr(buffer_image, "_gl_missing", None)
    monkeypatch.setattr(buffer_image, "_LIBRARIES", (request.param,))
    return request.param


@pytest.mark.parametrize("image_format, components", [("rgba32ui", 4), ("rg32ui", 2), ("r32ui", 1)])
def test_a_kernel_reads_the_buffers_bits_through_a_view(gl, library, image_format, components):
    rng = np.random.default_rng(3)
    texels = 1000
    words = rng.integers(0, 2 ** 32, texels * components, dtype=np.uint64).astype(np.uint32)
    words[:4] = [0x00000001, 0x7FC01234, 0x80000000, 0xFF800000]  # a denormal, a NaN's payload, -0, -inf
    buffer, copy = gl.buffer(words.tobytes()), gl.buffer(reserve=texels * 32)
    kernel = gl.compute_shader(KERNEL.replace("FORMAT", image_format).replace("COMPONENTS", f"{components}u"))
    kernel["texel_count"] = texels
    views = BufferViews()
    buffer.bind_to_storage_buffer(0)
    copy.bind_to_storage_buffer(1)
    views.bind(2, buffer, image_format)
    kernel.run(group_x=-(-texels // 64))
    gl.finish()
    got = np.frombuffer(copy.read(), np.uint32).reshape(texels, 2, 4)[:, :, :components]
    before = words.reshape(texels, components)
    after = before.copy()
    after[:, 0] = ~after[:, 0]
    np.testing.assert_array_equal(got[:, 0], before)
    np.testing.assert_array_equal(got[:, 1], after)
    names = [name for name, _ in views.textures.values()]
    assert names and all(buffer_image._library().glIsTexture(name) for name in names)
    views.release()
    assert views.textures == {} and not any(buffer_image._library().glIsTexture(name) for name in names)


def test_the_limits_say_why_views_cannot_be(gl):
    lib = buffer_image._library()
    texels, units = ctypes.c_int(0), ctypes.c_int(0)
    lib.glGetIntegerv(buffer_image.GL_MAX_TEXTURE_BUFFER_SIZE, ctypes.byref(texels))
    lib.glGetIntegerv(buffer_image.GL_MAX_COMPUTE_IMAGE_UNIFORMS, ctypes.byref(units))
    assert views_unavailable(texels.value, units.value) is None
    assert "GL_MAX_TEXTURE_BUFFER_SIZE" in views_unavailable(texels.value + 1, 1)
    assert "GL_MAX_COMPUTE_IMAGE_UNIFORMS" in views_unavailable(1, units.value + 1)


def test_without_a_dispatch_library_the_reason_names_what_is_missing(monkeypatch):
    monkeypatch.setattr(buffer_image, "_gl", None)
    monkeypatch.setattr(buffer_image, "_gl_missing", None)
    monkeypatch.setattr(buffer_image, "_LIBRARIES", ("libno-such-gl.so.0",))
    reason = views_unavailable(1, 1)
    assert "libno-such-gl.so.0 not found" in reason

"""Read-only image views of storage buffers, for kernels that read a buffer through
``imageLoad`` and write it as a storage buffer.

A view is an OpenGL buffer texture over the buffer's own memory (``glTexBuffer``) bound to an
image unit for reading (``glBindImageTexture``, ``GL_READ_ONLY``), as an ``RGBA32UI`` image
(a texel four 32-bit words), an ``RG32UI`` one (two) or an ``R32UI`` one (one). Nothing is
copied: the kernel reads the same bytes the storage buffer holds, bit for bit.

Why: Mesa's llvmpipe reads a storage buffer one invocation and one component at a time (per
component, a bounds test, a scalar move and a lane insert), where ``imageLoad`` reads a texel
for the 8 invocations of a vector at once. Reading a point segment's 128-byte state costs 308
x86 instructions per segment through the storage buffer and 49 through the view (a minimal
kernel under callgrind; docs/PERFORMANCE.md, "Reads through image views"). Writing stays a
storage-buffer store, which costs less than ``imageStore`` there.

moderngl has no buffer textures, so the few GL calls are made through ``ctypes`` on the
process's OpenGL dispatch library (glvnd's ``libOpenGL.so.0``, else ``libGL.so.1``), whose
entry points act on the current context. Where neither is found, or the context's limits are
too small for the buffers (``GL_MAX_TEXTURE_BUFFER_SIZE``, ``GL_MAX_COMPUTE_IMAGE_UNIFORMS``),
:func:`views_unavailable` says why and the kernels read the storage buffers themselves.
"""
from __future__ import annotations

import ctypes

GL_TEXTURE_BUFFER = 0x8C2A
GL_READ_ONLY = 0x88B8
GL_MAX_TEXTURE_BUFFER_SIZE = 0x8C2B
GL_MAX_COMPUTE_IMAGE_UNIFORMS = 0x91BD
#: Image formats of a view: name → (GL internal format, bytes a texel).
FORMATS = {"rgba32ui": (0x8D70, 16), "rg32ui": (0x823C, 8), "r32ui": (0x8236, 4)}
_LIBRARIES = ("libOpenGL.so.0", "libGL.so.1")
_FUNCTIONS = ("glGenTextures", "glDeleteTextures", "glIsTexture", "glBindTexture", "glTexBuffer",
              "glBindImageTexture", "glGetIntegerv", "glGetError")
_gl = None
_gl_missing = None


def _library():
    """The OpenGL dispatch library with every function a view needs, or None (the reason in
    ``_gl_missing``)."""
    global _gl, _gl_missing
    if _gl is None and _gl_missing is None:
        tried = []
        for name in _LIBRARIES:
            try:
                lib = ctypes.CDLL(name)
            except OSError:
                tried.append(f"{name} not found")
                continue
            missing = [f for f in _FUNCTIONS if not hasattr(lib, f)]
            if missing:
                tried.append(f"{name} lacks {', '.join(missing)}")
                continue
            _gl = lib
            break
        else:
            _gl_missing = "; ".join(tried)
    return _gl


def _integer(lib, name: int) -> int:
    value = ctypes.c_int(0)
    lib.glGetIntegerv(ctypes.c_uint(name), ctypes.byref(value))
    return int(value.value)


def views_unavailable(largest_texels: int, units: int) -> str | None:
    """Why the current context cannot give views of ``largest_texels`` texels at ``units``
    image units of one compute kernel, or None where it can. Call with the context current."""
    lib = _library()
    if lib is None:
        return f"no OpenGL dispatch library for buffer textures ({_gl_missing})"
    texels, image_units = _integer(lib, GL_MAX_TEXTURE_BUFFER_SIZE), _integer(lib, GL_MAX_COMPUTE_IMAGE_UNIFORMS)
    if texels < largest_texels:
        return f"GL_MAX_TEXTURE_BUFFER_SIZE is {texels} texels, a buffer needs {largest_texels}"
    if image_units < units:
        return f"GL_MAX_COMPUTE_IMAGE_UNIFORMS is {image_units}, the kernels need {units}"
    return None


class BufferViews:
    """The image views of one backend's buffers, made on first use and kept per (buffer,
    format); ``track`` (as :meth:`gpu_jiggle.gl.lifetime.GlOwner.track`) takes this object so
    that its textures are freed with the buffers. Every method runs with the context current.

    Raises: RuntimeError from :meth:`bind` where the GL calls fail (the GL error named)."""

    def __init__(self, track=lambda obj: obj):
        self.textures = {}  # (id(buffer), format) → (texture GL name, buffer: kept, so its id stays its own)
        track(self)

    def bind(self, unit: int, buffer, image_format: str) -> None:
        """Bind a read-only ``image_format`` view of the moderngl ``buffer`` to image ``unit``."""
        lib = _library()
        internal, _ = FORMATS[image_format]
        key = (id(buffer), image_format)
        if key not in self.textures:
            name = ctypes.c_uint(0)
            lib.glGenTextures(1, ctypes.byref(name))
            lib.glBindTexture(GL_TEXTURE_BUFFER, name)
            lib.glTexBuffer(GL_TEXTURE_BUFFER, ctypes.c_uint(internal), ctypes.c_uint(buffer.glo))
            lib.glBindTexture(GL_TEXTURE_BUFFER, 0)
            self.textures[key] = (name.value, buffer)
        texture = self.textures[key][0]
        lib.glBindImageTexture(ctypes.c_uint(unit), ctypes.c_uint(texture), 0, 0, 0, ctypes.c_uint(GL_READ_ONLY),
                               ctypes.c_uint(internal))
        error = lib.glGetError()
        if error:
            raise RuntimeError(f"binding a {image_format} image view of buffer {buffer.glo} to image unit {unit} "
                               f"failed with GL error {error:#x}")

    def release(self) -> None:
        """Delete the views' textures (the buffers stay)."""
        if self.textures and _gl is not None:
            names = (ctypes.c_uint * len(self.textures))(*(name for name, _ in self.textures.values()))
            _gl.glDeleteTextures(len(self.textures), names)
        self.textures.clear()

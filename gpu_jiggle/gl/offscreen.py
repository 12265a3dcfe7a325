"""Offscreen drawing: a framebuffer to draw into and read back, for the renderers of
:mod:`gpu_jiggle.render.draw2d` and :mod:`gpu_jiggle.render.draw3d`, headless (EGL) or in a window.

```python
from gpu_jiggle.gl.offscreen import OffscreenTarget
with OffscreenTarget(ctx, (480, 300), samples=4) as target:
    renderer.render(target.framebuffer, ...)
    pixels = target.pixels()          # (300, 480, 3) uint8 RGB, top row first
    target.blit_to(ctx.screen)        # or show it in a window of the same size
```
"""
from __future__ import annotations

import numbers

import numpy as np

__all__ = ["OffscreenTarget", "is_software", "choose_samples", "check_samples", "DEFAULT_SAMPLES"]

DEFAULT_SAMPLES = 4  # multisampling on a hardware renderer
SOFTWARE_RENDERERS = ("llvmpipe", "softpipe", "swiftshader", "software rasterizer")


def is_software(ctx) -> bool:
    """Whether ``ctx`` renders on the CPU (llvmpipe and the like), from its ``GL_RENDERER``."""
    renderer = str(ctx.info.get("GL_RENDERER", "")).lower()
    return any(name in renderer for name in SOFTWARE_RENDERERS)


def choose_samples(ctx, requested) -> int:
    """MSAA samples: ``requested`` when given (see :func:`check_samples`), else 0 on a
    software renderer, where multisampling costs several times the drawing, and
    :data:`DEFAULT_SAMPLES` elsewhere (OpenGL 3.0 and later take at least 4).

    Raises what :func:`check_samples` raises.
    """
    if requested is None:
        return 0 if is_software(ctx) else DEFAULT_SAMPLES
    return check_samples(ctx, requested)


def check_samples(ctx, samples) -> int:
    """``samples`` as an int when ``ctx`` draws with that many: 0 (or 1) for no multisampling,
    else a power of two up to the context's ``GL_MAX_SAMPLES``.

    Raises:
        ValueError: another count, naming it and the most this renderer takes (it is not
            lowered quietly). TypeError: ``samples`` is not an integer.
    """
    if isinstance(samples, bool) or not isinstance(samples, numbers.Integral):
        raise TypeError(f"samples: expected an integer or None, got {type(samples).__name__}")
    most = int(ctx.max_samples)
    if samples < 0 or samples > most or samples & (samples - 1):
        renderer = str(ctx.info.get("GL_RENDERER", "this renderer")).split(" (")[0]
        raise ValueError(f"samples = {samples!r}: expected 0 (no multisampling) or a power of two up to {most} "
                         f"(the most {renderer} takes)")
    return int(samples)


class OffscreenTarget:
    """A multisampled colour (+ depth) framebuffer to draw into, and a resolved colour copy
    to read back or show.

    Args:
        ctx: a moderngl context. size: (width, height) in pixels.
        samples: MSAA samples: 0 or 1 for none, else a power of two the context takes
            (:func:`check_samples`, whose errors it raises).
        depth: attach a depth buffer (3D drawing needs one; 2D drawing does not).

    :attr:`framebuffer` is what a renderer draws into; :meth:`pixels`
    resolves and reads it back (top row first); :meth:`blit_to` resolves it into another
    framebuffer of the same size, e.g. a window's ``ctx.screen``.
    """

    def __init__(self, ctx, size, samples: int = 4, depth: bool = True):
        width, height = (int(x) for x in size)
        if width < 1 or height < 1:
            raise ValueError(f"size = {tuple(size)}: expected positive (width, height)")
        self.ctx = ctx
        self.size = (width, height)
        usable = check_samples(ctx, samples)
        self.samples = usable if usable > 1 else 0
        self._colour = ctx.renderbuffer(self.size, components=4, samples=self.samples)
        self._depth = ctx.depth_renderbuffer(self.size, samples=self.samples) if depth else None
        self.framebuffer = ctx.framebuffer(color_attachments=[self._colour], depth_attachment=self._depth)
        if self.samples:
            self._resolved_colour = ctx.renderbuffer(self.size, components=4)
            self._resolved = ctx.framebuffer(color_attachments=[self._resolved_colour])
        else:
            self._resolved_colour, self._resolved = None, self.framebuffer

    def resolved(self):
        """The single-sample framebuffer holding what was drawn (resolving MSAA first)."""
        if self.samples:
            self.ctx.copy_framebuffer(self._resolved, self.framebuffer)
        return self._resolved

    def pixels(self) -> np.ndarray:
        """(height, width, 3) uint8 RGB, top row first."""
        data = self.resolved().read(components=3, alignment=1)
        return np.frombuffer(data, np.uint8).reshape(self.size[1], self.size[0], 3)[::-1].copy()

    def blit_to(self, framebuffer) -> None:
        """Copy the resolved picture into ``framebuffer`` (same size), e.g. ``ctx.screen``."""
        self.ctx.copy_framebuffer(framebuffer, self.resolved())

    def release(self) -> None:
        """Free the framebuffers and renderbuffers.

        moderngl re-binds the framebuffer it last bound after making a new one; if that was
        ours and is deleted, the bind fails with GL_INVALID_OPERATION. So when one of ours
        is bound, the default framebuffer (the window's, or name 0 headless) is bound first.
        """
        ours = {fb.glo for fb in (self.framebuffer, self._resolved) if fb is not None}
        if self.ctx.fbo is not None and self.ctx.fbo.glo in ours:
            default = self.ctx.screen if self.ctx.screen is not None else self.ctx.detect_framebuffer(0)
            default.use()
        for obj in (self.framebuffer, self._colour, self._depth, self._resolved if self.samples else None,
                    self._resolved_colour):
            if obj is not None:
                obj.release()
        self.framebuffer = self._colour = self._depth = self._resolved = self._resolved_colour = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

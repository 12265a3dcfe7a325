"""Which OpenGL context is current in this thread, and switching to another and back.

moderngl runs every call on whatever context is current, and ``with ctx:`` leaves no context
current when it ends, so a library that keeps objects on its own context beside a caller's
(a window's) needs to make its context current around its calls and give the caller's back
afterwards. This module reads and sets the current context through the windowing APIs that
hold it: EGL (the headless context, Wayland windows) and GLX (X11 windows), via ctypes.

A :class:`Binding` is one context's native handles, taken while that context is current;
:func:`use` makes it current for a block and restores what was current before.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import weakref
from contextlib import contextmanager
from dataclasses import dataclass


def _library(*names):
    for name in names:
        try:
            return ctypes.CDLL(ctypes.util.find_library(name) or name)
        except OSError:
            continue
    return None


def _functions(library, restypes: dict, argtypes: dict):
    """The named functions of ``library`` with their types, or None when any is missing."""
    if library is None:
        return None
    out = {}
    for name, restype in restypes.items():
        fn = getattr(library, name, None)
        if fn is None:
            return None
        fn.restype, fn.argtypes = restype, argtypes.get(name, [])
        out[name] = fn
    return out


_P, _U = ctypes.c_void_p, ctypes.c_ulong
_EGL_DRAW, _EGL_READ = 0x3059, 0x305A  # eglGetCurrentSurface's readdraw values
_EGL = _functions(_library("EGL", "libEGL.so.1"),
                  {"eglGetCurrentDisplay": _P, "eglGetCurrentSurface": _P, "eglGetCurrentContext": _P,
                   "eglMakeCurrent": ctypes.c_uint},
                  {"eglGetCurrentSurface": [ctypes.c_int], "eglMakeCurrent": [_P, _P, _P, _P]})
_GLX = _functions(_library("GLX", "libGLX.so.0", "GL", "libGL.so.1"),
                  {"glXGetCurrentDisplay": _P, "glXGetCurrentDrawable": _U, "glXGetCurrentReadDrawable": _U,
                   "glXGetCurrentContext": _P, "glXMakeContextCurrent": ctypes.c_int},
                  {"glXMakeContextCurrent": [_P, _U, _U, _P]})


@dataclass(frozen=True)
class Binding:
    """A context's native handles: ``api`` (``"egl"`` or ``"glx"``) and ``(display, draw,
    read, context)``."""

    api: str
    handles: tuple

    @property
    def context(self):
        return self.handles[3]


def current() -> Binding | None:
    """The context current in this thread (EGL first, then GLX), or None."""
    if _EGL is not None and _EGL["eglGetCurrentContext"]():
        return Binding("egl", (_EGL["eglGetCurrentDisplay"](), _EGL["eglGetCurrentSurface"](_EGL_DRAW),
                               _EGL["eglGetCurrentSurface"](_EGL_READ), _EGL["eglGetCurrentContext"]()))
    if _GLX is not None and _GLX["glXGetCurrentContext"]():
        return Binding("glx", (_GLX["glXGetCurrentDisplay"](), _GLX["glXGetCurrentDrawable"](),
                               _GLX["glXGetCurrentReadDrawable"](), _GLX["glXGetCurrentContext"]()))
    return None


def _make_current(binding: Binding) -> bool:
    display, draw, read, context = binding.handles
    if binding.api == "egl":
        return bool(_EGL["eglMakeCurrent"](display, draw, read, context))
    return bool(_GLX["glXMakeContextCurrent"](display, draw or 0, read or 0, context))


@contextmanager
def use(binding: Binding | None):
    """Run the block with ``binding`` current, then make current again what was before
    (nothing to do when it already is current, or when ``binding`` is None: unknown)."""
    if binding is None:
        yield
        return
    before = current()
    if before is not None and before.api == binding.api and before.context == binding.context:
        yield
        return
    if not _make_current(binding):
        raise RuntimeError(f"could not make gpu_jiggle's OpenGL context current ({binding.api}): was it released?")
    try:
        yield
    finally:
        # Give the caller's context back. With nothing current before, or a context that cannot
        # be current any more (released while current), ours stays current.
        if before is not None:
            _make_current(before)


# moderngl context -> its Binding, recorded while it was current.
_BINDINGS = weakref.WeakKeyDictionary()


def remember(ctx) -> Binding | None:
    """Record ``ctx``'s handles now, while it is current (right after it is made)."""
    binding = current()
    if binding is not None:
        _BINDINGS[ctx] = binding
    return binding


def binding_of(ctx) -> Binding | None:
    """``ctx``'s handles: recorded by :func:`remember`, else those of the context current now
    (a caller's context must be current when it is handed to gpu_jiggle)."""
    return _BINDINGS.get(ctx) or remember(ctx)

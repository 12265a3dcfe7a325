"""Who may touch a set of OpenGL objects, and when they are freed.

An OpenGL context is current in one thread at a time, and objects of two contexts share
their numbers (each context names its buffers from 1), so a GL call made while another
context is current silently works on that context's objects. :class:`GlOwner` therefore:

- makes its context current around every use (``with owner.current():``), restoring the
  one that was current before, so objects on a caller's context and on the shared headless
  one can be used in any order;
- refuses, with a RuntimeError naming both threads, a use from another thread than the one
  that made the objects (where the context lives);
- frees its objects once: on :meth:`GlOwner.release` (again is a no-op) or when its owner
  is garbage-collected (a finalizer). A finalizer that runs on another thread cannot make
  the context current there, so it leaves the objects to be freed by the next use of that
  context from its own thread.
"""
from __future__ import annotations

import threading
import weakref
from contextlib import contextmanager

from . import current as current_context

# id(context) -> GL objects whose owner was collected on a thread where the context is not current.
_ORPHANS: dict = {}
_ORPHANS_LOCK = threading.Lock()


class GlOwner:
    """The GL objects of one solver (or lag follower) on one context.

    Args:
        ctx: the moderngl context the objects belong to.
        what: how refusals name the owner (e.g. ``"this PointSolver"``).
    """

    def __init__(self, ctx, what: str):
        self.ctx = ctx
        self.binding = current_context.binding_of(ctx)
        self.what = what
        self.thread = threading.get_ident()
        self.thread_name = threading.current_thread().name
        self.objects = []
        self._released = [False]  # shared with the finalizer

    def track(self, obj):
        """Own ``obj`` (a moderngl buffer, program, ...): it is freed with the others. Returns it."""
        self.objects.append(obj)
        return obj

    def attach_finalizer(self, owner) -> None:
        """Free the objects when ``owner`` (the object holding this GlOwner) is collected."""
        weakref.finalize(owner, _finalize, id(self.ctx), self.binding, self.objects, self.thread, self._released)

    @contextmanager
    def current(self):
        """The context made current for the duration (the previous one restored after).

        Raises: RuntimeError from another thread than the one that made the objects, or
        after :meth:`release`."""
        if self._released[0]:
            raise RuntimeError(f"{self.what} was released")
        if threading.get_ident() != self.thread:
            raise RuntimeError(
                f"{self.what} runs on an OpenGL context that is current in thread {self.thread_name!r}, where it "
                f"was made; it was called from thread {threading.current_thread().name!r}. Call it from its own "
                f"thread, or make one solver per thread (backend='cpu' needs no context)")
        with current_context.use(self.binding):
            _free_orphans(id(self.ctx))
            yield self.ctx

    def release(self) -> None:
        """Free the objects now (from the owning thread); a second call does nothing."""
        if self._released[0]:
            return
        with self.current():
            for obj in self.objects:
                obj.release()
        self._released[0] = True
        self.objects.clear()

    @property
    def released(self) -> bool:
        return self._released[0]


def _finalize(ctx_id, binding, objects, thread, released) -> None:
    if released[0]:
        return
    released[0] = True
    if threading.get_ident() == thread:
        with current_context.use(binding):
            for obj in objects:
                obj.release()
        return
    with _ORPHANS_LOCK:
        _ORPHANS.setdefault(ctx_id, []).extend(objects)


def _free_orphans(ctx_id) -> None:
    """Free what collected owners left on a context (called with it current)."""
    if ctx_id not in _ORPHANS:
        return
    with _ORPHANS_LOCK:
        objects = _ORPHANS.pop(ctx_id, [])
    for obj in objects:
        obj.release()

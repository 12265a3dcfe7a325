"""Backends: the numpy reference (:mod:`.reference`, each module the twin of a kernel) and the
GLSL compute path (:mod:`.gpu`, :mod:`.gpu_angle`, :mod:`.gpu_point`), both implementing the
:class:`~.interface.Backend` protocol (:mod:`.interface`). :func:`make_backend` picks the class
for a chain kind and a backend name.
"""
from __future__ import annotations

import logging

from .interface import Backend, LoopLimitError, PointBackend  # noqa: F401  (the interface, handed on)

log = logging.getLogger("gpu_jiggle")

#: Backend names a solver accepts.
BACKEND_NAMES = ("auto", "gpu", "cpu")


def _classes(kind: str):
    """(reference class, GPU class) for chain kind ``"angle"`` or ``"point"``."""
    if kind == "angle":
        from .gpu_angle import GpuAngleBackend
        from .reference.angle_chains import ReferenceAngleBackend
        return ReferenceAngleBackend, GpuAngleBackend
    from .gpu_point import GpuPointBackend
    from .reference.point_chains import ReferencePointBackend
    return ReferencePointBackend, GpuPointBackend


def gpu_context(backend: str, context=None, what: str = "the numpy reference backend"):
    """The OpenGL 4.3 context a GPU backend runs on, or None to run the reference.

    ``backend``: ``"cpu"`` (None), ``"gpu"`` (``context`` if given, else the shared headless
    one) or ``"auto"`` (the same, but None with a logged warning when no context can be made).

    Raises:
        ValueError: an unknown backend name. RuntimeError: ``"gpu"`` without an OpenGL 4.3
        context (the message says how to get one), or a given context older than 4.3.
    """
    from ...gl.context import check_context, get_context

    if backend not in BACKEND_NAMES:
        raise ValueError(f"backend = {backend!r}: expected one of {', '.join(map(repr, BACKEND_NAMES))}")
    if backend == "cpu":
        return None
    if context is not None:
        return check_context(context)
    try:
        return get_context()
    except RuntimeError as exc:
        if backend == "gpu":
            raise
        log.warning("no OpenGL 4.3 context, running %s: %s", what, exc)
        return None


def make_backend(kind: str, chain_set, backend: str, context=None, work_group_size: int | None = None):
    """The reference (``"cpu"``) or compute (``"gpu"``) backend for ``chain_set`` of ``kind``
    (``"angle"`` or ``"point"``), on the context :func:`gpu_context` gives; a compute backend
    runs ``work_group_size`` chains per work group (None: ``gl.dispatch.LOCAL_SIZE``).

    ``"auto"`` also runs the reference, with a logged warning, for a chain set whose longest
    chain llvmpipe cannot run (:class:`LoopLimitError`).

    Raises: what :func:`gpu_context` raises; LoopLimitError (a ValueError) for such a chain
    set with ``"gpu"``; ValueError for a work group larger than the context runs.
    """
    ctx = gpu_context(backend, context)
    reference, gpu = _classes(kind)
    if ctx is None:
        return reference(chain_set)
    try:
        return gpu(chain_set, ctx, work_group_size)
    except LoopLimitError as exc:  # a chain longer than llvmpipe's loop limit allows
        if backend == "gpu":
            raise
        log.warning("running the numpy reference backend: %s", exc)
        return reference(chain_set)

"""Dispatch sizes for the compute kernels: one helper, used by every dispatch.

Kernels run ``LOCAL_SIZE`` invocations per work group over a 2D grid of groups, x first,
then rows of y (``invocation_index()`` in ``shaders/sim/dispatch.glsl``), so that more than
``MAX_GROUPS_X`` groups' worth of invocations fit one dispatch. Every kernel bounds-checks
its invocation index first, so the grid may be larger than the count.
"""
from __future__ import annotations

#: Invocations per work group (the kernels' ``LOCAL_SIZE`` define).
LOCAL_SIZE = 64
#: The most work groups along x that OpenGL 4.3 guarantees (GL_MAX_COMPUTE_WORK_GROUP_COUNT).
MAX_GROUPS_X = 65535


def dispatch_size(count: int, local_size: int = LOCAL_SIZE) -> tuple[int, int]:
    """Work groups ``(x, y)`` for ``count`` invocations: rows of at most ``MAX_GROUPS_X``
    groups, at least one group."""
    groups = max(1, -(-count // local_size))
    rows = -(-groups // MAX_GROUPS_X)
    return -(-groups // rows), rows

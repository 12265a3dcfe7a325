"""Dispatch sizes for the compute kernels: one helper, used by every dispatch.

Kernels run ``LOCAL_SIZE`` invocations per work group over a 2D grid of groups, x first,
then rows of y (``invocation_index()`` in ``shaders/sim/dispatch.glsl``), so that more than
``MAX_GROUPS_X`` groups' worth of invocations fit one dispatch. Every kernel bounds-checks
its invocation index first, so the grid may be larger than the count.
"""
from __future__ import annotations

#: Invocations per work group (the kernels' ``LOCAL_SIZE`` define) unless a solver is given its
#: own ``work_group_size``. ``gpu-jiggle bench --work-group-sizes`` measures the choice: on
#: llvmpipe 64 is as fast as any (docs/PERFORMANCE.md, "Benchmarks").
LOCAL_SIZE = 64
#: The most work groups along x that OpenGL 4.3 guarantees (GL_MAX_COMPUTE_WORK_GROUP_COUNT).
MAX_GROUPS_X = 65535


def dispatch_size(count: int, local_size: int = LOCAL_SIZE) -> tuple[int, int]:
    """Work groups ``(x, y)`` for ``count`` invocations: rows of at most ``MAX_GROUPS_X``
    groups, at least one group."""
    groups = max(1, -(-count // local_size))
    rows = -(-groups // MAX_GROUPS_X)
    return -(-groups // rows), rows


def check_work_group_size(ctx, work_group_size: int) -> int:
    """``work_group_size`` when ``ctx`` can run work groups of that many invocations along x
    (GL_MAX_COMPUTE_WORK_GROUP_SIZE[0] and GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS; OpenGL 4.3
    guarantees 1024).

    Raises: ValueError naming the argument, its value and the context's limit."""
    sizes = ctx.info.get("GL_MAX_COMPUTE_WORK_GROUP_SIZE") or (1024,)
    invocations = ctx.info.get("GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS") or 1024
    limit = min(int(sizes[0]), int(invocations))
    if work_group_size > limit:
        raise ValueError(f"work_group_size = {work_group_size}: this OpenGL context runs at most {limit} invocations "
                         f"per work group along x (GL_MAX_COMPUTE_WORK_GROUP_SIZE, "
                         f"GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS)")
    return work_group_size

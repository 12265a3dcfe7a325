"""Backends: the numpy reference and the GLSL compute path, with one interface.

A backend holds the rig, the state, the targets and the outputs of one chain kind as the
std430 records of :mod:`gpu_jiggle.sim.layouts` and offers:

- ``upload_rig(chain_rig, segment_rig, exact_step)``: the static rig and the exact
  integrator's steps (again only when they change);
- ``upload_targets(chain_target, ...)``: this frame's pose, teleport flags and levels of
  detail (angle chains: ``(chain_target, local_angle)``, the (S,) local target angles; point
  chains: ``(chain_target, chain_control, joint_offset, joint_rotation)``, the teleport flags
  and levels of detail apart, the (S, 3) joint offsets and (S, 4) rotations or None when
  unchanged), and for point chains ``upload_colliders`` (and
  ``check_colliders(sphere_count, capsule_count, plane_count)``, which refuses what the
  backend cannot run before anything changes);
- ``prepare(header, ...)``: compile (GPU) the kernel variants that frames with this frame
  buffer's header run, before ``run_frame`` needs them (point chains: also
  ``inside_colliders``); nothing on the numpy path;
- ``run_frame(params)``: teleports, then every substep of the frame, then the frame-time
  outputs, from a frame buffer (:func:`gpu_jiggle.sim.packing.frame_buffer`);
- ``read(name)``: one of ``chain_state, segment_state, joint_output, segment_output`` as a
  numpy record array (a copy); ``read_field(name, field)``: one field of it (the numpy
  backends put only that field in the solver's order);
- ``write_state(chain_state, segment_state)``, ``write_outputs(joint_output, segment_output)``:
  replace the dynamic state and the outputs (to rebase and to restore a saved state);
- ``release()``: frees what it holds (GPU buffers and programs).

:func:`make_backend` picks the class for a chain kind and a backend name.
"""
from __future__ import annotations

import logging

log = logging.getLogger("gpu_jiggle")

class LoopLimitError(ValueError):
    """A chain too long (with the frame's colliders) for one substep in one dispatch under
    Mesa's llvmpipe, whose loop limiter stops a shader's loops after 65535 iterations."""


#: Backend names a solver accepts.
BACKEND_NAMES = ("auto", "gpu", "cpu")


def _classes(kind: str):
    """(reference class, GPU class) for chain kind ``"angle"`` or ``"point"``."""
    if kind == "angle":
        from .gpu_angle import GpuAngleBackend
        from .reference_angle import ReferenceAngleBackend
        return ReferenceAngleBackend, GpuAngleBackend
    from .gpu_point import GpuPointBackend
    from .reference_point import ReferencePointBackend
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

"""The OpenGL 4.3 context that the compute path runs on.

One headless context per process, made on first use through EGL
(``moderngl.create_standalone_context(require=430, backend="egl")``); on a machine without a
GPU that is Mesa's llvmpipe. A caller with its own context (a glfw window) passes it to the
:class:`~gpu_jiggle.Solver` instead.
"""
from __future__ import annotations

import moderngl

from . import current

REQUIRED_VERSION = 430

HOW_TO_GET_ONE = (
    "gpu_jiggle's GPU backend needs an OpenGL 4.3 context through EGL. On a machine without a "
    "GPU, Mesa's llvmpipe provides one: install the Mesa EGL and DRI packages (Debian/Ubuntu: "
    "apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri). Or pass backend=\"cpu\" to run the "
    "numpy reference instead."
)

#: Where the NVIDIA driver lists a machine's GPUs (Linux), one entry per GPU.
NVIDIA_GPU_FOLDER = "/proc/driver/nvidia/gpus"
#: The variable moderngl's context library reads to pick the EGL device of a new context.
DEVICE_VARIABLE = "GLCONTEXT_DEVICE_INDEX"

_context = None
_failure = None


def nvidia_gpu_count(folder: str = NVIDIA_GPU_FOLDER) -> int:
    """The NVIDIA GPUs the driver lists on this machine (entries of ``folder``); 0 without
    the driver (no GPU, another vendor, not Linux)."""
    import os

    try:
        return len(os.listdir(folder))
    except OSError:
        return 0


def choose_device(index: int) -> bool:
    """Make this process's headless context, when it is made, on EGL device ``index`` (sets
    :data:`DEVICE_VARIABLE`); False, changing nothing, when the variable is already set (the
    user's choice stands) or the context exists already."""
    import os

    if DEVICE_VARIABLE in os.environ or _context is not None:
        return False
    os.environ[DEVICE_VARIABLE] = str(int(index))
    return True


def get_context() -> "moderngl.Context":
    """The shared headless context, made on the first call.

    Raises:
        RuntimeError: no OpenGL 4.3 context could be made; the message says how to get one
            and that ``backend="cpu"`` exists (SPEC section 7).
    """
    global _context, _failure
    if _context is None:
        if _failure is not None:
            raise RuntimeError(f"{HOW_TO_GET_ONE} (EGL said: {_failure})")
        try:
            _context = moderngl.create_standalone_context(require=REQUIRED_VERSION, backend="egl")
            current.remember(_context)  # it is current now: keep its handles to switch back to it
        except Exception as exc:  # glcontext raises plain Exception subclasses of several kinds
            _failure = str(exc) or type(exc).__name__
            raise RuntimeError(f"{HOW_TO_GET_ONE} (EGL said: {_failure})") from None
    return _context


def check_context(ctx) -> "moderngl.Context":
    """Raise RuntimeError when a caller's context is older than OpenGL 4.3."""
    if ctx.version_code < REQUIRED_VERSION:
        raise RuntimeError(f"the given OpenGL context is version {ctx.version_code}; {HOW_TO_GET_ONE}")
    return ctx


def describe(ctx) -> dict:
    """Renderer, version and compute limits of ``ctx``, for ``gpu-jiggle info``."""
    info = ctx.info
    keys = ["GL_VENDOR", "GL_RENDERER", "GL_VERSION", "GL_MAX_COMPUTE_WORK_GROUP_COUNT",
            "GL_MAX_COMPUTE_WORK_GROUP_SIZE", "GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS",
            "GL_MAX_SHADER_STORAGE_BLOCK_SIZE", "GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS"]
    return {k: info.get(k) for k in keys if k in info}

"""``gpu-jiggle info``: the OpenGL context the GPU backend would run on (renderer, vendor,
version, compute limits) and the backend ``"auto"`` picks. Exit status 0, with or without a
context.
"""
from __future__ import annotations

from .. import __version__
from ..gl import context as gl

#: The compute limits printed, by GL name: what each one is.
COMPUTE_LIMITS = {"GL_MAX_COMPUTE_WORK_GROUP_COUNT": "work group count (x, y, z)",
                  "GL_MAX_COMPUTE_WORK_GROUP_SIZE": "work group size (x, y, z)",
                  "GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS": "invocations per work group",
                  "GL_MAX_SHADER_STORAGE_BLOCK_SIZE": "storage block size (bytes)",
                  "GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS": "storage blocks per compute shader"}


def context_or_reason():
    """``(context, None)``, or ``(None, why no OpenGL 4.3 context could be made)``."""
    try:
        return gl.get_context(), None
    except RuntimeError as exc:
        return None, str(exc)


def cmd_info(args) -> int:
    """Print the context's description (or why there is none) and the backend ``"auto"``
    picks; returns 0."""
    ctx, reason = context_or_reason()
    print(f"gpu_jiggle {__version__}")
    if ctx is None:
        print("OpenGL 4.3 context: none could be made")
        print(f"  {reason}")
        print('backend "auto" would run: cpu (the numpy reference)')
        return 0
    info = gl.describe(ctx)
    print("OpenGL 4.3 context: yes (headless, EGL)")
    print(f"  renderer: {info.get('GL_RENDERER')}")
    print(f"  vendor:   {info.get('GL_VENDOR')}")
    print(f"  version:  {info.get('GL_VERSION')}")
    print("  compute limits:")
    for key, label in COMPUTE_LIMITS.items():
        if key in info:
            print(f"    {label}: {info[key]}")
    print('backend "auto" would run: gpu (GLSL compute shaders)')
    return 0


def add_command(sub) -> None:
    """Register ``info`` on an argparse subparsers object (see :mod:`gpu_jiggle.app.cli`)."""
    p = sub.add_parser("info", help="renderer, GL version, compute limits and the backend 'auto' picks",
                       description="Describe the OpenGL context the GPU backend would run on.")
    p.set_defaults(run=cmd_info)

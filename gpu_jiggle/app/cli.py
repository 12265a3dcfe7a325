"""The ``gpu-jiggle`` command: ``verify`` runs the SPEC section 8 checks, ``info`` describes the
OpenGL context the GPU backend would run on, ``bake`` writes spring motion into a glTF copy
(:mod:`gpu_jiggle.character.bake`), ``render`` draws a character with its springs to a video headless
(:mod:`gpu_jiggle.app.render`), ``play`` shows it in a window (:mod:`gpu_jiggle.app.play`).

Exit status: 0 when everything passed (``info``: always, with or without a context), 1 when a
check failed, 2 when the command could not run (e.g. ``--backend gpu`` without OpenGL 4.3).
"""
from __future__ import annotations

import argparse
import logging
import sys
import time

from .. import __version__
from ..character import bake
from . import play, render
from ..gl import context as gl

DEFAULT_OUT = "out/verify"


def _context_or_reason():
    """(context, None) or (None, why no OpenGL 4.3 context could be made)."""
    try:
        return gl.get_context(), None
    except RuntimeError as exc:
        return None, str(exc)


def cmd_info(args) -> int:
    ctx, reason = _context_or_reason()
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
    names = {"GL_MAX_COMPUTE_WORK_GROUP_COUNT": "work group count (x, y, z)",
             "GL_MAX_COMPUTE_WORK_GROUP_SIZE": "work group size (x, y, z)",
             "GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS": "invocations per work group",
             "GL_MAX_SHADER_STORAGE_BLOCK_SIZE": "storage block size (bytes)",
             "GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS": "storage blocks per compute shader"}
    for key, label in names.items():
        if key in info:
            print(f"    {label}: {info[key]}")
    print('backend "auto" would run: gpu (GLSL compute shaders)')
    return 0


def cmd_verify(args) -> int:
    from ..verify import checks as verify

    backend = args.backend
    if backend in ("auto", "gpu"):
        ctx, reason = _context_or_reason()
        if ctx is None:
            if backend == "gpu":
                print(f"gpu-jiggle verify: --backend gpu needs an OpenGL 4.3 context. {reason}", file=sys.stderr)
                return 2
            backend = "cpu"
            print(f"no OpenGL 4.3 context, running the numpy reference: {reason}", file=sys.stderr)
        else:
            backend = "gpu"
    if backend == "gpu":
        print(f"backend: gpu ({gl.describe(gl.get_context()).get('GL_RENDERER')})")
    else:
        print("backend: cpu (numpy reference)")
    start = time.perf_counter()
    results = verify.run_all(backend)
    print(verify.format_table(results))
    paths = verify.write_plots(results, args.out)
    print(f"\nplots ({len(paths)}) in {args.out}: {', '.join(p.name for p in paths)}")
    failed = [r.title for r in results if r.passed is False]
    skipped = [r.title for r in results if r.passed is None]
    summary = f"FAILED: {', '.join(failed)}" if failed else "all passed"
    if skipped:
        summary += f"; skipped: {', '.join(skipped)}"
    print(f"{len(results)} checks in {time.perf_counter() - start:.1f} s: {summary}")
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpu-jiggle", description="Damped-spring secondary motion on the GPU.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("verify", help="run the SPEC section 8 property checks, print a table, write plots",
                       description="Run the SPEC section 8 property checks on angle chains and on point chains "
                                   "(rows 'point ...', with gravity and wind on and off); prints a table and "
                                   "writes PNG plots. Exits 1 when a check fails.")
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto",
                   help="gpu: GLSL compute shaders; cpu: numpy reference; auto (default): gpu when an "
                        "OpenGL 4.3 context can be made")
    p.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                   help=f"folder for the plots (default {DEFAULT_OUT})")
    p.set_defaults(run=cmd_verify)
    p = sub.add_parser("info", help="renderer, GL version, compute limits and the backend 'auto' picks",
                       description="Describe the OpenGL context the GPU backend would run on.")
    p.set_defaults(run=cmd_info)
    bake.add_command(sub)
    render.add_command(sub)
    play.add_command(sub)
    return parser


def main(argv=None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    return args.run(args)

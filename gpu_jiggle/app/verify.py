"""``gpu-jiggle verify``: run the SPEC section 8 checks (:mod:`gpu_jiggle.verify`), print their
table and write their plots.

Exit status: 0 when every check passed (or was skipped), 1 when one failed, 2 when
``--backend gpu`` was asked for without an OpenGL 4.3 context.
"""
from __future__ import annotations

import sys
import time

from ..gl import context as gl
from .info import context_or_reason

#: Where the plots go unless ``--out`` says otherwise.
DEFAULT_OUT = "out/verify"


def cmd_verify(args) -> int:
    """Run every check on ``args.backend`` (``"auto"``: gpu when a context can be made),
    print the table and a summary, write the plots into ``args.out``."""
    from ..verify import format_table, run_all, write_plots

    backend = args.backend
    if backend in ("auto", "gpu"):
        ctx, reason = context_or_reason()
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
    results = run_all(backend, checks_named(args.checks))
    print(format_table(results))
    paths = write_plots(results, args.out)
    print(f"\nplots ({len(paths)}) in {args.out}: {', '.join(p.name for p in paths)}")
    failed = [r.title for r in results if r.passed is False]
    skipped = [r.title for r in results if r.passed is None]
    summary = f"FAILED: {', '.join(failed)}" if failed else "all passed"
    if skipped:
        summary += f"; skipped: {', '.join(skipped)}"
    print(f"{len(results)} checks in {time.perf_counter() - start:.1f} s: {summary}")
    return 1 if failed else 0


def add_command(sub) -> None:
    """Register ``verify`` on an argparse subparsers object (see :mod:`gpu_jiggle.app.cli`)."""
    p = sub.add_parser("verify", help="run the docs/SPEC.md section 8 property checks, print a table, write plots",
                       description="Run the docs/SPEC.md section 8 property checks on angle chains and on point chains "
                                   "(rows 'point ...', with gravity and wind on and off); prints a table and "
                                   "writes PNG plots. Exits 1 when a check fails.")
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto",
                   help="gpu: GLSL compute shaders; cpu: numpy reference; auto (default): gpu when an "
                        "OpenGL 4.3 context can be made")
    p.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                   help=f"folder for the plots (default {DEFAULT_OUT})")
    p.add_argument("--checks", nargs="+", choices=check_names(), default=None, metavar="NAME",
                   help="run these checks alone, in the table's order (default: all): "
                        + ", ".join(check_names()))
    p.set_defaults(run=cmd_verify)


def check_names() -> list[str]:
    """The names ``--checks`` takes: each check's function name, in the table's order."""
    from ..verify.runner import CHECKS

    return [check.__name__ for check in CHECKS]


def checks_named(names) -> tuple | None:
    """The checks of ``names`` in the table's order (None: every check)."""
    from ..verify.runner import CHECKS

    return None if names is None else tuple(check for check in CHECKS if check.__name__ in names)

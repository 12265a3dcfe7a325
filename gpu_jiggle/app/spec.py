"""``gpu-jiggle spec [SECTION] [--path]``: print the model specification the package ships
(``docs/SPEC.md``, which error messages cite as ``docs/SPEC.md section N``), whole or one
section, or where the file is (:mod:`gpu_jiggle.spec`).

Exit status 0; 2 with one line on stderr for a section the SPEC does not have (the line lists
its sections) or a package installed without the file.
"""
from __future__ import annotations

import sys

from .. import spec


def run_command(args) -> int:
    """Print the SPEC, one section of it, or its path; 0, or 2 with ``gpu-jiggle spec: ...``."""
    try:
        if args.path:
            if args.section is not None:
                print("gpu-jiggle spec: --path takes no SECTION", file=sys.stderr)
                return 2
            print(spec.spec_path())
        elif args.section is None:
            sys.stdout.write(spec.spec_text())
        else:
            sys.stdout.write(spec.find_section(args.section).text)
    except KeyError as exc:
        print(f"gpu-jiggle spec: {exc.args[0]}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"gpu-jiggle spec: {exc}", file=sys.stderr)
        return 2
    return 0


def add_command(sub) -> None:
    """Register ``spec`` on an argparse subparsers object (see :mod:`gpu_jiggle.app.cli`)."""
    p = sub.add_parser("spec", help="print the model specification (docs/SPEC.md), whole or one section",
                       description="Print the model specification that error messages cite as "
                                   "'docs/SPEC.md section N': the whole file, or the section whose heading "
                                   "number is SECTION (with its subsections: 4 includes 4.1 and 4.2).")
    p.add_argument("section", nargs="?", metavar="SECTION",
                   help="a heading number, e.g. 1 or 4.2, or the start of a heading's title (e.g. \"what changed\")")
    p.add_argument("--path", action="store_true", help="print where the shipped SPEC.md is instead")
    p.set_defaults(run=run_command)

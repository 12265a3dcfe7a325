"""``gpu-jiggle describe``: what one damped spring of frequency f and damping ratio ζ does
(period, overshoot, 2 % settling time, half-life) and how the solver's semi-implicit substep
changes it (stability, frequency and decay errors), as a table
(:func:`gpu_jiggle.sim.response.describe`). Exit status 0, or 2 with one line for a bad value.
"""
from __future__ import annotations

import inspect
import sys

from ..sim.response import describe
from ..sim.solver import Solver
from ..sim.validation import InputError
from .shared import one_line

#: The substep the table uses unless told otherwise: the solver's own default (1/120 s).
DEFAULT_SUBSTEP = inspect.signature(Solver.__init__).parameters["substep"].default
#: describe()'s argument -> the option that sets it, for the error message.
OPTIONS = {"frequency": "--frequency", "damping_ratio": "--damping-ratio", "substep": "--substep"}


def run_command(args) -> int:
    """Print the table; 0, or 2 with ``gpu-jiggle describe: --option value: expected ...``."""
    substep = None if args.no_substep else args.substep
    try:
        response = describe(args.frequency, args.damping_ratio, substep)
    except InputError as exc:
        print(f"gpu-jiggle describe: {OPTIONS.get(exc.argument, exc.argument)} {exc.value!r}: expected "
              f"{exc.expected}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"gpu-jiggle describe: {one_line(exc)}", file=sys.stderr)
        return 2
    print(response)
    return 0


def add_command(sub) -> None:
    """Register ``describe`` on an argparse subparsers object (see :mod:`gpu_jiggle.app.cli`)."""
    p = sub.add_parser("describe", help="period, overshoot, settling time and substep errors of one spring",
                       description="Describe one damped spring (docs/SPEC.md section 1): its undamped and damped "
                                   "period, overshoot, 2 % settling time and envelope half-life, and for the "
                                   "semi-implicit substep whether it is stable, the largest stable frequency and "
                                   "the step's frequency and decay errors against the continuous spring.")
    p.add_argument("-f", "--frequency", type=float, required=True, metavar="HZ", help="frequency f in Hz, > 0")
    p.add_argument("-z", "--damping-ratio", type=float, required=True, metavar="ZETA",
                   help="damping ratio ζ, >= 0 (1 is critical damping)")
    step = p.add_mutually_exclusive_group()
    step.add_argument("--substep", type=float, default=DEFAULT_SUBSTEP, metavar="SECONDS",
                      help=f"the solver's fixed substep h in seconds, > 0 (default: the solver's, 1/120 = "
                           f"{DEFAULT_SUBSTEP:.6g})")
    step.add_argument("--no-substep", action="store_true",
                      help="describe the continuous spring only, without the substep's rows")
    p.set_defaults(run=run_command)

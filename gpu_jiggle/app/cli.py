"""The ``gpu-jiggle`` command line: the parser and the dispatch to one module per command.

Commands: ``verify`` runs the SPEC section 8 checks (:mod:`gpu_jiggle.app.verify`), ``info``
describes the OpenGL context the GPU backend would run on (:mod:`gpu_jiggle.app.info`),
``bake`` writes spring motion into a glTF copy (:mod:`gpu_jiggle.app.bake`), ``bake-many``
bakes a manifest's characters × clips on a Dask cluster (:mod:`gpu_jiggle.app.bake_many`),
``render`` draws a character with its springs to a video headless
(:mod:`gpu_jiggle.app.render`), ``play`` shows
it in a window (:mod:`gpu_jiggle.app.play`), ``bench`` measures the solver's speed on both paths
(:mod:`gpu_jiggle.app.bench`), ``rig`` writes a VRM avatar's spring bones as a TOML rig
(:mod:`gpu_jiggle.app.rig`), ``spec`` prints the model specification the error messages cite
(:mod:`gpu_jiggle.app.spec`). Each module offers ``add_command(subparsers)``,
which registers the command and its ``run(args) -> exit status``.

Exit status: 0 when everything passed (``info``: always, with or without a context), 1 when a
check failed, 2 when the command could not run (e.g. ``--backend gpu`` without OpenGL 4.3, bad
input, or an unexpected error such as running out of memory: one line on stderr,
``gpu-jiggle COMMAND: what happened``; ``gpu-jiggle --debug COMMAND ...`` prints the full
traceback instead).
"""
from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import traceback

from .. import __version__, extras
from . import bake, bake_many, bench, describe, info, play, render, rig, spec, verify

#: The exit status of a command that could not run.
EXIT_COULD_NOT_RUN = 2
#: A command whose output's reader closed the pipe: 128 + SIGPIPE, as the shell reports a
#: program the signal ended.
EXIT_BROKEN_PIPE = 128 + 13
#: The modules that register a command, in the order ``--help`` lists them.
COMMANDS = (verify, info, describe, bake, bake_many, render, play, bench, rig, spec)


class ExactOptionParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that takes options only as spelled in full: ``--prerol 0`` is a
    usage error naming ``--prerol``, not ``--preroll`` guessed (a guess that a later option
    such as ``--preroll-frames`` would silently change the meaning of)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self._given = []

    def parse_known_args(self, args=None, namespace=None):
        self._given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message):
        """argparse's usage error; where required arguments are missing, it also names the
        options given that this command does not have (``--freq`` for ``--frequency``, which
        argparse alone reports only as the required ``-f/--frequency`` missing)."""
        if message.startswith("the following arguments are required"):
            unknown = unknown_options(self, self._given)
            if unknown:
                message += f"; unrecognized arguments: {' '.join(unknown)}{closest_options(self, unknown)}"
        super().error(message)


def unknown_options(parser: argparse.ArgumentParser, given) -> list:
    """The options (``--name`` or ``--name=value``) in ``given`` that ``parser`` does not have."""
    known = {o for action in parser._actions for o in action.option_strings}
    return [g for g in given if g.startswith("--") and g != "--" and g.split("=")[0] not in known]


def closest_options(parser: argparse.ArgumentParser, unknown) -> str:
    """`` (did you mean --x?; ...)`` for the options of ``parser`` closest to ``unknown``, or ''."""
    from ..sim.validation import closest_name
    options = [o for action in parser._actions for o in action.option_strings]

    def closest(given):
        # An abbreviation (options are taken only whole) names the options it begins; else the
        # nearest name by spelling.
        begun = [o for o in options if o.startswith(given)] if given.startswith("--") and len(given) > 2 else []
        return " or ".join(begun) if begun else closest_name(given, options)
    hints = [f"did you mean {close}?" for u in unknown if u.startswith("-")
             for close in [closest(u.split("=")[0])] if close]
    return f" ({'; '.join(hints)})" if hints else ""


def build_parser() -> argparse.ArgumentParser:
    """The ``gpu-jiggle`` parser with every command of ``COMMANDS`` registered; no command
    takes an abbreviated option (:class:`ExactOptionParser`)."""
    parser = ExactOptionParser(prog="gpu-jiggle", description="Damped-spring secondary motion on the GPU.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    # Its own dest: a command's options (render's --debug draws targets) must not overwrite it.
    parser.add_argument("--debug", dest="show_traceback", action="store_true",
                        help="on an unexpected error, print the full traceback instead of one line "
                             "(give it before the command)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=ExactOptionParser)
    for command in COMMANDS:
        command.add_command(sub)
    return parser


def describe_error(exc: BaseException) -> str:
    """One line saying what ``exc`` was: its type and its message, whitespace collapsed
    (``"MemoryError"`` alone when it has no message)."""
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def main(argv=None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), run the command, return its exit status.

    An exception that escapes the command (it reports the errors it expects itself) becomes
    ``gpu-jiggle COMMAND: <what happened>`` on stderr, or the full traceback with ``--debug``,
    and exit status 2. A usage error exits 2 through argparse. SIGTERM ends the command as
    Ctrl-C does, unwinding it (exit status 143), so that what it was writing is not left behind.
    """
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    args = parse(build_parser(), argv)
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        return _run(args)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def parse(parser: argparse.ArgumentParser, argv) -> argparse.Namespace:
    """``parser.parse_args(argv)``, but an unknown option is answered by the command's own
    usage with the closest option it has (``--animaton``: did you mean ``--animation``?)."""
    args, unknown = parser.parse_known_args(argv)
    if not unknown:
        return args
    commands = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})
    target = commands.get(getattr(args, "command", None), parser)
    target.error(f"unrecognized arguments: {' '.join(unknown)}{closest_options(target, unknown)}")


def _terminated(signum, frame):
    """SIGTERM (``kill``, a CI timeout) as SystemExit(128 + signum): the command unwinds, so a
    file being written is removed instead of left half-written."""
    raise SystemExit(128 + signum)


def _run(args) -> int:
    try:
        return args.run(args)
    except BrokenPipeError:  # the reader of our output left (gpu-jiggle info | head): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that the flush at exit does not fail again
        return EXIT_BROKEN_PIPE
    except extras.MissingExtra as exc:
        print(f"gpu-jiggle {args.command}: {exc}", file=sys.stderr)
        return EXIT_COULD_NOT_RUN
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] not in extras.OPTIONAL:
            raise
        print(f"gpu-jiggle {args.command}: {extras.missing(exc.name, f'gpu-jiggle {args.command}')}", file=sys.stderr)
        return EXIT_COULD_NOT_RUN
    except Exception as exc:  # MemoryError included; KeyboardInterrupt and SystemExit pass
        if args.show_traceback:
            traceback.print_exc()
        else:
            print(f"gpu-jiggle {args.command}: {describe_error(exc)} (gpu-jiggle --debug {args.command} ... "
                  f"prints the traceback)", file=sys.stderr)
        return EXIT_COULD_NOT_RUN

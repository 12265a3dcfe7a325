"""``gpu-jiggle bench``: segment-substeps per second of the GPU path (its dispatch alone, its
whole frame, with read-back) and of the numpy path, in one run, over a grid of chain kinds,
sizes, chain lengths, substeps per frame and the v2 features on and off; GPU memory per
segment, upload bytes per joint and frame, the fraction of a copy shader's bandwidth, the
cost exponent between 100k and 4M segments, and (``--peers``) the same step written with
numba and Warp (:mod:`gpu_jiggle.bench`). Prints a table; ``--json`` and ``--plot`` write the
figures and the log-log plot, each file whole or not at all.

Exit status 0, or 2 with one line when it could not run (bad option values; ``--backend
gpu`` without an OpenGL 4.3 context; a peer whose library is missing). Timings are reported,
never judged.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .. import extras
from ..bench import cases as bench_cases
from ..bench.report import plot, table
from ..bench.runner import BenchOptions, run
from ..character.baking.run import write_whole
from ..gl.context import get_context

#: What ``--peers`` times when given without names.
PEER_LIBRARIES = ("numba", "warp")


def run_command(args) -> int:
    """Measure, print the table, write the JSON and plot; 0, or 2 with one line."""
    problem = check_arguments(args)
    if problem:
        print(f"gpu-jiggle bench: {problem}", file=sys.stderr)
        return 2
    peers = PEER_LIBRARIES if args.peers == [] else tuple(args.peers or ())
    for library in peers:
        try:
            extras.require(library, f"the {library} peer")
        except extras.MissingExtra as exc:
            print(f"gpu-jiggle bench: --peers {library}: {exc}", file=sys.stderr)
            return 2
    problem = check_peer_device(peers, args.peer_device)
    if problem:
        print(f"gpu-jiggle bench: {problem}", file=sys.stderr)
        return 2
    ctx = None
    if args.backend != "cpu":
        try:
            ctx = get_context()
        except RuntimeError as exc:
            if args.backend == "gpu":
                print(f"gpu-jiggle bench: --backend gpu: {' '.join(str(exc).split())}", file=sys.stderr)
                return 2
            print(f"gpu-jiggle bench: no OpenGL context, the numpy path only ({exc})", file=sys.stderr)
    problem = check_work_group_sizes(args, ctx)
    if problem:
        print(f"gpu-jiggle bench: {problem}", file=sys.stderr)
        return 2
    if args.quick:
        grid = bench_cases.quick_grid(kinds=args.kind, features=args.features, colliders=args.colliders)
    else:
        grid = bench_cases.grid(kinds=args.kind, sizes=args.sizes, chain_lengths=args.chain_lengths,
                                substeps=args.substeps, features=args.features, colliders=args.colliders)
        if not grid:
            print(f"gpu-jiggle bench: --chain-lengths {' '.join(map(str, args.chain_lengths))}: every chain is longer "
                  f"than every --sizes value ({' '.join(map(str, args.sizes))}), so there is no case to run",
                  file=sys.stderr)
            return 2
    if args.callgrind:
        from ..bench.callgrind import unavailable

        why = unavailable()
        if why is None and ctx is None:
            why = ("it counts the GPU path, and " + ("--backend cpu leaves it out" if args.backend == "cpu"
                                                     else "there is no OpenGL 4.3 context here"))
        if why:
            print(f"gpu-jiggle bench: --callgrind: {why}", file=sys.stderr)
            return 2
    options = BenchOptions(budget_seconds=args.seconds, max_frames=args.frames,
                           numpy_max_segments=args.numpy_max_segments, peers=peers,
                           peer_device=args.peer_device, work_group_sizes=tuple(args.work_group_sizes or ()),
                           callgrind=args.callgrind)
    tqdm = extras.require("tqdm", "the progress bar").tqdm
    steps = len(grid) * (2 + len(options.peers) + (ctx is not None) * (1 + bool(options.work_group_sizes)
                                                                        + options.callgrind))
    with tqdm(total=steps, unit="step", desc="bench", file=sys.stderr, disable=args.no_progress) as bar:
        def progress(case, what):
            bar.set_postfix_str(f"{case.kind} {case.segment_count:,} ×{case.chain_length} {what}", refresh=False)
            bar.update(1)
        report = run(grid, options, ctx, progress, gpu_off="--backend cpu" if args.backend == "cpu" else None)
    print(table(report))
    picture = plot(report, plot_format(args.plot)) if args.plot else None  # before anything is written
    if args.json:
        write_whole(Path(args.json), json.dumps(report, indent=1, default=float).encode("utf-8"))
        print(f"figures: {args.json}")
    if picture is not None:
        write_whole(Path(args.plot), picture)
        print(f"plot: {args.plot}")
    return 0


def check_work_group_sizes(args, ctx) -> str | None:
    """Whether every --work-group-sizes value can run on ``ctx`` (and there is a GPU path to
    time); repeated sizes are timed once."""
    if not args.work_group_sizes:
        return None
    if ctx is None:
        why = "--backend cpu leaves it out" if args.backend == "cpu" else "there is no OpenGL 4.3 context here"
        return f"--work-group-sizes: it times the GPU path, and {why}"
    from ..gl.dispatch import check_work_group_size

    args.work_group_sizes = list(dict.fromkeys(args.work_group_sizes))
    for i, size in enumerate(args.work_group_sizes):
        try:
            check_work_group_size(ctx, size)
        except ValueError as exc:
            return f"--work-group-sizes[{i}]: {exc}"
    return None


def plot_format(name: str) -> str:
    """The image format of a --plot file name: its suffix (png without one)."""
    return Path(name).suffix.lstrip(".").lower() or "png"


def check_peer_device(peers, device) -> str | None:
    """Whether --peer-device names a device Warp has here (and is given with the Warp peer)."""
    if device is None:
        return None
    if "warp" not in peers:
        return f"--peer-device {device}: it is Warp's device, so it needs --peers warp (or --peers)"
    from ..bench.peer_warp import check_device

    return check_device(device)


def check_arguments(args) -> str | None:
    """The first bad option, in words, or None. Fills in the grid's defaults."""
    given = [name for name, value in (("--sizes", args.sizes), ("--chain-lengths", args.chain_lengths),
                                      ("--substeps", args.substeps)) if value is not None]
    if args.quick and given:
        return f"--quick runs its own sizes, chain lengths and substeps: leave out {' and '.join(given)}"
    args.sizes = args.sizes or list(bench_cases.FULL_SIZES)
    args.chain_lengths = args.chain_lengths or list(bench_cases.FULL_CHAIN_LENGTHS)
    args.substeps = args.substeps or list(bench_cases.FULL_SUBSTEPS)
    for name, values, least in (("--sizes", args.sizes, 1), ("--chain-lengths", args.chain_lengths, 1),
                                ("--substeps", args.substeps, 1),
                                ("--work-group-sizes", args.work_group_sizes or (), 1)):
        for i, value in enumerate(values):
            if value < least:
                return f"{name}[{i}] = {value}: expected an integer >= {least}"
    if not args.seconds > 0:
        return f"--seconds {args.seconds}: expected a number of seconds > 0"
    if args.frames < 1:
        return f"--frames {args.frames}: expected an integer >= 1"
    for i, count in enumerate(args.colliders):
        if not 0 <= count <= bench_cases.MAX_COLLIDERS:
            return f"--colliders[{i}] = {count}: expected an integer from 0 to {bench_cases.MAX_COLLIDERS}"
    if args.numpy_max_segments < 0:
        return f"--numpy-max-segments {args.numpy_max_segments}: expected an integer >= 0"
    for option, name in (("--json", args.json), ("--plot", args.plot)):
        if name and Path(name).is_dir():
            return f"{option} {name}: a folder; give a file name"
        if name and not Path(name).parent.is_dir():
            return f"{option} {name}: its folder {Path(name).parent} does not exist"
    if args.plot:
        formats = extras.require("matplotlib.figure", "the benchmark's plot").Figure().canvas.get_supported_filetypes()
        if plot_format(args.plot) not in formats:
            return (f"--plot {args.plot}: matplotlib writes no {plot_format(args.plot)!r} images; give one of "
                    f"{', '.join(sorted(formats))}")
    return None


def add_command(sub) -> None:
    """Register ``bench`` on an argparse subparsers object (see :mod:`gpu_jiggle.app.cli`)."""
    p = sub.add_parser("bench", help="segment-substeps per second of the GPU and numpy paths, and their peers",
                       description="Segment-substeps per second of the GPU path (its dispatch alone, its whole "
                                   "frame, with read-back) and of the numpy path, in one run, over chain kinds, "
                                   "sizes, chain lengths, substeps per frame and the v2 features on and off; GPU "
                                   "memory per segment, upload bytes per joint and frame, the fraction of a copy "
                                   "shader's bandwidth, the cost exponent between 100k and 4M segments, and "
                                   "(--peers) the same step written with numba and NVIDIA Warp. Timings are "
                                   "reported, never judged.")
    p.add_argument("--quick", action="store_true",
                   help="a smoke run: 1k and 10k segments, chains of 8, 2 substeps (seconds; with --kind, "
                        "--features and --colliders, not --sizes, --chain-lengths or --substeps)")
    p.add_argument("--kind", nargs="+", choices=("angle", "point"), default=["angle", "point"],
                   help="which chains to time: angle (2D) and/or point (3D) chains (default both)")
    p.add_argument("--sizes", nargs="+", type=int, default=None, metavar="SEGMENTS",
                   help="total segments per case (default: 1k 10k 100k 1M 4M)")
    p.add_argument("--chain-lengths", nargs="+", type=int, default=None, metavar="N",
                   help="segments per chain (default: 8 32)")
    p.add_argument("--substeps", nargs="+", type=int, default=None, metavar="N",
                   help="substeps per frame, of 1/120 s each (default: 2 8)")
    p.add_argument("--features", nargs="+", choices=bench_cases.FEATURES, default=list(bench_cases.DEFAULT_FEATURES),
                   help="v2: the defaults with air drag, wind and (point chains) colliders; v1: linear target "
                        "path, world damping, none of those; on the v2 defaults: none (no air drag, wind, "
                        "colliders or limits), wind (air drag and wind alone), limits (an angle limit on every "
                        "segment and a point max distance, alone), all (v2 with the limits) (default: v2 v1)")
    p.add_argument("--colliders", nargs="+", type=int, default=[2], metavar="N",
                   help="colliders of point cases with v2 or all features, spheres and capsules alternating; "
                        "several counts time each (default 2)")
    p.add_argument("--seconds", type=float, default=1.0, help="time budget per case and path (default 1 s; "
                                                              "at least one frame after two warm-up frames)")
    p.add_argument("--frames", type=int, default=10,
                   help="at most this many timed frames per case and path (default 10)")
    p.add_argument("--numpy-max-segments", type=int, default=1_000_000, metavar="SEGMENTS",
                   help="the numpy path runs cases up to this size (default 1M)")
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto",
                   help="auto: the GPU path when there is an OpenGL 4.3 context; cpu: the numpy path alone")
    p.add_argument("--peers", nargs="*", choices=PEER_LIBRARIES, default=None,
                   help="also time the step written with numba and/or Warp (the [bench] extra); no names: both")
    p.add_argument("--peer-device", default=None, metavar="DEVICE",
                   help="the Warp peer's device, e.g. cpu or cuda:0 (default: CUDA when there is one, else cpu)")
    p.add_argument("--work-group-sizes", nargs="+", type=int, default=None, metavar="N",
                   help="also time each case's GPU dispatch at these chains per work group (the table's GPU "
                        "figures stay at the default, 64), e.g. 32 64 128 256")
    p.add_argument("--callgrind", action="store_true",
                   help="also count the GPU path's instructions per segment-substep with valgrind's callgrind "
                        "(one frame at 1,000 and 5,000 chains of the case's length; tens of seconds a case; "
                        "repeatable on a loaded machine; needs valgrind and the GPU path)")
    p.add_argument("--json", metavar="FILE", help="write every figure as JSON")
    p.add_argument("--plot", metavar="FILE",
                   help="write the log-log plot, in the image format of its suffix (png, svg, pdf, jpg, ... as "
                        "matplotlib writes them; png without one)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(run=run_command)

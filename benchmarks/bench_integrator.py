"""Cost of the exact integrator against the semi-implicit (Euler) step, per segment-substep,
for angle and point chains on both backends, in one run. Prints a table, asserts nothing.

    python benchmarks/bench_integrator.py [--quick] [--json FILE] [--backend gpu cpu] [--kind angle point]
                                          [--gpu-chains 125000] [--cpu-chains 12500] [--segments 8]
                                          [--warmup 3] [--frames 9] [--cpu-frames 25]

The chain sets and moving poses are bench_solver.py's (gravity on); point chains here have no
colliders and no wind. The GPU backend runs 125,000 chains of 8 segments (1M segments); numpy
runs 12,500 (100,000 segments: 1M takes it 1 to 3 s a frame), so compare the two backends per
segment-substep only. A frame is set_pose, then advance(1/60): two substeps of 1/120 s. The
time is the wall time of advance() alone, fenced by ctx.finish() before and after on the GPU
backend, so it holds the pose upload, both substeps and the frame-time outputs: the median of
the timed frames (more of them in numpy, whose frames are short and noisier) after warm-up
frames (the first compiles the shader). The two solvers of a case run on the same chain set
and poses with their frames interleaved (alternating which goes first), so that load from
other processes falls on both alike.

"steps only" takes off the fixed part of a frame, measured as advance(0) (pose upload and
outputs, no substep) after the timed frames: the ratio of what the integrators themselves
cost. The load average is printed before and after: other processes take CPU from llvmpipe.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_solver import angle_case, point_case  # noqa: E402  (the same chain sets and poses)

from gpu_jiggle import Solver  # noqa: E402
from gpu_jiggle.gl.context import get_context  # noqa: E402

INTEGRATORS = ("semi-implicit", "exact")
SUBSTEP = 1 / 120
FRAME_DT = 1 / 60
CASES = {"angle": angle_case, "point": point_case}


def fence_for(backend):
    """What makes a frame's work finished: ctx.finish() on the GPU backend, nothing in numpy."""
    return get_context().finish if backend == "gpu" else (lambda: None)


def timed_advance(solver, pose, frame_dt, fence):
    """Seconds of one fenced advance(frame_dt) after set_pose(pose), and its substep count."""
    solver.set_pose(**pose)
    fence()
    start = time.perf_counter()
    substeps = solver.advance(frame_dt)
    fence()
    return time.perf_counter() - start, substeps


def measure(kind, backend, chains, segments, warmup, frames, seed=0):
    """Median advance() seconds of each integrator (and of advance(0)) on one case."""
    cs, poses, _ = CASES[kind](np.random.default_rng(seed), chains, segments)  # no colliders, no wind
    fence = fence_for(backend)
    solvers = {name: Solver(cs, backend=backend, substep=SUBSTEP, integrator=name) for name in INTEGRATORS}
    times = {name: [] for name in INTEGRATORS}
    fixed = {name: [] for name in INTEGRATORS}
    substeps = set()
    try:
        for i in range(warmup + frames):
            order = INTEGRATORS if i % 2 == 0 else INTEGRATORS[::-1]
            for name in order:
                seconds, n = timed_advance(solvers[name], poses[i % len(poses)], FRAME_DT, fence)
                substeps.add(n)
                if i >= warmup:
                    times[name].append(seconds)
        for i in range(max(3, frames // 3)):
            for name in INTEGRATORS:
                fixed[name].append(timed_advance(solvers[name], poses[i % len(poses)], 0.0, fence)[0])
    finally:
        for solver in solvers.values():
            solver.release()
    if substeps != {2}:
        raise RuntimeError(f"expected 2 substeps a frame, got {sorted(substeps)}")
    seg_substeps = cs.segment_count * 2
    row = dict(kind=kind, backend=backend, chains=chains, segments=cs.segment_count, substeps_per_frame=2,
               frames=frames, warmup=warmup)
    for name in INTEGRATORS:
        key = name.replace("-", "_")
        frame_s = statistics.median(times[name])
        fixed_s = statistics.median(fixed[name])
        row[f"{key}_frame_ms"] = frame_s * 1e3
        row[f"{key}_fixed_ms"] = fixed_s * 1e3
        row[f"{key}_ns"] = frame_s / seg_substeps * 1e9
        row[f"{key}_steps_ns"] = max(frame_s - fixed_s, 0.0) / seg_substeps * 1e9
    row["ratio"] = row["exact_ns"] / row["semi_implicit_ns"]
    row["steps_ratio"] = (row["exact_steps_ns"] / row["semi_implicit_steps_ns"]
                          if row["semi_implicit_steps_ns"] > 0 else float("nan"))
    return row


def machine():
    info = {"cpus": os.cpu_count()}
    try:
        ctx_info = get_context().info
        info.update(renderer=ctx_info.get("GL_RENDERER"), version=ctx_info.get("GL_VERSION"))
    except RuntimeError as exc:
        info.update(renderer=None, version=None, gl_error=str(exc))
    return info


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few frames (a smoke test)")
    parser.add_argument("--json", metavar="FILE", help="write the settings, machine and numbers to FILE")
    parser.add_argument("--backend", nargs="+", choices=["gpu", "cpu"], default=["gpu", "cpu"])
    parser.add_argument("--kind", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--gpu-chains", type=int, default=None, help="chains on the GPU backend (125000)")
    parser.add_argument("--cpu-chains", type=int, default=None, help="chains on the numpy backend (12500)")
    parser.add_argument("--segments", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=None, help="untimed frames first (3; quick 1)")
    parser.add_argument("--frames", type=int, default=None, help="timed GPU frames, median taken (9; quick 3)")
    parser.add_argument("--cpu-frames", type=int, default=None, help="timed numpy frames (25; quick 3)")
    args = parser.parse_args(argv)
    quick = args.quick
    chains = {"gpu": args.gpu_chains or (2000 if quick else 125000),
              "cpu": args.cpu_chains or (500 if quick else 12500)}
    warmup = args.warmup if args.warmup is not None else (1 if quick else 3)
    frames = {"gpu": args.frames if args.frames is not None else (3 if quick else 9),
              "cpu": args.cpu_frames if args.cpu_frames is not None else (3 if quick else 25)}

    began = time.perf_counter()
    info = machine()
    load_before = os.getloadavg()
    print(f"renderer: {info['renderer']}, {info['version']}; {info['cpus']} CPUs; load {load_before[0]:.2f}")
    print(f"{args.segments} segments a chain, 2 substeps of 1/120 s a frame, median of {frames['gpu']} GPU and "
          f"{frames['cpu']} numpy frames after {warmup} warm-up; ns per segment-substep of advance()")
    header = (f"{'kind':>5} {'backend':>7} {'segments':>9} {'semi ns':>8} {'exact ns':>9} {'exact/semi':>10}"
              f" {'steps only':>10}")
    print(header)
    rows = []
    for kind in args.kind:
        for backend in args.backend:
            if backend == "gpu" and info["renderer"] is None:
                print(f"{kind:>5} {backend:>7}  skipped: no OpenGL 4.3 context")
                continue
            row = measure(kind, backend, chains[backend], args.segments, warmup, frames[backend])
            rows.append(row)
            print(f"{kind:>5} {backend:>7} {row['segments']:>9} {row['semi_implicit_ns']:>8.1f}"
                  f" {row['exact_ns']:>9.1f} {row['ratio']:>9.2f}x {row['steps_ratio']:>9.2f}x", flush=True)
    load_after = os.getloadavg()
    elapsed = time.perf_counter() - began
    print(f"load {load_after[0]:.2f}; {elapsed:.0f} s in all")
    if args.json:
        result = dict(machine=dict(info, load_before=load_before, load_after=load_after),
                      settings=dict(quick=quick, segments=args.segments, substep=SUBSTEP, frame_dt=FRAME_DT,
                                    warmup=warmup, frames=frames, chains=chains),
                      seconds=elapsed, results=rows)
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json}")
    return rows


if __name__ == "__main__":
    main()

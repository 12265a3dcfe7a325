"""Milliseconds per frame of the compute shaders against the numpy reference, in the same
run and on the same inputs, for growing chain sets of both kinds. Prints ratios, asserts
nothing. Then the cost of each level of detail (full, half rate, frozen) on point chains.

    python benchmarks/bench_solver.py [--kind angle point] [--chains 1000 10000 100000] [--segments 8] [--frames 20]
                                      [--lod-chains 50000]

Each frame is set_pose + advance(1/60) (two substeps) + positions() read-back; the pose
changes every frame, so the upload is part of the cost, as in a game. Point chains also
collide with a sphere and a capsule and feel gusting wind.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from gpu_jiggle import AngleChainSet, PointChainSet, Solver
from gpu_jiggle.gl.context import describe, get_context


def angle_case(rng, c, n):
    cs = AngleChainSet(np.full(c, n), 0.1, rng.uniform(1, 5, c), 0.4, inertia=1.0, gravity=(0, -9.8))
    poses = [dict(root_position=rng.normal(size=(c, 2)), root_angle=rng.uniform(-3, 3, c),
                  local_angle=rng.uniform(-0.3, 0.3, cs.segment_count)) for _ in range(4)]
    return cs, poses, None


def point_case(rng, c, n):
    cs = PointChainSet(np.full(c, n), rng.uniform(1, 5, c), 0.5, rest_lengths=0.02, particle_radius=0.002,
                       gravity=(0, -9.8, 0))
    i = np.arange(c)
    pivots = np.stack([(i % 300) * 0.01, np.zeros(c), (i // 300) * 0.01], 1)
    strand = np.array([[0.0, -0.02 * k, 0.0] for k in range(n + 1)])
    rest = np.repeat(pivots, n + 1, axis=0) + np.tile(strand, (c, 1))
    poses = [dict(joint_positions=rest + [0.05 * np.sin(k), 0.0, 0.02 * k]) for k in range(4)]

    def extras(solver):
        solver.set_colliders(spheres=[[1.5, -0.1, 1.0, 0.3]], capsules=[[0, -0.15, 0, 3, -0.15, 3, 0.05]])
        solver.set_wind((0.5, 0, 0), 1.0, (2.0, 0, 1.0), 0.7)
    return cs, poses, extras


def frame_ms(solver, poses, extras, frames):
    if extras:
        extras(solver)
    solver.set_pose(**poses[0])
    solver.advance(1 / 60)
    solver.positions()
    start = time.perf_counter()
    for i in range(frames):
        solver.set_pose(**poses[i % len(poses)])
        solver.advance(1 / 60)
        solver.positions()
    return (time.perf_counter() - start) / frames * 1e3


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", nargs="+", choices=["angle", "point"], default=["angle", "point"])
    parser.add_argument("--chains", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--segments", type=int, default=8)
    parser.add_argument("--frames", type=int, default=20)
    parser.add_argument("--lod-chains", type=int, default=50000,
                        help="point chains for the level-of-detail comparison (0 to skip)")
    args = parser.parse_args(argv)
    print("renderer:", describe(get_context()).get("GL_RENDERER"))
    print(f"{'kind':>6} {'chains':>8} {'segments':>9} {'numpy ms':>9} {'gpu ms':>8} {'gpu speed-up':>13}")
    rng = np.random.default_rng(0)
    for kind in args.kind:
        make = angle_case if kind == "angle" else point_case
        for c in args.chains:
            cs, poses, extras = make(rng, c, args.segments)
            cpu = Solver(cs, backend="cpu")
            gpu = Solver(cs, backend="gpu")
            t_cpu = frame_ms(cpu, poses, extras, args.frames)
            t_gpu = frame_ms(gpu, poses, extras, args.frames)
            gpu.release()
            print(f"{kind:>6} {c:>8} {cs.segment_count:>9} {t_cpu:>9.2f} {t_gpu:>8.2f} {t_cpu / t_gpu:>12.2f}x")
    if args.lod_chains:
        level_of_detail(rng, args.lod_chains, args.segments, args.frames + args.frames % 2)


def level_of_detail(rng, c, n, frames):
    """Cost per frame of the same point chains at each level of detail (even frame count,
    so the half-rate chains run on exactly half of the frames)."""
    print(f"\nlevel of detail, {c} point chains of {n} segments (ms per frame)")
    print(f"{'level':>7} {'numpy ms':>9} {'gpu ms':>8} {'numpy vs full':>14} {'gpu vs full':>12}")
    cs, poses, extras = point_case(rng, c, n)
    rows = {}
    for level in ("full", "half", "frozen"):
        times = []
        for backend in ("cpu", "gpu"):
            solver = Solver(cs, backend=backend)
            solver.set_lod(level)
            times.append(frame_ms(solver, poses, extras, frames))
            solver.release()
        rows[level] = times
        print(f"{level:>7} {times[0]:>9.2f} {times[1]:>8.2f} {times[0] / rows['full'][0]:>13.2f}x"
              f" {times[1] / rows['full'][1]:>11.2f}x")


if __name__ == "__main__":
    main()

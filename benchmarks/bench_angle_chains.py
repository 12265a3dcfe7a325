"""Angle chains: frames per second of the compute shaders against the numpy reference, in
the same run and on the same inputs, for growing chain sets. Prints ratios, asserts nothing.

    python benchmarks/bench_angle_chains.py [--chains 1000 10000 100000] [--segments 8] [--frames 30]

Each frame is set_pose + advance(1/60) (two substeps) + positions() read-back; the pose
changes every frame, so the upload is part of the cost, as in a game.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from gpu_jiggle import AngleChainSet, Solver
from gpu_jiggle.context import describe, get_context


def frame_seconds(solver, poses, frames):
    solver.set_pose(*poses[0])
    solver.advance(1 / 60)
    solver.positions()
    start = time.perf_counter()
    for i in range(frames):
        solver.set_pose(*poses[i % len(poses)])
        solver.advance(1 / 60)
        solver.positions()
    return (time.perf_counter() - start) / frames


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chains", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--segments", type=int, default=8)
    parser.add_argument("--frames", type=int, default=30)
    args = parser.parse_args(argv)
    print("renderer:", describe(get_context()).get("GL_RENDERER"))
    print(f"{'chains':>8} {'segments':>9} {'numpy ms':>9} {'gpu ms':>8} {'gpu/numpy speed':>16}")
    rng = np.random.default_rng(0)
    for c in args.chains:
        cs = AngleChainSet(np.full(c, args.segments), 0.1, rng.uniform(1, 5, c), 0.4, inertia=1.0, gravity=(0, -9.8))
        poses = [(rng.normal(size=(c, 2)), rng.uniform(-3, 3, c), rng.uniform(-0.3, 0.3, cs.segment_count))
                 for _ in range(4)]
        t_cpu = frame_seconds(Solver(cs, backend="cpu"), poses, args.frames)
        t_gpu = frame_seconds(Solver(cs, backend="gpu"), poses, args.frames)
        print(f"{c:>8} {cs.segment_count:>9} {t_cpu * 1e3:>9.2f} {t_gpu * 1e3:>8.2f} {t_cpu / t_gpu:>15.2f}x")


if __name__ == "__main__":
    main()

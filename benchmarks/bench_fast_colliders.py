"""What contact sub-steps cost (docs/SPEC.md section 9, "Swept contact"): a field of hanging
strands with a sphere and a capsule sweeping back and forth across it fast, against the same
frames with the sub-steps capped at one (the colliders then pass through the strands), in one
run. Prints a table, asserts nothing.

    python benchmarks/bench_fast_colliders.py [--chains 8000] [--speed 20] [--backends gpu cpu]

The strands: chains of 8 segments of 2 cm, 1 cm apart on a square grid, 3 Hz, damping ratio
0.5, gravity, air drag and wind, model v2, two substeps of 1/120 s a frame. The colliders: a
5 cm sphere and a 3 cm capsule lying across the grid, both moving along x at ``--speed`` m/s
(several times their radius per substep, so the chains they pass take contact sub-steps);
"capped": the frame buffer's cap on sub-steps (``layouts.MAX_CONTACT_SUBSTEPS``) set to 1 for
the run. Seconds per frame (``advance`` and a read of the positions), median over the timed
frames; the ratio is sub-stepped ÷ capped.
"""
from __future__ import annotations

import argparse
import logging
import math
import os
import time

import numpy as np

from gpu_jiggle import PointChainSet, Solver
from gpu_jiggle.sim import layouts

SEGMENTS, LENGTH, SPACING = 8, 0.02, 0.01
FRAME = 2 / 120


def strands(chains: int):
    """(chains·(SEGMENTS + 1), 3) rest joint positions on a square grid, and the grid's side (m)."""
    side = int(np.ceil(np.sqrt(chains)))
    i = np.arange(chains)
    pivots = np.stack([(i % side) * SPACING, np.zeros(chains), (i // side) * SPACING], axis=1)
    strand = np.stack([np.zeros(SEGMENTS + 1), -LENGTH * np.arange(SEGMENTS + 1), np.zeros(SEGMENTS + 1)], axis=1)
    return (pivots[:, None, :] + strand[None]).reshape(-1, 3), side * SPACING


def collider_x(frame: int, speed: float, width: float) -> float:
    """The colliders' x at a frame: back and forth across the grid and 0.2 m beyond each side."""
    span = width + 0.4
    p = (speed * FRAME * frame) % (2 * span)
    return -0.2 + (p if p < span else 2 * span - p)


def seconds_per_frame(backend: str, chains: int, speed: float, frames: int, cap: int) -> float:
    joints, width = strands(chains)
    kept, layouts.MAX_CONTACT_SUBSTEPS = layouts.MAX_CONTACT_SUBSTEPS, cap
    # the numpy path's warning that the cap cut the sub-steps is what the capped run is for
    log = logging.getLogger("gpu_jiggle.sim.backends.reference.point_chains")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        return _timed_frames(backend, chains, speed, frames, joints, width)
    finally:
        layouts.MAX_CONTACT_SUBSTEPS = kept
        log.setLevel(level)


def _timed_frames(backend, chains, speed, frames, joints, width):
    chain_set = PointChainSet([SEGMENTS] * chains, 3.0, 0.5, gravity=(0.0, -9.81, 0.0), air_drag=0.5)
    times = []
    with Solver(chain_set, backend=backend, max_substeps=2) as solver:
        solver.set_wind((0.5, 0.0, 0.0), 1.0, (2.0, 0.0, 1.0), 0.7)
        for k in range(frames + 2):  # the first two frames start the strands and compile
            x = collider_x(k, speed, width)
            colliders = dict(spheres=[[x, -0.08, width / 2, 0.05]],
                             capsules=[[x + 0.1, -0.1, 0.0, x + 0.1, -0.1, width, 0.03]])
            solver.set_pose(joints)
            solver.set_colliders(**colliders)
            started = time.perf_counter()
            solver.advance(FRAME)
            solver.positions()
            if k >= 2:
                times.append(time.perf_counter() - started)
    return float(np.median(times))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="What contact sub-steps cost: strands swept by a fast sphere and "
                                                 "capsule, against the same frames with the sub-steps capped at one.")
    parser.add_argument("--chains", type=int, default=8000, help="strands of 8 segments (default 8000)")
    parser.add_argument("--speed", type=float, default=20.0, help="the colliders' speed, m/s (default 20)")
    parser.add_argument("--frames", type=int, default=8, help="timed frames per case (default 8)")
    parser.add_argument("--backends", nargs="+", choices=("gpu", "cpu"), default=["gpu", "cpu"])
    args = parser.parse_args(argv)
    if args.chains < 1 or args.frames < 1:
        parser.error(f"--chains {args.chains}, --frames {args.frames}: expected 1 or more of each")
    if not (math.isfinite(args.speed) and args.speed > 0):
        parser.error(f"--speed {args.speed}: expected a speed > 0 in m/s")
    print(f"{args.chains} chains of {SEGMENTS}, a 5 cm sphere and a 3 cm capsule at {args.speed:g} m/s; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'backend':8s} {'capped s/frame':>15s} {'sub-stepped s/frame':>20s} {'ratio':>7s}")
    for backend in args.backends:
        capped = seconds_per_frame(backend, args.chains, args.speed, args.frames, cap=1)
        stepped = seconds_per_frame(backend, args.chains, args.speed, args.frames, cap=layouts.MAX_CONTACT_SUBSTEPS)
        print(f"{backend:8s} {capped:15.3f} {stepped:20.3f} {stepped / capped:6.1f}×", flush=True)


if __name__ == "__main__":
    main()

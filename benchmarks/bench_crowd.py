"""Milliseconds per frame of a crowd of VRM avatars (gpu_jiggle.character.crowd.Crowd) against
their number: the step alone (the copies' poses sampled and stacked, one upload, one dispatch,
the read-back, every copy's joints posed), without drawing. Printed, never asserted.

    python benchmarks/bench_crowd.py                  # 1, 16, 64, 256, 500 avatars
    python benchmarks/bench_crowd.py --counts 500 2000 --backend gpu
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from gpu_jiggle.character.crowd import Crowd, grid_placements
from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.character.motion import builtin_motion
from gpu_jiggle.character.rig.from_vrm import rig_from_vrm

AVATAR = Path(__file__).resolve().parents[1] / "data" / "vrm" / "Godette_vrm_v4.vrm"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[1, 16, 64, 256, 500])
    parser.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto")
    parser.add_argument("--seconds", type=float, default=2.0, help="time per count (default 2 s)")
    args = parser.parse_args(argv)
    godette = Character.load(AVATAR)
    rig, motion = rig_from_vrm(godette), builtin_motion(godette, "shake")
    fps = 30.0
    print(f"{'avatars':>8} {'segments':>9} {'ms/frame':>9}  backend")
    for count in args.counts:
        phases = np.random.default_rng(1).uniform(0.0, motion.duration, count)
        with Crowd(godette, rig, motion, grid_placements(count, 1.0), phases, backend=args.backend) as crowd:
            crowd.step(0.0, 1.0 / fps)  # the first frame puts every chain on its pose
            frames, start = 0, time.perf_counter()
            while time.perf_counter() - start < args.seconds:
                frames += 1
                crowd.step(frames / fps, 1.0 / fps)
            ms = 1e3 * (time.perf_counter() - start) / frames
            print(f"{count:>8} {crowd.chain_set.segment_count:>9} {ms:>9.1f}  {crowd.backend}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

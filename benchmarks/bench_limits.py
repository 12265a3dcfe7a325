"""Cost of the point chains' angle limits and inside colliders against the plain step, per
segment-substep, on both backends, in one run. Prints a table, asserts nothing.

    python benchmarks/bench_limits.py [--quick] [--gpu-chains 125000] [--cpu-chains 12500]

bench_solver.py's point chains (8 segments, gravity, a moving pose; frames of two substeps
of 1/120 s), timed as bench_integrator.py times them (fenced advance(), medians, variants'
frames interleaved). Variants: "plain" (no limit, no collider), "cone" (every segment limited
to 0.3 rad about its target direction; the moving pose makes some of them press on it),
"hinge" (every segment in [-0.2, 0.2] rad about z in its joint's frame), "spherical" (every
segment in the ellipse of pitch 0.2 and yaw 0.1 rad; the bisections run for those outside),
"outside sphere" (one sphere, as a reference for a collider's cost) and "inside sphere" (one
inside sphere holding every particle: radius 0.05 about each chain's strand is not possible
with one sphere, so it is one large sphere around the whole field, which the particles do
not reach: the test runs, the push seldom does). Every pose gives the joints' rotations
(identity; the frames of the hinge and spherical limits), so all variants upload the same.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_integrator import fence_for, timed_advance  # noqa: E402
from bench_solver import point_case  # noqa: E402

from gpu_jiggle import Solver  # noqa: E402

SUBSTEP, FRAME_DT = 1 / 120, 1 / 60


def variants(cs):
    """name → (chain set, colliders keyword arguments)."""
    return {"plain": (cs, {}),
            "cone": (cs.replace(angle_limit=0.3), {}),
            "hinge": (cs.replace(hinge_limit=(-0.2, 0.2), limit_axis=(0.0, 0.0, 1.0)), {}),
            "spherical": (cs.replace(spherical_limit=(0.2, 0.1), limit_axis=(0.0, 0.0, 1.0)), {}),
            "outside sphere": (cs, {"spheres": [[1.5, -0.1, 1.0, 0.3]]}),
            "inside sphere": (cs, {"spheres": [[1.5, -0.1, 2.0, 50.0]], "sphere_inside": [True]})}


def measure(backend, chains, warmup, frames):
    cs, poses, _ = point_case(np.random.default_rng(0), chains, 8)
    identity = np.tile([0.0, 0.0, 0.0, 1.0], (cs.joint_count, 1))
    poses = [dict(pose, joint_rotations=identity) for pose in poses]
    fence = fence_for(backend)
    cases = variants(cs)
    solvers = {}
    for name, (chain_set, colliders) in cases.items():
        solvers[name] = Solver(chain_set, backend=backend, substep=SUBSTEP)
        if colliders:
            solvers[name].set_colliders(**colliders)
    times = {name: [] for name in cases}
    try:
        for i in range(warmup + frames):
            order = list(cases) if i % 2 == 0 else list(cases)[::-1]
            for name in order:
                seconds, n = timed_advance(solvers[name], poses[i % len(poses)], FRAME_DT, fence)
                if n != 2:
                    raise RuntimeError(f"expected 2 substeps a frame, got {n}")
                if i >= warmup:
                    times[name].append(seconds)
    finally:
        for solver in solvers.values():
            solver.release()
    return {name: statistics.median(t) / (cs.segment_count * 2) * 1e9 for name, t in times.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--gpu-chains", type=int, default=None)
    parser.add_argument("--cpu-chains", type=int, default=None)
    args = parser.parse_args(argv)
    chains = {"gpu": args.gpu_chains or (2000 if args.quick else 125000),
              "cpu": args.cpu_chains or (500 if args.quick else 12500)}
    frames = {"gpu": 3 if args.quick else 7, "cpu": 3 if args.quick else 15}
    print(f"{'backend':>7} {'segments':>9} " + " ".join(f"{n:>16}" for n in ("plain", "cone", "hinge", "spherical",
                                                                            "outside sphere", "inside sphere")) + "   (ns)")
    for backend in ("gpu", "cpu"):
        row = measure(backend, chains[backend], 1 if args.quick else 2, frames[backend])
        plain = row["plain"]
        cells = [f"{row['plain']:>16.1f}"] + [f"{row[n]:>9.1f} {row[n] / plain:>5.2f}x" for n in list(row)[1:]]
        print(f"{backend:>7} {chains[backend] * 8:>9} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    main()

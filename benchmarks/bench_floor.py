"""How far the point kernel is from the least work any spring-chain kernel does here (the floor).

The floor is the least a damped-spring chain kernel does (``shaders/bench/floor_chains.comp``),
run with the least bytes and with the point kernel's bytes per segment, against the solver's
own dispatch and whole frame on chains of the same shape. Prints milliseconds and
segment-substeps per second, each against the floor's, in one run with the kernels taking
turns, and the machine's load average before and after; asserts nothing.

    python benchmarks/bench_floor.py [--shapes 10000x5 125000x8] [--substeps 2] [--repeats 7]

Why: a target for the solver (docs/PERFORMANCE.md, "The floor of llvmpipe") is only worth
chasing where it sits above what the hardware gives any kernel; on Mesa's llvmpipe the floor
is this machine's CPU running 8 invocations per vector. The solver's kernel is timed with the
bench's case of the shape (``gpu-jiggle bench``'s point chains: features "wind", no colliders,
pivots swaying between two poses), the floor's pivots stand still. The floor kernel leaves out
what the model adds (the v2 carriage, the target path, limits, contact, teleports, levels of
detail, the world and local rotations out): the gap between the rows is what those cost.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

from gpu_jiggle.bench.cases import BenchCase
from gpu_jiggle.bench.measure import WARM_UP_FRAMES, check_storage_block
from gpu_jiggle.gl.buffer_image import BufferViews, views_unavailable
from gpu_jiggle.gl.context import describe, get_context
from gpu_jiggle.gl.dispatch import dispatch_size
from gpu_jiggle.gl.glsl import compute_shader
from gpu_jiggle.sim import Solver, layouts

LOCAL_SIZE = 64
#: The point kernel's records, in vec4s, as the floor with MODEL_BYTES 1 moves them.
MODEL_VEC4S = {"STATE_VEC4S": layouts.POINT_SEGMENT_STATE.itemsize // 16,
               "RIG_VEC4S": layouts.POINT_SEGMENT_RIG.itemsize // 16,
               "OUTPUT_VEC4S": (layouts.POINT_SEGMENT_OUTPUT.itemsize + layouts.POINT_JOINT_OUTPUT.itemsize) // 16,
               "CHAIN_VEC4S": layouts.POINT_CHAIN_STATE.itemsize // 16}
#: The floor kernels: name → MODEL_BYTES (bit 1 the point kernel's reads, bit 2 its writes).
FLOORS = {"floor": 0, "model_reads": 1, "model_writes": 2, "model_bytes": 3}
LABELS = {"floor": "floor, least bytes", "model_reads": "floor + the point kernel's reads",
          "model_writes": "floor + its writes", "model_bytes": "floor + both",
          "dispatch": "solver's dispatch (no colliders)", "frame": "solver's whole frame"}
GRAVITY = (0.0, -9.8, 0.0)
WIND = (0.5, 0.0, 0.0, 0.7)  # m/s², gust frequency (Hz)
SEGMENT_LENGTH = 0.02  # m, as the bench's point case
FRAME_SECONDS = 1.0 / 60.0


def parse_shape(text: str) -> tuple[int, int]:
    """``CHAINSxSEGMENTS`` → (chains, segments per chain), each ≥ 1."""
    try:
        chains, segments = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected CHAINSxSEGMENTS, e.g. 10000x5") from None
    if chains < 1 or segments < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: chains and segments must each be at least 1")
    return chains, segments


class FloorKernel:
    """The floor kernel for ``chains`` chains of ``segments`` over ``substeps`` substeps a
    dispatch, with the least bytes (``model_bytes`` 0), or also the point kernel's reads (1),
    writes (2) or both (3), its records laid out as the point kernel's then; its buffers hold
    chains hanging straight down from pivots on a grid, their targets where they hang."""

    def __init__(self, ctx, chains: int, segments: int, substeps: int, model_bytes: int, views: BufferViews):
        self.ctx, self.chains, self.segments, self.views = ctx, chains, segments, views
        self.model_bytes = model_bytes
        vec4s = MODEL_VEC4S if model_bytes else {"STATE_VEC4S": 2, "RIG_VEC4S": 1, "OUTPUT_VEC4S": 2, "CHAIN_VEC4S": 0}
        self.vec4s = vec4s
        self.program = compute_shader(ctx, "bench/floor_chains.comp", {
            "LOCAL_SIZE": LOCAL_SIZE, "SEGMENTS": segments, "SUBSTEPS": substeps, "MODEL_BYTES": model_bytes,
            **{name: max(count, 1) for name, count in vec4s.items()}})
        s = chains * segments
        side = int(np.ceil(np.sqrt(chains)))
        i = np.arange(chains)
        pivots = np.stack([(i % side) * 0.01, np.zeros(chains), (i // side) * 0.01], 1)
        down = -SEGMENT_LENGTH * np.arange(segments + 1)
        strand = np.stack([np.zeros_like(down), down, np.zeros_like(down)], 1)
        targets = np.zeros((chains, segments + 1, 4), np.float32)
        targets[..., :3] = pivots[:, None, :] + strand[None]
        state = np.zeros((s, vec4s["STATE_VEC4S"], 4), np.float32)
        state[:, 0] = targets[:, 1:].reshape(s, 4)
        rig = np.zeros((s, vec4s["RIG_VEC4S"], 4), np.float32)
        omega = 2 * np.pi * np.random.default_rng(2).uniform(1, 5, chains).repeat(segments)
        rig[:, 0, 0], rig[:, 0, 1], rig[:, 0, 2] = SEGMENT_LENGTH, omega ** 2, 2 * 0.5 * omega
        self.buffers = [ctx.buffer(state.tobytes()), ctx.buffer(rig.tobytes()), ctx.buffer(targets.tobytes()),
                        ctx.buffer(reserve=s * vec4s["OUTPUT_VEC4S"] * 16)]
        if model_bytes:
            rotation = np.tile(np.array([0, 0, 0, 1], np.float32), (s, 1))
            self.buffers += [ctx.buffer(reserve=chains * vec4s["CHAIN_VEC4S"] * 16), ctx.buffer(rotation.tobytes())]
            self.buffers[4].clear()
        self.program["chain_count"] = chains
        self.program["substep_seconds"] = FRAME_SECONDS / substeps
        self.program["gravity"] = GRAVITY
        self.program["wind"] = WIND
        self.frame = 0

    def run(self) -> None:
        """One frame's dispatch (not waited for)."""
        for binding, buffer in enumerate(self.buffers[:5]):
            buffer.bind_to_storage_buffer(binding)
        if self.model_bytes & 1:
            for unit, buffer in enumerate((self.buffers[0], self.buffers[1], self.buffers[5])):
                self.views.bind(unit, buffer, "rgba32ui")
        self.program["frame_time_seconds"] = self.frame * FRAME_SECONDS
        self.frame += 1
        self.program.run(*dispatch_size(self.chains, LOCAL_SIZE))

    def tip_positions(self) -> np.ndarray:
        """(chains, segments, 3) float32: the positions the last frame wrote out."""
        out = np.frombuffer(self.buffers[3].read(), np.float32).reshape(self.chains, self.segments, -1, 4)
        return out[:, :, 0, :3]

    def release(self) -> None:
        for resource in (*self.buffers, self.program):
            resource.release()


def measure(ctx, chains: int, segments: int, substeps: int, repeats: int) -> dict:
    """Seconds per frame (lists of ``repeats``, taking turns after warm-up rounds): the floor
    with the least bytes (``floor``), with the point kernel's reads (``model_reads``), its
    writes (``model_writes``) and both (``model_bytes``), and the solver's dispatch
    (``dispatch``) and whole frame (``frame``, set_pose + advance)."""
    case = BenchCase("point", chains * segments, segments, substeps, "wind", 0)
    check_storage_block(case, ctx)
    rng = np.random.default_rng(0)
    views = BufferViews()
    floors = {name: FloorKernel(ctx, chains, segments, substeps, bits, views) for name, bits in FLOORS.items()}
    solver = Solver(case.chain_set(rng), backend="gpu", context=ctx, **case.solver_options())
    poses = case.poses(rng)
    seconds = {name: [] for name in (*FLOORS, "dispatch", "frame")}
    try:
        case.prepare(solver)
        solver.measure_dispatch()
        for round_ in range(repeats + WARM_UP_FRAMES):
            for name, kernel in floors.items():
                ctx.finish()
                started = time.perf_counter()
                kernel.run()
                ctx.finish()
                if round_ >= WARM_UP_FRAMES:
                    seconds[name].append(time.perf_counter() - started)
            started = time.perf_counter()
            solver.set_pose(**poses[round_ % len(poses)])
            solver.advance(case.frame_seconds)
            ended = time.perf_counter()
            if round_ >= WARM_UP_FRAMES:
                seconds["frame"].append(ended - started)
                seconds["dispatch"].append(solver.dispatch_timing.seconds)
        tips = [kernel.tip_positions() for kernel in floors.values()]
        if not all(np.isfinite(t).all() for t in tips):
            raise RuntimeError("a floor kernel wrote non-finite positions")
    finally:
        solver.release()
        for kernel in floors.values():
            kernel.release()
        views.release()
    return seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", type=parse_shape, nargs="+", default=[(10_000, 5), (125_000, 8)],
                        help="CHAINSxSEGMENTS each (default: the grass demo's 10k blades, and 1M segments in "
                             "chains of 8)")
    parser.add_argument("--substeps", type=int, default=2, help="substeps a frame, 1 to 8 (default 2)")
    parser.add_argument("--repeats", type=int, default=7,
                        help="frames timed of each kernel, the kernels taking turns; the median is printed (default 7)")
    args = parser.parse_args(argv)
    if not 1 <= args.substeps <= 8 or args.repeats < 1:
        parser.error(f"--substeps {args.substeps}, --repeats {args.repeats}: expected 1 to 8 substeps and at least "
                     "1 repeat")
    ctx = get_context()
    for chains, segments in args.shapes:  # every shape checked before any runs
        texels = chains * segments * MODEL_VEC4S["STATE_VEC4S"]
        why = views_unavailable(texels, 3)
        if why:
            most = texels // (chains * segments)
            limit = int(ctx.info.get("GL_MAX_TEXTURE_BUFFER_SIZE") or 0) // most
            parser.error(f"--shapes {chains}x{segments}: too large for this context: the point kernel reads a "
                         f"segment's state as {most} texels of 16 bytes through a buffer texture, and {why} "
                         f"(texels): at most {limit // segments} chains of {segments}")
        try:
            check_storage_block(BenchCase("point", chains * segments, segments, args.substeps, "wind", 0), ctx)
        except ValueError as exc:
            parser.error(f"--shapes {chains}x{segments}: {exc}")
    print("renderer:", describe(ctx).get("GL_RENDERER"), f"| {args.substeps} substeps | median of {args.repeats}"
          " | load average before:", " ".join(f"{x:.1f}" for x in os.getloadavg()))
    print(f"{'chains':>8} {'segments':>9} | {'kernel':<34} {'ms':>8} {'seg-substeps/s':>15} {'x floor':>8}")
    for chains, segments in args.shapes:
        seconds = measure(ctx, chains, segments, args.substeps, args.repeats)
        floor = statistics.median(seconds["floor"])
        for name, label in LABELS.items():
            s = statistics.median(seconds[name])
            rate = chains * segments * args.substeps / s
            print(f"{chains:>8} {chains * segments:>9} | {label:<34} {s * 1e3:>8.2f} {rate:>15.2e} {s / floor:>8.2f}")
    print("load average after:", " ".join(f"{x:.1f}" for x in os.getloadavg()),
          "(other processes take from llvmpipe: compare rows of one run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

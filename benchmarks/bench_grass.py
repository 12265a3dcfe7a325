"""Frames per second of demo 03's grass field, headless, with and without drawing, and what
level of detail by distance saves. Prints tables, asserts nothing.

    python benchmarks/bench_grass.py [--blades 10000 50000 100000] [--frames 10] [--size 960x540]

Each frame is what the demo does: move the ball (a sphere collider) and set the colliders,
choose levels of detail (by distance from the camera, full near the ball), ``advance(1/60)``
(two substeps at full rate), and, "with drawing", the ground and ball (draw3d) and the blades
straight from the solver's buffers (``grass_blade.vert``) into an offscreen framebuffer
without multisampling. ``ctx.finish()`` ends every frame, so the GPU's (llvmpipe's) work is
inside the time; nothing is read back. Each case is measured with level of detail by distance
("LOD") and with every blade at full rate ("full").

The machine's load average is printed too: on a shared CPU other processes take from llvmpipe.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np

from gpu_jiggle.gl.context import describe, get_context
from gpu_jiggle.render.draw3d import OffscreenTarget
from gpu_jiggle.app.viewer import parse_size

DEMO_PATH = Path(__file__).resolve().parent.parent / "demos" / "03_grass_field.py"


def load_demo():
    spec = importlib.util.spec_from_file_location("demo_03_grass_field", DEMO_PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def frame_ms(ctx, grass, frames: int, target=None, warm_up: int = 3) -> float:
    """Mean milliseconds per frame: step (and draw into ``target`` when given), then finish."""
    for i in range(warm_up + frames):
        if i == warm_up:
            ctx.finish()
            started = time.perf_counter()
        grass.step(1.0 / 60.0)
        if target is not None:
            grass.draw(target.framebuffer, False)
        ctx.finish()
    return (time.perf_counter() - started) / frames * 1e3


def set_levels(grass, mode: str) -> None:
    """``"lod"``: by distance (the demo's default); ``"full"``, ``"half"``, ``"frozen"``: every blade alike."""
    grass.forced_level = None if mode == "lod" else mode


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blades", type=int, nargs="+", default=[10000, 50000, 100000],
                        help="the fields' blade counts, one field each")
    parser.add_argument("--frames", type=int, default=10, help="frames timed per case (their mean), after 3 warm-up frames")
    parser.add_argument("--size", type=parse_size, default=(960, 540), help="the framebuffer drawn into, WIDTHxHEIGHT")
    args = parser.parse_args(argv)
    if min(args.blades) < 1 or args.frames < 1:
        parser.error(f"--blades {' '.join(map(str, args.blades))}, --frames {args.frames}: each must be at least 1")
    demo = load_demo()
    ctx = get_context()
    print("renderer:", describe(ctx).get("GL_RENDERER"), f"| {os.cpu_count()} CPUs | load average before:",
          " ".join(f"{x:.1f}" for x in os.getloadavg()))
    target = OffscreenTarget(ctx, args.size, samples=0)
    rows = []
    for blades in args.blades:
        grass = demo.GrassField(ctx, blades)
        row = {"blades": blades, "segments": grass.chain_set.segment_count, "side": grass.field.side}
        for mode in ("full", "lod"):
            set_levels(grass, mode)
            row[f"solve_{mode}"] = frame_ms(ctx, grass, args.frames)
            row[f"draw_{mode}"] = frame_ms(ctx, grass, args.frames, target)
            if mode == "lod":
                row["levels"] = np.bincount(grass.levels, minlength=3)
        grass.release()
        rows.append(row)
        print(f"  {blades} blades measured (load average {os.getloadavg()[0]:.1f})", flush=True)

    print(f"\nframes per second, {args.size[0]}x{args.size[1]}, no multisampling "
          "(ms per frame in brackets)")
    print(f"{'blades':>8} {'segments':>9} {'field m':>8} | {'no drawing':^29} | {'with drawing':^29}")
    print(f"{'':>8} {'':>9} {'':>8} | {'full':>13} {'LOD':>15} | {'full':>13} {'LOD':>15}")
    for r in rows:
        cells = [f"{1e3 / r[k]:5.1f} ({r[k]:5.0f})" for k in ("solve_full", "solve_lod", "draw_full", "draw_lod")]
        print(f"{r['blades']:>8} {r['segments']:>9} {r['side']:>8.1f} | {cells[0]:>13} {cells[1]:>15} | "
              f"{cells[2]:>13} {cells[3]:>15}")

    print("\nlevel of detail by distance: blades at each level, solver cost against all at full rate")
    print(f"{'blades':>8} {'full':>7} {'half':>7} {'frozen':>7} | {'solver ms full':>14} {'LOD':>7} {'LOD/full':>9}")
    for r in rows:
        n = r["levels"]
        print(f"{r['blades']:>8} {n[0]:>7} {n[1]:>7} {n[2]:>7} | {r['solve_full']:>14.1f} {r['solve_lod']:>7.1f} "
              f"{r['solve_lod'] / r['solve_full']:>9.2f}")

    blades = args.blades[len(args.blades) // 2]
    grass = demo.GrassField(ctx, blades)
    print(f"\nevery blade at one level, {blades} blades (solver ms per frame, no drawing)")
    for mode in ("full", "half", "frozen"):
        set_levels(grass, mode)
        print(f"{mode:>8} {frame_ms(ctx, grass, args.frames):8.1f}")
    grass.release()
    target.release()
    print("load average after:", " ".join(f"{x:.1f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

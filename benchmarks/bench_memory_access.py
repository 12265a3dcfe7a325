"""What one storage access costs a compute shader, by how it is declared: minimal kernels that
each move the same 8 floats per segment (chains of 8 segments, one invocation per chain walking
them, as the solver's kernels do) through a storage buffer declared as a struct of 8 floats, as
two vec4s, or through an image. Prints milliseconds per dispatch and each kernel's time against
the struct's, in one run; asserts nothing.

    python benchmarks/bench_memory_access.py [--chains 125000] [--repeats 7] [--only TEXT]

Why it matters: Mesa's llvmpipe runs 8 invocations in the lanes of one CPU vector but reads or
writes a storage buffer one lane at a time, once per struct field or vector, so the same bytes
cost less as vec4s (docs/PERFORMANCE.md, "What a storage access costs on llvmpipe"). The
stores with each vector's 8 chains side by side in memory take as many instructions as apart,
but less time (fewer cache lines a vector's stores touch). For instruction counts, run one
kernel (``--only`` with its whole name, e.g. ``--only "store, two vec4"``) under ``valgrind
--tool=callgrind`` with two ``--repeats`` and divide the difference by the extra dispatches'
segments (what is read back to compare the kernels is read once, after the last round); run
each once first, outside valgrind or not, so that Mesa's shader cache holds the kernel and
neither count includes its compilation. On a GPU the variants should cost about the same.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from gpu_jiggle.gl.context import describe, get_context

SEGMENTS = 8  # per chain
#: Each kernel reads (loads) or writes (stores) 8 floats per segment, summing what it reads.
KERNELS = {
    "load, struct of 8 floats": """
struct S { float f0; float f1; float f2; float f3; float f4; float f5; float f6; float f7; };
layout(std430, binding = 0) readonly buffer A { S a[]; };
layout(std430, binding = 1) writeonly buffer O { vec4 o[]; };
void main() { uint c = gl_GlobalInvocationID.x; if (c >= CHAINS) return; float acc = 0.0;
    for (uint i = 0u; i < SEGMENTS; ++i) { S x = a[c * SEGMENTS + i];
        acc += x.f0 * x.f1 + x.f2 * x.f3 + x.f4 * x.f5 + x.f6 * x.f7; }
    o[c] = vec4(acc); }""",
    "load, two vec4": """
layout(std430, binding = 0) readonly buffer A { vec4 a[]; };
layout(std430, binding = 1) writeonly buffer O { vec4 o[]; };
void main() { uint c = gl_GlobalInvocationID.x; if (c >= CHAINS) return; float acc = 0.0;
    for (uint i = 0u; i < SEGMENTS; ++i) { vec4 x = a[2u * (c * SEGMENTS + i)]; vec4 y = a[2u * (c * SEGMENTS + i) + 1u];
        acc += x.x * x.y + x.z * x.w + y.x * y.y + y.z * y.w; }
    o[c] = vec4(acc); }""",
    "load, two image texels": """
layout(rgba32f, binding = 0) uniform readonly image2D a;
layout(std430, binding = 1) writeonly buffer O { vec4 o[]; };
ivec2 at(uint t) { return ivec2(int(t % WIDTH), int(t / WIDTH)); }
void main() { uint c = gl_GlobalInvocationID.x; if (c >= CHAINS) return; float acc = 0.0;
    for (uint i = 0u; i < SEGMENTS; ++i) { vec4 x = imageLoad(a, at(2u * (c * SEGMENTS + i)));
        vec4 y = imageLoad(a, at(2u * (c * SEGMENTS + i) + 1u)); acc += x.x * x.y + x.z * x.w + y.x * y.y + y.z * y.w; }
    o[c] = vec4(acc); }""",
    "store, struct of 8 floats": """
struct S { float f0; float f1; float f2; float f3; float f4; float f5; float f6; float f7; };
layout(std430, binding = 0) writeonly buffer A { S a[]; };
void main() { uint c = gl_GlobalInvocationID.x; if (c >= CHAINS) return; float x = float(c);
    for (uint i = 0u; i < SEGMENTS; ++i) { x += 1.0; a[c * SEGMENTS + i] = S(x, 2.0 * x, 3.0 * x, 4.0 * x, 5.0 * x,
                                                                              6.0 * x, 7.0 * x, 8.0 * x); } }""",
    "store, two vec4": """
layout(std430, binding = 0) writeonly buffer A { vec4 a[]; };
void main() { uint c = gl_GlobalInvocationID.x; if (c >= CHAINS) return; float x = float(c);
    for (uint i = 0u; i < SEGMENTS; ++i) { x += 1.0; a[2u * (c * SEGMENTS + i)] = vec4(x, 2.0 * x, 3.0 * x, 4.0 * x);
        a[2u * (c * SEGMENTS + i) + 1u] = vec4(5.0 * x, 6.0 * x, 7.0 * x, 8.0 * x); } }""",
    # the same vec4s, each chain's in the lanes' order: segment i's half k of chains c, c + 1, ...
    # side by side (what a layout interleaved by chain would give a vector of 8 invocations)
    "store, two vec4, chains side by side": """
layout(std430, binding = 0) writeonly buffer A { vec4 a[]; };
void main() { uint c = gl_GlobalInvocationID.x; if (c >= CHAINS) return; float x = float(c);
    for (uint i = 0u; i < SEGMENTS; ++i) { x += 1.0; a[(2u * i) * CHAINS + c] = vec4(x, 2.0 * x, 3.0 * x, 4.0 * x);
        a[(2u * i + 1u) * CHAINS + c] = vec4(5.0 * x, 6.0 * x, 7.0 * x, 8.0 * x); } }""",
    "store, two image texels": """
layout(rgba32f, binding = 0) uniform writeonly image2D a;
ivec2 at(uint t) { return ivec2(int(t % WIDTH), int(t / WIDTH)); }
void main() { uint c = gl_GlobalInvocationID.x; if (c >= CHAINS) return; float x = float(c);
    for (uint i = 0u; i < SEGMENTS; ++i) { x += 1.0; imageStore(a, at(2u * (c * SEGMENTS + i)), vec4(x, 2.0 * x, 3.0 * x, 4.0 * x));
        imageStore(a, at(2u * (c * SEGMENTS + i) + 1u), vec4(5.0 * x, 6.0 * x, 7.0 * x, 8.0 * x)); } }""",
}
WIDTH = 4096  # texels per image row


def room(ctx) -> int:
    """The most chains one run can hold here: its image (WIDTH texels a row, at most
    GL_MAX_TEXTURE_SIZE rows) and its buffers (at most GL_MAX_SHADER_STORAGE_BLOCK_SIZE)."""
    rows = int(ctx.info.get("GL_MAX_TEXTURE_SIZE") or 16384)
    block = int(ctx.info.get("GL_MAX_SHADER_STORAGE_BLOCK_SIZE") or 2 ** 27)
    return min(rows * WIDTH, block // 16) // (2 * SEGMENTS)


def run(chains: int, repeats: int, names=tuple(KERNELS)) -> tuple[dict, bool]:
    """The kernels ``names`` ``repeats`` times each, taking turns (after a warm-up round:
    llvmpipe compiles at first use): ({name: [seconds]}, whether the kernels of a kind agree:
    the loads read the same values and sum them alike, the stores write the same bytes)."""
    ctx = get_context()
    texels = 2 * SEGMENTS * chains
    rows = -(-texels // WIDTH)
    values = np.random.default_rng(1).uniform(-1, 1, 4 * WIDTH * rows).astype(np.float32)
    source, image = ctx.buffer(values), ctx.texture((WIDTH, rows), 4, values.tobytes(), dtype="f4")
    target, target_image = ctx.buffer(reserve=values.nbytes), ctx.texture((WIDTH, rows), 4, dtype="f4")
    out = ctx.buffer(reserve=16 * chains)
    defines = (f"#version 430\nlayout(local_size_x = 64) in;\n#define CHAINS {chains}u\n"
               f"#define SEGMENTS {SEGMENTS}u\n#define WIDTH {WIDTH}u\n")
    programs = {name: ctx.compute_shader(defines + KERNELS[name]) for name in names}
    seconds, results = {name: [] for name in names}, {}
    for round_ in range(repeats + 1):
        for name, program in programs.items():
            loads = name.startswith("load")
            (source if loads else target).bind_to_storage_buffer(0)
            out.bind_to_storage_buffer(1)
            (image if loads else target_image).bind_to_image(0, read=loads, write=not loads)
            if round_ == repeats:  # the round compared: each kernel's results from nothing, so a kernel
                out.clear()        # that writes nothing cannot pass for one that agrees
                target.clear()
                target_image.write(bytes(4 * WIDTH * rows * 4))
            ctx.finish()
            started = time.perf_counter()
            program.run(-(-chains // 64))
            ctx.finish()
            seconds[name].append(time.perf_counter() - started)
            if round_ < repeats:
                continue
            if loads:
                results[name] = out.read()
            else:
                written = (target_image if "image" in name else target).read()[:texels * 16]
                if "side by side" in name:  # into each chain's order, as the others write it
                    written = np.frombuffer(written, np.float32).reshape(2 * SEGMENTS, chains, 4).swapaxes(0, 1).tobytes()
                results[name] = written
    agree = all(len({results[n] for n in names if n.startswith(kind)}) <= 1 for kind in ("load", "store"))
    for resource in (source, image, target, target_image, out, *programs.values()):
        resource.release()
    return {name: times[1:] for name, times in seconds.items()}, agree


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chains", type=int, default=125_000, help="chains of 8 segments each kernel moves")
    parser.add_argument("--repeats", type=int, default=7, help="dispatches per kernel, taking turns; the median")
    parser.add_argument("--only", default="", help="run only the kernel of this whole name, or those whose name holds this text")
    args = parser.parse_args(argv)
    if args.chains < 1 or args.repeats < 1:
        parser.error(f"--chains {args.chains}, --repeats {args.repeats}: each must be at least 1")
    # a whole name picks that kernel alone; other text, every kernel whose name holds it
    names = (args.only,) if args.only in KERNELS else tuple(name for name in KERNELS if args.only in name)
    if not names:
        parser.error(f"--only {args.only!r}: no kernel's name holds it; the kernels: "
                     + "; ".join(f'"{name}"' for name in KERNELS))
    limit = room(get_context())
    if args.chains > limit:
        parser.error(f"--chains {args.chains}: this context holds at most {limit} (its largest texture or storage "
                     "block); use fewer")
    seconds, agree = run(args.chains, args.repeats, names)
    print("renderer:", describe(get_context()).get("GL_RENDERER"),
          f"| {args.chains} chains of {SEGMENTS}, 8 floats a segment")
    width = max(len(name) for name in names)
    for kind in ("load", "store"):
        base = seconds.get(f"{kind}, struct of 8 floats")
        for name in (n for n in names if n.startswith(kind)):
            ms = statistics.median(seconds[name]) * 1e3
            ratio = f"   {ms / (statistics.median(base) * 1e3):5.2f}× the struct's" if base else ""
            print(f"  {name:{width}s} {ms:8.2f} ms{ratio}")
    print("the kernels of each kind " + ("agree: the same values read, the same bytes written" if agree
                                         else "DISAGREE: the comparison is void"))
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())

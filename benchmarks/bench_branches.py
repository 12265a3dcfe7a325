"""What a branch costs a compute shader where only some invocations take it: a minimal kernel
whose invocations each run a block of arithmetic under an ``if`` (written out straight or as a
loop) or in a loop of their own trip count, with the invocations taking it chosen four ways. Prints milliseconds per dispatch and
each against "every invocation", in one run; asserts nothing.

    python benchmarks/bench_branches.py [--invocations 262144] [--steps 200] [--repeats 5]

Why it matters: Mesa's llvmpipe runs 8 invocations in the lanes of one CPU vector, so a
branch some lanes of a vector take runs for all 8 of them, masked. Mesa 25's llvmpipe jumps
over an ``if`` whose mask is empty (no lane of the vector takes it), so code that no
invocation of a vector needs costs nothing there: "one vector in 8" costs about 1/8 of
"every invocation" and "none" nearly nothing, while "one lane in 8" costs as much as every
lane. Mesa 22.3's runs the body of a straight ``if`` whatever its mask ("none" costs as much
as "every invocation"); a loop's exit, tested once a trip, is its only way past code there. A
loop no lane enters still runs its body once (its exit is tested at its end), so the loop
with a trip count of its own and no ``if`` around it ("counted loop") costs one trip. (docs/PERFORMANCE.md, "Branches no lane of a vector takes".) On a GPU the same holds
per warp of 32 invocations.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from gpu_jiggle.gl.context import describe, get_context

LOCAL_SIZE = 64
LANES = 8  # invocations per vector on llvmpipe at 256 bits
#: Which invocations take the branch: (a lane in every lane_step, of a vector in every
#: vector_step, taken at all), uniforms of one kernel, so the compiler cannot fold them; "none"
#: is a test on each invocation's index too (i >= count), so its branch is skipped by what
#: every lane of a vector said, not by a uniform.
TAKEN = {"every invocation": (1, 1, 1), "one lane in 8 (each vector)": (LANES, 1, 1),
         "every lane of one vector in 8": (1, 8, 1), "none": (1, 1, 0)}
STEP = "x = sin(x) * 1.0001 + cos(x.yzwx);"
FORMS = ("straight", "loop", "counted loop")


def kernel_source(form: str, steps: int) -> str:
    """The kernel: each invocation reads its vec4, runs ``steps`` steps of arithmetic where the
    uniforms say it takes the branch (:data:`TAKEN`), written out (``form`` "straight") or in a
    loop ("loop") under an ``if``, or as a loop of ``steps`` trips for those and none for the
    others, with no ``if`` ("counted loop"), and writes the vec4 back."""
    block = ("\n        " + STEP) * steps if form == "straight" else f"for (uint k = 0u; k < {steps}u; ++k) {{ {STEP} }}"
    if form == "counted loop":
        block = f"""
        trips = {steps}u;
    }}
    for (uint k = 0u; k < trips; ++k) {{
        {STEP}"""
    return f"""#version 430
layout(local_size_x = {LOCAL_SIZE}) in;
layout(std430, binding = 0) buffer Values {{ vec4 v[]; }};
uniform uint count;
uniform uint lane_step;
uniform uint vector_step;
uniform uint taken_from;
void main() {{
    uint i = gl_GlobalInvocationID.x;
    if (i >= count) {{
        return;
    }}
    vec4 x = v[i];
    uint trips = 0u;
    if (i >= taken_from && i % lane_step == 0u && (i / {LANES}u) % vector_step == 0u) {{{block}
    }}
    v[i] = x;
}}
"""


def taken_mask(name: str, count: int) -> np.ndarray:
    """(count,) bools: the invocations that take the branch, as the kernel's condition says."""
    lane_step, vector_step, taken = TAKEN[name]
    i = np.arange(count)
    return bool(taken) & (i % lane_step == 0) & ((i // LANES) % vector_step == 0)


def run(invocations: int, steps: int, repeats: int, names=tuple(TAKEN), forms=FORMS):
    """Seconds per dispatch ({(form, name): [repeats]}, the kernels taking turns after one
    warm-up round), and whether every kernel wrote what it should: each taking invocation the
    value the "every invocation" kernel of its form wrote there, each other its input."""
    ctx = get_context()
    start = np.random.default_rng(1).uniform(-1.0, 1.0, (invocations, 4)).astype(np.float32)
    programs = {form: ctx.compute_shader(kernel_source(form, steps)) for form in forms}
    keys = [(form, name) for form in forms for name in dict.fromkeys(("every invocation", *names))]
    buffers = {key: ctx.buffer(start.tobytes()) for key in keys}
    seconds = {key: [] for key in keys}
    try:
        for round_ in range(repeats + 1):
            for key in keys:
                program = programs[key[0]]
                buffers[key].write(start.tobytes())
                buffers[key].bind_to_storage_buffer(0)
                program["count"] = invocations
                lane_step, vector_step, taken = TAKEN[key[1]]
                program["lane_step"], program["vector_step"] = lane_step, vector_step
                program["taken_from"] = 0 if taken else invocations
                ctx.finish()
                began = time.perf_counter()
                program.run(group_x=(invocations + LOCAL_SIZE - 1) // LOCAL_SIZE)
                ctx.finish()
                if round_:
                    seconds[key].append(time.perf_counter() - began)
        agree = True
        for (form, name), buffer in buffers.items():
            got = np.frombuffer(buffer.read(), np.float32).reshape(-1, 4)
            every = np.frombuffer(buffers[(form, "every invocation")].read(), np.float32).reshape(-1, 4)
            expected = np.where(taken_mask(name, invocations)[:, None], every, start)
            agree = agree and np.array_equal(got, expected) and not np.array_equal(every, start)
    finally:
        for resource in (*buffers.values(), *programs.values()):
            resource.release()
    return seconds, agree


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--invocations", type=int, default=1 << 18)
    parser.add_argument("--steps", type=int, default=200, help="steps of arithmetic in the branch (default 200)")
    parser.add_argument("--repeats", type=int, default=5, help="dispatches timed per kernel; the median is printed")
    args = parser.parse_args(argv)
    if args.invocations < 1 or not 1 <= args.steps <= 2000 or args.repeats < 1:
        parser.error(f"--invocations {args.invocations}, --steps {args.steps}, --repeats {args.repeats}: expected at "
                     "least 1 invocation, 1 to 2000 steps and at least 1 repeat")
    info = describe(get_context())
    print("renderer:", info.get("GL_RENDERER"), "|", info.get("GL_VERSION"), f"| {args.invocations} invocations,",
          f"{args.steps} steps in the branch | median of {args.repeats}")
    seconds, agree = run(args.invocations, args.steps, args.repeats)
    print(f"{'invocations taking the branch':<32} " + " ".join(f"{form + ' ms':>14} {'x every':>8}" for form in FORMS))
    for name in TAKEN:
        cells = []
        for form in FORMS:
            ms = statistics.median(seconds[(form, name)]) * 1e3
            cells.append(f"{ms:>14.2f} {ms / (statistics.median(seconds[(form, 'every invocation')]) * 1e3):>8.3f}")
        print(f"{name:<32} " + " ".join(cells))
    print("every kernel wrote what it should" if agree else "A KERNEL WROTE SOMETHING ELSE: the timings compare "
          "unlike work")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())

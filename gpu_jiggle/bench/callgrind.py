"""Instructions per segment-substep of the GPU path, counted by valgrind's callgrind
(``gpu-jiggle bench --callgrind``): repeatable where timings are not (a loaded machine), for
kernel work on Mesa's llvmpipe, whose compute shaders run on the CPU.

A case is run under ``valgrind --tool=callgrind --instr-atstart=no`` at two sizes
(:data:`CHAIN_COUNTS` chains of the case's length). The child process (this module run as a
program) builds the solver and runs warm-up frames, then ``callgrind_control -i on`` counts
one frame (``set_pose`` and ``advance``, its dispatch fenced by ``measure_dispatch``) and
``-i off`` stops. The difference of the
two counts over the difference of their segment-substeps is what one more segment-substep
costs: the frame's fixed part (Python, the uploads' set-up, the dispatch's launch) cancels.
Every thread is counted (llvmpipe's workers run the kernel). A run takes tens of seconds
(valgrind runs the interpreter about 50 times slower; the kernel comes from Mesa's shader cache
when the timed run compiled it).
"""
from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: The two sizes of a case that are counted, in chains of the case's own length.
CHAIN_COUNTS = (1_000, 5_000)
#: The most seconds one counted run may take (start, warm-up, the frame).
TIMEOUT_SECONDS = 600
#: Frames run before the counted one (the kernel compiled, the buffers made).
WARM_UP_FRAMES = 3

_TOTALS = re.compile(rb"^totals:\s+(\d+)", re.M)


def unavailable() -> str | None:
    """Why callgrind cannot count here (valgrind or callgrind_control missing), or None."""
    missing = [tool for tool in ("valgrind", "callgrind_control") if shutil.which(tool) is None]
    return f"{' and '.join(missing)} not found (install valgrind)" if missing else None


def instructions_in(path) -> int:
    """The instructions (Ir) a callgrind output file counted: its ``totals:`` line.

    Raises: ValueError when the file has none (callgrind did not finish)."""
    found = _TOTALS.search(Path(path).read_bytes())
    if found is None:
        raise ValueError(f"{path}: no 'totals:' line (callgrind did not finish writing it)")
    return int(found.group(1))


def per_segment_substep(case, counts: dict) -> float:
    """Instructions per segment-substep from ``counts`` ({chains: instructions of one frame})
    of two sizes of ``case``: the difference over the difference of segment-substeps."""
    (small, few), (large, many) = sorted(counts.items())
    return (many - few) / ((large - small) * case.chain_length * case.substeps)


def count(case, counter=None) -> dict:
    """``instructions_per_segment_substep`` of ``case`` on the GPU path, with ``chains`` (the
    two sizes) and ``instructions`` (one frame's count at each). ``counter(case, chains)``:
    one frame's instructions (default :func:`count_frame`).

    Raises: RuntimeError when a counted run fails or runs out of time."""
    counter = counter or count_frame
    counts = {chains: counter(case, chains) for chains in CHAIN_COUNTS}
    return {"instructions_per_segment_substep": per_segment_substep(case, counts), "chains": list(counts),
            "instructions": list(counts.values())}


def count_frame(case, chains: int) -> int:
    """One frame's instructions of ``case`` at ``chains`` chains, counted in a child process
    under callgrind (see the module's docstring).

    Raises: RuntimeError when the child fails or runs out of :data:`TIMEOUT_SECONDS`."""
    sized = dataclasses.replace(case, segments=chains * case.chain_length)
    with tempfile.TemporaryDirectory(prefix="gpu_jiggle_callgrind_") as folder:
        out = Path(folder) / "callgrind.out"
        child = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", sys.executable,
             "-m", __name__, json.dumps(dataclasses.asdict(sized))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            _expect(child, "ready")
            _toggle(child, "on")
            _say(child)
            _expect(child, "done")
            _toggle(child, "off")
            _say(child)
            child.wait(timeout=TIMEOUT_SECONDS)
        except (subprocess.TimeoutExpired, RuntimeError) as exc:
            child.kill()
            child.wait()
            raise RuntimeError(f"callgrind of {sized.label}: {exc}; {child.stderr.read()[-500:]}") from None
        if child.returncode != 0:
            raise RuntimeError(f"callgrind of {sized.label}: exit {child.returncode}; {child.stderr.read()[-500:]}")
        return instructions_in(out)


def _expect(child, word: str) -> None:
    line = child.stdout.readline().strip()  # the child says each word once it is there
    if line != word:
        raise RuntimeError(f"expected {word!r} from the counted process, got {line!r}")


def _say(child) -> None:
    child.stdin.write("go\n")
    child.stdin.flush()


def _toggle(child, state: str) -> None:
    subprocess.run(["callgrind_control", "-i", state, str(child.pid)], check=True, capture_output=True,
                   timeout=60)


def child_main(argv) -> int:
    """The counted process: the case (JSON of its fields) built, warmed up, then one frame
    between ``ready`` and ``done``, each printed and answered on stdin."""
    import numpy as np

    from ..sim import Solver
    from .cases import BenchCase

    case = BenchCase(**json.loads(argv[0]))
    rng = np.random.default_rng(0)
    solver = Solver(case.chain_set(rng), backend="gpu", **case.solver_options())
    poses = case.poses(rng)
    case.prepare(solver)
    for frame in range(WARM_UP_FRAMES):
        solver.set_pose(**poses[frame % len(poses)])
        solver.advance(case.frame_seconds)
    solver.positions()
    solver.measure_dispatch()  # each frame's dispatch fenced: the counted frame ends with its work done
    print("ready", flush=True)
    sys.stdin.readline()
    solver.set_pose(**poses[WARM_UP_FRAMES % len(poses)])
    solver.advance(case.frame_seconds)
    print("done", flush=True)
    sys.stdin.readline()
    return 0


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1:]))

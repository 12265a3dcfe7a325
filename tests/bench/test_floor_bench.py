"""``benchmarks/bench_floor.py``: its floor kernels do the work they claim (springs, wind, the
length step) and the same work whatever bytes they move, so that its rows compare like with
like; the command prints every row. Timings are not judged here."""
from __future__ import annotations

import numpy as np
import pytest
from demo_support import benchmark_fixture

CHAINS, SEGMENTS, SUBSTEPS, FRAMES = 70, 4, 2, 40  # 70: a partial last work group


bench = benchmark_fixture("bench_floor.py")


@pytest.fixture(scope="module")
def tips(bench, gl_context):
    """Each floor kernel's tip positions after FRAMES frames, and where the chains started."""
    views = bench.BufferViews()
    out = {}
    for name, bits in bench.FLOORS.items():
        kernel = bench.FloorKernel(gl_context, CHAINS, SEGMENTS, SUBSTEPS, bits, views)
        start = np.frombuffer(kernel.buffers[2].read(), np.float32).reshape(CHAINS, SEGMENTS + 1, 4)[..., :3]
        for _ in range(FRAMES):
            kernel.run()
        out[name] = kernel.tip_positions().copy()
        kernel.release()
    views.release()
    return out, start


def test_every_floor_kernel_moves_the_chains_alike(tips):
    out, _ = tips
    floor = out["floor"]
    assert np.isfinite(floor).all()
    for name, positions in out.items():
        # the extra bytes enter 1e-30-weighted: far under a float's rounding of the accelerations
        np.testing.assert_allclose(positions, floor, rtol=0, atol=1e-6, err_msg=name)


def test_the_floor_steps_springs_wind_and_lengths(bench, tips):
    out, start = tips
    floor = out["floor"]
    pivots, targets = start[:, :1], start[:, 1:]
    joints = np.concatenate([pivots, floor], axis=1)
    lengths = np.linalg.norm(np.diff(joints, axis=1), axis=2)
    np.testing.assert_allclose(lengths, bench.SEGMENT_LENGTH, rtol=1e-5)  # the length step
    shift = floor - targets
    assert (shift[:, -1, 0] > 1e-4).all()  # the wind (+x) bends every chain
    assert (np.abs(shift[:, -1, 2]) < 1e-6).all()  # and nothing else does sideways
    assert (shift[:, 1:, 0] > shift[:, :-1, 0]).all()  # more towards the tip


def test_the_command_prints_every_row_and_refuses_a_bad_shape(bench, gl_context, capsys):
    assert bench.main(["--shapes", f"{CHAINS}x{SEGMENTS}", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert all(label in out for label in bench.LABELS.values())
    with pytest.raises(SystemExit):
        bench.main(["--shapes", "10000"])
    assert "expected CHAINSxSEGMENTS" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--shapes", "0x5"])

"""``gpu-jiggle bench``: the quick grid runs on both paths and reports what docs/PERFORMANCE.md's table
shows; its figures hang together (rates from times, memory from the GPU buffers, uploads from
the records of a frame); bad options are refused before anything runs. Timings are never
judged here (benchmarks report speed, tests do not assert it)."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from gpu_jiggle.sim import layouts
from gpu_jiggle.gl.record_texture import MAX_ROW_TEXELS
from gpu_jiggle.app.cli import main
from gpu_jiggle.bench import report as bench_report
from gpu_jiggle.bench.cases import BenchCase, quick_grid
from gpu_jiggle.bench.measure import compulsory_bytes

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory, gl_context):
    folder = tmp_path_factory.mktemp("bench")
    figures, picture = folder / "bench.json", folder / "bench.png"
    status = main(["bench", "--quick", "--json", str(figures), "--plot", str(picture), "--no-progress",
                   "--seconds", "0.05", "--frames", "2"])
    return status, json.loads(figures.read_text()), picture.read_bytes()


def test_the_quick_run_measures_every_case_on_both_paths(quick_report, capsys):
    status, report, picture = quick_report
    assert status == 0
    assert [row["case"]["label"] for row in report["cases"]] == [case.label for case in quick_grid()]
    for row in report["cases"]:
        case = row["case"]
        work = case["segment_count"] * case["substeps"]
        for path in ("gpu", "numpy"):
            figures = row[path]
            assert "skipped" not in figures, (case["label"], path, figures)
            assert 1 <= figures["frames"] <= 2
            assert figures["frame_s"] > 0 and figures["dispatch_s"] > 0
            assert figures["frame_rate"] == pytest.approx(work / figures["frame_s"], rel=1e-12)
            assert figures["dispatch_rate"] == pytest.approx(work / figures["dispatch_s"], rel=1e-12)
        assert row["gpu"]["how"] in ("timer query", "finish-fenced wall time")
        assert row["numpy"]["how"] == "host wall time"
        assert row["gpu_over_numpy"] == pytest.approx(row["numpy"]["frame_s"] / row["gpu"]["frame_s"])
        assert 0 < row["bandwidth_fraction"] and math.isfinite(row["bandwidth_fraction"])
        assert row["copy"]["bytes_per_second"] > 0
    assert picture.startswith(PNG_SIGNATURE)


def texture_bytes(texels):
    """Bytes of a record texture of ``texels`` 16-byte texels: rows of the smallest power of
    two that holds them, at most MAX_ROW_TEXELS wide."""
    width = min(1 << (texels - 1).bit_length(), MAX_ROW_TEXELS)
    return 16 * width * -(-texels // width)


def records_of(kind, chains, segments):
    """{buffer: bytes} a solver of this size holds, from the layouts (not from the solver)."""
    joints = segments + chains
    if kind == "angle":
        return {"chain_rig": chains * layouts.ANGLE_CHAIN_RIG.itemsize,
                "segment_rig": texture_bytes(segments * layouts.ANGLE_SEGMENT_RIG.itemsize // 16),
                "chain_state": chains * layouts.ANGLE_CHAIN_STATE.itemsize,
                "segment_state": segments * layouts.ANGLE_SEGMENT_STATE.itemsize,
                "chain_target": chains * layouts.ANGLE_CHAIN_TARGET.itemsize,
                "local_angle": segments * 4,
                "joint_output": joints * layouts.ANGLE_JOINT_OUTPUT.itemsize,
                "segment_output": segments * layouts.ANGLE_SEGMENT_OUTPUT.itemsize}
    return {"chain_rig": chains * layouts.POINT_CHAIN_RIG.itemsize,
            "segment_rig": segments * layouts.POINT_SEGMENT_RIG.itemsize,
            "chain_state": chains * layouts.POINT_CHAIN_STATE.itemsize,
            "segment_state": segments * layouts.POINT_SEGMENT_STATE.itemsize,
            "chain_target": chains * layouts.POINT_CHAIN_TARGET.itemsize,
            "chain_output": chains * layouts.POINT_CHAIN_OUTPUT.itemsize,
            "chain_control": chains * layouts.POINT_CHAIN_CONTROL.itemsize,
            "joint_offset": segments * 12, "joint_rotation": segments * 16,
            "joint_output": joints * layouts.POINT_JOINT_OUTPUT.itemsize,
            "segment_output": segments * layouts.POINT_SEGMENT_OUTPUT.itemsize}


def test_memory_and_uploads_are_those_of_the_records(quick_report):
    _, report, _ = quick_report
    for row in report["cases"]:
        case, gpu = row["case"], row["gpu"]
        records = records_of(case["kind"], case["chains"], case["segment_count"])
        for name, size in records.items():
            assert gpu["buffer_bytes"][name] == size, (case["label"], name)
        assert gpu["memory_bytes"] == sum(gpu["buffer_bytes"].values())
        assert gpu["memory_per_segment"] == pytest.approx(gpu["memory_bytes"] / case["segment_count"])
        assert gpu["compulsory_bytes"] == compulsory_bytes(gpu["buffer_bytes"])
        assert gpu["frame_bytes_per_segment"] == pytest.approx(gpu["compulsory_bytes"] / case["segment_count"])
        state = records["segment_state"] // case["segment_count"]  # read and written once, at the least
        assert 2 * state < gpu["frame_bytes_per_segment"] <= 2 * gpu["memory_per_segment"], case["label"]
        # A frame uploads its targets and per-segment pose (no rotations: the pose gives none)
        # and the frame buffer, nothing of the rig or state (nor, after the first frames,
        # point chains' teleport flags and levels of detail, which do not change).
        per_segment = "local_angle" if case["kind"] == "angle" else "joint_offset"
        pose = records["chain_target"] + records[per_segment]
        assert pose < gpu["upload_bytes"] < pose + 4096, case["label"]
        assert gpu["upload_per_joint"] == pytest.approx(gpu["upload_bytes"] / (case["segment_count"] + case["chains"]))


def test_the_table_shows_every_case_and_the_yardstick(quick_report, tmp_path, capsys):
    figures = tmp_path / "angle.json"
    main(["bench", "--quick", "--no-progress", "--seconds", "0.01", "--frames", "1", "--kind", "angle",
          "--work-group-sizes", "1", "64", "--json", str(figures)])
    out = capsys.readouterr().out
    for case in quick_grid():
        assert (case.label in out) == (case.kind == "angle"), case.label  # --quick keeps to --kind
    assert "copy shader: up to" in out and "renderer: " in out
    assert "work-group size (chains per group)" in out
    assert bench_report.LEGEND in out  # and it says what the columns of bytes hold
    assert all(name in bench_report.LEGEND for name, _ in bench_report.COLUMNS[5:])
    for row in json.loads(figures.read_text())["cases"]:
        sweep = row["work_groups"]
        assert [entry["work_group_size"] for entry in sweep] == [1, 64]
        assert all(entry["dispatch_rate"] > 0 for entry in sweep)
        assert f"{row['case']['label']}: 1: " in out


def test_fitted_exponent_of_a_linear_cost_is_one():
    from gpu_jiggle.bench.runner import fits

    rows = [{"case": {"kind": "angle", "chain_length": 8, "substeps": 2, "features": "v2", "colliders": 0,
                      "segment_count": n},
             "gpu": {"dispatch_s": 3e-9 * n}, "numpy": {"frame_s": 1e-12 * n ** 1.5}}
            for n in (10_000, 100_000, 1_000_000, 4_000_000)]
    by_path = {fit["path"]: fit for fit in fits(rows)}
    assert by_path["gpu"]["exponent"] == pytest.approx(1.0, abs=1e-9)
    assert by_path["numpy"]["exponent"] == pytest.approx(1.5, abs=1e-9)
    assert by_path["gpu"]["sizes"] == [100_000, 1_000_000, 4_000_000]  # 10k is outside the fit's range


def test_collider_counts_of_one_size_are_not_fitted_as_sizes():
    from gpu_jiggle.bench.runner import fits

    rows = [{"case": {"kind": "point", "chain_length": 8, "substeps": 2, "features": "v2", "colliders": k,
                      "segment_count": n},
             "gpu": {"dispatch_s": (1 + k) * 3e-9 * n}, "numpy": {"skipped": "-"}}
            for k in (0, 2) for n in (1_000_000,)] + [
            {"case": {"kind": "point", "chain_length": 8, "substeps": 2, "features": "v2", "colliders": 2,
                      "segment_count": 4_000_000}, "gpu": {"dispatch_s": 9e-9 * 4_000_000}, "numpy": {"skipped": "-"}}]
    fitted = fits(rows)
    assert [(fit["colliders"], fit["sizes"]) for fit in fitted] == [(2, [1_000_000, 4_000_000])]
    assert fitted[0]["exponent"] == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("argv, words", [
    (["--sizes", "1000", "0"], "--sizes[1] = 0"),
    (["--substeps", "-2"], "--substeps[0] = -2"),
    (["--seconds", "0"], "--seconds 0"),
    (["--frames", "0"], "--frames 0"),
    (["--colliders", "2", "-1"], "--colliders[1] = -1: expected an integer from 0 to 1024"),
    (["--colliders", "100000000"], "--colliders[0] = 100000000: expected an integer from 0 to 1024"),
    (["--json", "/no/such/folder/bench.json"], "does not exist"),
    (["--json", "/"], "--json /: a folder"),
    (["--plot", "/tmp/bench.unknownformat"], "--plot /tmp/bench.unknownformat: matplotlib writes no"),
    (["--peer-device", "cpu"], "--peer-device cpu: it is Warp's device, so it needs --peers warp"),
    (["--sizes", "100", "--chain-lengths", "1000"], "--chain-lengths 1000: every chain is longer"),
    (["--work-group-sizes", "64", "0"], "--work-group-sizes[1] = 0"),
    (["--quick", "--sizes", "1000"], "--quick runs its own sizes, chain lengths and substeps: leave out --sizes"),
])
def test_bad_options_are_refused_before_anything_runs(argv, words, capsys):
    assert main(["bench", "--no-progress"] + argv) == 2
    captured = capsys.readouterr()
    assert words in captured.err and captured.out == ""


def test_a_case_a_path_cannot_hold_is_reported_as_skipped(gl_context):
    from gpu_jiggle.bench.runner import BenchOptions, measure_case

    case = BenchCase("angle", 64, 8, 2)
    row = measure_case(case, BenchOptions(budget_seconds=0.01, max_frames=1, numpy_max_segments=10), gl_context)
    assert row["numpy"] == {"skipped": "over --numpy-max-segments 10"}
    assert "gpu_over_numpy" not in row and row["gpu"]["frames"] == 1


def test_the_numpy_path_alone_says_why_the_gpu_path_did_not_run(capsys):
    assert main(["bench", "--backend", "cpu", "--no-progress", "--sizes", "16", "--chain-lengths", "8",
                 "--substeps", "2", "--features", "v1", "--kind", "angle", "--seconds", "0.01", "--frames", "1"]) == 0
    out = capsys.readouterr().out
    assert "gpu skipped: --backend cpu" in out


def test_a_case_over_the_storage_block_is_refused_before_its_rig_is_made(gl_context, monkeypatch):
    from gpu_jiggle.bench.measure import time_solver

    def no_rig(self, rng):
        raise AssertionError("the rig of a refused case was made")
    monkeypatch.setattr(BenchCase, "chain_set", no_rig)
    limit = int(gl_context.info["GL_MAX_SHADER_STORAGE_BLOCK_SIZE"])
    case = BenchCase("point", limit // layouts.POINT_SEGMENT_STATE.itemsize + 8, 8, 2)
    with pytest.raises(ValueError, match="segment_state buffer"):
        time_solver(case, "gpu", None, 0.01, 1, gl_context)


def test_peers_skipped_for_one_reason_take_one_line():
    from gpu_jiggle.bench.report import table

    def row(label):
        return {"case": {"label": label}, "gpu": {}, "numpy": {},
                "peers": {"numba": {"skipped": "v2 only"}, "warp": {"skipped": "v2 only"}}}

    report = {"cases": [row("a v1"), row("b v1")], "fits": [], "machine": {"numpy": "2"}}
    out = table(report)
    assert "  2 cases: numba, warp skipped: v2 only" in out and out.count("v2 only") == 1
    report["cases"] = [row("a v1")]
    assert "  a v1: numba, warp skipped: v2 only" in table(report)


def test_work_group_sizes_the_context_cannot_run_are_refused_before_anything_runs(gl_context, capsys):
    assert main(["bench", "--no-progress", "--quick", "--work-group-sizes", "64", "100000"]) == 2
    captured = capsys.readouterr()
    assert "--work-group-sizes[1]: work_group_size = 100000: this OpenGL context runs at most" in captured.err
    assert captured.out == ""
    assert main(["bench", "--no-progress", "--quick", "--backend", "cpu", "--work-group-sizes", "32"]) == 2
    assert "--work-group-sizes: it times the GPU path, and --backend cpu leaves it out" in capsys.readouterr().err


def test_a_repeated_work_group_size_is_timed_once(gl_context, tmp_path):
    figures = tmp_path / "figures.json"
    assert main(["bench", "--no-progress", "--quick", "--kind", "angle", "--features", "v1", "--seconds", "0.01",
                 "--frames", "1", "--work-group-sizes", "32", "64", "32", "--json", str(figures)]) == 0
    for row in json.loads(figures.read_text())["cases"]:
        assert [entry["work_group_size"] for entry in row["work_groups"]] == [32, 64]


def test_each_feature_set_and_collider_count_is_a_case_of_its_own(gl_context, tmp_path, capsys):
    """--features none wind limits all beside v2 and v1, and --colliders with several counts
    (point cases with colliders take each count in turn); the fraction of chains near a
    collider comes with every case that has colliders."""
    figures = tmp_path / "bench.json"
    assert main(["bench", "--no-progress", "--quick", "--kind", "point", "--features", "none", "wind", "limits", "all",
                 "--colliders", "0", "2", "4", "--seconds", "0.01", "--frames", "1", "--backend", "cpu",
                 "--json", str(figures)]) == 0
    cases = [row["case"] for row in json.loads(figures.read_text())["cases"]]
    seen = {(case["segment_count"], case["features"], case["colliders"]) for case in cases}
    assert len(seen) == len(cases) == 2 * (3 + 3)  # two sizes; none, wind, limits; all with 0, 2, 4 colliders
    for case in cases:
        assert case["colliders"] == 0 or case["features"] == "all"
        assert (case["near_fraction"] is None) == (case["colliders"] == 0)
    assert all(0.0 < case["near_fraction"] <= 1.0 for case in cases if case["colliders"])
    # each its line, its fraction named for what it is (a bound, not the chains run as near)
    out = capsys.readouterr().out
    assert out.count(": within reach ") == sum(1 for case in cases if case["colliders"])


def test_feature_sets_build_what_they_name():
    def chain_set(features):
        return BenchCase("point", 80, 8, 2, features).chain_set(np.random.default_rng(0))

    assert np.isinf(chain_set("none").angle_limit).all() and (chain_set("none").air_drag == 0).all()
    assert np.isfinite(chain_set("limits").angle_limit).all() and np.isfinite(chain_set("limits").max_distance).all()
    assert (chain_set("wind").air_drag > 0).all() and np.isinf(chain_set("wind").angle_limit).all()
    assert np.isfinite(chain_set("all").angle_limit).all() and (chain_set("all").air_drag > 0).all()
    assert BenchCase("point", 80, 8, 2, "all", 3).collider_count == 3
    rng = np.random.default_rng(0)
    near = [BenchCase("point", 100_000, 8, 2, "v2", count).near_fraction(rng) for count in (1, 2, 4)]
    # a field of 3.5 m × 3.5 m: the sphere reaches some chains, the capsule across it more,
    # the second pair adds chains and takes none away
    assert 0.0 < near[0] < near[1] < near[2] < 1.0
    assert BenchCase("point", 80, 8, 2, "limits", 3).collider_count == 0


def test_callgrind_counts_become_instructions_per_segment_substep(tmp_path):
    from gpu_jiggle.bench import callgrind

    out = tmp_path / "callgrind.out"
    out.write_bytes(b"# callgrind format\nevents: Ir\nsummary: 0\n\nfn=(1) f\n0 5\n\ntotals: 123456789\n")
    assert callgrind.instructions_in(out) == 123456789
    out.write_bytes(b"# callgrind format\nevents: Ir\n")
    with pytest.raises(ValueError, match="no 'totals:' line"):
        callgrind.instructions_in(out)
    case = BenchCase("point", 8000, 8, 2, "v2")
    frames = {1000: 5_000_000 + 8000 * 2 * 700, 5000: 5_000_000 + 40000 * 2 * 700}  # 700 a segment-substep
    counted = callgrind.count(case, counter=lambda sized, chains: frames[chains])
    assert counted["instructions_per_segment_substep"] == pytest.approx(700.0)
    assert counted["chains"] == list(callgrind.CHAIN_COUNTS) and counted["instructions"] == list(frames.values())


def test_callgrind_without_valgrind_or_a_gpu_path_is_refused_before_anything_runs(monkeypatch, capsys):
    from gpu_jiggle.bench import callgrind

    assert main(["bench", "--no-progress", "--quick", "--backend", "cpu", "--callgrind"]) == 2
    assert "--callgrind: it counts the GPU path, and --backend cpu leaves it out" in capsys.readouterr().err
    monkeypatch.setattr(callgrind.shutil, "which", lambda tool: None if tool == "valgrind" else "/usr/bin/" + tool)
    assert main(["bench", "--no-progress", "--quick", "--callgrind"]) == 2
    assert "--callgrind: valgrind not found (install valgrind)" in capsys.readouterr().err

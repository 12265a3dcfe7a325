"""The ``gpu-jiggle`` command, run as ``python -m gpu_jiggle`` in a subprocess (and in-process
where a missing OpenGL context or a failing command has to be simulated)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from gpu_jiggle.app import bake, cli, info
from gpu_jiggle.gl import context as gl_context_module

CHECK_TITLES = ["1 free decay", "2 rest", "3 frame rates", "4 wraparound", "5 teleport", "6 cross-check",
                "point 1 free decay", "point 2 rest", "point 3 frame rates", "point 5 teleport", "point 6 cross-check",
                "v2 frame rates (ears)", "v2 tracking", "v2 contact", "v2 precision", "cut 2/6/12",
                "exact integrator", "cone limit", "inside colliders", "hinge limit", "spherical limit"]
PLOTS = ["decay.png", "rest.png", "frame_rates.png", "wraparound.png", "teleport.png",
         "point_decay.png", "point_rest.png", "point_frame_rates.png", "point_teleport.png", "ear_frame_rates.png",
         "exact_integrator.png", "cone_limit.png", "inside_colliders.png", "hinge_limit.png", "spherical_limit.png"]


def run_cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "gpu_jiggle", *args], capture_output=True, text=True,
                          timeout=timeout)


def check_verify_output(proc, out, titles=CHECK_TITLES, plots=PLOTS):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = proc.stdout.split("\n\n")[0]
    for title in titles:
        line = next((ln for ln in table.splitlines() if ln.startswith(title)), None)
        assert line is not None, f"{title!r} missing from the table:\n{table}"
        assert line.rstrip().endswith(("pass", "skipped")), line
    assert "FAIL" not in proc.stdout
    header = table.splitlines()[1]
    for column in ("check", "figure", "limit", "result"):
        assert column in header
    for name in plots:
        png = out / name
        assert png.is_file(), f"{name} not written"
        data = png.read_bytes()
        assert len(data) > 10_000 and data[:8] == b"\x89PNG\r\n\x1a\n"


def test_verify_cpu_runs_the_checks_asked_for(tmp_path):
    """The numpy path through the command, on a few checks (``--checks``; each check runs on
    both paths in tests/verify, most of the table on the GPU path below): those rows alone, in
    the table's order whatever the order asked, and their plots (the cut row draws none). The
    four are among the reference's quickest, a few seconds each (a point check takes 10-20 s
    there, the lod switches half a minute)."""
    out = tmp_path / "verify"
    proc = run_cli("verify", "--backend", "cpu", "--out", str(out), "--checks", "cut_response", "teleport",
                   "exact_integrator", "wraparound", timeout=1200)
    assert "backend: cpu" in proc.stdout
    check_verify_output(proc, out, ["4 wraparound", "5 teleport", "cut 2/6/12", "exact integrator"],
                        ["wraparound.png", "teleport.png", "exact_integrator.png"])
    rows = [line for line in proc.stdout.split("\n\n")[0].splitlines() if line.rstrip().endswith(("pass", "FAIL"))]
    assert [row.split()[0] for row in rows] == ["4", "5", "cut", "exact"] and "4 checks in" in proc.stdout
    assert sorted(path.name for path in out.iterdir()) == ["exact_integrator.png", "teleport.png", "wraparound.png"]


def test_verify_refuses_a_check_it_does_not_have(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.parse(cli.build_parser(), ["verify", "--checks", "point_rest", "point_resting"])
    assert exit_info.value.code == 2
    assert "point_resting" in capsys.readouterr().err


#: Checks the GPU path's test leaves out, with their rows' titles and their plots: each runs
#: on the GPU in tests/verify, which also draws its plot from what it measured (the point
#: cross-check alone cost this test some 40 s).
RUN_ELSEWHERE = {"point_cross_check": ("point 6 cross-check", "point_cross_check.png"),
                 "exact_integrator": ("exact integrator", "exact_integrator.png"),
                 "cone_limit": ("cone limit", "cone_limit.png"),
                 "inside_colliders": ("inside colliders", "inside_colliders.png"),
                 "hinge_limit": ("hinge limit", "hinge_limit.png"),
                 "spherical_limit": ("spherical limit", "spherical_limit.png")}


def test_verify_gpu(gl, tmp_path):
    """The GPU path through the command: every check but ``RUN_ELSEWHERE``'s, each row passing
    and each plot written."""
    from gpu_jiggle import verify

    out = tmp_path / "verify"
    checks = [check.__name__ for check in verify.CHECKS if check.__name__ not in RUN_ELSEWHERE]
    proc = run_cli("verify", "--backend", "gpu", "--out", str(out), "--checks", *checks, timeout=1200)
    assert "backend: gpu" in proc.stdout
    titles, plots = zip(*RUN_ELSEWHERE.values())
    check_verify_output(proc, out, [t for t in CHECK_TITLES if t not in titles], [p for p in PLOTS if p not in plots])
    rows = proc.stdout.split("\n\n")[0].splitlines()
    assert f"{len(checks)} checks in" in proc.stdout and not any(row.startswith(titles) for row in rows)
    # With a context the cross-checks run and write their plots.
    assert "skipped" not in proc.stdout.split("\n\n")[0]
    assert (out / "cross_check.png").is_file()


def test_info_prints_the_renderer(gl):
    proc = run_cli("info")
    assert proc.returncode == 0, proc.stderr
    renderer = gl.info["GL_RENDERER"]
    assert f"renderer: {renderer}" in proc.stdout
    assert "version:" in proc.stdout and "work group size" in proc.stdout
    assert 'backend "auto" would run: gpu' in proc.stdout


def test_console_script_and_module_agree(gl):
    """``gpu-jiggle`` is ``gpu_jiggle.app.cli:main``; ``python -m gpu_jiggle`` runs the same."""
    code = "import sys; from gpu_jiggle.app.cli import main; sys.exit(main(['info']))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout == run_cli("info").stdout


def _no_context():
    raise RuntimeError("no EGL display (simulated)")


def test_info_without_a_context_names_the_cpu_backend(monkeypatch, capsys):
    monkeypatch.setattr(gl_context_module, "get_context", _no_context)
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert "none could be made" in out and "simulated" in out
    assert 'backend "auto" would run: cpu' in out


def test_verify_gpu_without_a_context_exits_2(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(gl_context_module, "get_context", _no_context)
    assert cli.main(["verify", "--backend", "gpu", "--out", str(tmp_path)]) == 2
    assert "OpenGL 4.3" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_no_command_is_a_usage_error():
    proc = run_cli(timeout=60)
    assert proc.returncode == 2
    assert "usage: gpu-jiggle" in proc.stderr


@pytest.mark.parametrize("argv, spelled, meant", [
    (["bake", "in.glb", "--out", "out.glb", "--prerol", "0"], "--prerol", "--preroll"),
    (["render", "in.glb", "--out", "out.mp4", "--fp", "30"], "--fp", "--fps"),
    (["render", "in.glb", "--out", "out.mp4", "--an", "Run"], "--an", "--animation"),
    (["verify", "--back", "cpu"], "--back", "--backend"),
])
def test_an_abbreviated_option_is_a_usage_error_naming_it(argv, spelled, meant, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.parse(cli.build_parser(), argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"unrecognized arguments: {spelled} " in err
    assert f"(did you mean {meant}?)" in err


def test_a_missing_required_option_also_names_the_unknown_one_given_for_it(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.parse(cli.build_parser(), ["describe", "--freq", "2", "-z", "0.3"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "required: -f/--frequency" in err
    assert "unrecognized arguments: --freq (did you mean --frequency?)" in err


def test_a_demo_takes_no_abbreviated_option(capsys):
    from gpu_jiggle.app.viewer.args import demo_parser
    parser = demo_parser("A demo.")
    full = next(o for o in parser._option_string_actions if o.startswith("--") and len(o) > 4)
    with pytest.raises(SystemExit):
        parser.parse_args([full[:-1]])
    assert "unrecognized arguments" in capsys.readouterr().err


def test_failed_check_exits_1(monkeypatch, tmp_path, capsys):
    from gpu_jiggle.verify import CheckResult, runner

    def broken(backend):
        return CheckResult("broken", "9 broken", 2.0, 1.0, False, "a figure over its limit")

    def crashing(backend):
        raise ValueError("boom")

    monkeypatch.setattr(runner, "CHECKS", (broken, crashing))
    assert cli.main(["verify", "--backend", "cpu", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "9 broken" in out and "FAIL" in out
    assert "error: ValueError: boom" in out


def _out_of_memory(args):
    raise MemoryError("Unable to allocate 8.00 GiB for an array with shape (1073741824,)")


def test_out_of_memory_is_one_line_and_exits_2(monkeypatch, capsys):
    monkeypatch.setattr(info, "cmd_info", _out_of_memory)
    assert cli.main(["info"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("gpu-jiggle info: MemoryError: Unable to allocate 8.00 GiB")
    assert "Traceback" not in captured.err


def test_unexpected_error_is_one_line_and_exits_2(monkeypatch, capsys, tmp_path):
    def crashing(args):
        raise ZeroDivisionError("float division by zero\nin the frame loop")

    monkeypatch.setattr(bake, "run_command", crashing)
    args = ["bake", "model.glb", "--rig", "rig.toml", "--animation", "Run", "--out", str(tmp_path / "out.glb")]
    assert cli.main(args) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("gpu-jiggle bake: ZeroDivisionError: float division by zero in the frame loop")


def test_debug_prints_the_traceback(monkeypatch, capsys):
    monkeypatch.setattr(info, "cmd_info", _out_of_memory)
    assert cli.main(["--debug", "info"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert "_out_of_memory" in err
    assert err.rstrip().endswith("MemoryError: Unable to allocate 8.00 GiB for an array with shape (1073741824,)")


RENDER_ARGS = ["model.glb", "--rig", "rig.toml", "--animation", "Run", "--out", "out.mp4"]


@pytest.mark.parametrize("argv, show_traceback, draw_debug", [
    (["--debug", "render", *RENDER_ARGS], True, False),
    (["render", *RENDER_ARGS, "--debug"], False, True),
])
def test_global_debug_is_not_renders_debug_view(argv, show_traceback, draw_debug):
    """``gpu-jiggle --debug`` asks for tracebacks; ``render --debug`` for render's debug view."""
    args = cli.build_parser().parse_args(argv)
    assert args.show_traceback is show_traceback
    assert args.debug is draw_debug


def test_a_reader_that_leaves_early_ends_the_command_quietly():
    """``gpu-jiggle spec | head``: the reader closed the pipe; the command stops with 128 +
    SIGPIPE, as a program the signal ended, and prints nothing."""
    child = subprocess.Popen([sys.executable, "-m", "gpu_jiggle", "spec"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    # the SPEC is larger than a pipe's buffer, so some write finds no reader, whenever it runs
    child.stdout.close()
    errors = child.stderr.read()
    assert child.wait(timeout=120) == cli.EXIT_BROKEN_PIPE == 141
    assert errors == b""

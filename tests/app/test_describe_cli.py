"""``gpu-jiggle describe``, run in-process through the CLI's main()."""
from __future__ import annotations

import math

import pytest

from gpu_jiggle.app import cli


def run(capsys, *argv):
    status = cli.main(["describe", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def row(out, name):
    line = next((ln for ln in out.splitlines() if ln.strip().startswith(name)), None)
    assert line is not None, f"no {name!r} row in:\n{out}"
    return line


def test_prints_the_table(capsys):
    status, out, err = run(capsys, "-f", "3", "-z", "0.4")
    assert status == 0 and err == ""
    assert "f = 3 Hz" in out and "damping ratio = 0.4" in out
    overshoot = 100 * math.exp(-math.pi * 0.4 / math.sqrt(1 - 0.16))  # 25.38 %
    assert f"{overshoot:.4g}" in row(out, "overshoot") and "%" in row(out, "overshoot")
    assert "0.3333" in row(out, "undamped period") and row(out, "undamped period").endswith(" s")
    assert f"{1 / (3 * math.sqrt(0.84)):.4g}" in row(out, "damped period")
    settling = float(row(out, "settling time").split()[-2])
    assert 0.40 < settling < 0.50  # the last exit of the 2 % band (4/(ζω0) would say 0.53)
    # the default substep is the solver's 1/120 s
    assert "0.00833333 s" in out and "120 substeps/s" in out
    bound = 2 * (math.sqrt(0.16 + 1) - 0.4) / (2 * math.pi / 120)  # 25.86 Hz
    assert f"{bound:.4g}" in row(out, "largest stable frequency") and "Hz" in row(out, "largest stable frequency")
    assert "yes" in row(out, "stable")
    # the step oscillates ~3 % fast and decays ~7 % fast at 1/120 s (tests/sim/test_response.py measures it)
    frequency_error, decay_error = (row(out, name).split()[2:4] for name in ("frequency error", "decay error"))
    assert frequency_error[1] == "%" and 1 < float(frequency_error[0]) < 5
    assert decay_error[1] == "%" and 4 < float(decay_error[0]) < 10


def test_long_forms_match_short_ones(capsys):
    short = run(capsys, "-f", "3", "-z", "0.4", "--substep", "0.004")
    long = run(capsys, "--frequency", "3", "--damping-ratio", "0.4", "--substep", "0.004")
    assert short == long and short[0] == 0
    assert "0.004 s" in short[1] and "250 substeps/s" in short[1]


def test_no_substep_leaves_out_the_substep_rows(capsys):
    status, out, _ = run(capsys, "-f", "2", "-z", "1.5", "--no-substep")
    assert status == 0
    assert "substep" not in out and "stable" not in out
    assert "overdamped" in out and "inf" in row(out, "damped period")


def test_an_unstable_spring_is_reported_not_refused(capsys):
    status, out, _ = run(capsys, "-f", "100", "-z", "0.5")
    assert status == 0
    assert "NO" in row(out, "stable") and "frequency error" not in out


@pytest.mark.parametrize("argv, option, value", [(("-f", "-1", "-z", "0.4"), "--frequency", "-1.0"),
                                                 (("-f", "0", "-z", "0.4"), "--frequency", "0.0"),
                                                 (("-f", "3", "-z", "-0.5"), "--damping-ratio", "-0.5"),
                                                 (("-f", "3", "-z", "nan"), "--damping-ratio", "nan"),
                                                 (("-f", "inf", "-z", "1"), "--frequency", "inf"),
                                                 (("-f", "3", "-z", "1", "--substep", "0"), "--substep", "0.0")])
def test_bad_values_exit_2_with_one_line_naming_the_option(capsys, argv, option, value):
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith(f"gpu-jiggle describe: {option} {value}: expected a finite value")


@pytest.mark.parametrize("argv", [("-f", "abc", "-z", "0.4"), ("-z", "0.4"),
                                  ("-f", "3", "-z", "0.4", "--substep", "0.01", "--no-substep")])
def test_usage_errors_exit_2(capsys, argv):
    with pytest.raises(SystemExit) as info:
        cli.main(["describe", *argv])
    assert info.value.code == 2
    assert "usage: gpu-jiggle describe" in capsys.readouterr().err


def test_help_documents_the_substep_choice(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["describe", "--help"])
    assert info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--no-substep" in out and "1/120" in out and "--damping-ratio" in out

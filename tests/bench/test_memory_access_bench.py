"""``benchmarks/bench_memory_access.py``: its kernels do the same work however they reach the
memory (the loads read the same values, the stores write the same bytes), so its timings
compare like with like, and it says so only when that holds. Timings are not judged here."""
from __future__ import annotations

import pytest
from demo_support import benchmark_fixture

bench = benchmark_fixture("bench_memory_access.py")


def test_every_kernel_runs_and_the_kernels_of_a_kind_agree(bench, gl_context):
    seconds, agree = bench.run(chains=70, repeats=1)  # 70: a partial last work group
    assert agree
    assert set(seconds) == set(bench.KERNELS)
    assert all(len(times) == 1 and times[0] > 0 for times in seconds.values())


def test_a_kernel_that_writes_other_bytes_is_caught(bench, gl_context, monkeypatch):
    wrong = dict(bench.KERNELS)
    wrong["store, two vec4"] = wrong["store, two vec4"].replace("8.0 * x", "9.0 * x")
    monkeypatch.setattr(bench, "KERNELS", wrong)
    _, agree = bench.run(chains=70, repeats=1, names=tuple(wrong))
    assert not agree


@pytest.mark.parametrize("name", ["load, two image texels", "store, two vec4"])
def test_a_kernel_that_writes_nothing_is_caught(bench, gl_context, monkeypatch, name):
    idle = dict(bench.KERNELS)
    idle[name] = idle[name].replace("if (c >= CHAINS) return;", "return;")
    assert idle[name] != bench.KERNELS[name]
    monkeypatch.setattr(bench, "KERNELS", idle)
    _, agree = bench.run(chains=70, repeats=2, names=tuple(idle))
    assert not agree


def test_the_command_prints_each_kernel_and_refuses_an_unknown_name(bench, gl_context, capsys):
    assert bench.main(["--chains", "70", "--repeats", "1", "--only", "load"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in bench.KERNELS if name.startswith("load"))
    assert "store" not in out.split("\n", 1)[1].split("the kernels")[0]
    with pytest.raises(SystemExit):
        bench.main(["--only", "no such kernel"])
    assert 'the kernels: "load, struct of 8 floats"; "load, two vec4";' in capsys.readouterr().err


def test_a_whole_name_runs_that_kernel_alone(bench, gl_context, capsys):
    """"store, two vec4" is also part of the side-by-side kernel's name: given whole, it is
    that kernel alone (what the docstring's callgrind recipe needs); a part runs every match."""
    assert bench.main(["--chains", "70", "--repeats", "1", "--only", "store, two vec4"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  ")]
    assert [line.split(" ms")[0].rsplit(None, 1)[0].strip() for line in rows] == ["store, two vec4"]
    assert bench.main(["--chains", "70", "--repeats", "1", "--only", "two vec4"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("load, two vec4", "store, two vec4", "store, two vec4, chains side by side"))


def test_more_chains_than_the_context_holds_are_refused_before_anything_is_made(bench, gl_context, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--chains", str(bench.room(gl_context) + 1)])
    assert "this context holds at most" in capsys.readouterr().err

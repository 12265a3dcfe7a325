"""``benchmarks/bench_branches.py``: each of its kernels runs the arithmetic exactly where its
invocations take the branch and leaves the others as they were, so its timings compare the
same work taken by fewer lanes, and it says so only when that holds. Timings are not judged."""
from __future__ import annotations

import numpy as np
import pytest
from demo_support import benchmark_fixture

bench = benchmark_fixture("bench_branches.py")


def test_every_kernel_runs_and_does_its_work_where_the_branch_is_taken(bench, gl_context):
    seconds, agree = bench.run(invocations=700, steps=3, repeats=1)  # 700: a partial last work group
    assert agree
    assert set(seconds) == {(form, name) for form in bench.FORMS for name in bench.TAKEN}
    assert all(len(times) == 1 and times[0] > 0 for times in seconds.values())


def test_the_masks_say_which_invocations_take_it(bench):
    masks = {name: bench.taken_mask(name, 64) for name in bench.TAKEN}
    assert masks["every invocation"].all() and not masks["none"].any()
    assert np.flatnonzero(masks["one lane in 8 (each vector)"]).tolist() == list(range(0, 64, 8))
    assert np.flatnonzero(masks["every lane of one vector in 8"]).tolist() == list(range(8))


def test_a_kernel_that_takes_the_branch_elsewhere_is_caught(bench, gl_context, monkeypatch):
    expected = bench.taken_mask
    monkeypatch.setattr(bench, "taken_mask", lambda name, count: expected("every lane of one vector in 8", count)
                        if name == "one lane in 8 (each vector)" else expected(name, count))
    _, agree = bench.run(invocations=700, steps=3, repeats=1, names=("one lane in 8 (each vector)",))
    assert not agree


def test_the_command_prints_each_case_and_refuses_bad_sizes(bench, gl_context, capsys):
    assert bench.main(["--invocations", "700", "--steps", "3", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in bench.TAKEN) and "every kernel wrote what it should" in out
    with pytest.raises(SystemExit):
        bench.main(["--steps", "0"])
    assert "--steps 0" in capsys.readouterr().err

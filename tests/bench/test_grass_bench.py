"""``benchmarks/bench_grass.py``: its arguments are checked before any field is made (the
timings themselves are not judged in tests)."""
from __future__ import annotations

import pytest
from demo_support import benchmark_fixture

bench = benchmark_fixture("bench_grass.py")


@pytest.mark.parametrize("argv", [["--blades", "0"], ["--blades", "100", "-5"], ["--frames", "0"]])
def test_blade_and_frame_counts_below_one_are_refused(bench, capsys, argv):
    with pytest.raises(SystemExit) as exit_info:
        bench.main(argv)
    assert exit_info.value.code == 2
    assert "each must be at least 1" in capsys.readouterr().err

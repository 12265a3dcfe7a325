"""The README's Python examples run as written."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, gl):
    namespace = {}
    exec(compile(BLOCKS[index], f"README.md example {index + 1}", "exec"), namespace)
    if "solver" in namespace:
        assert namespace["solver"].backend == "gpu"
        assert namespace["solver"].sim_time > 4.9
    elif "godette" in namespace:  # the VRM example
        assert len(namespace["rig"].chains) == len(namespace["springs"].springs) == 8
    else:  # the character example
        assert namespace["frame"].skinning_matrices[0].shape == (24, 4, 4)


def test_readme_has_examples():
    assert len(BLOCKS) >= 3

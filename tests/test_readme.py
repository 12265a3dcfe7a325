"""The README's and docs' Python examples run as written, and the API reference (docs/API.md)
names what the solvers offer."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
CHARACTERS = (ROOT / "docs" / "CHARACTERS.md").read_text(encoding="utf-8")
API_DOC = (ROOT / "docs" / "API.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README + CHARACTERS, re.S)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, gl):
    namespace = {}
    exec(compile(BLOCKS[index], f"README.md / docs/CHARACTERS.md example {index + 1}", "exec"), namespace)
    if "solver" in namespace:
        assert namespace["solver"].backend == "gpu"
        assert namespace["solver"].sim_time > 4.9
    elif "godette" in namespace:  # the VRM example
        assert len(namespace["rig"].chains) == len(namespace["springs"].springs) == 8
    else:  # the character example
        assert namespace["frame"].skinning_matrices[0].shape == (24, 4, 4)


def test_readme_has_examples():
    assert len(re.findall(r"```python\n", README)) >= 2 and len(BLOCKS) >= 4


API = API_DOC.split("\n## API\n", 1)[1].split("\n## ", 1)[0]
#: The first cell of each row of the API table: what a row names.
API_NAMES = [row[2:].split(" | ")[0] for row in API.splitlines() if row.startswith("| `")]
#: Public names of the solvers that the table leaves out: class constants and test helpers.
NOT_IN_TABLE = {"CHAIN_SET", "DIM", "FRAME_PARAMS", "KIND", "RECORDS", "chain_set_from_state", "state"}


def test_the_api_table_names_every_public_solver_name_and_only_real_ones():
    from gpu_jiggle import AngleChainSet, PointChainSet, Solver

    solvers = [Solver(AngleChainSet([1], 1.0, 2.0, 0.5), backend="cpu"), Solver(PointChainSet([1], 2.0, 0.5),
                                                                                 backend="cpu")]
    named = {name for cell in API_NAMES for name in re.findall(r"[sS]olver\.([a-z_]+)", cell)}
    assert [n for n in named if not any(hasattr(s, n) for s in solvers)] == []
    public = {n for s in solvers for n in dir(s) if not n.startswith("_")} - NOT_IN_TABLE
    assert sorted(public - named) == []


def test_the_set_parameters_rows_give_each_chain_kinds_names():
    from gpu_jiggle import AngleChainSet, PointChainSet

    rows = [re.findall(r"([a-z_]+)=…", cell) for cell in API_NAMES if cell.startswith("`solver.set_parameters(")]
    assert rows == [list(AngleChainSet.PARAMETERS), [*PointChainSet.PARAMETERS, "rest_lengths"]]


def test_live_tuning_names_what_pipeline_set_parameters_takes():
    from gpu_jiggle.character.rig.model import LIVE_PARAMETERS

    bullet = CHARACTERS.split("- **Live tuning:**", 1)[1].split("\n- ", 1)[0].split("\n\n", 1)[0]
    assert [name for name in LIVE_PARAMETERS if f"`{name}`" not in bullet] == []

"""The package's layers import only downward (docs/ARCHITECTURE.md), and the solver core imports
no GUI, plotting, video or file-format library."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "gpu_jiggle"

# layer -> the layers it may import (besides itself and the top-level helpers below)
ALLOWED = {
    "gl": set(),
    "sim": {"gl"},
    "verify": {"sim", "gl"},
    "bench": {"sim", "gl"},
    "character": {"sim", "gl"},
    "render": {"character", "sim", "gl"},
    "app": {"render", "character", "verify", "bench", "sim", "gl"},
    "data": set(),  # the bundled sample's files and their paths
}
# What every layer may take from gpu_jiggle/ itself (spec: the SPEC's citation and sections, stdlib only).
TOP_LEVEL = {"extras", "spec", "whole_files", "__version__"}
# Libraries that only the layers named may import (the core runs on numpy and moderngl).
OPTIONAL_LIBRARIES = {"glfw": {"app"}, "imgui_bundle": {"app"}, "matplotlib": {"verify", "app", "bench"},
                      "PIL": {"render", "app", "character"}, "imageio": {"render", "app"},
                      "imageio_ffmpeg": {"render", "app"}, "tqdm": {"app"},
                      "tomli": {"character"}, "DracoPy": {"character"}, "numba": {"bench"}, "warp": {"bench"},
                      "dask": {"app"}, "distributed": {"app"}}


def imports_of(path: Path):
    """(module imported, line) for every import in the file, relative ones resolved."""
    package = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)[:-1]  # the module's package
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    yield (f"{module}.{alias.name}" if not node.module else module), node.lineno
            else:
                yield node.module, node.lineno


SOURCES = sorted(p for p in PACKAGE.rglob("*.py"))


def layer_of(path: Path):
    rel = path.relative_to(PACKAGE).parts
    return rel[0] if len(rel) > 1 else None


@pytest.mark.parametrize("path", [p for p in SOURCES if layer_of(p)], ids=lambda p: str(p.relative_to(PACKAGE)))
def test_layers_import_only_downward(path):
    layer = layer_of(path)
    for module, line in imports_of(path):
        names = module.split(".")
        if names[0] == "gpu_jiggle" and len(names) > 1:
            target = names[1]
            if target in TOP_LEVEL or target == layer:
                continue
            assert target in ALLOWED[layer], f"{path.relative_to(PACKAGE)}:{line}: {layer}/ imports {module}"
        elif names[0] in OPTIONAL_LIBRARIES:
            assert layer in OPTIONAL_LIBRARIES[names[0]], \
                f"{path.relative_to(PACKAGE)}:{line}: {layer}/ imports the optional library {names[0]}"


def test_the_core_imports_no_gui_plotting_or_file_format_library():
    probe = ("import sys, numpy as np, gpu_jiggle\n"
             "from gpu_jiggle import PointChainSet, Solver\n"
             "s = Solver(PointChainSet([2], 2.0, 0.5), backend='cpu')\n"
             "s.set_pose(np.array([[0, 0, 0], [0, -1, 0], [0, -2, 0.0]])); s.advance(1 / 60)\n"
             f"print(sorted(m for m in {sorted(OPTIONAL_LIBRARIES)!r} if m in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_a_missing_extra_names_what_to_install(monkeypatch):
    from gpu_jiggle import extras

    monkeypatch.setitem(sys.modules, "glfw", None)  # as if glfw were not installed
    with pytest.raises(extras.MissingExtra, match=r"a window needs glfw, which is not installed: "
                                                  r"pip install 'gpu-jiggle\[app\]'"):
        extras.require("glfw", "a window")

"""The package's layers import only downward (docs/ARCHITECTURE.md), the character layer's wings
too, no module of the package takes part in an import circle (imports inside functions
included), and the solver core imports no GUI, plotting, video or file-format library."""
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
    """(module imported, line) for every import in the file, relative ones resolved; ``from M
    import name`` gives ``M.name`` (name may be a module of M, or a name defined in M)."""
    package = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)[:-1]  # the module's package
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            for alias in node.names:  # a name may be a module of the package
                yield f"{module}.{alias.name}", node.lineno


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


# The character layer's wings, bottom up: each imports only those before it (and sim, gl).
# The root modules (pipeline, travel, motion, crowd, groom) stand between rig and baking.
CHARACTER_WINGS = ("pose", "gltf", "rig", None, "baking")


def wing_of(parts):
    """The wing of a module of gpu_jiggle/character (its parts after "character"); None at the root."""
    return parts[0] if len(parts) > 1 and parts[0] in CHARACTER_WINGS else None


@pytest.mark.parametrize("path", [p for p in SOURCES if layer_of(p) == "character"  # not the layer's face,
                                  and p != PACKAGE / "character" / "__init__.py"],  # which hands names on
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_character_wings_import_only_downward(path):
    own = wing_of(path.relative_to(PACKAGE / "character").with_suffix("").parts)
    for module, line in imports_of(path):
        names = module.split(".")
        if names[:2] != ["gpu_jiggle", "character"] or len(names) < 3:
            continue
        wing = wing_of(names[2:])
        assert CHARACTER_WINGS.index(wing) <= CHARACTER_WINGS.index(own), \
            f"{path.relative_to(PACKAGE)}:{line}: the {own or 'root'} wing imports {module} ({wing or 'root'})"


def module_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph():
    """module -> {(module it imports, line)}, for every module of gpu_jiggle; ``from P import
    name`` counts as importing P.name where that is a module, else P."""
    modules = {module_of(p): p for p in SOURCES}
    graph = {}
    for name, path in modules.items():
        edges = graph.setdefault(name, set())
        for module, line in imports_of(path):
            while module and module not in modules:
                module = module.rpartition(".")[0]  # a name defined in a module: the module
            if module and module != name:
                edges.add((module, line))
    return graph


def test_no_module_takes_part_in_an_import_circle():
    graph = import_graph()
    state, circles = {}, []

    def visit(module, stack):
        state[module] = "open"
        stack.append(module)
        for target, _ in sorted(graph[module]):
            if state.get(target) == "open":
                circles.append(stack[stack.index(target):] + [target])
            elif target not in state:
                visit(target, stack)
        stack.pop()
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [])
    assert not circles, "import circles:\n" + "\n".join(" -> ".join(c) for c in circles)


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

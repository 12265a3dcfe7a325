"""Loading GLSL from the package: ``#include`` resolution, ``#define`` overrides, and compile
errors that name the file.

The ``.comp``/``.glsl``/``.vert``/``.frag`` files live in the project's ``shaders/`` folder
(``sim/``: the solver kernels and their shared declarations; ``draw/``: drawing), which the
wheel ships as the package ``gpu_jiggle.shaders``; a source checkout finds them beside the
package. Shaders are named by their path under that folder (``"sim/angle_chains.comp"``). An
``#include "name"`` is looked up beside the including file first, then from the shader root
(``#include "sim/point_common.glsl"`` from ``draw/``). Each included file is wrapped in
``#line 1 N`` so that line numbers in compile errors stay true, and N is mapped back to the
file name in the error message.
"""
from __future__ import annotations

import posixpath
import re
from importlib import resources
from pathlib import Path

_INCLUDE = re.compile(r'^\s*#include\s+"([^"]+)"\s*$')
_DEFINE = re.compile(r"^(\s*#define\s+)(\w+)(\s+.*)?$")
_SOURCE_TAG = re.compile(r"\b(\d+):(\d+)(\(\d+\))?")
#: A file every shader root has, to recognise one.
_ROOT_MARKER = "sim/common.glsl"


class ShaderCompileError(RuntimeError):
    """A shader failed to compile or link; the message names the file and line."""


def shader_root():
    """The folder holding the GLSL files: the installed ``gpu_jiggle.shaders`` package data,
    else ``shaders/`` beside the package in a source checkout."""
    try:
        marker = resources.files("gpu_jiggle.shaders").joinpath(_ROOT_MARKER)
        if marker.is_file():  # a namespace package's files are plain paths
            return Path(str(marker)).parents[len(Path(_ROOT_MARKER).parts) - 1]
    except ModuleNotFoundError:
        pass
    root = Path(__file__).resolve().parents[2] / "shaders"
    if not (root / _ROOT_MARKER).is_file():
        raise FileNotFoundError(f"gpu_jiggle's GLSL files were not found (looked in the package and in {root})")
    return root


def read(name: str) -> str:
    """The text of the shader file ``name`` (a path under the shader root)."""
    return shader_root().joinpath(name).read_text(encoding="utf-8")


def _include_path(including: str, name: str) -> str:
    """``name`` beside ``including`` when that file exists, else ``name`` from the root."""
    beside = posixpath.normpath(posixpath.join(posixpath.dirname(including), name))
    return beside if shader_root().joinpath(beside).is_file() else name


def source(name: str, defines: dict | None = None) -> tuple[str, list[str]]:
    """The preprocessed source of ``name`` and the list of files by ``#line`` source number.

    ``defines`` overrides ``#define NAME value`` lines of the main file; a name the file does
    not define raises ``KeyError`` (a typo must not pass silently).
    """
    files = [name]
    lines = read(name).splitlines()
    remaining = dict(defines or {})
    out = []
    for number, line in enumerate(lines, start=1):
        m = _DEFINE.match(line)
        if m and m.group(2) in remaining:
            line = f"{m.group(1)}{m.group(2)} {remaining.pop(m.group(2))}"
        inc = _INCLUDE.match(line)
        if inc:
            included = _include_path(name, inc.group(1))
            files.append(included)
            out.append(f"#line 1 {len(files) - 1}")
            out.extend(read(included).splitlines())
            out.append(f"#line {number + 1} 0")
            continue
        out.append(line)
    if remaining:
        raise KeyError(f"{name} has no #define for {', '.join(sorted(remaining))}")
    return "\n".join(out) + "\n", files


def _name_files(message: str, files: list[str]) -> str:
    def repl(m):
        index = int(m.group(1))
        if index < len(files):
            return f"{files[index]}:{m.group(2)}{m.group(3) or ''}"
        return m.group(0)
    return _SOURCE_TAG.sub(repl, message)


def compute_shader(ctx, name: str, defines: dict | None = None):
    """Compile ``name`` as a ``moderngl.ComputeShader``.

    Raises:
        ShaderCompileError: with the GL log, its source numbers replaced by file names.
        KeyError: a define that the file does not have.
    """
    text, files = source(name, defines)
    try:
        return ctx.compute_shader(text)
    except Exception as exc:  # moderngl raises its own Error type; we re-raise with file names
        raise ShaderCompileError(f"{name}: {_name_files(str(exc), files)}") from None


def program(ctx, vertex: str, fragment: str | None, vertex_defines: dict | None = None,
            fragment_defines: dict | None = None, varyings=()):
    """Compile and link a vertex + fragment program (``moderngl.Program``); ``fragment=None``
    with ``varyings`` makes a transform-feedback program.

    Raises:
        ShaderCompileError: naming the stage's file (and included files) and line.
        KeyError: a define that the file does not have.
    """
    vs, vfiles = source(vertex, vertex_defines)
    fs, ffiles = source(fragment, fragment_defines) if fragment else (None, [])
    try:
        return ctx.program(vertex_shader=vs, fragment_shader=fs, varyings=tuple(varyings))
    except Exception as exc:  # moderngl's Error; its text says which stage failed
        text = str(exc)
        files = ffiles if "fragment_shader" in text else vfiles
        raise ShaderCompileError(f"{vertex} + {fragment}: {_name_files(text, files)}") from None

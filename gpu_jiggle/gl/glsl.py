"""Loading GLSL from the package: ``#include`` resolution, ``#define`` overrides, and compile
errors that name the file.

The ``.comp``/``.glsl`` files live in the project's ``shaders/`` folder, which the wheel ships
as the package ``gpu_jiggle.shaders``; a source checkout finds them beside the package.
Each included file is wrapped in ``#line 1 N`` so that line numbers in compile errors stay
true, and N is mapped back to the file name in the error message.
"""
from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

_INCLUDE = re.compile(r'^\s*#include\s+"([^"]+)"\s*$')
_DEFINE = re.compile(r"^(\s*#define\s+)(\w+)(\s+.*)?$")
_SOURCE_TAG = re.compile(r"\b(\d+):(\d+)(\(\d+\))?")


class ShaderCompileError(RuntimeError):
    """A shader failed to compile or link; the message names the file and line."""


def shader_root():
    """The folder holding the GLSL files: the installed ``gpu_jiggle.shaders`` package data,
    else ``shaders/`` beside the package in a source checkout."""
    try:
        marker = resources.files("gpu_jiggle.shaders").joinpath("common.glsl")
        if marker.is_file():
            return Path(str(marker)).parent  # a namespace package's files are plain paths
    except ModuleNotFoundError:
        pass
    root = Path(__file__).resolve().parents[2] / "shaders"
    if not (root / "common.glsl").is_file():
        raise FileNotFoundError(f"gpu_jiggle's GLSL files were not found (looked in the package and in {root})")
    return root


def read(name: str) -> str:
    return shader_root().joinpath(name).read_text(encoding="utf-8")


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
            files.append(inc.group(1))
            out.append(f"#line 1 {len(files) - 1}")
            out.extend(read(inc.group(1)).splitlines())
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

"""Every shipped shader compiles on its own stage (a change to a shared include must not
break a stage that includes it)."""
from __future__ import annotations

import pytest

from gpu_jiggle.gl import glsl

ROOT = glsl.shader_root()
COMPUTE = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.comp"))
VERTEX = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.vert"))


@pytest.mark.parametrize("name", COMPUTE)
def test_compute_shader_compiles(gl, name):
    glsl.compute_shader(gl, name).release()


@pytest.mark.parametrize("name", VERTEX)
def test_vertex_shader_compiles(gl, name):
    fragment = name[:-5] + ".frag"
    if not (ROOT / fragment).is_file():
        program = glsl.program(gl, name, None, varyings=())
    else:
        program = glsl.program(gl, name, fragment)
    program.release()


def test_there_are_shaders():
    assert "sim/angle_chains.comp" in COMPUTE and "sim/point_chains.comp" in COMPUTE and len(VERTEX) >= 5

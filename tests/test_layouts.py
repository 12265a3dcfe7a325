"""Each std430 struct in the GLSL agrees with its numpy dtype in gpu_jiggle.sim.layouts."""
from __future__ import annotations

import re

import numpy as np
import pytest

from gpu_jiggle.gl import glsl
from gpu_jiggle.sim import layouts

# std430 base alignment and size of the scalar and vector types used in our structs.
GLSL_TYPES = {"float": (4, 4, "<f4", ()), "uint": (4, 4, "<u4", ()), "int": (4, 4, "<i4", ()),
              "vec2": (8, 8, "<f4", (2,)), "vec4": (16, 16, "<f4", (4,))}


def parse_structs(text):
    structs = {}
    for name, body in re.findall(r"struct\s+(\w+)\s*\{(.*?)\};", text, re.S):
        fields = []
        for ftype, names in re.findall(r"(\w+)\s+([\w\s,]+);", body):
            fields += [(ftype, n.strip()) for n in names.split(",")]
        structs[name] = fields
    return structs


def std430_layout(fields, structs=None):
    offset, align_max, out = 0, 4, []
    for ftype, name in fields:
        if ftype in GLSL_TYPES:
            align, size, _, _ = GLSL_TYPES[ftype]
        else:  # a struct member: std430 aligns it to its largest member
            inner, size = std430_layout(structs[ftype], structs)
            align = max(GLSL_TYPES[t][0] if t in GLSL_TYPES else 16 for t, _ in structs[ftype])
        offset = -(-offset // align) * align
        out.append((name, offset, ftype))
        offset += size
        align_max = max(align_max, align)
    return out, -(-offset // align_max) * align_max


FILES = {"common.glsl": layouts.COMMON_GLSL_STRUCTS, "angle_common.glsl": layouts.GLSL_STRUCTS,
         "point_common.glsl": layouts.POINT_GLSL_STRUCTS}
ALL_STRUCTS = {name: fields for f in FILES for name, fields in parse_structs(glsl.read(f)).items()}
ALL_DTYPES = {name: dtype for structs in FILES.values() for name, dtype in structs.items()}
CASES = [(f, name) for f, structs in FILES.items() for name in sorted(structs)]


@pytest.mark.parametrize("filename", sorted(FILES))
def test_every_struct_has_a_dtype(filename):
    assert set(parse_structs(glsl.read(filename))) == set(FILES[filename])


@pytest.mark.parametrize("filename, name", CASES)
def test_struct_matches_dtype(filename, name):
    dtype = FILES[filename][name]
    fields, size = std430_layout(ALL_STRUCTS[name], ALL_STRUCTS)
    assert dtype.itemsize == size
    assert list(dtype.names) == [f[0] for f in fields]
    for field, offset, ftype in fields:
        assert dtype.fields[field][1] == offset, field
        if ftype not in GLSL_TYPES:
            assert dtype.fields[field][0] == ALL_DTYPES[ftype], field
            continue
        base, shape = GLSL_TYPES[ftype][2:]
        assert dtype.fields[field][1] == offset, field
        assert dtype.fields[field][0] == (np.dtype((base, shape)) if shape else np.dtype(base)), field


@pytest.mark.parametrize("filename", ["angle_common.glsl", "point_common.glsl"])
def test_teleport_flags_match_the_shader(filename):
    defines = dict(re.findall(r"#define\s+TELEPORT_(\w+)\s+(\d+)u", glsl.read(filename)))
    assert int(defines["NONE"]) == layouts.TELEPORT_NONE
    assert int(defines["SNAP"]) == layouts.TELEPORT_SNAP
    assert int(defines["KEEP_SHAPE"]) == layouts.TELEPORT_KEEP_SHAPE


def test_shader_errors_name_the_file(gl):
    with pytest.raises(glsl.ShaderCompileError, match=r"angle_chains.comp"):
        glsl.compute_shader(gl, "angle_chains.comp", {"LOCAL_SIZE": "not_a_number"})
    with pytest.raises(KeyError, match="NO_SUCH_DEFINE"):
        glsl.source("angle_chains.comp", {"NO_SUCH_DEFINE": 1})


def test_lod_values_match_the_shader():
    defines = dict(re.findall(r"#define\s+LOD_(\w+)\s+(\d+)u", glsl.read("common.glsl")))
    assert (int(defines["FULL"]), int(defines["HALF"]), int(defines["FROZEN"])) == \
        (layouts.LOD_FULL, layouts.LOD_HALF, layouts.LOD_FROZEN)

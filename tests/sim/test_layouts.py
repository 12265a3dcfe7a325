"""Each std430 struct in the GLSL agrees with its numpy dtype in gpu_jiggle.sim.layouts, and
each storage buffer's binding with its number there."""
from __future__ import annotations

import re

import numpy as np
import pytest

from gpu_jiggle.gl import glsl
from gpu_jiggle.sim import layouts

# std430 base alignment and size of the scalar and vector types used in our structs.
GLSL_TYPES = {"float": (4, 4, "<f4", ()), "uint": (4, 4, "<u4", ()), "int": (4, 4, "<i4", ()),
              "vec2": (8, 8, "<f4", (2,)), "vec3": (16, 12, "<f4", (3,)), "vec4": (16, 16, "<f4", (4,)),
              "double": (8, 8, "<f8", ()), "dvec4": (32, 32, "<f8", (4,))}
# Structs that live in registers only (returned by functions), never in a storage buffer.
REGISTER_STRUCTS = {"PathWeights", "SubstepRange"}


def parse_structs(text):
    structs = {}
    for name, body in re.findall(r"struct\s+(\w+)\s*\{(.*?)\};", text, re.S):
        if name in REGISTER_STRUCTS:
            continue
        fields = []
        for ftype, names in re.findall(r"(\w+)\s+([\w\s,\[\]]+);", body):
            fields += [(ftype, n.strip()) for n in names.split(",")]
        structs[name] = fields
    return structs


def array_of(name):
    """``"anchor[3]"`` → ("anchor", 3); ``"lod"`` → ("lod", 0)."""
    found = re.fullmatch(r"(\w+)\s*\[\s*(\d+)\s*\]", name)
    return (found[1], int(found[2])) if found else (name, 0)


def std430_layout(fields, structs=None):
    offset, align_max, out = 0, 4, []
    for ftype, name in fields:
        name, count = array_of(name)
        if count:  # std430: an array of scalars is aligned and strided as one
            align, size = GLSL_TYPES[ftype][0], count * GLSL_TYPES[ftype][1]
            assert GLSL_TYPES[ftype][3] == (), "arrays of vectors are not used"
        elif ftype in GLSL_TYPES:
            align, size, _, _ = GLSL_TYPES[ftype]
        else:  # a struct member: std430 aligns it to its largest member
            inner, size = std430_layout(structs[ftype], structs)
            align = max(GLSL_TYPES[t][0] if t in GLSL_TYPES else 16 for t, _ in structs[ftype])
        offset = -(-offset // align) * align
        out.append((name, offset, ftype, count))
        offset += size
        align_max = max(align_max, align)
    return out, -(-offset // align_max) * align_max


FILES = {"sim/common.glsl": layouts.COMMON_GLSL_STRUCTS, "sim/angle_common.glsl": layouts.ANGLE_GLSL_STRUCTS,
         "sim/point_common.glsl": layouts.POINT_GLSL_STRUCTS}
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
    for field, offset, ftype, count in fields:
        assert dtype.fields[field][1] == offset, field
        if ftype not in GLSL_TYPES:
            assert dtype.fields[field][0] == ALL_DTYPES[ftype], field
            continue
        base, shape = GLSL_TYPES[ftype][2:]
        shape = (count,) if count else shape
        assert dtype.fields[field][0] == (np.dtype((base, shape)) if shape else np.dtype(base)), field


def parse_bindings(text):
    """Buffer variable name → binding number, from ``layout(std430, binding = N) ... { T name[]; }``
    (the first array of the block names it, e.g. ``chain_rig`` or ``alphas`` after ``params``;
    ``chain_rig_words``, the buffer declared as vectors, names ``chain_rig``)."""
    found = {}
    for binding, body in re.findall(r"layout\(std430,\s*binding\s*=\s*(\d+)\)[^{]*\{([^}]*)\}", text):
        names = re.findall(r"\b(\w+)(?:\[\d*\])?;", body)
        found[names[0].removesuffix("_words")] = int(binding)
    return found


@pytest.mark.parametrize("filename, bindings", [("sim/angle_common.glsl", layouts.ANGLE_BINDINGS),
                                                ("sim/point_common.glsl", layouts.POINT_BINDINGS)])
def test_bindings_match_the_shader(filename, bindings):
    assert parse_bindings(glsl.read(filename)) == bindings


@pytest.mark.parametrize("filename, blocks, records, header", [
    ("sim/angle_common.glsl", layouts.ANGLE_UNIFORM_BLOCKS, (layouts.ANGLE_FRAME_PARAMS,), layouts.ANGLE_FRAME_PARAMS),
    ("sim/point_common.glsl", layouts.POINT_UNIFORM_BLOCKS, (layouts.POINT_FRAME_PARAMS, layouts.SPHERE_COLLIDER,
                                                             layouts.CAPSULE_COLLIDER, layouts.PLANE_COLLIDER),
     layouts.POINT_FRAME_PARAMS)])
def test_uniform_blocks_match_the_shader(filename, blocks, records, header):
    """A kernel's uniform blocks at its UNIFORM_BLOCKS' bindings, each the view of the storage
    buffer of that name (the header of the frame buffer, declared there as as many uvec4s as
    the header has bytes / 16; the colliders' records), with a layout the same in both forms."""
    text = glsl.read(filename)
    found = re.findall(r"layout\(std140,\s*binding\s*=\s*(\d+)\)\s*uniform\s+\w+\s*\{\s*(\w+)\s+(\w+)", text)
    names = {name.removesuffix("_block") + ("s" if name.endswith("_block") else ""): int(binding)
             for binding, _, name in found}
    assert names == blocks
    assert {record for _, record, _ in found} == {name for name, dtype in
                                                  {**layouts.ANGLE_GLSL_STRUCTS, **layouts.POINT_GLSL_STRUCTS}.items()
                                                  if any(dtype is r for r in records)}
    words = re.search(r"\{\s*uvec4 params_words\[(\d+)\];", text)
    assert int(words.group(1)) * 16 == header.itemsize
    for record in records:  # where std140 and std430 differ: arrays, structs
        assert record.itemsize % 16 == 0, record
        for name in record.names:
            sub, offset = record.fields[name][:2]
            if sub.fields:  # a struct: std140 rounds its place and size to 16 bytes
                assert offset % 16 == 0 and sub.itemsize % 16 == 0, name
            elif sub.shape:  # an array: std140 strides its elements 16 bytes; a vec4 or dvec4 is no array
                assert sub.shape == (4,), name


def test_textures_match_the_shader():
    """Every record texture of ANGLE_TEXTURES is declared with its row shift, and no other."""
    text = glsl.read("sim/angle_common.glsl")
    assert set(re.findall(r"uniform\s+usampler2D\s+(\w+)_texels;", text)) == set(layouts.ANGLE_TEXTURES)
    assert set(re.findall(r"uniform\s+uint\s+(\w+)_row_shift;", text)) == set(layouts.ANGLE_TEXTURES)
    assert not set(layouts.ANGLE_TEXTURES) & set(layouts.ANGLE_BINDINGS)


def test_drawing_reads_the_solver_buffers_at_their_bindings():
    defaults = dict(re.findall(r"#define\s+(\w+)_BINDING\s+(\d+)", glsl.read("draw/point_draw.glsl")))
    assert {name.lower(): int(n) for name, n in defaults.items()} == \
        {name: layouts.POINT_BINDINGS[name] for name in ("chain_rig", "chain_output", "joint_output")}


def test_teleport_flags_match_the_shader():
    defines = dict(re.findall(r"#define\s+TELEPORT_(\w+)\s+(\d+)u", glsl.read("sim/common.glsl")))
    assert int(defines["NONE"]) == layouts.TELEPORT_NONE
    assert int(defines["SNAP"]) == layouts.TELEPORT_SNAP
    assert int(defines["KEEP_SHAPE"]) == layouts.TELEPORT_KEEP_SHAPE


def test_shader_errors_name_the_file(gl):
    with pytest.raises(glsl.ShaderCompileError, match=r"angle_chains.comp"):
        glsl.compute_shader(gl, "sim/angle_chains.comp", {"LOCAL_SIZE": "not_a_number"})
    with pytest.raises(KeyError, match="NO_SUCH_DEFINE"):
        glsl.source("sim/angle_chains.comp", {"NO_SUCH_DEFINE": 1})


def test_lod_values_match_the_shader():
    defines = dict(re.findall(r"#define\s+LOD_(\w+)\s+(\d+)u", glsl.read("sim/common.glsl")))
    assert (int(defines["FULL"]), int(defines["HALF"]), int(defines["FROZEN"])) == \
        (layouts.LOD_FULL, layouts.LOD_HALF, layouts.LOD_FROZEN)


def test_the_root_watch_marks_a_frame_not_judged_as_the_host_reads_it():
    value = re.search(r"#define\s+ROOT_NOT_JUDGED\s+(\S+)", glsl.read("sim/angle_common.glsl")).group(1)
    assert float(value) == layouts.ROOT_NOT_JUDGED < 0.0


def test_limit_kinds_and_constants_match_the_shader():
    defines = dict(re.findall(r"#define\s+LIMIT_(\w+)\s+(\d+)u", glsl.read("sim/point_common.glsl")))
    assert {k: int(v) for k, v in defines.items()} == {"NONE": layouts.LIMIT_NONE, "CONE": layouts.LIMIT_CONE,
                                                       "HINGE": layouts.LIMIT_HINGE,
                                                       "SPHERICAL": layouts.LIMIT_SPHERICAL}
    from gpu_jiggle.sim.backends.reference import point_limits as reference_limits
    source = glsl.read("sim/point_limits.glsl")
    assert int(re.search(r"#define\s+ELLIPSE_BISECTIONS\s+(\d+)u", source).group(1)) == \
        reference_limits.ELLIPSE_BISECTIONS
    assert float(re.search(r"HINGE_PLANE_TOLERANCE\s*=\s*([0-9.e-]+);", source).group(1)) == \
        pytest.approx(float(reference_limits.HINGE_PLANE_TOLERANCE), rel=1e-6)

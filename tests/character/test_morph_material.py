"""Reading morph targets, their weights and materials from glTF files: defaults, the weights a
node or an animation gives (STEP, LINEAR, CUBICSPLINE), colours, and bad values refused with
the JSON pointer."""
from __future__ import annotations

import base64
import json
import math

import numpy as np
import pytest

from gpu_jiggle.character.gltf.loader import Character, GltfError
from gpu_jiggle.character.gltf.material import CLAMP_TO_EDGE, MIRRORED_REPEAT, uv_transform
from gpu_jiggle.character.gltf.morph import morphed_positions
from gpu_jiggle.character.pipeline import Pipeline

TRIANGLE = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], np.float32)
UP = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]], np.float32)    # target 0 lifts the top
OUT = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]], np.float32)   # target 1 stretches the right
PNG_1x1 = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def document(material=None, weights=None, node_weights=None, animation=None, colours=None):
    """A triangle with two morph targets (``UP``, ``OUT``); ``animation``: (interpolation,
    times, values) of a weights channel."""
    blob = bytearray()
    accessors, views = [], []

    def add(values, kind, component=5126, normalized=False):
        data = np.ascontiguousarray(values)
        blob.extend(b"\0" * (-len(blob) % 4))
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": data.nbytes})
        blob.extend(data.tobytes())
        acc = {"bufferView": len(views) - 1, "componentType": component, "count": len(data), "type": kind}
        if normalized:
            acc["normalized"] = True
        if kind == "SCALAR" and component == 5126:
            acc["min"], acc["max"] = [float(data.min())], [float(data.max())]
        if kind == "VEC3" and component == 5126:
            acc["min"], acc["max"] = data.min(axis=0).tolist(), data.max(axis=0).tolist()
        accessors.append(acc)
        return len(accessors) - 1

    attributes = {"POSITION": add(TRIANGLE, "VEC3"), "TEXCOORD_0": add(np.zeros((3, 2), np.float32), "VEC2")}
    if colours is not None:
        values, component = colours
        attributes["COLOR_0"] = add(values, f"VEC{values.shape[1]}", component, component != 5126)
    prim = {"attributes": attributes, "targets": [{"POSITION": add(UP, "VEC3")}, {"POSITION": add(OUT, "VEC3")}]}
    doc = {"asset": {"version": "2.0"}, "scenes": [{"nodes": [0]}], "scene": 0,
           "nodes": [{"mesh": 0}], "meshes": [{"primitives": [prim]}], "accessors": accessors, "bufferViews": views}
    if material is not None:
        prim["material"] = 0
        doc["materials"] = [material]
        doc["images"] = [{"uri": "data:image/png;base64," + PNG_1x1}]
        doc["textures"] = [{"source": 0, "sampler": 0}]
        doc["samplers"] = [{}]
    if weights is not None:
        doc["meshes"][0]["weights"] = weights
    if node_weights is not None:
        doc["nodes"][0]["weights"] = node_weights
    if animation is not None:
        interpolation, times, values = animation
        sampler = {"input": add(np.asarray(times, np.float32), "SCALAR"),
                   "output": add(np.asarray(values, np.float32).reshape(-1), "SCALAR"), "interpolation": interpolation}
        doc["animations"] = [{"name": "morph", "samplers": [sampler],
                              "channels": [{"sampler": 0, "target": {"node": 0, "path": "weights"}}]}]
    doc["buffers"] = [{"byteLength": len(blob),
                       "uri": "data:application/octet-stream;base64," + base64.b64encode(bytes(blob)).decode()}]
    return doc


def load(tmp_path, doc) -> Character:
    path = tmp_path / "morph.gltf"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return Character.load(path)


# -- morph targets and their weights --------------------------------------------------------------
def test_targets_and_default_weights(tmp_path):
    mesh = load(tmp_path, document()).meshes[0]
    assert mesh.morph_positions.shape == (2, 3, 3) and mesh.morph_positions.dtype == np.float32
    np.testing.assert_array_equal(mesh.morph_weights, [0.0, 0.0])  # no weights anywhere: zeros
    assert mesh.morph_normals is not None, "normals computed from the triangles get computed offsets too"
    np.testing.assert_allclose(morphed_positions(mesh, [1.0, 0.5]), TRIANGLE + UP + 0.5 * OUT)
    with pytest.raises(ValueError, match="expected 2 morph weights"):
        morphed_positions(mesh, [1.0])


def test_node_weights_replace_the_mesh_weights(tmp_path):
    """glTF 2.0 section 3.7.2.2: a node's weights win over its mesh's."""
    assert load(tmp_path, document(weights=[0.25, 0.5])).meshes[0].morph_weights.tolist() == [0.25, 0.5]
    mesh = load(tmp_path, document(weights=[0.25, 0.5], node_weights=[1.0, 0.0])).meshes[0]
    assert mesh.morph_weights.tolist() == [1.0, 0.0]


@pytest.mark.parametrize("doc, pointer", [(document(weights=[0.5]), "/meshes/0/weights"),
                                          (document(node_weights=[0.5, 0.5, 0.5]), "/nodes/0/weights")])
def test_weights_of_the_wrong_length_are_refused(tmp_path, doc, pointer):
    with pytest.raises(GltfError, match="weights for a mesh with 2 morph targets") as caught:
        load(tmp_path, doc)
    assert caught.value.pointer == pointer


def test_primitives_with_different_target_counts_are_refused(tmp_path):
    doc = document()
    prim = dict(doc["meshes"][0]["primitives"][0])
    prim["targets"] = prim["targets"][:1]
    doc["meshes"][0]["primitives"].append(prim)
    doc["animations"] = []
    with pytest.raises(GltfError, match="primitives with 1 and 2 morph targets"):
        load(tmp_path, doc)


@pytest.mark.parametrize("interpolation, times, values, t, expected", [
    ("STEP", [0.0, 1.0], [[0.0, 1.0], [1.0, 0.0]], 0.99, [0.0, 1.0]),
    ("STEP", [0.0, 1.0], [[0.0, 1.0], [1.0, 0.0]], 1.0, [1.0, 0.0]),
    ("LINEAR", [0.0, 2.0], [[0.0, 1.0], [1.0, 0.0]], 0.5, [0.25, 0.75]),
    # CUBICSPLINE keys: (in-tangents, values, out-tangents) per key; td = 2, s = 0.25:
    # (2s³-3s²+1)·v0 + td(s³-2s²+s)·b0 + (-2s³+3s²)·v1 + td(s³-s²)·a1
    ("CUBICSPLINE", [0.0, 2.0], [[0, 0], [0, 1], [1, 0], [0, 2], [1, 0], [0, 0]], 0.5,
     [0.28125 + 0.15625, 0.84375 - 0.09375 * 2]),
])
def test_animated_weights_follow_the_gltf_sampling_rules(tmp_path, interpolation, times, values, t, expected):
    """A weights channel replaces the default weights and is sampled like any channel (glTF
    2.0 section 3.11 and Appendix C); the frame carries the result for the renderer."""
    character = load(tmp_path, document(weights=[0.5, 0.5], animation=(interpolation, times, values)))
    with Pipeline(character, None, "morph", loop=False) as pipeline:
        np.testing.assert_allclose(pipeline.morph_weights(t)[0], expected, atol=1e-6)
        np.testing.assert_allclose(pipeline.step(t, 0.0).morph_weights[0], expected, atol=1e-6)
    with Pipeline(character, None, None) as still:
        np.testing.assert_allclose(still.step(0.0, 0.0).morph_weights[0], [0.5, 0.5])


# -- colours ---------------------------------------------------------------------------------------
def test_colours_float_rgb_and_normalised_rgba(tmp_path):
    rgb = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], np.float32)
    mesh = load(tmp_path, document(colours=(rgb, 5126))).meshes[0]
    np.testing.assert_array_equal(mesh.colors, np.c_[rgb, np.ones(3)])
    shorts = np.array([[65535, 0, 0, 65535], [0, 32768, 0, 0], [0, 0, 65535, 65535]], np.uint16)
    mesh = load(tmp_path, document(colours=(shorts, 5123))).meshes[0]
    np.testing.assert_allclose(mesh.colors, shorts / 65535.0, atol=1e-6)
    assert mesh.colors.dtype == np.float32 and mesh.colors.shape == (3, 4)


# -- materials -------------------------------------------------------------------------------------
def test_material_defaults_and_values(tmp_path):
    mesh = load(tmp_path, document()).meshes[0]
    m = mesh.material
    assert (m.alpha_mode, m.alpha_cutoff, m.double_sided, m.unlit) == ("OPAQUE", 0.5, False, False)
    texture = {"index": 0, "texCoord": 0,
               "extensions": {"KHR_texture_transform": {"offset": [0.5, 0.25], "rotation": math.pi / 2,
                                                        "scale": [2.0, 3.0]}}}
    doc = document(material={"alphaMode": "MASK", "alphaCutoff": 0.3, "doubleSided": True,
                             "extensions": {"KHR_materials_unlit": {}},
                             "pbrMetallicRoughness": {"baseColorFactor": [0.5, 0.25, 1.0, 0.75],
                                                      "baseColorTexture": texture}})
    doc["samplers"][0] = {"wrapS": CLAMP_TO_EDGE, "wrapT": MIRRORED_REPEAT, "magFilter": 9728, "minFilter": 9729}
    m = load(tmp_path, doc).meshes[0].material
    assert (m.alpha_mode, m.alpha_cutoff, m.double_sided, m.unlit) == ("MASK", 0.3, True, True)
    assert m.base_color_factor.tolist() == [0.5, 0.25, 1.0, 0.75] and m.base_color_texture.shape == (1, 1, 4)
    assert m.wrap == (CLAMP_TO_EDGE, MIRRORED_REPEAT) and (m.mag_filter, m.min_filter) == (9728, 9729)
    assert not m.mipmaps
    # T · R · S on (u, v) = (1, 0): scaled to (2, 0), turned a quarter to (0, -2), moved to (0.5, -1.75)
    np.testing.assert_allclose(m.uv_transform @ [1.0, 0.0, 1.0], [0.5, -1.75, 1.0], atol=1e-12)
    np.testing.assert_allclose(uv_transform(), np.eye(3))


@pytest.mark.parametrize("change, pointer, message", [
    ({"alphaMode": "CLEAR"}, "/materials/0/alphaMode", "expected one of OPAQUE, MASK, BLEND"),
    ({"alphaCutoff": -0.5}, "/materials/0/alphaCutoff", "expected a finite number >= 0"),
    ({"doubleSided": "yes"}, "/materials/0/doubleSided", "expected true or false"),
    ({"pbrMetallicRoughness": {"baseColorFactor": [1.5, 0, 0, 1]}},
     "/materials/0/pbrMetallicRoughness/baseColorFactor", r"in \[0, 1\]"),
    ({"pbrMetallicRoughness": {"baseColorTexture": {"index": 0, "texCoord": 1}}}, "/materials/0",
     "reads TEXCOORD_1, which mesh 0 primitive 0 does not have"),
    ({"pbrMetallicRoughness": {"baseColorTexture": {"index": 0, "extensions": {
        "KHR_texture_transform": {"offset": [0.5]}}}}},
     "/materials/0/pbrMetallicRoughness/baseColorTexture/extensions/KHR_texture_transform/offset",
     "expected a list of 2 finite numbers"),
])
def test_bad_material_values_are_refused_with_their_pointer(tmp_path, change, pointer, message):
    with pytest.raises(GltfError, match=message) as caught:
        load(tmp_path, document(material=change))
    assert caught.value.pointer == pointer


def test_bad_sampler_values_are_refused(tmp_path):
    doc = document(material={"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}})
    doc["samplers"][0] = {"wrapS": 1234}
    with pytest.raises(GltfError, match=r"wrapS = 1234: expected 10497 \(REPEAT\)") as caught:
        load(tmp_path, doc)
    assert caught.value.pointer == "/samplers/0/wrapS"

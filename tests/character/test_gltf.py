"""glTF loading on the Khronos Fox: skeleton, skin, mesh, texture, clips, the rest pose, the
.gltf/.glb/external-buffer variants of one file, and clear errors for bad files."""
from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from gpu_jiggle.character.baking.gltf import glb as _glb
from gpu_jiggle.character.gltf.loader import Character, GltfError
from demo_support import FOX


def _fox_json():
    return json.loads(FOX.read_text(encoding="utf-8"))


def _fox_blob(doc):
    uri = doc["buffers"][0]["uri"]
    return base64.b64decode(uri.partition(",")[2])


def test_fox_skeleton_skin_and_clips(fox):
    sk = fox.skeleton
    assert len(fox.skins) == 1 and len(fox.skin.joints) == 24
    tail = [sk.index(n) for n in ("b_Hip_01", "b_Tail01_012", "b_Tail02_013", "b_Tail03_014")]
    assert [int(sk.parents[j]) for j in tail[1:]] == tail[:-1]
    assert sk.parents[sk.index("b_Head_05")] == sk.index("b_Neck_04")
    assert fox.clip_names == ["Survey", "Walk", "Run"]
    durations = {c.name: round(c.duration, 2) for c in fox.clips}
    assert durations == {"Survey": 3.42, "Walk": 0.71, "Run": 1.16}
    # every node comes after its parent in the evaluation order
    position = np.empty(sk.node_count, int)
    position[sk.order] = np.arange(sk.node_count)
    assert all(p < 0 or position[p] < position[i] for i, p in enumerate(sk.parents))


def test_fox_mesh_arrays(fox):
    (mesh,) = fox.meshes
    v = len(mesh.positions)
    assert mesh.positions.shape == (v, 3) and mesh.positions.dtype == np.float32
    assert mesh.normals.shape == (v, 3) and mesh.normals.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(mesh.normals, axis=1), 1.0, atol=1e-5)
    assert mesh.uvs.shape == (v, 2) and mesh.joints.shape == (v, 4) and mesh.joints.dtype == np.uint16
    assert mesh.joints.max() < 24
    np.testing.assert_allclose(mesh.weights.sum(axis=1), 1.0, atol=1e-6)
    assert mesh.indices.dtype == np.uint32 and mesh.indices.size % 3 == 0 and mesh.indices.max() < v
    assert mesh.base_color_texture.shape == (1024, 1024, 4) and mesh.base_color_texture.dtype == np.uint8
    assert mesh.skin == 0
    extent = mesh.positions.max(axis=0) - mesh.positions.min(axis=0)
    assert 140 < extent[2] < 170  # about 155 units nose to tail


def test_rest_pose_world_times_inverse_bind_is_identity(fox):
    world = fox.skeleton.world_matrices(fox.skeleton.rest_pose())
    skinning = fox.skin.skinning_matrices(world)
    np.testing.assert_allclose(skinning, np.broadcast_to(np.eye(4), skinning.shape), atol=1e-4)


def _same_data(a, b):
    assert a.skeleton.names == b.skeleton.names
    np.testing.assert_array_equal(a.skin.inverse_bind_matrices, b.skin.inverse_bind_matrices)
    for name in ("positions", "normals", "uvs", "joints", "weights", "indices", "base_color_texture"):
        np.testing.assert_array_equal(getattr(a.meshes[0], name), getattr(b.meshes[0], name))
    for ca, cb in zip(a.clips, b.clips):
        for x, y in zip(ca.channels, cb.channels):
            np.testing.assert_array_equal(x.sampler.values, y.sampler.values)


def test_glb_and_external_buffer_give_the_same_data(fox, tmp_path):
    doc = _fox_json()
    blob = _fox_blob(doc)
    glb_doc = json.loads(json.dumps(doc))
    del glb_doc["buffers"][0]["uri"]
    (tmp_path / "fox.glb").write_bytes(_glb(glb_doc, blob))
    _same_data(fox, Character.load(tmp_path / "fox.glb"))

    ext = json.loads(json.dumps(doc))
    ext["buffers"][0]["uri"] = "fox%20data.bin"  # percent-encoded, as URIs are
    (tmp_path / "fox data.bin").write_bytes(blob)
    (tmp_path / "fox.gltf").write_text(json.dumps(ext))
    _same_data(fox, Character.load(tmp_path / "fox.gltf"))


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing.glb: no such glTF file"):
        Character.load(tmp_path / "nothing.glb")


def test_missing_external_buffer(tmp_path):
    doc = _fox_json()
    doc["buffers"][0]["uri"] = "gone.bin"
    (tmp_path / "fox.gltf").write_text(json.dumps(doc))
    with pytest.raises(FileNotFoundError, match="buffer 0 refers to 'gone.bin'"):
        Character.load(tmp_path / "fox.gltf")


@pytest.mark.parametrize("cut", [5, 20, 5000, -100])
def test_truncated_glb(tmp_path, cut):
    doc = _fox_json()
    blob = _fox_blob(doc)
    del doc["buffers"][0]["uri"]
    data = _glb(doc, blob)
    (tmp_path / "cut.glb").write_bytes(data[:cut])
    with pytest.raises(GltfError, match=r"cut\.glb: truncated binary glTF"):
        Character.load(tmp_path / "cut.glb")


def test_truncated_and_non_gltf_files(tmp_path):
    text = FOX.read_text(encoding="utf-8")
    (tmp_path / "cut.gltf").write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match=r"cut\.gltf: not a glTF file: this file is not valid JSON"):
        Character.load(tmp_path / "cut.gltf")
    (tmp_path / "photo.glb").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    with pytest.raises(ValueError, match=r"photo\.glb: not a glTF file"):
        Character.load(tmp_path / "photo.glb")
    (tmp_path / "data.gltf").write_text('{"meshes": []}')
    with pytest.raises(ValueError, match=r"data\.gltf: not a glTF file: the JSON has no 'asset' object"):
        Character.load(tmp_path / "data.gltf")
    (tmp_path / "old.gltf").write_text('{"asset": {"version": "1.0"}}')
    with pytest.raises(ValueError, match="only glTF 2.x"):
        Character.load(tmp_path / "old.gltf")


def test_buffer_shorter_than_declared(tmp_path):
    doc = _fox_json()
    blob = _fox_blob(doc)
    doc["buffers"][0]["uri"] = "data:application/octet-stream;base64," + base64.b64encode(blob[:1000]).decode()
    (tmp_path / "short.gltf").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"short\.gltf: buffer 0 holds 1000 bytes but declares byteLength"):
        Character.load(tmp_path / "short.gltf")


def test_malformed_structure_is_named(tmp_path):
    doc = _fox_json()
    doc["nodes"] = "not a list"
    (tmp_path / "bad.gltf").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"bad\.gltf: malformed glTF: 'nodes' must be a list of objects"):
        Character.load(tmp_path / "bad.gltf")
    doc = _fox_json()
    doc["accessors"][0]["bufferView"] = 99
    (tmp_path / "view.gltf").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"view\.gltf: accessor 0 refers to bufferView 99, which does not exist"):
        Character.load(tmp_path / "view.gltf")


def test_unknown_clip_lists_the_clips(fox):
    with pytest.raises(ValueError, match="no animation called 'Jump'; the file's animations are: Survey, Walk, Run"):
        fox.clip("Jump")


@pytest.mark.parametrize("misspelt, meant", [("run", "Run"), ("Wlak", "Walk"), ("survey", "Survey")])
def test_a_misspelt_clip_names_the_closest_alone(fox, misspelt, meant):
    with pytest.raises(ValueError, match=rf"^Fox\.gltf: no animation called '{misspelt}'; did you mean '{meant}'\?$"):
        fox.clip(misspelt)


def test_a_misspelt_node_names_the_closest(fox):
    with pytest.raises(ValueError, match=r"^unknown joint 'b_Head05'; did you mean 'b_Head_05'\?$"):
        fox.skeleton.index("b_Head05")

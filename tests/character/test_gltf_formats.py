"""What glTF 2.0 lets a file store besides plain floats, read right: sparse accessors,
normalized integers (glTF 2.0 sections 3.6.2.3 and 3.11), KHR_mesh_quantization and
KHR_draco_mesh_compression (DracoPy, the [draco] extra). Each small file is built here and
checked by the Khronos validator first, so the test reads what glTF means, not what this
loader happens to do."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from gpu_jiggle.character.gltf import draco as gltf_draco
from gpu_jiggle.character.baking.run import bake
from gpu_jiggle.character.gltf.loader import Character, GltfError
from gpu_jiggle.character.rig.reader import rig_from_dict
from gltf_build import BYTE, FLOAT, SHORT, UBYTE, USHORT, Builder, skinned_strip, strip_rig, write
from gltf_validator import assert_valid

CORPUS = Path(__file__).resolve().parents[1] / "data" / "khronos"
STRIP = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 2, 0], [1, 2, 0]], np.float32)


def _loaded(tmp_path, doc, validator, name="model.gltf") -> Character:
    path = write(tmp_path, doc, name)
    assert_valid(path, validator)
    return Character.load(path)


def test_sparse_accessors(tmp_path, gltf_validator):
    b = Builder()
    base = b.accessor(STRIP, target=34962)
    moved = STRIP.copy()
    moved[1], moved[4] = [5, 0, 0], [0, 7, 0]
    b.accessors[base].update(min=moved.min(0).tolist(), max=moved.max(0).tolist(), sparse={
        "count": 2, "indices": {"bufferView": b.view(np.array([1, 4], np.uint8).tobytes()), "componentType": UBYTE},
        "values": {"bufferView": b.view(np.array([[5, 0, 0], [0, 7, 0]], np.float32).tobytes())}})
    # without a bufferView a sparse accessor is zeros but for its sparse values: here a morph target
    offsets = len(b.accessors)
    b.accessors.append({"componentType": FLOAT, "count": 6, "type": "VEC3", "min": [0, 0, 0], "max": [0, 0, 2],
                        "sparse": {"count": 1, "indices": {"bufferView": b.view(np.array([5], np.uint16).tobytes()),
                                                           "componentType": USHORT},
                                   "values": {"bufferView": b.view(np.array([[0, 0, 2]], np.float32).tobytes())}}})
    doc = skinned_strip(b, positions=base)
    doc["meshes"][0]["primitives"][0]["targets"] = [{"POSITION": offsets}]
    character = _loaded(tmp_path, doc, gltf_validator)
    np.testing.assert_array_equal(character.meshes[0].positions, moved)
    expected = np.zeros((6, 3), np.float32)
    expected[5] = [0, 0, 2]
    np.testing.assert_array_equal(character.accessor(offsets), expected)


def test_normalized_integers(tmp_path, gltf_validator):
    b = Builder()
    uv = np.array([[0, 255], [51, 102], [255, 0], [1, 2], [128, 64], [254, 3]])
    texcoords = b.accessor(uv, UBYTE, normalized=True, stride=4, target=34962)  # rows 4-byte aligned
    weights = b.accessor(np.array([[65535, 0, 0, 0]] * 6), USHORT, normalized=True, target=34962)
    # key rotations as normalized shorts: c / 32767, and -32768 is -1 (section 3.11)
    shorts = np.array([[0, 0, 0, 32767], [0, 0, 12539, 30273], [0, 0, -32768, 0], [0, 0, -12539, 30273],
                       [0, 0, 0, 32767]])
    rotations = b.accessor(shorts, SHORT, normalized=True)
    doc = skinned_strip(b, attributes={"TEXCOORD_0": texcoords}, weights=weights, rotations=rotations)
    character = _loaded(tmp_path, doc, gltf_validator)
    mesh = character.meshes[0]
    np.testing.assert_array_equal(mesh.uvs, (uv / np.float32(255)).astype(np.float32))
    np.testing.assert_array_equal(mesh.weights[:, 0], 1.0)
    (channel,) = character.clip("wave").channels
    np.testing.assert_allclose(channel.sampler.values, np.maximum(shorts / 32767.0, -1.0), rtol=1e-7)
    assert channel.sampler.values[2, 2] == -1.0


def _quantized(b: Builder):
    """The strip with KHR_mesh_quantization: positions as SHORTs (the node's scale takes them
    back to the model's unit), normals as normalized BYTEs, texcoords as normalized USHORTs."""
    positions = b.accessor(STRIP * 1000, SHORT, bounds=True, stride=8, target=34962)
    normals = b.accessor(np.tile([0, 0, 127], (6, 1)), BYTE, normalized=True, stride=4, target=34962)
    uv = b.accessor(np.array([[0, 0], [65535, 0], [0, 32768], [65535, 32768], [0, 65535], [65535, 65535]]),
                    USHORT, normalized=True, target=34962)
    offsets = b.accessor(np.tile([0, 127, -127], (6, 1)), BYTE, normalized=True, stride=4, bounds=True)
    doc = skinned_strip(b, positions=positions, attributes={"NORMAL": normals, "TEXCOORD_0": uv})
    doc["meshes"][0]["primitives"][0]["targets"] = [{"POSITION": offsets}]  # a morph target of byte offsets
    doc["extensionsUsed"] = doc["extensionsRequired"] = ["KHR_mesh_quantization"]
    return doc, positions


def test_khr_mesh_quantization(tmp_path, gltf_validator):
    doc, _ = _quantized(Builder())
    character = _loaded(tmp_path, doc, gltf_validator)
    mesh = character.meshes[0]
    np.testing.assert_array_equal(mesh.positions, STRIP * 1000)
    np.testing.assert_array_equal(mesh.normals, np.tile([0, 0, 1], (6, 1)))
    np.testing.assert_allclose(mesh.uvs[:, 1], [0, 0, 32768 / 65535, 32768 / 65535, 1, 1], rtol=1e-7)
    np.testing.assert_array_equal(character.accessor(doc["meshes"][0]["primitives"][0]["targets"][0]["POSITION"]),
                                  np.tile([0, 1, -1], (6, 1)))
    rig = rig_from_dict(strip_rig(), character.skeleton)
    out = tmp_path / "baked.glb"
    bake(character, rig, "wave", None, out, preroll=0.5, backend="cpu")
    assert_valid(out, gltf_validator)
    assert Character.load(out).json["extensionsRequired"] == ["KHR_mesh_quantization"]
    del doc["extensionsUsed"], doc["extensionsRequired"]
    with pytest.raises(GltfError, match=r"attribute POSITION uses accessor 0, a VEC3 of SHORT; glTF 2.0 requires "
                                        r"VEC3 of FLOAT \(at /meshes/0/primitives/0/attributes/POSITION\)"):
        Character.load(write(tmp_path, doc, "plain.gltf"))


# -- Draco ----------------------------------------------------------------------------------------
draco = pytest.mark.skipif(not gltf_draco.draco_installed(), reason="DracoPy (the [draco] extra) is not installed")


def _area(mesh) -> float:
    """The surface area of a triangle mesh."""
    p = mesh.positions.astype(np.float64)[mesh.indices.reshape(-1, 3)]
    return float(np.linalg.norm(np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]), axis=1).sum() / 2)


@draco
@pytest.mark.parametrize("name", ["CesiumMan", "RiggedSimple"])
def test_draco_meshes_decode_to_the_uncompressed_ones(name):
    plain = Character.load(next((CORPUS / name).glob("glTF-Binary/*.glb")))
    packed = Character.load(next((CORPUS / name).glob("glTF-Draco/*.gltf")))
    for a, b in zip(plain.meshes, packed.meshes):
        assert len(a.indices) == len(b.indices) and b.indices.max() < len(b.positions)
        size = np.ptp(a.positions, axis=0).max()
        np.testing.assert_allclose(a.positions.min(0), b.positions.min(0), atol=2e-3 * size)  # quantized
        np.testing.assert_allclose(a.positions.max(0), b.positions.max(0), atol=2e-3 * size)
        assert _area(b) == pytest.approx(_area(a), rel=1e-3)
        np.testing.assert_allclose(b.weights.sum(axis=1), 1.0, atol=1e-6)
        assert b.joints.max() < len(packed.skins[b.skin].joints)
        np.testing.assert_allclose(np.linalg.norm(b.normals, axis=1), 1.0, atol=1e-3)


def _draco_doc():
    path = CORPUS / "RiggedSimple" / "glTF-Draco" / "RiggedSimple.gltf"
    return json.loads(path.read_text(encoding="utf-8")), path.parent


def _copy_to(tmp_path, doc, folder) -> Path:
    for f in folder.glob("*.bin"):
        (tmp_path / f.name).write_bytes(f.read_bytes())
    return write(tmp_path, doc, "draco.gltf")


def test_draco_without_dracopy_is_refused_naming_the_extra(tmp_path, monkeypatch):
    monkeypatch.setattr(gltf_draco, "draco_installed", lambda: False)
    doc, folder = _draco_doc()
    with pytest.raises(GltfError, match=r"requires extension KHR_draco_mesh_compression \(extensionsRequired\): "
                                        r"decoding Draco-compressed meshes needs DracoPy, which is not installed: "
                                        r"pip install 'gpu-jiggle\[draco\]'.* \(at /extensionsRequired/0\)"):
        Character.load(_copy_to(tmp_path, doc, folder))
    del doc["extensionsRequired"]  # used but not required, and no uncompressed data to fall back on
    with pytest.raises(GltfError, match=r"mesh 0 primitive 0 is compressed with KHR_draco_mesh_compression: .*"
                                        r"gpu-jiggle\[draco\]"):
        Character.load(_copy_to(tmp_path, doc, folder))


def _ext(doc):
    return doc["meshes"][0]["primitives"][0]["extensions"]["KHR_draco_mesh_compression"]


HOSTILE_DRACO = [
    ("bufferView 99", lambda d: _ext(d).update(bufferView=99), "extensions/KHR_draco_mesh_compression/bufferView"),
    ("attributes not ids", lambda d: _ext(d).update(attributes={"POSITION": "two"}),
     "extensions/KHR_draco_mesh_compression/attributes"),
    ("unknown unique id", lambda d: _ext(d)["attributes"].update(POSITION=40), "has no attribute with unique id 40"),
    ("attribute not on the primitive", lambda d: _ext(d)["attributes"].update(TEXCOORD_3=1),
     "attribute 'TEXCOORD_3' is not among the primitive's attributes"),
    ("count mismatch", lambda d: [d["accessors"][i].update(count=100) for i in (6, 7, 8, 9)],
     "decodes to 160 × 4 numbers, but accessor 6 is 100 × VEC4 of UNSIGNED_SHORT"),
    ("not Draco data", lambda d: _ext(d).update(bufferView=0), "its Draco data does not decode"),
    ("float data for an integer accessor", lambda d: _ext(d)["attributes"].update(JOINTS_0=3),
     "JOINTS_0: the Draco data holds float32 values, not integers within the VEC4 of UNSIGNED_SHORT"),
]


@draco
@pytest.mark.parametrize("change, message", [(c, m) for _, c, m in HOSTILE_DRACO], ids=[n for n, _, _ in HOSTILE_DRACO])
def test_hostile_draco_is_refused_by_pointer(tmp_path, change, message):
    doc, folder = _draco_doc()
    doc = copy.deepcopy(doc)
    change(doc)
    with pytest.raises(GltfError, match="/meshes/0/primitives/0") as refused:
        Character.load(_copy_to(tmp_path, doc, folder))
    assert message in str(refused.value)


def test_files_requiring_the_drawn_material_extensions_load(tmp_path):
    """KHR_materials_unlit and KHR_texture_transform are drawn, so a file that requires them loads."""
    from gpu_jiggle.character.gltf.check import SUPPORTED_REQUIRED
    from gpu_jiggle.character.gltf.material import MATERIAL_EXTENSIONS
    assert set(MATERIAL_EXTENSIONS) <= set(SUPPORTED_REQUIRED)

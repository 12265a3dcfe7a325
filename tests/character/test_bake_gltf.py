"""A baked copy is valid glTF whatever the source stores (gpu_jiggle/character/baking/gltf.py):
chain joints defined by a ``matrix`` become translation, rotation and scale (a matrix with
shear is refused, naming the node), images carry the mimeType their bytes show, and
animation data in strided or interleaved buffer views is repacked. Each baked file passes
the Khronos validator with no error."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gpu_jiggle.character.pose import quat
from gpu_jiggle.character.baking.run import bake
from gpu_jiggle.character.baking.gltf import BakeError
from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.character.rig.reader import rig_from_dict
from gltf_build import Builder, skinned_strip, strip_rig, write
from gltf_validator import assert_valid

CORPUS = Path(__file__).resolve().parents[1] / "data" / "khronos"


def _bake(path, out, **keys):
    character = Character.load(path)
    rig = rig_from_dict(strip_rig(**keys), character.skeleton)
    return character, bake(character, rig, "wave", None, out, preroll=0.25, backend="cpu")


def _strip_with_matrix(tmp_path, matrix) -> Path:
    doc = skinned_strip()
    node = doc["nodes"][2]  # joint 'b'
    del node["translation"]
    node["matrix"] = np.asarray(matrix, np.float64).T.reshape(-1).tolist()  # column-major
    return write(tmp_path, doc)


def test_a_matrix_chain_joint_becomes_trs(tmp_path, gltf_validator):
    m = quat.compose([0.0, 1.0, 0.0], quat.from_axis_angle([1.0, 0.0, 0.0], 0.3), [1.0, 2.0, 0.5])
    source = _strip_with_matrix(tmp_path, m)
    character, result = _bake(source, tmp_path / "baked.glb")
    assert_valid(tmp_path / "baked.glb", gltf_validator)
    copy = Character.load(tmp_path / "baked.glb")
    node = copy.json["nodes"][2]
    assert "matrix" not in node and set(node) == {"name", "children", "translation", "rotation", "scale"}
    np.testing.assert_allclose(quat.compose(node["translation"], node["rotation"], node["scale"]), m, atol=1e-12)
    np.testing.assert_array_equal(copy.skeleton.rest.translation[2], character.skeleton.rest.translation[2])
    np.testing.assert_array_equal(copy.skeleton.rest.scale[2], character.skeleton.rest.scale[2])
    assert 2 in result.rotations


@pytest.mark.parametrize("what, matrix", [
    ("shear", np.array([[1, 0.5, 0, 0], [0, 1, 0, 1], [0, 0, 1, 0], [0, 0, 0, 1]], np.float64)),
    ("projective", np.array([[1, 0, 0, 0], [0, 1, 0, 1], [0, 0, 1, 0], [0, 0.1, 0, 1]], np.float64)),
])
def test_a_matrix_that_is_not_trs_is_refused_naming_the_node(tmp_path, what, matrix):
    out = tmp_path / "baked.glb"
    with pytest.raises(BakeError, match=r"node 2 \('b'\) is defined by a matrix with shear, zero scale or a bottom "
                                        r"row .* cannot be rewritten as translation, rotation and scale .*glTF 2.0 "
                                        r"section 3.5.3"):
        _bake(_strip_with_matrix(tmp_path, matrix), out)
    assert not out.exists()


def _png() -> bytes:
    data = io.BytesIO()
    Image.new("RGB", (2, 2), (200, 10, 10)).save(data, "PNG")
    return data.getvalue()


def _strip_with_image(tmp_path, name: str, data: bytes, mime: str | None, slot: str = "baseColorTexture") -> Path:
    (tmp_path / name).write_bytes(data)
    b = Builder()
    uv = b.accessor(np.zeros((6, 2)), target=34962)
    doc = skinned_strip(b, attributes={"TEXCOORD_0": uv})
    doc["meshes"][0]["primitives"][0]["material"] = 0
    info = {"index": 0}
    material = {"pbrMetallicRoughness": {"baseColorTexture": info}} if slot == "baseColorTexture" else {slot: info}
    doc.update(materials=[material], textures=[{"source": 0}],
               images=[{"uri": name, **({"mimeType": mime} if mime else {})}])
    return write(tmp_path, doc)


@pytest.mark.parametrize("suffix", [".gltf", ".glb"])
def test_an_external_jpeg_without_mimetype_is_embedded_as_jpeg(tmp_path, suffix, gltf_validator):
    source = Character.load(CORPUS / "CesiumMan" / "glTF" / "CesiumMan.gltf")
    assert "mimeType" not in source.json["images"][0]
    joints = [source.skeleton.names[j] for j in source.skin.joints[:2]]
    rig = rig_from_dict({"chain": [{"name": "c", "joints": joints, "frequency": 3.0}]}, source.skeleton)
    out = tmp_path / f"baked{suffix}"
    bake(source, rig, source.clip_names[0], None, out, preroll=0.0, backend="cpu")
    assert_valid(out, gltf_validator)
    (image,) = Character.load(out).json["images"]
    assert image["mimeType"] == "image/jpeg"
    if suffix == ".gltf":
        assert image["uri"].startswith("data:image/jpeg;base64,")


def test_the_mimetype_comes_from_the_bytes_not_the_declaration(tmp_path, gltf_validator):
    path = _strip_with_image(tmp_path, "skin.jpg", _png(), "image/jpeg")
    _bake(path, tmp_path / "baked.gltf")
    report = assert_valid(tmp_path / "baked.gltf", gltf_validator)
    assert not [line for line in report.lines(3) if "UNUSED_OBJECT" in line]
    (image,) = json.loads((tmp_path / "baked.gltf").read_text())["images"]
    assert image["mimeType"] == "image/png" and image["uri"].startswith("data:image/png;base64,")


def test_an_image_of_unknown_format_is_refused(tmp_path):
    path = _strip_with_image(tmp_path, "bumps.gif", b"GIF89a" + bytes(40), None, slot="normalTexture")
    with pytest.raises(BakeError, match=r"image 0: its bytes start 47 49 46 38 39 61 00 00, which is neither PNG, "
                                        r"JPEG, WebP nor KTX2, and it declares no mimeType"):
        _bake(path, tmp_path / "baked.glb")
    assert not (tmp_path / "baked.glb").exists()


def test_interleaved_animation_data_is_repacked(tmp_path, gltf_validator):
    """Key times and values interleaved in one strided view load (this loader reads any
    stride) but glTF forbids a stride there: the copy gets them tightly packed, appended."""
    doc = skinned_strip()
    sampler = doc["animations"][0]["samplers"][0]
    loaded = Character.load(write(tmp_path, doc, "plain.gltf"))
    times, values = loaded.accessor(sampler["input"]), loaded.accessor(sampler["output"])
    b = Builder()
    rows = np.zeros((5, 5), np.float32)
    rows[:, 0], rows[:, 1:] = times, values
    view = b.view(rows.tobytes(), stride=20)
    doc = skinned_strip(b, rotations=b.accessor(values, view=view, offset=4))
    accessors = doc["accessors"]
    accessors[doc["animations"][0]["samplers"][0]["input"]].update(bufferView=view)
    source = write(tmp_path, doc, "interleaved.gltf")
    character, _ = _bake(source, tmp_path / "baked.glb", joints=["b", "c"])
    assert_valid(tmp_path / "baked.glb", gltf_validator)
    copy = Character.load(tmp_path / "baked.glb")
    # old views as they were, but for the strided one, which nothing reads after the repack:
    # one of the bake's own views takes its place (no unused view is left)
    changed = [i for i, (a, b) in enumerate(zip(doc["bufferViews"], copy.json["bufferViews"])) if a != b]
    assert changed == [view], changed
    assert "byteStride" not in copy.json["bufferViews"][view]
    (channel,) = [c for c in copy.clip("wave").channels if c.node == 1]
    np.testing.assert_array_equal(channel.sampler.times, times)
    np.testing.assert_array_equal(channel.sampler.values, values)


def test_a_bake_leaves_no_key_times_unread(tmp_path, gltf_validator):
    """Every rotation channel with key times of its own (as many exporters write them): the
    baked key times take those accessors' places, so none is left that nothing reads, and
    nothing is appended where a place was left."""
    b = Builder()
    doc = skinned_strip(b)
    anim = doc["animations"][0]
    for node in (2, 3):  # b and c turn too, each channel with key times of its own
        times = b.accessor(np.linspace(0.0, 1.0, 4), kind="SCALAR", bounds=True)
        turn = np.sin(np.linspace(0, np.pi, 4)) * 0.2
        values = b.accessor(np.stack([np.zeros(4), np.zeros(4), np.sin(turn / 2), np.cos(turn / 2)], axis=1))
        anim["samplers"].append({"input": times, "output": values})
        anim["channels"].append({"sampler": len(anim["samplers"]) - 1, "target": {"node": node, "path": "rotation"}})
    doc = b.document(**{k: v for k, v in doc.items() if k not in ("accessors", "bufferViews", "buffers", "asset")})
    source = write(tmp_path, doc)
    _bake(source, tmp_path / "baked.gltf")
    baked = json.loads((tmp_path / "baked.gltf").read_text())
    read = {s[k] for a in baked["animations"] for s in a["samplers"] for k in ("input", "output")}
    read |= {i for m in baked["meshes"] for p in m["primitives"] for i in p["attributes"].values()}
    read |= {p["indices"] for m in baked["meshes"] for p in m["primitives"] if "indices" in p}
    read |= {s["inverseBindMatrices"] for s in baked["skins"]}
    assert set(range(len(baked["accessors"]))) - read == set()
    assert len(baked["accessors"]) == len(doc["accessors"])
    views = {a["bufferView"] for a in baked["accessors"]}
    assert set(range(len(baked["bufferViews"]))) - views == set()
    report = assert_valid(tmp_path / "baked.gltf", gltf_validator)
    assert not [line for line in report.lines(3) if "UNUSED_OBJECT" in line]

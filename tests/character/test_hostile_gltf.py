"""Hostile glTF files: URIs that lead out of the model's folder, bakes that would carry
outside files along, negative strides, small files asking for huge resources, and
malformed values. Every file is generated here; a canary file beside the model's folder
must never show up in a loaded character or a baked copy."""
from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, PngImagePlugin

from gpu_jiggle import whole_files
from gpu_jiggle.character.baking.run import bake
from gpu_jiggle.character.gltf.loader import Character, GltfError, GltfLimits
from gpu_jiggle.character.gltf.io import split_glb
from gpu_jiggle.character.rig.reader import load_rig
from demo_support import FOX, FOX_RIG
from gltf_validator import assert_valid

ROOT = Path(__file__).resolve().parents[2]  # the repository
CANARY = b"CANARY-7f3a9c-must-not-leak-" + bytes(range(40))


def _png(colour=(10, 20, 30, 255), text: bytes | None = None) -> bytes:
    info = PngImagePlugin.PngInfo()
    if text is not None:
        info.add_text("secret", text.decode("latin-1"))
    out = io.BytesIO()
    Image.new("RGBA", (2, 2), colour).save(out, "PNG", pnginfo=info)
    return out.getvalue()


def skinned(joints=None, image_uri=None) -> dict:
    """A two-joint skinned quad with a rotation clip, its buffer as a data URI.
    Accessors: 0 POSITION, 1 JOINTS_0, 2 WEIGHTS_0, 3 indices, 4 inverse binds, 5 key
    times, 6 key rotations; one buffer view each, in that order."""
    arrays = [(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], np.float32), 5126, "VEC3"),
              (np.array(joints if joints is not None else [[0, 1, 0, 0]] * 4, np.uint8), 5121, "VEC4"),
              (np.array([[0.5, 0.5, 0, 0]] * 4, np.float32), 5126, "VEC4"),
              (np.array([0, 1, 2, 1, 3, 2], np.uint16), 5123, "SCALAR"),
              (np.tile(np.eye(4, dtype=np.float32), (2, 1, 1)).reshape(2, 16), 5126, "MAT4"),
              (np.array([0.0, 1.0], np.float32), 5126, "SCALAR"),
              (np.array([[0, 0, 0, 1], [0, 0, 0.38268343, 0.9238795]], np.float32), 5126, "VEC4")]
    blob, views, accessors = b"", [], []
    for data, component, kind in arrays:
        blob += b"\0" * (-len(blob) % 4)
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": data.nbytes})
        blob += data.tobytes()
        accessors.append({"bufferView": len(views) - 1, "componentType": component, "count": len(data), "type": kind})
    accessors[5].update(min=[0.0], max=[1.0])
    primitive = {"attributes": {"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2}, "indices": 3}
    doc = {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0, 2]}],
           "nodes": [{"name": "root", "children": [1]}, {"name": "tip", "translation": [0, 1, 0]},
                     {"name": "body", "mesh": 0, "skin": 0}],
           "meshes": [{"name": "quad", "primitives": [primitive]}],
           "skins": [{"joints": [0, 1], "inverseBindMatrices": 4}],
           "animations": [{"name": "wave", "samplers": [{"input": 5, "output": 6}],
                           "channels": [{"sampler": 0, "target": {"node": 1, "path": "rotation"}}]}],
           "accessors": accessors, "bufferViews": views,
           "buffers": [{"byteLength": len(blob),
                        "uri": "data:application/octet-stream;base64," + base64.b64encode(blob).decode()}]}
    if image_uri is not None:
        primitive["material"] = 0
        doc.update(materials=[{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}],
                   textures=[{"source": 0}], images=[{"uri": image_uri}])
    return doc


@pytest.fixture
def site(tmp_path):
    """(model folder, outside folder): the outside one holds the canary files."""
    model, outside = tmp_path / "site" / "model", tmp_path / "site" / "outside"
    model.mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.bin").write_bytes(CANARY)
    (outside / "secret.png").write_bytes(_png((1, 2, 3, 4), text=CANARY))
    return model, outside


def _write(folder: Path, doc: dict, name: str = "model.gltf") -> Path:
    path = folder / name
    path.write_text(json.dumps(doc))
    return path


def _refused(path, fragment, error=GltfError, **kwargs) -> str:
    with pytest.raises(error) as caught:
        Character.load(path, **kwargs)
    message = str(caught.value)
    assert type(caught.value) is error, message
    assert fragment in message and path.name in message, message
    return message


def _no_canary(character):
    assert all(CANARY not in bytes(b) for b in character.buffers)
    assert all(CANARY not in d for d in character.image_data.values())
    for mesh in character.meshes:
        if mesh.base_color_texture is not None:
            assert not (mesh.base_color_texture == (1, 2, 3, 4)).all(axis=-1).any()


def _leak_free(path: Path):
    data = path.read_bytes()
    assert CANARY not in data
    text = split_glb(path, data)[0] if data[:4] == b"glTF" else data.decode()
    stack = [json.loads(text)]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and value.startswith("data:") and ";base64," in value:
            assert CANARY not in base64.b64decode(value.partition(",")[2])


def _uri_cases(model: Path, outside: Path) -> dict:
    secret = outside / "secret.bin"
    (model / "link.bin").symlink_to(secret)
    (model / "sub").symlink_to(outside, target_is_directory=True)
    return {"traversal": ("../outside/secret.bin", "leads outside the model's folder"),
            "deep traversal": ("../" * 40 + str(secret).lstrip("/"), "leads outside the model's folder"),
            "percent-encoded dots": ("%2e%2e/outside/secret.bin", "leads outside the model's folder"),
            "percent-encoded slashes": ("..%2Foutside%2Fsecret.bin", "leads outside the model's folder"),
            "symlink to a file outside": ("link.bin", "leads outside the model's folder"),
            "symlink to a folder outside": ("sub/secret.bin", "leads outside the model's folder"),
            "absolute path": (str(secret), "is an absolute path"),
            "percent-encoded absolute path": ("%2F" + str(secret).lstrip("/"), "is an absolute path"),
            "proc": ("/proc/self/environ", "is an absolute path"),
            "file scheme": ("file://" + str(secret), "only data: URIs and paths relative"),
            "http scheme": ("http://example.invalid/secret.bin", "only data: URIs and paths relative")}


# -- arbitrary file read ----------------------------------------------------------------------
def test_buffer_uris_stay_in_the_model_folder(site):
    model, outside = site
    for name, (uri, why) in _uri_cases(model, outside).items():
        doc = skinned()
        doc["buffers"].append({"uri": uri, "byteLength": len(CANARY)})
        message = _refused(_write(model, doc), "(at /buffers/1/uri)")
        assert why in message, (name, message)
        assert str(outside) not in message.replace(uri, ""), (name, message)


def test_image_uris_stay_in_the_model_folder(site):
    model, outside = site
    for name, (uri, why) in _uri_cases(model, outside).items():
        message = _refused(_write(model, skinned(image_uri=uri.replace("secret.bin", "secret.png"))),
                           "(at /images/0/uri)")
        assert why in message, (name, message)


def test_errors_reveal_nothing_about_outside_files(site):
    model, _ = site
    messages = []
    for target in ("secret.bin", "missing.bin"):  # one exists (with fewer bytes than declared), one does not
        doc = skinned()
        doc["buffers"].append({"uri": f"../outside/{target}", "byteLength": len(CANARY) + 8})
        messages.append(_refused(_write(model, doc), "(at /buffers/1/uri)").replace(target, "X"))
    assert messages[0] == messages[1]
    assert "bytes" not in messages[0] and "holds" not in messages[0]
    # inside the folder a short file is named, without its size
    (model / "short.bin").write_bytes(b"abc")
    doc = skinned()
    doc["buffers"].append({"uri": "short.bin", "byteLength": 8})
    message = _refused(_write(model, doc), "(at /buffers/1/uri)")
    assert "ends before its declared byteLength 8" in message and "3" not in message.split("model.gltf")[-1]


def test_a_fifo_in_the_model_folder_is_refused_without_blocking(site):
    model, _ = site
    os.mkfifo(model / "pipe.bin")
    doc = skinned()
    doc["buffers"].append({"uri": "pipe.bin", "byteLength": 8})
    path = _write(model, doc)
    out = _in_subprocess(f"Character.load({str(path)!r})", timeout=30)
    assert out["refused"] == "/buffers/1/uri" and "not a regular file" in out["message"]


# -- exfiltration through bake ----------------------------------------------------------------
def _fox_in(model: Path, images_before=(), external_image=False) -> Path:
    doc = json.loads(FOX.read_text(encoding="utf-8"))
    if external_image:
        png = base64.b64decode(doc["images"][0]["uri"].partition(",")[2])
        (model / "tex").mkdir()
        (model / "tex" / "fox skin.png").write_bytes(png)
        doc["images"][0] = {"uri": "tex/fox%20skin.png"}  # no mimeType: the bake sniffs it
    doc["images"] = [dict(i) for i in images_before] + doc["images"]
    for texture in doc["textures"]:
        texture["source"] += len(images_before)
    doc["images"].append({"uri": "../outside/secret.png", "mimeType": "image/png"})  # used by no texture
    return _write(model, doc, "Fox.gltf")


@pytest.mark.parametrize("suffix", [".glb", ".gltf"])
def test_bake_embeds_no_image_the_file_does_not_use(site, fox, suffix, gltf_validator):
    model, _ = site
    character = Character.load(_fox_in(model))
    _no_canary(character)
    assert sorted(character.image_data) == [0]  # the unused image was never read
    out = model.parent / f"baked{suffix}"
    bake(character, load_rig(FOX_RIG, character.skeleton), "Walk", 10, out, preroll=0.0, backend="cpu")
    _leak_free(out)
    assert_valid(out, gltf_validator)
    copy = Character.load(out)
    assert len(copy.json["images"]) == 1
    np.testing.assert_array_equal(copy.meshes[0].base_color_texture, fox.meshes[0].base_color_texture)


def test_bake_renumbers_textures_and_embeds_used_external_images(site, fox, gltf_validator):
    model, _ = site
    path = _fox_in(model, images_before=[{"uri": "%2e%2e/outside/secret.png"}], external_image=True)
    character = Character.load(path)
    _no_canary(character)
    assert sorted(character.image_data) == [1]
    out = model.parent / "baked.glb"
    bake(character, load_rig(FOX_RIG, character.skeleton), "Walk", 10, out, preroll=0.0, backend="cpu")
    _leak_free(out)
    assert_valid(out, gltf_validator)
    copy = Character.load(out)
    (image,) = copy.json["images"]  # in the binary chunk, with the mimeType its bytes show
    assert image["mimeType"] == "image/png" and "uri" not in image and copy.json["textures"][0]["source"] == 0
    np.testing.assert_array_equal(copy.meshes[0].base_color_texture, fox.meshes[0].base_color_texture)


def test_a_hostile_extra_buffer_stops_the_load_before_any_bake(site):
    model, _ = site
    doc = json.loads(FOX.read_text(encoding="utf-8"))
    doc["buffers"].append({"uri": "../outside/secret.bin", "byteLength": len(CANARY)})
    _refused(_write(model, doc, "Fox.gltf"), "leads outside the model's folder (at /buffers/1/uri)")


def test_a_bake_is_written_whole_or_not_at_all(fox, rig, tmp_path, monkeypatch):
    out = tmp_path / "fox_run.glb"
    out.write_bytes(b"the previous bake")

    written = []

    def full_disk(fd):  # the disk fills once the new bake's bytes are in its temporary
        written.append(os.fstat(fd).st_size)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(whole_files.os, "fsync", full_disk)  # where the bake's whole write happens
    with pytest.raises(OSError, match="No space left"):
        bake(fox, rig, "Walk", 10, out, preroll=0.0, backend="cpu")
    assert written and written[0] > len(b"the previous bake"), written  # it failed part-way through the write
    assert out.read_bytes() == b"the previous bake"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fox_run.glb"]  # no temporary file left behind


# -- out-of-bounds reads and resource limits, in a subprocess -----------------------------------
PROBE = """
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # old code meets MemoryError, not the machine's limit
from gpu_jiggle.character.gltf.loader import Character, GltfError, GltfLimits
start = time.process_time()  # CPU time: what the load costs, not how busy the machine is
out = {{}}
try:
    character = {call}
    out["loaded"] = True
    out["buffers"] = [len(b) for b in character.buffers]
except GltfError as exc:
    out["refused"], out["message"] = exc.pointer, str(exc)
out["seconds"] = time.process_time() - start
try:  # this process's own peak (ru_maxrss would also count the parent's peak, inherited through exec)
    peak_kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
except (OSError, StopIteration):
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out["maxrss_mb"] = peak_kb / 1024
print(json.dumps(out))
"""


def _in_subprocess(call: str, timeout: float = 60) -> dict:
    result = subprocess.run([sys.executable, "-c", PROBE.format(call=call)], capture_output=True, text=True,
                            timeout=timeout, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])  # -11 / 139: a segfault
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("stride", [-1, -4, -(1 << 20)])
def test_negative_stride_is_refused_without_reading_outside_the_buffer(tmp_path, stride):
    doc = skinned()
    doc["bufferViews"][0]["byteStride"] = stride
    doc["accessors"][0]["count"] = 65_536
    out = _in_subprocess(f"Character.load({str(_write(tmp_path, doc))!r})")
    assert out.get("refused") == "/bufferViews/0/byteStride", out
    assert f"byteStride {stride}" in out["message"]


def test_a_2_kb_file_asking_for_gigabytes_is_refused_quickly(tmp_path):
    doc = skinned()
    del doc["accessors"][0]["bufferView"]
    doc["accessors"][0]["count"] = 100_000_000  # 1.2 GB of zeros, and more for what is computed from them
    path = _write(tmp_path, doc)
    assert path.stat().st_size < 2500
    out = _in_subprocess(f"Character.load({str(path)!r})")
    assert out.get("refused") == "/accessors/0/count" and "max_viewless_accessor_bytes" in out["message"], out
    assert out["seconds"] < 1.0 and out["maxrss_mb"] < 200, out


def test_an_external_buffer_is_read_only_up_to_its_byte_length(tmp_path):
    with open(tmp_path / "big.bin", "wb") as f:
        f.truncate(2 << 30)  # 2 GiB (sparse: no disk space used)
    doc = skinned()
    doc["buffers"].append({"uri": "big.bin", "byteLength": 8})
    out = _in_subprocess(f"Character.load({str(_write(tmp_path, doc))!r})")
    assert out.get("loaded") and out["buffers"][1] == 8, out
    assert out["seconds"] < 1.0 and out["maxrss_mb"] < 200, out


def test_200k_nodes_load_in_seconds_with_a_raised_limit(tmp_path):
    n = 200_000  # one chain, deepest node first: the worst order for a walk up the parents
    nodes = [{"name": f"n{i}", "children": [i - 1]} if i else {"name": "n0"} for i in range(n)]
    path = _write(tmp_path, {"asset": {"version": "2.0"}, "nodes": nodes})
    out = _in_subprocess(f"Character.load({str(path)!r}, limits=GltfLimits(max_nodes=250_000))", timeout=120)
    assert out.get("loaded") and out["seconds"] < 20, out


def test_more_nodes_than_the_limit_are_refused(tmp_path):
    path = _write(tmp_path, {"asset": {"version": "2.0"}, "nodes": [{}] * 70_000})
    message = _refused(path, "(at /nodes)")
    assert "70000 nodes, more than 65536 (GltfLimits.max_nodes)" in message


def test_a_keyframe_beyond_an_hour_is_refused(tmp_path):
    doc = skinned()
    blob = bytearray(base64.b64decode(doc["buffers"][0]["uri"].partition(",")[2]))
    view = doc["bufferViews"][5]
    blob[view["byteOffset"]:view["byteOffset"] + 8] = np.array([0.0, 1e5], np.float32).tobytes()
    doc["buffers"][0]["uri"] = "data:application/octet-stream;base64," + base64.b64encode(bytes(blob)).decode()
    path = _write(tmp_path, doc)
    message = _refused(path, "(at /animations/0/samplers/0/input)")
    assert "100000.0" in message and "GltfLimits.max_clip_seconds" in message
    assert Character.load(path, limits=GltfLimits(max_clip_seconds=2e5)).clip("wave").duration == 1e5


def test_json_nested_100000_deep_is_refused(tmp_path):
    path = tmp_path / "deep.gltf"
    path.write_text('{"asset": {"version": "2.0"}, "extras": ' + "[" * 100_000 + "]" * 100_000 + "}")
    message = _refused(path, "(GltfLimits.max_json_depth)")
    assert "100001 deep" in message


# -- malformed values: a GltfError naming the JSON pointer ------------------------------------
def _set(path, value):
    """A builder of :func:`skinned` with ``value`` at ``path`` (appended one past a list's end)."""
    def build():
        doc = skinned()
        *head, last = path
        target = doc
        for key in head:
            target = target[key]
        if isinstance(target, list) and last == len(target):
            target.append(value)
        else:
            target[last] = value
        return doc
    return build




MALFORMED = [
    ("accessor byteOffset -12", _set(["accessors", 0, "byteOffset"], -12), "/accessors/0/byteOffset"),
    ("sparse count -3", _set(["accessors", 0, "sparse"], {"count": -3, "values": {"bufferView": 0},
                                                         "indices": {"bufferView": 3, "componentType": 5123}}),
     "/accessors/0/sparse/count"),
    ("POSITION typed VEC2", _set(["accessors", 0, "type"], "VEC2"), "/meshes/0/primitives/0/attributes/POSITION"),
    ("translation of 2 numbers", _set(["nodes", 0, "translation"], [1, 2]), "/nodes/0/translation"),
    ("matrix of 15", _set(["nodes", 0, "matrix"], [1.0] * 15), "/nodes/0/matrix"),
    ("children [true]", _set(["nodes", 0, "children"], [True]), "/nodes/0/children/0"),
    ("skin joint 2**70", _set(["skins", 0, "joints"], [2 ** 70, 1]), "/skins/0/joints/0"),
    ("skin joint 2.5", _set(["skins", 0, "joints"], [2.5, 1]), "/skins/0/joints/0"),
    ("bad base64 in an image data URI", lambda: skinned(image_uri="data:image/png;base64,@@not*base64"),
     "/images/0/uri"),
    ("VEC4 translation output", _set(["animations", 0, "channels", 1], {"sampler": 0, "target": {"node": 0,
                                                                                    "path": "translation"}}),
     "/animations/0/samplers/0/output"),
    ("node.skin = 99", _set(["nodes", 2, "skin"], 99), "/nodes/2/skin"),
    ("JOINTS_0 past the skin's joints", lambda: skinned(joints=[[0, 1, 0, 0], [0, 5, 0, 0]] * 2),
     "/meshes/0/primitives/0/attributes/JOINTS_0"),
    ("WEIGHTS typed MAT4", _set(["meshes", 0, "primitives", 0, "attributes", "WEIGHTS_0"], 4),
     "/meshes/0/primitives/0/attributes/WEIGHTS_0"),
    ("view byteLength -8", _set(["bufferViews", 0, "byteLength"], -8), "/bufferViews/0/byteLength"),
    ("byteStride 0", _set(["bufferViews", 0, "byteStride"], 0), "/bufferViews/0/byteStride"),
    ("byteStride 4 with overlapping rows", _set(["bufferViews", 0, "byteStride"], 4), "/bufferViews/0/byteStride"),
    ("count '4'", _set(["accessors", 0, "count"], "4"), "/accessors/0/count"),
    ("bufferView true", _set(["accessors", 0, "bufferView"], True), "/accessors/0/bufferView"),
    ("sampler output count != input count", _set(["accessors", 6, "count"], 1), "/animations/0/samplers/0/output"),
    ("CUBICSPLINE without tangents", _set(["animations", 0, "samplers", 0, "interpolation"], "CUBICSPLINE"),
     "/animations/0/samplers/0/output"),
    ("node.mesh = 7", _set(["nodes", 2, "mesh"], 7), "/nodes/2/mesh"),
    ("animation target node 40", _set(["animations", 0, "channels", 0, "target", "node"], 40),
     "/animations/0/channels/0/target/node"),
    ("a node with two parents", _set(["nodes", 2, "children"], [1]), "/nodes/2/children/0"),
    ("a cycle", _set(["nodes", 1, "children"], [0]), "/nodes"),
    ("a skin naming a joint twice", _set(["skins", 0, "joints"], [1, 1]), "/skins/0/joints/1"),
    ("meshopt required", _set(["extensionsRequired"], ["EXT_meshopt_compression"]), "/extensionsRequired/0"),
]


@pytest.mark.parametrize("build, where", [(b, w) for _, b, w in MALFORMED], ids=[n for n, _, _ in MALFORMED])
def test_malformed_values_name_their_pointer(tmp_path, build, where):
    _refused(_write(tmp_path, build()), f"(at {where})")


def test_non_finite_transforms_and_json_constants(tmp_path):
    text = json.dumps(skinned()).replace('"translation": [0, 1, 0]', '"translation": [0, 1e400, 0]')
    (tmp_path / "inf.gltf").write_text(text)
    _refused(tmp_path / "inf.gltf", "(at /nodes/1/translation)")
    (tmp_path / "nan.gltf").write_text(text.replace("1e400", "NaN"))
    _refused(tmp_path / "nan.gltf", "NaN is not a JSON number")

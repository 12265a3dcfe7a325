"""The loader's memory stays within its budget (docs/CHARACTERS.md, "Untrusted files"): the peak of
loading a file, measured in a child process (Linux's VmHWM, reset before the load) above the
child's resident size before it, is at
most 1.5 × ``GltfLimits.max_total_bytes`` for JSON that parses to many objects, a texture
that decodes to many pixels and Draco data that decodes to more than the budget left; JSON
past its own cap and Draco past the budget are refused. Every file is generated here."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gpu_jiggle.character.gltf.io import JSON_OBJECT_FACTOR, MAX_JSON_BYTES

MiB = 1 << 20

CHILD = textwrap.dedent("""
    import json, resource, sys
    from pathlib import Path
    from gpu_jiggle.character.gltf.loader import Character, GltfLimits
    path, budget, image = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "image"
    def status(key):
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key + ":"))
    with open("/proc/self/clear_refs", "w") as f:  # the high-water mark starts again here (not the imports')
        f.write("5")
    base = status("VmRSS")
    try:
        c = Character.load(path, limits=GltfLimits(max_total_bytes=budget))
        if image:
            c.image(0)
        outcome = "loaded"
    except ValueError as exc:
        outcome = str(exc)
    peak = status("VmHWM")
    print(json.dumps({"rise": peak - base, "outcome": outcome}))
""")


def _load_in_child(path: Path, budget: int, image: bool = False) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, str(path), str(budget), "image" if image else "-"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_json_of_many_small_objects_stays_within_its_charge(tmp_path):
    budget = 96 * MiB
    count = budget // (JSON_OBJECT_FACTOR + 1) // 3 - 4096  # "{}," per object: just within the budget's share
    path = tmp_path / "objects.gltf"
    path.write_text('{"asset": {"version": "2.0"}, "extras": [' + "{}," * count + '{}]}')
    result = _load_in_child(path, budget)
    assert result["outcome"] == "loaded"
    assert result["rise"] <= 1.5 * budget, result  # 26 × the file before, whatever the budget
    bigger = tmp_path / "more.gltf"
    bigger.write_text('{"asset": {"version": "2.0"}, "extras": [' + "[]," * (2 * count) + '[]]}')
    result = _load_in_child(bigger, budget)
    assert "max_total_bytes" in result["outcome"] and result["rise"] <= 1.5 * budget, result


def test_json_past_its_own_cap_is_refused_before_parsing(tmp_path):
    path = tmp_path / "long.gltf"
    path.write_text('{"asset": {"version": "2.0"}, "extras": "' + "x" * MAX_JSON_BYTES + '"}')
    result = _load_in_child(path, 4 << 30)
    assert "GltfLimits.max_json_bytes" in result["outcome"]
    assert result["rise"] <= 4 * path.stat().st_size, result


def test_a_texture_is_decoded_within_the_budget_or_refused_first(tmp_path):
    from PIL import Image
    side = 2048  # 16 MiB as RGBA; a few KB as PNG
    Image.new("RGB", (side, side), (9, 9, 9)).save(tmp_path / "t.png")
    path = tmp_path / "textured.gltf"
    path.write_text(json.dumps({"asset": {"version": "2.0"}, "images": [{"uri": "t.png"}]}))
    budget = 16 * side * side + 4 * MiB  # what it keeps and the decoder's temporaries
    result = _load_in_child(path, budget, image=True)
    assert result["outcome"] == "loaded" and result["rise"] <= 1.5 * budget, result
    result = _load_in_child(path, budget // 2, image=True)
    assert "image 0" in result["outcome"] and "max_total_bytes" in result["outcome"], result
    assert result["rise"] <= 1.5 * budget // 2, result


def _draco_file(tmp_path, side=200) -> Path:
    DracoPy = pytest.importorskip("DracoPy")
    y, x = np.mgrid[0:side, 0:side]
    points = np.stack([x.ravel(), y.ravel(), np.sin(x * y).ravel()], axis=1).astype(np.float32)
    quads = (y[:-1, :-1] * side + x[:-1, :-1]).ravel()
    faces = np.concatenate([np.stack([quads, quads + 1, quads + side], 1),
                            np.stack([quads + 1, quads + side + 1, quads + side], 1)]).astype(np.uint32)
    data = DracoPy.encode(points, faces)
    (tmp_path / "mesh.bin").write_bytes(data)
    doc = {"asset": {"version": "2.0"}, "extensionsUsed": ["KHR_draco_mesh_compression"],
           "extensionsRequired": ["KHR_draco_mesh_compression"],
           "buffers": [{"uri": "mesh.bin", "byteLength": len(data)}],
           "bufferViews": [{"buffer": 0, "byteLength": len(data)}],
           "accessors": [{"type": "VEC3", "componentType": 5126, "count": len(points),
                          "min": points.min(0).tolist(), "max": points.max(0).tolist()},
                         {"type": "SCALAR", "componentType": 5125, "count": faces.size}],
           "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1, "extensions": {
               "KHR_draco_mesh_compression": {"bufferView": 0, "attributes": {"POSITION": 0}}}}]}],
           "nodes": [{"mesh": 0}], "scenes": [{"nodes": [0]}], "scene": 0}
    path = tmp_path / "draco.gltf"
    path.write_text(json.dumps(doc))
    return path


def test_draco_data_decodes_within_the_budget_left_or_is_refused(tmp_path):
    path = _draco_file(tmp_path, side=700)  # 18 MB decoded from about 0.5 MB
    assert _load_in_child(path, 512 * MiB)["outcome"] == "loaded"
    # the file and its JSON's share of the budget, and 4 MiB for the decoder: its 18 MB do not fit
    budget = path.stat().st_size * (1 + JSON_OBJECT_FACTOR) + (tmp_path / "mesh.bin").stat().st_size + 4 * MiB
    result = _load_in_child(path, budget)
    assert "Draco data does not decode" in result["outcome"] and "budget" in result["outcome"], result
    assert result["rise"] <= 1.5 * budget, result

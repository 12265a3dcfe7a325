"""What a new user meets: a misspelt option gets the closest one, and a folder given where a
file is expected is called a folder (each refused before anything runs)."""
from __future__ import annotations

from pathlib import Path

import pytest

from gpu_jiggle.app.cli import main

FOX = Path(__file__).resolve().parents[2] / "data" / "fox" / "Fox.gltf"


@pytest.mark.parametrize("argv, close", [
    (["render", str(FOX), "--out", "x.mp4", "--animaton", "Run"], "--animation"),
    (["bake", str(FOX), "--out", "x.glb", "--motoin", "shake"], "--motion"),
])
def test_a_misspelt_option_gets_the_closest_one(argv, close, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert f"gpu-jiggle {argv[0]}: error: unrecognized arguments: {argv[4]}" in err and f"did you mean {close}?" in err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("argv, what", [
    (["render", "{folder}", "--out", "{out}/x.mp4"], "glTF file"),
    (["render", str(FOX), "--rig", "{folder}", "--out", "{out}/x.mp4"], "rig file"),
    (["bake-many", "{folder}", "--out", "{out}"], "manifest file"),
])
def test_a_folder_where_a_file_is_expected_is_called_a_folder(argv, what, capsys, tmp_path):
    folder, out = tmp_path / "models.gltf", tmp_path / "out"
    folder.mkdir()
    out.mkdir()
    assert main([a.format(folder=folder, out=out) for a in argv]) == 2
    assert f"{folder}: is a folder, not a {what}" in capsys.readouterr().err
    assert not list(out.iterdir())


def test_render_caps_its_frames_as_bake_does(capsys, tmp_path):
    from gpu_jiggle.app.render import MAX_RENDER_FRAMES
    seconds = 2 * MAX_RENDER_FRAMES // 25  # at --fps 25: twice the cap, a whole number of frames
    assert main(["render", str(FOX), "--out", str(tmp_path / "x.mp4"), "--fps", "25", "--seconds", str(seconds)]) == 2
    err = capsys.readouterr().err
    assert f"is {2 * MAX_RENDER_FRAMES} frames; at most {MAX_RENDER_FRAMES}" in err
    assert not list(tmp_path.iterdir())


def test_render_names_the_largest_size_the_context_draws(gl, capsys, tmp_path):
    from gpu_jiggle.app.render import largest_size
    largest = largest_size(gl)
    side = 2 * largest
    assert main(["render", str(FOX), "--out", str(tmp_path / "x.mp4"), "--size", f"{side}x{side}"]) == 2
    err = capsys.readouterr().err
    assert f"size = {side}x{side}: this OpenGL context draws at most {largest}x{largest} pixels" in err
    assert "INCOMPLETE" not in err and not list(tmp_path.iterdir())


def test_a_file_without_meshes_is_framed_by_its_joints(gl, tmp_path, capsys):
    import json

    from gpu_jiggle.character.gltf.loader import Character
    from gpu_jiggle.render.scene import Framing
    for translation in ([0.0, 2.0, 0.0], [0.0, 0.0, 0.0]):  # joints apart, and all at one point
        model = tmp_path / "bones.gltf"
        model.write_text(json.dumps({"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
                                     "nodes": [{"name": "root", "children": [1]},
                                               {"name": "tip", "translation": translation}]}))
        framing = Framing.of(Character.load(model))
        assert framing.size > 0 and framing.extent[1] == (2.0 if translation[1] else 1.0)
        out = tmp_path / "bones.mp4"
        assert main(["render", str(model), "--out", str(out), "--seconds", "0.1", "--backend", "cpu"]) == 0, \
            capsys.readouterr().err  # it said "eye = [0, 0, 0] and target = [0, 0, 0]"
        assert out.stat().st_size > 0


def test_bake_refuses_a_vrm_name_for_a_model_that_is_not_one(capsys, tmp_path):
    rig = FOX.parents[2] / "rigs" / "fox.toml"
    out = tmp_path / "fox.vrm"
    assert main(["bake", str(FOX), "--rig", str(rig), "--out", str(out), "--backend", "cpu"]) == 2
    assert "Fox.gltf is not a VRM (no VRM or VRMC_vrm extension)" in capsys.readouterr().err
    assert not out.exists()


def test_a_bake_keeps_no_accessor_that_nothing_reads(tmp_path, capsys):
    """The rotation outputs a bake replaces were left behind, reported unused by the validator."""
    import json
    rig = FOX.parents[2] / "rigs" / "fox.toml"
    out = tmp_path / "fox.gltf"
    assert main(["bake", str(FOX), "--rig", str(rig), "--out", str(out), "--backend", "cpu", "--fps", "10", "--preroll", "0"]) == 0, \
        capsys.readouterr().err
    doc = json.loads(out.read_text())
    read = {s[k] for a in doc["animations"] for s in a["samplers"] for k in ("input", "output")}
    read |= {i for m in doc["meshes"] for p in m["primitives"]
             for group in [p["attributes"], *p.get("targets", [])] for i in group.values()}
    read |= {p["indices"] for m in doc["meshes"] for p in m["primitives"] if "indices" in p}
    read |= {s["inverseBindMatrices"] for s in doc.get("skins", []) if "inverseBindMatrices" in s}
    assert set(range(len(doc["accessors"]))) - read == set()
    views = {a["bufferView"] for a in doc["accessors"] if "bufferView" in a}
    views |= {i["bufferView"] for i in doc.get("images", []) if "bufferView" in i}
    assert set(range(len(doc["bufferViews"]))) - views == set()


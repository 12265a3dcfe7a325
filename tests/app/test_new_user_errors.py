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

"""The bundled Fox (gpu_jiggle.data): found through the package from any folder, with its
licence and rig; the checkout's old paths (data/fox, rigs/fox.toml) are links to the same files,
and play's Save writes through such a link instead of replacing it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_jiggle import data

ROOT = Path(__file__).resolve().parent.parent


def test_the_fox_files_are_in_the_package():
    model, rig, licence = data.sample("fox")
    package = Path(data.__file__).resolve().parent
    for path in (model, rig, licence):
        assert path.is_file(), path
        assert path.resolve().is_relative_to(package), path
    assert (model, rig, licence) == (data.fox_path(), data.fox_rig_path(), data.fox_license_path())
    assert model.name == "Fox.gltf" and rig.suffix == ".toml"


def test_the_licence_keeps_the_cc_by_credit():
    text = data.fox_license_path().read_text(encoding="utf-8")
    for credit in ("CC-BY 4.0", "@tomkranis", "PixelMannen", "KhronosGroup/glTF-Sample-Models"):
        assert credit in text
    assert '"copyright": "CC-BY 4.0' in data.fox_path().read_text(encoding="utf-8")[:400]


def test_an_unknown_sample_is_refused_naming_the_known_ones():
    with pytest.raises(KeyError, match="no sample 'cat'; the samples are fox"):
        data.sample("cat")


def test_the_checkout_paths_are_links_to_the_same_files():
    assert (ROOT / "data" / "fox").is_symlink() and (ROOT / "rigs" / "fox.toml").is_symlink()
    assert (ROOT / "data" / "fox" / "Fox.gltf").samefile(data.fox_path())
    assert (ROOT / "data" / "fox" / "LICENSE.md").samefile(data.fox_license_path())
    assert (ROOT / "rigs" / "fox.toml").samefile(data.fox_rig_path())
    listed = subprocess.run(["git", "ls-files", "-s", "data/fox", "rigs/fox.toml"], cwd=ROOT, capture_output=True,
                            text=True)
    if listed.returncode != 0 or not listed.stdout:
        pytest.skip("not a git checkout")
    modes = {line.split("\t")[1]: line.split()[0] for line in listed.stdout.splitlines()}
    assert modes == {"data/fox": "120000", "rigs/fox.toml": "120000"}, "committed as symbolic links"


def test_the_fox_and_its_rig_load_from_another_folder(tmp_path):
    probe = ("from gpu_jiggle.data import fox_path, fox_rig_path\n"
             "from gpu_jiggle.character.gltf.loader import Character\n"
             "from gpu_jiggle.character.rig.reader import load_rig\n"
             "fox = Character.load(fox_path())\n"
             "rig = load_rig(fox_rig_path(), fox.skeleton)\n"
             "print(' '.join(fox.clip_names), len(rig.chains))\n")
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert result.returncode == 0, result.stderr
    clips, chains = result.stdout.rsplit(" ", 1)
    assert clips == "Survey Walk Run" and int(chains) > 3


def test_save_writes_through_a_linked_rig(tmp_path):
    from gpu_jiggle.app.tuning import RigTuning
    from gpu_jiggle.character.gltf.loader import Character
    from gpu_jiggle.character.pipeline import Pipeline
    from gpu_jiggle.character.rig.reader import load_rig

    real = tmp_path / "real" / "fox.toml"
    real.parent.mkdir()
    shutil.copy(data.fox_rig_path(), real)
    link = tmp_path / "fox.toml"
    link.symlink_to(real)
    fox = Character.load(data.fox_path())
    rig = load_rig(link, fox.skeleton)
    pipeline = Pipeline(fox, rig, clip="Run", backend="cpu")
    tuning = RigTuning(rig, fox.skeleton, lambda: pipeline, size=100.0)
    tuning.set("frequency:tail", 3.3)
    assert tuning.save().startswith("saved fox.toml")
    assert link.is_symlink(), "the link was replaced by a file"
    assert "frequency = [3.3, 2.75, 2.2]" in real.read_text(encoding="utf-8")
    assert not [p.name for p in real.parent.iterdir() if p != real], "a temporary file was left beside it"

"""An installed wheel, not the source tree, carries the files it points users to: docs/SPEC.md
(which error messages cite and ``gpu-jiggle spec`` prints) and the Fox sample with its licence
and rig (:mod:`gpu_jiggle.data`), found through importlib.resources from any folder."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SHIPPED = ["gpu_jiggle/docs/SPEC.md", "gpu_jiggle/data/__init__.py", "gpu_jiggle/data/fox/Fox.gltf",
           "gpu_jiggle/data/fox/LICENSE.md", "gpu_jiggle/data/fox/fox.toml", "gpu_jiggle/spec.py",
           "gpu_jiggle/app/spec.py"]

PROBE = """
import pathlib, sys
from gpu_jiggle import data, spec
from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.character.rig.reader import load_rig
site = pathlib.Path(sys.argv[1]).resolve()
for path in (spec.spec_path(), *data.sample("fox")):
    assert path.resolve().is_relative_to(site), path
    assert path.is_file(), path
assert "CC-BY 4.0" in data.fox_license_path().read_text(encoding="utf-8")
fox = Character.load(data.fox_path())
rig = load_rig(data.fox_rig_path(), fox.skeleton)
print("ok", len(rig.chains), spec.find_section("1").title)
"""


@pytest.fixture
def site(installed_wheel):
    """The wheel built from this checkout, installed with ``pip install --target`` (once per run,
    shared with tests/test_wheel.py): (site, names in the wheel)."""
    return installed_wheel


def run_in(site, args):
    env = dict(os.environ, PYTHONPATH=str(site))
    return subprocess.run([sys.executable, *args], cwd=site.parent, env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_wheel_holds_the_spec_and_the_fox(site):
    _, names = site
    assert [name for name in SHIPPED if name not in names] == []
    assert not [name for name in names if name.startswith("gpu_jiggle/docs/") and name != "gpu_jiggle/docs/SPEC.md"]


def test_the_installed_package_finds_its_files(site):
    path, _ = site
    result = run_in(path, ["-c", PROBE, str(path)])
    assert result.returncode == 0, result.stderr
    words = result.stdout.split()
    assert words[0] == "ok" and int(words[1]) > 3 and result.stdout.rstrip().endswith("One damped spring")


def test_the_installed_spec_command_prints_a_section_and_its_path(site):
    path, _ = site
    result = run_in(path, ["-m", "gpu_jiggle", "spec", "4.2"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("### 4.2 Colliders\n")
    result = run_in(path, ["-m", "gpu_jiggle", "spec", "--path"])
    assert result.returncode == 0, result.stderr
    shown = Path(result.stdout.strip())
    assert shown.resolve() == (path / "gpu_jiggle" / "docs" / "SPEC.md").resolve()

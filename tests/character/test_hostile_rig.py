"""Hostile and careless rig files: every value type-checked and bounded with the file, table and
key in the message, at load, never a traceback, never a hang."""
from __future__ import annotations

import subprocess
import sys

import pytest
from demo_support import FOX, FOX_RIG, ROOT

from gpu_jiggle.character.baking.run import bake
from gpu_jiggle.character.rig.model import RigError
from gpu_jiggle.character.rig.reader import load_rig

BASE = FOX_RIG.read_text(encoding="utf-8")


def rig_file(tmp_path, text, name="hostile.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def refused(fox, tmp_path, text, match):
    path = rig_file(tmp_path, text)
    with pytest.raises(RigError, match=match) as info:
        load_rig(path, fox.skeleton)
    assert str(path) in str(info.value)
    return str(info.value)


@pytest.mark.parametrize("text, match", [
    ("chain = [1, 2]\n", r"\[\[chain\]\] 0: expected a table, got int 1"),
    ("strands = 'mane'\n", r"\[\[strands\]\]: expected an array of tables"),
    ("[solver]\nmax_substeps = " + "9" * 401 + "\n", r"\[solver\]: max_substeps = 9999.*\.\.\.: expected an integer "
                                                      r"in \[1, 1000\]"),
    ("[solver]\nmax_substeps = 10000000000000000000000\n", r"max_substeps = 10000000000000000000000: expected an "
                                                           r"integer in \[1, 1000\]"),
    ("[solver]\nsubstep = 1e-6\nmax_substeps = 1000000000\n", r"max_substeps = 1000000000: expected an integer in"),
    ("[solver]\nsubstep = " + "9" * 401 + "\n", r"substep = 9999.*\.\.\.: expected a number of seconds in "
                                              r"\[1e-06, 1\]"),
    ("[solver]\nsubstep = 1e-300\n", r"\[solver\]: substep = 1e-300: expected a number of seconds in \[1e-06, 1\]"),
    ("[solver]\nsubstep = 2.5\n", r"\[solver\]: substep = 2.5: expected a number of seconds in \[1e-06, 1\]"),
])
def test_bad_tables_and_numbers_are_refused_with_file_and_key(fox, tmp_path, text, match):
    refused(fox, tmp_path, text, match)


def test_gravity_beyond_float32_is_refused_at_load(fox, tmp_path):
    text = BASE.replace("gravity = [0.0, -15.0, 0.0]", "gravity = [0.0, -1e300, 0.0]")
    assert text != BASE
    refused(fox, tmp_path, text, r"chain 'tail': gravity = \[0.0, -1e\+300, 0.0\]: expected finite numbers within "
                                 r"float32 range")


def test_huge_integers_in_spring_values_are_refused(fox, tmp_path):
    text = BASE.replace("frequency = [3.0, 2.5, 2.0]", "frequency = [3.0, " + "7" * 401 + ", 2.0]")
    assert text != BASE
    refused(fox, tmp_path, text, r"chain 'tail': frequency\[1\] = 7777.*\.\.\.: expected a number")


def test_a_million_strands_are_refused_before_they_are_built(fox, tmp_path):
    text = BASE.replace('name = "mane"\njoint = "b_Neck_04"\ncount = 6', 'name = "mane"\njoint = "b_Neck_04"\ncount = 1000000')
    assert text != BASE
    path = rig_file(tmp_path, text)
    probe = (f"from gpu_jiggle.character.gltf.loader import Character\nfrom gpu_jiggle.character.rig.model import RigError\nfrom gpu_jiggle.character.rig.reader import load_rig\n"
             f"fox = Character.load({str(FOX)!r})\n"
             f"try:\n    load_rig({str(path)!r}, fox.skeleton)\nexcept RigError as exc:\n    print(exc)\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "strands 'mane': the rig's chains and strands have 30000" in result.stdout  # the mane's 3e6 and the rest
    assert "segments so far; at most 1000000" in result.stdout


def test_deeply_nested_toml_is_refused(fox, tmp_path):
    refused(fox, tmp_path, "x = " + "[" * 100_000 + "]" * 100_000 + "\n", r"not valid TOML")


def test_a_rig_file_too_large_is_not_read(fox, tmp_path, monkeypatch):
    from gpu_jiggle.character.rig import reader as rig
    monkeypatch.setattr(rig, "MAX_RIG_FILE_BYTES", 1000)
    refused(fox, tmp_path, BASE, r"larger than 1000 bytes; not read as a rig")


def test_the_bake_refuses_absurd_lengths_before_simulating(fox, rig, tmp_path):
    with pytest.raises(ValueError, match=r"clip 'Run' of 1.1\d* s with 1e\+09 s of preroll at 30 fps is \d+ frames "
                                         r"to simulate; at most 200000"):
        bake(fox, rig, "Run", 30, tmp_path / "x.glb", preroll=1e9, backend="cpu")
    with pytest.raises(ValueError, match=r"at 1e\+07 fps is \d+ frames"):
        bake(fox, rig, "Run", 1e7, tmp_path / "x.glb", backend="cpu")
    assert not (tmp_path / "x.glb").exists()


def test_the_command_line_says_one_line_for_a_hostile_rig(tmp_path):
    path = rig_file(tmp_path, "chain = [1, 2]\n")
    result = subprocess.run([sys.executable, "-m", "gpu_jiggle", "bake", str(FOX), "--rig", str(path), "--animation",
                             "Run", "--out", str(tmp_path / "x.glb")], capture_output=True, text=True, timeout=120,
                            cwd=ROOT)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "expected a table" in result.stderr

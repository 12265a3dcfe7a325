"""Baking the Fox's Run: the keyframes written are the live pipeline's rotations bit for
bit, the copy loads back, and every channel and byte not baked is as it was; the command
line, with clear one-line errors for bad input."""
from __future__ import annotations

import base64
import json
import math

import numpy as np
import pytest

from gpu_jiggle.character.bake import bake, key_count
from gpu_jiggle.app.cli import main
from gpu_jiggle.character.gltf import Character
from gpu_jiggle.character.pipeline import Pipeline
from demo_support import FOX, FOX_RIG

FPS = 30
PREROLL = 0.5


@pytest.fixture(scope="module")
def baked_cpu(fox, rig, tmp_path_factory):
    out = tmp_path_factory.mktemp("bake") / "fox_run.glb"
    bake(fox, rig, "Run", FPS, out, preroll=PREROLL, backend="cpu")
    return out


def _baked_rotations(path, rig):
    copy = Character.load(path)
    clip = copy.clip("Run")
    by_node = {ch.node: ch for ch in clip.channels if ch.path == "rotation"}
    out = {}
    for node in rig.chain_joints:
        ch = by_node[node]
        assert ch.sampler.interpolation == "LINEAR"
        out[node] = ch.sampler
    return copy, out


def test_baked_rotations_equal_the_live_run_bit_for_bit(fox, rig, backend, tmp_path):
    out = tmp_path / "fox_run.glb"
    result = bake(fox, rig, "Run", FPS, out, preroll=PREROLL, backend=backend)
    assert result.backend == backend
    clip = fox.clip("Run")
    n = key_count(clip.duration, FPS)
    assert n == 36  # ceil(1.1583 s · 30) + 1
    skip = round(PREROLL * FPS)
    live = {node: [] for node in rig.chain_joints}
    with Pipeline(fox, rig, "Run", constraints=[], backend=backend) as pipeline:
        for k, frame in enumerate(pipeline.play(FPS, (skip + n - 1) / FPS, start=clip.start - skip / FPS)):
            if k >= skip:
                for node in live:
                    live[node].append(frame.pose.rotation[node].astype(np.float32))
    _, samplers = _baked_rotations(out, rig)
    for node, sampler in samplers.items():
        stored = sampler.values.astype(np.float32)  # the file's float32 values, read back exactly
        np.testing.assert_array_equal(stored, np.array(live[node]))
        np.testing.assert_array_equal(sampler.times.astype(np.float32), (np.arange(n) / FPS).astype(np.float32))
        np.testing.assert_allclose(np.linalg.norm(stored, axis=1), 1.0, atol=1e-6)


def test_everything_not_baked_is_unchanged(fox, rig, baked_cpu):
    copy, _ = _baked_rotations(baked_cpu, rig)
    before, after = fox.json, copy.json
    for key in set(before) | set(after):
        if key not in ("accessors", "bufferViews", "buffers", "animations"):
            assert after.get(key) == before.get(key), key
    for key in ("accessors", "bufferViews"):
        assert after[key][: len(before[key])] == before[key]
    assert copy.buffers[0][: len(fox.buffers[0])] == fox.buffers[0]  # every old byte where it was
    chain = set(rig.chain_joints)
    for a, b in zip(fox.json["animations"], copy.json["animations"]):
        if a["name"] != "Run":
            assert a == b
            continue
        assert len(a["channels"]) == len(b["channels"]) and a["name"] == b["name"]
        for ca, cb in zip(a["channels"], b["channels"]):
            assert ca == cb
            if ca["target"]["node"] in chain and ca["target"]["path"] == "rotation":
                continue
            sa, sb = a["samplers"][ca["sampler"]], b["samplers"][cb["sampler"]]
            assert sa == sb
            for key in ("input", "output"):
                assert copy.accessor(sb[key]).tobytes() == fox.accessor(sa[key]).tobytes()
    # and the sampled animation is the same wherever springs do not act
    rest = fox.skeleton.rest_pose()
    for t in np.linspace(0.0, 1.1, 12):
        p, q = fox.clip("Run").sample(rest, t), copy.clip("Run").sample(rest, t)
        others = np.setdiff1d(np.arange(fox.skeleton.node_count), sorted(chain))
        np.testing.assert_array_equal(p.rotation[others], q.rotation[others])
        np.testing.assert_array_equal(p.translation, q.translation)
    np.testing.assert_array_equal(copy.meshes[0].base_color_texture, fox.meshes[0].base_color_texture)


def test_bake_command(tmp_path, capsys):
    out = tmp_path / "fox_run.glb"
    rc = main(["bake", str(FOX), "--rig", str(FOX_RIG), "--animation", "Run", "--fps", "30", "--out", str(out),
               "--preroll", "0.2", "--backend", "cpu"])
    printed = capsys.readouterr()
    assert rc == 0, printed.err
    assert "baked 'Run': 36 keys at 30 fps for 3 joints (b_Tail01_012, b_Tail02_013, b_Tail03_014)" in printed.out
    assert Character.load(out).clip_names == ["Survey", "Walk", "Run"]


def _fails(capsys, args, message):
    rc = main(["bake", *args])
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    return err


def test_bake_command_bad_input(tmp_path, capsys):
    good = ["--rig", str(FOX_RIG), "--animation", "Run", "--out", str(tmp_path / "x.glb")]
    _fails(capsys, [str(tmp_path / "none.gltf"), *good], "none.gltf: no such glTF file")
    text = FOX.read_bytes()
    (tmp_path / "cut.gltf").write_bytes(text[:5000])
    _fails(capsys, [str(tmp_path / "cut.gltf"), *good], "cut.gltf: not a glTF file: this file is not valid JSON")
    (tmp_path / "cut.glb").write_bytes(b"glTF" + (2).to_bytes(4, "little") + (99999).to_bytes(4, "little") + b"\0" * 40)
    _fails(capsys, [str(tmp_path / "cut.glb"), *good], "cut.glb: truncated binary glTF")
    (tmp_path / "notes.gltf").write_bytes(b"\xff\xd8\xff\xe0 a JPEG, not glTF")
    _fails(capsys, [str(tmp_path / "notes.gltf"), *good], "notes.gltf: not a glTF file")
    err = _fails(capsys, [str(FOX), "--rig", str(FOX_RIG), "--animation", "Gallop", "--out", str(tmp_path / "x.glb")],
                 "no animation called 'Gallop'; the file's animations are: Survey, Walk, Run")
    rig_text = FOX_RIG.read_text()
    (tmp_path / "joint.toml").write_text(rig_text.replace('"b_Tail02_013"', '"b_Tail2"'))
    err = _fails(capsys, [str(FOX), "--rig", str(tmp_path / "joint.toml"), "--animation", "Run", "--out", "x.glb"],
                 "chain 'tail': unknown joint 'b_Tail2'; did you mean 'b_Tail02_013'? The skeleton's joints are: ")
    assert "b_Tail02_013" in err
    (tmp_path / "numbers.toml").write_text(rig_text.replace("damping_ratio = [0.5, 0.4, 0.35]",
                                                            "damping_ratio = [0.5, -0.4, 0.35]"))
    _fails(capsys, [str(FOX), "--rig", str(tmp_path / "numbers.toml"), "--animation", "Run", "--out", "x.glb"],
           "chain 'tail': damping_ratio[1] = -0.4: expected a finite value >= 0")
    (tmp_path / "unstable.toml").write_text(rig_text.replace("frequency = [6.0, 5.0, 4.0]", "frequency = 90.0"))
    _fails(capsys, [str(FOX), "--rig", str(tmp_path / "unstable.toml"), "--animation", "Run", "--out", "x.glb"],
           "is unstable for the substep")
    _fails(capsys, [str(FOX), "--rig", str(tmp_path / "none.toml"), "--animation", "Run", "--out", "x.glb"],
           "none.toml: no such rig file")
    _fails(capsys, [str(FOX), "--rig", str(FOX_RIG), "--animation", "Run", "--out", str(tmp_path / "x.fbx")],
           "expected a .glb or .gltf file name")
    _fails(capsys, [str(FOX), "--rig", str(FOX_RIG), "--animation", "Run", "--fps", "0", "--out", "x.glb"],
           "fps = 0.0: expected a finite number > 0")
    assert not (tmp_path / "x.glb").exists()


def test_gltf_output_embeds_its_buffers(fox, rig, tmp_path):
    out = tmp_path / "fox_run.gltf"
    bake(fox, rig, "Walk", 24, out, preroll=0.0, backend="cpu")
    doc = json.loads(out.read_text())
    assert doc["buffers"][0]["uri"].startswith("data:application/octet-stream;base64,")
    data = base64.b64decode(doc["buffers"][0]["uri"].partition(",")[2])
    assert data[: len(fox.buffers[0])] == fox.buffers[0]
    copy = Character.load(out)
    assert math.isclose(copy.clip("Walk").duration, 17 / 24, rel_tol=1e-6)  # ceil(0.7083 · 24) = 17 frames

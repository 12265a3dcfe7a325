"""Baking the Fox: the keyframes written are the live pipeline's rotations bit for bit at the
same times, the baked clip spans exactly the source's, the loop closes, the copy passes the
Khronos validator and loads back, and every channel and byte not baked is as it was; the
command line, with clear one-line errors for bad input."""
from __future__ import annotations

import base64
import json
import math

import numpy as np
import pytest

from gpu_jiggle.app.cli import main
from gpu_jiggle.character.pose.animation import Channel, Clip, Sampler
from gpu_jiggle.character.baking.run import DEFAULT_PREROLL, bake, bake_schedule
from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.character.pipeline import Pipeline
from demo_support import FOX, FOX_RIG
from gltf_validator import assert_valid

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


def input_bounds(character) -> list:
    """Per animation, (min, max) over every sampler input, as the file's float32 values."""
    out = []
    for a in character.json.get("animations", []):
        inputs = [character.accessor(s["input"]) for s in a["samplers"]]
        out.append((min(i.min() for i in inputs), max(i.max() for i in inputs)))
    return out


def test_baked_rotations_equal_the_live_run_bit_for_bit(fox, rig, backend, tmp_path, gltf_validator):
    out = tmp_path / "fox_run.glb"
    result = bake(fox, rig, "Run", FPS, out, preroll=PREROLL, backend=backend)
    assert result.backend == backend
    clip = fox.clip("Run")
    # the Run's own keys are uneven (the last step is 0.2 s): 35 equal steps, at least 30 a second,
    # from the first key to the last exactly
    steps = math.ceil(clip.duration * FPS)
    assert steps == 35
    times = (clip.start + np.arange(steps + 1) * (clip.duration / steps)).astype(np.float32)
    times[-1] = np.float32(clip.end)
    np.testing.assert_array_equal(result.times, times)
    assert result.times[-1] == np.float32(1.1583333)
    dt = clip.duration / steps
    skip = round(PREROLL / dt)
    preroll = [float(times[k % steps]) for k in range(-skip, 0)]  # the loop's last stretch, played before it
    live = {node: [] for node in rig.chain_joints}
    with Pipeline(fox, rig, "Run", loop=False, constraints=[], backend=backend) as pipeline:
        for k, t in enumerate(preroll + [float(t) for t in times]):
            frame = pipeline.step(t, dt)
            if k >= skip:
                for node in live:
                    live[node].append(frame.pose.rotation[node].astype(np.float32))
    _, samplers = _baked_rotations(out, rig)
    for node, sampler in samplers.items():
        stored = sampler.values.astype(np.float32)  # the file's float32 values, read back exactly
        np.testing.assert_array_equal(stored, np.array(live[node]))
        np.testing.assert_array_equal(sampler.times.astype(np.float32), times)
        np.testing.assert_allclose(np.linalg.norm(stored, axis=1), 1.0, atol=1e-6)
    assert_valid(out, gltf_validator)


@pytest.mark.parametrize("clip, fps", [("Walk", None), ("Run", None), ("Survey", 24), ("Walk", 60)])
def test_baked_clips_keep_their_duration(fox, rig, tmp_path, clip, fps, gltf_validator):
    out = tmp_path / f"fox_{clip}.glb"
    result = bake(fox, rig, clip, fps, out, preroll=0.2, backend="cpu")
    copy = Character.load(out)
    assert input_bounds(copy) == input_bounds(fox), "every clip starts and ends where it did, to the float"
    index = fox.clip_names.index(clip)
    assert (result.times[0], result.times[-1]) == input_bounds(fox)[index]
    assert np.all(np.diff(result.times) > 0)
    if fps is None and clip == "Walk":  # evenly spaced at 24 a second: the Walk's own key times, bytes and all
        assert result.schedule.source
        (source_input,) = {s["input"] for s in fox.json["animations"][index]["samplers"]}
        assert result.times.tobytes() == fox.accessor(source_input).tobytes()
    else:
        assert not result.schedule.source
        rate = fps or 30
        assert rate <= result.schedule.rate < rate * (1 + 1 / (copy.clip(clip).duration * rate))
    assert_valid(out, gltf_validator)


def test_the_loop_closes(fox, rig, tmp_path):
    """After the preroll the springs swing in step with the looping Run: the first and the
    last baked keys (the same instant of the loop) agree, while the tail swings far."""
    result = bake(fox, rig, "Run", None, tmp_path / "fox.glb", preroll=DEFAULT_PREROLL, backend="cpu")
    for node, q in result.rotations.items():
        q = q.astype(np.float64)
        angle = lambda a, b: math.degrees(2 * math.acos(min(1.0, abs(float(np.dot(a, b))))))  # noqa: E731
        assert angle(q[0], q[-1]) < 0.05, node
        assert max(angle(q[0], r) for r in q) > 30, node


def test_the_schedule_refuses_keys_float32_cannot_tell_apart():
    late = Clip("late", [Channel(0, "translation", Sampler([3000.0, 3000.002], np.zeros((2, 3))))])
    assert len(bake_schedule(late, fps=2000).times) == 5  # float32 steps of 2.4e-4 s there
    with pytest.raises(ValueError, match="closer than float32 key times can be told apart; lower the fps"):
        bake_schedule(late, fps=100_000, preroll=0.0)


@pytest.mark.parametrize("fps", [1e-9, 1e-3, 0.5])
def test_a_rate_below_one_key_per_clip_still_gives_the_first_and_last_keys(fps):
    """``--fps F`` asks for at least F keys a second and the clip's own first and last keys;
    below one step per clip (1e-9 gave one key, at the end) it is the two of them."""
    start, end = 0.25, 0.75
    clip = Clip("short", [Channel(0, "translation", Sampler([start, 0.5, end], np.zeros((3, 3))))])
    schedule = bake_schedule(clip, fps=fps, preroll=3.0)
    assert schedule.times.tolist() == [np.float32(start), np.float32(end)]
    assert schedule.dt == pytest.approx(end - start)
    assert len(schedule.preroll) == round(3.0 / (end - start))


def test_everything_not_baked_is_unchanged(fox, rig, baked_cpu):
    copy, _ = _baked_rotations(baked_cpu, rig)
    before, after = fox.json, copy.json
    for key in set(before) | set(after):
        if key not in ("accessors", "bufferViews", "buffers", "animations", "images", "asset"):
            assert after.get(key) == before.get(key), key
    marked = {k: v for k, v in after["asset"].items() if k not in ("extras", "generator")}
    assert marked == before["asset"], "the asset keeps its copyright and version; the bake adds its mark"
    assert after["asset"]["extras"]["gpu_jiggle_baked"]["clip"] == "Run"
    assert after["asset"]["generator"].startswith("gpu_jiggle ") and " bake" in after["asset"]["generator"]
    # the baked rotations' outputs take the places of those they replace (nothing else reads them)
    baked = {s["output"] for a in after["animations"] if a["name"] == "Run" for c in a["channels"]
             for s in [a["samplers"][c["sampler"]]]
             if c["target"]["node"] in set(rig.chain_joints) and c["target"]["path"] == "rotation"}
    assert baked and all(i < len(before["accessors"]) for i in baked)
    assert [a for i, a in enumerate(after["accessors"][: len(before["accessors"])]) if i not in baked] == \
        [a for i, a in enumerate(before["accessors"]) if i not in baked]
    # the views of key times, key values and inverse bind matrices lose the byteStride glTF forbids
    # there (each equal to its element size: the same bytes, tightly packed); nothing else changes
    packed = {s[k] for a in before["animations"] for s in a["samplers"] for k in ("input", "output")}
    packed |= {s["inverseBindMatrices"] for s in before["skins"]}
    packed_views = {before["accessors"][i]["bufferView"] for i in packed}
    for v, (old, new) in enumerate(zip(before["bufferViews"], after["bufferViews"])):
        expect = {k: x for k, x in old.items() if not (v in packed_views and k == "byteStride")}
        assert new == expect, v
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
    # the embedded texture moved into the binary chunk, its bytes and mimeType kept
    (image,) = after["images"]
    assert image["mimeType"] == "image/png" and "uri" not in image
    assert copy.image_data[0] == fox.image_data[0]
    np.testing.assert_array_equal(copy.meshes[0].base_color_texture, fox.meshes[0].base_color_texture)


def test_bake_command(tmp_path, capsys, gltf_validator):
    out = tmp_path / "fox_run.glb"
    rc = main(["bake", str(FOX), "--rig", str(FOX_RIG), "--animation", "Run", "--out", str(out),
               "--preroll", "0.2", "--backend", "cpu"])
    printed = capsys.readouterr()
    assert rc == 0, printed.err
    assert ("baked 'Run': 36 keys (30.22 per second, 0 to 1.15833 s) for 3 joints (b_Tail01_012, b_Tail02_013, "
            "b_Tail03_014)") in printed.out
    assert Character.load(out).clip_names == ["Survey", "Walk", "Run"]
    assert_valid(out, gltf_validator)
    rc = main(["bake", str(FOX), "--rig", str(FOX_RIG), "--animation", "Walk", "--out", str(out),
               "--preroll", "0.2", "--backend", "cpu"])
    assert rc == 0 and "baked 'Walk': 18 keys (the clip's own key times, 0 to 0.708333 s)" in capsys.readouterr().out
    assert_valid(out, gltf_validator)


def test_bake_never_writes_over_its_inputs_and_refuses_a_baked_model_without_force(tmp_path, capsys):
    import os
    import shutil

    model, rig = tmp_path / "Fox.gltf", tmp_path / "fox.toml"
    shutil.copy(FOX, model)
    shutil.copy(FOX_RIG, rig)
    original = model.read_bytes()
    settings = ["--rig", str(rig), "--animation", "Run", "--preroll", "0", "--fps", "10", "--backend", "cpu"]
    os.symlink(model, tmp_path / "link.gltf")
    os.link(model, tmp_path / "hard.gltf")
    for out in (model, tmp_path / "link.gltf", tmp_path / "hard.gltf"):
        _fails(capsys, [str(model), *settings, "--out", str(out)], "is an input of the bake")
    assert model.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Fox.gltf", "fox.toml", "hard.gltf", "link.gltf"]

    baked = tmp_path / "fox_run.glb"
    assert main(["bake", str(model), *settings, "--out", str(baked)]) == 0
    once = baked.read_bytes()
    capsys.readouterr()
    _fails(capsys, [str(baked), *settings, "--out", str(tmp_path / "twice.glb")], "already a bake")
    assert not (tmp_path / "twice.glb").exists()
    _fails(capsys, [str(baked), *settings, "--out", str(baked), "--force"], "is an input of the bake")
    assert baked.read_bytes() == once
    assert main(["bake", str(baked), *settings, "--out", str(tmp_path / "twice.glb"), "--force"]) == 0
    (tmp_path / "folder.glb").mkdir()  # refused before the run, as a folder, not after it by the write
    _fails(capsys, [str(model), *settings, "--out", str(tmp_path / "folder.glb")], "folder.glb': is a folder")
    assert not any((tmp_path / "folder.glb").iterdir())


def _fails(capsys, args, message):
    rc = main(["bake", *args])
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    return err


def test_bake_command_bad_input(tmp_path, capsys):
    out = str(tmp_path / "x.glb")
    good = ["--rig", str(FOX_RIG), "--animation", "Run", "--out", out]
    _fails(capsys, [str(tmp_path / "none.gltf"), *good], "none.gltf: no such glTF file")
    text = FOX.read_bytes()
    (tmp_path / "cut.gltf").write_bytes(text[:5000])
    _fails(capsys, [str(tmp_path / "cut.gltf"), *good], "cut.gltf: not a glTF file: this file is not valid JSON")
    (tmp_path / "cut.glb").write_bytes(b"glTF" + (2).to_bytes(4, "little") + (99999).to_bytes(4, "little") + b"\0" * 40)
    _fails(capsys, [str(tmp_path / "cut.glb"), *good], "cut.glb: truncated binary glTF")
    (tmp_path / "notes.gltf").write_bytes(b"\xff\xd8\xff\xe0 a JPEG, not glTF")
    _fails(capsys, [str(tmp_path / "notes.gltf"), *good], "notes.gltf: not a glTF file")
    err = _fails(capsys, [str(FOX), "--rig", str(FOX_RIG), "--animation", "Gallop", "--out", out],
                 "no animation called 'Gallop'; the file's animations are: Survey, Walk, Run")
    rig_text = FOX_RIG.read_text()

    def changed(old, new):  # the rig with one value changed (it must be there to change)
        assert old in rig_text, old
        return rig_text.replace(old, new)

    (tmp_path / "joint.toml").write_text(changed('"b_Tail02_013"', '"b_Tail2"'))
    err = _fails(capsys, [str(FOX), "--rig", str(tmp_path / "joint.toml"), "--animation", "Run", "--out", out],
                 "chain 'tail': unknown joint 'b_Tail2'; did you mean 'b_Tail02_013'?")
    assert "b_Head_05" not in err  # a close match is named alone, without the other joints
    (tmp_path / "numbers.toml").write_text(changed("damping_ratio = [0.3, 0.25, 0.2]",
                                                   "damping_ratio = [0.3, -0.4, 0.2]"))
    _fails(capsys, [str(FOX), "--rig", str(tmp_path / "numbers.toml"), "--animation", "Run", "--out", out],
           "chain 'tail': damping_ratio[1] = -0.4: expected a finite value >= 0")
    (tmp_path / "unstable.toml").write_text(changed("frequency = [3.0, 2.5, 2.0]", "frequency = 90.0"))
    _fails(capsys, [str(FOX), "--rig", str(tmp_path / "unstable.toml"), "--animation", "Run", "--out", out],
           "is unstable for the substep")
    _fails(capsys, [str(FOX), "--rig", str(tmp_path / "none.toml"), "--animation", "Run", "--out", out],
           "none.toml: no such rig file")
    _fails(capsys, [str(FOX), "--rig", str(FOX_RIG), "--animation", "Run", "--out", str(tmp_path / "x.fbx")],
           "expected a .glb, .gltf or .vrm file name")
    _fails(capsys, [str(FOX), "--rig", str(FOX_RIG), "--animation", "Run", "--fps", "0", "--out", out],
           "fps = 0.0: expected a finite number > 0")
    _fails(capsys, [str(FOX), "--animation", "Run", "--out", out],
           "no --rig given and the model has no VRM spring bones")
    assert not (tmp_path / "x.glb").exists()


def test_gltf_output_embeds_its_buffers(fox, rig, tmp_path, gltf_validator):
    out = tmp_path / "fox_run.gltf"
    bake(fox, rig, "Walk", 24, out, preroll=0.0, backend="cpu")
    doc = json.loads(out.read_text())
    assert doc["buffers"][0]["uri"].startswith("data:application/octet-stream;base64,")
    data = base64.b64decode(doc["buffers"][0]["uri"].partition(",")[2])
    assert data[: len(fox.buffers[0])] == fox.buffers[0]
    assert doc["images"] == fox.json["images"], "a data: URI image stays as it was in a .gltf"
    copy = Character.load(out)
    assert copy.clip("Walk").duration == fox.clip("Walk").duration
    assert_valid(out, gltf_validator)

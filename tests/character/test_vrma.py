"""VRM animations (.vrma) on VRM avatars: each humanoid bone turns in the world as in the
animation (a VRM 0.x avatar, facing -z, turned half round), the hips move as the animation's
scaled by height, and the CLI plays and bakes a .vrma."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from gpu_jiggle.app.cli import main
from gpu_jiggle.character.pose import quat
from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.character.gltf.vrm import humanoid_bones
from gpu_jiggle.character.gltf.vrma import VrmaError, vrma_clip

VRM = Path(__file__).resolve().parents[2] / "data" / "vrm"
GODETTE, VRMA = VRM / "Godette_vrm_v4.vrm", VRM / "test.vrma"


def _direction(world, bones, a, b):
    d = world[bones[b], :3, 3] - world[bones[a], :3, 3]
    return d / np.linalg.norm(d)


def test_a_vrma_turns_the_avatars_bones_as_the_animation_turns_its_own():
    avatar, animation = Character.load(GODETTE), Character.load(VRMA)
    clip = vrma_clip(avatar, VRMA)
    ours, theirs = humanoid_bones(avatar.json), humanoid_bones(animation.json)
    assert clip.name == "vrma_test" and [avatar.skeleton.names[c.node] for c in clip.channels] == ["upper_arm.r_Armature"]
    rest_ours = _direction(avatar.skeleton.world_matrices(avatar.skeleton.rest), ours, "rightUpperArm", "rightLowerArm")
    half = np.array([0.0, 1.0, 0.0, 0.0])  # VRM 0.x faces -z: half a turn about +y
    bone_ours, bone_theirs = ours["rightUpperArm"], theirs["rightUpperArm"]
    rest_q = avatar.skeleton.world_rotations(avatar.skeleton.rest)[bone_ours]
    rest_q_theirs = animation.skeleton.world_rotations(animation.skeleton.rest)[bone_theirs]
    for t in np.linspace(0.0, 1.0, 9):
        now = avatar.skeleton.world_rotations(clip.sample(avatar.skeleton.rest, t))[bone_ours]
        moved = animation.skeleton.world_rotations(animation.clips[0].sample(animation.skeleton.rest, t))[bone_theirs]
        # the bone's turn from rest in the world is the animation's, turned half round
        turn_ours = quat.multiply(now, quat.conjugate(rest_q))
        turn_theirs = quat.multiply(quat.multiply(half, quat.multiply(moved, quat.conjugate(rest_q_theirs))),
                                    quat.conjugate(half))
        assert abs(turn_ours @ turn_theirs) == pytest.approx(1.0, abs=1e-12), t
        world = avatar.skeleton.world_matrices(clip.sample(avatar.skeleton.rest, t))
        arm = _direction(world, ours, "rightUpperArm", "rightLowerArm")
        assert np.degrees(np.arccos(np.clip(arm @ quat.rotate(turn_ours, rest_ours), -1, 1))) < 1e-6
    down = _direction(avatar.skeleton.world_matrices(clip.sample(avatar.skeleton.rest, 0.5)), ours,
                      "rightUpperArm", "rightLowerArm")
    assert down[1] < -0.99, "at 0.5 s the right arm hangs down"


def test_the_hips_move_as_the_animations_scaled_by_height(tmp_path):
    doc = json.loads(_json(VRMA))
    hips = doc["extensions"]["VRMC_vrm_animation"]["humanoid"]["humanBones"]["hips"]["node"]
    moving = copy.deepcopy(doc)
    animation = moving["animations"][0]
    happy = next(c for c in animation["channels"] if c["target"]["path"] == "translation")
    happy["target"]["node"] = hips  # the expression's key values, (1, 0, 0) at 1.5 s, move the hips
    path = tmp_path / "hips.vrma"
    _write_glb(path, moving, VRMA)
    avatar = Character.load(GODETTE)
    clip = vrma_clip(avatar, path)
    node = humanoid_bones(avatar.json)["hips"]
    (channel,) = [c for c in clip.channels if c.path == "translation"]
    assert channel.node == node
    src = Character.load(path)
    scale = avatar.skeleton.world_matrices(avatar.skeleton.rest)[node, 1, 3] / \
        src.skeleton.world_matrices(src.skeleton.rest)[hips, 1, 3]
    for t in (0.0, 1.5, 2.2):
        world = avatar.skeleton.world_matrices(clip.sample(avatar.skeleton.rest, t))[node, :3, 3]
        rest = avatar.skeleton.world_matrices(avatar.skeleton.rest)[node, :3, 3]
        moved = src.skeleton.world_matrices(src.clips[0].sample(src.skeleton.rest, t))[hips, :3, 3]
        move = moved - src.skeleton.world_matrices(src.skeleton.rest)[hips, :3, 3]
        assert np.abs(move).max() > 0.5  # the channel's values replace the hips' rest place
        np.testing.assert_allclose(world - rest, move * [-1.0, 1.0, -1.0] * scale, atol=1e-9)  # turned half round


def test_bad_animations_are_refused():
    avatar = Character.load(GODETTE)
    with pytest.raises(VrmaError, match="not a VRM animation"):
        vrma_clip(avatar, GODETTE)
    with pytest.raises(FileNotFoundError):
        vrma_clip(avatar, VRM / "missing.vrma")
    fox = Character.load(Path(__file__).resolve().parents[2] / "data" / "fox" / "Fox.gltf")
    with pytest.raises(VrmaError, match="no VRM humanoid bones"):
        vrma_clip(fox, VRMA)


def test_the_cli_bakes_a_vrma_into_a_vrm(tmp_path, capsys, gltf_validator):
    out = tmp_path / "waving.vrm"
    assert main(["bake", str(GODETTE), "--animation", str(VRMA), "--backend", "cpu", "--out", str(out)]) == 0, \
        capsys.readouterr().err
    assert "baked 'vrma_test'" in capsys.readouterr().out
    baked = Character.load(out)
    assert baked.clip_names == ["vrma_test"]
    assert gltf_validator(out).errors == 0
    assert main(["bake", str(GODETTE), "--animation", str(VRM / "none.vrma"), "--out", str(out)]) == 2
    assert "none.vrma" in capsys.readouterr().err


def _json(path) -> str:
    data = path.read_bytes()
    return data[20:20 + int.from_bytes(data[12:16], "little")].decode("utf-8")


def _write_glb(path, doc, source):
    """``doc`` as a binary glTF with ``source``'s binary chunk."""
    data = source.read_bytes()
    length = int.from_bytes(data[12:16], "little")
    blob = data[20 + length:]
    text = json.dumps(doc).encode("utf-8")
    text += b" " * (-len(text) % 4)
    body = len(text).to_bytes(4, "little") + b"JSON" + text + blob
    path.write_bytes(b"glTF" + (2).to_bytes(4, "little") + (12 + len(body)).to_bytes(4, "little") + body)


def test_hips_resting_near_the_ground_are_refused_naming_the_file(tmp_path):
    """A hips rest height of 1e-30 would scale the moves by 1e30 and fail later, naming no file."""
    doc = json.loads(_json(VRMA))
    hips = doc["extensions"]["VRMC_vrm_animation"]["humanoid"]["humanBones"]["hips"]["node"]
    moving = copy.deepcopy(doc)
    happy = next(c for c in moving["animations"][0]["channels"] if c["target"]["path"] == "translation")
    happy["target"]["node"] = hips
    source = Character.load(VRMA).skeleton
    parent = source.parents[hips]
    parent_height = source.world_matrices(source.rest)[parent, 1, 3] if parent >= 0 else 0.0
    node = moving["nodes"][hips]
    node["translation"] = [node.get("translation", [0.0] * 3)[0], 1e-30 - parent_height,
                           node.get("translation", [0.0] * 3)[2]]
    path = tmp_path / "flat.vrma"
    _write_glb(path, moving, VRMA)
    with pytest.raises(VrmaError, match=r"flat\.vrma: its hips rest at height 1e-30 and those of "
                                        r"Godette_vrm_v4\.vrm at [\d.]+: the moves would be scaled by"):
        vrma_clip(Character.load(GODETTE), path)

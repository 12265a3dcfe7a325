"""The built-in motions (idle, turn, walk, shake) for characters without clips: the head found by name,
the joints they move, seamless loops, springs that can be seen, travel, and the motion written
into a copy of the file for the bake."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gpu_jiggle.character.pose import quat
from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.character.motion import MOTIONS, PERIODS, Motion, builtin_motion, find_head, with_motion
from gpu_jiggle.character.pipeline import Pipeline
from gpu_jiggle.character.pose.skeleton import Pose, Skeleton
from gpu_jiggle.character.travel import make_pipeline

SIMPLE_MORPH = Path(__file__).resolve().parents[1] / "data" / "khronos" / "SimpleMorph" / "glTF-Embedded" / \
    "SimpleMorph.gltf"


def skeleton(names, parents) -> Skeleton:
    n = len(names)
    return Skeleton(names, parents, Pose(np.zeros((n, 3)), np.tile(quat.IDENTITY, (n, 1)), np.ones((n, 3))))


@pytest.mark.parametrize("names, parents, head", [
    (["Hips", "Spine", "Neck", "Head", "HeadTop_End"], [-1, 0, 1, 2, 3], "Head"),
    (["J_Bip_C_Hips", "J_Bip_C_Neck", "J_Bip_C_Head", "J_Adj_L_FaceEye"], [-1, 0, 1, 2], "J_Bip_C_Head"),
    (["mixamorig:Hips", "mixamorig:Neck", "mixamorig:Head", "mixamorig:HeadTop_End"], [-1, 0, 1, 2],
     "mixamorig:Head"),
    (["root", "b_Neck_04", "b_Head_05", "forehead_ctrl"], [-1, 0, 1, 2], "b_Head_05"),
    (["torso", "Skeleton_neck_joint_1", "Skeleton_neck_joint_2"], [-1, 0, 1], "Skeleton_neck_joint_2"),
    (["Bone", "Bone.001", "Overhead"], [-1, 0, 1], None),
])
def test_the_head_is_found_by_name(names, parents, head):
    found = find_head(skeleton(names, parents))
    assert (None if found is None else names[found]) == head


def test_each_motion_moves_the_root_and_the_head_of_the_fox(fox):
    head = fox.skeleton.index("b_Head_05")
    for kind in MOTIONS:
        motion = builtin_motion(fox, kind)
        assert isinstance(motion, Motion) and motion.name == f"motion_{kind}" and motion.duration == PERIODS[kind]
        moved = {(c.node, c.path) for c in motion.channels}
        assert {(0, "translation"), (0, "rotation"), (head, "rotation")} <= moved, moved
        for c in motion.channels:  # one loop: the last key is the first
            np.testing.assert_allclose(c.sampler.values[-1], c.sampler.values[0], atol=1e-9)


def test_the_turn_turns_the_head_about_the_vertical(fox):
    sk = fox.skeleton
    head = sk.index("b_Head_05")
    motion = builtin_motion(fox, "turn")
    rest = sk.world_matrices(sk.rest_pose())
    yaws = []
    for t in (0.0, 1.0, 2.0, 3.0):
        world = sk.world_matrices(motion.sample(sk.rest_pose(), t))
        turn = world[head, :3, :3] @ np.linalg.inv(rest[head, :3, :3])
        np.testing.assert_allclose(turn @ [0, 1, 0], [0, 1, 0], atol=1e-9)  # about the vertical only
        yaws.append(np.degrees(np.arctan2(turn[0, 2], turn[2, 2])))
    assert abs(yaws[0]) < 1e-6 and yaws[1] > 45 and abs(yaws[2]) < 1e-6 and yaws[3] < -45, yaws


def test_springs_can_be_seen_in_every_motion(fox, rig):
    """The springs leave their animated targets behind while the body moves: the tail (on the
    body), and the head's strands in the head shake, which moves the head alone."""
    for kind in MOTIONS:
        chains = [i for i, c in enumerate(rig.chains) if (c.kind == "strand") == (kind == "shake")]
        with Pipeline(fox, rig, builtin_motion(fox, kind)) as pipeline:
            lag = max(np.abs(frame.chain_positions[i] - frame.chain_targets[i]).max()
                      for frame in pipeline.play(fps=30, seconds=2) for i in chains)
        assert lag > 0.5, (kind, lag)  # the Fox's unit is about a centimetre


def test_the_walk_travels_forward_and_the_others_stay(fox):
    walk = make_pipeline(fox, None, builtin_motion(fox, "walk"))
    assert walk.velocity[2] > 50 and abs(walk.velocity[0]) < 1e-9
    for kind in ("idle", "turn"):
        assert np.all(make_pipeline(fox, None, builtin_motion(fox, kind)).velocity == 0)


def test_a_file_without_skin_or_head_moves_its_root():
    character = Character.load(SIMPLE_MORPH)
    motion = builtin_motion(character, "idle")
    assert motion.head is None and {c.node for c in motion.channels} == {0}
    moved = motion.sample(character.skeleton.rest_pose(), 1.0)
    assert np.abs(moved.translation[0]).max() > 0


def test_an_unknown_motion_is_refused(fox):
    with pytest.raises(ValueError, match="motion = 'dance': expected one of idle, turn, walk, shake"):
        builtin_motion(fox, "dance")


def test_with_motion_writes_the_motion_as_one_more_animation(tmp_path):
    """The copy's new animation plays like the motion (float32 keys); a moved node given by a
    matrix gets its TRS, as glTF allows only TRS nodes to be animated."""
    doc = json.loads(SIMPLE_MORPH.read_text(encoding="utf-8"))
    doc["nodes"][0]["matrix"] = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0.5, 0.25, 0, 1]  # column-major: a move
    path = tmp_path / "matrix.gltf"
    path.write_text(json.dumps(doc), encoding="utf-8")
    character = Character.load(path)
    motion = builtin_motion(character, "walk")
    copy = with_motion(character, motion)
    assert copy.clip_names == character.clip_names + ["motion_walk"]
    node = copy.json["nodes"][0]
    assert "matrix" not in node and node["translation"] == [0.5, 0.25, 0.0]
    assert "matrix" in character.json["nodes"][0], "the original is left as it was"
    rest = character.skeleton.rest_pose()
    for t in (0.0, 0.3, 0.77):
        a, b = motion.sample(rest, t), copy.clip("motion_walk").sample(copy.skeleton.rest_pose(), t)
        np.testing.assert_allclose(a.translation, b.translation, atol=1e-6)
        np.testing.assert_allclose(a.rotation, b.rotation, atol=1e-6)

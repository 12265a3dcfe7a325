"""Chains through zero-length bones (two joints at one place in the rest pose, common in
real avatars): the segment is carried rigidly with its parent, the rig saying so once; a
chain whose joints all lie at one place is refused in the rig's terms."""
from __future__ import annotations

import logging

import numpy as np
import pytest

from gpu_jiggle.character.baking.run import bake
from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.character.pipeline import Pipeline
from gpu_jiggle.character.rig.model import RigError
from gpu_jiggle.character.rig.reader import rig_from_dict
from gltf_build import skinned_strip, strip_rig, write
from gltf_validator import assert_valid

LOGGER = "gpu_jiggle.character.rig.reader"


@pytest.fixture
def strip(tmp_path):
    """The strip with joint 'c' at the place of 'b' (a zero-length bone b → c)."""
    return Character.load(write(tmp_path, skinned_strip(translations=[[0, 0, 0], [0, 1, 0], [0, 0, 0]])))


def test_a_zero_length_segment_is_carried_rigidly_and_said_once(strip, caplog):
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        rig = rig_from_dict(strip_rig(tip_axis=[0, 1, 0], tip_length=0.5, frequency=[3.0, 4.0, 5.0]),
                            strip.skeleton, "strip.toml")
    warnings = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert warnings == ["strip.toml: chain 'strip': zero-length segment 'b' → 'c' (two joints at one place in the "
                        "rest pose): carried rigidly with its parent, without a spring"]
    (chain,) = rig.joint_chains
    assert chain.springy.tolist() == [True, False, True] and chain.segments == 2
    assert rig.chain_joints == [1, 3]  # 'a' and 'c' swing; 'b' is carried by 'a'
    np.testing.assert_array_equal(chain.frequency, [3.0, 5.0])  # the table's values of the joints that swing


def test_a_refusal_names_the_joint_the_table_counts(strip):
    with pytest.raises(RigError, match=r"chain 'strip': frequency\[2\] = -5.0"):
        rig_from_dict(strip_rig(tip_axis=[0, 1, 0], tip_length=0.5, frequency=[3.0, 4.0, -5.0]), strip.skeleton)


def test_a_chain_all_at_one_place_is_refused(tmp_path):
    character = Character.load(write(tmp_path, skinned_strip(translations=[[0, 0, 0], [0, 0, 0], [0, 0, 0]])))
    with pytest.raises(RigError, match=r"strip.toml: chain 'strip': its joints 'a', 'b', 'c' all lie at one place "
                                       r"in the rest pose: the chain has no length to swing \(give tip_length and "
                                       r"tip_axis to swing its last joint alone, or choose joints that lie apart\)"):
        rig_from_dict(strip_rig(), character.skeleton, "strip.toml")
    rig = rig_from_dict(strip_rig(tip_length=0.5, tip_axis=[0, 1, 0]), character.skeleton)
    assert rig.chain_joints == [3]


def test_the_pipeline_runs_and_the_rigid_joint_keeps_its_animation(strip, backend):
    rig = rig_from_dict(strip_rig(tip_axis=[0, 1, 0], tip_length=0.5, gravity=[0.0, -9.8, 0.0]), strip.skeleton)
    with Pipeline(strip, rig, "wave", backend=backend) as pipeline:
        frames = list(pipeline.play(30, 1.0))
    for frame in frames:
        keyed = pipeline.sample_keyframes(frame.time)
        np.testing.assert_array_equal(frame.pose.rotation[2], keyed.rotation[2])  # 'b': its animated local rotation
        world = frame.world_matrices
        np.testing.assert_allclose(world[3, :3, 3], world[2, :3, 3], atol=1e-12)  # 'c' stays on 'b'
    swing = max(np.abs(f.pose.rotation[1] - pipeline.sample_keyframes(f.time).rotation[1]).max() for f in frames)
    assert swing > 1e-3, "'a' swings on its spring"


def test_a_bake_keeps_the_rigid_joint_s_channels(strip, tmp_path, gltf_validator):
    rig = rig_from_dict(strip_rig(tip_axis=[0, 1, 0], tip_length=0.5), strip.skeleton)
    result = bake(strip, rig, "wave", None, tmp_path / "baked.glb", preroll=0.5, backend="cpu")
    assert sorted(result.rotations) == [1, 3]
    assert_valid(tmp_path / "baked.glb", gltf_validator)
    targets = [c["target"]["node"] for c in Character.load(tmp_path / "baked.glb").json["animations"][0]["channels"]]
    assert 2 not in targets

"""Baking what the preview shows besides the chains: the joints a look-at or a two-bone IK
turns (their baked rotations are the preview pipeline's at the key times), and with
strands="joints" the procedural strands as skinned joints (their world positions in the
copy, read back and sampled, are the simulated strand points); what is not baked is listed,
by the command too; the copies pass the Khronos validator."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle.app.cli import main
from gpu_jiggle.character.baking.run import bake
from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.character.rig.reader import rig_from_dict
from gpu_jiggle.character.travel import make_pipeline
from demo_support import FOX, FOX_RIG
from gltf_validator import assert_valid

FPS = 30
PREROLL = 0.5
#: Half an ulp of float32, relative: a float64 value stored as float32 is within EPS of it, relatively.
EPS = 2.0 ** -24
#: A baked quaternion read back and sampled at its own key, against the float64 one it was
#: made from, per component: rounding to float32 (EPS, as |q_i| ≤ 1) and the reader's
#: renormalising of the rounded quaternion, whose length is off 1 by at most 2·EPS (each of
#: the 4 components by EPS, |q| = 1).
ROTATION_TOLERANCE = 3 * EPS


def _preview(fox, rig, schedule, backend, look_at):
    """The preview's pipeline (``render --look-at --travel 0``, the clip held at its end as
    the bake plays it) stepped at the bake's frames: its frames at the key times."""
    pipeline = make_pipeline(fox, rig, "Run", travel=0, backend=backend, look_at=look_at)
    pipeline.loop = False
    skip = len(schedule.preroll)
    with pipeline:
        frames = [pipeline.step(float(t), schedule.dt) for t in schedule.sample_times]
    return frames[skip:]


def _angle_degrees(a, b) -> float:
    return float(np.degrees(2 * np.arccos(min(1.0, abs(float(np.dot(a, b)))))))


def _check_constraints_baked(fox, rig, backend, look_at, tmp_path, gltf_validator, turned: list) -> None:
    """Bake ``rig`` with ``look_at``; the copy's rotations of the chain joints and of the
    joints named in ``turned`` at every key equal the preview's, and each joint of
    ``turned`` is turned away from the clip's own rotation somewhere (by over 10°)."""
    out = tmp_path / "fox_constrained.glb"
    result = bake(fox, rig, "Run", FPS, out, preroll=PREROLL, backend=backend, look_at=look_at)
    nodes = [fox.skeleton.index(name) for name in turned]
    assert list(result.rotations)[:len(rig.chain_joints)] == rig.chain_joints
    assert set(result.rotations) == set(rig.chain_joints + nodes)
    copy = Character.load(out)
    clip, source = copy.clip("Run"), fox.clip("Run")
    rest, source_rest = copy.skeleton.rest_pose(), fox.skeleton.rest_pose()
    frames = _preview(fox, rig, result.schedule, backend, look_at)
    worst, turn = 0.0, dict.fromkeys(nodes, 0.0)
    for t, frame in zip(result.times, frames):
        baked = clip.sample(rest, float(t), loop=False).rotation
        keyed = source.sample(source_rest, float(t), loop=False).rotation
        for node in result.rotations:
            a, b = baked[node], frame.pose.rotation[node]
            worst = max(worst, min(np.abs(a - b).max(), np.abs(a + b).max()))  # q and -q: one rotation
        for node in nodes:
            turn[node] = max(turn[node], _angle_degrees(baked[node], keyed[node]))
    print(f"largest difference of a baked rotation's component from the preview's: {worst:.3g}")
    assert worst <= ROTATION_TOLERANCE
    assert min(turn.values()) > 10.0, turn
    assert_valid(out, gltf_validator)


def test_look_at_is_baked_as_the_preview_shows_it(fox, rig, backend, tmp_path, gltf_validator):
    _check_constraints_baked(fox, rig, backend, True, tmp_path, gltf_validator, ["b_Head_05"])


def test_enabled_two_bone_ik_is_baked_with_the_look_at(fox, rig_data, tmp_path, gltf_validator):
    """A two-bone IK enabled in the rig is baked (its root and mid joints) by default and
    stays on with --look-at, as in the preview."""
    hand = fox.skeleton.world_matrices(fox.skeleton.rest_pose())[fox.skeleton.index("b_LeftHand_011"), :3, 3]
    rig_data["two_bone_ik"] = [{"name": "reach", "root": "b_LeftUpperArm_09", "mid": "b_LeftForeArm_010",
                                "end": "b_LeftHand_011", "target": (hand + [0.0, 15.0, 10.0]).tolist(),
                                "sweep": [0.0, 5.0, 0.0], "sweep_hz": 1.0}]
    rig = rig_from_dict(rig_data, fox.skeleton, "fox with IK")
    arm = ["b_LeftUpperArm_09", "b_LeftForeArm_010"]
    _check_constraints_baked(fox, rig, "cpu", False, tmp_path, gltf_validator, arm)
    _check_constraints_baked(fox, rig, "cpu", True, tmp_path, gltf_validator, arm + ["b_Head_05"])


def test_strands_baked_as_joints_follow_the_simulation(fox, rig, backend, tmp_path, gltf_validator):
    result, copy = _check_strands(fox, rig, backend, tmp_path, gltf_validator)
    assert result.strands.groups == ["ear_tuft_left", "ear_tuft_right", "mane"]
    assert result.strands.joint_count == 40 and not result.strands.moved.any()


def test_a_strand_on_a_springy_joint_keys_its_root(fox, rig_data, tmp_path, gltf_validator):
    """A strand hung from a tail joint, which the springs move after the strand's pose was
    taken: its root joint gets a translation channel, and the joints still sit on the points."""
    tuft = dict(rig_data["strands"][0], name="tail_tuft", joint="b_Tail03_014", root=[10.0, 3.0, 0.0],
                root_end=[12.0, 3.0, 0.0], direction=[0.0, 1.0, 0.0], colliders=[])
    rig_data["strands"].append(tuft)
    rig = rig_from_dict(rig_data, fox.skeleton, "fox with a tail tuft")
    result, copy = _check_strands(fox, rig, "cpu", tmp_path, gltf_validator)
    assert result.strands.moved.tolist() == [c.group == "tail_tuft" for c in rig.strand_chains]
    keyed = {(ch.node, ch.path) for ch in copy.clip("Run").channels}
    for ids, moved in zip(result.strands.nodes, result.strands.moved):
        assert ((ids[0], "translation") in keyed) == moved


def _check_strands(fox, rig, backend, tmp_path, gltf_validator):
    """Bake ``rig``'s strands as joints (with the look-at on: ear tufts hang from the turning
    head) and check the copy's joints, skin and mesh against the preview's strands."""
    out = tmp_path / "fox_strands.glb"
    result = bake(fox, rig, "Run", FPS, out, preroll=PREROLL, backend=backend, look_at=True, strands="joints")
    strands = result.strands
    chains = rig.strand_chains
    assert result.not_baked == []
    copy = Character.load(out)
    sk, doc = copy.skeleton, copy.json
    # the joints: a chain under the joint each strand hangs from, named after the strand
    for chain, ids in zip(chains, strands.nodes):
        assert len(ids) == chain.segments + 1
        assert [int(p) for p in sk.parents[ids]] == [int(chain.nodes[0])] + ids[:-1]
        stem = chain.name.replace("[", "_").replace("]", "")
        assert [sk.names[n] for n in ids] == [f"{stem}_{k}" for k in range(len(ids))]
    new = [n for ids in strands.nodes for n in ids]
    assert len(new) == strands.joint_count
    # they join the fox's skin, whose own joints and inverse bind matrices are as they were
    old = fox.json["skins"][0]["joints"]
    assert doc["skins"][0]["joints"] == old + new and len(doc["skins"]) == 1
    np.testing.assert_array_equal(copy.skins[0].inverse_bind_matrices[:len(old)], fox.skins[0].inverse_bind_matrices)
    (mesh,) = [m for m in copy.meshes if m.name == "strands[0]"]
    assert mesh.skin == 0 and mesh.node in doc["scenes"][0]["nodes"] and sk.parents[mesh.node] == -1
    # at every key the joints sit on the simulated points, and the ribbons' centres too
    frames = _preview(fox, rig, result.schedule, backend, True)
    clip, rest = copy.clip("Run"), sk.rest_pose()
    points = np.array([np.concatenate(f.strands) for f in frames])  # (keys, joints, 3) world
    rigid = np.array([np.concatenate([t for t, c in zip(f.chain_targets, rig.chains) if c.kind == "strand"])
                      for f in frames])  # the rest shape carried by the joints
    parents = np.repeat([int(c.nodes[0]) for c in chains], [c.segments + 1 for c in chains])
    lever = max(float(np.linalg.norm(f.world_matrices[parents, :3, 3] - p, axis=1).max())
                for f, p in zip(frames, points))
    segments = max(c.segments for c in chains)
    # Each simulated point is a float32 of the solver's (within EPS·|p|), whose segment lengths
    # it keeps to float32 rounding (2·EPS·|p| each, along `segments` of them); each float32
    # quaternion stored (the head's look-at, each strand joint's: segments + 1 on a path) is
    # within 2·EPS of the exact one, a turn of at most 4·EPS rad moving a point by 4·EPS·lever;
    # each float32 translation (the root's offset and the segments') is within EPS of a length
    # of at most `lever`.
    pmax = float(np.abs(points).max())
    tolerance = EPS * ((1 + 2 * segments) * pmax + 5 * (segments + 1) * lever)
    # the skinned vertices add the float32 bind positions (EPS·|v|) and inverse bind matrices
    # (each of 3 rotation entries and the translation within EPS·|v| on a vertex of size |v|)
    vmax = float(np.abs(mesh.positions).max())
    vertex_tolerance = tolerance + 5 * EPS * vmax
    bound = np.c_[mesh.positions, np.ones(len(mesh.positions))]
    worst = worst_vertex = 0.0
    for t, p in zip(result.times, points):
        world = sk.world_matrices(clip.sample(rest, float(t), loop=False))
        worst = max(worst, float(np.abs(world[new, :3, 3] - p).max()))
        skinning = copy.skins[0].skinning_matrices(world)[mesh.joints[:, 0]]
        v = np.einsum("vij,vj->vi", skinning, bound)[:, :3].reshape(len(new), 4, 3)
        centres = np.concatenate([(v[:, 0] + v[:, 1]) / 2, (v[:, 2] + v[:, 3]) / 2])
        worst_vertex = max(worst_vertex, float(np.abs(centres - np.concatenate([p, p])).max()))
    print(f"joints off the simulated points by {worst:.3g} (tolerance {tolerance:.3g}), ribbon centres by "
          f"{worst_vertex:.3g} (tolerance {vertex_tolerance:.3g}); the strands swing "
          f"{np.abs(points - rigid).max():.3g}")
    assert worst <= tolerance and worst_vertex <= vertex_tolerance
    assert np.abs(points - rigid).max() > 1000 * vertex_tolerance  # they swing: the match is no accident of rest
    report = assert_valid(out, gltf_validator)
    mine = (f"/meshes/{len(doc['meshes']) - 1}", "/skins/", *(f"/nodes/{n}" for n in new + [mesh.node]))
    assert not [m for m in report.messages if m["severity"] <= 1 and m.get("pointer", "").startswith(mine)]
    # the skin's old inverse bind matrices, rewritten, leave no accessor or view that nothing reads
    assert not [m for m in report.messages if m["code"] == "UNUSED_OBJECT"], report.lines(2)
    return result, copy


def test_the_command_lists_what_it_does_not_bake(tmp_path, capsys):
    out = tmp_path / "fox.glb"
    args = ["bake", str(FOX), "--rig", str(FOX_RIG), "--animation", "Run", "--out", str(out), "--preroll", "0.2",
            "--backend", "cpu"]
    assert main(args) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[1:] == [
        "not baked: strands 'ear_tuft_left', 'ear_tuft_right', 'mane' (procedural; --strands joints bakes them as "
        "joints)",
        "not baked: look-at 'head_look' (off in the rig; --look-at bakes it)"]
    assert main(args + ["--look-at", "--strands", "joints"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert ("for 4 joints (b_Tail01_012, b_Tail02_013, b_Tail03_014, b_Head_05) and 40 strand joints "
            "(ear_tuft_left, ear_tuft_right, mane) on the cpu backend") in line


@pytest.mark.parametrize("change, keys, message", [
    (None, {"strands": "hair"}, "strands = 'hair': expected one of 'none', 'joints'"),
    (None, {"look_at": "yes"}, "look_at = 'yes': expected True or False"),
    ("look_at", {"look_at": True}, "look_at = True: test rig has no [[look_at]] constraint to turn on"),
    ("strands", {"strands": "joints"}, "strands = 'joints': test rig has no [[strands]] to bake as joints"),
])
def test_bad_options_are_refused_naming_them(fox, rig_data, tmp_path, change, keys, message):
    if change:
        del rig_data[change]
    rig = rig_from_dict(rig_data, fox.skeleton, "test rig")
    out = tmp_path / "x.glb"
    with pytest.raises(ValueError) as error:
        bake(fox, rig, "Run", FPS, out, preroll=0.0, backend="cpu", **keys)
    assert str(error.value) == message
    assert not out.exists()

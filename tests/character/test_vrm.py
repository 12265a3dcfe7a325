"""VRM avatars: their spring bones and colliders imported as a rig (VRM 0.x Godette, VRM 1.0
scenes with sphere, plane and inside colliders), chains that fall onto each collider and do
what it says, an avatar at rest, bad files refused with the place and key, and the imported
rig written as TOML and read back."""
from __future__ import annotations

import copy
import json
import math
import struct
from pathlib import Path

import numpy as np
import pytest

from gpu_jiggle.app.cli import main
from gpu_jiggle.character.pose import quat
from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.character.pipeline import Pipeline
from gpu_jiggle.character.rig.reader import load_rig, rig_from_dict
from gpu_jiggle.character.gltf.vrm import VIRTUAL_TAIL, VrmError, read_springs
from gpu_jiggle.character.rig.from_vrm import rig_dict_from_vrm, rig_from_vrm

VRM = Path(__file__).resolve().parents[2] / "data" / "vrm"
GODETTE = VRM / "Godette_vrm_v4.vrm"


def glb_json(path) -> dict:
    data = path.read_bytes()
    length = struct.unpack("<I", data[12:16])[0]
    return json.loads(data[20:20 + length])


@pytest.fixture(scope="module")
def godette():
    return Character.load(GODETTE)


def with_json(character, edit):
    """The character with ``edit(doc)`` applied to a copy of its JSON (the file untouched)."""
    doc = copy.deepcopy(character.json)
    edit(doc)
    return type(character)(character.path, doc, list(character.buffers), character.limits)


def test_godette_imports_eight_chains_with_their_joints_parameters_and_four_spheres(godette):
    doc = glb_json(GODETTE)["extensions"]["VRM"]["secondaryAnimation"]
    names = godette.skeleton.names
    springs = read_springs(godette)
    assert springs.version == "0.x"
    # every root bone of every group is a chain: the root and its one child (the End bone)
    roots = [(g, b) for g, group in enumerate(doc["boneGroups"]) for b in group["bones"]]
    assert [s.joints[0].node for s in springs.springs] == [b for _, b in roots]
    for spring, (g, root) in zip(springs.springs, roots):
        group = doc["boneGroups"][g]
        child = godette.json["nodes"][root]["children"][0]
        assert [j.node for j in spring.joints] == [root, child] and spring.tail is None
        for j in spring.joints:
            assert (j.stiffness, j.drag_force, j.hit_radius, j.gravity_power) == (
                group["stiffiness"], group["dragForce"], group["hitRadius"], group["gravityPower"])
        expected = [f"colliderGroups[{k}].colliders[{i}]" for k in group["colliderGroups"]
                    for i in range(len(doc["colliderGroups"][k]["colliders"]))]
        assert spring.colliders == expected
    # four spheres on the chest and the head, offsets from VRM 0.x's left-handed frame (z negated)
    assert [(names[c.node], c.shape) for c in springs.colliders] == [
        ("chest_Armature", "sphere"), ("chest_Armature", "sphere"), ("head_Armature", "sphere"),
        ("head_Armature", "sphere")]
    given = [c for group in doc["colliderGroups"] for c in group["colliders"]]
    for collider, raw in zip(springs.colliders, given):
        np.testing.assert_array_equal(collider.offset, [raw["offset"]["x"], raw["offset"]["y"], -raw["offset"]["z"]])
        assert collider.radius == raw["radius"]

    rig = rig_from_vrm(godette)
    assert len(rig.chains) == 8 and rig.chain_set.segment_count == 16
    assert rig.integrator == "exact"
    world = godette.skeleton.world_matrices(godette.skeleton.rest_pose())
    for chain, spring in zip(rig.chains, springs.springs):
        assert list(chain.nodes) == [j.node for j in spring.joints]
        # the virtual tail: 7 cm along the last bone, in its space
        last = chain.nodes[-1]
        bone = godette.skeleton.rest.translation[last]
        np.testing.assert_allclose(chain.local_points[0], bone / np.linalg.norm(bone) * VIRTUAL_TAIL, rtol=1e-12)
        assert np.all(chain.particle_radius == spring.joints[0].hit_radius)
        hit = {c.name for c in rig.colliders if chain.collider_mask >> c.group & 1}
        assert hit == set(spring.colliders)
        assert np.all(chain.frequency > 0) and np.all(chain.air_drag > 0)
    assert [(names[c.node], c.radius) for c in rig.colliders] == [(names[c.node], c.radius) for c in springs.colliders]
    del world


def test_vrm1_scenes_import_their_sphere_plane_and_inside_colliders():
    seen = {}
    for name in ("sphere-collider", "plane-collider", "inside-collider"):
        character = Character.load(VRM / f"{name}.gltf")
        springs = read_springs(character)
        names = character.skeleton.names
        (spring,) = springs.springs
        assert springs.version == "1.0"
        assert [names[j.node] for j in spring.joints] == ["Spring A", "Spring B", "Spring C", "Spring D"]
        assert names[spring.tail] == "Spring E"
        (collider,) = springs.colliders
        assert names[collider.node] == "Collider" and spring.colliders == [collider.name]
        seen[name] = collider
        rig = rig_from_vrm(character)
        assert rig.chain_set.segment_count == 4
        np.testing.assert_allclose(rig.chains[0].local_points[0], character.skeleton.rest.translation[spring.tail])
    assert (seen["sphere-collider"].shape, seen["sphere-collider"].radius, seen["sphere-collider"].inside) == (
        "sphere", 0.5, False)
    # the extended collider's shapes replace their fallback spheres (far away, or huge)
    assert seen["plane-collider"].shape == "plane"
    np.testing.assert_array_equal(seen["plane-collider"].normal, [0.0, 0.0, 1.0])
    assert (seen["inside-collider"].shape, seen["inside-collider"].radius, seen["inside-collider"].inside) == (
        "sphere", 1.25, True)


def _scene(name, gravity, turn_deg=0.0, collider_at=None, frequency=None, collider=True):
    """A VRM 1.0 scene's chain with the given gravity (and its root turned about z, its
    collider moved): the character, its rig and the pose it holds."""
    character = Character.load(VRM / f"{name}.gltf")
    data = rig_dict_from_vrm(character)
    data["chain"][0]["gravity"] = list(gravity)
    if frequency is not None:
        data["chain"][0]["frequency"] = frequency
    if not collider:
        data["chain"][0]["colliders"] = []
    rig = rig_from_dict(data, character.skeleton)
    pose = character.skeleton.rest_pose()
    pose.rotation[0] = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), math.radians(turn_deg))
    if collider_at is not None:
        pose.translation[5] = collider_at
    return character, rig, pose


def _hold(character, rig, pose, backend, seconds=4.0, fps=60.0):
    """Every frame's particles (F, J, 3) and colliders while the chain holds ``pose``."""
    frames, colliders = [], None
    with Pipeline(character, rig, None, backend=backend) as pipeline:
        for _ in range(int(seconds * fps)):
            _, details = pipeline.apply_springs(pose, 1.0 / fps)
            frames.append(details["chain_positions"][0])
            colliders = details["colliders"]
    return np.array(frames), colliders


def test_a_chain_falls_onto_the_sphere_and_rests_on_it(backend):
    # the chain sticks out along +x; under gravity it swings down onto the sphere below it
    args = ("sphere-collider", (0.0, -9.81, 0.0), 90.0, (1.5, 0.5, 0.0), 0.3)
    character, rig, pose = _scene(*args)
    frames, shapes = _hold(character, rig, pose, backend)
    centre, radius = shapes.spheres[0, :3], shapes.spheres[0, 3]
    reach = radius + rig.chain_set.particle_radius[0]
    distance = np.linalg.norm(frames[:, 1:] - centre, axis=2)
    assert distance.min() >= reach - 1e-3
    assert abs(distance[-1].min() - reach) < 1e-2  # resting on it
    free, _ = _hold(*_scene(*args, collider=False), backend)
    assert np.linalg.norm(free[:, 1:] - centre, axis=2).min() < 0.7 * reach  # without it, it swings through


def test_a_chain_falls_onto_the_plane_and_rests_on_it(backend):
    # the plane (normal +x through x = -0.25, world) beside the hanging chain; gravity along -x
    args = ("plane-collider", (-9.81, 0.0, 0.0), 0.0, None, 0.3)
    character, rig, pose = _scene(*args)
    frames, shapes = _hold(character, rig, pose, backend)
    (plane,) = shapes.planes
    np.testing.assert_allclose(plane[:3], [1.0, 0.0, 0.0], atol=1e-9)
    height = frames[:, 1:] @ plane[:3] - plane[3] - rig.chain_set.particle_radius[0]
    assert height.min() >= -1e-3
    assert np.abs(height[-1]).max() < 1e-2  # every particle lies on it
    free, _ = _hold(*_scene(*args, collider=False), backend)
    assert (free[-1, 1:] @ plane[:3] - plane[3]).min() < -0.5


def test_a_chain_stays_inside_the_inside_sphere(backend):
    character, rig, pose = _scene("inside-collider", (9.81, 0.0, 0.0), 0.0, None, 0.1)  # gravity sideways
    frames, shapes = _hold(character, rig, pose, backend, seconds=8.0)  # VRM's drag: a slow fall
    centre, radius = shapes.spheres[0, :3], shapes.spheres[0, 3]
    room = radius - rig.chain_set.particle_radius[0]
    distance = np.linalg.norm(frames[1:, 1:] - centre, axis=2)  # the first frame snaps onto the pose
    assert distance.max() <= room + 1e-3
    assert distance[-1].max() > room - 1e-2  # held at its wall, where gravity would take it out


def test_an_avatar_at_rest_keeps_its_hair_still(godette, backend):
    rig = rig_from_vrm(godette)
    pose = godette.skeleton.rest_pose()
    with Pipeline(godette, rig, None, backend=backend) as pipeline:
        frames = []
        for _ in range(600):  # 10 s at 60 fps
            _, details = pipeline.apply_springs(pose, 1.0 / 60.0)
            frames.append(np.concatenate(details["chain_positions"]))
            targets = np.concatenate(details["chain_targets"])
    frames = np.array(frames)
    length = min(np.linalg.norm(np.diff(t, axis=0), axis=1).sum() for t in details["chain_targets"])
    # in the last 5 s nothing moves: VRM's stiffness holds the rest pose (no gravity on this avatar)
    assert np.abs(np.diff(frames[300:], axis=0)).max() <= 1e-6 * length
    # chains clear of the colliders sit on their rest pose; those resting on a collider stay out of it
    off = np.linalg.norm(frames[-1] - targets, axis=1)
    clear = [k for k, c in enumerate(rig.chains) if not c.name.startswith("boneGroups[0]: FrontHair_")]
    starts = np.cumsum([0] + [c.segments + 1 for c in rig.chains])
    for k in clear:
        assert off[starts[k]:starts[k + 1]].max() <= 1e-5 * length, rig.chains[k].name


# -- bad files ----------------------------------------------------------------------------------
def _vrm1(edit):
    return with_json(Character.load(VRM / "sphere-collider.gltf"), lambda d: edit(d["extensions"]["VRMC_springBone"]))


@pytest.mark.parametrize("edit, message", [
    (lambda e: e["springs"][0]["joints"][2].update(node=99),
     r"springs\[0\]\.joints\[2\]: node = 99: expected a node index in \[0, 5\]"),
    (lambda e: e["springs"][0]["joints"].append({"node": 1}),
     r"springs\[0\]\.joints\[5\]: node = 1 \('Spring B'\) is already joint 1 of this spring: a cycle"),
    (lambda e: e["springs"][0]["joints"][2].update(node=5),
     r"springs\[0\]\.joints\[2\]: node = 5 \('Collider'\) is not a child of joint 1's node 1 \('Spring B'\)"),
    (lambda e: e["colliders"][0]["shape"]["sphere"].update(radius=-0.5),
     r"colliders\[0\]\.shape\.sphere: radius = -0\.5: expected a value ≥ 0"),
    (lambda e: e["colliders"][0].update(shape={"box": {"size": 1}}),
     r"colliders\[0\]\.shape: keys \['box'\]: expected exactly one of sphere, capsule"),
    (lambda e: e["springs"][0]["joints"][1].update(dragForce=1.5),
     r"springs\[0\]\.joints\[1\]: dragForce = 1\.5: expected a value in \[0\.0, 1\.0\]"),
    (lambda e: e["springs"][0]["joints"][0].update(stiffness="stiff"),
     r"springs\[0\]\.joints\[0\]: stiffness = 'stiff': expected a finite number"),
    (lambda e: e["springs"][0].update(colliderGroups=[3]),
     r"springs\[0\]: colliderGroups = \.\.\. 3: expected a collider group index in \[0, 0\]"),
])
def test_bad_vrm1_springs_are_refused_naming_the_place_and_key(edit, message):
    with pytest.raises(VrmError, match=message):
        read_springs(_vrm1(edit))


@pytest.mark.parametrize("edit, message", [
    (lambda s: s["boneGroups"][0]["bones"].append(999), r"boneGroups\[0\]: bones = 999: expected a node index"),
    (lambda s: s["colliderGroups"][1]["colliders"][0].update(radius=-0.1),
     r"colliderGroups\[1\]\.colliders\[0\]: radius = -0\.1: expected a value ≥ 0"),
    (lambda s: s["boneGroups"][1].update(stiffiness=float("nan")),
     r"boneGroups\[1\]: stiffiness = nan: expected a finite number"),
    (lambda s: s["colliderGroups"][0].update(node=-1), r"colliderGroups\[0\]: node = -1: expected a node index"),
])
def test_bad_vrm0_springs_are_refused_naming_the_place_and_key(godette, edit, message):
    with pytest.raises(VrmError, match=message):
        read_springs(with_json(godette, lambda d: edit(d["extensions"]["VRM"]["secondaryAnimation"])))


def test_a_file_without_springs_says_so():
    fox = Character.load(Path(__file__).resolve().parents[2] / "data" / "fox" / "Fox.gltf")
    with pytest.raises(VrmError, match="no VRM spring bones"):
        rig_from_vrm(fox)


# -- TOML ----------------------------------------------------------------------------------------
def test_gpu_jiggle_rig_writes_toml_that_loads_back_as_the_same_rig(godette, tmp_path, capsys):
    out = tmp_path / "godette.toml"
    assert main(["rig", str(GODETTE), "--out", str(out)]) == 0
    assert "8 chains, 4 colliders" in capsys.readouterr().out
    read = load_rig(out, godette.skeleton)
    direct = rig_from_vrm(godette)
    assert [(c.name, c.group) for c in read.chains] == [(c.name, c.group) for c in direct.chains]
    assert {c.group for c in direct.chains} == {"boneGroups[0]", "boneGroups[1]", "boneGroups[2]"}
    assert read.integrator == direct.integrator == "exact"
    for key in ("frequency", "damping_ratio", "air_drag", "particle_radius", "gravity"):
        np.testing.assert_allclose(getattr(read.chain_set, key), getattr(direct.chain_set, key), rtol=1e-8,
                                   err_msg=key)
    np.testing.assert_array_equal(read.chain_set.collider_mask, direct.chain_set.collider_mask)
    for a, b in zip(read.colliders, direct.colliders):
        assert (a.name, a.node, a.shape, a.radius) == (b.name, b.node, b.shape, b.radius)
        np.testing.assert_allclose(a.offset, b.offset, rtol=1e-8, atol=1e-15)


def test_gpu_jiggle_rig_refuses_a_file_without_springs_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "fox.toml"
    fox = Path(__file__).resolve().parents[2] / "data" / "fox" / "Fox.gltf"
    assert main(["rig", str(fox), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpu-jiggle rig: ") and "no VRM spring bones" in err and err.count("\n") == 1
    assert not out.exists()


# -- bake --------------------------------------------------------------------------------------
def test_a_baked_vrm_keeps_its_extensions_and_passes_the_validator(tmp_path, capsys, gltf_validator):
    out = tmp_path / "baked.vrm"
    assert main(["bake", str(GODETTE), "--motion", "shake", "--backend", "cpu", "--out", str(out)]) == 0, \
        capsys.readouterr().err
    baked, source = Character.load(out), glb_json(GODETTE)
    assert out.read_bytes()[:4] == b"glTF"
    doc = glb_json(out)
    for key in ("VRM",):
        assert doc["extensions"][key] == source["extensions"][key]
    assert doc["extensionsUsed"] == source["extensionsUsed"]
    # the hair is baked into the motion; the motion's own channels are what the motion keys
    rig = rig_from_vrm(Character.load(GODETTE))
    clip = baked.clip("motion_shake")
    from gpu_jiggle.character.motion import builtin_motion
    motion = builtin_motion(Character.load(GODETTE), "shake")
    hair = set(rig.chain_joints)
    assert {c.node for c in clip.channels if c.path == "rotation"} >= hair
    for channel in motion.channels:
        (same,) = [c for c in clip.channels if (c.node, c.path) == (channel.node, channel.path)]
        np.testing.assert_allclose(same.sampler.values, channel.sampler.values, atol=1e-6)
    assert read_springs(baked).springs[0].name == read_springs(Character.load(GODETTE)).springs[0].name
    report = gltf_validator(out)
    assert report.errors == 0, report.lines()
    source_report = gltf_validator(GODETTE)
    new = {m["code"] for m in report.messages if m["severity"] <= 1} - {
        m["code"] for m in source_report.messages if m["severity"] <= 1}
    assert new <= {"DATA_URI_GLB"}, report.lines(1)  # the motion's keys: written as a data URI buffer


def test_vrmc_springbone_limit_becomes_the_rigs_limits():
    def limits(doc):
        joints = doc["extensions"]["VRMC_springBone"]["springs"][0]["joints"]
        joints[0]["extensions"] = {"VRMC_springBone_limit": {"specVersion": "1.0", "limit": {"cone": {"angle": 0.5}}}}
        half = math.sqrt(0.5)  # a quarter turn about +z: the hinge's axis +x becomes +y
        joints[1]["extensions"] = {"VRMC_springBone_limit": {"specVersion": "1.0", "limit": {
            "hinge": {"angle": 0.25, "rotation": [0.0, 0.0, half, half]}}}}

    character = with_json(Character.load(VRM / "sphere-collider.gltf"), limits)
    rig = rig_from_vrm(character)
    cs = rig.chain_set
    np.testing.assert_allclose(cs.angle_limit[:2], [0.5, np.inf])
    np.testing.assert_allclose(cs.hinge_limit[1], [-0.25, 0.25])
    np.testing.assert_allclose(cs.limit_axis[1], [0.0, 1.0, 0.0], atol=1e-12)
    with pytest.raises(VrmError, match=r"springs\[0\]\.joints\[0\]\.extensions\.VRMC_springBone_limit\.limit: keys "
                                       r"\['box'\]: expected exactly one of cone, hinge, spherical"):
        read_springs(with_json(character, lambda d: d["extensions"]["VRMC_springBone"]["springs"][0]["joints"][0]
                               ["extensions"]["VRMC_springBone_limit"].update(limit={"box": {}})))


@pytest.mark.parametrize("rate", [0.0, 1e-9, 1e6, float("nan"), float("inf")])
def test_a_frame_rate_outside_what_vrm_runs_at_is_refused(godette, rate, capsys, tmp_path):
    with pytest.raises(ValueError, match=r"rate = .*: expected a frame rate in \[1, 1000\] Hz"):
        rig_dict_from_vrm(godette, rate)
    with pytest.raises(SystemExit):
        main(["rig", str(GODETTE), "--out", str(tmp_path / "x.toml"), "--rate", repr(rate)])
    assert "expected a frame rate in [1, 1000] Hz" in capsys.readouterr().err
    assert not (tmp_path / "x.toml").exists()


def test_springs_branching_from_one_bone_share_it_with_the_first(caplog):
    """Two VRM 1.0 springs through one bone (a branch): the second starts after the joints the
    first already drives, and says so; a spring with nothing left is left out."""
    def branch(doc):
        doc["nodes"][1]["children"] = [2, 6]
        doc["nodes"] += [{"name": "Branch", "translation": [0.5, -1.0, 0.0], "children": [7]},
                         {"name": "Branch End", "translation": [0.5, -1.0, 0.0]}]
        first = doc["extensions"]["VRMC_springBone"]["springs"][0]
        springs = doc["extensions"]["VRMC_springBone"]["springs"]
        springs.append({"joints": [dict(first["joints"][0]), dict(first["joints"][1]), dict(first["joints"][1], node=6),
                                   {"node": 7}]})
        springs.append({"joints": [dict(first["joints"][0]), {"node": 1}]})  # all of it driven already

    character = with_json(Character.load(VRM / "sphere-collider.gltf"), branch)
    springs = read_springs(character)
    assert [[j.node for j in s.joints] for s in springs.springs] == [[0, 1, 2, 3], [6]]
    assert springs.springs[1].tail == 7
    assert "springs[1]: joints 0-1 (from 'Spring A') are already in chain 'springs[0]: Spring A'" in caplog.text
    rig = rig_from_vrm(character)
    assert [list(c.nodes) for c in rig.chains] == [[0, 1, 2, 3], [6]]

"""TOML rigs: the shipped Fox rig, virtual tips, strands, colliders, and clear errors for
unknown joints, broken chains, cycles and the numbers SPEC section 7 refuses."""
from __future__ import annotations

import copy
import math
import sys

import numpy as np
import pytest

from gpu_jiggle.character.rig.model import RigError
from gpu_jiggle.character.rig.reader import load_rig, rig_from_dict
from demo_support import FOX_RIG

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@pytest.fixture
def data():
    with open(FOX_RIG, "rb") as f:
        return tomllib.load(f)


def test_fox_rig(fox):
    rig = load_rig(FOX_RIG, fox.skeleton)
    sk = fox.skeleton
    (tail,) = rig.joint_chains
    assert [sk.names[n] for n in tail.nodes] == ["b_Tail01_012", "b_Tail02_013", "b_Tail03_014"]
    assert tail.segments == 3 and tail.frequency.shape == (3,)
    groups = {c.group for c in rig.strand_chains}
    assert groups == {"ear_tuft_left", "ear_tuft_right", "mane"}
    assert {sk.names[c.nodes[0]] for c in rig.strand_chains} == {"b_Head_05", "b_Neck_04"}
    assert [c.name for c in rig.colliders] == ["hips", "left_thigh", "right_thigh", "neck", "head"]
    # the tail collides with the hips and thighs only (colliders the same chains use share a group)
    assert {c.name for c in rig.colliders if tail.collider_mask >> c.group & 1} == {"hips", "left_thigh", "right_thigh"}
    assert rig.chain_joints == [int(n) for n in tail.nodes]
    assert [c.enabled for c in rig.constraints] == [False] and rig.enabled_constraints() == []
    cs = rig.chain_set  # every chain's springs in one set, gravity per chain
    assert cs.chain_count == len(rig.chains) and cs.segment_count == sum(c.segments for c in rig.chains)
    np.testing.assert_array_equal(cs.gravity[tail.index], [0.0, -15.0, 0.0])
    mane = next(c for c in rig.strand_chains if c.group == "mane")
    np.testing.assert_array_equal(cs.gravity[mane.index], [0.0, -300.0, 0.0])
    np.testing.assert_array_equal(tail.air_drag, [1.0, 1.0, 1.0])  # read from the rig
    np.testing.assert_array_equal(mane.air_drag, [0.0, 0.0, 0.0])  # the default


def test_virtual_tip_defaults_to_the_previous_segment_along_the_bone_axis(fox, data):
    sk = fox.skeleton
    data["chain"][0].pop("tip_length", None)
    (tail,) = rig_from_dict(data, sk).joint_chains
    world = sk.world_matrices(sk.rest_pose())
    previous = np.linalg.norm(world[tail.nodes[2], :3, 3] - world[tail.nodes[1], :3, 3])
    np.testing.assert_allclose(np.linalg.norm(tail.local_points[0]), previous, rtol=1e-12)
    axis = sk.rest.translation[tail.nodes[2]]  # b_Tail03_014 sits along its parent's +x: its bone axis
    np.testing.assert_allclose(tail.local_points[0] / previous, axis / np.linalg.norm(axis), atol=1e-12)
    data["chain"][0]["tip_length"] = 12.5
    data["chain"][0]["tip_axis"] = [0.0, 2.0, 0.0]
    (tail,) = rig_from_dict(data, sk).joint_chains
    np.testing.assert_allclose(tail.local_points[0], [0.0, 12.5, 0.0])


def test_strand_groups_fan_and_spread(fox, data):
    data["strands"][2]["direction"] = [0.0, 1.0, 0.0]  # across the fan axis: the fan spans spread_deg
    rig = rig_from_dict(data, fox.skeleton)
    mane = [c for c in rig.strand_chains if c.group == "mane"]
    assert len(mane) == 6 and all(c.local_points.shape == (4, 3) for c in mane)
    roots = np.array([c.local_points[0] for c in mane])
    np.testing.assert_allclose(roots[0], [2.0, 9.5, 0.0])
    np.testing.assert_allclose(roots[-1], [15.0, 9.0, 0.0])
    lengths = [np.linalg.norm(np.diff(c.local_points, axis=0), axis=1).sum() for c in mane]
    np.testing.assert_allclose(lengths, 7.0)
    dirs = np.array([c.local_points[1] - c.local_points[0] for c in mane])
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    spread = math.degrees(math.acos(np.clip(dirs[0] @ dirs[-1], -1, 1)))
    assert spread == pytest.approx(50.0, abs=1e-6)


def _error(fox, data, match):
    with pytest.raises(RigError, match=match) as info:
        rig_from_dict(data, fox.skeleton, "fox.toml")
    return str(info.value)


@pytest.mark.parametrize("misspelt, meant", [("b_Tail02", "b_Tail02_013"), ("b_Tail2", "b_Tail02_013"),
                                              ("b_tail03_014", "b_Tail03_014")])
def test_a_misspelt_joint_names_the_closest_alone(fox, data, misspelt, meant):
    data["chain"][0]["joints"][1] = misspelt
    _error(fox, data, rf"fox.toml: chain 'tail': unknown joint '{misspelt}'; did you mean '{meant}'\?$")


def test_an_unknown_joint_with_none_close_lists_the_joints(fox, data):
    data["chain"][0]["joints"][1] = "whisker"
    message = _error(fox, data, r"fox.toml: chain 'tail': unknown joint 'whisker'; the skeleton's joints are: ")
    assert "did you mean" not in message and "b_Tail02_013" in message and "b_Head_05" in message


def test_a_misspelt_key_names_the_closest(fox, data):
    data["chain"][0]["frequncy"] = data["chain"][0].pop("frequency")
    _error(fox, data, r"fox.toml: chain 'tail': unknown key 'frequncy'; did you mean 'frequency'\?$")


def test_joints_that_are_not_parent_and_child(fox, data):
    data["chain"][0]["joints"] = ["b_Tail01_012", "b_Tail03_014"]
    _error(fox, data, r"chain 'tail': joint 'b_Tail03_014' \(position 1\) is not a child of 'b_Tail01_012': "
                      r"its parent is 'b_Tail02_013'; the children of 'b_Tail01_012' are: b_Tail02_013")


def test_a_chain_that_loops_back(fox, data):
    data["chain"][0]["joints"] = ["b_Tail01_012", "b_Tail02_013", "b_Tail01_012"]
    _error(fox, data, r"joint 'b_Tail01_012' appears twice \(positions 0 and 2\): a chain cannot loop back")


def test_a_joint_in_two_chains(fox, data):
    second = copy.deepcopy(data["chain"][0])
    second["name"] = "tail2"
    second["joints"] = ["b_Tail03_014"]
    second["tip_length"] = 5.0
    data["chain"].append(second)
    _error(fox, data, r"chain 'tail2': joint 'b_Tail03_014' is already driven by chain 'tail'")


@pytest.mark.parametrize("table, key, value, match", [
    ("chain", "frequency", -1.0, r"frequency = -1.0: expected a finite value > 0 \(Hz\)"),
    ("chain", "frequency", [6.0, 0.0, 4.0], r"frequency\[1\] = 0.0: expected a finite value > 0"),
    ("chain", "frequency", [6.0, 4.0], r"frequency has 2 values; expected one, or one per segment \(3\)"),
    ("chain", "frequency", math.nan, r"frequency = nan"),
    ("chain", "damping_ratio", -0.1, r"damping_ratio = -0.1: expected a finite value >= 0"),
    ("chain", "particle_radius", -2.0, r"particle_radius = -2.0: expected a finite value >= 0"),
    ("chain", "max_distance", 0.0, r"max_distance = 0.0: expected a value > 0"),
    ("chain", "air_drag", -1.0, r"air_drag = -1.0: expected a finite value >= 0 \(1/s\)"),
    ("chain", "air_drag", [0.0, math.inf, 0.0], r"air_drag\[1\] = inf: expected a finite value >= 0"),
    ("chain", "world_influence", 1.5, r"world_influence = 1.5: expected a value in \[0, 1\]"),
    ("chain", "gravity", [0.0, math.inf, 0.0], r"gravity = \[0.0, inf, 0.0\]: expected finite numbers"),
    ("chain", "tip_length", -3.0, r"tip_length = -3.0: expected a value > 0"),
    ("chain", "colliders", ["hat"], r"unknown collider 'hat'; the rig's colliders are: hips, left_thigh"),
    ("chain", "stiffness", 3.0, r"unknown key 'stiffness'; expected one of name, group, joints"),
    ("chain", "group", 3, r"chain 'tail': group = 3: expected a name \(a non-empty string\)"),
    ("strands", "segments", 0, r"strands 'ear_tuft_left': segments = 0: expected an integer in \[1, 1000000\]"),
    ("strands", "length", -7.0, r"length = -7.0: expected a value > 0"),
    ("strands", "length", 1e20, r"strands 'ear_tuft_left': length = 1e\+20: expected a value > 0 and at most 1e\+15"),
    ("chain", "tip_length", 1e16, r"chain 'tail': tip_length = 1e\+16: expected a value > 0 and at most 1e\+15"),
    ("strands", "direction", [0.0, 0.0, 0.0], r"direction = \[0.0, 0.0, 0.0\]: expected a direction"),
    ("strands", "draw", "tubes", r"draw = 'tubes': expected one of lines, ribbons"),
    ("strands", "joint", "b_Ear", r"unknown joint 'b_Ear'; the skeleton's joints are"),
    ("collider", "radius", -1.0, r"collider 'hips': radius = -1.0: expected a finite value >= 0"),
    ("collider", "shape", "box", r"shape = 'box': expected 'sphere', 'capsule' or 'plane'"),
    ("collider", "inside", 1, r"collider 'hips': inside = 1: expected true or false"),
    ("collider", "normal", [0.0, 1.0, 0.0], r"collider 'hips': normal is for planes, not for a sphere"),
    ("chain", "angle_limit_deg", -5.0, r"chain 'tail': angle_limit_deg = -5.0: expected a cone half-angle >= 0"),
    ("chain", "angle_limit_deg", [30.0, math.nan, 10.0], r"angle_limit_deg\[1\] = nan: expected a cone"),
])
def test_bad_values_are_named(fox, data, table, key, value, match):
    data[table][0][key] = value
    _error(fox, data, match)


def test_unstable_frequency_names_the_largest_stable_one(fox, data):
    """The bound covers the whole step (SPEC 1): ``h²·ω0² + 2h·(2ζ·ω0 + c_air) < 4`` for the
    tail, a point chain with the Fox rig's air drag; the frequency named is the largest the rig
    then takes (15.82 Hz at ζ = 1 with no drag, 15.77 Hz with the tail's 1/s)."""
    tail = data["chain"][0]
    tail["frequency"] = 40.0
    tail["damping_ratio"] = 1.0
    h, zeta, c_air = 1 / 120, 1.0, tail["air_drag"]
    assert h == data.get("solver", {}).get("substep", 1 / 120) and c_air == 1.0
    bound = (math.sqrt(4 * zeta * zeta + 4 - 2 * h * c_air) - 2 * zeta) / (2 * math.pi * h)  # root of the bound
    message = _error(fox, data, r"frequency = 40.0 Hz with damping_ratio = 1.0 is unstable for the substep")
    assert f"the largest stable frequency for that damping ratio is {bound:.4g} Hz" in message, bound
    assert '[solver] integrator = "exact"' in message
    named = float(message.split("the largest stable frequency for that damping ratio is ")[1].split(" Hz")[0])
    tail["frequency"] = named * 0.999
    rig_from_dict(copy.deepcopy(data), fox.skeleton, "fox.toml")  # just under the named one runs
    tail["frequency"] = named * 1.001
    _error(fox, data, r"unstable for the substep")  # just over it does not


def test_the_exact_integrator_takes_what_the_semi_implicit_step_refuses(fox, data):
    """``[solver] integrator = "exact"`` (SPEC 1): no stability bound, and the pipeline's
    solver runs it."""
    from gpu_jiggle.character.pipeline import Pipeline
    data["chain"][0]["frequency"] = 40.0
    data["chain"][0]["damping_ratio"] = 1.0
    data.setdefault("solver", {})["integrator"] = "exact"
    rig = rig_from_dict(data, fox.skeleton)
    assert rig.integrator == "exact" and rig.chain_set.frequency[0] == 40.0
    pipeline = Pipeline(fox, rig, backend="cpu")
    for k in range(4):
        frame = pipeline.step(k / 30, 0.0 if k == 0 else 1 / 30)
    assert all(np.all(np.isfinite(p)) for p in frame.chain_positions)
    assert pipeline._solver.integrator == "exact"


@pytest.mark.parametrize("value, match", [("exakt", r"\[solver\]: integrator = 'exakt'.*did you mean 'exact'"),
                                          (3, r"\[solver\]: integrator: expected one of")])
def test_bad_integrator_is_named(fox, data, value, match):
    data.setdefault("solver", {})["integrator"] = value
    _error(fox, data, match)


def test_angle_limits_in_degrees_reach_the_chain_set(fox, data):
    data["chain"][0]["angle_limit_deg"] = {"root": 60.0, "tip": 30.0}
    rig = rig_from_dict(data, fox.skeleton)
    tail = rig.chain_set.angle_limit[:3]
    np.testing.assert_allclose(np.degrees(tail), [60.0, 45.0, 30.0])
    assert np.all(np.isinf(rig.chain_set.angle_limit[3:]))  # the strands: none


def test_an_inside_collider_reaches_the_solver(fox, data):
    """``inside = true`` (SPEC 4.2): the pipeline hands the solver that collider as one that
    keeps particles in, the others as before."""
    data["collider"][0]["inside"] = True
    rig = rig_from_dict(data, fox.skeleton)
    assert [c.inside for c in rig.colliders] == [True] + [False] * (len(rig.colliders) - 1)
    from gpu_jiggle.character.pipeline import Pipeline
    pipeline = Pipeline(fox, rig, backend="cpu")
    pipeline.step(0.0, 0.0)
    colliders = pipeline._solver._colliders
    assert int(colliders.sphere_inside.sum() + colliders.capsule_inside.sum()) == 1


def test_bad_toml_and_missing_file(fox, tmp_path):
    (tmp_path / "bad.toml").write_text("[[chain]\nname = 'x'\n")
    with pytest.raises(RigError, match=r"bad.toml: not valid TOML"):
        load_rig(tmp_path / "bad.toml", fox.skeleton)
    with pytest.raises(FileNotFoundError, match=r"none.toml: no such rig file"):
        load_rig(tmp_path / "none.toml", fox.skeleton)


def test_many_colliders_share_the_masks_bits_by_the_chains_that_use_them(fox, data):
    """40 colliders (more than a mask has bits) used by two sets of chains make two groups;
    each chain collides with exactly the colliders it names."""
    head = data["collider"][-1]
    data["collider"] = [dict(head, name=f"ball{k}", offset=[float(k), 0.0, 0.0]) for k in range(40)]
    for table in data["chain"] + data["strands"]:
        table["colliders"] = [f"ball{k}" for k in range(40) if (k % 2 == 0) == (table is data["chain"][0])]
    rig = rig_from_dict(data, fox.skeleton)
    assert len({c.group for c in rig.colliders}) == 2
    for chain in rig.chains:
        hit = {c.name for c in rig.colliders if chain.collider_mask >> c.group & 1}
        expected = {f"ball{k}" for k in range(40) if (k % 2 == 0) == (chain.kind == "joints")}
        assert hit == expected, chain.name
    for k, table in enumerate(data["strands"]):  # 33 different sets of chains: more than 32 bits
        table["colliders"] = [f"ball{k}"]
    data["chain"][0]["colliders"] = []
    data["collider"] = data["collider"][:33]
    data["strands"] = [dict(data["strands"][0], name=f"s{k}", colliders=[f"ball{k}"]) for k in range(33)]
    with pytest.raises(RigError, match="its 33 colliders are used by 33 different sets of chains; at most 32"):
        rig_from_dict(data, fox.skeleton)

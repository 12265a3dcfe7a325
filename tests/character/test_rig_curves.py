"""Parameter curves along a chain (gpu_jiggle.character.rig.curves): a per-segment rig value
given as { root, tip, curve } over the normalised depth i/(n − 1), for joint chains and
strands, at load and in Pipeline.set_parameters, and every bad curve refused by name."""
from __future__ import annotations

import copy
import math
import sys

import numpy as np
import pytest

from gpu_jiggle.character.pipeline import Pipeline
from gpu_jiggle.character.rig.model import RigError
from gpu_jiggle.character.rig.reader import load_rig, rig_from_dict
from gpu_jiggle.character.pose.skeleton import Pose, Skeleton
from demo_support import FOX_RIG

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SOURCE = "curves.toml"


def line_skeleton(offsets):
    """A root 'root' and a line of joints 'j0', 'j1', ..., each the child of the previous,
    at ``offsets`` (each a (3,) translation from its parent)."""
    n = len(offsets) + 1
    names = ["root"] + [f"j{k}" for k in range(n - 1)]
    translation = np.vstack([[0.0, 0.0, 0.0], np.asarray(offsets, np.float64)])
    rotation = np.tile([0.0, 0.0, 0.0, 1.0], (n, 1))
    return Skeleton(names, np.arange(n) - 1, Pose(translation, rotation, np.ones((n, 3))))


@pytest.fixture
def skeleton():
    return line_skeleton([[0.0, 1.0, 0.0]] * 4)


def chain_rig(joints=4, **springs):
    table = {"name": "tail", "joints": [f"j{k}" for k in range(joints)], "frequency": 3.0}
    table.update(springs)
    return {"chain": [table]}


def strand_rig(segments=4, count=1, **springs):
    table = {"name": "fur", "joint": "root", "count": count, "segments": segments, "length": 2.0,
             "direction": [0.0, 1.0, 0.0], "frequency": 3.0}
    table.update(springs)
    return {"strands": [table]}


def smoothstep(s):
    return 3.0 * s**2 - 2.0 * s**3


# -- the forms -------------------------------------------------------------------------------
def test_a_linear_curve_from_6_to_3_hz_over_4_segments_gives_6_5_4_3(skeleton, tmp_path):
    path = tmp_path / SOURCE
    path.write_text('[[chain]]\nname = "tail"\njoints = ["j0", "j1", "j2", "j3"]\n'
                    'frequency = { root = 6.0, tip = 3.0 }\n'
                    'damping_ratio = { root = 0.2, tip = 0.6, curve = "linear" }\n', encoding="utf-8")
    (tail,) = load_rig(path, skeleton).chains
    assert tail.segments == 4
    assert tail.frequency.tolist() == [6.0, 5.0, 4.0, 3.0]  # exactly
    np.testing.assert_allclose(tail.damping_ratio, [0.2, 0.2 + 0.4 / 3, 0.2 + 0.8 / 3, 0.6], rtol=1e-12)
    assert tail.damping_ratio[0] == 0.2 and tail.damping_ratio[-1] == 0.6  # root and tip exactly


def test_a_smooth_curve_is_the_smoothstep_of_the_depth(skeleton):
    rig = rig_from_dict(strand_rig(segments=7, frequency={"root": 8.0, "tip": 2.0, "curve": "smooth"},
                                   max_distance={"root": 1.0, "tip": 3.0, "curve": "smooth"}), skeleton)
    (fur,) = rig.chains
    s = np.arange(7) / 6
    np.testing.assert_allclose(fur.frequency, 8.0 + smoothstep(s) * (2.0 - 8.0), rtol=1e-14, atol=0)
    np.testing.assert_allclose(fur.max_distance, 1.0 + smoothstep(s) * 2.0, rtol=1e-14, atol=0)
    assert fur.frequency[0] == 8.0 and fur.frequency[-1] == 2.0
    assert fur.frequency[3] == 5.0  # halfway the smoothstep is 1/2
    assert not np.allclose(fur.frequency, np.linspace(8.0, 2.0, 7))  # not the linear curve


def test_a_list_curve_is_piecewise_linear_in_the_depth(skeleton):
    curve = [[0.0, 0.0], [0.5, 0.8], [1.0, 1.0]]
    rig = rig_from_dict(strand_rig(segments=5, frequency={"root": 10.0, "tip": 5.0, "curve": curve},
                                   air_drag={"root": 0, "tip": 2, "curve": [[0, 1], [1, 0]]}), skeleton)
    (fur,) = rig.chains
    # depths 0, 0.25, 0.5, 0.75, 1 → weights 0, 0.4, 0.8, 0.9, 1
    np.testing.assert_allclose(fur.frequency, [10.0, 8.0, 6.0, 5.5, 5.0], rtol=1e-14)
    assert fur.frequency[0] == 10.0 and fur.frequency[-1] == 5.0
    np.testing.assert_allclose(fur.air_drag, [2.0, 1.5, 1.0, 0.5, 0.0], rtol=1e-14)  # integers, and tip to root
    # weights may leave [0, 1]: an overshoot past the tip and back
    rig = rig_from_dict(strand_rig(segments=5, frequency={"root": 4.0, "tip": 6.0,
                                                          "curve": [[0, 0], [0.25, 1.5], [1, 1]]}), skeleton)
    np.testing.assert_allclose(rig.chains[0].frequency, [4.0, 7.0, 6.0 + 2 / 3, 6.0 + 1 / 3, 6.0], rtol=1e-14)


def test_a_one_segment_chain_has_depth_0_and_takes_the_root(skeleton):
    (one,) = rig_from_dict(chain_rig(joints=1, tip_length=1.0, frequency={"root": 6.0, "tip": 3.0}), skeleton).chains
    assert one.segments == 1 and one.frequency.tolist() == [6.0]
    (one,) = rig_from_dict(strand_rig(segments=1, frequency={"root": 6.0, "tip": 3.0, "curve": "smooth"}),
                           skeleton).chains
    assert one.frequency.tolist() == [6.0]
    (one,) = rig_from_dict(strand_rig(segments=1, frequency={"root": 6.0, "tip": 3.0,
                                                             "curve": [[0, 0.5], [1, 1]]}), skeleton).chains
    assert one.frequency.tolist() == [4.5]


def test_strands_of_a_group_each_take_the_curve(skeleton):
    rig = rig_from_dict(strand_rig(segments=4, count=3, frequency={"root": 6.0, "tip": 3.0},
                                   particle_radius={"root": 0.3, "tip": 0.0}), skeleton)
    assert [c.name for c in rig.chains] == ["fur[0]", "fur[1]", "fur[2]"]
    for c in rig.chains:
        assert c.frequency.tolist() == [6.0, 5.0, 4.0, 3.0]
        np.testing.assert_allclose(c.particle_radius, [0.3, 0.2, 0.1, 0.0], rtol=1e-14, atol=1e-17)
    np.testing.assert_array_equal(rig.chain_set.frequency, [6.0, 5.0, 4.0, 3.0] * 3)


def test_the_fox_tail_as_curves_is_the_fox_tail(fox):
    with open(FOX_RIG, "rb") as f:
        data = tomllib.load(f)
    curved = copy.deepcopy(data)
    curved["chain"][0]["frequency"] = {"root": 3.0, "tip": 2.0}
    curved["chain"][0]["damping_ratio"] = {"root": 0.3, "tip": 0.2}
    a, b = rig_from_dict(data, fox.skeleton), rig_from_dict(curved, fox.skeleton)
    np.testing.assert_array_equal(a.chain_set.frequency, b.chain_set.frequency)
    np.testing.assert_array_equal(a.chain_set.damping_ratio, b.chain_set.damping_ratio)


def test_a_zero_length_segment_keeps_its_place_in_the_depth():
    sk = line_skeleton([[0.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]])  # j1 → j2: no length
    (tail,) = rig_from_dict(chain_rig(joints=4, frequency={"root": 6.0, "tip": 3.0}), sk).chains
    assert tail.springy.tolist() == [True, False, True, True]
    assert tail.frequency.tolist() == [6.0, 4.0, 3.0]  # the joints' 6, 5, 4, 3 less the rigid one's 5


# -- the values a curve gives are checked as a list's are ---------------------------------------
@pytest.mark.parametrize("rig, match", [
    (chain_rig(frequency={"root": 6.0, "tip": 0.0}),
     r"curves.toml: chain 'tail': frequency\[3\] = 0.0: expected a finite value > 0 \(Hz\)"),
    (chain_rig(damping_ratio={"root": 0.5, "tip": -0.5}),
     r"curves.toml: chain 'tail': damping_ratio\[2\] = -0.1666666666666666\d: expected a finite value >= 0"),
    (strand_rig(frequency={"root": 6.0, "tip": 3.0, "curve": [[0, 0], [0.5, 3.0], [1, 1]]}),
     r"curves.toml: strands 'fur': frequency\[1\] = 0.0: expected a finite value > 0"),  # 6 + 2·(3 − 6)
    (chain_rig(frequency={"root": 6.0, "tip": 60.0}),  # 6, 24, 42, 60 Hz: 24 is past the stable 23.6
     r"curves.toml: chain 'tail': frequency\[1\] = 24.0 Hz with damping_ratio\[1\] = 0.5 is unstable for the substep "
     r"0.00833333 s: the largest stable frequency for that damping ratio is 23.61 Hz"),
])
def test_the_values_a_curve_gives_are_validated_with_their_segment(skeleton, rig, match):
    with pytest.raises(RigError, match=match):
        rig_from_dict(rig, skeleton, SOURCE)


# -- bad curves --------------------------------------------------------------------------------
BAD_CURVES = [
    ({"root": 6.0, "tipp": 3.0},
     r"frequency = \{'root': 6.0, 'tipp': 3.0\}: unknown key 'tipp'; did you mean 'tip'\?$"),
    ({"root": 6.0, "tip": 3.0, "shape": "smooth"},
     r"frequency = \{.*\}: unknown key 'shape'; the valid names are: root, tip, curve$"),
    ({"tip": 3.0}, r"frequency = \{'tip': 3.0\}: missing 'root' \(the value at the first segment\)$"),
    ({"root": 6.0}, r"frequency = \{'root': 6.0\}: missing 'tip' \(the value at the last segment\)$"),
    ({}, r"frequency = \{\}: missing 'root'"),
    ({"root": "six", "tip": 3.0}, r"frequency.root = 'six': expected a number$"),
    ({"root": 6.0, "tip": [3.0]}, r"frequency.tip = \[3.0\]: expected a number$"),
    ({"root": True, "tip": 3.0}, r"frequency.root = True: expected a number$"),
    ({"root": 6.0, "tip": math.nan}, r"frequency.tip = nan: expected a finite number$"),
    ({"root": -math.inf, "tip": 3.0}, r"frequency.root = -inf: expected a finite number$"),
    ({"root": 6.0, "tip": 1e300}, r"frequency.tip = 1e\+300: expected a finite number within float32 range$"),
    ({"root": 6.0, "tip": 10**400}, r"frequency.tip = 1000.*\.\.\.: expected a finite number within float32 range$"),
    ({"root": 6.0, "tip": 3.0, "curve": "smoth"},
     r"frequency.curve: unknown curve 'smoth'; did you mean 'smooth'\?$"),
    ({"root": 6.0, "tip": 3.0, "curve": "ease"},
     r"frequency.curve: unknown curve 'ease'; the valid names are: linear, smooth$"),
    ({"root": 6.0, "tip": 3.0, "curve": 2},
     r"frequency.curve = 2: expected 'linear', 'smooth' or a list of \[depth, weight\] points$"),
    ({"root": 6.0, "tip": 3.0, "curve": [[0.0, 0.0], [1.5, 0.8], [1.0, 1.0]]},
     r"frequency.curve\[1\] = \[1.5, 0.8\]: its depth 1.5 is outside \[0, 1\]$"),
    ({"root": 6.0, "tip": 3.0, "curve": [[-0.5, 0.0], [1.0, 1.0]]},
     r"frequency.curve\[0\] = \[-0.5, 0.0\]: its depth -0.5 is outside \[0, 1\]$"),
    ({"root": 6.0, "tip": 3.0, "curve": [[0.0, 0.0], [0.5, 0.8], [0.5, 0.9], [1.0, 1.0]]},
     r"frequency.curve\[2\] = \[0.5, 0.9\]: its depth 0.5 is not greater than the previous point's \(0.5\); the "
     r"depths must increase strictly$"),
    ({"root": 6.0, "tip": 3.0, "curve": [[0.0, 0.0], [0.7, 0.8], [0.4, 0.9], [1.0, 1.0]]},
     r"frequency.curve\[2\] = \[0.4, 0.9\]: its depth 0.4 is not greater than the previous point's \(0.7\)"),
    ({"root": 6.0, "tip": 3.0, "curve": [[0.1, 0.0], [1.0, 1.0]]},
     r"frequency.curve\[0\] = \[0.1, 0.0\]: the first point's depth must be 0 \(the root\)$"),
    ({"root": 6.0, "tip": 3.0, "curve": [[0.0, 0.0], [0.9, 1.0]]},
     r"frequency.curve\[1\] = \[0.9, 1.0\]: the last point's depth must be 1 \(the tip\)$"),
    ({"root": 6.0, "tip": 3.0, "curve": [[0.0, 0.0]]},
     r"frequency.curve = \[\[0.0, 0.0\]\]: expected at least two \[depth, weight\] points \(the first at depth 0, "
     r"the last at depth 1\)$"),
    ({"root": 6.0, "tip": 3.0, "curve": []}, r"frequency.curve = \[\]: expected at least two \[depth, weight\]"),
    ({"root": 6.0, "tip": 3.0, "curve": [[0.0, 0.0], [0.5], [1.0, 1.0]]},
     r"frequency.curve\[1\] = \[0.5\]: expected a point \[depth, weight\] \(two numbers\)$"),
    ({"root": 6.0, "tip": 3.0, "curve": [[0.0, 0.0], 0.5, [1.0, 1.0]]},
     r"frequency.curve\[1\] = 0.5: expected a point \[depth, weight\] \(two numbers\)$"),
    ({"root": 6.0, "tip": 3.0, "curve": [[0.0, 0.0], [0.5, 0.5, 0.5], [1.0, 1.0]]},
     r"frequency.curve\[1\] = \[0.5, 0.5, 0.5\]: expected a point \[depth, weight\]"),
    ({"root": 6.0, "tip": 3.0, "curve": [[0.0, 0.0], [0.5, "half"], [1.0, 1.0]]},
     r"frequency.curve\[1\] = \[0.5, 'half'\]: expected a point \[depth, weight\] \(two numbers\)$"),
    ({"root": 6.0, "tip": 3.0, "curve": [[0.0, False], [1.0, 1.0]]},
     r"frequency.curve\[0\] = \[0.0, False\]: expected a point \[depth, weight\] \(two numbers\)$"),
    ({"root": 6.0, "tip": 3.0, "curve": [[0.0, 0.0], [0.5, math.nan], [1.0, 1.0]]},
     r"frequency.curve\[1\] = \[0.5, nan\]: expected finite numbers \[depth, weight\] within float32 range$"),
    ({"root": 6.0, "tip": 3.0, "curve": [[0.0, 0.0], [math.inf, 0.5], [1.0, 1.0]]},
     r"frequency.curve\[1\] = \[inf, 0.5\]: expected finite numbers \[depth, weight\]"),
]


@pytest.mark.parametrize("curve, match", BAD_CURVES)
def test_a_bad_curve_is_refused_naming_file_table_key_and_value(skeleton, curve, match):
    with pytest.raises(RigError, match=r"^curves.toml: chain 'tail': " + match):
        rig_from_dict(chain_rig(frequency=curve), skeleton, SOURCE)


@pytest.mark.parametrize("key", ["damping_ratio", "particle_radius", "max_distance", "air_drag"])
def test_every_per_segment_key_takes_curves_and_refuses_bad_ones(skeleton, key):
    (fur,) = rig_from_dict(strand_rig(**{key: {"root": 0.5, "tip": 2.0}}), skeleton).chains
    np.testing.assert_allclose(getattr(fur, key), [0.5, 1.0, 1.5, 2.0], rtol=1e-14)
    with pytest.raises(RigError, match=rf"^curves.toml: strands 'fur': {key}.curve: unknown curve 'smoth'; "
                                       rf"did you mean 'smooth'\?"):
        rig_from_dict(strand_rig(**{key: {"root": 0.5, "tip": 2.0, "curve": "smoth"}}), skeleton, SOURCE)


def test_a_bad_curve_in_a_toml_file_names_the_file(skeleton, tmp_path):
    path = tmp_path / SOURCE
    path.write_text('[[strands]]\nname = "fur"\njoint = "root"\nsegments = 3\nlength = 1.0\n'
                    'direction = [0.0, 1.0, 0.0]\nfrequency = { root = 6.0, tip = nan }\n', encoding="utf-8")
    with pytest.raises(RigError, match=r"curves.toml: strands 'fur': frequency.tip = nan: expected a finite number$"):
        load_rig(path, skeleton)


# -- live changes ------------------------------------------------------------------------------
def test_set_parameters_takes_a_curve_per_chain_and_per_strand(fox):
    rig = load_rig(FOX_RIG, fox.skeleton)
    with Pipeline(fox, rig, "Run", backend="cpu") as pipeline:
        pipeline.step(0.0, 1 / 30)
        pipeline.set_parameters("tail", frequency={"root": 4.0, "tip": 2.0},
                                damping_ratio={"root": 0.2, "tip": 0.4, "curve": "smooth"})
        pipeline.set_parameters("mane", frequency={"root": 10.0, "tip": 8.0, "curve": [[0, 0], [0.5, 0.5], [1, 1]]})
        chains = {c.name: c for c in pipeline.rig.chains}  # the pipeline's rig; the Rig given is as authored
        assert chains["tail"].frequency.tolist() == [4.0, 3.0, 2.0]
        np.testing.assert_allclose(chains["tail"].damping_ratio, [0.2, 0.3, 0.4], rtol=1e-14)
        for c in pipeline.rig.chains:
            if c.group == "mane":
                assert c.frequency.tolist() == [10.0, 9.0, 8.0]
        solver, index = pipeline.solver_of("tail")
        np.testing.assert_array_equal(solver.chain_set.frequency[solver.chain_set.chain_slices()[index]],
                                      [4.0, 3.0, 2.0])
        pipeline.step(1 / 30, 1 / 30)


@pytest.mark.parametrize("changes, error, match", [
    (dict(frequency={"root": 4.0, "tip": 0.0}), ValueError, r"tail: frequency\[2\] = 0.0: expected a finite value > 0"),
    (dict(frequency={"root": 4.0, "tipp": 2.0}), ValueError,
     r"tail: frequency = \{'root': 4.0, 'tipp': 2.0\}: unknown key 'tipp'; did you mean 'tip'\?"),
    (dict(frequency={"root": 4.0, "tip": "two"}), TypeError, r"tail: frequency.tip = 'two': expected a number"),
    (dict(damping_ratio={"root": 0.2, "tip": 0.4, "curve": [[0, 0], [0.8, 1]]}), ValueError,
     r"tail: damping_ratio.curve\[1\] = \[0.8, 1\]: the last point's depth must be 1 \(the tip\)"),
    (dict(world_influence={"root": 0.2, "tip": 0.4}), TypeError, r"tail: world_influence: expected real numbers"),
])
def test_set_parameters_refuses_a_bad_curve_and_changes_nothing(fox, changes, error, match):
    rig = load_rig(FOX_RIG, fox.skeleton)
    before = {k: np.array(getattr(rig.chain_set, k)) for k in ("frequency", "damping_ratio", "world_influence")}
    with Pipeline(fox, rig, "Run", backend="cpu") as pipeline:
        with pytest.raises(error, match=match):
            pipeline.set_parameters("tail", **changes)
    for k, v in before.items():
        np.testing.assert_array_equal(getattr(rig.chain_set, k), v)

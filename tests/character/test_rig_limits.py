"""Hinge and spherical limits in rigs (``hinge_limit_deg``, ``spherical_limit_deg``,
``limit_axis``; docs/SPEC.md section 9, "Angle limits"), the pipeline passing the joints'
animated rotations, and the cone limit changed live."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from gpu_jiggle.character.pipeline import Pipeline
from gpu_jiggle.character.rig.model import RigError
from gpu_jiggle.character.rig.reader import rig_from_dict


def _with_tail(rig_data, **keys):
    data = copy.deepcopy(rig_data)
    data["chain"][0].update(keys)
    assert data["chain"][0]["name"] == "tail"
    return data


def _tail_run(fox, rig, backend, seconds=1.0):
    tail = rig.joint_chains[0]
    worst, rotation_gap = 0.0, 0.0
    with Pipeline(fox, rig, "Run", loop=False, backend=backend) as pipeline:
        for frame in pipeline.play(30, seconds):
            index = rig.chains.index(tail)
            targets, positions = frame.chain_targets[index], frame.chain_positions[index]
            length = np.linalg.norm(np.diff(targets, axis=0), axis=1).sum()
            worst = max(worst, np.abs(positions - targets).max() / length)
            animated = fox.skeleton.world_rotations(pipeline.apply_constraints(pipeline.sample_keyframes(frame.time), frame.time))
            final = fox.skeleton.world_rotations(frame.pose)
            for node in tail.nodes:
                rotation_gap = max(rotation_gap, 1 - abs(float(np.dot(final[node], animated[node]))))
    return worst, rotation_gap


def test_a_hinge_of_zero_holds_the_tail_on_its_animation_twist_and_all(fox, rig_data, backend):
    """A hinge range of 0 leaves the tail no turn: through the pipeline (which passes the
    joints' rotations) it follows the Run exactly, and each tail joint's final world rotation
    is its animated one (the segment rotations carry the joints' twist), while the free tail
    swings well off."""
    free = rig_from_dict(rig_data, fox.skeleton)
    held = rig_from_dict(_with_tail(rig_data, hinge_limit_deg=[0.0, 0.0], limit_axis=[0.0, 0.0, 1.0]), fox.skeleton)
    assert held.chain_set.needs_rotations[:3].all()
    swing, _ = _tail_run(fox, free, backend)
    worst, gap = _tail_run(fox, held, backend)
    assert swing > 0.05
    assert worst < 1e-4, worst
    assert gap < 1e-6, gap


def test_spherical_limit_keys_reach_the_chain_set(fox, rig_data):
    rig = rig_from_dict(_with_tail(rig_data, spherical_limit_deg=[20.0, 35.0], limit_axis=[0, 2.0, 0]), fox.skeleton)
    tail = rig.chain_set.chain_slices()[rig.chains.index(rig.joint_chains[0])]
    np.testing.assert_allclose(rig.chain_set.spherical_limit[tail], np.radians([[20.0, 35.0]] * 3))
    np.testing.assert_allclose(rig.chain_set.limit_axis[tail], [[0.0, 1.0, 0.0]] * 3)
    assert np.isinf(rig.chain_set.spherical_limit[tail.stop:]).all()


@pytest.mark.parametrize("keys, message", [
    ({"hinge_limit_deg": [30.0, -30.0]}, r"chain 'tail': hinge_limit_deg\[0\] = 30: expected a least angle"),
    ({"hinge_limit_deg": [-30.0, 200.0]}, r"hinge_limit_deg\[1\] = 200: expected an angle in \[-π, π\]"),
    ({"hinge_limit_deg": [[-30.0, 30.0], [30.0, -30.0], [-10.0, 10.0]]},
     r"chain 'tail': hinge_limit_deg\[1\]\[0\] = 30: expected a least angle"),
    ({"hinge_limit_deg": [[-30.0, 30.0], [-10.0, 10.0]]}, r"expected \[least, greatest\].*one such per segment \(3\)"),
    ({"spherical_limit_deg": [10.0]}, r"spherical_limit_deg = \[10.0\]: expected \[pitch, yaw\]"),
    ({"spherical_limit_deg": [10.0, -5.0]}, r"spherical_limit_deg\[1\] = -5"),
    ({"limit_axis": [0.0, 0.0, 0.0]}, r"limit_axis\[0\] = 0: expected a non-zero axis"),
    ({"limit_axis": "x"}, r"limit_axis = 'x'"),
    ({"angle_limit_deg": 30.0, "spherical_limit_deg": [10.0, 10.0]}, r"expected at most one limit per segment"),
])
def test_bad_limit_keys_are_refused_naming_table_and_key(fox, rig_data, keys, message):
    with pytest.raises(RigError, match=message):
        rig_from_dict(_with_tail(rig_data, **keys), fox.skeleton)


def test_angle_limit_deg_changes_live(fox, rig_data):
    rig = rig_from_dict(rig_data, fox.skeleton)
    with Pipeline(fox, rig, "Run", backend="cpu") as pipeline:
        for _ in pipeline.play(30, 0.2):
            pass
        pipeline.set_parameters("tail", angle_limit_deg=[10.0, 20.0, 30.0])
        solver, tail = pipeline.solver_of("tail")
        np.testing.assert_allclose(solver.chain_set.angle_limit[solver.chain_set.chain_slices()[tail]],
                                   np.radians([10.0, 20.0, 30.0]))
        with pytest.raises(ValueError, match=r"tail: angle_limit\[1\] = -0.0174"):
            pipeline.set_parameters("tail", angle_limit_deg=[10.0, -1.0, 30.0])
        for _ in pipeline.play(30, 0.2):
            pass

"""Model v2's inputs refused (SPEC 7): air drag, the option names, teleport flags, and
float64 positions beyond 1e15; each refusal names the argument, index and value and changes
nothing."""
from __future__ import annotations

import re

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, PointChainSet, Solver


@pytest.mark.parametrize("make", [lambda a: AngleChainSet([2, 3], 0.1, 2.0, 0.5, air_drag=a),
                                  lambda a: PointChainSet([2, 3], 2.0, 0.5, air_drag=a)])
@pytest.mark.parametrize("value, index, shown", [([0.0, 0.0, -0.5, 0.0, 0.0], r"\[2\]", "-0.5"),
                                                  ([0.0, np.nan, 0.0, 0.0, 0.0], r"\[1\]", "nan"),
                                                  (np.inf, "", "inf")])
def test_air_drag_below_zero_or_not_finite_is_refused(make, value, index, shown):
    with pytest.raises(ValueError, match=rf"air_drag{index} = {shown}"):
        make(value)


def test_air_drag_changed_live_is_validated_and_nothing_changes(backend):
    s = Solver(PointChainSet([2, 3], 2.0, 0.5), backend=backend)
    s.set_pose(np.concatenate([[[0, -0.1 * k, 0] for k in range(3)], [[1, -0.1 * k, 0] for k in range(4)]]))
    s.advance(1 / 60)
    before = s.save_state()
    with pytest.raises(ValueError, match=r"air_drag\[4\] = -1\.0"):
        s.set_parameters(air_drag=[0.0, 0.0, 0.0, 0.0, -1.0])
    assert s.save_state() == before
    s.set_parameters(air_drag=2.0)
    assert np.all(s.chain_set.air_drag == 2.0)


@pytest.mark.parametrize("option, value, hint", [("target_path", "hermit", "did you mean 'hermite'"),
                                                 ("target_path", "cubic", "expected one of 'monotone', 'hermite', 'linear'"),
                                                 ("damping_frame", "wrld", "did you mean 'world'"),
                                                 ("damping_frame", "target", "expected one of")])
def test_unknown_option_names_are_refused(backend, option, value, hint):
    with pytest.raises(ValueError, match=rf"{option} = '{value}': .*{re.escape(hint)}"):
        Solver(AngleChainSet([2], 0.1, 2.0, 0.5), backend=backend, **{option: value})
    with pytest.raises(TypeError, match=option):
        Solver(PointChainSet([2], 2.0, 0.5), backend=backend, **{option: 1})


def test_teleport_flags_must_be_bools_and_nothing_changes(backend):
    s = Solver(AngleChainSet([2, 2], 0.1, 2.0, 0.5), backend=backend)
    s.set_pose([[0.0, 0.0], [1.0, 0.0]], [0.0, 0.0], np.zeros(4))
    s.advance(1 / 60)
    before = s.save_state()
    for flags in ({"moving": "yes"}, {"mirror": 1}, {"mirror": "yes", "keep_shape": True}, {"keep_shape": None}):
        with pytest.raises(TypeError, match=next(iter(flags))):
            s.teleport(**flags)
    with pytest.raises(ValueError, match=r"chains\[0\] = 7"):
        s.teleport([7], moving=True)
    s.advance(1 / 60)
    fresh = Solver(AngleChainSet([2, 2], 0.1, 2.0, 0.5), backend=backend)
    fresh.set_pose([[0.0, 0.0], [1.0, 0.0]], [0.0, 0.0], np.zeros(4))
    fresh.advance(1 / 60)
    fresh.advance(1 / 60)
    assert s.save_state() != before
    np.testing.assert_array_equal(s.angles(), fresh.angles())  # the refused teleports did nothing


def test_positions_beyond_1e15_are_refused_on_both_kinds(backend):
    angle = Solver(AngleChainSet([2, 2], 0.1, 2.0, 0.5), backend=backend)
    with pytest.raises(ValueError, match=r"root_position\[1, 0\] = 2e\+16: expected a coordinate within ±1e\+15"):
        angle.set_pose([[0.0, 0.0], [2e16, 0.0]], [0.0, 0.0], np.zeros(4))
    angle.set_pose([[0.0, 0.0], [9e14, 0.0]], [0.0, 0.0], np.zeros(4))  # within: accepted
    point = Solver(PointChainSet([1], 2.0, 0.5), backend=backend)
    point.set_pose([[0.0, 0.0, 0.0], [0.0, -0.1, 0.0]])
    point.advance(1 / 60)
    before = point.save_state()
    with pytest.raises(ValueError, match=r"spheres\[0, 1\] = -3e\+16"):
        point.set_colliders(spheres=[[0.0, -3e16, 0.0, 0.1]])
    with pytest.raises(ValueError, match=r"capsules\[0, 5\] = 1\.5e\+16"):
        point.set_colliders(capsules=[[0.0, 0.0, 0.0, 0.0, 0.0, 1.5e16, 0.1]])
    assert point.save_state() == before

"""SPEC section 7 for point chains: refused with the stated error, nothing changed."""
from __future__ import annotations

import re

import numpy as np
import pytest
from test_bad_input import assert_refusal_changes_nothing, assert_same_state

from gpu_jiggle import AngleChainSet, InputError, PointChainSet, Solver
from gpu_jiggle.sim.inputs import ColliderSet

NAN, INF = float("nan"), float("inf")


def point_set(**overrides):
    args = dict(segment_counts=[2, 3], frequency=2.0, damping_ratio=0.5)
    args.update(overrides)
    return PointChainSet(**args)


@pytest.mark.parametrize("overrides, error, message", [
    ({"world_influence": 1.5}, ValueError, "world_influence = 1.5: expected a value in [0, 1]"),
    ({"world_influence": [1.0, -0.1]}, ValueError, "world_influence[1] = -0.1"),
    ({"collider_mask": -1}, ValueError, "collider_mask = -1: expected a 32-bit mask"),
    ({"collider_mask": [1, 2 ** 32]}, ValueError, "collider_mask[1] = 4294967296"),
    ({"collider_mask": 1.5}, TypeError, "collider_mask"),
    ({"rest_lengths": [1, 1, 0, 1, 1]}, ValueError, "rest_lengths[2] = 0.0"),
    ({"particle_radius": -0.01}, ValueError, "particle_radius = -0.01"),
    ({"max_distance": [1, 1, 1, 1, 0]}, ValueError, "max_distance[4] = 0.0"),
    ({"frequency": NAN}, ValueError, "frequency = nan"),
    ({"gravity": (0, -9.8)}, ValueError, "gravity: expected one vector (3,) for every chain or one per chain (2, 3)"),
    ({"gravity": [(0, -9.8, 0)] * 3}, ValueError, "one per chain (2, 3), got shape (3, 3)"),
    ({"segment_counts": [0]}, ValueError, "segment_counts[0] = 0"),
])
def test_point_chain_set_refuses(overrides, error, message):
    with pytest.raises(error, match=re.escape(message)):
        point_set(**overrides)


def moving_solver(backend):
    s = Solver(point_set(gravity=(0, -9.8, 0), particle_radius=0.01), backend=backend)
    joints = np.array([[0, 0, 0], [0, -1, 0], [0, -2, 0], [1, 0, 0], [1, -1, 0], [1, -2, 0], [1, -3, 0.0]])
    for i in range(10):
        s.set_pose(joint_positions=joints + [0.1 * i, 0, 0])
        s.set_colliders(spheres=[[0.5, -1, 0, 0.3]], capsules=[[0, -3, 0, 1, -3, 0, 0.2]], planes=[[0, 1, 0, -5]])
        s.set_wind((1, 0, 0), 0.5, (1, 0, 0), 0.5)
        s.advance(1 / 50)
    return s


BAD_CALLS = [
    (lambda s: s.set_pose(joint_positions=np.zeros((6, 3))), ValueError, "joint_positions: expected shape (7, 3)"),
    (lambda s: s.set_pose(joint_positions=np.full((7, 3), NAN)), ValueError, "joint_positions[0, 0] = nan"),
    (lambda s: s.set_colliders(spheres=[[0, 0, 0, -1.0]]), ValueError, "spheres[0, 3] = -1.0: expected a radius >= 0"),
    (lambda s: s.set_colliders(spheres=[[0, 0, 0]]), ValueError, "spheres: expected shape (any, 4)"),
    (lambda s: s.set_colliders(spheres=[[0, 0, 0, 1]], sphere_groups=[32]), ValueError, "sphere_groups[0] = 32"),
    (lambda s: s.set_colliders(spheres=[[0, 0, 0, 1]], sphere_groups=[0.5]), TypeError, "sphere_groups"),
    (lambda s: s.set_colliders(capsules=[[0, 0, 0, 1, 1, 1, -0.5]]), ValueError, "capsules[0, 6] = -0.5"),
    (lambda s: s.set_colliders(capsules=[[0, 0, 0, 1, INF, 1, 0.5]]), ValueError, "capsules[0, 4] = inf"),
    (lambda s: s.set_colliders(planes=[[0, 2, 0, 0]]), ValueError,
     "planes[0, 0:3] = [0.0, 2.0, 0.0]: expected a unit normal"),
    (lambda s: s.set_colliders(spheres=[[0, 0, 0, 1e20]]), ValueError,
     "spheres[0, 3] = 1e+20: expected a radius >= 0 and <= 1e+15"),
    (lambda s: s.set_colliders(spheres=[[0, 0, 0, 1], [1e20, 0, 0, -1]]), ValueError,
     "spheres[1, 0] = 1e+20: expected a coordinate within ±1e+15"),
    (lambda s: s.set_colliders(capsules=[0, 0, 0, 1, 1, 1]), ValueError,
     "capsules: expected shape (any, 7), a row each (end a x, end a y, end a z, end b x, end b y, end b z, radius), "
     "or one row of 7; got (6,)"),
    (lambda s: s.set_colliders(planes=[0, 0, 0.5, 1]), ValueError,
     "planes[0:3] = [0.0, 0.0, 0.5]: expected a unit normal"),
    (lambda s: s.set_wind((1, 0)), ValueError, "acceleration: expected shape (3,)"),
    (lambda s: s.set_wind((1, 0, 0), NAN), ValueError, "gust_amplitude = nan"),
    (lambda s: s.set_parameters(world_influence=2.0), ValueError, "world_influence = 2.0"),
    (lambda s: s.set_parameters(collider_mask=[1, -2]), ValueError, "collider_mask[1] = -2"),
    (lambda s: s.set_parameters(frequency=100.0), ValueError, "largest stable frequency"),
    (lambda s: s.rebase([0, NAN, 0]), ValueError, "origin[1] = nan"),
    (lambda s: s.advance(-1.0), ValueError, "frame_dt = -1.0"),
    (lambda s: s.angles(), AttributeError, "angles is for angle chains (AngleSolver); this PointSolver"),
]


@pytest.mark.parametrize("call, error, message", BAD_CALLS)
def test_refused_call_changes_nothing(backend, call, error, message):
    assert_refusal_changes_nothing(lambda: moving_solver(backend), call, error, message)


def test_plane_normals_close_to_unit_are_normalised(backend):
    s = moving_solver(backend)
    s.set_colliders(planes=[[0, 1.0005, 0, -5]])
    assert np.linalg.norm(s.state()["colliders"].planes[0, :3]) == pytest.approx(1.0, abs=1e-12)


def test_empty_lists_clear_the_colliders_as_none_does(backend):
    """``[]`` is the natural way to say "no spheres"; a flat row is one collider."""
    cleared = []
    for empty in ([], None, np.zeros((0, 4))):
        s = moving_solver(backend)
        s.set_colliders(spheres=empty, capsules=[] if empty is not None else None, planes=empty)
        colliders = s.state()["colliders"]
        assert (len(colliders.spheres), len(colliders.capsules), len(colliders.planes)) == (0, 0, 0)
        s.advance(1 / 50)
        cleared.append(s.positions())
    np.testing.assert_array_equal(cleared[0], cleared[1])
    np.testing.assert_array_equal(cleared[0], cleared[2])
    s.set_colliders(spheres=[0.5, -1, 0, 0.3])
    assert s.state()["colliders"].spheres.shape == (1, 4)


def test_each_kind_has_only_its_own_methods():
    angle = Solver(AngleChainSet([2], 1.0, 2.0, 0.5), backend="cpu")
    point = Solver(PointChainSet([2], 2.0, 0.5), backend="cpu")
    assert (type(angle).__name__, type(point).__name__) == ("AngleSolver", "PointSolver")
    assert isinstance(angle, Solver) and isinstance(point, Solver)
    point_only = {"set_colliders", "velocities", "rebase", "segment_rotations", "origin", "rest_lengths"}
    angle_only = {"angles", "angular_velocities"}
    assert callable(angle.set_wind) and callable(point.set_wind)  # wind is for both (SPEC 3, 4.1)
    assert not point_only & set(dir(angle)) and not angle_only & set(dir(point))
    for name in point_only - {"origin", "rest_lengths"}:
        with pytest.raises(AttributeError, match=f"{name} is for point chains"):
            getattr(angle, name)()
    with pytest.raises(TypeError, match="joint_positions"):
        angle.set_pose(joint_positions=np.zeros((3, 3)))


def test_point_pose_may_be_given_by_position(backend):
    a, b = Solver(PointChainSet([2], 2.0, 0.5), backend=backend), Solver(PointChainSet([2], 2.0, 0.5), backend=backend)
    joints = np.array([[0, 0, 0], [0, -1, 0], [0, -2, 0.0]])
    a.set_pose(joints)
    b.set_pose(joint_positions=joints)
    for s in (a, b):
        s.advance(1 / 60)
    np.testing.assert_array_equal(a.positions(), b.positions())


def test_rebase_keeps_the_motion(backend):
    a, b = moving_solver(backend), moving_solver(backend)
    b.rebase(b.origin + [3.0, -2.0, 0.5])
    joints = np.array([[0, 0, 0], [0, -1, 0], [0, -2, 0], [1, 0, 0], [1, -1, 0], [1, -2, 0], [1, -3, 0.0]])
    for i in range(30):
        for s in (a, b):
            s.set_pose(joint_positions=joints + [0.1 * (10 + i), 0.05 * i, 0])
            s.advance(1 / 60)
    np.testing.assert_allclose(b.positions(), a.positions(), rtol=0, atol=1e-5)


def test_coordinates_beyond_float32_are_refused(backend):
    s = moving_solver(backend)
    before = s.state()
    joints = np.zeros((7, 3))
    joints[3, 0] = 1e39
    with pytest.raises(ValueError, match=re.escape("joint_positions[3, 0] = 1e+39: expected a number within float32")):
        s.set_pose(joint_positions=joints)
    with pytest.raises(ValueError, match="within float32"):
        s.set_colliders(spheres=[[0, 0, 0, 1e300]])
    assert_same_state(before, s.state())


@pytest.mark.parametrize("planes, index, indices", [([[0, 1, 0, 0], [0, 0, 2, 1]], 4, (1, 0)),
                                                    ([0, 3, 0, 1], 0, (0,))])
def test_a_bad_plane_normal_is_placed_at_its_row_as_given(planes, index, indices):
    with pytest.raises(InputError) as caught:
        ColliderSet.validated(planes=planes)
    assert (caught.value.argument, caught.value.index, caught.value.indices) == ("planes", index, indices)
    assert caught.value.value == np.asarray(planes, float).reshape(-1, 4)[index // 4, :3].tolist()
    assert "its length is" in str(caught.value)


def test_the_first_bad_collider_entry_is_named_whatever_its_column():
    with pytest.raises(InputError) as caught:  # row 0's radius comes before row 1's coordinate
        ColliderSet.validated(capsules=[[0, 0, 0, 1, 1, 1, -1], [2e15, 0, 0, 1, 1, 1, 1]])
    assert (caught.value.index, caught.value.indices, caught.value.value) == (6, (0, 6), -1.0)
    assert "a radius >= 0" in caught.value.expected

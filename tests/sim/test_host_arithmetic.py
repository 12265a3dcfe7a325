"""The host's shortcuts for per-frame arithmetic give the same bits as the plain numpy they
replace: the wind's phase mod 2π, the copy of structured records, angles rounded before they
are wrapped, the numpy reference's dot and cross products of rows, and the colliders' path
rates limited in one call."""
from __future__ import annotations

import math

import numpy as np
import pytest

from gpu_jiggle.sim import layouts
from gpu_jiggle.sim.backends.reference.point_geometry import cross, dot
from gpu_jiggle.sim.inputs import ColliderPath, ColliderSet, modulo_two_pi, start_tangent
from gpu_jiggle.sim.packing import copy_records


def test_modulo_two_pi_is_numpys_remainder_bit_for_bit():
    rng = np.random.default_rng(3)
    two_pi = 2.0 * math.pi
    edges = [0.0, -0.0, two_pi, -two_pi, 3 * two_pi, -7 * two_pi, 1e-300, -1e-300, 5e-324, -5e-324, 1e300, -1e300,
             np.nextafter(two_pi, 0.0), np.nextafter(-two_pi, 0.0), -1e-17, 1e-17, math.pi, -math.pi]
    x = np.concatenate([rng.uniform(-1e4, 1e4, 200_000), rng.normal(0.0, 1.0, 50_000),
                        rng.integers(-10 ** 6, 10 ** 6, 10_000) * two_pi, edges])
    expected = x % two_pi
    got = modulo_two_pi(x)
    assert got.dtype == np.float64 and got.shape == x.shape
    assert np.array_equal(got.view(np.uint64), expected.view(np.uint64))


def test_copy_records_is_a_copy_of_every_field():
    records = np.zeros(1000, layouts.POINT_CHAIN_TARGET)
    raw = records.view(np.uint8)
    raw[:] = np.random.default_rng(5).integers(0, 256, raw.size, dtype=np.uint8)
    copied = copy_records(records)
    assert copied.dtype == records.dtype and copied.shape == records.shape
    assert np.array_equal(copied.view(np.uint8), records.view(np.uint8))
    copied["gust_phase"] = 1.0
    assert not np.array_equal(copied.view(np.uint8), records.view(np.uint8))  # a copy, not a view


def test_set_pose_keeps_nothing_of_the_callers_arrays(backend):
    """The pose is validated without a copy where only read: changing the caller's arrays after
    set_pose changes nothing of the frame."""
    from gpu_jiggle import AngleChainSet, Solver

    chain_set = AngleChainSet([3, 2], 0.5, 2.0, 0.5, gravity=(0.0, -9.8))
    given, untouched = (Solver(chain_set, backend=backend) for _ in range(2))
    for f in range(5):
        root, heading, local = np.array([[0.1 * f, 0.0], [1.0, 0.0]]), np.array([0.0, 0.3]), np.full(5, 0.1 * f)
        untouched.set_pose(root.copy(), heading.copy(), local.copy())
        given.set_pose(root, heading, local)
        root[:], heading[:], local[:] = 7.0, 7.0, 7.0
        for solver in (given, untouched):
            solver.advance(1 / 60)
        assert np.array_equal(given.positions(), untouched.positions())


def _rows(rng, shape):
    """float32 rows with mixed signs and magnitudes, so that the order of a sum shows in its bits."""
    return (rng.normal(size=shape) * 10.0 ** rng.integers(-4, 5, shape)).astype(np.float32)


@pytest.mark.parametrize("shapes", [((64, 3), (64, 3)), ((1000, 3), (1000, 3)), ((1000, 3), (3,)),
                                    ((3,), (1000, 3)), ((8, 16, 3), (8, 16, 3)), ((8, 16, 3), (16, 3))])
def test_reference_dot_and_cross_are_the_column_forms_bit_for_bit(shapes):
    """The reference's dot (x + y, then + z) and cross (a_y·b_z - a_z·b_y, ...) as the shader
    writes them, whichever form they take numpy in, rows against rows or against one vector."""
    rng = np.random.default_rng(11)
    a, b = _rows(rng, shapes[0]), _rows(rng, shapes[1])
    plain_dot = a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]
    plain_cross = np.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                            a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                            a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)
    assert dot(a, b).dtype == cross(a, b).dtype == np.float32
    assert dot(a, b).view(np.uint32).tolist() == plain_dot.view(np.uint32).tolist()
    assert cross(a, b).view(np.uint32).tolist() == plain_cross.view(np.uint32).tolist()
    x = a if a.ndim >= b.ndim else b  # these rows tell sums in another order apart
    y = np.broadcast_to(b if x is a else a, x.shape)
    other = x[..., 0] * y[..., 0] + (x[..., 1] * y[..., 1] + x[..., 2] * y[..., 2])
    assert other.view(np.uint32).tolist() != np.broadcast_to(plain_dot, other.shape).view(np.uint32).tolist()


def test_angles_rounded_first_are_the_float64_wrap_rounded_bit_for_bit():
    """wrapped_float32 takes the rounded angles as they are where all lie within ±3 rad after
    rounding: the same bits as wrapping in float64 and rounding, for angles on either side of
    ±3 and ±π, and a bad angle is still named."""
    from gpu_jiggle.sim.angle import WRAPPED_WITHIN, wrap_angle64, wrapped_float32
    from gpu_jiggle.sim.validation import InputError

    rng = np.random.default_rng(11)
    bound = WRAPPED_WITHIN
    edges = np.array([bound, -bound, np.nextafter(bound, 4.0), np.nextafter(-bound, -4.0), bound + 1e-7,
                      -bound - 1e-7, bound + 2e-7, math.pi, -math.pi, 0.0, -0.0, 1e-40, -1e-40])
    for x in (rng.uniform(-bound, bound, 100_000), np.concatenate([rng.uniform(-bound, bound, 1000), edges]),
              rng.uniform(-50.0, 50.0, 100_000), edges):
        expected = wrap_angle64(x).astype(np.float32)
        assert np.array_equal(wrapped_float32("local_angle", x).view(np.uint32), expected.view(np.uint32))
    for bad, what in ((np.nan, "finite"), (np.inf, "finite"), (1e39, "float32 range")):
        x = np.zeros(7)
        x[5] = bad
        with pytest.raises(InputError, match=rf"local_angle\[5\].*{what}"):
            wrapped_float32("local_angle", x)


def test_a_pose_checked_and_packed_by_chunks_is_the_pose_checked_then_packed():
    """checked_strands copies, checks and packs a pose of chains of one length a few chains at a
    time: the same joints and offset bits as the whole-array check and subtraction, and the
    same error, naming the first bad entry, for a bad coordinate in any chunk."""
    from gpu_jiggle.sim import validation
    from gpu_jiggle.sim.point_records import PACK_CHUNK_CHAINS, checked_strands, pack_offsets

    rng = np.random.default_rng(13)
    for chains, length in ((PACK_CHUNK_CHAINS * 2 + 37, 8), (5, 3), (0, 4)):
        given = rng.uniform(-1e3, 1e3, (chains * (length + 1), 3))
        joints, offsets = checked_strands("joint_positions", given, chains, length)
        expected = pack_offsets(given.reshape(chains, length + 1, 3), np.empty((chains * length, 3), np.float32))
        assert np.array_equal(joints, given) and joints is not given
        assert np.array_equal(offsets.view(np.uint32), expected.view(np.uint32))
    chains, length = PACK_CHUNK_CHAINS + 10, 2
    for bad in (np.nan, np.inf, -2e15):
        given = rng.uniform(-1.0, 1.0, (chains * (length + 1), 3))
        given[(PACK_CHUNK_CHAINS + 3) * (length + 1) + 1, 2] = bad  # in the second chunk
        given[-1, 0] = np.nan  # a later bad entry is not the one named
        with pytest.raises(validation.InputError) as raised:
            checked_strands("joint_positions", given, chains, length)
        with pytest.raises(validation.InputError) as expected:
            validation.coordinates("joint_positions", given, (chains * (length + 1), 3))
        assert str(raised.value) == str(expected.value) and "joint_positions[" in str(raised.value)
    with pytest.raises(ValueError, match=r"joint_positions: expected shape \(9, 3\)"):
        checked_strands("joint_positions", np.zeros((8, 3)), 3, 2)


@pytest.mark.parametrize("path", [layouts.PATH_MONOTONE, layouts.PATH_HERMITE])
def test_collider_rates_in_one_call_are_each_shapes_own_bit_for_bit(path):
    """ColliderPath.start_rates limits every sphere centre and capsule end in one call of
    start_tangent: the bits of a call per shape and end, as row by row they are; and a frame's
    second ask (the path after it) gets the first's result."""
    rng = np.random.default_rng(8)
    k, m = 5, 7

    def colliders(scale):
        spheres = np.concatenate([rng.normal(0, scale, (k, 3)), rng.uniform(0.01, 0.2, (k, 1))], 1)
        capsules = np.concatenate([rng.normal(0, scale, (m, 6)), rng.uniform(0.01, 0.2, (m, 1))], 1)
        return ColliderSet(spheres, np.zeros(k, np.uint32), capsules, np.zeros(m, np.uint32), np.zeros((0, 4)),
                           np.zeros(0, np.uint32), np.zeros(k, np.uint32), np.zeros(m, np.uint32))

    start, end = colliders(1.0), colliders(1.0)
    end.spheres[0, :3] = start.spheres[0, :3]  # one centre that does not move
    path_of = ColliderPath(start, rng.normal(0, 3, (k, 3)), rng.normal(0, 3, (m, 6)))
    span = 1 / 60
    spheres, capsules = path_of.start_rates(end, span, path)
    expected = [start_tangent(end.spheres[:, :3] - start.spheres[:, :3], span * path_of.sphere_rate, path)]
    expected += [start_tangent(end.capsules[:, i:i + 3] - start.capsules[:, i:i + 3],
                               span * path_of.capsule_rate[:, i:i + 3], path) for i in (0, 3)]
    assert spheres.view(np.uint64).tolist() == expected[0].view(np.uint64).tolist()
    assert capsules.view(np.uint64).tolist() == np.concatenate(expected[1:], 1).view(np.uint64).tolist()
    assert path_of.start_rates(end, span, path)[0] is spheres  # asked again for the same frame
    assert path_of.start_rates(end, 2 * span, path)[0] is not spheres

"""The contact broad phase (SPEC 4.2): running the contact stages on the particles it finds near
a collider changes nothing against running them on every particle, bit for bit, and it does
find the far ones far. numpy path; the GPU path's broad phase is the same test in the shader,
checked through the point cross-check tests."""
import numpy as np
import pytest

from gpu_jiggle.sim import layouts
from gpu_jiggle.sim.backends.reference.point_contact import (Contact, collide, collide_near, contact_possible,
                                                       keep_outside, settle_contact)
from gpu_jiggle.sim.backends.reference.point_sweep import sweep_particle, sweep_segment

F = np.float32
N = 4000


def colliders(inside: bool):
    spheres = np.zeros(2, layouts.SPHERE_COLLIDER)
    spheres["start"] = [[0.3, 0.0, 0.0, 0.2], [0.55, 0.05, 0.0, 0.15]]  # overlapping: a crevice
    spheres["delta"] = [[0.01, 0.0, 0.0, 0.0], [0.0, -0.02, 0.0, 0.01]]
    spheres["group"] = [0, 1]
    spheres["inside"] = [0, 1 if inside else 0]
    capsules = np.zeros(1, layouts.CAPSULE_COLLIDER)
    capsules["start_a"] = [[-0.5, -0.3, -0.2, 0.08]]
    capsules["start_b"] = [[0.5, -0.25, 0.3, 0.0]]
    capsules["group"] = [1]
    planes = np.zeros(1, layouts.PLANE_COLLIDER)
    planes["start"] = [[0.0, 1.0, 0.0, -0.6]]
    planes["group"] = [0]
    return {"spheres": spheres, "capsules": capsules, "planes": planes}


def scene(inside: bool, seed: int = 3):
    """Particles over a box around the colliders, a quarter of them placed exactly on a surface
    grown by ρ (where a particle rests after a push-out), with bases a segment's length away."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, (N, 3)).astype(F)
    rho = rng.uniform(0.0, 0.02, N).astype(F)
    on_surface = rng.random(N) < 0.25
    normal = rng.normal(size=(N, 3))
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    x[on_surface] = (np.array([0.3, 0.0, 0.0]) + normal[on_surface] * (0.2 + rho[on_surface, None])).astype(F)
    rest_length = rng.uniform(0.01, 0.1, N).astype(F)
    direction = rng.normal(size=(N, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    base = (x - direction * rest_length[:, None]).astype(F)
    v = rng.normal(size=(N, 3)).astype(F)
    mask = rng.choice(np.array([0b01, 0b10, 0b11, 0], np.uint32), N)
    anchor = rng.normal(scale=0.01, size=(N, 3))
    pivot = rng.normal(scale=0.01, size=(N, 3)).astype(F)
    ct = Contact(colliders(inside), mask, anchor, pivot, F(0.5), (F(0.5), F(0.1), F(1.0), F(0.2)))
    return ct, rho, base, rest_length, x, v


@pytest.mark.parametrize("inside", [False, True])
def test_the_broad_phase_changes_nothing(inside):
    ct, rho, base, rest_length, x, v = scene(inside)
    h = F(1 / 240)
    for got, want in zip(collide_near(ct, rho, x, v), collide(ct, rho, x, v)):
        np.testing.assert_array_equal(got, want)
    settled = collide(ct, rho, *keep_outside(ct, rho, base, rest_length, h, x, v))
    for got, want in zip(settle_contact(ct, rho, base, rest_length, h, x, v), settled):
        np.testing.assert_array_equal(got, want)
    # The stages did act on this scene: the comparison is not between two untouched copies.
    assert (collide(ct, rho, x, v)[0] != x).any(axis=1).sum() > N // 10


@pytest.mark.parametrize("inside", [False, True])
def test_the_swept_broad_phase_changes_nothing(inside):
    """Swept contact (SPEC 9): with colliders that moved over the substep and particles and
    bases that moved too, the broad phase (grown by those moves) still changes nothing."""
    ct, rho, base, rest_length, x, v = scene(inside)
    rng = np.random.default_rng(11)
    mask = rng.choice(np.array([0b01, 0b10, 0b11, 0], np.uint32), N)
    anchor = rng.normal(scale=0.01, size=(N, 3))
    pivot = rng.normal(scale=0.01, size=(N, 3)).astype(F)
    # The colliders at fraction 1 of a fast path, having started at fraction 0 (their moves
    # are their whole deltas, scaled up here to cross many particles).
    shapes = colliders(inside)
    for name, fields in (("spheres", ("delta",)), ("capsules", ("delta_a", "delta_b"))):
        for field in fields:
            shapes[name][field][:, :3] = rng.normal(scale=0.3, size=(len(shapes[name]), 3))
    ct = Contact(shapes, mask, anchor, pivot, F(1), (F(1), F(0), F(0), F(0)), (F(0), F(0), F(0), F(0)))
    start = (x + rng.normal(scale=0.4, size=(N, 3))).astype(F)
    base_start = (base + rng.normal(scale=0.4, size=(N, 3))).astype(F)
    h = F(1 / 240)
    swept = collide(ct, rho, *sweep_particle(ct, rho, h, start, x, v))
    for got, want in zip(collide_near(ct, rho, x, v, h, start), swept):
        np.testing.assert_array_equal(got, want)
    settled = collide(ct, rho, *keep_outside(ct, rho, base, rest_length, h,
                                             *sweep_segment(ct, rho, h, base_start, start, base, x, v)))
    for got, want in zip(settle_contact(ct, rho, base, rest_length, h, x, v, base_start, start), settled):
        np.testing.assert_array_equal(got, want)
    # The swept stages did act, and (where no inside collider makes every row near) on
    # particles that the broad phase without the moves finds far.
    acted = (sweep_particle(ct, rho, h, start, x, v)[0] != x).any(axis=1)
    assert acted.sum() > N // 50
    assert inside or (acted & ~contact_possible(ct, rho, x, x)).any()


def test_far_segments_are_found_far_and_are_far():
    ct, rho, base, rest_length, x, v = scene(inside=False)
    near = contact_possible(ct, rho, base, x)
    assert 0.2 * N < (~near).sum() < 0.9 * N
    # Far means clear of every collider its chain collides with, measured in float64.
    b, tip = base[~near].astype(np.float64), x[~near].astype(np.float64)
    samples = b[:, None] + np.linspace(0, 1, 33)[None, :, None] * (tip - b)[:, None]
    r = rho[~near].astype(np.float64)[:, None]
    for active, centre, radius in ct.spheres:
        gap = np.linalg.norm(samples - centre[~near][:, None].astype(np.float64), axis=2)
        assert ((gap > radius + r) | ~active[~near][:, None]).all()
    for active, a, c, radius in ct.capsules:
        a64, c64 = a[~near][:, None].astype(np.float64), c[~near][:, None].astype(np.float64)
        t = np.clip(np.sum((samples - a64) * (c64 - a64), axis=2) / np.sum((c64 - a64) ** 2, axis=2), 0, 1)
        gap = np.linalg.norm(samples - (a64 + t[..., None] * (c64 - a64)), axis=2)
        assert ((gap > radius + r) | ~active[~near][:, None]).all()
    for active, n, offset in ct.planes:  # the plane stages look at x alone
        height = np.einsum("ij,ij->i", n[~near].astype(np.float64), tip) - offset[~near]
        assert ((height > r[:, 0]) | ~active[~near]).all()


def test_a_segment_standing_on_a_plane_is_far_from_it():
    """A blade of grass: its base on the ground plane, its tip above by more than ρ; the plane
    stages only look at the tip, so the broad phase leaves it out."""
    planes = np.zeros(1, layouts.PLANE_COLLIDER)
    planes["start"] = [[0.0, 1.0, 0.0, 0.0]]
    empty = {"spheres": np.zeros(0, layouts.SPHERE_COLLIDER), "capsules": np.zeros(0, layouts.CAPSULE_COLLIDER)}
    n = 4
    ct = Contact({**empty, "planes": planes}, np.full(n, 1, np.uint32), np.zeros((n, 3)), np.zeros((n, 3), F),
                 F(1), (F(1), F(0), F(0), F(0)))
    base = np.zeros((n, 3), F)
    tip = np.array([[0, 0.05, 0], [0.01, 0.04, 0], [0, 0.01, 0], [0, -0.01, 0]], F)
    near = contact_possible(ct, np.full(n, 0.01, F), base, tip)
    np.testing.assert_array_equal(near, [False, False, True, True])


def test_particles_resting_on_a_surface_are_near():
    ct, rho, base, rest_length, x, v = scene(inside=False)
    pushed, _ = collide(ct, rho, x, v)
    touching = (pushed != x).any(axis=1)  # pushed out: now on a surface grown by ρ
    assert touching.sum() > 100
    assert contact_possible(ct, rho, pushed, pushed)[touching].all()


def test_an_inside_collider_makes_its_chains_near():
    ct, rho, base, rest_length, x, v = scene(inside=True)
    in_group_1 = (ct.inside_spheres[0][0])
    assert in_group_1.any()
    assert contact_possible(ct, rho, base, x)[in_group_1].all()

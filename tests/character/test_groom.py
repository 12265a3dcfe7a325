"""The hair demos' grooming: roots on the scalp, strands grown at their lengths and kept out
of the body."""
from __future__ import annotations

import numpy as np

from gpu_jiggle.character.groom import fibonacci_sphere, grow_strands, head_frame_obstacles, push_out, scalp_directions
from gpu_jiggle.render.draw3d import scalp_triangles


def upper_half(d):
    return d[:, 1] > 0.2


def test_roots_lie_on_the_scalp_spread_and_reproducible():
    directions = fibonacci_sphere(500)
    np.testing.assert_allclose(np.linalg.norm(directions, axis=1), 1.0, rtol=1e-12)
    assert abs(directions.mean(axis=0)).max() < 0.01  # spread evenly: no side favoured
    roots = scalp_directions(200, upper_half, np.random.default_rng(1), oversample=1)  # needs the sphere doubled
    assert roots.shape == (200, 3) and upper_half(roots).all()
    assert len(np.unique(roots, axis=0)) == 200
    np.testing.assert_array_equal(roots, scalp_directions(200, upper_half, np.random.default_rng(1), oversample=1))
    triangles = scalp_triangles(upper_half)
    assert triangles.shape[1] == 3 and len(triangles) % 3 == 0
    assert upper_half(triangles.reshape(-1, 3, 3).mean(axis=1)).all()


def test_strands_keep_their_lengths_and_stay_out_of_the_body():
    head_radius = 0.1
    d = scalp_directions(50, upper_half, np.random.default_rng(3))
    obstacles = head_frame_obstacles([0.0, 1.7, 0.0], head_radius + 0.005,
                                     [([0.0, 1.3, 0.0], [0.0, 1.6, 0.0], 0.05)], gap=0.005)
    np.testing.assert_allclose(obstacles[1][0], [0.0, -0.4, 0.0])  # moved into the head frame
    assert obstacles[1][2] == 0.055
    counts = np.arange(50) % 5 + 4
    step = np.full(50, 0.03)

    def down(p):
        return np.tile([0.0, -1.0, 0.0], (len(p), 1))

    rest = grow_strands(head_radius * d, d, counts, step, down, obstacles, turn=1.0)
    assert rest.shape == ((counts + 1).sum(), 3)
    starts = np.concatenate([[0], np.cumsum(counts + 1)[:-1]])
    np.testing.assert_allclose(rest[starts], head_radius * d)
    inner = np.setdiff1d(np.arange(len(rest)), starts)
    assert np.linalg.norm(rest[inner], axis=1).min() > head_radius + 0.005 - 1e-3  # combed over the head
    for start, n in zip(starts, counts):
        np.testing.assert_allclose(np.linalg.norm(np.diff(rest[start:start + n + 1], axis=0), axis=1), 0.03,
                                   rtol=1e-9)
    np.testing.assert_array_equal(push_out(rest[inner], obstacles[1:]), rest[inner])  # nothing left inside the neck

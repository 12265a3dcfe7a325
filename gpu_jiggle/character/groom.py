"""Combed hair on a sphere head, as the hair demos (02, 04) build their rest shapes: roots
spread over a scalp, strands grown from them along a comb direction and kept out of the
body. (The scalp's triangles to draw under them: :func:`gpu_jiggle.render.draw3d.scalp_triangles`.)

Everything is in the head frame (origin at the head's centre, the head a sphere), in the
caller's length unit; a hairline is a function telling which unit directions from the
centre lie on the scalp.

```python
rng = np.random.default_rng(2)
d = scalp_directions(300, on_scalp, rng)                      # (300, 3) unit, on the scalp
obstacles = head_frame_obstacles(head_centre, 0.1 + 0.01, body_capsules, gap=0.007)
rest = grow_strands(0.1 * d, d + comb(0.1 * d), counts, step, comb, obstacles, turn=1.2)
```
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["fibonacci_sphere", "scalp_directions", "head_frame_obstacles", "push_out", "grow_strands"]

RELAXATIONS = 4  # push out of the body, then back onto the segment's length, this many times per segment


def fibonacci_sphere(count: int) -> np.ndarray:
    """(count, 3) float64 unit directions spread evenly over the sphere (a Fibonacci
    spiral from +y to -y)."""
    k = np.arange(count) + 0.5
    y = 1.0 - 2.0 * k / count
    ring = np.sqrt(1.0 - y * y)
    turn = math.pi * (3.0 - math.sqrt(5.0)) * k
    return np.stack([ring * np.sin(turn), y, ring * np.cos(turn)], axis=1)


def scalp_directions(strand_count: int, on_scalp, rng, oversample: int = 3) -> np.ndarray:
    """(strand_count, 3) unit directions of strand roots: ``strand_count`` of the points of
    a :func:`fibonacci_sphere` for which ``on_scalp`` ((N, 3) → (N,) bool) holds, picked at
    random by ``rng`` (a ``numpy.random.Generator``), in spiral order. The sphere starts
    with ``oversample × strand_count`` points and doubles until enough lie on the scalp."""
    points = oversample * strand_count
    while True:
        d = fibonacci_sphere(points)
        d = d[on_scalp(d)]
        if len(d) >= strand_count:
            break
        points *= 2
    return d[np.sort(rng.choice(len(d), strand_count, replace=False))]


def head_frame_obstacles(head_centre, head_radius, capsules, gap: float):
    """The body at rest as seen from the head: ``[(a (3,), b (3,), radius)]`` for
    :func:`push_out`, the head first (a sphere at the origin, ``head_radius`` a float or
    (N,) per strand), then each ``(a, b, radius)`` capsule of ``capsules``, given in the body
    frame, moved into the head frame (``- head_centre``, the head's centre in the body
    frame) and widened by ``gap``."""
    centre = np.asarray(head_centre, np.float64)
    return [(np.zeros(3), np.zeros(3), head_radius)] + [
        (np.asarray(a, np.float64) - centre, np.asarray(b, np.float64) - centre, radius + gap)
        for a, b, radius in capsules]


def push_out(points: np.ndarray, obstacles) -> np.ndarray:
    """``points`` (N, 3) moved out of the capsules ``[(a, b, radius)]`` (a sphere is a
    capsule with a = b; a radius may be (N,), one per point), along the shortest way."""
    p = points
    for a, b, r in obstacles:
        ab = b - a
        t = np.clip(((p - a) @ ab) / max(float(ab @ ab), 1e-12), 0.0, 1.0)
        q = a + t[:, None] * ab
        delta = p - q
        d = np.linalg.norm(delta, axis=1)
        inside = d < r
        p = np.where(inside[:, None], q + delta / np.maximum(d, 1e-9)[:, None] * np.reshape(r, (-1, 1)), p)
    return p


def grow_strands(roots: np.ndarray, direction: np.ndarray, counts: np.ndarray, step: np.ndarray, flow, obstacles,
                 turn: float) -> np.ndarray:
    """The rest joints of strands grown segment by segment from ``roots`` (C, 3).

    Each strand c takes ``counts[c]`` segments of length ``step[c]``; the first goes along
    ``direction`` (C, 3, not necessarily unit); after each segment the direction turns
    toward the comb, ``direction + turn · flow(tip)`` (``flow``: (C, 3) points → (C, 3) unit
    directions), so the strands bend gradually, without kinks. Each new joint is pushed out
    of ``obstacles`` (:func:`push_out`) and back onto its segment's length, a few times.

    Returns: (J, 3) float64, J = Σ (counts + 1): per strand its root, then one joint per
    segment tip, strands back to back (the order of a point chain set's joints).
    """
    counts = np.asarray(counts)
    step = np.asarray(step, np.float64)[:, None]
    p = roots
    joints = [p]
    for _ in range(int(counts.max())):
        direction = direction / np.linalg.norm(direction, axis=1, keepdims=True)
        q = p + step * direction
        for _ in range(RELAXATIONS):
            q = push_out(q, obstacles)
            q = p + step * (q - p) / np.linalg.norm(q - p, axis=1, keepdims=True)
        direction = (q - p) / step
        joints.append(q)
        p = q
        direction = direction + turn * flow(p)
    joints = np.stack(joints, axis=1)  # (C, most + 1, 3)
    return np.concatenate([joints[c, :n + 1] for c, n in enumerate(counts)])

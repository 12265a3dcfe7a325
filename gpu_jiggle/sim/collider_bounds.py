"""Where each collider can be over one frame: the bounds the GPU's far pass tests a whole
chain's frame against, once per chain and frame (docs/SPEC.md section 9, "Near and far
chains"; ``shaders/sim/point_far.glsl``).

The point kernel places a collider at the path fraction where each substep ends, grown by its
move from where the substep began (the swept contact), and at the frame's end for the
frame-time output (``substep_fractions``, ``place_colliders`` in the shaders). Every such
placement of one collider, at the full rate and (where some chain runs at it this frame) the
half rate, lies inside its bound:

- a sphere's ball (``frame_bound``: centre, radius) holds each placed sphere with its move;
- a capsule's capsule (``frame_a``, ``frame_b``: ends, radius in ``frame_a``'s w) holds each
  placed capsule with its ends' move: a point at fraction t of a placed capsule's axis lies
  within max(|a - A|, |b - B|) of the point at t of the bound's axis;
- a plane's ``frame_offset`` is its largest offset (its normal stays: a frame where a normal
  turns runs one pass, :func:`~gpu_jiggle.sim.backends.near_far.splits_near_far`).

``frame_move`` is the longest move of a centre or end over one substep and ``frame_radius``
the smallest radius: whether a chain may need contact sub-steps (SPEC 9) is told from them.
Computed in float64 from the same float32 records and path fractions as the kernel's.
"""
from __future__ import annotations

import numpy as np

from .inputs import path_weights

#: The frame-time output's placement: at the frame's end, not moving.
OUTPUT_FRACTIONS = (1.0, 1.0)


def collider_fractions(header, alphas: np.ndarray, half_rate: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The colliders' path fractions where each substep of the full rate, and of the half rate
    where ``half_rate`` (some chain runs at it), begins and ends (``substep_fractions`` in
    ``shaders/sim/point_paths.glsl``, in float32 as there), and the frame-time output's. A
    half-rate substep's start lies a frame back, on the path extended backwards (docs/SPEC.md
    section 9, "Swept contact"): far from where the collider was when it starts from rest, so
    a frame that runs no chain at half rate leaves those placements out of its bounds.

    Args:
        header: a POINT_FRAME_PARAMS record (its schedules and alpha_stride).
        alphas: (n,) float32, the frame buffer's alphas (:func:`~gpu_jiggle.sim.packing.frame_buffer`).
        half_rate: whether some chain runs at half rate in the frame.

    Returns: ``(begin, end)``, (m,) float64 each.
    """
    begins, ends = [np.float32(OUTPUT_FRACTIONS[0])], [np.float32(OUTPUT_FRACTIONS[1])]
    stride = int(header["alpha_stride"])
    one = np.float32(1.0)
    for level, name in enumerate(("full_rate", "half_rate")[:2 if half_rate else 1]):
        count = int(header[name]["substep_count"])
        scale = np.float32(header[name]["collider_time_scale"])
        end = alphas[level * stride: level * stride + count].astype(np.float32)
        start = np.concatenate([np.zeros(1, np.float32), end])[:count]
        ends.extend(np.clip(one - (one - end) * scale, np.float32(0.0), one))
        begins.extend(np.minimum(one - (one - start) * scale, one))
    return np.array(begins, np.float64), np.array(ends, np.float64)


def _on_path(start, delta, rate, weights):
    """(K, m, 3) float64: points starting at ``start`` (K, 3), moving by ``delta`` with start
    velocity × span ``rate`` (K, 3), at path ``weights`` (p, q) of (m,) each."""
    p, q = weights
    return start[:, None, :] + p[None, :, None] * delta[:, None, :] + q[None, :, None] * rate[:, None, :]


def _ball_about(points):
    """(K, 3): the middle of each row's bounding box of (K, m, 3) points."""
    return 0.5 * (points.min(axis=1) + points.max(axis=1))


def _radius_on_path(start, delta, fractions):
    """(K, m) float64: radii from ``start`` (K, 1) growing by ``delta`` (K, 1) linearly, at path
    ``fractions`` (m,); below 0 (a radius extrapolated backwards) counted as 0."""
    return np.maximum(start + fractions[None, :] * delta.astype(np.float64), 0.0)


def _distances(points, centre):
    return np.linalg.norm(points - centre[:, None, :], axis=2)


def fill_frame_bounds(spheres: np.ndarray, capsules: np.ndarray, planes: np.ndarray, begin: np.ndarray,
                      end: np.ndarray, path: int) -> None:
    """Fill the frame bound fields of the collider records (SPHERE_COLLIDER, CAPSULE_COLLIDER,
    PLANE_COLLIDER, as ``ColliderPath.records`` makes them) in place, for placements at path
    fractions ``begin`` → ``end`` ((m,) each, :func:`collider_fractions`) on paths of kind
    ``path`` (``layouts.PATH_*``). Radii below 0 (a radius extrapolated backwards) count as 0."""
    if not len(end):
        return
    w_end = [np.broadcast_to(np.asarray(w, np.float64), end.shape) for w in path_weights(end, path)[:2]]
    w_begin = [np.broadcast_to(np.asarray(w, np.float64), begin.shape) for w in path_weights(begin, path)[:2]]
    if len(spheres):
        start = spheres["start"][:, :3]
        delta, rate = spheres["delta"][:, :3].astype(np.float64), spheres["start_rate"][:, :3].astype(np.float64)
        at_end, at_begin = _on_path(start, delta, rate, w_end), _on_path(start, delta, rate, w_begin)
        radius = _radius_on_path(spheres["start"][:, 3:4], spheres["delta"][:, 3:4], end)
        move = np.linalg.norm(at_end - at_begin, axis=2)
        centre = _ball_about(at_end)
        spheres["frame_bound"][:, :3] = centre
        spheres["frame_bound"][:, 3] = (_distances(at_end, centre) + radius + move).max(axis=1)
        spheres["frame_move"] = move.max(axis=1)
        spheres["frame_radius"] = radius.min(axis=1)
    if len(capsules):
        ends_end, ends_begin = [], []
        for side in ("a", "b"):
            start = capsules[f"start_{side}"][:, :3]
            delta = capsules[f"delta_{side}"][:, :3].astype(np.float64)
            rate = capsules[f"rate_{side}"][:, :3].astype(np.float64)
            ends_end.append(_on_path(start, delta, rate, w_end))
            ends_begin.append(_on_path(start, delta, rate, w_begin))
        radius = _radius_on_path(capsules["start_a"][:, 3:4], capsules["delta_a"][:, 3:4], end)
        move = np.maximum(*(np.linalg.norm(e - b, axis=2) for e, b in zip(ends_end, ends_begin)))
        axis_a, axis_b = _ball_about(ends_end[0]), _ball_about(ends_end[1])
        off_axis = np.maximum(_distances(ends_end[0], axis_a), _distances(ends_end[1], axis_b))
        capsules["frame_a"][:, :3], capsules["frame_b"][:, :3] = axis_a, axis_b
        capsules["frame_a"][:, 3] = (off_axis + radius + move).max(axis=1)
        capsules["frame_b"][:, 3] = 0.0
        capsules["frame_move"] = move.max(axis=1)
        capsules["frame_radius"] = radius.min(axis=1)
    if len(planes):
        fractions = np.concatenate([begin, end])
        offsets = planes["start"][:, 3:4] + fractions[None, :] * planes["delta"][:, 3:4].astype(np.float64)
        planes["frame_offset"] = offsets.max(axis=1)


__all__ = ["collider_fractions", "fill_frame_bounds"]

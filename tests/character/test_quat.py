"""The character pipeline's rotation between two directions (gpu_jiggle.character.pose.quat.between),
used by the strand bake and the IK: the smallest rotation, exact up to antiparallel."""
from __future__ import annotations

import numpy as np

from gpu_jiggle.character.pose import quat


def test_between_takes_u_onto_v_up_to_antiparallel():
    """Directions 1e-12 to 2° from antiparallel about assorted axes: the rotation takes u onto
    v within 1e-12 rad and turns by π less that angle (the smallest rotation); exactly
    antiparallel, a half turn taking u onto -u. Before, within 0.81° it was a fixed half turn,
    0.8° off v."""
    rng = np.random.default_rng(5)
    u = rng.normal(size=(200, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    across = np.cross(u, rng.normal(size=(200, 3)))
    across /= np.linalg.norm(across, axis=1, keepdims=True)
    eps = np.radians(np.geomspace(1e-10, 2.0, 200))
    v = -np.cos(eps)[:, None] * u + np.sin(eps)[:, None] * across
    q = quat.between(u, v)
    turned = quat.rotate(q, u)
    miss = np.arctan2(np.linalg.norm(np.cross(turned, v), axis=1), np.sum(turned * v, axis=1))
    assert miss.max() < 1e-12
    angle = 2 * np.arctan2(np.linalg.norm(q[:, :3], axis=1), np.abs(q[:, 3]))
    assert np.abs(angle - (np.pi - eps)).max() < 1e-12
    opposite = quat.rotate(quat.between(u, -u), u)
    assert np.abs(opposite + u).max() < 1e-12

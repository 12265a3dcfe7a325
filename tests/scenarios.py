"""Random rigs and motions shared by the tests (not a test module)."""
from __future__ import annotations

import numpy as np

from gpu_jiggle import AngleChainSet


def random_angle_chain_set(rng, chains=300, max_segments=12, gravity=(0.0, -9.8)):
    """Ragged chains of 1..max_segments with f in [0.5, 6] Hz, ζ in [0.1, 1.2], inertia in
    [0, 2], a limit on about a third of the segments, and gravity."""
    counts = rng.integers(1, max_segments + 1, chains)
    s = int(counts.sum())
    limits = np.where(rng.random(s) < 0.3, rng.uniform(0.3, 2.0, s), np.inf)
    return AngleChainSet(counts, rng.uniform(0.2, 2.0, s), rng.uniform(0.5, 6.0, s), rng.uniform(0.1, 1.2, s),
                         inertia=rng.uniform(0.0, 2.0, s), angle_limit=limits, gravity=gravity)


def random_frame_times(rng, frames=600):
    """Frame times like a real game loop's: mostly 30-144 fps, with zeros, tiny frames and
    multi-second spikes."""
    kinds = rng.choice(6, frames, p=[0.05, 0.05, 0.45, 0.2, 0.2, 0.05])
    values = np.array([0.0, 1e-5, 1 / 60, 1 / 30, 1 / 144, 0.0])
    dt = values[kinds]
    spikes = kinds == 5
    dt[spikes] = rng.uniform(0.3, 3.0, spikes.sum())
    return dt


class RandomRootMotion:
    """A smooth random walk of every chain's root position and heading, plus local targets."""

    def __init__(self, rng, chain_set):
        c, s = chain_set.chain_count, chain_set.segment_count
        self.rng = rng
        self.position = rng.normal(scale=2.0, size=(c, 2))
        self.heading = rng.uniform(-np.pi, np.pi, c)
        self.velocity = np.zeros((c, 2))
        self.turn_rate = np.zeros(c)
        self.local = rng.uniform(-0.6, 0.6, s)

    def step(self, dt):
        r = self.rng
        self.velocity += r.normal(scale=3.0, size=self.velocity.shape) * max(dt, 1e-3)
        self.turn_rate += r.normal(scale=8.0, size=self.turn_rate.shape) * max(dt, 1e-3)
        self.velocity *= 0.98
        self.turn_rate *= 0.98
        self.position = self.position + self.velocity * dt
        self.heading = self.heading + self.turn_rate * dt
        self.local = self.local + r.normal(scale=0.02, size=self.local.shape)
        return self.position.copy(), self.heading.copy(), self.local.copy()


def rotation_matrix(yaw, pitch):
    cy, sy, cp, sp = np.cos(yaw), np.sin(yaw), np.cos(pitch), np.sin(pitch)
    ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    rx = np.array([[1, 0, 0], [0, cp, -sp], [0, sp, cp]])
    return ry @ rx


def random_point_chain_set(rng, chains=120, max_segments=24, damping=(0.3, 1.2), gravity=(0.0, -9.8, 0.0)):
    """Ragged hanging strands of 1..max_segments with f in [0.5, 6] Hz, the given ζ range,
    particle radii, some max distances, random world influence and masks over 4 groups."""
    from gpu_jiggle import PointChainSet
    counts = rng.integers(1, max_segments + 1, chains)
    s = int(counts.sum())
    return PointChainSet(counts, rng.uniform(0.5, 6.0, s), rng.uniform(*damping, s),
                         particle_radius=rng.uniform(0.0, 0.02, s),
                         max_distance=np.where(rng.random(s) < 0.3, rng.uniform(0.05, 0.5, s), np.inf),
                         world_influence=rng.uniform(0.0, 1.0, chains),
                         collider_mask=rng.integers(0, 16, chains), gravity=gravity)


class RigidBodyStrands:
    """Strands attached to one rigidly moving body: pivots on a 0.4-unit ball, the animated
    joints hanging from them (with a little sideways comb), all carried by the body's
    translation and rotation."""

    def __init__(self, rng, chain_set, segment_length=0.05):
        c = chain_set.chain_count
        d = rng.normal(size=(c, 3))
        d[:, 1] = np.abs(d[:, 1])
        self.local = np.zeros((chain_set.joint_count, 3))
        for i, sl in enumerate(chain_set.joint_slices()):
            n = sl.stop - sl.start
            pivot = 0.4 * d[i] / np.linalg.norm(d[i])
            comb = rng.normal(scale=0.3, size=3) * [1, 0, 1]
            steps = np.arange(n)[:, None] * segment_length * (np.array([0, -1.0, 0]) + 0.3 * comb)
            self.local[sl] = pivot + steps
        self.chain_set = chain_set

    def pose(self, position, yaw, pitch):
        return self.local @ rotation_matrix(yaw, pitch).T + position


def body_path(t, scale=1.0):
    """A body that walks, sways and turns: position (3,), yaw, pitch."""
    position = scale * np.array([0.8 * np.sin(0.7 * t), 0.15 * np.sin(2.3 * t), 0.5 * t])
    return position, 1.2 * np.sin(0.9 * t) + 0.8 * np.sin(2.7 * t), 0.3 * np.sin(1.7 * t)


def moving_colliders(t, position):
    """Two spheres and a capsule near the body in groups 0..2, and a floor plane in group 3."""
    sweep = np.array([0.5 * np.sin(3 * t), 0.0, 0.5 * np.cos(3 * t)])
    spheres = np.array([[*(position + [0.0, -0.3, 0.0]), 0.25], [*(position + sweep - [0, 0.5, 0]), 0.15]])
    capsules = np.array([[*(position + [-0.4, -0.6, 0.2]), *(position + [0.4, -0.7, -0.2]), 0.08]])
    planes = np.array([[0.0, 1.0, 0.0, position[1] - 1.2]])
    return dict(spheres=spheres, sphere_groups=[0, 1], capsules=capsules, capsule_groups=[2], planes=planes,
                plane_groups=[3])

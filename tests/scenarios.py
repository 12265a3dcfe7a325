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

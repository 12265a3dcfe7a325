"""Many copies of one character and its rig in one chain set, one solver and one dispatch a
frame: a crowd of avatars, each placed apart and playing the clip at its own phase.

```python
from gpu_jiggle.character.crowd import Crowd, grid_placements

crowd = Crowd(godette, rig, clip, placements=grid_placements(16, spacing=0.8), phases=phases)
for frame in crowd.play(fps=30, seconds=4):
    frame.world_matrices[k]       # (N, 4, 4) float64: copy k's nodes after springs, world
```

Each copy's chains are the rig's chains; their joints' targets come from the copy's pose (the
clip at ``time + phases[k]``, moved by ``placements[k]``), all of them go up in one
``set_pose`` and run in one ``advance``, and each copy's joints then take their segments'
rotations (:func:`~gpu_jiggle.character.pose.chain_pose.posed_with_springs`). The rig's colliders
are left out: the solver tests every chain against every collider it is given, so N copies'
colliders would cost N² (a collider affects only its own copy's chains through their masks,
but each is still visited).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .pose.chain_pose import posed_with_springs
from ..sim.chains import PointChainSet
from ..sim.solver import Solver


@dataclass
class CrowdFrame:
    """One frame of a crowd: ``time`` (s); ``world_matrices``: per copy (N, 4, 4) float64, its
    nodes after springs, world; ``chain_positions``: per copy, per rig chain (n + 1, 3) world."""

    time: float
    world_matrices: list
    chain_positions: list


def grid_placements(count: int, spacing: float) -> np.ndarray:
    """(count, 3) float64: floor positions on a square grid, ``spacing`` apart, centred on the
    origin, rows along x, filled front (+z) to back.

    Raises:
        ValueError: count not an integer ≥ 1, or spacing not a finite length > 0."""
    if not (isinstance(count, (int, np.integer)) and count >= 1):
        raise ValueError(f"count = {count!r}: expected an integer >= 1")
    if not (math.isfinite(spacing) and spacing > 0):
        raise ValueError(f"spacing = {spacing!r}: expected a finite length > 0")
    side = math.ceil(math.sqrt(count))
    k = np.arange(count)
    x, z = k % side, k // side
    return np.stack([(x - (side - 1) / 2) * spacing, np.zeros(count), -(z - (side - 1) / 2) * spacing], axis=1)


class Crowd:
    """N copies of ``character`` with ``rig`` playing ``clip`` (a clip or a built-in motion).

    Args:
        placements: (N, 3) world offsets of the copies (the rig's chains follow them).
        phases: (N,) seconds added to each copy's clip time (default all 0).
        backend, context: as for :class:`~gpu_jiggle.Solver`.

    Raises:
        ValueError: placements not (N, 3) finite with N ≥ 1, or phases not (N,) finite; a rig
        without chains; no clip (an unknown clip name lists the file's).
    """

    def __init__(self, character, rig, clip, placements, phases=None, backend: str = "auto", context=None):
        placements = np.asarray(placements, np.float64)
        if placements.ndim != 2 or placements.shape[1] != 3 or not len(placements):
            raise ValueError(f"placements: expected shape (N, 3) with N >= 1, got {placements.shape}")
        phases = np.zeros(len(placements)) if phases is None else np.asarray(phases, np.float64)
        if phases.shape != (len(placements),):
            raise ValueError(f"phases: expected shape ({len(placements)},), got {phases.shape}")
        for name, a in (("placements", placements), ("phases", phases)):
            if not np.isfinite(a).all():
                i = int(np.flatnonzero(~np.isfinite(a.reshape(len(a), -1)).all(axis=1))[0])
                raise ValueError(f"{name}[{i}] = {a[i].tolist()!r}: expected finite values")
        if rig is None or not rig.chains:
            raise ValueError("rig: a crowd needs a rig with chains")
        self.character, self.rig, self.skeleton = character, rig, character.skeleton
        self.placements, self.phases = placements, phases
        self.count = len(placements)
        self.clip = character.clip(clip) if isinstance(clip, str) else clip
        if self.clip is None:
            raise ValueError("clip: a crowd needs a clip or a built-in motion to play")
        self.rest = character.skeleton.rest_pose()
        self.chain_set = PointChainSet.concatenate([rig.chain_set] * self.count)
        self.solver = Solver(self.chain_set, backend=backend, substep=rig.substep, max_substeps=rig.max_substeps,
                             integrator=rig.integrator, context=context, origin=placements.mean(axis=0))
        if rig.wind is not None:  # one wind over the whole crowd, in the world
            self.solver.set_wind(**rig.wind.solver_arguments())

    @property
    def backend(self) -> str:
        return self.solver.backend

    def step(self, time: float, dt: float) -> CrowdFrame:
        """One frame at clip time ``time`` (s), the springs advanced by ``dt`` (s). The copies'
        poses are stacked (copy, node, ...) and every stage after the keyframes runs on all of
        them at once."""
        sk, rig, count = self.skeleton, self.rig, self.count
        pose = self.clip.sample_many(self.rest, time + self.phases)
        world = sk.world_matrices(pose)
        world[..., :3, 3] += self.placements[:, None, :]
        rotations = sk.world_rotations(pose)
        targets = np.concatenate(rig.chain_targets(world), axis=-2).reshape(-1, 3)        # copy-major
        frames = np.concatenate(rig.chain_rotations(rotations), axis=-2).reshape(-1, 4)
        self.solver.set_pose(joint_positions=targets, joint_rotations=frames)
        self.solver.advance(dt)
        positions = self.solver.positions().reshape(count, -1, 3)
        bends = self.solver.segment_rotations().reshape(count, -1, 4)
        per = rig.chain_set
        final = posed_with_springs(rig, sk, pose, rotations, [bends[:, s] for s in per.chain_slices()])
        worlds = sk.world_matrices(final)
        worlds[..., :3, 3] += self.placements[:, None, :]
        return CrowdFrame(float(time), list(worlds),
                          [[positions[k, s] for s in per.joint_slices()] for k in range(count)])

    def play(self, fps: float, seconds: float):
        """Frames at ``k/fps`` for k = 0 .. round(seconds·fps), each with dt = 1/fps."""
        for k in range(int(round(seconds * fps)) + 1):
            yield self.step(k / fps, 1.0 / fps)

    def release(self) -> None:
        self.solver.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

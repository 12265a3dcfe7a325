"""Point frames with colliders run as near and far chains on the GPU (docs/SPEC.md section 9,
"Near and far chains"): the far pass runs every chain without the contact stages and marks the
ones a stage could act on, the near pass runs those again with every stage from the frame's
start. A far chain's contact stages would have been no-ops, so the state and outputs are the
bits of one pass of every stage, frame after frame."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import PointChainSet, Solver
from gpu_jiggle.sim.backends.near_far import splits_near_far

ANCHOR = np.array([1234.5, 6.7, -890.1])  # far from the origin: the colliders' double path


def scene(split: bool, integrator: str, limits: bool, max_substeps: int = 8):
    rng = np.random.default_rng(7)
    chains = 24
    chain_set = PointChainSet(rng.integers(2, 7, chains), rng.uniform(1.0, 5.0, chains), 0.4, rest_lengths=0.05,
                              particle_radius=0.01, gravity=(0, -9.8, 0), air_drag=0.3,
                              angle_limit=0.6 if limits else np.inf, max_distance=0.2 if limits else np.inf)
    solver = Solver(chain_set, backend="gpu", integrator=integrator, max_substeps=max_substeps)
    solver._backend.split_near_far = split
    solver.set_wind((0.5, 0, 0), 1.0, (2.0, 0, 1.0), 0.7)
    counts = chain_set.segment_counts
    pivots = ANCHOR + np.stack([np.arange(chains) % 6 * 0.06, np.zeros(chains), np.arange(chains) // 6 * 0.06], 1)
    pivots[-4:, 0] += 2.0  # the last four chains 2 m to the side, far from every collider
    return solver, counts, pivots


def run(split: bool, integrator: str = "semi-implicit", limits: bool = False, frames: int = 75,
        frame_seconds=lambda frame: 1 / 60 if frame % 5 else 1 / 30, max_substeps: int = 8):
    """Its outputs and saved state after each frame, how many chains each frame ran near, the
    solver, and (split) whether each frame swapped the state with its spare."""
    solver, counts, pivots = scene(split, integrator, limits, max_substeps)
    lod = np.where(np.arange(len(counts)) % 4 == 0, "half", "full")
    solver.measure_dispatch()
    frames_out, near, swapped = [], [], []
    for frame in range(frames):
        t = frame / 60
        sway = np.array([0.1 * np.sin(3 * t), 0.0, 0.05 * np.cos(2 * t)])
        solver.set_pose(np.concatenate([p + sway - np.outer(np.arange(n + 1), [0, 0.05, 0])
                                        for p, n in zip(pivots, counts)]))
        if frame == 20:
            solver.set_lod(lod)
        if frame == 45:
            solver.teleport([1, 5, 9], moving=True)
        if frame == 60:
            solver.teleport([2, 3])
        # a sphere swinging through the chains, capsules at rest and one moving, a floor
        solver.set_colliders(spheres=[[*(ANCHOR + [0.15 + 0.3 * np.sin(4 * t), -0.12, 0.15]), 0.06]],
                             capsules=[[*(ANCHOR + [-0.1, -0.25, 0.0]), *(ANCHOR + [0.4, -0.2, 0.3]), 0.03],
                                       [*(ANCHOR + [-0.1, -0.2 + 0.1 * np.sin(9 * t), 0.3]),
                                        *(ANCHOR + [0.4, -0.2, 0.0]), 0.02]],
                             planes=[[0, 1, 0, ANCHOR[1] - 0.28]])
        solver.advance(frame_seconds(frame))
        frames_out.append(np.concatenate([solver.positions().ravel(), solver.velocities().ravel(),
                                          solver.segment_rotations().ravel(), solver.segment_swings().ravel()]))
        near.append(solver.dispatch_timing.near_chains)
        if split:
            swapped.append(solver._backend.near_far.swapped)
    return np.array(frames_out), solver.save_state(), near, solver, swapped


@pytest.mark.parametrize("integrator, limits", [("semi-implicit", False), ("exact", True)])
def test_near_and_far_chains_give_the_bits_of_one_pass(gl, integrator, limits):
    split_frames, split_state, near, solver, swapped = run(True, integrator, limits)
    # frames of 2 substeps swapped the state with its spare; those of 4, and the teleports
    # keeping shape, copied it first (near_far.py)
    assert set(swapped) == {True, False}
    one_frames, one_state, one_near, _, _ = run(False, integrator, limits)
    assert set(one_near) == {None}  # one pass: nothing listed
    assert 0 < min(near) and max(near) < len(solver.chain_set.segment_counts)  # both passes had chains
    assert split_frames.view(np.uint32).tolist() == one_frames.view(np.uint32).tolist()
    assert split_state == one_state


def test_long_frames_split_into_batches_give_the_bits_of_one_pass(gl):
    """Frames of 12 substeps: the far pass walks each segment through a batch of 8 and one of 4
    (its boxes per substep, point_far.glsl), a frame of 3 through one of 4 with one unused."""
    def seconds(frame):
        return 0.1 if frame % 3 else 0.025
    split_frames, split_state, near, solver, _ = run(True, frames=24, frame_seconds=seconds, max_substeps=12)
    one_frames, one_state, _, _, _ = run(False, frames=24, frame_seconds=seconds, max_substeps=12)
    assert 0 < max(near) < len(solver.chain_set.segment_counts)  # both passes had chains
    assert split_frames.view(np.uint32).tolist() == one_frames.view(np.uint32).tolist()
    assert split_state == one_state


def test_frames_that_cannot_split_run_one_pass(gl):
    """Colliders that keep particles inside act far from themselves: every chain is near."""
    solver, counts, pivots = scene(True, "semi-implicit", False)
    solver.measure_dispatch()
    solver.set_pose(np.concatenate([p - np.outer(np.arange(n + 1), [0, 0.05, 0]) for p, n in zip(pivots, counts)]))
    solver.set_colliders(spheres=[[*ANCHOR, 1.0]], sphere_inside=[True])
    solver.advance(1 / 60)
    assert solver.dispatch_timing.near_chains is None
    solver.set_colliders(spheres=[[*ANCHOR, 0.01]])
    solver.advance(1 / 60)
    assert solver.dispatch_timing.near_chains is not None
    assert {"near_chain_state", "near_segment_state", "near_chains"} <= set(solver.gpu_buffers())


def test_which_switches_split():
    base = {"SPHERE_SLOTS": 0, "CAPSULE_SLOTS": 0, "PLANE_SLOTS": 0, "INSIDE_COLLIDERS": 0}
    assert not splits_near_far(base)  # no colliders: nothing to leave out
    assert splits_near_far({**base, "PLANE_SLOTS": 1})
    assert splits_near_far({**base, "SPHERE_SLOTS": 8, "CAPSULE_SLOTS": 2})
    assert not splits_near_far({**base, "SPHERE_SLOTS": -1})  # more than 8: every particle counts as near
    assert not splits_near_far({**base, "SPHERE_SLOTS": 1, "INSIDE_COLLIDERS": 1})
    assert not splits_near_far({**base, "PLANE_SLOTS": 2, "TURNING_PLANES": 1})  # bounded along one normal


def random_scene(seed: int, split: bool, frames: int = 24):
    """Chains hanging among spheres and capsules that move up to 4 m/s (fast enough for
    contact sub-steps), a plane rising, frames of 1 to 6 substeps, half-rate chains,
    teleports, each target path: the outputs and state after each frame, and how many chains ran near."""
    rng = np.random.default_rng(seed)
    chains = 16
    counts = rng.integers(2, 7, chains)
    chain_set = PointChainSet(counts, rng.uniform(1.0, 6.0, chains), rng.uniform(0.2, 0.9), rest_lengths=0.05,
                              particle_radius=rng.uniform(0.003, 0.02), gravity=(0, -9.8, 0), air_drag=0.2,
                              collider_mask=rng.integers(1, 4, chains))
    solver = Solver(chain_set, backend="gpu", integrator=("semi-implicit", "exact")[seed % 2], max_substeps=6,
                    target_path=("monotone", "hermite", "linear", "monotone")[seed % 4])
    solver._backend.split_near_far = split
    solver.measure_dispatch()
    pivots = ANCHOR + rng.uniform(-0.3, 0.3, (chains, 3))
    spheres = rng.integers(1, 4)
    capsules = rng.integers(0, 3)
    speed = rng.uniform(0.5, 4.0, (spheres + capsules, 3)) * rng.choice([-1, 1], (spheres + capsules, 3))
    out, near = [], []
    for frame in range(frames):
        t = frame / 40
        sway = 0.1 * np.array([np.sin(5 * t + seed), 0.0, np.cos(3 * t)])
        solver.set_pose(np.concatenate([p + sway - np.outer(np.arange(n + 1), [0, 0.05, 0])
                                        for p, n in zip(pivots, counts)]))
        if frame == 6:
            solver.set_lod(np.where(np.arange(chains) % 3 == 0, "half", "full"))
        if frame == 15:
            solver.teleport([0, 4], moving=bool(seed % 2))
        centres = ANCHOR + 0.2 * np.sin(speed * t * 5) - [0, 0.15, 0]
        solver.set_colliders(spheres=[[*centres[k], 0.04 + 0.02 * k] for k in range(spheres)],
                             sphere_groups=[k % 2 for k in range(spheres)],
                             capsules=[[*centres[spheres + k], *(centres[spheres + k] + [0.3, 0.05, -0.2]), 0.02]
                                       for k in range(capsules)],
                             planes=[[0, 1, 0, ANCHOR[1] - 0.35 + 0.05 * np.sin(4 * t)]], plane_groups=[1])
        solver.advance(rng.uniform(1 / 120, 1 / 20))
        out.append(np.concatenate([solver.positions().ravel(), solver.velocities().ravel(),
                                   solver.segment_rotations().ravel()]))
        near.append(solver.dispatch_timing.near_chains)
    return np.array(out), solver.save_state(), near


@pytest.mark.parametrize("seed", range(4))
def test_random_scenes_give_the_bits_of_one_pass(gl, seed):
    """Each chain's frame is tested once against each collider's bound over the frame
    (collider_bounds.py, point_far.glsl): whatever the colliders' paths, speeds and groups, a
    chain left far is one no contact stage acts on, so the bits are one pass's."""
    split_frames, split_state, near = random_scene(seed, True)
    one_frames, one_state, _ = random_scene(seed, False)
    assert max(near) > 0 and min(near) < 16  # both passes had chains (16 in all)
    assert split_frames.view(np.uint32).tolist() == one_frames.view(np.uint32).tolist()
    assert split_state == one_state

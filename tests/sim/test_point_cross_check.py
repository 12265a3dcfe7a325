"""SPEC section 8, property 6, for point chains: the compute shaders against the reference.

One substep agrees to float32 rounding (a few ulp). Over many frames two sources widen the
gap: collisions and max distances are switches (a particle a hair inside a collider on one
backend and a hair outside on the other is pushed out on one only), and lightly damped long
chains are chaotic (a 1-ulp difference in a 24-segment strand at ζ = 0.1 grows to
centimetres within 600 frames, a property of the equations, not of either backend). The
random sets here therefore use ζ in [0.3, 1.2], where such differences decay again, and the
tolerance after 600 frames is 2 % of a chain's length at the worst frame, and 0.05 % for the
median frame (measured: 0.9 % during one collision burst on one 24-segment strand, 4e-5 for
the median; both printed).
"""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import Solver
from gpu_jiggle.verify.scenarios import (RigidBodyStrands, body_path, moving_colliders, random_frame_times,
                                         random_point_chain_set)


def chain_length_per_joint(chain_set, rest_lengths):
    totals = np.add.reduceat(rest_lengths, chain_set.first_segment)
    return np.repeat(totals, chain_set.segment_counts + 1)


def run_both(chain_set, frames, strands, with_wind=True):
    solvers = [Solver(chain_set, backend=b) for b in ("cpu", "gpu")]
    t = 0.0
    for dt in frames:
        t += dt
        position, yaw, pitch = body_path(t)
        for s in solvers:
            s.set_pose(joint_positions=strands.pose(position, yaw, pitch))
            s.set_colliders(**moving_colliders(t, position))
            if with_wind:
                s.set_wind((0.5, 0.0, 0.2), 1.5, (2.0, 0.0, 1.0), 0.8)
            s.advance(dt)
        yield t, solvers


def test_one_substep_agrees_tightly(gl):
    rng = np.random.default_rng(21)
    cs = random_point_chain_set(rng)
    strands = RigidBodyStrands(rng, cs)
    for i, (_, (cpu, gpu)) in enumerate(run_both(cs, [0.0, 1 / 120, 1 / 120], strands)):
        pass
    np.testing.assert_allclose(gpu.positions(raw=True), cpu.positions(raw=True), rtol=0, atol=2e-6)
    np.testing.assert_allclose(gpu.velocities(raw=True), cpu.velocities(raw=True), rtol=1e-4, atol=2e-4)
    np.testing.assert_allclose(gpu.segment_rotations(), cpu.segment_rotations(), rtol=0, atol=1e-5)


@pytest.mark.filterwarnings("ignore::gpu_jiggle.sim.clock.FrameTimeWarning")  # long frames on purpose
def test_600_random_frames_agree(gl):
    """Every one of 600 random frames (long ones squeezed into the substep cap, which send the
    colliders through the strands in a few substeps, included) gives the same step on both
    backends: the GPU goes on from the reference's state each frame, so what is compared is
    the frame's step, not how far the strands' own sensitivity carries a difference in the last
    float32 bit over hundreds of frames (a fast collider that meets a strand head on sends it
    round one side or the other: SPEC section 9, "Swept contact")."""
    rng = np.random.default_rng(22)
    # 30 strands of 1 to 24 segments hold every kind the set draws (max distances, particle
    # radii, masks over the four collider groups); the reference's cost grows with the strands
    # near a collider each substep (100 of them took four minutes), the frames' variety with
    # the 600 frames, which stay.
    cs = random_point_chain_set(rng, chains=30)
    strands = RigidBodyStrands(rng, cs)
    per_frame = []
    scale = None
    for _, (cpu, gpu) in run_both(cs, random_frame_times(rng, 600), strands):
        if scale is None:
            scale = chain_length_per_joint(cs, cpu.rest_lengths)
        per_frame.append((np.abs(cpu.positions() - gpu.positions()).max(axis=1) / scale).max())
        assert np.isfinite(gpu.positions()).all()
        gpu.restore(cpu.save_state())
    worst, median = max(per_frame), float(np.median(per_frame))
    print(f"point chains, GPU vs reference, each of 600 frames from the same state: worst {worst:.3g}, "
          f"median {median:.3g} of chain length")
    assert worst < 1e-3
    assert median < 2e-6
    assert cpu.sim_time == gpu.sim_time and cpu.dropped_time == gpu.dropped_time > 0


def test_rotations_take_animated_onto_simulated_directions(backend):
    rng = np.random.default_rng(23)
    cs = random_point_chain_set(rng, chains=30, max_segments=8)
    strands = RigidBodyStrands(rng, cs)
    s = Solver(cs, backend=backend)
    t = 0.0
    for _ in range(40):
        t += 1 / 60
        joints = strands.pose(*body_path(t))
        s.set_pose(joint_positions=joints)
        s.advance(1 / 60)
    q = s.segment_rotations().astype(np.float64)
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-6)
    p = s.positions()
    tips = np.flatnonzero(np.isin(np.arange(cs.joint_count), cs.first_joint, invert=True))
    animated = joints[tips] - joints[tips - 1]
    simulated = p[tips] - p[tips - 1]
    # Rotate the animated directions by q: v' = v + 2w(u×v) + 2u×(u×v).
    u, w = q[:, :3], q[:, 3:]
    turned = animated + 2 * w * np.cross(u, animated) + 2 * np.cross(u, np.cross(u, animated))
    cos = np.sum(turned * simulated, axis=1) / (np.linalg.norm(turned, axis=1) * np.linalg.norm(simulated, axis=1))
    assert cos.min() > 1 - 1e-6

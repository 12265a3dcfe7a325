"""SPEC section 8, property 6: the compute shaders against the numpy reference.

Both backends run the same float32 operations in the same order, so they differ only where
the GPU rounds differently: sin/cos (llvmpipe's are within a few ulp, not correctly
rounded) and fused multiply-adds the compiler may form. One substep therefore agrees to
about 1e-6 rad. Over many substeps the damped springs keep such differences from growing,
but the angle limit is a switch (it zeroes ω when the limit is crossed outward), so a
difference of an ulp can decide a clamp on one backend and not the other; that is why the
tolerance after 600 frames is looser (1e-3 rad, and 1e-3 of a chain's length for
positions) while still far below anything visible.
"""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, Solver
from gpu_jiggle.verify.scenarios import RandomRootMotion, random_angle_chain_set, random_frame_times


def angle_difference(a, b):
    return np.abs((np.asarray(a, np.float64) - b + np.pi) % (2 * np.pi) - np.pi)


def chain_lengths_per_joint(chain_set):
    """Total length of the chain each joint belongs to, (S + C,)."""
    totals = np.add.reduceat(chain_set.lengths, chain_set.first_segment)
    return np.repeat(totals, chain_set.segment_counts + 1)


def test_one_substep_agrees_tightly(gl):
    rng = np.random.default_rng(7)
    cs = random_angle_chain_set(rng)
    motion = RandomRootMotion(rng, cs)
    solvers = [Solver(cs, backend=b) for b in ("cpu", "gpu")]
    pose = motion.step(0.0)
    for s in solvers:
        s.set_pose(*pose)
        assert s.advance(0.0) == 0
    pose = motion.step(0.05)  # a large move of the targets, so the substep does real work
    for s in solvers:
        s.set_pose(*pose)
        assert s.advance(1 / 120) == 1
    cpu, gpu = solvers
    assert angle_difference(cpu.angles(raw=True), gpu.angles(raw=True)).max() < 2e-6
    np.testing.assert_allclose(gpu.angular_velocities(raw=True), cpu.angular_velocities(raw=True),
                               rtol=1e-5, atol=2e-4)
    np.testing.assert_allclose(gpu.positions(), cpu.positions(), rtol=0, atol=5e-6)


@pytest.mark.filterwarnings("ignore::gpu_jiggle.sim.clock.FrameTimeWarning")  # long frames on purpose
def test_600_random_frames_agree(gl):
    """A lightly damped chain whose tip is whipped round (here one 0.56 Hz, ζ 0.13 chain's tip
    at 20-27 rad/s) is chaotic: the reference itself, its first heading moved by 1e-6 rad,
    ends up to 0.7 rad away on that segment. Such chains are found by that perturbed
    reference run and left out of the comparison (at most 2 of the 300); every other chain
    agrees within the tolerance."""
    rng = np.random.default_rng(11)
    cs = random_angle_chain_set(rng, chains=300, max_segments=12)
    motion = RandomRootMotion(rng, cs)
    solvers = [Solver(cs, backend=b) for b in ("cpu", "gpu", "cpu")]
    scale = chain_lengths_per_joint(cs)
    chain_of_segment = np.repeat(np.arange(cs.chain_count), cs.segment_counts)
    chain_of_joint = np.repeat(np.arange(cs.chain_count), cs.segment_counts + 1)
    angle_error, position_error, sensitive = (np.zeros(cs.chain_count) for _ in range(3))
    for k, dt in enumerate(random_frame_times(rng, 600)):
        pose = motion.step(dt)
        ns = []
        for i, s in enumerate(solvers):
            root, heading, local = pose
            s.set_pose(root, heading + (1e-6 if i == 2 and k == 0 else 0.0), local)
            ns.append(s.advance(dt))
        assert ns[0] == ns[1] == ns[2]
        cpu, gpu, perturbed = solvers
        np.maximum.at(angle_error, chain_of_segment, angle_difference(cpu.angles(), gpu.angles()))
        np.maximum.at(sensitive, chain_of_segment, angle_difference(cpu.angles(), perturbed.angles()))
        np.maximum.at(position_error, chain_of_joint, np.abs(cpu.positions() - gpu.positions()).max(axis=1) / scale)
    chaotic = sensitive > 1e-3
    print(f"GPU vs reference over 600 frames: angle {angle_error[~chaotic].max():.3g} rad, position "
          f"{position_error[~chaotic].max():.3g} of chain length; {chaotic.sum()} chaotic chains left out "
          f"(GPU {angle_error[chaotic].max(initial=0):.3g} rad, perturbed reference "
          f"{sensitive[chaotic].max(initial=0):.3g} rad)")
    assert chaotic.sum() <= 2
    assert angle_error[~chaotic].max() < 1e-3
    assert position_error[~chaotic].max() < 1e-3
    assert solvers[0].dropped_time == solvers[1].dropped_time > 0
    assert solvers[0].sim_time == solvers[1].sim_time


@pytest.mark.parametrize("keep_shape", [False, True])
def test_teleports_agree(gl, keep_shape):
    rng = np.random.default_rng(3)
    cs = random_angle_chain_set(rng, chains=50)
    motion = RandomRootMotion(rng, cs)
    solvers = [Solver(cs, backend=b) for b in ("cpu", "gpu")]
    jumped = np.arange(0, cs.chain_count, 2)
    for frame in range(120):
        pose = motion.step(1 / 60)
        if frame == 60:
            motion.position[jumped] += 2000.0
            motion.heading[jumped] += 2.0
            pose = motion.step(0.0)
        for s in solvers:
            s.set_pose(*pose)
            if frame == 60:
                s.teleport(jumped, keep_shape=keep_shape)
            s.advance(1 / 60)
    cpu, gpu = solvers
    assert angle_difference(cpu.angles(), gpu.angles()).max() < 1e-4
    np.testing.assert_allclose(gpu.positions(), cpu.positions(), rtol=0, atol=1e-2)  # 2000 units away: float32 ulp 1.2e-4


def test_state_records_match_field_by_field(gl):
    """The two backends hold the same std430 records; after a frame every field agrees."""
    cs = AngleChainSet([3, 1, 5], 1.0, 2.0, 0.4, inertia=0.5, gravity=(0, -9.8))
    solvers = [Solver(cs, backend=b) for b in ("cpu", "gpu")]
    for s in solvers:
        s.set_pose(np.arange(6.0).reshape(3, 2), [0.1, 0.2, 0.3], np.linspace(-0.2, 0.2, 9))
        s.advance(1 / 60)
        s.set_pose(np.arange(6.0).reshape(3, 2) + 0.1, [0.2, 0.2, 0.1], np.linspace(-0.2, 0.2, 9))
        s.advance(1 / 50)
    a, b = (s.state() for s in solvers)
    for name in ("chain_state", "segment_state", "joint_output", "segment_output"):
        for field in a[name].dtype.names:
            np.testing.assert_allclose(b[name][field], a[name][field], rtol=1e-5, atol=1e-5, err_msg=f"{name}.{field}")

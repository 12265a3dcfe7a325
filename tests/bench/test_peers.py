"""The benchmark's peers (:mod:`gpu_jiggle.bench.peers`, numba and Warp on the CPU) against the
project's numpy solver, ``Solver(chain_set, backend="cpu")``, on the same poses and frame times.
The solver runs with its defaults, which the benchmark times, and the peers write them: the
monotone target path (SPEC 2; the point chains' tips limited as offsets from their pivot, as
the solver takes them) and the frame-time output carried σ·h past the last substep at the
angular velocity extrapolated from the last two substeps (angle chains 2ω - ω_prev, point
chains 2Ω - Ω_prev; SPEC 2, 9). Against the solver on the Hermite path the peers are
5e-4 (angle, 60 fps), 5.4e-3 (angle, uneven) and 1.2e-3 (point, uneven) apart; peers with
the Hermite path and the former output (the blend turned rigidly by the heading) were 0.18
(angle) and 1.2e-3 (point, uneven) from the defaults.

Tolerances, from what was measured (20 chains of 8 segments near the origin; the same
numbers on both libraries):

- Both are float32, but the peers keep world coordinates where the solver keeps each chain
  relative to its own root/pivot (SPEC 3.4, 4.4), and round in other places: per-operation
  differences of about 6e-8 at coordinates of order 1, carried and amplified by the chains'
  motion over 240 substeps.
- Angle chains (0.8 long), gravity, air drag, gusting wind, roots moving and turning:
  measured worst 2.5e-6 (60 fps) and 3.5e-6 (uneven frame times with a hitch), frame-time
  and raw positions alike; tolerance 1e-4 of the chain length (8e-5).
- Point chains (0.4 long), gravity, air drag, gusting wind, swaying pivots, no contact:
  measured worst 2.4e-5 (60 fps) and 1.2e-5 (uneven), with either frame-time output (the
  blend of the last two substeps or the carry at 2Ω - Ω_prev); tolerance 5e-4 of the chain length
  (2e-4). The springs are 3-6 Hz, ζ 0.7: at the benchmark's 1-5 Hz, ζ 0.5 gravity outweighs
  the springs and these hanging chains amplify rounding (the solver against itself with the
  pose moved by 1e-8: 1e-5 apart after 40 frames), and the peers measured 2.9e-4 from it.
- Point chains with limits, against the full solver (both peers): a cone of 0.3 rad and a
  max distance of 0.015 on every segment (the solver's limits move 129 and 644 particles in
  60 frames at 60 fps, 681 and 2075 with the uneven frames), wind, no colliders: measured
  worst 1.7e-5 (60 fps) and 1.4e-5 (uneven), tolerance 5e-4 of the chain length (2e-4);
  rotations measured 9.2e-5, tolerance 1e-3. With the peer's cone switched off (in the
  substeps): 0.041 (60 fps) and 0.14 (uneven) apart; its max distance off: 0.029 and 0.085.
- Point chains in contact, against the full solver (its defaults; both peers): a sphere
  under the chains, a smaller one overlapping it (a crevice), a capsule, and a sphere
  sweeping through the chains at up to 19 m/s (the solver takes up to 4 contact sub-steps
  a substep at 60 fps, 6 with the uneven frames). Contact is where rounding grows: a tip
  resting on a collider or in a crevice takes one branch or the other of a stage on a
  difference of 1e-8 (the solver against itself, a collider moved by 3e-8 in a case with its
  chains at the origin: 6.6e-5 apart with static colliders, 1.9e-3 with the fast one), and the
  peer's world coordinates round otherwise than the solver's pivot-relative ones (the same
  stages with every chain's pivot at the origin, where both round alike, agreed to 5e-8 for
  half the chains). Measured worst, joints at frame time and raw: 2.35e-3 (60 fps, chain 15,
  the last frame) and 1.0e-3 (uneven), median over chains 3.5e-4; tolerance 1e-2 (a fifth of
  a segment), the median 2e-3. Rotations (unit quaternions, q and -q alike), the swing and the
  world rotation: measured worst 0.025 and 0.018 (60 fps), 0.029 and 0.016 (uneven); tolerance
  0.1. With one stage of the peer switched off the same case measured (60 fps, uneven):
  settle_contact 0.41 and 0.46 apart, contact sub-steps 0.43 and 0.39, leave_crevice 0.085
  and 0.10 (rotations 1.2-1.4), sweep_particle 3.8e-3 (at 60 fps the sub-steps leave it little
  to catch) and 0.15.
- The Warp peer (device "cpu") writes the same stages as the numba peer (contact sub-steps,
  swept contact, crevices, settle_contact, moving colliders, max distance, the cone limit, the
  swings and world rotations) and measured the same figures in both cases above, to the
  digits given: against the full solver, contact 2.35e-3 (60 fps) and 1.0e-3 (uneven), median
  3.5e-4, rotations 0.025 and 0.029; limits 1.7e-5 and 1.4e-5, rotations 9.2e-5 and 8.5e-5
  (peer against peer on the CPU: 0 apart, joints and rotations). The tolerances are the
  numba peer's above. With its settle_contact switched off the contact case measured 0.41
  (60 fps) and 0.46 (uneven) apart, and with its cone switched off (in the substeps) the
  limits case 0.041 and 0.14: both tests failed.
"""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, PointChainSet, Solver
from gpu_jiggle.bench.peers import case_from_chain_set, make_peer

SIXTY_FPS = [1 / 60] * 120
#: Frames of 0 and 1 substeps (σ ≠ 0), of several, and a 0.15 s hitch past the cap of 8.
UNEVEN = ([1 / 144, 1 / 144, 1 / 30, 1 / 75, 1 / 60] * 18)[:50] + [0.15] + [1 / 144, 1 / 45] * 15
WIND = dict(acceleration=(0.5, 0.0, 0.0), gust_amplitude=1.0, gust_wave_vector=(2.0, 0.0, 1.0), gust_frequency=0.7)
WIND_2D = ((0.5, 0.0), 1.0, (2.0, 1.0), 0.7)  # set_wind's arguments, for angle chains
CHAINS, SEGMENTS = 20, 8


@pytest.fixture(params=["numba", "warp"])
def library(request):
    pytest.importorskip(request.param)
    return request.param


def angle_rig(seed=1):
    """Roots wandering about the origin, headings swinging (every fourth chain also turning
    once a second, across ±π), local angles waving."""
    rng = np.random.default_rng(seed)
    chain_set = AngleChainSet(np.full(CHAINS, SEGMENTS), 0.1, rng.uniform(1, 5, CHAINS), 0.4, inertia=1.0,
                              gravity=(0, -9.8), air_drag=0.5)
    centre, phase = rng.uniform(-1, 1, (CHAINS, 2)), rng.uniform(0, 2 * np.pi, (CHAINS, 3))
    heading0, local_phase = rng.uniform(-3, 3, CHAINS), rng.uniform(0, 2 * np.pi, CHAINS * SEGMENTS)
    spin = np.where(np.arange(CHAINS) % 4 == 0, 2 * np.pi, 0.0)

    def pose(t):
        wander = np.stack([0.3 * np.sin(2 * np.pi * 0.8 * t + phase[:, 0]),
                           0.15 * np.sin(2 * np.pi * 1.3 * t + phase[:, 1])], 1)
        return dict(root_position=centre + wander,
                    root_angle=heading0 + 1.5 * np.sin(2 * np.pi * 0.5 * t + phase[:, 2]) + spin * t,
                    local_angle=0.3 * np.sin(2 * np.pi * 0.9 * t + local_phase))
    return chain_set, pose


def point_rig(seed=3):
    """Chains of 0.05-unit segments hanging from pivots in a row along x, swaying."""
    rng = np.random.default_rng(seed)
    chain_set = PointChainSet(np.full(CHAINS, SEGMENTS), rng.uniform(3, 6, CHAINS), 0.7, rest_lengths=0.05,
                              particle_radius=0.01, gravity=(0, -9.8, 0), air_drag=0.5)
    pivots = np.stack([np.linspace(-0.95, 0.95, CHAINS), np.zeros(CHAINS), rng.uniform(-0.1, 0.1, CHAINS)], 1)
    phase = rng.uniform(0, 2 * np.pi, (CHAINS, 3))
    hang = np.array([[0.0, -0.05 * k, 0.0] for k in range(SEGMENTS + 1)])

    def pose(t):
        sway = np.stack([0.1 * np.sin(2 * np.pi * 0.7 * t + phase[:, 0]), 0.02 * np.sin(2 * np.pi * 1.1 * t + phase[:, 1]),
                         0.1 * np.sin(2 * np.pi * 0.6 * t + phase[:, 2])], 1)
        return dict(joint_positions=(pivots[:, None] + sway[:, None] + hang[None]).reshape(-1, 3))
    return chain_set, pose


def worst_per_chain(solver, peer, pose, frame_times):
    """(C,) the largest distance between the solver's and the peer's joints, at frame time
    and raw, over all frames."""
    worst, t = np.zeros(CHAINS), 0.0
    for dt in frame_times:
        t += dt
        for who in (solver, peer):
            who.set_pose(**pose(t))
            who.advance(dt)
        for raw in (False, True):
            apart = np.linalg.norm(solver.positions(raw=raw) - peer.positions(raw=raw), axis=1)
            worst = np.maximum(worst, apart.reshape(CHAINS, -1).max(1))
    return worst


@pytest.mark.parametrize("frame_times", [SIXTY_FPS, UNEVEN], ids=["60fps", "uneven"])
def test_angle_peer_follows_the_solver(library, frame_times):
    chain_set, pose = angle_rig()
    solver = Solver(chain_set, backend="cpu")
    solver.set_wind(*WIND_2D)
    peer = make_peer(library, "angle", case_from_chain_set(chain_set, lambda s: s.set_wind(*WIND_2D)), device="cpu")
    worst = worst_per_chain(solver, peer, pose, frame_times)
    assert worst.max() < 1e-4 * SEGMENTS * 0.1, worst


@pytest.mark.parametrize("frame_times", [SIXTY_FPS, UNEVEN], ids=["60fps", "uneven"])
def test_point_peer_follows_the_solver_in_wind(library, frame_times):
    chain_set, pose = point_rig()
    solver = Solver(chain_set, backend="cpu")
    solver.set_wind(**WIND)
    peer = make_peer(library, "point", case_from_chain_set(chain_set, wind=WIND), device="cpu")
    worst = worst_per_chain(solver, peer, pose, frame_times)
    assert worst.max() < 5e-4 * SEGMENTS * 0.05, worst


SPHERES = np.array([[0.5, -1.3, 0.0, 1.0]])  # its top 0.1 above the chains' tips
CAPSULES = np.array([[-0.9, -0.55, -0.5, -0.3, -0.55, 0.5, 0.25]])


#: A smaller sphere on the big one's top (a crevice where they meet) and a sphere sweeping
#: along x through the chains, at up to 1.5·4π ≈ 19 m/s.
OVERLAPPING = np.array([[0.25, -0.33, 0.0, 0.1]])


def sweeping(t):
    return np.array([[1.5 * np.sin(2 * np.pi * 2 * t), -0.25, 0.0, 0.1]])


def colliders_at(t):
    return np.concatenate([SPHERES, OVERLAPPING, sweeping(t)]), CAPSULES


def quaternions_apart(a, b):
    """(S,) the distance between unit quaternions, q and -q alike."""
    return np.minimum(np.linalg.norm(a - b, axis=1), np.linalg.norm(a + b, axis=1))


@pytest.mark.parametrize("frame_times", [SIXTY_FPS[:60], UNEVEN], ids=["60fps", "uneven"])
def test_point_peer_contact_follows_the_full_solver(monkeypatch, library, frame_times):
    from gpu_jiggle.sim.backends.reference import point_chains as reference_point
    most_substeps = [1]  # the most contact sub-steps the solver took (observed, not changed)
    count = reference_point.contact_substeps

    def counted(*args, **kwargs):
        need, capped = count(*args, **kwargs)
        most_substeps[0] = max(most_substeps[0], int(need.max()))
        return need, capped
    monkeypatch.setattr(reference_point, "contact_substeps", counted)

    chain_set, pose = point_rig()
    solver = Solver(chain_set, backend="cpu")
    solver.set_wind(**WIND)
    spheres, capsules = colliders_at(0.0)
    solver.set_colliders(spheres=spheres, capsules=capsules)
    peer = make_peer(library, "point", case_from_chain_set(chain_set, wind=WIND, spheres=spheres, capsules=capsules),
                     device="cpu")
    touched, deepest = np.zeros(CHAINS, bool), [np.inf]

    def move_colliders(t):
        spheres, capsules = colliders_at(t)
        solver.set_colliders(spheres=spheres, capsules=capsules)
        peer.set_colliders(spheres, capsules)
        return spheres, capsules

    def look(spheres, capsules):
        gap = gaps(peer.positions().reshape(CHAINS, -1, 3)[:, 1:], spheres, capsules)
        touched[:] |= gap < 1e-3
        deepest[0] = min(deepest[0], gap.min())
    joints, rotations = frames_apart(solver, peer, pose, frame_times, move_colliders, look)
    deepest = deepest[0]
    assert most_substeps[0] >= 3  # the sweeping sphere made the solver take contact sub-steps
    assert joints.max() < 1e-2 and np.median(joints) < 2e-3, joints
    assert rotations.max() < 0.1, rotations
    # The chains touch the colliders; the peer's particles end each frame outside them.
    assert touched.sum() >= 16, touched
    assert deepest > -1e-5, deepest


def frames_apart(solver, peer, pose, frame_times, before=lambda t: None, after=lambda *ahead: None):
    """Run the solver and the peer through ``frame_times`` on the poses ``pose(t)``; returns
    (C,) each chain's largest joint distance (frame-time and raw positions) and (C,) its
    largest rotation distance (swings and world rotations) over the frames. ``before(t)``
    runs first in each frame (its result goes to ``after`` once the frame has run)."""
    identity = np.tile([0.0, 0.0, 0.0, 1.0], (CHAINS * (SEGMENTS + 1), 1))  # so the solver gives world rotations
    joints, rotations, t = np.zeros(CHAINS), np.zeros(CHAINS), 0.0
    for dt in frame_times:
        t += dt
        ahead = before(t)
        solver.set_pose(joint_rotations=identity, **pose(t))
        peer.set_pose(**pose(t))
        solver.advance(dt)
        peer.advance(dt)
        for raw in (False, True):
            apart = np.linalg.norm(solver.positions(raw=raw) - peer.positions(raw=raw), axis=1)
            joints = np.maximum(joints, apart.reshape(CHAINS, -1).max(1))
        for ours, theirs in ((solver.segment_swings(), peer.segment_swings()),
                             (solver.segment_rotations(), peer.segment_world_rotations())):
            rotations = np.maximum(rotations, quaternions_apart(ours, theirs).reshape(CHAINS, -1).max(1))
        if ahead is not None:
            after(*ahead)
    return joints, rotations


def gaps(tips, spheres, capsules):
    """(C,) each chain's smallest distance of a tip (particle radius 0.01) from a collider."""
    gap = np.full(tips.shape[:2], np.inf)
    for x, y, z, r in spheres:
        gap = np.minimum(gap, np.linalg.norm(tips - [x, y, z], axis=2) - r - 0.01)
    for row in capsules:
        a, b = row[:3], row[3:6]
        along = np.clip((tips - a) @ (b - a) / ((b - a) @ (b - a)), 0, 1)
        gap = np.minimum(gap, np.linalg.norm(tips - (a + along[..., None] * (b - a)), axis=2) - row[6] - 0.01)
    return gap.min(axis=1)


@pytest.mark.parametrize("frame_times", [SIXTY_FPS[:60], UNEVEN], ids=["60fps", "uneven"])
def test_point_peer_limits_follow_the_full_solver(monkeypatch, library, frame_times):
    from gpu_jiggle.sim.backends.reference import point_limits as reference_limits
    from gpu_jiggle.sim.backends.reference import point_chains as reference_point
    acted = {"cone": 0, "max distance": 0}  # rows the solver's limits moved (observed, not changed)
    cone, distance = reference_limits.limit_cone, reference_point.ReferencePointBackend.limit_distance

    def counted_cone(beta, base, a, un, lu, v_t, x, v, rows):
        new_x, new_v = cone(beta, base, a, un, lu, v_t, x, v, rows)
        acted["cone"] += int((new_x != x).any(axis=1).sum())
        return new_x, new_v

    def counted_distance(max_distance, t, x, v):
        new_x, new_v = distance(max_distance, t, x, v)
        acted["max distance"] += int((new_x != x).any(axis=1).sum())
        return new_x, new_v
    monkeypatch.setattr(reference_limits, "limit_cone", counted_cone)
    monkeypatch.setattr(reference_point.ReferencePointBackend, "limit_distance", staticmethod(counted_distance))

    _, pose = point_rig()
    rng = np.random.default_rng(3)
    chain_set = PointChainSet(np.full(CHAINS, SEGMENTS), rng.uniform(3, 6, CHAINS), 0.7, rest_lengths=0.05,
                              particle_radius=0.01, gravity=(0, -9.8, 0), air_drag=0.5, angle_limit=0.3,
                              max_distance=0.015)
    solver = Solver(chain_set, backend="cpu")
    solver.set_wind(**WIND)
    peer = make_peer(library, "point", case_from_chain_set(chain_set, wind=WIND), device="cpu")
    joints, rotations = frames_apart(solver, peer, pose, frame_times)
    assert acted["cone"] > 100 and acted["max distance"] > 500, acted
    assert joints.max() < 5e-4 * SEGMENTS * 0.05, joints
    assert rotations.max() < 1e-3, rotations


def test_interface(library):
    chain_set, pose = point_rig()
    peer = make_peer(library, "point", case_from_chain_set(chain_set), device="cpu")
    assert peer.segment_count == CHAINS * SEGMENTS and library in peer.name
    with pytest.raises(RuntimeError):
        peer.advance(1 / 60)
    peer.set_pose(**pose(0.0))
    assert peer.advance(1 / 60) == 2
    peer.synchronize()
    out = peer.positions()
    assert out.shape == (CHAINS * (SEGMENTS + 1), 3) and out.dtype == np.float64
    for rotations in (peer.segment_swings(), peer.segment_world_rotations()):
        assert rotations.shape == (CHAINS * SEGMENTS, 4) and rotations.dtype == np.float64
        assert np.allclose(np.linalg.norm(rotations, axis=1), 1, atol=1e-6)
    with pytest.raises(ValueError, match="spheres and capsules"):
        peer.set_colliders(spheres=SPHERES)
    with pytest.raises(ValueError):
        make_peer(library, "angle", case_from_chain_set(chain_set))


def test_case_from_chain_set_refuses_what_the_peers_leave_out():
    with pytest.raises(ValueError, match="angle_limit"):
        case_from_chain_set(AngleChainSet([3, 3], 0.1, 2.0, 0.5, angle_limit=0.5))
    with pytest.raises(ValueError, match="equal segment counts"):
        case_from_chain_set(PointChainSet([3, 4], 2.0, 0.5))
    with pytest.raises(ValueError, match="world_influence"):
        case_from_chain_set(PointChainSet([3, 3], 2.0, 0.5, world_influence=0.5))
    with pytest.raises(ValueError, match="hinge_or_spherical_limit"):
        case_from_chain_set(PointChainSet([3, 3], 2.0, 0.5, hinge_limit=(-0.5, 0.5)))

"""World influence and keep-shape teleports of point chains (SPEC 4 and 5), both backends."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import PointChainSet, Solver

DOWN = np.array([0.0, -1.0, 0.0])


def eased(u):
    u = np.clip(u, 0.0, 1.0)
    return u * u * (3.0 - 2.0 * u)


def hanging(n, length):
    return np.array([[0.0, 1.2 - length * i, 0.0] for i in range(n + 1)])


def knockback(backend, influence, distance, integrator="semi-implicit", damping_frame="relative", frames=90,
              keep_shape_at=None, jump=(0.0, 0.0, 0.0)):
    """A hanging point chain whose pivot is knocked ``distance`` along x, eased over 12
    frames; returns (the largest swing of any segment from hanging, degrees; the tips
    relative to the pivot (frames, S, 3)). ``keep_shape_at``: the frame of a keep_shape
    teleport by ``jump`` (the pose stays jumped from then on)."""
    cs = PointChainSet([4], 3.5, 0.6, world_influence=influence, gravity=(0.0, -9.8, 0.0))
    s = Solver(cs, backend=backend, integrator=integrator, damping_frame=damping_frame)
    rest = hanging(4, 0.12)
    offset, swing, relative = np.zeros(3), 0.0, []
    for k in range(frames):
        if k == keep_shape_at:
            s.teleport(keep_shape=True)
            offset = np.asarray(jump, float)
        s.set_pose(rest + offset + [distance * eased((k - 5) / 12), 0.0, 0.0])
        s.advance(1 / 60)
        p = s.positions()
        d = np.diff(p, axis=0)
        cos = d @ DOWN / np.linalg.norm(d, axis=1)
        swing = max(swing, float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))).max()))
        relative.append(p[1:] - p[0])
    return swing, np.array(relative)


@pytest.mark.parametrize("integrator", ["semi-implicit", "exact"])
def test_influence_zero_carries_the_chain_rigidly(backend, integrator):
    carried, _ = knockback(backend, 0.0, 1.7, integrator)
    felt, _ = knockback(backend, 1.0, 1.7, integrator)
    assert felt > 20.0  # the knockback is one a chain feels
    assert carried < 0.5


@pytest.mark.parametrize("integrator", ["semi-implicit", "exact"])
def test_influence_is_the_fraction_of_the_motion_felt(backend, integrator):
    """Influence w under a motion moves the chain, relative to its pivot, as influence 1 under
    w times that motion."""
    w = 0.3
    partial, a = knockback(backend, w, 1.2, integrator)
    whole, b = knockback(backend, 1.0, w * 1.2, integrator)
    assert whole > 5.0
    assert partial == pytest.approx(whole, rel=0.05)
    assert np.abs(a - b).max() < 1e-3 * 0.48  # of the chain's length


def test_world_damping_keeps_its_influence(backend):
    """v1 (damping_frame="world"): influence 0 carries rigidly, and influence scales the
    swing as it did (the chain is not the v2 one)."""
    carried, _ = knockback(backend, 0.0, 1.7, damping_frame="world")
    partial, _ = knockback(backend, 0.3, 1.2, damping_frame="world")
    assert carried < 1e-3
    assert partial > 1.0


@pytest.mark.parametrize("integrator", ["semi-implicit", "exact"])
def test_influence_across_a_keep_shape_teleport(backend, integrator):
    """A keep_shape jump while the chain still swings from the knockback changes nothing it
    feels."""
    _, plain = knockback(backend, 0.4, 1.2, integrator, frames=50)
    _, jumped = knockback(backend, 0.4, 1.2, integrator, frames=50, keep_shape_at=19, jump=(-40.0, 3.0, 25.0))
    assert np.abs(plain[19] - plain[18]).max() > 1e-3  # still swinging
    assert np.abs(plain - jumped).max() < 2e-5


# -- keep_shape with a turn (SPEC 5) ---------------------------------------------------------------
def rot_y(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def quat_y(angle):
    return np.array([0.0, np.sin(angle / 2), 0.0, np.cos(angle / 2)])


def quat_multiply(a, b):
    return np.concatenate([a[3] * b[:3] + b[3] * a[:3] + np.cross(a[:3], b[:3]), [a[3] * b[3] - a[:3] @ b[:3]]])


def hair_run(backend, rotations, integrator, turn_at=None, turn=np.radians(120.0), jump=(-30.0, 2.0, 60.0),
             frames=100):
    """Two bent strands on a head that shakes for 0.4 s, then runs at 4 m/s along z; at frame
    ``turn_at`` the body jumps by ``jump`` and turns by ``turn`` about y (keep_shape), and
    runs on in its new heading. Returns per frame the tips and velocities taken back into the
    frame of the run that did not jump."""
    n, length = 4, 0.09
    cs = PointChainSet([n, n], 2.5, 0.35, gravity=(0.0, -9.8, 0.0), world_influence=[1.0, 0.6])
    s = Solver(cs, backend=backend, integrator=integrator)
    local = []
    for side in (-1.0, 1.0):
        points = [np.array([0.06 * side, 0.0, -0.04])]
        for i in range(n):
            step = np.array([0.25 * side, -np.cos(0.35 * i), -np.sin(0.35 * i)])
            points.append(points[-1] + length * step / np.linalg.norm(step))
        local += points
    local = np.array(local)
    turned, moved, out = np.eye(3), np.zeros(3), []
    for k in range(frames):
        t = k / 60
        shake = np.sin(np.pi * min(t, 0.4) / 0.4) ** 2
        heading, head = 0.7 * shake, np.array([0.25 * shake, 1.6, 4.0 * t])
        if k == turn_at:
            s.teleport(keep_shape=True)
            turned, moved = rot_y(turn), np.asarray(jump, float)
        body = turned @ rot_y(heading)
        pose = moved + turned @ head + local @ body.T
        q = quat_multiply(quat_y(turn if k >= (turn_at if turn_at is not None else frames) else 0.0), quat_y(heading))
        s.set_pose(pose, np.tile(q, (len(pose), 1)) if rotations else None)
        s.advance(1 / 60)
        out.append(((s.positions() - moved) @ turned, s.velocities().astype(np.float64) @ turned))
    return out


@pytest.mark.parametrize("rotations", [True, False])
@pytest.mark.parametrize("integrator", ["semi-implicit", "exact"])
def test_keep_shape_carries_a_turn(backend, rotations, integrator):
    """The chain is carried by the body's whole rigid jump, its turn found from the joint
    rotations or, without them, from the chains' first segments: in the body's frame it is
    where the chain that did not jump is."""
    at = 40
    plain = hair_run(backend, rotations, integrator)
    jumped = hair_run(backend, rotations, integrator, turn_at=at)
    position = [np.abs(a - b).max() for (a, _), (b, _) in zip(plain, jumped)]
    velocity = [np.abs(a - b).max() for (_, a), (_, b) in zip(plain, jumped)]
    swinging = np.abs(plain[at][1] - plain[at][1].mean(axis=0)).max()
    assert swinging > 0.05  # the strands still swing when the body jumps
    assert position[at] <= 1e-5 and velocity[at] <= 1e-4
    assert max(position[at:]) <= 1e-3

"""Rigs, poses, motions and frame times that the SPEC section 8 checks and the tests drive the
solver with (not checks themselves; nothing here measures anything).

Angle chains: the standard set (:func:`standard_chains`) and its primary motion
(:func:`root_motion`); random ragged sets, :func:`random_chains` (the cross-check's: stable f,
ζ = 0 or ≥ 0.2) and :func:`random_angle_chain_set` (the tests': longer segments, f up to 6 Hz),
and a random walk of their roots (:class:`RandomRootMotion`).

Point chains: the standard set and its pose (:func:`standard_point_chains`,
:func:`standard_point_pose`), the forces of the four variants (``FORCE_VARIANTS``), the moving
body (:func:`point_body_motion`); random ragged sets, :func:`random_point_chains` (the
cross-check's, on a :class:`RandomBody`) and :func:`random_point_chain_set` (the tests', on
:class:`RigidBodyStrands` along :func:`body_path`, with :func:`moving_colliders`).

Frame times: :func:`random_frame_times`, with the mixes ``FRAME_RATE_MIX`` and
``GAME_LOOP_MIX``. Rotations: :func:`axis_rotation`, :func:`yaw_pitch_rotation`.

Units: lengths in units (about metres: the standard chains are about 1 unit long), times in
s, angles in rad, frequencies in Hz, accelerations in units/s². Every random generator takes a
``numpy.random.Generator`` and draws from it in a fixed order, so a seed gives one scenario.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..sim.chains import AngleChainSet, PointChainSet
from ..sim.spring import stable_frequency

TWO_PI = 2.0 * math.pi
#: Gravity of the standard angle set, units/s² (the chains are about 1 unit long: metres).
STANDARD_GRAVITY = (0.0, -9.81)
#: The fixed substep every check runs with (the solver's default), s.
SUBSTEP = 1.0 / 120.0
#: The primary motions' amplitudes: translation (units) and heading or yaw (rad).
MOTION_AMPLITUDE = 0.5
HEADING_AMPLITUDE = 0.6


# -- angle chains ------------------------------------------------------------------------------
def _standard_lengths() -> np.ndarray:
    """(34,) the segment lengths of both standard sets: 0.5; 1.0; 4 × 0.25; 0.4 to 0.1;
    12 × 1/12; 12 tapered from 0.2 to 0.05 (1.5 in all)."""
    taper = np.linspace(0.2, 0.05, 12)
    return np.concatenate([[0.5], [1.0], np.full(4, 0.25), [0.4, 0.3, 0.2, 0.1], np.full(12, 1.0 / 12.0),
                           taper * (1.5 / taper.sum())])


def standard_chains(gravity=STANDARD_GRAVITY, frequency=None, damping_ratio=None) -> AngleChainSet:
    """The standard set: six chains of 1, 1, 4, 4, 12 and 12 segments, about 1 unit long
    (uniform and tapered lengths), f from 2 to 8 Hz, ζ from 0.1 to 1, inertia 0.5 to 1.5,
    and gravity. Every spring is at least 7× stiffer than gravity's pull on its segment
    (k > 7·|g|/L), so the chains hold their shape against it.

    ``frequency`` and ``damping_ratio`` (per chain, (6,)) replace the defaults.
    """
    lengths = _standard_lengths()
    f = [2.0, 6.0, 3.0, 8.0, 5.0, 6.0] if frequency is None else frequency
    zeta = [0.1, 1.0, 0.3, 0.15, 0.5, 0.7] if damping_ratio is None else damping_ratio
    return AngleChainSet([1, 1, 4, 4, 12, 12], lengths, f, zeta, inertia=[1.0, 0.5, 1.0, 1.5, 1.0, 0.8],
                         gravity=gravity)


def root_motion(t, chain_count: int, segment_count: int):
    """A smooth primary motion: the root sways in x (amplitude ``MOTION_AMPLITUDE``, 0.6 Hz)
    and y (half that, 1.1 Hz) and turns (amplitude ``HEADING_AMPLITUDE`` rad, 0.4 Hz) from a
    heading pointing down; it starts from rest (zero velocity at t = 0).
    Returns (P (C, 2), Θ (C,), λ (S,))."""
    a = MOTION_AMPLITUDE
    x = a * (1.0 - math.cos(TWO_PI * 0.6 * t))
    y = 0.5 * a * (1.0 - math.cos(TWO_PI * 1.1 * t))
    heading = -math.pi / 2 + HEADING_AMPLITUDE * (1.0 - math.cos(TWO_PI * 0.4 * t))
    position = np.tile([x, y], (chain_count, 1))
    return position, np.full(chain_count, heading), np.full(segment_count, 0.1)


def random_chains(rng, chain_count: int = 48, substep: float = SUBSTEP) -> AngleChainSet:
    """The angle cross-check's set: ragged chains (1-16 segments) with lengths 0.05-0.4, f up
    to 12 Hz lowered to 0.8 of what ``substep`` keeps stable, ζ 0 or 0.2-1.2 (no endless whip),
    inertia 0-2, angle limits (0.3-1.5 rad) on a third of the segments, and random gravity."""
    counts = rng.integers(1, 17, chain_count)
    s = int(counts.sum())
    zeta = rng.uniform(0.0, 1.2, s)
    zeta[rng.random(s) < 0.2] = 0.0
    zeta = np.where(zeta == 0.0, 0.0, np.maximum(zeta, 0.2))  # ζ = 0 or ≥ 0.2: no endless whip
    f = rng.uniform(0.5, 12.0, s)
    f = np.minimum(f, 0.8 * stable_frequency(zeta, substep))
    limit = np.where(rng.random(s) < 0.35, rng.uniform(0.3, 1.5, s), np.inf)
    return AngleChainSet(counts, rng.uniform(0.05, 0.4, s), f, zeta, inertia=rng.uniform(0.0, 2.0, s),
                         angle_limit=limit, gravity=rng.uniform(-10.0, 10.0, 2))


def random_angle_chain_set(rng, chains: int = 300, max_segments: int = 12, gravity=(0.0, -9.8)) -> AngleChainSet:
    """The tests' larger set: ragged chains of 1..``max_segments`` with lengths 0.2-2, f in
    [0.5, 6] Hz, ζ in [0.1, 1.2], inertia in [0, 2], a limit (0.3-2 rad) on about a third of
    the segments, and ``gravity`` (units/s²)."""
    counts = rng.integers(1, max_segments + 1, chains)
    s = int(counts.sum())
    limits = np.where(rng.random(s) < 0.3, rng.uniform(0.3, 2.0, s), np.inf)
    return AngleChainSet(counts, rng.uniform(0.2, 2.0, s), rng.uniform(0.5, 6.0, s), rng.uniform(0.1, 1.2, s),
                         inertia=rng.uniform(0.0, 2.0, s), angle_limit=limits, gravity=gravity)


class RandomRootMotion:
    """A smooth random walk of every chain's root position and heading, plus local targets.

    :meth:`step` advances the walk by ``dt`` s and returns a pose: (P (C, 2) units, Θ (C,) rad,
    λ (S,) rad), copies. Velocity and turn rate get random kicks (σ 3 units/s² and
    8 rad/s², over at least 1 ms) and lose 2 % a step; λ wanders by σ 0.02 rad a step.
    """

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


# -- frame times -------------------------------------------------------------------------------
#: In a frame-time mix, the value that stands for a spike: a frame time drawn from its range.
SPIKE = math.nan


class FrameTimeMix(NamedTuple):
    """The frame times :func:`random_frame_times` draws from: ``values`` (s; ``SPIKE`` for a
    spike), their probabilities ``weights`` (None: equally likely) and the range ``spikes``
    (low, high in s) a spike is drawn from (None when the mix has none)."""

    values: tuple
    weights: tuple | None = None
    spikes: tuple | None = None


#: Frames at 30, 60 and 144 fps and empty frames (no substep), equally likely as listed.
FRAME_RATE_MIX = FrameTimeMix((1 / 30, 1 / 60, 1 / 60, 1 / 144, 1 / 144, 0.0))
#: A real game loop's: mostly 30-144 fps, with zeros, tiny frames and multi-second spikes.
GAME_LOOP_MIX = FrameTimeMix((0.0, 1e-5, 1 / 60, 1 / 30, 1 / 144, SPIKE), (0.05, 0.05, 0.45, 0.2, 0.2, 0.05),
                             (0.3, 3.0))


def random_frame_times(rng, frames: int = 600, mix: FrameTimeMix = GAME_LOOP_MIX, first=None) -> np.ndarray:
    """(frames,) float64 frame times (s) drawn from ``mix``; the first is ``first`` when given
    (0.0: the first pose snaps)."""
    kinds = rng.choice(len(mix.values), frames, p=mix.weights)
    dt = np.asarray(mix.values, np.float64)[kinds]
    if mix.spikes is not None:
        spikes = np.isnan(dt)
        dt[spikes] = rng.uniform(*mix.spikes, spikes.sum())
    if first is not None:
        dt[0] = first
    return dt


# -- point chains ------------------------------------------------------------------------------
#: Gravity of the point-chain checks when it is on (y up), units/s².
POINT_GRAVITY = (0.0, -9.81, 0.0)
#: The constant wind w0 when wind is on, units/s²: sideways, a little toward +z.
POINT_WIND = (3.0, 0.0, 1.5)
#: Gusts on top of w0 where a check may have time-varying forcing (frame rates, teleport,
#: cross-check): amplitude (units/s²), wave vector (rad per unit), frequency (Hz). At 1 Hz a
#: whole second is a whole gust period, which the teleport check relies on.
POINT_GUST = {"gust_amplitude": 2.0, "gust_wave_vector": (1.2, 0.0, 0.7), "gust_frequency": 1.0}
#: (gravity, wind) of the four variants the point checks run.
FORCE_VARIANTS = ((False, False), (True, False), (False, True), (True, True))
#: The standard point set: segments per chain, f (Hz) and ζ per chain.
POINT_SEGMENT_COUNTS = (1, 1, 4, 4, 12, 12)
POINT_FREQUENCY = (2.0, 6.0, 3.0, 5.0, 6.0, 5.0)
POINT_DAMPING = (0.3, 1.0, 0.4, 0.6, 0.7, 0.8)
#: Air drag of the standard point set, 1/s. Model v2 damps motion relative to the body, not in
#: the world, so without it the 12-segment chains fold over under the primary motion's
#: accelerations and whip, and frame rates part by 6.8 % of the amplitude (2.7 % with it).
POINT_AIR_DRAG = 2.0


def variant_name(gravity: bool, wind: bool) -> str:
    """``"none"``, ``"gravity"``, ``"wind"`` or ``"gravity + wind"``."""
    return " + ".join(n for n, on in (("gravity", gravity), ("wind", wind)) if on) or "none"


def standard_point_chains(gravity: bool = True, frequency=None, damping_ratio=None,
                          air_drag=POINT_AIR_DRAG) -> PointChainSet:
    """The standard point set: six chains of 1, 1, 4, 4, 12 and 12 segments with the lengths of
    the angle set (about 1 unit long), f from 2 to 6 Hz, ζ from 0.3 to 1 (``POINT_FREQUENCY``,
    ``POINT_DAMPING``; per chain, replaced by ``frequency`` and ``damping_ratio``), rest lengths
    given (not taken from the first pose, so that a solver made anywhere has the same ones) and
    ``POINT_GRAVITY`` when ``gravity``, and ``air_drag`` (default ``POINT_AIR_DRAG``). Every
    spring is at least 4.5× stronger than gravity and wind together on its segment
    (k·L > 4.5·|g + w0|), so the chains keep their shape.

    A point chain of many short segments is soft: each segment lags its parent's direction
    by about A/(ω0²·L) under a pivot acceleration A, and the lags add up along the chain. At
    f = 4 Hz, ζ = 0.5 the 12-segment chain folds over under :func:`point_body_motion` and
    whips its tip at 27 units/s, where the second-order error of frames' linear target
    interpolation (4× larger at 30 fps than at 60) grows to 7 % of the motion's amplitude;
    at 6 Hz, ζ = 0.7 it follows the body.
    """
    return PointChainSet(POINT_SEGMENT_COUNTS, POINT_FREQUENCY if frequency is None else frequency,
                         POINT_DAMPING if damping_ratio is None else damping_ratio,
                         rest_lengths=_standard_lengths(), gravity=POINT_GRAVITY if gravity else (0.0, 0.0, 0.0),
                         air_drag=air_drag)


def standard_point_pose(cs: PointChainSet) -> np.ndarray:
    """(J, 3) float64: the standard set's animated pose in its body frame. Pivots on a row
    along x, 0.6 apart and centred on the origin, alternately 0.15 in front and behind; each
    chain hangs down and curves away from the vertical in its own vertical plane (azimuth
    60° × chain index), its polar angle growing from 0.15 to 0.75 rad root to tip."""
    lengths = cs.rest_lengths
    joints = np.empty((cs.joint_count, 3))
    for c, n in enumerate(cs.segment_counts):
        j0, s0 = int(cs.first_joint[c]), int(cs.first_segment[c])
        joints[j0] = [0.6 * (c - (cs.chain_count - 1) / 2), 0.0, 0.15 if c % 2 else -0.15]
        azimuth = c * math.pi / 3
        polar = 0.15 + 0.6 * np.arange(n) / max(n - 1, 1)
        direction = np.stack([np.sin(polar) * math.cos(azimuth), -np.cos(polar), np.sin(polar) * math.sin(azimuth)],
                             axis=1)
        joints[j0 + 1:j0 + n + 1] = joints[j0] + np.cumsum(direction * lengths[s0:s0 + n, None], axis=0)
    return joints


def unit(v) -> np.ndarray:
    """``v`` (..., 3) scaled to length 1 along its last axis, float64."""
    v = np.asarray(v, np.float64)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def axis_rotation(axis, angle: float) -> np.ndarray:
    """(3, 3) the rotation by ``angle`` rad about ``axis`` (3,) (right-handed)."""
    x, y, z = unit(axis)
    c, s = math.cos(angle), math.sin(angle)
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + s * k + (1.0 - c) * (k @ k)


def yaw_pitch_rotation(yaw: float, pitch: float) -> np.ndarray:
    """(3, 3) a turn by ``pitch`` rad about x, then by ``yaw`` rad about y (up)."""
    return axis_rotation((0.0, 1.0, 0.0), yaw) @ axis_rotation((1.0, 0.0, 0.0), pitch)


def moved(pose, motion) -> np.ndarray:
    """(J, 3) the joints ``pose`` (J, 3) carried by ``motion`` = (translation (3,), rotation
    (3, 3)): ``translation + pose @ rotation.T``."""
    translation, rotation = motion
    return translation + pose @ rotation.T


def point_body_motion(t: float):
    """The primary motion of the point checks: the body (the pose of
    :func:`standard_point_pose`) moves by a translation of amplitude ``MOTION_AMPLITUDE`` (x,
    0.6 Hz; y half that, 1.1 Hz; z 0.3 of it, 0.8 Hz) and turns about the origin (yaw up to
    ``HEADING_AMPLITUDE`` rad, 0.4 Hz; pitch up to 0.25 rad, 0.7 Hz), from rest at t = 0.
    Returns (translation (3,), rotation (3, 3)); joints are ``translation + pose @ rotation.T``."""
    a = MOTION_AMPLITUDE
    translation = np.array([a * (1.0 - math.cos(TWO_PI * 0.6 * t)), 0.5 * a * (1.0 - math.cos(TWO_PI * 1.1 * t)),
                            0.3 * a * (1.0 - math.cos(TWO_PI * 0.8 * t))])
    yaw = 0.5 * HEADING_AMPLITUDE * (1.0 - math.cos(TWO_PI * 0.4 * t))
    pitch = 0.125 * (1.0 - math.cos(TWO_PI * 0.7 * t))
    return translation, yaw_pitch_rotation(yaw, pitch)


def random_point_chains(rng, chain_count: int = 40, gravity: bool = True, substep: float = SUBSTEP) -> PointChainSet:
    """The point cross-check's set: ragged point chains (1-12 segments), rest lengths
    0.03-0.15, ζ 0.3-1.2 (lighter damping makes long chains chaotic: a 1-ulp difference grows
    without bound), f up to 10 Hz lowered to 0.8 of what ``substep`` keeps stable, particle
    radii, max distances on a third of the segments, world influence (a fifth of the chains
    1), collider masks over four groups, air drag 1-3/s (model v2 damps motion relative to the
    body only: without air drag, light chains on a moving body are chaotic too) and
    ``POINT_GRAVITY`` when ``gravity``."""
    counts = rng.integers(1, 13, chain_count)
    s = int(counts.sum())
    zeta = rng.uniform(0.3, 1.2, s)
    f = np.minimum(rng.uniform(1.0, 10.0, s), 0.8 * stable_frequency(zeta, substep))
    influence = np.where(rng.random(chain_count) < 0.2, 1.0, rng.uniform(0.0, 1.0, chain_count))
    return PointChainSet(counts, f, zeta, rest_lengths=rng.uniform(0.03, 0.15, s),
                         particle_radius=rng.uniform(0.0, 0.02, s),
                         max_distance=np.where(rng.random(s) < 0.35, rng.uniform(0.05, 0.3, s), np.inf),
                         world_influence=influence, collider_mask=rng.integers(0, 16, chain_count),
                         gravity=POINT_GRAVITY if gravity else (0.0, 0.0, 0.0),
                         air_drag=rng.uniform(1.0, 3.0, s))


class RandomBody:
    """The point cross-check's body: chains rooted on it, pivots on a 0.4-unit sphere about its
    centre (upper part), each chain hanging out and down with a bend, swaying about its pivot;
    the body translates and turns. Colliders ride on it: a head sphere (group 0, radius 0.35),
    a shoulder capsule (group 1), a floor plane 1.2 below the start (group 2, still) and a
    sphere circling the body (group 3). ``offset`` (3,) moves all of it (a teleport)."""

    def __init__(self, rng, cs):
        c = cs.chain_count
        self.cs = cs
        polar = rng.uniform(0.2, 1.7, c)
        azimuth = rng.uniform(0.0, TWO_PI, c)
        out = np.stack([np.sin(polar) * np.cos(azimuth), np.cos(polar), np.sin(polar) * np.sin(azimuth)], axis=1)
        self.pivot = 0.4 * out
        pose = np.empty((cs.joint_count, 3))
        lengths = np.asarray(cs.rest_lengths)
        for k, n in enumerate(cs.segment_counts):
            j0, s0 = int(cs.first_joint[k]), int(cs.first_segment[k])
            bend = np.linspace(0.0, 1.0, n)[:, None]
            direction = unit(out[k] * (1.0 - bend) + np.array([0.0, -1.0, 0.0]) * (0.3 + bend))
            pose[j0] = self.pivot[k]
            pose[j0 + 1:j0 + n + 1] = self.pivot[k] + np.cumsum(direction * lengths[s0:s0 + n, None], axis=0)
        self.pose = pose
        self.sway_axis = unit(rng.normal(size=(c, 3)))
        self.sway = rng.uniform(0.0, 0.5, c)
        self.sway_hz = rng.uniform(0.3, 2.0, c)
        self.phase = rng.uniform(0.0, TWO_PI, (4,))
        self.offset = np.zeros(3)

    def motion(self, t):
        """(translation (3,), rotation (3, 3)) of the body at time ``t`` (s)."""
        p = self.phase
        translation = self.offset + np.array([0.6 * math.sin(TWO_PI * 0.5 * t + p[0]),
                                              0.3 * math.sin(TWO_PI * 0.9 * t + p[1]),
                                              0.4 * math.sin(TWO_PI * 0.35 * t + p[2])])
        yaw, pitch = 1.5 * math.sin(TWO_PI * 0.3 * t + p[3]), 0.4 * math.sin(TWO_PI * 0.7 * t)
        return translation, yaw_pitch_rotation(yaw, pitch)

    def joints(self, t) -> np.ndarray:
        """(J, 3) the animated joints at time ``t`` (s): each chain swayed, then the body moved."""
        cs = self.cs
        local = self.pose.copy()
        for k, joints in enumerate(cs.joint_slices()):
            turn = axis_rotation(self.sway_axis[k], self.sway[k] * math.sin(TWO_PI * self.sway_hz[k] * t))
            local[joints] = self.pivot[k] + (self.pose[joints] - self.pivot[k]) @ turn.T
        return moved(local, self.motion(t))

    def colliders(self, t) -> dict:
        """The keyword arguments of ``Solver.set_colliders`` at time ``t`` (s)."""
        translation, rotation = self.motion(t)
        shoulder = translation + np.array([[-0.5, -0.45, 0.0], [0.5, -0.45, 0.0]]) @ rotation.T
        orbit = translation + 0.7 * np.array([math.cos(TWO_PI * 0.4 * t), -0.3, math.sin(TWO_PI * 0.4 * t)])
        return {"spheres": [[*translation, 0.35], [*orbit, 0.15]], "sphere_groups": [0, 3],
                "capsules": [[*shoulder[0], *shoulder[1], 0.12]], "capsule_groups": [1],
                "planes": [[0.0, 1.0, 0.0, self.offset[1] - 1.2]], "plane_groups": [2]}


def random_point_chain_set(rng, chains: int = 120, max_segments: int = 24, damping=(0.3, 1.2),
                           gravity=(0.0, -9.8, 0.0)) -> PointChainSet:
    """The tests' larger set: ragged hanging strands of 1..``max_segments`` with f in
    [0.5, 6] Hz, ζ in the ``damping`` range, rest lengths from the first pose, particle radii,
    some max distances, random world influence and masks over 4 groups."""
    counts = rng.integers(1, max_segments + 1, chains)
    s = int(counts.sum())
    return PointChainSet(counts, rng.uniform(0.5, 6.0, s), rng.uniform(*damping, s),
                         particle_radius=rng.uniform(0.0, 0.02, s),
                         max_distance=np.where(rng.random(s) < 0.3, rng.uniform(0.05, 0.5, s), np.inf),
                         world_influence=rng.uniform(0.0, 1.0, chains),
                         collider_mask=rng.integers(0, 16, chains), gravity=gravity)


class RigidBodyStrands:
    """Strands attached to one rigidly moving body: pivots on a 0.4-unit ball, the animated
    joints hanging from them ``segment_length`` units apart (with a little sideways comb), all
    carried by the body's translation and rotation (:meth:`pose`)."""

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

    def pose(self, position, yaw, pitch) -> np.ndarray:
        """(J, 3) the joints with the body at ``position`` (3,), turned by ``yaw`` and ``pitch`` rad."""
        return self.local @ yaw_pitch_rotation(yaw, pitch).T + position


def body_path(t, scale=1.0):
    """A body that walks, sways and turns: position (3,) (units, × ``scale``), yaw, pitch (rad)
    at time ``t`` (s)."""
    position = scale * np.array([0.8 * np.sin(0.7 * t), 0.15 * np.sin(2.3 * t), 0.5 * t])
    return position, 1.2 * np.sin(0.9 * t) + 0.8 * np.sin(2.7 * t), 0.3 * np.sin(1.7 * t)


def moving_colliders(t, position) -> dict:
    """Two spheres and a capsule near the body at ``position`` (3,) in groups 0..2, and a
    floor plane in group 3: the keyword arguments of ``Solver.set_colliders``."""
    sweep = np.array([0.5 * np.sin(3 * t), 0.0, 0.5 * np.cos(3 * t)])
    spheres = np.array([[*(position + [0.0, -0.3, 0.0]), 0.25], [*(position + sweep - [0, 0.5, 0]), 0.15]])
    capsules = np.array([[*(position + [-0.4, -0.6, 0.2]), *(position + [0.4, -0.7, -0.2]), 0.08]])
    planes = np.array([[0.0, 1.0, 0.0, position[1] - 1.2]])
    return dict(spheres=spheres, sphere_groups=[0, 1], capsules=capsules, capsule_groups=[2], planes=planes,
                plane_groups=[3])

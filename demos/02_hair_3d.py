"""Demo 02: a head of hair in 3D: a few hundred strands that swing, drape over the head and
shoulders, and ride through a fast turn and a teleport.

Every frame runs the stages of a pose in order (SPEC section 2):

1. keyframes: the figure nods, spins 120° in 0.15 s, walks forward, is teleported several
   metres mid-stride, stops and turns back (``sample_keyframes``);
2. the hair's animated pose: each strand's rest shape, combed from its root on the scalp and
   hanging, carried rigidly by the head (``hair_pose``), and the colliders placed on the
   body: a sphere for the head, capsules for the neck, shoulders and torso (``colliders``);
3. springs: all strands are one :class:`gpu_jiggle.PointChainSet`, given the pose with
   ``solver.set_pose(joint_positions=…)``, the colliders with ``solver.set_colliders(…)`` and
   advanced with ``solver.advance(dt)``; at the teleport, ``solver.teleport(keep_shape=True)``
   and ``set_colliders(…, snap=True)`` carry the hair across the jump instead of dragging it;

then ``draw`` renders the frame with :mod:`gpu_jiggle.render.draw3d`.

World units are metres, right-handed, y up; gravity is 9.81 m/s² down. The figure faces +z
at yaw 0.

Usage::

    python demos/02_hair_3d.py                  # a window when there is a display
    python demos/02_hair_3d.py --headless       # PNG contact strip and GIF in out/demo
    python demos/02_hair_3d.py --frames 30 --screenshot shot.png   # window, then a screenshot

Window (the frame loop, panel and keys of :mod:`gpu_jiggle.app.viewer`): drag with the mouse to
orbit, scroll to zoom; Esc quits, P pauses, N steps, T teleports the figure
(``solver.teleport(keep_shape=True)``), F cycles the frame-rate cap, G hides the panel.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from functools import partial

import numpy as np

from gpu_jiggle import PointChainSet, Solver
from gpu_jiggle.render.draw3d import FULL_AREA, Camera, Renderer, scalp_triangles
from gpu_jiggle.character.groom import grow_strands, head_frame_obstacles, scalp_directions
from support.keyframes import KeyframeTrack
from gpu_jiggle.app.viewer import Demo, demo_parser, parse_demo_args, run, run_strip, spread_frames

# -- stage --------------------------------------------------------------------------------------
GRAVITY = (0.0, -9.81, 0.0)       # m/s²
TELEPORT_JUMP = np.array([-3.2, 0.0, -2.4])  # m: where the keyframed teleport moves the figure (4 m)
USER_JUMP = np.array([2.5, 0.0, 2.5])        # m: what T in the window adds or takes away

SKY_COLOUR = "#cfe3f2"
GROUND_COLOUR = "#b7c2a6"
SKIN_COLOUR = "#e8b898"
SHIRT_COLOUR = "#3f6fb0"
TROUSER_COLOUR = "#3b3f4a"
EYE_COLOUR = "#24242c"
SHADOW_COLOUR = (0.1, 0.12, 0.08, 0.3)
HAIR_COLOUR = (0.43, 0.23, 0.11)  # chestnut; each strand varies around it
SCALP_COLOUR = "#4a2812"
PROPS = [  # posts on the ground to see the figure move against: (x, z) m, height m, colour
    ((1.3, 1.2), 1.1, "#7a5ca8"), ((-1.4, -0.6), 0.8, "#2a9d8f"), ((2.2, -2.6), 1.3, "#4062bb"),
    ((-2.2, -2.2), 0.9, "#7a5ca8"), ((-1.0, -4.4), 1.2, "#2a9d8f"), ((-3.4, -4.9), 0.7, "#4062bb"),
]

# -- the body, in its own frame: feet on y = 0, facing +z, metres -------------------------------
HEAD_RADIUS = 0.10
NECK_BASE, NECK_TOP, NECK_RADIUS = np.array([0.0, 1.42, -0.01]), np.array([0.0, 1.58, 0.0]), 0.045
HEAD_OFFSET = np.array([0.0, 0.11, 0.02])   # head centre from the neck top, head frame (it nods about the neck top)
SHOULDERS, SHOULDER_RADIUS = (np.array([-0.18, 1.42, -0.01]), np.array([0.18, 1.42, -0.01])), 0.065
TORSO, TORSO_RADIUS = (np.array([0.0, 0.98, 0.0]), np.array([0.0, 1.30, -0.01])), 0.15
HIPS = (np.array([-0.09, 0.95, 0.0]), np.array([0.09, 0.95, 0.0]))
LEG_LENGTH, LEG_RADIUS = 0.88, 0.06
ARM_LENGTH, ARM_RADIUS = 0.58, 0.045
EYES = (np.array([-0.035, 0.012, 0.092]), np.array([0.035, 0.012, 0.092]))  # head frame
STRIDE = 1.4                                # m walked per full walk cycle (two steps)

# -- hair --------------------------------------------------------------------------------------------
PARTICLE_RADIUS = 0.005                     # m, added to every collider's radius
FREQUENCY_HZ = (4.0, 3.0)                   # root → tip: a stiffer root holds the shape, the tip swings
DAMPING_RATIO = 0.65
STRAND_LENGTH = (0.22, 0.36)                # m, the range of strand lengths
SEGMENT_LENGTH = 0.03                       # m, about; 8–16 segments per strand
HAIR_WIDTH = (0.011, 0.005)                 # m, ribbon width at the root and the tip
PARTING = np.array([0.0, 0.45, 1.0]) / math.hypot(0.45, 1.0)  # head frame: the hair is combed away from here
# How much of its root's motion through the world a strand feels (SPEC 4). Damping acts on world
# velocity, so at 1 a walk reads as a strong headwind and the fast turn whips the tips to
# ten times the scalp's speed; 0.2 keeps a clear swing. (The turn still curls the strands a
# little: each segment lags its parent by about 2ζΩ/ω0, whatever the world influence.)
WORLD_INFLUENCE = 0.2


@dataclass(frozen=True)
class Hair:
    """The static description of the hair, in the head frame (origin at the head centre).

    Attributes:
        rest_joints: (J, 3) float64 m, every strand's joints back to back: its root on the
            scalp, then one per segment tip, combed and hanging (the animated shape).
        segment_counts: (C,) ints, 8–16. lengths: (C,) m, each strand's length.
        colours: (C, 3) RGB in [0, 1].
    """

    rest_joints: np.ndarray
    segment_counts: np.ndarray
    lengths: np.ndarray
    colours: np.ndarray


def hairline_ok(d: np.ndarray) -> np.ndarray:
    """(N,) bool: which unit directions (N, 3) from the head centre are on the scalp. The
    hairline is high over the face and low at the nape."""
    around = np.degrees(np.abs(np.arctan2(d[:, 0], d[:, 2])))  # 0 in front, 180 behind
    lowest = np.interp(around, [0, 40, 80, 110, 150, 180], [0.62, 0.45, 0.05, -0.15, -0.4, -0.45])
    return d[:, 1] > lowest


def rest_obstacles(head_clearance):
    """The body's spheres and capsules in the head frame at yaw 0 and no nod, widened by
    the clearance the particles keep: ``[(a (3,), b (3,), radius (N,) or float)]`` (a sphere
    is a capsule with a = b). ``head_clearance`` (N,) m: per strand, how far out it lies on
    the head (layers give the hair volume)."""
    return head_frame_obstacles(NECK_TOP + HEAD_OFFSET, HEAD_RADIUS + head_clearance,
                                [(NECK_BASE, NECK_TOP, NECK_RADIUS), (*SHOULDERS, SHOULDER_RADIUS),
                                 (*TORSO, TORSO_RADIUS)], gap=PARTICLE_RADIUS + 0.002)


def comb_direction(p: np.ndarray) -> np.ndarray:
    """(N, 3) unit directions the hair is combed at head-frame points ``p`` (N, 3): on the
    upper half of the head, along the surface away from the forehead (:data:`PARTING`),
    pressed onto the head; below it, hanging down and a little outward."""
    normal = p / np.linalg.norm(p, axis=1, keepdims=True)
    along = -PARTING + (normal @ PARTING)[:, None] * normal - 0.3 * normal  # pressed on: push_out keeps it outside
    hang = np.array([0.0, -1.0, 0.0]) + 0.15 * normal * np.array([1.0, 0.0, 1.0])
    wanted = np.where((normal[:, 1] > 0.1)[:, None], along, hang)
    return wanted / np.linalg.norm(wanted, axis=1, keepdims=True)


def make_hair(strand_count: int, seed: int = 2) -> Hair:
    """Roots spread evenly over the scalp (a Fibonacci sphere cut at the hairline), each
    strand combed back from the forehead over the head, then hanging, pushed out of the
    head, neck, shoulders and torso as it goes."""
    rng = np.random.default_rng(seed)
    d = scalp_directions(strand_count, hairline_ok, rng, oversample=4)
    lengths = rng.uniform(*STRAND_LENGTH, strand_count)
    lengths *= np.interp(d[:, 2], [-1.0, 0.0, 1.0], [1.0, 0.9, 0.75])  # shorter at the front
    counts = np.clip(np.round(lengths / SEGMENT_LENGTH), 8, 16).astype(np.int64)
    step = lengths / counts
    obstacles = rest_obstacles(PARTICLE_RADIUS + rng.uniform(0.002, 0.014, strand_count))
    roots = HEAD_RADIUS * d
    # out of the scalp, leaning the combed way, then turning into the comb gradually: no kinks
    rest = grow_strands(roots, 0.8 * d + comb_direction(roots), counts, step, comb_direction, obstacles, turn=1.5)
    shade = rng.uniform(0.72, 1.25, strand_count)[:, None]
    tint = 1.0 + rng.uniform(-0.08, 0.08, (strand_count, 3))
    colours = np.clip(np.asarray(HAIR_COLOUR) * shade * tint, 0.0, 1.0)
    return Hair(rest, counts, counts * step, colours)


def make_chain_set(hair: Hair) -> PointChainSet:
    """All strands as one chain set; frequency graded from root to tip along each strand."""
    frequency = np.concatenate([np.linspace(*FREQUENCY_HZ, n) for n in hair.segment_counts])
    return PointChainSet(hair.segment_counts, frequency=frequency, damping_ratio=DAMPING_RATIO,
                         particle_radius=PARTICLE_RADIUS, world_influence=WORLD_INFLUENCE, gravity=GRAVITY)


# -- 1. keyframes ---------------------------------------------------------------------------------
# One 7.6-second loop. Times in s, angles in rad, distances in m.
TURN = math.radians(120.0)
T_TURN = (1.9, 2.05)          # the fast turn: 120° in 0.15 s
T_TELEPORT = 4.2              # mid-stride
TRACK_PITCH = KeyframeTrack([0.0, 0.45, 0.9, 1.3, 7.6], [0.0, 0.35, -0.12, 0.0, 0.0], "smooth")
TRACK_YAW = KeyframeTrack([0.0, *T_TURN, 6.3, 7.3, 7.6], [0.0, 0.0, TURN, TURN, 0.0, 0.0], "smooth")
TRACK_WALK = KeyframeTrack([0.0, 3.0, 3.35, 4.85, 5.15, 7.6], [0.0, 0.0, 0.18, 1.98, 2.1, 2.1], "smooth")
WALK_DIRECTION = np.array([math.sin(TURN), 0.0, math.cos(TURN)])  # walks the way it faces after the turn
LOOP_SECONDS = TRACK_YAW.duration
SETTLE_SECONDS = 1.5          # the hair falls into place on the first pose before the loop starts
STRIP_TIMES = [0.0, 0.5, 1.98, 2.1, 3.7, 4.18, 4.2, 5.5]  # headless contact strip: start … stop
EVENTS = [(0.02, "start"), (1.3, "slow nod"), (T_TURN[0], "still"), (T_TURN[1], "fast 120° turn"),
          (2.6, "after the turn"), (3.0, "settling"), (T_TELEPORT - 0.05, "walk"), (T_TELEPORT, "before teleport"),
          (T_TELEPORT + 0.1, "after teleport"), (4.85, "walk"), (6.3, "stop"), (7.3, "turn back"), (7.6, "rest")]


def event_label(t: float) -> str:
    """What happens at ``t`` seconds into the loop (for captions)."""
    t = t % LOOP_SECONDS
    for end, label in EVENTS:
        if t < end:
            return label
    return EVENTS[-1][1]


@dataclass
class BodyPose:
    """The figure's primary motion at one time.

    Attributes:
        position: (3,) float64 m, world position of the body frame (between the feet).
        yaw: rad about +y (0 faces +z). pitch: rad, the head's nod (positive: face down).
        stride_phase: rad, the walk cycle (legs, arms and bob).
    """

    position: np.ndarray
    yaw: float
    pitch: float
    stride_phase: float

    def body_rotation(self) -> np.ndarray:
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])

    def head_rotation(self) -> np.ndarray:
        c, s = math.cos(self.pitch), math.sin(self.pitch)
        return self.body_rotation() @ np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])

    def body_to_world(self, points) -> np.ndarray:
        """Body-frame points (N, 3) or (3,) m → world, float64."""
        return np.asarray(points, np.float64) @ self.body_rotation().T + self.position

    def head_centre(self) -> np.ndarray:
        """(3,) float64 world m."""
        return self.head_to_world(np.zeros(3))

    def head_to_world(self, points) -> np.ndarray:
        """Head-frame points (origin at the head centre, facing +z) → world: the head's
        rigid transform, yaw and nod about the neck top, carried by the body."""
        neck_top = self.body_to_world(NECK_TOP)
        return (np.asarray(points, np.float64) + HEAD_OFFSET) @ self.head_rotation().T + neck_top


def sample_keyframes(t: float, offset=(0.0, 0.0, 0.0)) -> BodyPose:
    """The body pose at ``t`` seconds into the loop; ``offset`` (3,) m is where teleports have
    moved it."""
    t = t % LOOP_SECONDS
    walked = TRACK_WALK(t)
    phase = 2.0 * math.pi * walked / STRIDE
    bob = -0.025 * math.sin(phase) ** 2  # lowest with the legs apart
    position = walked * WALK_DIRECTION + np.array([0.0, bob, 0.0]) + np.asarray(offset, np.float64)
    if t >= T_TELEPORT:
        position = position + TELEPORT_JUMP
    return BodyPose(position, TRACK_YAW(t), TRACK_PITCH(t), phase)


# -- 2. the hair's animated pose and the colliders -----------------------------------------------
def hair_pose(hair: Hair, pose: BodyPose) -> np.ndarray:
    """(J, 3) float64 world: the rest shape carried rigidly by the head (``set_pose`` input)."""
    return pose.head_to_world(hair.rest_joints)


def colliders(pose: BodyPose):
    """``(spheres (1, 4), capsules (3, 7))`` world, m: the head; the neck from the shoulders
    to the head, the shoulders and the torso (``set_colliders`` input)."""
    spheres = np.array([[*pose.head_centre(), HEAD_RADIUS]])
    capsules = np.array([[*pose.body_to_world(NECK_BASE), *pose.body_to_world(NECK_TOP), NECK_RADIUS],
                         [*pose.body_to_world(SHOULDERS[0]), *pose.body_to_world(SHOULDERS[1]), SHOULDER_RADIUS],
                         [*pose.body_to_world(TORSO[0]), *pose.body_to_world(TORSO[1]), TORSO_RADIUS]])
    return spheres, capsules


# -- 3. springs: the scene ------------------------------------------------------------------------
@dataclass
class Frame:
    """What one step produced, for drawing and checks.

    Attributes:
        time: s into the loop. pose: the body pose. joints: (J, 3) float64 world m, the
        simulated strands (``solver.positions()``). spheres, capsules: the colliders given.
        teleported: whether this frame carried the hair across a jump.
    """

    time: float
    pose: BodyPose
    joints: np.ndarray
    spheres: np.ndarray
    capsules: np.ndarray
    teleported: bool


class Scene:
    """The figure's hair, its solver and the teleport offsets.

    Args:
        strand_count: how many strands. backend: "auto", "gpu" or "cpu".
        context: a moderngl context for the GPU backend (a window's), or None.
    """

    def __init__(self, strand_count: int = 300, backend: str = "auto", context=None):
        self.hair = make_hair(strand_count)
        self.chain_set = make_chain_set(self.hair)
        self.solver = Solver(self.chain_set, backend=backend, context=context)
        self.offset = np.zeros(3)     # m, moved by T in the window
        self._last_time = None
        self._jump = False

    def step(self, t: float, dt: float) -> Frame:
        """Advance to time ``t`` (s) by a frame of ``dt`` (s)."""
        local = t % LOOP_SECONDS
        last = self._last_time
        jump = self._jump or (last is not None and (local < last or last < T_TELEPORT <= local))
        self._jump, self._last_time = False, local
        pose = sample_keyframes(local, self.offset)       # 1. keyframes
        joints = hair_pose(self.hair, pose)               # 2. the animated hair and the body's colliders
        spheres, capsules = colliders(pose)
        if last is None:  # the first pose: let the hair fall into place from its combed shape
            self.settle(joints, spheres, capsules)
        self.solver.set_pose(joint_positions=joints)      # 3. springs
        self.solver.set_colliders(spheres=spheres, capsules=capsules, snap=jump)
        if jump:  # the keyframed teleport, the loop's seam or T: carry the hair across
            self.solver.teleport(keep_shape=True)
        self.solver.advance(dt)
        return Frame(local, pose, self.solver.positions(), spheres, capsules, jump)

    def settle(self, joints, spheres, capsules, seconds: float = SETTLE_SECONDS, dt: float = 1.0 / 60.0) -> None:
        """Hold the first pose for ``seconds`` so that the loop starts with the hair hanging."""
        for _ in range(round(seconds / dt)):
            self.solver.set_pose(joint_positions=joints)
            self.solver.set_colliders(spheres=spheres, capsules=capsules)
            self.solver.advance(dt)

    def teleport(self) -> None:
        """Jump the figure by :data:`USER_JUMP` (or back); the next ``step`` carries the hair."""
        self.offset = np.zeros(3) if self.offset.any() else USER_JUMP.copy()
        self._jump = True

    def strand_joints(self, frame: Frame):
        """The frame's strands as one (n + 1, 3) array each."""
        return [frame.joints[s] for s in self.chain_set.joint_slices()]

    def deepest_in_head(self, frame: Frame) -> float:
        """How far the deepest particle is inside the head sphere (without its particle
        radius), as a fraction of its strand's length; ≤ 0 when none is inside."""
        centre, radius = frame.spheres[0, :3], frame.spheres[0, 3]
        depth = radius - np.linalg.norm(frame.joints - centre, axis=1)
        per_joint = np.repeat(self.hair.lengths, self.hair.segment_counts + 1)
        pivot = np.zeros(len(depth), bool)
        pivot[self.chain_set.first_joint] = True
        return float(np.max(np.where(pivot, -np.inf, depth / per_joint)))


# -- drawing ----------------------------------------------------------------------------------------
SCALP = scalp_triangles(hairline_ok)  # (3·T, 3) head-frame normals inside the hairline


def draw(renderer: Renderer, framebuffer, scene: Scene, frame: Frame, camera: Camera) -> None:
    """Render one frame: ground, posts, shadow, body, head, hair."""
    pose = frame.pose
    renderer.ground(centre=(camera.target[0], 0.0, camera.target[2]), extent=80.0, colour=GROUND_COLOUR, tile=0.5)
    for (x, z), height, colour in PROPS:
        renderer.capsule((x, 0.0, z), (x, height, z), 0.06, colour)
    renderer.disc((pose.position[0], 0.003, pose.position[2]), (0.0, 1.0, 0.0), 0.33, SHADOW_COLOUR)
    body = pose.body_to_world
    swing = 0.35 * math.sin(pose.stride_phase)
    for side, hip in zip((1.0, -1.0), HIPS):
        foot = hip + LEG_LENGTH * np.array([0.0, -math.cos(swing), side * math.sin(swing)])
        renderer.capsule(body(hip), body(foot), LEG_RADIUS, TROUSER_COLOUR)
    for side, shoulder in zip((-1.0, 1.0), SHOULDERS):
        out = shoulder + np.array([0.03 * np.sign(shoulder[0]), -0.02, 0.0])
        hand = out + ARM_LENGTH * np.array([0.06 * np.sign(shoulder[0]), -math.cos(swing), side * math.sin(swing)])
        renderer.capsule(body(out), body(hand), ARM_RADIUS, SHIRT_COLOUR)
    for a, b, r, colour in ((*TORSO, TORSO_RADIUS, SHIRT_COLOUR), (*SHOULDERS, SHOULDER_RADIUS, SHIRT_COLOUR)):
        renderer.capsule(body(a), body(b), r, colour)
    neck = frame.capsules[0]
    renderer.capsule(neck[0:3], neck[3:6], NECK_RADIUS, SKIN_COLOUR)
    renderer.sphere(frame.spheres[0, :3], HEAD_RADIUS, SKIN_COLOUR)
    renderer.triangles(pose.head_to_world((HEAD_RADIUS + 0.001) * SCALP), SCALP @ pose.head_rotation().T,
                       SCALP_COLOUR)
    for eye in EYES:
        renderer.sphere(pose.head_to_world(eye), 0.012, EYE_COLOUR)
    renderer.sphere(pose.head_to_world([0.0, -0.02, 0.1]), 0.016, SKIN_COLOUR)  # nose
    renderer.strands(frame.joints, scene.chain_set.segment_counts + 1, scene.hair.colours, HAIR_WIDTH)
    renderer.render(framebuffer, camera, clear=SKY_COLOUR)


CAMERA_HEIGHT = 1.5      # m, the point looked at, above the figure's feet
CAMERA_ORBIT = (0.6, 0.3, 1.7)  # headless: azimuth, elevation (rad) and distance (m)


def follow_camera(pose: BodyPose, azimuth: float, elevation: float, distance: float, area=FULL_AREA) -> Camera:
    """A camera orbiting the figure's upper body (the walk's bob is left out of the target),
    framing it in ``area`` of the image (see :class:`Camera`)."""
    target = np.array([pose.position[0], CAMERA_HEIGHT, pose.position[2]])
    return Camera.orbit(target, azimuth, elevation, distance, fov_y_degrees=38.0, area=tuple(area))


# -- the demo: window and headless (gpu_jiggle.app.viewer) ---------------------------------------------
STRIP_FRAMES = len(STRIP_TIMES)
FRAME_SIZE = (480, 360)   # px of each headless frame
WINDOW_SIZE = (800, 600)  # px
TITLE = "gpu_jiggle 02: hair (drag orbit, scroll zoom, Esc quit, P pause, T teleport)"


def strip_frame_indices(frames: int, fps: float) -> list:
    """The frames for the contact strip: the moments of :data:`STRIP_TIMES` when the run
    covers them all, else frames spread evenly over the run."""
    wanted = [round(t * fps) for t in STRIP_TIMES]
    if wanted[-1] < frames:
        return wanted
    return spread_frames(frames, STRIP_FRAMES)


class HairDemo(Demo):
    """The scene as a :class:`gpu_jiggle.app.viewer.Demo`: the loop from its start, a camera
    following the figure that the mouse orbits and zooms.

    Args:
        ctx: the moderngl context (a window's or the headless one) for drawing, and for the
            solver unless ``backend`` is ``"cpu"``. strands, backend: as :class:`Scene`.
    """

    name = "02_hair_3d"
    title = TITLE

    def __init__(self, ctx, strands: int = 300, backend: str = "auto"):
        self.scene = Scene(strands, backend, context=None if backend == "cpu" else ctx)
        self.renderer = Renderer(ctx)
        self.camera_angles = list(CAMERA_ORBIT)  # azimuth, elevation (rad), distance (m)
        self.time = 0.0
        self.frame = None
        self.camera, self.aspect = None, 1.0  # the last drawn frame's

    def step(self, dt: float) -> None:
        self.frame = self.scene.step(self.time, dt)
        self.time = round(self.time + dt, 9)  # sums of 1/60 s land on the keyframed times, as i·dt does

    def draw(self, framebuffer, debug: bool) -> None:
        if self.frame is None:
            self.step(0.0)
        self.camera = follow_camera(self.frame.pose, *self.camera_angles, area=self.area)
        _, _, width, height = framebuffer.viewport
        self.aspect = width / height
        draw(self.renderer, framebuffer, self.scene, self.frame, self.camera)

    def subject_box(self):
        """The figure's bounds on the last drawn frame (head, hair, feet), fractions from the top-left."""
        if self.camera is None:
            return None
        f = self.frame
        head = f.spheres[:, None, :3] + HEAD_RADIUS * np.vstack([np.eye(3), -np.eye(3)])
        points = np.vstack([head.reshape(-1, 3), f.joints, [f.pose.position]])
        at = self.camera.project(points, self.aspect)
        return (*at.min(axis=0), *at.max(axis=0)) if len(at) else None

    def solvers(self) -> list:
        return [self.scene.solver]

    def caption(self) -> str:
        """The contact strip's caption: the time into the loop and what happens then."""
        return f"{self.frame.time:.2f} s  {event_label(self.frame.time)}"

    def teleport(self) -> None:
        self.scene.teleport()

    def status(self) -> list:
        cs = self.scene.chain_set
        return [f"{cs.chain_count} strands ({cs.segment_count} segments) on the {self.scene.solver.backend} backend"]

    def orbit(self, dx: float, dy: float) -> None:
        self.camera_angles[0] -= 0.008 * dx
        self.camera_angles[1] = min(max(self.camera_angles[1] + 0.008 * dy, -0.2), 1.4)

    def zoom(self, steps: float) -> None:
        self.camera_angles[2] = min(max(self.camera_angles[2] * 0.9 ** steps, 0.6), 8.0)

    def release(self) -> None:
        self.scene.solver.release()
        self.renderer.release()


# -- entry point ------------------------------------------------------------------------------------
def parse_args(argv=None):
    parser = demo_parser(__doc__, default_frames="one 7.6 s loop, 456 frames at 60 fps", size=WINDOW_SIZE,
                         strip=True, backend=True)
    parser.add_argument("--strands", type=int, default=300, help="number of hair strands (default 300)")
    return parse_demo_args(parser, argv, TITLE, counts=("strands",), screenshot_after=240)


def main(argv=None) -> int:
    args = parse_args(argv)
    return run(lambda ctx, a: HairDemo(ctx, a.strands, a.backend), args, round(LOOP_SECONDS * args.fps),
               headless=partial(run_strip, frame_size=FRAME_SIZE, strip_frames=strip_frame_indices))


if __name__ == "__main__":
    sys.exit(main())

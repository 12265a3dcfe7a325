"""Demo 01: a 2D creature whose tail, hair and wrist ribbon swing on damped springs.

Every frame runs the three stages of a pose in order (SPEC section 2):

1. keyframes: the body walks, hops, turns round suddenly and leans (``sample_keyframes``);
2. IK: the arm reaches for a firefly with analytic two-bone IK (``solve_ik``);
3. springs: the tail, the hair strands and the ribbon tied to the IK-posed wrist are one
   ragged :class:`gpu_jiggle.AngleChainSet`, given the IK-final pose with
   ``solver.set_pose`` and advanced with ``solver.advance(dt)``;

then ``draw`` renders the frame with :mod:`gpu_jiggle.render.draw2d`.

World units are the pixels of an 800×500 stage, x right, y up; gravity is in px/s².

Usage::

    python demos/01_tail_2d.py                 # a window when there is a display
    python demos/01_tail_2d.py --headless      # PNG contact strip and GIF in out/demo
    python demos/01_tail_2d.py --frames 30 --screenshot shot.png   # window, then a screenshot

Window keys (the frame loop and panel of :mod:`gpu_jiggle.app.viewer`): Esc quits, P pauses,
N steps, T teleports the creature across the stage (``solver.teleport(keep_shape=True)``: the
strands keep swinging instead of being dragged), F cycles the frame-rate cap, G hides the
panel.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from functools import partial

import numpy as np

from gpu_jiggle import AngleChainSet, Solver
from gpu_jiggle.render.draw2d import Renderer
from support.ik_2d import two_bone_fk_2d, two_bone_ik_2d
from support.keyframes import KeyframeTrack
from gpu_jiggle.app.viewer import Demo, demo_parser, parse_demo_args, run, run_strip, spread_frames
from gpu_jiggle.app.viewer.framing import view_2d

# -- stage --------------------------------------------------------------------------------------
VIEW = (0.0, 0.0, 800.0, 500.0)  # the visible world rectangle (x_min, y_min, x_max, y_max), px
GROUND_Y = 70.0                  # px
GRAVITY = (0.0, -600.0)          # px/s²
TELEPORT_JUMP = 220.0            # px, how far T carries the creature

SKY_COLOUR = "#dcefff"
GROUND_COLOUR = "#86b65a"
GROUND_LINE_COLOUR = "#3f6b2a"
SHADOW_COLOUR = (0.15, 0.25, 0.1, 0.25)
BODY_COLOUR = "#f2a541"
BELLY_COLOUR = "#f8d7a0"
LEG_COLOUR = "#c97c1e"
TAIL_COLOUR = "#7b3fa0"
HAIR_COLOUR = "#d1345b"
ARM_COLOUR = "#c97c1e"
RIBBON_COLOUR = "#1c8fb8"
EYE_COLOUR = "#ffffff"
PUPIL_COLOUR = "#202020"
FIREFLY_COLOUR = "#ffd400"
FIREFLY_OUT_OF_REACH_COLOUR = "#ff5a1f"

# -- the body, in its own frame: facing right, origin at the torso centre, px ------------------
TORSO_RADIUS = 40.0
BELLY_CENTRE, BELLY_RADIUS = (8.0, -6.0), 26.0
HEAD_CENTRE, HEAD_RADIUS = (20.0, 60.0), 30.0
HIP_HEIGHT = 72.0                         # torso centre above the ground when standing, px
LEG_ROOTS = ((-14.0, -28.0), (12.0, -28.0))
LEG_LENGTH = 46.0
SHOULDER = (18.0, 14.0)
UPPER_ARM, FOREARM = 34.0, 30.0           # px


@dataclass(frozen=True)
class Strand:
    """One chain of the creature's AngleChainSet, described in the body frame.

    Attributes:
        root: (2,) px, the pivot in the body frame (None: the ribbon, placed by IK).
        heading: radians, the root heading in the body frame (facing right).
        segments: segment count. length: px per segment.
        bend: radians, each segment's local target angle (its rest curl; + is counter-clockwise).
        frequency_hz: (root, tip) f in Hz, graded linearly along the chain: a stiffer root
            holds the shape, a softer tip swings.
        damping_ratio: ζ.
    """

    root: tuple | None
    heading: float
    segments: int
    length: float
    bend: float
    frequency_hz: tuple
    damping_ratio: float

    def frequencies(self) -> np.ndarray:
        return np.linspace(*self.frequency_hz, self.segments)


TAIL = Strand((-36.0, -10.0), math.radians(170.0), 8, 13.0, -0.15, (3.0, 3.0), 0.55)
HAIR = [Strand((HEAD_CENTRE[0] + 27.0 * math.cos(math.radians(a)), HEAD_CENTRE[1] + 27.0 * math.sin(math.radians(a))),
               math.radians(a), n, 10.0, 0.3, (4.0, 4.0), 0.55)
        for a, n in ((60, 4), (85, 5), (110, 6), (135, 5), (160, 4))]
RIBBON = Strand(None, 0.0, 5, 10.0, -0.25, (2.5, 2.0), 0.4)
STRANDS = [TAIL, *HAIR, RIBBON]   # chain order in the AngleChainSet
RIBBON_CHAIN = len(STRANDS) - 1


def make_chain_set() -> AngleChainSet:
    """The tail, five hair strands and the wrist ribbon as one ragged chain set."""
    return AngleChainSet([s.segments for s in STRANDS],
                         lengths=[s.length for s in STRANDS],
                         frequency=np.concatenate([s.frequencies() for s in STRANDS]),
                         damping_ratio=[s.damping_ratio for s in STRANDS],
                         gravity=GRAVITY)


# -- 1. keyframes ---------------------------------------------------------------------------------
# One 5.5-second loop: walk right and hop, land, turn round, run left leaning forward, brake
# leaning back, turn again, walk back to the start. Times in s, x and hop in px, lean in rad
# (counter-clockwise).
TRACK_X = KeyframeTrack([0.0, 1.5, 1.65, 2.3, 3.5, 3.7, 4.2, 5.5],
                        [400, 550, 555, 555, 260, 240, 240, 400], "smooth")
TRACK_HOP = KeyframeTrack([0.0, 0.8, 1.15, 1.5, 5.5], [0, 0, 45, 0, 0], "smooth")
TRACK_LEAN = KeyframeTrack([0.0, 1.45, 1.6, 1.8, 2.3, 2.7, 3.4, 3.6, 3.85, 5.5],
                           [0.0, 0.0, -0.15, 0.0, 0.0, 0.18, 0.18, -0.2, 0.0, 0.0], "smooth")
TRACK_FACING = KeyframeTrack([0.0, 1.9, 2.3, 3.8, 4.2, 5.5], [1, 1, -1, -1, 1, 1], "linear")
LOOP_SECONDS = TRACK_X.duration


@dataclass
class BodyPose:
    """The body's primary motion at one time.

    Attributes:
        position: (2,) float64 px, world position of the torso centre.
        lean: radians, counter-clockwise tilt of the whole body about its centre.
        facing: in [-1, 1]: +1 faces right, -1 left; in between during a turn (the body is
            mirrored by this factor along x).
        stride_phase: radians, the walk cycle (drives the legs).
        airborne: True while hopping.
    """

    position: np.ndarray
    lean: float
    facing: float
    stride_phase: float
    airborne: bool

    def to_world(self, points) -> np.ndarray:
        """Body-frame points (N, 2) px → world (N, 2) px: mirror by facing, lean, translate."""
        p = np.atleast_2d(np.asarray(points, np.float64)) * (self.facing, 1.0)
        c, s = math.cos(self.lean), math.sin(self.lean)
        return p @ np.array([[c, s], [-s, c]]) + self.position

    def heading_to_world(self, angle: float) -> float:
        """A body-frame heading (rad) → world heading (rad), mirrored and leaned like points.

        The mirror image of heading θ is π - θ; in between, the heading turns uniformly
        through straight up (``π/2 + facing·(θ - π/2)``), as a body turning round in depth
        would show it, instead of snapping over when ``facing`` crosses 0.
        """
        return 0.5 * math.pi + self.facing * (angle - 0.5 * math.pi) + self.lean


def sample_keyframes(t: float, offset_x: float = 0.0) -> BodyPose:
    """The body pose at ``t`` seconds; ``offset_x`` (px) is where teleports have moved it."""
    x = TRACK_X(t)
    hop = TRACK_HOP(t)
    phase = 2.0 * math.pi * x / 120.0  # one stride per 120 px walked
    bob = 0.0 if hop > 0.5 else 4.0 * math.sin(phase) ** 2  # smooth: |sin| would kick at every step
    position = np.array([x + offset_x, GROUND_Y + HIP_HEIGHT + hop + bob])
    return BodyPose(position, TRACK_LEAN(t), TRACK_FACING(t), phase, hop > 0.5)


# -- 2. IK --------------------------------------------------------------------------------------
@dataclass
class ArmPose:
    """The IK-solved arm in world space (px, radians)."""

    shoulder: np.ndarray
    elbow: np.ndarray
    hand: np.ndarray
    forearm_angle: float
    target: np.ndarray
    reachable: bool


def firefly_position(pose: BodyPose, t: float) -> np.ndarray:
    """The firefly the hand reaches for: it loops in front of the face, sometimes out of reach."""
    local = np.array([44.0 + 38.0 * math.sin(1.7 * t), 36.0 + 50.0 * math.sin(2.9 * t + 0.6)])
    return pose.position + local * (pose.facing, 1.0)


def solve_ik(pose: BodyPose, t: float) -> ArmPose:
    """Two-bone IK from the shoulder to the firefly; the elbow bends down whichever way the
    body faces."""
    shoulder = pose.to_world(SHOULDER)[0]
    target = firefly_position(pose, t)
    bend = +1 if pose.facing >= 0 else -1
    ik = two_bone_ik_2d(shoulder, target, UPPER_ARM, FOREARM, bend_sign=bend)
    elbow, hand = two_bone_fk_2d(shoulder, ik.shoulder_angle, ik.elbow_angle, UPPER_ARM, FOREARM)
    return ArmPose(shoulder, elbow, hand, ik.shoulder_angle + ik.elbow_angle, target, ik.reachable)


# -- 3. the springs' input ------------------------------------------------------------------------
def chain_pose(chain_set: AngleChainSet, pose: BodyPose, arm: ArmPose):
    """The IK-final pose of every chain: ``(root_position (C, 2), root_angle (C,),
    local_angle (S,))`` in px and radians, as ``Solver.set_pose`` takes it.

    Tail and hair hang off the keyframed body; the ribbon's root is the IK-posed hand and
    its heading the forearm's. Local bends are mirrored with the body (× facing).
    """
    root_position = np.zeros((chain_set.chain_count, 2))
    root_angle = np.zeros(chain_set.chain_count)
    local_angle = np.zeros(chain_set.segment_count)
    for c, (strand, span) in enumerate(zip(STRANDS, chain_set.chain_slices())):
        if c == RIBBON_CHAIN:
            root_position[c] = arm.hand
            root_angle[c] = arm.forearm_angle
        else:
            root_position[c] = pose.to_world(strand.root)[0]
            root_angle[c] = pose.heading_to_world(strand.heading)
        local_angle[span] = pose.facing * strand.bend
    return root_position, root_angle, local_angle


# -- drawing ----------------------------------------------------------------------------------------
def chain_joints(chain_set: AngleChainSet, joints: np.ndarray):
    """Split ``Solver.positions()`` (S + C, 2) into one (n + 1, 2) polyline per chain."""
    starts = chain_set.first_segment + np.arange(chain_set.chain_count)
    return [joints[s:s + n + 1] for s, n in zip(starts, chain_set.segment_counts)]


def ellipse(centre, radii, count: int = 24) -> np.ndarray:
    a = np.linspace(0.0, 2.0 * math.pi, count, endpoint=False)
    return np.stack([centre[0] + radii[0] * np.cos(a), centre[1] + radii[1] * np.sin(a)], axis=1)


def draw(renderer: Renderer, framebuffer, pose: BodyPose, arm: ArmPose, strands, view=VIEW) -> None:
    """Render one frame, showing the world rectangle ``view``: ground, shadow, tail, legs,
    body, hair, head, arm, ribbon, firefly."""
    x0, y0, x1, _ = view
    renderer.polygon([[x0, min(y0, 0.0)], [x1, min(y0, 0.0)], [x1, GROUND_Y], [x0, GROUND_Y]], GROUND_COLOUR)
    renderer.polyline([[x0, GROUND_Y], [x1, GROUND_Y]], 3.0, GROUND_LINE_COLOUR, round_joints=False)
    for gx in np.arange(30.0 + 90.0 * math.floor(x0 / 90.0), x1, 90.0):  # grass tufts
        renderer.polyline([[gx - 5, GROUND_Y], [gx - 8, GROUND_Y + 10]], 2.0, GROUND_LINE_COLOUR)
        renderer.polyline([[gx, GROUND_Y], [gx + 1, GROUND_Y + 13]], 2.0, GROUND_LINE_COLOUR)
        renderer.polyline([[gx + 5, GROUND_Y], [gx + 9, GROUND_Y + 9]], 2.0, GROUND_LINE_COLOUR)
    height = pose.position[1] - GROUND_Y - HIP_HEIGHT
    shrink = 1.0 / (1.0 + max(height, 0.0) / 60.0)
    renderer.polygon(ellipse((pose.position[0], GROUND_Y), (46.0 * shrink, 7.0 * shrink)), SHADOW_COLOUR)

    tail, *hair, ribbon = strands
    renderer.polyline(tail, np.linspace(14.0, 4.0, len(tail)), TAIL_COLOUR)
    legs = []
    for i, root in enumerate(LEG_ROOTS):
        swing = 0.1 if pose.airborne else 0.45 * math.sin(pose.stride_phase + math.pi * i)
        tuck = 12.0 if pose.airborne else 0.0
        foot = (root[0] + LEG_LENGTH * math.sin(swing) - tuck, root[1] - LEG_LENGTH * math.cos(swing) + tuck)
        legs.append(pose.to_world([root, foot]))
    renderer.polyline(legs[0], 11.0, LEG_COLOUR)
    renderer.circle(pose.position, TORSO_RADIUS, BODY_COLOUR)
    renderer.circle(pose.to_world(BELLY_CENTRE)[0], BELLY_RADIUS, BELLY_COLOUR)
    renderer.polyline(legs[1], 11.0, LEG_COLOUR)
    for strand in hair:
        renderer.polyline(strand, np.linspace(7.0, 3.0, len(strand)), HAIR_COLOUR)
    for ear_x in (0.0, 24.0):
        ear = np.array([[ear_x - 12.0, 80.0], [ear_x - 2.0, 104.0], [ear_x + 8.0, 80.0]])
        renderer.polygon(pose.to_world(ear), BODY_COLOUR)
    head = pose.to_world(HEAD_CENTRE)[0]
    renderer.circle(head, HEAD_RADIUS, BODY_COLOUR)
    renderer.circle(pose.to_world((36.0, 64.0))[0], 8.0, EYE_COLOUR)
    renderer.circle(pose.to_world((39.0, 64.0))[0], 4.0, PUPIL_COLOUR)
    renderer.circle(pose.to_world((48.0, 52.0))[0], 4.0, PUPIL_COLOUR)  # nose

    renderer.polyline(np.stack([arm.shoulder, arm.elbow, arm.hand]), 9.0, ARM_COLOUR)
    renderer.polyline(ribbon, np.linspace(6.0, 3.0, len(ribbon)), RIBBON_COLOUR)
    renderer.circle(arm.hand, 6.5, ARM_COLOUR)
    glow = FIREFLY_COLOUR if arm.reachable else FIREFLY_OUT_OF_REACH_COLOUR
    renderer.circle(arm.target, 13.0, (1.0, 0.95, 0.3, 0.35))
    renderer.circle(arm.target, 5.0, glow)
    renderer.render(framebuffer, view, clear=SKY_COLOUR)


# -- the scene: one frame = keyframes → IK → springs → draw ---------------------------------------
class Scene:
    """The creature's rig, its solver and the teleport offset."""

    def __init__(self, backend: str, context=None):
        self.chain_set = make_chain_set()
        self.solver = Solver(self.chain_set, backend=backend, context=context)
        self.offset_x = 0.0  # px, moved by teleports

    def step(self, t: float, dt: float):
        """Advance to time ``t`` (s) by a frame of ``dt`` (s); returns what ``draw`` needs."""
        pose = sample_keyframes(t, self.offset_x)      # 1. keyframes: the body's primary motion
        arm = solve_ik(pose, t)                        # 2. IK on the keyframed body
        root_position, root_angle, local_angle = chain_pose(self.chain_set, pose, arm)
        self.solver.set_pose(root_position, root_angle, local_angle)  # 3. springs get the IK-final pose
        self.solver.advance(dt)                        #    and run fixed substeps for this frame
        strands = chain_joints(self.chain_set, self.solver.positions())
        return pose, arm, strands

    def teleport(self, t: float) -> None:
        """Jump the creature across the stage; the next ``step`` carries its strands along."""
        x = TRACK_X(t) + self.offset_x
        self.offset_x = 0.0 if self.offset_x else (-TELEPORT_JUMP if x > 0.5 * (VIEW[0] + VIEW[2]) else TELEPORT_JUMP)
        self.solver.teleport(keep_shape=True)


# -- the demo: window and headless (gpu_jiggle.app.viewer) ---------------------------------------------
STRIP_FRAMES = 8
FRAME_SIZE = (480, 300)   # px of each headless frame (the world view scaled to fit)
WINDOW_SIZE = (800, 500)  # px: one world unit per pixel
TITLE = "gpu_jiggle 01: tail and hair (Esc quit, P pause, T teleport)"


class TailDemo(Demo):
    """The scene as a :class:`gpu_jiggle.app.viewer.Demo`, from the start of the loop.

    Args:
        ctx: the moderngl context (a window's or the headless one) for drawing, and for the
            solver unless ``backend`` is ``"cpu"``. backend: as :class:`Scene`.
    """

    name = "01_tail_2d"
    title = TITLE

    def __init__(self, ctx, backend: str = "auto"):
        self.scene = Scene(backend, context=None if backend == "cpu" else ctx)
        self.renderer = Renderer(ctx)
        self.time = 0.0
        self.drawn = None  # (pose, arm, strands) of the last step
        self.view = VIEW   # the world rectangle last drawn

    def step(self, dt: float) -> None:
        self.drawn = self.scene.step(self.time, dt)
        self.time = round(self.time + dt, 9)  # sums of 1/60 s land on the keyframed times, as i·dt does

    def draw(self, framebuffer, debug: bool) -> None:
        if self.drawn is None:
            self.step(0.0)
        _, _, width, height = framebuffer.viewport
        self.view = view_2d(VIEW, self.area, (width, height))  # the stage beside the panel, in a window
        draw(self.renderer, framebuffer, *self.drawn, view=self.view)

    def subject_box(self):
        """The creature's bounds (body, head, strands) on the last drawn frame, fractions from the top-left."""
        pose, _, strands = self.drawn
        x0, y0, x1, y1 = self.view
        head = pose.to_world(HEAD_CENTRE)
        points = np.vstack([pose.position - TORSO_RADIUS, pose.position + TORSO_RADIUS, head - HEAD_RADIUS,
                            head + HEAD_RADIUS, *strands])
        return ((points[:, 0].min() - x0) / (x1 - x0), (y1 - points[:, 1].max()) / (y1 - y0),
                (points[:, 0].max() - x0) / (x1 - x0), (y1 - points[:, 1].min()) / (y1 - y0))

    def solvers(self) -> list:
        return [self.scene.solver]

    def teleport(self) -> None:
        self.scene.teleport(self.time)

    def status(self) -> list:
        cs = self.scene.chain_set
        return [f"{cs.chain_count} chains ({cs.segment_count} segments) on the {self.scene.solver.backend} backend"]

    def release(self) -> None:
        self.scene.solver.release()
        self.renderer.release()


# -- entry point ------------------------------------------------------------------------------------
def parse_args(argv=None):
    parser = demo_parser(__doc__, default_frames="one 5.5 s loop, 330 frames at 60 fps", size=WINDOW_SIZE,
                         strip=True, backend=True)
    return parse_demo_args(parser, argv, TITLE, screenshot_after=240)


def main(argv=None) -> int:
    args = parse_args(argv)
    return run(lambda ctx, a: TailDemo(ctx, a.backend), args, round(LOOP_SECONDS * args.fps),
               headless=partial(run_strip, frame_size=FRAME_SIZE,
                                strip_frames=lambda frames, fps: spread_frames(frames, STRIP_FRAMES)))


if __name__ == "__main__":
    sys.exit(main())

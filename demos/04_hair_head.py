"""Demo 04: thousands of hair strands on a head that follows keyframes or the mouse, drawn
straight from the solver's buffers.

The head (a sphere) turns on a neck (a capsule) above shoulders and a torso (capsules); all
four are colliders. Each strand is a point chain of 12–24 segments combed back from the
forehead and hanging, under gravity and a light wind. Each frame:

1. the head's rotation: a keyframed loop (turns, a fast glance, a tilt, a shake, a nod) or,
   with M in the window, toward the mouse pointer, smoothed by a first-order lag
   (:class:`gpu_jiggle.LagFollower`);
2. the hair's animated pose (its combed shape carried rigidly by the head) and the colliders
   (``solver.set_pose``, ``solver.set_colliders``);
3. ``solver.advance(dt)``, then the strands are drawn by ``shaders/hair_strand.vert`` as
   camera-facing ribbons (or lines, R) straight from the solver's storage buffers (no
   read-back).

World units are metres, y up; the figure faces +z.

Usage::

    python demos/04_hair_head.py                      # a window when there is a display
    python demos/04_hair_head.py --headless           # PNGs in out/demo
    python demos/04_hair_head.py --strands 8000       # more hair
    python demos/04_hair_head.py --frames 30 --screenshot shot.png   # window, then a screenshot

Window: drag to orbit, scroll to zoom; panel (Dear ImGui) or keys: M head follows the mouse,
R ribbons or lines, P pause, N step, T teleport the figure, D debug view (targets, simulated
strands, colliders), F frame-rate cap, arrows tune, Esc quits.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np

from gpu_jiggle import LagFollower, PointChainSet, Solver
from gpu_jiggle.render.chain_draw import ChainDrawer
from gpu_jiggle.render.draw3d import Camera, Renderer, scalp_triangles
from gpu_jiggle.character.groom import grow_strands, head_frame_obstacles, scalp_directions
from support.keyframes import KeyframeTrack
from gpu_jiggle.app.viewer import Demo, Parameter, demo_parser, parse_demo_args, run

# -- the body: body frame, feet on y = 0, facing +z, metres -----------------------------------------
NECK_BASE, NECK_TOP, NECK_RADIUS = np.array([0.0, 1.42, -0.01]), np.array([0.0, 1.58, 0.0]), 0.048
HEAD_OFFSET = np.array([0.0, 0.11, 0.015])   # the head's centre from the neck top (it turns about the neck top)
HEAD_RADIUS = 0.105
SHOULDERS, SHOULDER_RADIUS = (np.array([-0.19, 1.42, -0.01]), np.array([0.19, 1.42, -0.01])), 0.065
TORSO, TORSO_RADIUS = (np.array([0.0, 0.98, 0.0]), np.array([0.0, 1.30, -0.01])), 0.16
EYES = (np.array([-0.037, 0.012, 0.094]), np.array([0.037, 0.012, 0.094]))  # head frame
TELEPORT_JUMP = np.array([1.6, 0.0, -0.8])   # m, what T adds (or takes away)

SKY_COLOUR = "#d6e4ee"
GROUND_COLOUR = "#b8b3a4"
SKIN_COLOUR = "#e5b393"
SHIRT_COLOUR = "#34597a"
EYE_COLOUR = "#202028"
HAIR_COLOUR = (0.45, 0.22, 0.09)   # auburn; each strand varies around it (hair_strand.vert)
LIGHT = (0.35, 0.8, 0.5)

# -- hair -----------------------------------------------------------------------------------------------
STRAND_LENGTH = (0.26, 0.46)       # m
SEGMENT_LENGTH = 0.02              # m, about; 12-24 segments per strand
SEGMENTS = (12, 24)
PARTICLE_RADIUS = 0.004            # m
# Stiffness against gravity: a segment of length L pulled sideways by gravity g bends from
# its target by about atan(g / (k·L)), k = (2πf)², and the bends add up along the strand
# (each target follows its parent). With 2 cm segments, 2.6 Hz bends each one 60° and
# long strands curl up and whirl; 4.5 Hz at the tip and 10 Hz at the root keep them calm.
FREQUENCY_HZ = 4.5                 # at the tip; ROOT_STIFFER times that at the root
ROOT_STIFFER = 2.2
DAMPING_RATIO = 0.55
AIR_DRAG = 2.0                     # 1/s: the springs damp motion relative to the scalp (model v2);
                                   # this damps the strands' motion through the air
GRAVITY = 9.81                     # m/s² down
WORLD_INFLUENCE = 0.35             # how much of the scalp's motion through the world a strand feels
WIND = 1.0                         # m/s² along +x, with gusts
GUSTS = 2.5                        # m/s²
HAIR_WIDTH = (0.0032, 0.0016)      # m, ribbon width at the root and the tip
PARTING = np.array([0.0, 0.3, 1.0]) / math.hypot(0.3, 1.0)  # head frame: on the forehead, below the hairline;
                                                             # the hair is combed away from it
SETTLE_SECONDS = 0.75              # the first pose is held this long so the hair hangs before the loop
DEBUG_LINES = 600                  # about how many strands the debug view draws as lines


@dataclass(frozen=True)
class Hair:
    """The hair's static description, head frame (origin at the head's centre).

    Attributes:
        rest_joints: (J, 3) float64 m: per strand its root on the scalp, then one joint per
            segment tip, combed and hanging (the animated shape).
        segment_counts: (C,) ints in :data:`SEGMENTS`.
    """

    rest_joints: np.ndarray
    segment_counts: np.ndarray


def on_scalp(d: np.ndarray) -> np.ndarray:
    """(N,) bool: which unit directions (N, 3) from the head's centre are inside the
    hairline: high over the face, low at the nape."""
    around = np.abs(np.arctan2(d[:, 0], d[:, 2]))  # 0 in front, π behind
    lowest = np.interp(around, [0.0, 0.7, 1.4, 2.2, math.pi], [0.55, 0.38, 0.02, -0.35, -0.5])
    return d[:, 1] > lowest


def body_obstacles(clearance):
    """The colliders at rest in the head frame, widened by the clearance kept while combing:
    ``[(a (3,), b (3,), radius)]``; ``clearance`` (N,) m per strand for the head (layers
    give the hair volume)."""
    return head_frame_obstacles(NECK_TOP + HEAD_OFFSET, HEAD_RADIUS + clearance,
                                [(NECK_BASE, NECK_TOP, NECK_RADIUS), (*SHOULDERS, SHOULDER_RADIUS),
                                 (*TORSO, TORSO_RADIUS)], gap=PARTICLE_RADIUS + 0.003)


def flow(p: np.ndarray) -> np.ndarray:
    """(N, 3) unit directions the hair is combed at head-frame points ``p``: along the scalp
    away from :data:`PARTING` (up and back from the forehead, back over the crown and the
    sides) on the upper head; straight down, a little outward, below."""
    n = p / np.linalg.norm(p, axis=1, keepdims=True)
    along = -(PARTING - (n @ PARTING)[:, None] * n) - 0.25 * n
    hang = np.array([0.0, -1.0, 0.0]) + 0.1 * n * np.array([1.0, 0.0, 1.0])
    w = np.clip((n[:, 1] + 0.1) / 0.3, 0.0, 1.0)[:, None]  # 1 on the crown, 0 below the ears
    wanted = w * along / np.linalg.norm(along, axis=1, keepdims=True) + (1.0 - w) * hang
    return wanted / np.linalg.norm(wanted, axis=1, keepdims=True)


def make_hair(strand_count: int, seed: int = 4) -> Hair:
    """Roots spread over the scalp (a Fibonacci sphere cut at the hairline); each strand
    leaves the scalp, turns gradually into the combed flow, and is kept out of the head,
    neck, shoulders and torso as it grows."""
    rng = np.random.default_rng(seed)
    d = scalp_directions(strand_count, on_scalp, rng, oversample=3)
    length = rng.uniform(*STRAND_LENGTH, strand_count) * np.interp(d[:, 2], [-1.0, 0.3, 1.0], [1.0, 0.85, 0.55])
    counts = np.clip(np.round(length / SEGMENT_LENGTH), *SEGMENTS).astype(np.int64)
    step = length / counts
    obstacles = body_obstacles(PARTICLE_RADIUS + rng.uniform(0.002, 0.018, strand_count))
    p = HEAD_RADIUS * d
    # out of the scalp toward the flow, turning a little further into it before the first segment
    rest = grow_strands(p, d + flow(p) + 1.2 * flow(p), counts, step, flow, obstacles, turn=1.2)
    return Hair(rest, counts)


def strand_frequencies(counts: np.ndarray, tip_hz: float) -> np.ndarray:
    """(S,) Hz: ``ROOT_STIFFER × tip_hz`` at each strand's root down to ``tip_hz`` at its tip."""
    return np.concatenate([tip_hz * np.linspace(ROOT_STIFFER, 1.0, n) for n in counts])


def make_chain_set(hair: Hair, tip_hz: float = FREQUENCY_HZ, damping: float = DAMPING_RATIO,
                   gravity: float = GRAVITY) -> PointChainSet:
    return PointChainSet(hair.segment_counts, frequency=strand_frequencies(hair.segment_counts, tip_hz),
                         damping_ratio=damping, particle_radius=PARTICLE_RADIUS, world_influence=WORLD_INFLUENCE,
                         gravity=(0.0, -gravity, 0.0), air_drag=AIR_DRAG)


# -- the head's motion -----------------------------------------------------------------------------------
# One 8-second loop of (yaw, pitch, roll) in radians: a slow look left, a fast glance right,
# a tilt, a shake, a nod, back to rest. Positive pitch: face down.
KEYS = [(0.0, (0.0, 0.0, 0.0)), (1.2, (0.9, -0.05, 0.0)), (2.2, (0.9, -0.05, 0.0)), (2.6, (-0.8, 0.0, 0.0)),
        (3.3, (-0.8, 0.0, 0.3)), (4.2, (0.0, 0.0, 0.0)), (4.45, (0.35, 0.0, 0.0)), (4.7, (-0.35, 0.0, 0.0)),
        (4.95, (0.35, 0.0, 0.0)), (5.2, (-0.35, 0.0, 0.0)), (5.45, (0.0, 0.0, 0.0)), (6.2, (0.0, 0.45, 0.0)),
        (6.7, (0.0, -0.3, 0.0)), (7.2, (0.0, 0.0, 0.0)), (8.0, (0.0, 0.0, 0.0))]
TRACK = KeyframeTrack([t for t, _ in KEYS], [v for _, v in KEYS], "smooth", loop=True)
LOOP_SECONDS = KEYS[-1][0]
MOUSE_HALF_LIFE = 0.08  # s, how closely the head follows the pointer
EASE_SECONDS = 0.8      # s, back from the pointer to the keyframes through the same lag


def head_rotation(yaw: float, pitch: float, roll: float) -> np.ndarray:
    """(3, 3) head → world rotation: yaw about +y, then pitch about the head's x, roll about its z."""
    cy, sy, cp, sp, cr, sr = (math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch), math.cos(roll),
                              math.sin(roll))
    y = np.array([[cy, 0.0, sy], [0.0, 1.0, 0.0], [-sy, 0.0, cy]])
    x = np.array([[1.0, 0.0, 0.0], [0.0, cp, -sp], [0.0, sp, cp]])
    z = np.array([[cr, -sr, 0.0], [sr, cr, 0.0], [0.0, 0.0, 1.0]])
    return y @ x @ z


@dataclass
class HeadPose:
    """The head at one time: ``rotation`` (3, 3) head → world, ``offset`` (3,) m where the
    figure stands (teleports move it)."""

    rotation: np.ndarray
    offset: np.ndarray

    def neck_top(self) -> np.ndarray:
        return NECK_TOP + self.offset

    def to_world(self, points) -> np.ndarray:
        """Head-frame points (N, 3) or (3,) → world, float64."""
        return (np.asarray(points, np.float64) + HEAD_OFFSET) @ self.rotation.T + self.neck_top()

    def centre(self) -> np.ndarray:
        return self.to_world(np.zeros(3))

    def colliders(self):
        """(spheres (1, 4), capsules (3, 7)) world m: head; neck, shoulders, torso."""
        o = self.offset
        spheres = np.array([[*self.centre(), HEAD_RADIUS]])
        capsules = np.array([[*(NECK_BASE + o), *self.neck_top(), NECK_RADIUS],
                             [*(SHOULDERS[0] + o), *(SHOULDERS[1] + o), SHOULDER_RADIUS],
                             [*(TORSO[0] + o), *(TORSO[1] + o), TORSO_RADIUS]])
        return spheres, capsules


SCALP = scalp_triangles(on_scalp)  # (3·T, 3) head-frame normals inside the hairline


# -- the demo -------------------------------------------------------------------------------------------------
class HairHead(Demo):
    """The figure, its hair and solver, the camera; the members of :class:`gpu_jiggle.app.viewer.Demo`.

    Args:
        ctx: the moderngl context (a window's or the headless one) for solver and drawing.
        strands: strand count. follow_mouse: start with the head following the pointer.
        lines: draw lines instead of ribbons.
    """

    name = "04_hair_head"
    title = "gpu_jiggle 04: hair on a head"

    def __init__(self, ctx, strands: int = 3000, follow_mouse: bool = False, lines: bool = False):
        self.ctx = ctx
        self.parameters = [
            Parameter("strands", "strands", strands, 100, 40000, kind="int", log=True, step=2.0, rebuild=True,
                      fmt="%d"),
            Parameter("frequency", "f tip (Hz)", FREQUENCY_HZ, 0.5, 9.0, step=0.25),
            Parameter("damping", "damping ratio", DAMPING_RATIO, 0.05, 1.5, step=0.05),
            Parameter("gravity", "gravity (m/s2)", GRAVITY, 0.0, 30.0, step=1.0, fmt="%.1f"),
            Parameter("wind", "wind (m/s2)", WIND, 0.0, 20.0, step=0.5, fmt="%.1f"),
            Parameter("gusts", "gusts (m/s2)", GUSTS, 0.0, 20.0, step=0.5, fmt="%.1f"),
            Parameter("mouse", "head follows the mouse", bool(follow_mouse), kind="toggle", letter="M"),
            Parameter("lines", "draw lines (else ribbons)", bool(lines), kind="toggle", letter="R"),
        ]
        self.drawer = ChainDrawer(ctx)
        self.renderer = Renderer(ctx)
        self.solver = None
        self.offset = np.zeros(3)
        self.camera_angles = [0.55, 0.12, 1.25]   # azimuth, elevation (rad), distance (m)
        self.angles = np.zeros(3)                 # the head's (yaw, pitch, roll) now, rad
        self.looking = LagFollower(MOUSE_HALF_LIFE, self.angles, backend="cpu")
        self.pointer_at = None
        self.aspect = 16 / 9  # the last drawn frame's
        self._build(strands)

    def _build(self, strands: int) -> None:
        if self.solver is not None:
            self.solver.release()
        self.hair = make_hair(strands)
        self.chain_set = make_chain_set(self.hair, self.value("frequency"), self.value("damping"),
                                        self.value("gravity"))
        # drawn from the joints alone (hair_strand.vert): no rotations to compute
        self.solver = Solver(self.chain_set, backend="gpu", context=self.ctx, rotation_outputs=False)
        self._apply_wind()
        self.time = 0.0
        self._jump = False
        self._easing = 0.0
        self.pose = self._pose(0.0)
        self._settle()

    def _settle(self) -> None:
        """Hold the first pose :data:`SETTLE_SECONDS` so that the loop starts with the hair hanging."""
        spheres, capsules = self.pose.colliders()
        joints = self.pose.to_world(self.hair.rest_joints)
        for _ in range(round(SETTLE_SECONDS * 30)):
            self.solver.set_pose(joint_positions=joints)
            self.solver.set_colliders(spheres=spheres, capsules=capsules)
            self.solver.advance(1.0 / 30.0)

    def set_parameter(self, key, value) -> None:
        if key == "strands":
            self._build(int(value))
        elif key == "frequency":
            self.solver.set_parameters(frequency=strand_frequencies(self.hair.segment_counts, value))
        elif key == "damping":
            self.solver.set_parameters(damping_ratio=value)
        elif key == "gravity":
            self.solver.set_parameters(gravity=(0.0, -value, 0.0))
        elif key == "mouse":
            if value:  # the lag starts from where the head is
                self.looking = LagFollower(MOUSE_HALF_LIFE, self.angles, backend="cpu")
            else:
                self._easing = EASE_SECONDS
        elif key in ("wind", "gusts"):
            self._apply_wind(**{key: value})  # the session stores the value once accepted

    def _apply_wind(self, **changed) -> None:
        """The wind of the panel's values, those in ``changed`` (key=value) taken instead."""
        v = {key: changed.get(key, self.value(key)) for key in ("wind", "gusts")}
        self.solver.set_wind(acceleration=(v["wind"], 0.0, 0.0), gust_amplitude=v["gusts"],
                             gust_wave_vector=(2.0 * math.pi / 1.5, 0.0, 0.0), gust_frequency=0.6)

    # -- camera and pointer ------------------------------------------------------------------------
    def camera(self) -> Camera:
        azimuth, elevation, distance = self.camera_angles
        target = np.array([0.0, 1.55, 0.0]) + self.offset
        return Camera.orbit(target, azimuth, elevation, distance, fov_y_degrees=38.0, near=0.02, far=100.0,
                            area=tuple(self.area))  # beside the panel, in a window

    def orbit(self, dx, dy) -> None:
        self.camera_angles[0] -= 0.008 * dx
        self.camera_angles[1] = min(max(self.camera_angles[1] + 0.008 * dy, -0.5), 1.4)

    def zoom(self, steps) -> None:
        self.camera_angles[2] = min(max(self.camera_angles[2] * 0.9 ** steps, 0.4), 6.0)

    def pointer(self, x, y) -> None:
        self.pointer_at = (x, y)

    def _mouse_angles(self, aspect: float = 16 / 9) -> np.ndarray:
        """(yaw, pitch, roll) turning the face toward the point under the pointer on a plane
        0.6 m in front of the head, facing the camera."""
        if self.pointer_at is None:
            return np.zeros(3)
        camera = self.camera()
        inverse = np.linalg.inv(camera.view_projection(aspect))
        x, y = 2.0 * self.pointer_at[0] - 1.0, 1.0 - 2.0 * self.pointer_at[1]
        near, far = (inverse @ [x, y, z, 1.0] for z in (-1.0, 1.0))
        near, far = near[:3] / near[3], far[:3] / far[3]
        head = NECK_TOP + HEAD_OFFSET + self.offset
        facing = camera.eye - head
        facing /= np.linalg.norm(facing)
        plane_point = head + 0.6 * facing
        ray = far - near
        t = float((plane_point - near) @ facing) / float(ray @ facing)
        look = near + t * ray - head
        yaw = math.atan2(look[0], look[2])
        pitch = -math.atan2(look[1], math.hypot(look[0], look[2]))
        return np.array([min(max(yaw, -1.3), 1.3), min(max(pitch, -0.6), 0.6), 0.0])

    # -- a frame -------------------------------------------------------------------------------------
    def _pose(self, t: float, dt: float = 0.0) -> HeadPose:
        """The head at ``t`` s: keyframes, or toward the pointer through the lag (also for
        :data:`EASE_SECONDS` after going back to keyframes, so the head does not snap)."""
        target = self._mouse_angles() if self.value("mouse") else TRACK(t % LOOP_SECONDS)
        if self.value("mouse") or self._easing > 0.0:
            self.angles = self.looking.update(target, dt).astype(np.float64)
            self._easing -= dt
        else:
            self.angles = np.asarray(target, np.float64)
        return HeadPose(head_rotation(*self.angles), self.offset.copy())

    def step(self, dt: float) -> None:
        self.time += dt
        self.pose = self._pose(self.time, dt)
        spheres, capsules = self.pose.colliders()
        self.solver.set_pose(joint_positions=self.pose.to_world(self.hair.rest_joints))
        self.solver.set_colliders(spheres=spheres, capsules=capsules, snap=self._jump)
        if self._jump:  # carry the hair across the jump with its shape, instead of dragging it
            self.solver.teleport(keep_shape=True)
            self._jump = False
        self.solver.advance(dt)

    def teleport(self) -> None:
        """The figure jumps by :data:`TELEPORT_JUMP` (or back); the camera goes along."""
        self.offset = np.zeros(3) if self.offset.any() else TELEPORT_JUMP.copy()
        self._jump = True

    # -- drawing -----------------------------------------------------------------------------------------
    def draw(self, framebuffer, debug: bool) -> None:
        camera = self.camera()
        _, _, width, height = framebuffer.viewport
        self.aspect = width / height
        pose = self.pose
        o = self.offset
        r = self.renderer
        r.ground(centre=(camera.target[0], 0.0, camera.target[2]), extent=60.0, colour=GROUND_COLOUR, tile=0.5)
        r.disc((o[0], 0.003, o[2]), (0.0, 1.0, 0.0), 0.35, (0.1, 0.1, 0.08, 0.3))
        for a, b, radius, colour in ((*TORSO, TORSO_RADIUS, SHIRT_COLOUR), (*SHOULDERS, SHOULDER_RADIUS, SHIRT_COLOUR),
                                     (NECK_BASE, NECK_TOP, NECK_RADIUS, SKIN_COLOUR)):
            r.capsule(a + o, b + o, radius, colour)
        for side in (-1.0, 1.0):  # arms hanging from the shoulders
            shoulder = np.array([side * 0.22, 1.40, -0.01]) + o
            r.capsule(shoulder, shoulder + [side * 0.05, -0.58, 0.02], 0.045, SHIRT_COLOUR)
        r.sphere(pose.centre(), HEAD_RADIUS, SKIN_COLOUR)
        r.triangles(pose.to_world((HEAD_RADIUS + 0.0015) * SCALP), SCALP @ pose.rotation.T,
                    tuple(0.6 * c for c in HAIR_COLOUR))
        for eye in EYES:
            r.sphere(pose.to_world(eye), 0.012, EYE_COLOUR)
        r.sphere(pose.to_world([0.0, -0.02, 0.104]), 0.016, SKIN_COLOUR)  # nose
        r.render(framebuffer, camera, clear=SKY_COLOUR, light_direction=LIGHT)
        self.drawer.hair(framebuffer, self.solver, camera, colour=HAIR_COLOUR, width=HAIR_WIDTH,
                         light_direction=LIGHT, sky=SKY_COLOUR, as_lines=bool(self.value("lines")))
        if debug:  # a sample of the strands: targets magenta, simulated yellow; colliders translucent
            self.drawer.debug(framebuffer, self.solver, camera, most=DEBUG_LINES)
            spheres, capsules = pose.colliders()
            clear = (1.0, 0.25, 0.2, 0.3)
            r.sphere(spheres[0, :3], spheres[0, 3] + PARTICLE_RADIUS, clear)
            for c in capsules:
                r.capsule(c[0:3], c[3:6], c[6] + PARTICLE_RADIUS, clear)
            r.render(framebuffer, camera, clear=None, light_direction=LIGHT)

    def solvers(self) -> list:
        return [] if self.solver is None else [self.solver]

    def subject_box(self):
        """The head's bounds on the screen, fractions from the top-left."""
        centre = self.pose.centre()
        at = self.camera().project(centre + HEAD_RADIUS * np.vstack([np.eye(3), -np.eye(3)]), self.aspect)
        return (*at.min(axis=0), *at.max(axis=0)) if len(at) else None

    def status(self) -> list:
        cs = self.chain_set
        mode = "the mouse" if self.value("mouse") else "keyframes"
        return [f"{cs.chain_count} strands, {cs.segment_count} segments; head follows {mode}"]

    def release(self) -> None:
        if self.solver is not None:
            self.solver.release()
            self.solver = None
        self.drawer.release()
        self.renderer.release()


# -- entry point ----------------------------------------------------------------------------------------------
def parse_args(argv=None):
    parser = demo_parser(__doc__)
    parser.add_argument("--strands", type=int, default=3000, help="number of hair strands (default 3000)")
    parser.add_argument("--follow-mouse", action="store_true", help="window: the head follows the mouse (M toggles)")
    parser.add_argument("--lines", action="store_true", help="draw the strands as lines instead of ribbons (R toggles)")
    return parse_demo_args(parser, argv, "gpu_jiggle 04: hair (drag orbit, scroll zoom, M mouse, P pause, T teleport, "
                                         "D debug, Esc quit)", counts=("strands",))


def main(argv=None) -> int:
    args = parse_args(argv)
    return run(lambda ctx, a: HairHead(ctx, a.strands, follow_mouse=a.follow_mouse, lines=a.lines), args)


if __name__ == "__main__":
    sys.exit(main())

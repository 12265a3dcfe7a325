"""Demo 03: a field of grass in gusting wind, parted by a rolling ball, drawn straight from
the solver's buffers.

Every blade is a point chain of 4–6 segments rooted in the ground (world influence 0), its
animated joints standing up with a lean of its own, pulled toward them by stiff-ish springs
(2–5 Hz, damping ratio 0.3–0.6). Each frame:

1. the ball rolls on along its path: a sphere collider (``solver.set_colliders``, with the
   ground as a plane collider), turned as it rolls;
2. wind: a steady push with gusts travelling across the field (``solver.set_wind``,
   SPEC 4.1);
3. level of detail by distance from the camera (``solver.set_lod``): full rate near the
   camera and near the ball, every second frame further out (the frame times add up, so the
   motion keeps its speed), frozen on the animated targets far away;
4. ``solver.advance(dt)``, then the blades are drawn by ``shaders/grass_blade.vert``
   straight from the solver's storage buffers (no read-back), over the ground and the ball.

World units are metres, y up. Blade count is ``--blades``; the field grows with it at a
fixed density, so more blades reach further from the camera.

Usage::

    python demos/03_grass_field.py                      # a window when there is a display
    python demos/03_grass_field.py --headless           # PNGs in out/demo
    python demos/03_grass_field.py --blades 100000      # more grass (a GPU takes far more)
    python demos/03_grass_field.py --frames 30 --screenshot shot.png   # window, then a screenshot

Window: drag to orbit, scroll to zoom; panel (Dear ImGui) or keys: P pause, N step, T teleport
the ball, D debug view (targets, simulated chains, colliders, levels of detail), F frame-rate
cap, L level of detail on/off, B ball rolling on/off, arrows tune, Esc quits.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np

from gpu_jiggle import PointChainSet, Solver
from gpu_jiggle.character.pose import quat
from gpu_jiggle.render.chain_draw import ChainDrawer
from gpu_jiggle.render.draw3d import Camera, Renderer, unit_sphere_triangles
from gpu_jiggle.app.viewer import Demo, Parameter, demo_parser, parse_demo_args, run
from gpu_jiggle.app.viewer.framing import fitted

# -- the field ------------------------------------------------------------------------------------
DEFAULT_BLADES = 10000               # about 10 frames per second at 960x540 on llvmpipe with two cores
DENSITY = 110.0                      # blades per m²
MIN_SIDE = 4.0                       # m, the smallest field
BLADE_HEIGHT = (0.22, 0.5)           # m
SEGMENTS = (4, 6)                    # per blade, inclusive
LEAN = 0.35                          # the most a blade's tip leans out, as a fraction of its height
ROOT_WIDTH = (0.018, 0.032)          # m, full width at the root
FREQUENCY_HZ = 3.0                   # at the tip; the root is ROOT_STIFFER times stiffer
ROOT_STIFFER = 1.6
DAMPING_RATIO = (0.3, 0.6)           # per blade
PARTICLE_RADIUS = 0.01               # m
GRAVITY = 3.0                        # m/s² down: springs hold the blades up; a little droop reads as weight
# Wind (SPEC 4.1): a steady push along WIND_DIRECTION and gusts travelling with it.
WIND_DIRECTION = np.array([1.0, 0.0, -0.35]) / math.hypot(1.0, 0.35)
WIND = 4.0                           # m/s²
GUSTS = 9.0                          # m/s², amplitude
GUST_WAVELENGTH = 5.0                # m
GUST_FREQUENCY = 0.45                # Hz: gusts cross the field at wavelength × frequency m/s
# The ball: a sphere collider rolling along a figure of eight.
BALL_RADIUS = 0.3                    # m
BALL_SPEED = 1.6                     # m/s, about
# Level of detail by the distance from the camera's eye to a blade's root, m.
LOD_FULL_WITHIN = 7.0
LOD_HALF_WITHIN = 14.0
LOD_BALL_REACH = 1.4                 # m beyond the ball's radius: full rate there whatever the distance
TILE = 1.0                           # m, blades are stored tile by tile (see make_field)
LOD_REFRESH = 0.25                   # m the ball or camera moves before the levels are chosen again

DEBUG_LINES = 1500                   # about how many blades the debug view draws as lines

SKY_COLOUR = "#cfe3f2"
SOIL_COLOUR = "#3f4a25"
BALL_COLOURS = ("#e63946", "#f1faee", "#1d71b8", "#ffd166", "#f1faee", "#2a9d8f")
LIGHT = (0.45, 0.75, 0.35)
FOG = (16.0, 70.0)
CAMERA = (0.3, 0.3)                  # azimuth and elevation (rad); the distance follows the field's size


def field_side(blade_count: int) -> float:
    """The side (m) of a square field holding ``blade_count`` blades at :data:`DENSITY`."""
    return max(MIN_SIDE, math.sqrt(blade_count / DENSITY))


@dataclass(frozen=True)
class Field:
    """The blades' static description.

    Attributes:
        side: m, the field is the square |x|, |z| ≤ side / 2 on y = 0.
        pivots: (C, 3) float64 m, each blade's root.
        joints: (J, 3) float64 m, the animated pose: per blade its root, then its segment tips
            standing up with its lean.
        segment_counts: (C,) ints in :data:`SEGMENTS`.
        damping_ratio: (C,) per blade.
    """

    side: float
    pivots: np.ndarray
    joints: np.ndarray
    segment_counts: np.ndarray
    damping_ratio: np.ndarray


def make_field(blade_count: int, seed: int = 3) -> Field:
    """Roots on a jittered grid, stored tile by tile, and in a tile blades of the same segment
    count side by side; each blade a gentle curve up from its root, bending out toward its
    lean (a random direction and amount), its height and segments its own."""
    rng = np.random.default_rng(seed)
    side = field_side(blade_count)
    cells = math.ceil(math.sqrt(blade_count))
    cell = side / cells
    index = np.sort(rng.permutation(cells * cells)[:blade_count])
    grid = np.stack([index % cells, index // cells], axis=1) + rng.uniform(0.05, 0.95, (blade_count, 2))
    # Blades in tiles of about TILE m, one tile after the other: the solver's work groups
    # (64 chains, one SIMD batch each on a CPU) then hold neighbours, which share a level
    # of detail, so slowed and frozen blades really cost less. Rows of tiles go from +z
    # (the default camera's side) to -z, so the blades are drawn front to back from there
    # and hidden fragments fail the depth test before they are shaded.
    # In a tile, blades of one segment count side by side: a SIMD batch walks its chains' segments
    # as far as its longest chain, so a batch of mixed counts (4 to 6) walks 6 for nearly every
    # blade, one of equal counts as many as they have.
    tile = np.floor((grid * cell) / TILE).astype(np.int64)
    counts = rng.integers(SEGMENTS[0], SEGMENTS[1] + 1, blade_count)
    order = np.lexsort((counts, tile[:, 0], -tile[:, 1]))
    grid, counts = grid[order], counts[order]
    xz = grid * cell - side / 2
    pivots = np.stack([xz[:, 0], np.zeros(blade_count), xz[:, 1]], axis=1)
    height = rng.uniform(*BLADE_HEIGHT, blade_count)
    lean_angle = rng.uniform(0.0, 2.0 * math.pi, blade_count)
    lean = rng.uniform(0.05, LEAN, blade_count)[:, None] * np.stack(
        [np.cos(lean_angle), np.zeros(blade_count), np.sin(lean_angle)], axis=1)
    joints = []
    for c in range(blade_count):  # a short loop per blade; the field is built once
        n = counts[c]
        u = np.arange(n + 1) / n
        bend = u[:, None] ** 2 * lean[c] * height[c]           # the lean grows toward the tip
        joints.append(pivots[c] + np.outer(u, [0.0, height[c], 0.0]) + bend)
    damping = rng.uniform(*DAMPING_RATIO, blade_count)
    return Field(side, pivots, np.concatenate(joints), counts, damping)


def blade_frequencies(counts: np.ndarray, tip_hz: float) -> np.ndarray:
    """(S,) Hz per segment: ``ROOT_STIFFER × tip_hz`` at the root down to ``tip_hz``."""
    return np.concatenate([tip_hz * np.linspace(ROOT_STIFFER, 1.0, n) for n in counts])


def make_chain_set(field: Field, tip_hz: float = FREQUENCY_HZ, gravity: float = GRAVITY) -> PointChainSet:
    return PointChainSet(field.segment_counts, frequency=blade_frequencies(field.segment_counts, tip_hz),
                         damping_ratio=np.repeat(field.damping_ratio, field.segment_counts),
                         particle_radius=PARTICLE_RADIUS, world_influence=0.0, gravity=(0.0, -gravity, 0.0))


# -- the ball ------------------------------------------------------------------------------------------
def ball_period(side: float) -> float:
    """Seconds per loop of :func:`ball_path` (about :data:`BALL_SPEED` on average)."""
    return 2.0 * math.pi * math.hypot(0.32 * side, 0.36 * side) / BALL_SPEED


def ball_path(t: float, side: float) -> np.ndarray:
    """(3,) m: the ball's centre at ``t`` s, on a figure of eight over the near half of the
    field (toward the default camera), resting on the ground."""
    ax, az = 0.32 * side, 0.18 * side
    w = 2.0 * math.pi / ball_period(side)
    return np.array([ax * math.sin(w * t), BALL_RADIUS, 0.12 * side + az * math.sin(2.0 * w * t)])


def ball_gores(stacks: int = 16, slices: int = 36):
    """[(colour, (3·T, 3) unit normals)]: a beach ball's six coloured gores, ball frame."""
    sphere = unit_sphere_triangles(stacks, slices).reshape(-1, 3, 3)
    centre = sphere.mean(axis=1)
    gore = np.floor((np.arctan2(centre[:, 0], centre[:, 2]) + math.pi) / (2.0 * math.pi) * 6).astype(int) % 6
    return [(colour, sphere[gore == k].reshape(-1, 3)) for k, colour in enumerate(BALL_COLOURS)]


GORES = ball_gores()


# -- the demo -----------------------------------------------------------------------------------------------
class GrassField(Demo):
    """The field, its solver, the ball and the camera; the members of :class:`gpu_jiggle.app.viewer.Demo`.

    Args:
        ctx: the moderngl context (a window's or the headless one) for solver and drawing.
        blades: blade count. lod: level of detail by distance (else every blade at full rate).
    """

    name = "03_grass_field"
    title = "gpu_jiggle 03: grass field"

    def __init__(self, ctx, blades: int = DEFAULT_BLADES, lod: bool = True, ball: bool = True):
        self.ctx = ctx
        self.parameters = [
            Parameter("blades", "blades", blades, 1000, 400000, kind="int", log=True, step=2.0, rebuild=True,
                      fmt="%d"),
            Parameter("frequency", "f tip (Hz)", FREQUENCY_HZ, 0.5, 6.0, step=0.25),
            Parameter("damping", "damping ratio x", 1.0, 0.1, 2.0, step=0.1),
            Parameter("gravity", "gravity (m/s2)", GRAVITY, 0.0, 20.0, step=1.0, fmt="%.1f"),
            Parameter("wind", "wind (m/s2)", WIND, 0.0, 30.0, step=1.0, fmt="%.1f"),
            Parameter("gusts", "gusts (m/s2)", GUSTS, 0.0, 40.0, step=1.0, fmt="%.1f"),
            Parameter("gust_frequency", "gust frequency (Hz)", GUST_FREQUENCY, 0.05, 2.0, step=0.05),
            Parameter("lod", "level of detail by distance", bool(lod), kind="toggle", letter="L"),
            Parameter("ball", "ball rolling", bool(ball), kind="toggle", letter="B"),
        ]
        self.drawer = ChainDrawer(ctx)
        self.renderer = Renderer(ctx)
        self.solver = None
        self.time = 0.0
        self.ball_time = 0.0
        self.ball_rotation = np.array([0.0, 0.0, 0.0, 1.0])
        self.aspect = 16 / 9  # the last drawn frame's
        self._build(blades)

    # -- parameters ------------------------------------------------------------------------------
    def _build(self, blades: int) -> None:
        """A new field and solver for ``blades`` blades (the camera keeps its angles)."""
        if self.solver is not None:
            self.solver.release()
        self.field = make_field(blades)
        self.chain_set = make_chain_set(self.field, self.value("frequency"), self.value("gravity"))
        if self.value("damping") != 1.0:
            self.chain_set = self.chain_set.replace(damping_ratio=self.chain_set.damping_ratio * self.value("damping"))
        # drawn from the joints alone (grass_blade.vert): no rotations to compute
        self.solver = Solver(self.chain_set, backend="gpu", context=self.ctx, rotation_outputs=False)
        self.solver.set_pose(joint_positions=self.field.joints)  # still targets: set once
        # Just outside the near edge of the field, looking across it.
        self.camera_angles = [CAMERA[0], CAMERA[1], (0.4 * self.field.side + 0.5) / math.cos(CAMERA[1])]
        self._apply_wind()
        self._lod_key = None
        self._snap = True
        self.levels = np.zeros(self.chain_set.chain_count, np.uint32)
        self.forced_level = None  # "full", "half" or "frozen" for every blade (benchmarks), else None

    def set_parameter(self, key, value) -> None:
        if key == "blades":
            self._build(int(value))
        elif key == "frequency":
            self.solver.set_parameters(frequency=blade_frequencies(self.field.segment_counts, value))
        elif key == "damping":
            self.solver.set_parameters(damping_ratio=np.repeat(self.field.damping_ratio, self.field.segment_counts)
                                       * value)
        elif key == "gravity":
            self.solver.set_parameters(gravity=(0.0, -value, 0.0))
        elif key in ("wind", "gusts", "gust_frequency"):
            self._apply_wind(**{key: value})  # the session stores the value once accepted
        elif key == "lod":
            self._lod_key = None
        elif key == "ball":
            pass

    def _apply_wind(self, **changed) -> None:
        """The wind of the panel's values, those in ``changed`` (key=value) taken instead."""
        v = {key: changed.get(key, self.value(key)) for key in ("wind", "gusts", "gust_frequency")}
        wave = 2.0 * math.pi / GUST_WAVELENGTH * WIND_DIRECTION
        self.solver.set_wind(acceleration=v["wind"] * WIND_DIRECTION, gust_amplitude=v["gusts"],
                             gust_wave_vector=wave, gust_frequency=v["gust_frequency"])

    # -- the camera -----------------------------------------------------------------------------------
    def camera(self) -> Camera:
        """The camera looking across the field; in a window, its whole picture shrunk into the
        part the panel leaves free (the ball's loop reaches the picture's edges)."""
        azimuth, elevation, distance = self.camera_angles
        target = np.array([0.0, 0.2, 0.1 * self.field.side])
        return Camera.orbit(target, azimuth, elevation, distance, fov_y_degrees=50.0, near=0.05, far=400.0,
                            area=fitted(self.area, self.aspect, (self.aspect, 1.0)))

    def orbit(self, dx, dy) -> None:
        self.camera_angles[0] -= 0.006 * dx
        self.camera_angles[1] = min(max(self.camera_angles[1] + 0.006 * dy, 0.03), 1.45)

    def zoom(self, steps) -> None:
        self.camera_angles[2] = min(max(self.camera_angles[2] * 0.9 ** steps, 1.0), 4.0 * self.field.side + 10.0)

    # -- a frame -------------------------------------------------------------------------------------------
    def ball_centre(self) -> np.ndarray:
        return ball_path(self.ball_time, self.field.side)

    def step(self, dt: float) -> None:
        self.time += dt
        if self.value("ball"):
            before = self.ball_centre()
            self.ball_time += dt
            moved = self.ball_centre() - before
            distance = float(np.linalg.norm(moved))
            if distance > 1e-9 and not self._snap:  # rolling: turn about the horizontal axis across the motion
                axis = np.cross([0.0, 1.0, 0.0], moved / distance)
                self.ball_rotation = quat.normalize(quat.multiply(quat.from_axis_angle(axis, distance / BALL_RADIUS),
                                                                  self.ball_rotation))
        centre = self.ball_centre()
        self.solver.set_colliders(spheres=[[*centre, BALL_RADIUS]], planes=[[0.0, 1.0, 0.0, 0.0]], snap=self._snap)
        self._snap = False
        self._choose_levels(centre)
        self.solver.advance(dt)

    def _choose_levels(self, ball) -> None:
        """Levels of detail by distance from the eye (and full near the ball); chosen again
        only when the camera or the ball has moved :data:`LOD_REFRESH` m or more."""
        eye = self.camera().eye
        key = (np.round(eye / LOD_REFRESH), np.round(ball / LOD_REFRESH), bool(self.value("lod")), self.forced_level)
        if self._lod_key is not None and all(np.array_equal(a, b) for a, b in zip(key, self._lod_key)):
            return
        self._lod_key = key
        if self.forced_level is not None:
            level = ("full", "half", "frozen").index(self.forced_level)
            self.levels = np.full(self.chain_set.chain_count, level, np.uint32)
        elif self.value("lod"):
            self.levels = lod_levels(self.field.pivots, eye, ball)
        else:
            self.levels = np.zeros(self.chain_set.chain_count, np.uint32)
        self.solver.set_lod(self.levels)

    def teleport(self) -> None:
        """The ball jumps half a loop along its path: its collider snaps there instead of
        sweeping through the grass between."""
        self.ball_time += 0.5 * ball_period(self.field.side)
        self._snap = True

    # -- drawing ---------------------------------------------------------------------------------------------
    def draw(self, framebuffer, debug: bool) -> None:
        _, _, width, height = framebuffer.viewport
        self.aspect = width / height
        camera = self.camera()
        side = self.field.side
        r = self.renderer
        ground = 4.0 * side + 40.0
        quad = np.array([[-1, 0, -1], [-1, 0, 1], [1, 0, 1], [-1, 0, -1], [1, 0, 1], [1, 0, -1]]) * ground / 2
        r.triangles(quad, np.tile([0.0, 1.0, 0.0], (6, 1)), SOIL_COLOUR)
        centre = self.ball_centre()
        r.disc((centre[0], 0.004, centre[2]), (0.0, 1.0, 0.0), 0.9 * BALL_RADIUS, (0.05, 0.08, 0.02, 0.45))
        turn = quat.to_matrix(self.ball_rotation)
        for colour, normals in GORES:
            n = normals @ turn.T
            r.triangles(centre + BALL_RADIUS * n, n, colour)
        r.render(framebuffer, camera, clear=SKY_COLOUR, light_direction=LIGHT, ground_colour=SOIL_COLOUR, fog=FOG)
        self.drawer.grass(framebuffer, self.solver, camera, root_width=ROOT_WIDTH, light_direction=LIGHT,
                          sky=SKY_COLOUR, ground=SOIL_COLOUR, fog=FOG, show_lod=debug)
        if debug:  # a sample of the blades: targets magenta, simulated yellow; blades tinted by level of detail
            self.drawer.debug(framebuffer, self.solver, camera, most=DEBUG_LINES)
            r.sphere(centre, BALL_RADIUS + PARTICLE_RADIUS, (1.0, 0.2, 0.2, 0.35))
            r.render(framebuffer, camera, clear=None, light_direction=LIGHT, fog=FOG)

    def solvers(self) -> list:
        return [] if self.solver is None else [self.solver]

    def subject_box(self):
        """The ball's bounds on the screen (its sides, top and bottom), fractions from the top-left."""
        centre = self.ball_centre()
        at = self.camera().project([centre - (BALL_RADIUS, 0, 0), centre + (BALL_RADIUS, 0, 0),
                                    centre + (0, BALL_RADIUS, 0), centre - (0, BALL_RADIUS, 0)], self.aspect)
        return (*at.min(axis=0), *at.max(axis=0)) if len(at) else None

    def status(self) -> list:
        cs = self.chain_set
        n = np.bincount(self.levels, minlength=3)
        return [f"{cs.chain_count} blades, {cs.segment_count} segments, field {self.field.side:.1f} m",
                f"level of detail: {n[0]} full, {n[1]} half, {n[2]} frozen"]

    def release(self) -> None:
        if self.solver is not None:
            self.solver.release()
            self.solver = None
        self.drawer.release()
        self.renderer.release()


def lod_levels(pivots: np.ndarray, eye, ball=None) -> np.ndarray:
    """(C,) uint32 levels of detail: 0 (full) within :data:`LOD_FULL_WITHIN` m of ``eye``
    (3,), 1 (half) within :data:`LOD_HALF_WITHIN`, 2 (frozen) beyond; 0 within
    :data:`LOD_BALL_REACH` of the ball's surface whatever the distance (it must part the grass)."""
    distance = np.linalg.norm(pivots - np.asarray(eye, np.float64), axis=1)
    levels = np.where(distance < LOD_FULL_WITHIN, 0, np.where(distance < LOD_HALF_WITHIN, 1, 2)).astype(np.uint32)
    if ball is not None:
        near = np.linalg.norm(pivots - np.asarray(ball, np.float64), axis=1) < BALL_RADIUS + LOD_BALL_REACH
        levels[near] = 0
    return levels


# -- entry point ----------------------------------------------------------------------------------------------
def parse_args(argv=None):
    parser = demo_parser(__doc__)
    parser.add_argument("--blades", type=int, default=DEFAULT_BLADES,
                        help=f"number of grass blades (default {DEFAULT_BLADES}: about 10 frames per second on "
                             "llvmpipe with two cores; a GPU takes far more)")
    parser.add_argument("--no-lod", action="store_true", help="every blade at full rate (no level of detail)")
    parser.add_argument("--no-ball", action="store_true", help="the ball stays where it is (B toggles it)")
    return parse_demo_args(parser, argv, "gpu_jiggle 03: grass field (drag orbit, scroll zoom, P pause, T teleport "
                                         "ball, D debug, Esc quit)", counts=("blades",))


def main(argv=None) -> int:
    args = parse_args(argv)
    return run(lambda ctx, a: GrassField(ctx, a.blades, lod=not a.no_lod, ball=not a.no_ball), args)


if __name__ == "__main__":
    sys.exit(main())

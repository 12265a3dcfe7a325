"""Demo 05: a crowd of VRM avatars (Godette), each shaking or turning its head at its own
phase, all of their spring bones in one chain set, one solver and one dispatch a frame.

The avatar's spring bones come from its VRM file (:mod:`gpu_jiggle.character.rig.from_vrm`, matched
to VRM's own update at 60 fps); :class:`gpu_jiggle.character.crowd.Crowd` puts N copies of its
chains into one :class:`~gpu_jiggle.PointChainSet` and steps them together: the copies' poses
are sampled and posed as one stacked array, their joints go up in one ``set_pose`` and run in
one ``advance``. The copies stand on a grid; each plays the built-in motion from its own time.
The avatars' colliders are left out (every chain would be tested against every copy's).

Usage::

    python demos/05_vrm_crowd.py                       # a window when there is a display
    python demos/05_vrm_crowd.py --headless            # PNGs in out/demo
    python demos/05_vrm_crowd.py --count 500           # on a GPU
    python demos/05_vrm_crowd.py --headless --video out/demo/crowd.mp4

Window: drag to orbit, scroll to zoom; P pause, N step, F frame-rate cap, Esc quits.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

from gpu_jiggle.app.viewer import Demo, Parameter, demo_parser, parse_demo_args, run
from gpu_jiggle.character.gltf.credit import credit_of
from gpu_jiggle.character.crowd import Crowd, grid_placements
from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.character.motion import MOTIONS, builtin_motion
from gpu_jiggle.character.rig.from_vrm import rig_from_vrm
from gpu_jiggle.render.draw3d import Camera, Renderer
from gpu_jiggle.render.meshes import SkinnedMeshes
from gpu_jiggle.render.scene import key_light

AVATAR = Path(__file__).resolve().parents[1] / "data" / "vrm" / "Godette_vrm_v4.vrm"
COUNT = 16              # avatars by default: sized for llvmpipe
SPACING = 1.0           # m between avatars on the grid (their T-pose arms span 0.9 m)
MOTION = "shake"
SKY_COLOUR = "#d8e4ec"
GROUND_COLOUR = "#aab59a"
SEED = 5                # the avatars' phases


class VrmCrowd(Demo):
    """The crowd, its drawing and camera; the members of :class:`gpu_jiggle.app.viewer.Demo`.

    Args:
        ctx: the moderngl context (a window's or the headless one). count: avatars.
        motion: one of the built-in motions. backend: the spring solver's.
    """

    name = "05_vrm_crowd"
    title = "gpu_jiggle 05: a crowd of VRM avatars"

    def __init__(self, ctx, count: int = COUNT, motion: str = MOTION, backend: str = "auto"):
        self.ctx = ctx
        self.parameters = [Parameter("count", "avatars", count, 1, 4096, kind="int", log=True, step=2.0,
                                     rebuild=True, fmt="%d")]
        self.character = Character.load(AVATAR)
        self.credit = credit_of(self.character.json)  # Godette's CC-BY credit, kept in the images written
        self.rig = rig_from_vrm(self.character)
        self.motion = builtin_motion(self.character, motion)
        self.backend = backend
        self.meshes = SkinnedMeshes(ctx, self.character)
        self.renderer = Renderer(ctx)
        self.crowd = None
        self.frame = None
        self.time = 0.0
        # azimuth, elevation (rad), distance in grid sizes; VRM 0.x avatars face -z, VRM 1.0 ones +z
        facing_back = "VRM" in (self.character.json.get("extensions") or {})
        self.camera_angles = [0.5 + (math.pi if facing_back else 0.0), 0.32, 1.25]
        self._build(count)

    def _build(self, count: int) -> None:
        if self.crowd is not None:
            self.crowd.release()
        rng = np.random.default_rng(SEED)
        placements = grid_placements(count, SPACING)
        self.crowd = Crowd(self.character, self.rig, self.motion, placements,
                           phases=rng.uniform(0.0, self.motion.duration, count), backend=self.backend, context=self.ctx)
        self.extent = float(np.ptp(placements[:, [0, 2]], axis=0).max()) + 2 * SPACING
        self.time = 0.0
        self.frame = self.crowd.step(0.0, 1.0 / 60.0)  # the first frame puts every chain on its pose

    @property
    def solver(self):
        return self.crowd.solver

    def set_parameter(self, key, value) -> None:
        if key != "count":
            raise ValueError(f"unknown parameter {key!r}")
        self._build(int(value))

    def camera(self) -> Camera:
        azimuth, elevation, distance = self.camera_angles
        return Camera.orbit(np.array([0.0, 0.55, 0.0]), azimuth, elevation, max(distance * self.extent, 1.6),
                            fov_y_degrees=38.0, near=0.05, far=200.0, area=tuple(self.area))  # beside the panel

    def orbit(self, dx, dy) -> None:
        self.camera_angles[0] -= 0.008 * dx
        self.camera_angles[1] = min(max(self.camera_angles[1] + 0.008 * dy, -0.2), 1.4)

    def zoom(self, steps) -> None:
        self.camera_angles[2] = min(max(self.camera_angles[2] * 0.9 ** steps, 0.2), 4.0)

    def step(self, dt: float) -> None:
        self.time += dt
        self.frame = self.crowd.step(self.time, dt)

    def draw(self, framebuffer, debug: bool) -> None:
        camera = self.camera()
        light = key_light(camera)
        r = self.renderer
        r.ground(centre=(camera.target[0], 0.0, camera.target[2]), extent=200.0, colour=GROUND_COLOUR, tile=0.35)
        for p in self.crowd.placements:
            r.disc((p[0], 0.002, p[2]), (0.0, 1.0, 0.0), 0.22, (0.05, 0.07, 0.03, 0.28))
        r.render(framebuffer, camera, clear=SKY_COLOUR, light_direction=light)
        for world in self.frame.world_matrices:
            self.meshes.draw(framebuffer, camera, world, light_direction=light)
        if debug:  # every copy's simulated chains, yellow
            for chains in self.frame.chain_positions:
                for joints in chains:
                    for a, b in zip(joints[:-1], joints[1:]):
                        r.capsule(a, b, 0.004, "#ffd400")
            r.render(framebuffer, camera, clear=None, light_direction=light)

    def solvers(self) -> list:
        return [self.crowd.solver]

    def status(self) -> list:
        cs = self.crowd.chain_set
        return [f"{self.crowd.count} avatars: {cs.chain_count} chains, {cs.segment_count} segments in one dispatch"]

    def release(self) -> None:
        if self.crowd is not None:
            self.crowd.release()
            self.crowd = None
        self.meshes.release()
        self.renderer.release()


def parse_args(argv=None):
    parser = demo_parser(__doc__, backend=True)
    parser.add_argument("--count", type=int, default=COUNT, help=f"avatars (default {COUNT}; 500 on a GPU)")
    parser.add_argument("--motion", choices=MOTIONS, default=MOTION, help=f"built-in motion (default {MOTION})")
    return parse_demo_args(parser, argv, "gpu_jiggle 05: VRM crowd (drag orbit, scroll zoom, P pause, Esc quit)",
                           counts=("count",))


def main(argv=None) -> int:
    args = parse_args(argv)
    return run(lambda ctx, a: VrmCrowd(ctx, a.count, a.motion, a.backend), args)


if __name__ == "__main__":
    sys.exit(main())

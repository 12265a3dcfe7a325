"""Rendering a glTF character with its springs: the scene shared by ``gpu-jiggle render``
(headless video) and ``gpu-jiggle play`` (a window, :mod:`gpu_jiggle.app.play`).

```python
from gpu_jiggle.app.render import render
result = render("data/fox/Fox.gltf", "rigs/fox.toml", "Run", "out/fox.mp4", seconds=6, fps=30, compare=True)
print(result.path, result.frames, result.seconds)
```

What a frame shows, drawn by :class:`CharacterView` into any framebuffer with a depth buffer:

- the skinned, textured meshes, skinned on the GPU (``shaders/skinned_mesh.vert/.frag``:
  joints and weights per vertex, one matrix per skin joint, the base-colour texture, the
  lighting of :mod:`gpu_jiggle.render.draw3d`), over a checkered ground with a soft blob shadow;
- the rig's procedural strands (ear tufts, a mane) as camera-facing ribbons or lines, as the
  rig's ``draw`` and ``width`` say, coloured like the texture where they grow;
- in the debug view: every chain's animated targets (magenta) and simulated joints (yellow)
  as lines over everything, and the colliders as translucent shapes.

**Travel.** glTF locomotion clips (the Fox's Walk and Run) run on the spot. With
``travel="auto"`` the character is moved forward at the speed its feet push the ground back
(:func:`ground_speed`: the speed of the lowest joint over a loop of the clip), as a root
motion that the springs feel (:class:`TravellingPipeline`), and the camera follows it; a
clip that stands still (Survey) stays where it is. ``travel=0`` keeps every clip on the spot.

The camera frames the character's rest pose from the side (:class:`Framing`); all drawing
happens relative to a floating origin near the character (float64 on the host), so the
float32 matrices stay precise however far it has travelled.
"""
from __future__ import annotations

import dataclasses
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import moderngl
import numpy as np

from ..render.draw2d import rgba
from ..render.draw3d import Camera, Renderer
from ..gl.offscreen import OffscreenTarget
from ..gl.glsl import program
from ..character.pipeline import Pipeline
from ..character.rig import LookAtSpec

__all__ = ["render", "RenderResult", "CharacterView", "SkinnedMeshes", "Framing", "TravellingPipeline",
           "ground_speed", "open_character", "FrameWriter", "add_command", "run_command"]

SKY = "#cfe3f2"
GROUND = "#aab59a"           # the floor: grey-green, unlike anything on the fox
GROUND_LIGHT = "#6d6352"     # the lower ambient light, bounced off the ground
LIGHT_DIRECTION = (0.45, 0.85, 0.35)
FRAMING_MARGIN = 1.2               # the rest pose fills 1 / 1.2 of the image's width or height
KEY_LIGHT_TURN_DEGREES = 40.0       # the key light's direction from the camera's, about the vertical
KEY_LIGHT_ELEVATION_DEGREES = 50.0  # and its height above the horizon
TARGET_COLOUR = "#ff40ff"    # debug: animated chain targets
SIMULATED_COLOUR = "#ffd400"  # debug: simulated chain joints
COLLIDER_COLOUR = (0.2, 0.75, 1.0, 0.28)
SHADOW_COLOUR = (0.05, 0.07, 0.03, 0.28)
DIVIDER = (30, 34, 38)       # the line between the halves of a compare, RGB
OUTPUT_KINDS = (".mp4", ".gif")  # or a folder of PNGs


# -- loading ---------------------------------------------------------------------------------------
def open_character(model, rig=None):
    """``(character, rig)`` from paths (or already loaded objects); ``rig`` may be None.

    Raises:
        FileNotFoundError: a missing model or rig file. ValueError: an invalid glTF file or rig.
    """
    from ..character.gltf import Character
    from ..character.rig import Rig, load_rig

    character = model if hasattr(model, "skeleton") else Character.load(model)
    if rig is not None and not isinstance(rig, Rig):
        if not Path(rig).is_file():
            raise FileNotFoundError(f"{rig}: no such rig file")
        rig = load_rig(rig, character.skeleton)
    return character, rig


# -- travel ----------------------------------------------------------------------------------------
def ground_speed(character, clip, samples_per_second: float = 60.0):
    """``(speed, direction)``: how fast an on-the-spot locomotion clip would move the character
    forward, from its feet. Over one loop of ``clip``, the lowest joint of the first skin (the
    foot on the ground) slides back at the speed the body would move; the median of its
    horizontal velocity, reversed, is the answer: speed in length unit/s (≥ 0) and a (3,)
    unit world direction (zero when the speed is 0). Only the skin's end joints (feet,
    hands, head, tail tip) count, not a root joint resting on the floor. A clip whose lowest
    joint hardly moves (standing, looking around) gives 0."""
    skin = character.skin
    if clip is None or skin is None or clip.duration <= 0:
        return 0.0, np.zeros(3)
    sk = character.skeleton
    rest = sk.rest_pose()
    dt = 1.0 / samples_per_second
    times = clip.start + np.arange(int(math.ceil(clip.duration * samples_per_second)) + 1) * dt
    joints = [j for j in skin.joints if not any(c in skin.joints for c in sk.children(int(j)))]
    positions = []
    for t in times:
        world = sk.world_matrices(clip.sample(rest, float(t)))
        positions.append(world[joints, :3, 3])
    positions = np.asarray(positions)                   # (T, J, 3)
    lowest = np.argmin(positions[:-1, :, 1], axis=1)    # the foot on the ground, per sample
    k = np.arange(len(lowest))
    extent = float(np.ptp(positions.reshape(-1, 3), axis=0).max()) or 1.0
    height = positions[k, lowest, 1]
    planted = height <= height.min() + 0.03 * extent   # on the floor, not in a leap
    velocity = (positions[k + 1, lowest] - positions[k, lowest])[planted] / dt
    velocity[:, 1] = 0.0
    push = -np.median(velocity, axis=0)
    speed = float(np.linalg.norm(push))
    if speed < 0.05 * extent:  # less than 5 % of the body per second: standing
        return 0.0, np.zeros(3)
    return speed, push / speed


class TravellingPipeline(Pipeline):
    """A :class:`~gpu_jiggle.character.pipeline.Pipeline` whose character is carried through the world:
    every root node is translated by ``offset + velocity · (t - start)`` (world, float64),
    after the keyframes, so the springs feel the motion.

    Args (besides the pipeline's): velocity: (3,) world length unit/s. start: the time the
    travel starts from (s).
    """

    def __init__(self, *args, velocity=(0.0, 0.0, 0.0), start: float = 0.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.velocity = np.asarray(velocity, np.float64).reshape(3)
        self.start = float(start)
        self.offset = np.zeros(3)
        self._roots = np.flatnonzero(self.skeleton.parents < 0)

    def root_offset(self, time: float) -> np.ndarray:
        """(3,) float64 world translation added to the roots at playing time ``time``."""
        return self.offset + self.velocity * (float(time) - self.start)

    def sample_keyframes(self, time: float):
        pose = super().sample_keyframes(time)
        pose.translation[self._roots] += self.root_offset(time)
        return pose

    def teleport(self, jump=(0.0, 0.0, 0.0), keep_shape: bool = True) -> None:
        """Move the character by ``jump`` (3,) world from the next step on, the springs
        carried across with their shape and the colliders snapped instead of swept
        (:meth:`Pipeline.teleport <gpu_jiggle.character.pipeline.Pipeline.teleport>`)."""
        jump = np.asarray(jump, np.float64).reshape(3)
        super().teleport(keep_shape)
        self.offset = self.offset + jump


def make_pipeline(character, rig, clip, springs: bool = True, travel="auto", backend: str = "auto",
                  context=None, look_at: bool = False) -> TravellingPipeline:
    """A :class:`TravellingPipeline` for ``clip`` (a name; unknown names raise ValueError
    listing the clips); ``travel`` is ``"auto"`` (:func:`ground_speed`) or a speed ≥ 0 along
    the direction the feet give (+z when they give none). ``look_at``: turn on the rig's
    look-at constraints (enabled or not in the file), their targets carried along with the
    character, so the head turns to them after the keyframes and before the springs."""
    clip_obj = character.clip(clip) if isinstance(clip, str) else clip
    speed, direction = ground_speed(character, clip_obj)
    if travel != "auto":
        value = float(travel)
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"travel = {travel!r}: expected 'auto' or a speed >= 0 (length unit/s)")
        speed, direction = value, (direction if speed > 0 else np.array([0.0, 0.0, 1.0]))
    start = clip_obj.start if clip_obj is not None else 0.0
    velocity = speed * direction
    constraints = None
    if look_at and rig is not None:
        constraints = [dataclasses.replace(spec, enabled=True, target_fn=_travelling_target(spec, velocity, start))
                       for spec in rig.constraints if isinstance(spec, LookAtSpec)]
    return TravellingPipeline(character, rig, clip=clip_obj, springs=springs, backend=backend, context=context,
                              velocity=velocity, start=start, constraints=constraints)


def _travelling_target(spec, velocity, start):
    """The spec's own target path, moved along with a character travelling at ``velocity``."""
    def target(t):
        return spec.target_at(t) + velocity * (float(t) - start)
    return target


# -- framing ---------------------------------------------------------------------------------------
@dataclass
class Framing:
    """Where the camera looks from, relative to the character's rest-pose bounds.

    Attributes:
        centre: (3,) world centre of the rest-pose bounds. extent: (3,) their size.
        floor: the lowest rest-pose height (the ground). size: the bounds' diagonal.
        azimuth, elevation: radians (azimuth 0: from +z; -π/2: from -x, the Fox's left side,
            so that it runs to the right). zoom: > 1 moves the camera in.
    """

    centre: np.ndarray
    extent: np.ndarray
    floor: float
    size: float
    azimuth: float = math.radians(-68.0)
    elevation: float = math.radians(10.0)
    zoom: float = 1.0
    fov_y_degrees: float = 30.0

    @classmethod
    def of(cls, character, **kwargs) -> "Framing":
        """Bounds of every mesh skinned by the rest pose."""
        sk = character.skeleton
        world = sk.world_matrices(sk.rest_pose())
        points = [skin_on_host(character, m, world) for m in character.meshes]
        points = np.concatenate(points) if points else np.zeros((1, 3))
        low, high = points.min(axis=0), points.max(axis=0)
        extent = high - low
        return cls((low + high) / 2, extent, float(low[1]), float(np.linalg.norm(extent)) or 1.0, **kwargs)

    def camera(self, aspect: float, follow=(0.0, 0.0, 0.0)) -> Camera:
        """The camera for a viewport of ``aspect`` (width / height), its target moved by
        ``follow`` (3,) world: far enough that the rest-pose bounds fit with a margin."""
        half_y = math.radians(self.fov_y_degrees) / 2
        half_x = math.atan(math.tan(half_y) * aspect)
        # seen from about the side: the horizontal extent across the image, the height up it
        # (with room above and below for leaps, ear tufts and the ground in front)
        half_width = 0.5 * float(np.linalg.norm(self.extent[[0, 2]]))
        half_height = 0.8 * float(self.extent[1])
        distance = FRAMING_MARGIN * max(half_width / math.tan(half_x), half_height / math.tan(half_y)) / self.zoom
        target = self.centre + np.asarray(follow, np.float64)
        return Camera.orbit(target, self.azimuth, self.elevation, distance, fov_y_degrees=self.fov_y_degrees,
                            near=0.02 * self.size, far=60.0 * self.size)


def skin_on_host(character, mesh, world_matrices) -> np.ndarray:
    """(V, 3) float64 world positions of ``mesh`` under node ``world_matrices`` (numpy
    linear blend skinning, the vertex shader's formula), for bounds and colours."""
    p = np.concatenate([mesh.positions.astype(np.float64), np.ones((len(mesh.positions), 1))], axis=1)
    if mesh.skin is None or mesh.joints is None or mesh.weights is None:
        return (p @ world_matrices[mesh.node].T)[:, :3]
    joint_matrices = character.skins[mesh.skin].skinning_matrices(world_matrices)
    blended = np.einsum("vk,vkij->vij", mesh.weights.astype(np.float64), joint_matrices[mesh.joints])
    return np.einsum("vij,vj->vi", blended, p)[:, :3]


# -- the skinned meshes on the GPU -------------------------------------------------------------------
class SkinnedMeshes:
    """Every mesh primitive of a character in GPU buffers, with its texture, drawn skinned.

    Args:
        ctx: a moderngl context (OpenGL ≥ 3.3). character: a loaded
            :class:`~gpu_jiggle.character.gltf.Character`.
    """

    def __init__(self, ctx, character):
        self.ctx = ctx
        self.character = character
        most = max([len(s.joints) for s in character.skins] + [1])
        self.program = program(ctx, "skinned_mesh.vert", "skinned_mesh.frag", vertex_defines={"MAX_JOINTS": most})
        self._white = ctx.texture((1, 1), 4, bytes([255, 255, 255, 255]))
        self._parts = []
        for mesh in character.meshes:
            if mesh.mode != 4:  # only triangle lists are drawn
                continue
            count = len(mesh.positions)
            joints = mesh.joints if mesh.joints is not None else np.zeros((count, 4), np.uint16)
            weights = mesh.weights if mesh.weights is not None else np.tile([1.0, 0, 0, 0], (count, 1))
            uvs = mesh.uvs if mesh.uvs is not None else np.zeros((count, 2))
            buffers = [ctx.buffer(np.ascontiguousarray(a, dtype).tobytes()) for a, dtype in
                       ((mesh.positions, np.float32), (mesh.normals, np.float32), (uvs, np.float32),
                        (joints, np.uint32), (weights, np.float32))]
            index = ctx.buffer(np.ascontiguousarray(mesh.indices, np.uint32).tobytes())
            layout = [(buffers[0], "3f", "in_position"), (buffers[1], "3f", "in_normal"), (buffers[2], "2f", "in_uv"),
                      (buffers[3], "4u", "in_joints"), (buffers[4], "4f", "in_weights")]
            layout = [entry for entry in layout if entry[2] in self.program]  # unused inputs are dropped
            vao = ctx.vertex_array(self.program, layout, index_buffer=index, index_element_size=4)
            texture = None
            if mesh.base_color_texture is not None:
                image = mesh.base_color_texture  # row 0 is the top: uploaded as is, it meets glTF UVs
                texture = ctx.texture((image.shape[1], image.shape[0]), 4, np.ascontiguousarray(image).tobytes())
                texture.build_mipmaps()
                texture.filter = (moderngl.LINEAR_MIPMAP_LINEAR, moderngl.LINEAR)
                texture.anisotropy = 8.0
            self._parts.append(dict(mesh=mesh, vao=vao, buffers=buffers + [index], texture=texture,
                                    count=len(mesh.indices)))

    def draw(self, framebuffer, camera: Camera, world_matrices, origin=(0.0, 0.0, 0.0),
             light_direction=LIGHT_DIRECTION, sky=SKY, ground=GROUND_LIGHT, fog=(1e9, 2e9)) -> None:
        """Draw every primitive skinned by node ``world_matrices`` (N, 4, 4) float64, all
        positions taken relative to ``origin`` (3,) (the camera must be in that frame too)."""
        world = np.array(world_matrices, np.float64)
        world[:, :3, 3] -= np.asarray(origin, np.float64)
        prog = self.program
        _, _, width, height = framebuffer.viewport
        prog["u_view_projection"].write(_column_major(camera.view_projection(width / height)))
        light = np.asarray(light_direction, np.float64)
        uniforms = {"u_eye": tuple(map(float, camera.eye)), "u_light_direction": tuple(map(float, light / np.linalg.norm(light))),
                    "u_sky_colour": tuple(map(float, rgba(sky)[:3])), "u_ground_colour": tuple(map(float, rgba(ground)[:3])),
                    "u_fog": tuple(map(float, fog)), "u_highlight": 0.08, "u_base_colour_texture": 0}
        for key, value in uniforms.items():
            if key in prog:
                prog[key].value = value
        framebuffer.use()
        self.ctx.enable(moderngl.DEPTH_TEST)
        try:
            for part in self._parts:
                mesh = part["mesh"]
                skinned = mesh.skin is not None and mesh.joints is not None and mesh.weights is not None
                prog["u_skinned"].value = skinned
                if skinned:
                    matrices = self.character.skins[mesh.skin].skinning_matrices(world)
                    prog["u_joint_matrices"].write(_column_major(matrices))
                if "u_model" in prog:
                    prog["u_model"].write(_column_major(world[mesh.node]))
                prog["u_base_colour_factor"].value = tuple(map(float, mesh.base_color_factor))
                (part["texture"] or self._white).use(0)
                part["vao"].render(moderngl.TRIANGLES, vertices=part["count"])
        finally:
            self.ctx.disable(moderngl.DEPTH_TEST)

    def release(self) -> None:
        for part in self._parts:
            part["vao"].release()
            for b in part["buffers"]:
                b.release()
            if part["texture"] is not None:
                part["texture"].release()
        self._parts = []
        for obj in (self._white, self.program):
            if obj is not None:
                obj.release()
        self._white = self.program = None


def _column_major(matrices) -> bytes:
    m = np.asarray(matrices, np.float64)
    return np.ascontiguousarray(np.swapaxes(m, -1, -2), np.float32).tobytes()


# -- the whole scene ----------------------------------------------------------------------------------
class CharacterView:
    """Draws :class:`~gpu_jiggle.character.pipeline.Frame` s of a character: ground, shadow, skinned
    meshes, strands, and the debug view.

    Args:
        ctx: a moderngl context. character, rig (or None): as given to the pipeline.
        framing: a :class:`Framing` (default: :meth:`Framing.of` the character).
    """

    def __init__(self, ctx, character, rig=None, framing: Framing | None = None):
        self.ctx = ctx
        self.character = character
        self.rig = rig
        self.framing = framing or Framing.of(character)
        self.meshes = SkinnedMeshes(ctx, character)
        self.shapes = Renderer(ctx)
        self.strand_colours = strand_colours(character, rig)

    def origin(self, follow) -> np.ndarray:
        """The floating origin for a frame whose camera follows by ``follow`` (3,): that
        offset on whole pairs of ground tiles, so that the checker stays put in the world."""
        tile = self.tile
        return np.floor(np.asarray(follow, np.float64) / (2 * tile)) * (2 * tile) * np.array([1.0, 0.0, 1.0])

    @property
    def tile(self) -> float:
        return self.framing.size / 4.0

    def draw(self, framebuffer, frame, camera: Camera | None = None, follow=(0.0, 0.0, 0.0), debug: bool = False,
             strands: bool = True) -> Camera:
        """Draw ``frame`` into ``framebuffer`` (cleared first), seen by ``camera`` (world;
        default: the framing's, following by ``follow`` (3,) world). Returns the camera."""
        size = self.framing.size
        _, _, width, height = framebuffer.viewport
        if camera is None:
            camera = self.framing.camera(width / height, follow)
        origin = self.origin(follow)
        rel = Camera(camera.eye - origin, camera.target - origin, camera.fov_y_degrees, camera.near, camera.far)
        fog = (8.0 * size, 30.0 * size)
        shapes = self.shapes
        floor = self.framing.floor
        shapes.ground(centre=(rel.target[0], floor, rel.target[2]), extent=70.0 * size, colour=GROUND, tile=self.tile)
        world = frame.world_matrices
        skin = self.character.skin
        body = world[skin.joints, :3, 3] if skin is not None else world[:, :3, 3]
        centre = body.mean(axis=0) - origin
        shapes.disc((centre[0], floor + 0.002 * size, centre[2]), (0.0, 1.0, 0.0), 0.2 * size, SHADOW_COLOUR)
        if strands and self.rig is not None:
            self._strands(frame, origin)
        light = key_light(camera)
        shapes.render(framebuffer, rel, clear=SKY, light_direction=light, ground_colour=GROUND_LIGHT, fog=fog)
        self.meshes.draw(framebuffer, rel, world, origin=origin, light_direction=light, fog=fog)
        if debug:
            self._debug(framebuffer, frame, rel, origin, light, fog)
        return camera

    def _strands(self, frame, origin) -> None:
        chains = self.rig.strand_chains
        groups = {}
        for chain, points, colour in zip(chains, frame.strands, self.strand_colours):
            groups.setdefault((chain.draw, chain.width), []).append((points - origin, colour))
        for (style, width), members in groups.items():
            joints = np.concatenate([p for p, _ in members])
            counts = np.array([len(p) for p, _ in members])
            colours = np.array([c for _, c in members])
            # lines: a ribbon of a fixed thin width (one pixel and more at usual distances)
            w = (width, 0.35 * width) if style == "ribbons" else (0.003 * self.framing.size,) * 2
            self.shapes.strands(joints, counts, colours, width=w)

    def _debug(self, framebuffer, frame, camera, origin, light, fog) -> None:
        """Colliders (translucent), then chain targets and simulated joints, each over what
        is drawn (the depth buffer is cleared for them: they sit inside the meshes)."""
        shapes = self.shapes
        c = frame.colliders
        if c is not None and len(c.spheres) + len(c.capsules):
            for s in c.spheres:
                shapes.sphere(s[:3] - origin, max(s[3], 1e-6), COLLIDER_COLOUR)
            for k in c.capsules:
                shapes.capsule(k[:3] - origin, k[3:6] - origin, max(k[6], 1e-6), COLLIDER_COLOUR)
            _clear_depth(framebuffer)
            shapes.render(framebuffer, camera, clear=None, light_direction=light, fog=fog)
        width = 0.004 * self.framing.size
        lines = [(p, TARGET_COLOUR) for p in frame.chain_targets] + [(p, SIMULATED_COLOUR) for p in frame.chain_positions]
        if not lines:
            return
        joints = np.concatenate([np.asarray(p) - origin for p, _ in lines])
        counts = np.array([len(p) for p, _ in lines])
        colours = np.array([rgba(colour)[:3] for _, colour in lines])
        shapes.strands(joints, counts, colours, width=(width, width))
        _clear_depth(framebuffer)
        shapes.render(framebuffer, camera, clear=None, light_direction=light, fog=(1e9, 2e9))

    def release(self) -> None:
        self.meshes.release()
        self.shapes.release()


def _clear_depth(framebuffer) -> None:
    """Clear only the depth buffer of ``framebuffer`` (its colours masked off meanwhile)."""
    mask = framebuffer.color_mask
    framebuffer.color_mask = (False, False, False, False)
    try:
        framebuffer.clear(depth=1.0)
    finally:
        framebuffer.color_mask = mask


def key_light(camera: Camera) -> np.ndarray:
    """(3,) unit world direction toward the light: high above and a little to the left of
    the camera, so that the side in view is lit wherever the camera orbits."""
    back = np.asarray(camera.eye, np.float64) - np.asarray(camera.target, np.float64)
    azimuth = math.atan2(back[0], back[2]) - math.radians(KEY_LIGHT_TURN_DEGREES)
    elevation = math.radians(KEY_LIGHT_ELEVATION_DEGREES)
    return np.array([math.cos(elevation) * math.sin(azimuth), math.sin(elevation),
                     math.cos(elevation) * math.cos(azimuth)])


def strand_colours(character, rig) -> list:
    """(3,) RGB in [0, 1] per strand chain of ``rig``: the texture's colour where the strand
    grows (at the rest-pose vertex nearest its root), a little darker so it shows on the body."""
    if rig is None:
        return []
    sk = character.skeleton
    world = sk.world_matrices(sk.rest_pose())
    textured = [(skin_on_host(character, m, world), m) for m in character.meshes
                if m.uvs is not None and m.base_color_texture is not None]
    out = []
    for chain in rig.strand_chains:
        root = world[chain.nodes[0]] @ np.append(chain.local_points[0], 1.0)
        colour = np.array([0.45, 0.3, 0.2])
        best = math.inf
        for points, mesh in textured:
            d = np.linalg.norm(points - root[:3], axis=1)
            i = int(np.argmin(d))
            if d[i] < best:
                best = d[i]
                image = mesh.base_color_texture
                u, v = mesh.uvs[i] % 1.0
                texel = image[min(int(v * image.shape[0]), image.shape[0] - 1), min(int(u * image.shape[1]), image.shape[1] - 1)]
                colour = texel[:3] / 255.0 * mesh.base_color_factor[:3]
        out.append(np.clip(colour * 0.8, 0.0, 1.0))
    return out


# -- writing frames ------------------------------------------------------------------------------------
class FrameWriter:
    """Frames to an MP4 (imageio-ffmpeg, H.264), a GIF (Pillow) or a folder of PNGs
    (``frame_0000.png``, …), chosen by ``path``: ``.mp4``, ``.gif``, else a folder."""

    def __init__(self, path, size, fps: float):
        self.path = Path(path)
        self.kind = output_kind(self.path)
        self.size, self.fps = tuple(size), float(fps)
        self.count = 0
        self._gif = []
        self._writer = None
        if self.kind == "png":
            self.path.mkdir(parents=True, exist_ok=True)
            for old in self.path.glob("frame_*.png"):  # a shorter render must not leave old frames behind
                old.unlink()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.kind == "mp4":
            import imageio_ffmpeg

            self._writer = imageio_ffmpeg.write_frames(str(self.path), self.size, fps=self.fps, codec="libx264",
                                                       quality=8, pix_fmt_out="yuv420p", macro_block_size=2,
                                                       ffmpeg_log_level="error")
            self._writer.send(None)  # start ffmpeg

    def add(self, pixels: np.ndarray) -> None:
        """One (height, width, 3) uint8 RGB frame, top row first."""
        from PIL import Image

        pixels = np.ascontiguousarray(pixels, np.uint8)
        if self.kind == "mp4":
            self._writer.send(pixels)
        elif self.kind == "gif":
            self._gif.append(Image.fromarray(pixels, "RGB"))
        else:
            Image.fromarray(pixels, "RGB").save(self.path / f"frame_{self.count:04d}.png")
        self.count += 1

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._gif:
            from PIL import Image

            frames = [f.quantize(colors=255, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE) for f in self._gif]
            frames[0].save(self.path, save_all=True, append_images=frames[1:], duration=round(1000 / self.fps), loop=0,
                           optimize=False)
            self._gif = []


def output_kind(path) -> str:
    """``"mp4"``, ``"gif"`` or ``"png"`` (a folder: no suffix, or an existing folder);
    ValueError for another suffix."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in OUTPUT_KINDS:
        return suffix[1:]
    if path.is_dir() or not suffix:
        return "png"
    raise ValueError(f"--out {path}: expected a .mp4 or .gif file, or a folder for PNG frames")


def _label(pixels: np.ndarray, text: str) -> np.ndarray:
    """``pixels`` with ``text`` on a dark band in the top-left corner."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.fromarray(pixels, "RGB")
    size = max(10, pixels.shape[0] // 24)
    try:
        font = ImageFont.load_default(size=size)
    except TypeError:  # Pillow without FreeType sizes
        font = ImageFont.load_default()
    draw = ImageDraw.Draw(image, "RGBA")
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    pad = size // 2
    draw.rectangle((0, 0, right - left + 2 * pad, bottom - top + 2 * pad), fill=(20, 24, 28, 160))
    draw.text((pad - left, pad - top), text, font=font, fill=(245, 245, 240, 255))
    return np.asarray(image)


# -- render --------------------------------------------------------------------------------------------
@dataclass
class RenderResult:
    """What :func:`render` did.

    Attributes:
        path: the written file or folder. kind: ``"mp4"``, ``"gif"`` or ``"png"``.
        frames: frames written. size: (width, height) pixels. fps. seconds: wall-clock time
        of the whole render. backend: the spring solver's backend. travel: the speed the
        character moved at (length unit/s). clip: the animation's name.
    """

    path: Path
    kind: str
    frames: int
    size: tuple
    fps: float
    seconds: float
    backend: str | None
    travel: float
    clip: str
    compare: bool = False
    extra: dict = field(default_factory=dict)


def render(model, rig, animation: str, out, seconds: float = 4.0, fps: float = 30.0, compare: bool = False,
           size=None, backend: str = "auto", samples: int = 4, travel="auto", debug: bool = False,
           progress: bool = True, azimuth_degrees: float | None = None, elevation_degrees: float | None = None,
           zoom: float = 1.0, look_at: bool = False) -> RenderResult:
    """Render ``seconds`` of ``animation`` at ``fps`` headless (EGL) to ``out`` (see
    :class:`FrameWriter`), springs on; with ``compare`` the left half plays the keyframes
    alone and the right half with springs, side by side, each labelled.

    Args:
        model: a glTF path or a loaded Character. rig: a TOML rig path, a Rig, or None.
        size: (width, height) pixels (rounded up to even numbers); default 960×540, or
            1280×540 with ``compare``.
        backend: the spring solver's. samples: multisampling (0 for none).
        travel: ``"auto"`` or a speed (see the module docstring). debug: draw the debug view.
        progress: show a progress bar on stderr (tqdm).
        azimuth_degrees, elevation_degrees, zoom: change the camera's framing.
        look_at: the head follows the rig's look-at target (see :func:`make_pipeline`).

    Raises:
        FileNotFoundError: a missing model or rig. ValueError: an invalid file, an unknown
        clip (the message lists the clips), bad numbers, an unknown output kind.
        RuntimeError: no OpenGL context.
    """
    from ..gl.context import get_context

    started = time.perf_counter()
    seconds, fps = float(seconds), float(fps)
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"seconds = {seconds!r}: expected a duration > 0")
    if not (math.isfinite(fps) and fps > 0):
        raise ValueError(f"fps = {fps!r}: expected a frame rate > 0")
    kind = output_kind(out)
    if size is None:
        size = (1280, 540) if compare else (960, 540)
    width, height = (int(v) + int(v) % 2 for v in size)
    if width < 16 or height < 16:
        raise ValueError(f"size = {tuple(size)}: expected at least 16x16 pixels")
    character, rig = open_character(model, rig)
    clip = character.clip(animation)
    ctx = get_context()
    framing = Framing.of(character, zoom=float(zoom))
    if azimuth_degrees is not None:
        framing.azimuth = math.radians(float(azimuth_degrees))
    if elevation_degrees is not None:
        framing.elevation = math.radians(float(elevation_degrees))
    runs = [True] if not compare else [False, True]
    pipelines = [make_pipeline(character, rig, clip, springs=s, travel=travel, backend=backend, context=ctx,
                               look_at=look_at) for s in runs]
    view = CharacterView(ctx, character, rig, framing)
    panel = (width // 2 if compare else width, height)
    target = OffscreenTarget(ctx, panel, samples=samples)
    writer = FrameWriter(out, (width, height), fps)
    count = max(1, int(round(seconds * fps)))
    bar = _progress(count, progress, Path(out).name)
    labels = (["keyframes + look-at", "with springs"] if look_at else ["keyframes only", "with springs"]) \
        if compare else [None]
    try:
        for k in range(count):
            t = clip.start + k / fps
            halves = []
            for pipeline, label in zip(pipelines, labels):
                frame = pipeline.step(t, 1.0 / fps)
                view.draw(target.framebuffer, frame, follow=pipeline.root_offset(t), debug=debug)
                pixels = target.pixels()
                halves.append(_label(pixels, label) if label else pixels)
            image = np.concatenate(halves, axis=1)
            if compare:
                image[:, panel[0] - 1:panel[0] + 1] = DIVIDER
            writer.add(image)
            bar.update(1)
        writer.close()
        backend_used = pipelines[-1].backend
    finally:
        bar.close()
        target.release()
        view.release()
        for p in pipelines:
            p.release()
    return RenderResult(Path(out), kind, writer.count, (width, height), fps, time.perf_counter() - started,
                        backend_used, float(np.linalg.norm(pipelines[-1].velocity)), clip.name, compare)


def _progress(total: int, enabled: bool, name: str):
    from tqdm import tqdm

    return tqdm(total=total, unit="frame", desc=f"render {name}", disable=not enabled, file=sys.stderr,
                dynamic_ncols=True, mininterval=0.5)


# -- command line -----------------------------------------------------------------------------------
def add_command(sub) -> None:
    """Register ``render`` on an argparse subparsers object (see :mod:`gpu_jiggle.app.cli`)."""
    from .viewer import argument_type, parse_size

    size = argument_type(parse_size)
    p = sub.add_parser("render", help="render a glTF character with its springs to MP4, GIF or PNGs (headless)",
                       description="Play an animation through keyframes -> springs -> skinning and render the "
                                   "skinned, textured mesh with its strands offscreen (EGL) to an MP4, a GIF or a "
                                   "folder of PNGs. --compare puts the keyframes alone (left) beside the springs "
                                   "(right).")
    p.add_argument("model", metavar="MODEL", help="the .gltf or .glb file")
    p.add_argument("--rig", required=True, metavar="RIG", help="the TOML rig (e.g. rigs/fox.toml)")
    p.add_argument("--animation", required=True, metavar="NAME", help="the animation (clip) to play")
    p.add_argument("--seconds", type=float, default=4.0, metavar="S", help="seconds of animation (default 4)")
    p.add_argument("--fps", type=float, default=30.0, metavar="F", help="frames per second (default 30)")
    p.add_argument("--out", required=True, metavar="FILE",
                   help="output: .mp4 (H.264), .gif, or a folder (no suffix) for frame_NNNN.png")
    p.add_argument("--compare", action="store_true", help="side by side: without springs (left), with (right)")
    p.add_argument("--size", type=size, default=None, metavar="WxH",
                   help="image size in pixels (default 960x540, 1280x540 with --compare)")
    p.add_argument("--samples", type=int, default=4, help="multisampling samples (default 4; 0 for none)")
    p.add_argument("--travel", default="auto", metavar="SPEED",
                   help="'auto' (default): move a locomotion clip forward at the speed its feet give; "
                        "0 keeps it on the spot; or a speed in model units per second")
    p.add_argument("--azimuth", type=float, default=None, metavar="DEG",
                   help="camera direction about the vertical, degrees (default -68: the left side, a little "
                        "from the front)")
    p.add_argument("--elevation", type=float, default=None, metavar="DEG", help="camera height, degrees (default 10)")
    p.add_argument("--zoom", type=float, default=1.0, help="> 1 moves the camera closer (default 1)")
    p.add_argument("--debug", action="store_true", help="draw chain targets, simulated joints and colliders")
    p.add_argument("--look-at", action="store_true",
                   help="the head turns to the rig's look-at target (an IK stage between keyframes and springs)")
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto",
                   help="spring solver: gpu (GLSL compute), cpu (numpy reference) or auto (default)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=run_command)


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def run_command(args) -> int:
    """``gpu-jiggle render``: 0 on success, 2 with a one-line message for bad input."""
    try:
        if args.zoom <= 0 or not math.isfinite(args.zoom):
            raise ValueError(f"--zoom {args.zoom}: expected a value > 0")
        if args.samples < 0:
            raise ValueError(f"--samples {args.samples}: expected 0 or more")
        travel = args.travel if args.travel == "auto" else _number("--travel", args.travel)
        result = render(args.model, args.rig, args.animation, args.out, seconds=args.seconds, fps=args.fps,
                        compare=args.compare, size=args.size, backend=args.backend, samples=args.samples,
                        travel=travel, debug=args.debug, progress=not args.no_progress,
                        azimuth_degrees=args.azimuth, elevation_degrees=args.elevation, zoom=args.zoom,
                        look_at=args.look_at)
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"gpu-jiggle render: {one_line(exc)}", file=sys.stderr)
        return 2
    what = "side by side (keyframes only | with springs)" if result.compare else "with springs"
    moving = f", travelling {result.travel:.0f} units/s" if result.travel > 0 else ", on the spot"
    print(f"rendered {result.clip!r} {what}: {result.frames} frames ({result.frames / result.fps:g} s at "
          f"{result.fps:g} fps, {result.size[0]}x{result.size[1]}{moving}) on the {result.backend} backend in "
          f"{result.seconds:.1f} s ({1e3 * result.seconds / result.frames:.0f} ms/frame) -> {result.path}")
    return 0


def _number(flag: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{flag} {text!r}: expected 'auto' or a number") from None

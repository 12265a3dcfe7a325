"""The drawn scene of a glTF character with its springs, shared by ``gpu-jiggle render``
(headless video, :mod:`gpu_jiggle.app.render`) and ``gpu-jiggle play`` (a window,
:mod:`gpu_jiggle.app.play`).

What a frame shows, drawn by :class:`CharacterView` into any framebuffer with a depth buffer:

- the meshes, morphed and skinned on the GPU with their materials (:class:`SkinnedMeshes`
  of :mod:`gpu_jiggle.render.meshes`: morph targets, joints and weights per vertex, one matrix
  per skin joint, base colour, alpha modes, sides, unlit, texture transform, the lighting of
  :mod:`gpu_jiggle.render.draw3d`), over a checkered ground with a soft blob shadow;
- the rig's procedural strands (ear tufts, a mane) as camera-facing ribbons or lines, as the
  rig's ``draw`` and ``width`` say, coloured like the texture where they grow
  (:func:`strand_colours`);
- in the debug view: every chain's animated targets (magenta) and simulated joints (yellow)
  as lines over everything, and the colliders as translucent shapes.

The camera frames the character's rest pose from the side (:class:`Framing`) and can follow
a travelling character (:mod:`gpu_jiggle.character.travel`); all drawing happens relative to
a floating origin near the character (float64 on the host), so the float32 matrices stay
precise however far it has travelled. Lengths scale with the character: the constants named
``*_SIZES`` are in units of the rest pose's diagonal (:attr:`Framing.size`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .draw2d import rgba
from .draw3d import FULL_AREA, Camera, Renderer
from .meshes import GROUND_LIGHT, NO_FOG, SKY, SkinnedMeshes, skin_on_host

__all__ = ["Framing", "SkinnedMeshes", "CharacterView", "key_light", "strand_colours", "skin_on_host"]

GROUND = "#aab59a"           # the floor: grey-green, unlike anything on the fox
FRAMING_MARGIN = 1.2               # the rest pose fills 1 / 1.2 of the image's width or height
FRAMING_HEIGHT_ROOM = 0.8          # half the framed height, in rest-pose heights (room for leaps, the ground)
KEY_LIGHT_TURN_DEGREES = 40.0       # the key light's direction from the camera's, about the vertical
KEY_LIGHT_ELEVATION_DEGREES = 50.0  # and its height above the horizon
TARGET_COLOUR = "#ff40ff"    # debug: animated chain targets
SIMULATED_COLOUR = "#ffd400"  # debug: simulated chain joints
COLLIDER_COLOUR = (0.2, 0.75, 1.0, 0.28)
PICKED_COLLIDER_COLOUR = (1.0, 0.55, 0.1, 0.45)  # the collider a tuning panel edits
SHADOW_COLOUR = (0.05, 0.07, 0.03, 0.28)
STRAND_COLOUR = (0.45, 0.3, 0.2)  # a strand's colour where no texture is near its root
STRAND_SHADE = 0.8                 # strands are this much darker than the texture, to show on the body
NEAR_SIZES, FAR_SIZES = 0.02, 60.0  # the camera's clipping planes
TILE_SIZES = 0.25                  # a ground tile's side
GROUND_SIZES = 70.0                # the ground's extent
SHADOW_RADIUS_SIZES = 0.2
SHADOW_LIFT_SIZES = 0.002          # the shadow sits this far above the ground
FOG_SIZES = (8.0, 30.0)            # fog from this distance to this one
LINE_STRAND_SIZES = 0.003          # the width of strands drawn as lines
DEBUG_LINE_SIZES = 0.004           # the width of the debug view's lines
RIBBON_TIP_FRACTION = 0.35         # a ribbon's width at its tip, as a fraction of its root's
MIN_COLLIDER_RADIUS = 1e-6         # debug: a collider of radius 0 is drawn this big


# -- framing ---------------------------------------------------------------------------------------
#: How far a framing's zoom goes: 0.2 (the camera five times its default distance away) to 8 (an
#: eighth of it); the window's scroll stops there, render refuses more.
ZOOM_RANGE = (0.2, 8.0)


@dataclass
class Framing:
    """Where the camera looks from, relative to the character's rest-pose bounds.

    Attributes:
        centre: (3,) world centre of the rest-pose bounds. extent: (3,) their size.
        floor: the lowest rest-pose height (the ground). size: the bounds' diagonal.
        azimuth, elevation: radians (azimuth 0: from +z; -π/2: from -x, the Fox's left side,
            so that it runs to the right). zoom: > 1 moves the camera in (within ZOOM_RANGE).
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
        """Bounds of every mesh skinned by the rest pose (morph targets at their default weights);
        of the joints for a file without meshes (its springs and skeleton are what is drawn),
        and a box of 1 unit about them where they all lie at one point, so that the camera
        always has a distance."""
        sk = character.skeleton
        world = sk.world_matrices(sk.rest_pose())
        points = [skin_on_host(character, m, world) for m in character.meshes]
        points = np.concatenate(points) if points else world[:, :3, 3].reshape(-1, 3)
        if not len(points):
            points = np.zeros((1, 3))
        low, high = points.min(axis=0), points.max(axis=0)
        if not np.any(high - low > 0):
            low, high = low - 0.5, high + 0.5
        extent = high - low
        return cls((low + high) / 2, extent, float(low[1]), float(np.linalg.norm(extent)) or 1.0, **kwargs)

    def camera(self, aspect: float, follow=(0.0, 0.0, 0.0), area=FULL_AREA) -> Camera:
        """The camera for a viewport of ``aspect`` (width / height), its target moved by
        ``follow`` (3,) world: far enough that the rest-pose bounds fit with a margin into
        ``area`` (x0, y0, x1, y1), the part of the viewport it frames (see :class:`Camera`)."""
        x0, y0, x1, y1 = area
        half_y = math.radians(self.fov_y_degrees) / 2
        half_x = math.atan(math.tan(half_y) * aspect * (x1 - x0) / (y1 - y0))
        # seen from about the side: the horizontal extent across the image, the height up it
        # (with room above and below for leaps, ear tufts and the ground in front)
        half_width = 0.5 * float(np.linalg.norm(self.extent[[0, 2]]))
        half_height = FRAMING_HEIGHT_ROOM * float(self.extent[1])
        distance = FRAMING_MARGIN * max(half_width / math.tan(half_x), half_height / math.tan(half_y)) / self.zoom
        target = self.centre + np.asarray(follow, np.float64)
        return Camera.orbit(target, self.azimuth, self.elevation, distance, fov_y_degrees=self.fov_y_degrees,
                            near=NEAR_SIZES * self.size, far=FAR_SIZES * self.size, area=tuple(area))


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
        self.selected_collider = None  # a collider's name: drawn in PICKED_COLLIDER_COLOUR in the debug view
        self.strand_colours = strand_colours(character, rig)

    def origin(self, follow) -> np.ndarray:
        """The floating origin for a frame whose camera follows by ``follow`` (3,): that
        offset on whole pairs of ground tiles, so that the checker stays put in the world."""
        tile = self.tile
        return np.floor(np.asarray(follow, np.float64) / (2 * tile)) * (2 * tile) * np.array([1.0, 0.0, 1.0])

    @property
    def tile(self) -> float:
        """The side of a ground tile (length unit)."""
        return self.framing.size * TILE_SIZES

    def draw(self, framebuffer, frame, camera: Camera | None = None, follow=(0.0, 0.0, 0.0), debug: bool = False,
             strands: bool = True, area=FULL_AREA) -> Camera:
        """Draw ``frame`` into ``framebuffer`` (cleared first), seen by ``camera`` (world;
        default: the framing's, following by ``follow`` (3,) world, framing the character in
        ``area`` of the framebuffer, see :meth:`Framing.camera`). Returns the camera."""
        size = self.framing.size
        _, _, width, height = framebuffer.viewport
        if camera is None:
            camera = self.framing.camera(width / height, follow, area)
        origin = self.origin(follow)
        rel = replace(camera, eye=camera.eye - origin, target=camera.target - origin)
        fog = (FOG_SIZES[0] * size, FOG_SIZES[1] * size)
        shapes = self.shapes
        floor = self.framing.floor
        shapes.ground(centre=(rel.target[0], floor, rel.target[2]), extent=GROUND_SIZES * size, colour=GROUND,
                      tile=self.tile)
        world = frame.world_matrices
        skin = self.character.skin
        body = world[skin.joints, :3, 3] if skin is not None else world[:, :3, 3]
        centre = body.mean(axis=0) - origin
        up = (0.0, 1.0, 0.0)
        shapes.disc((centre[0], floor + SHADOW_LIFT_SIZES * size, centre[2]), up, SHADOW_RADIUS_SIZES * size,
                    SHADOW_COLOUR)
        if strands and self.rig is not None:
            self._strands(frame, origin)
        light = key_light(camera)
        shapes.render(framebuffer, rel, clear=SKY, light_direction=light, ground_colour=GROUND_LIGHT, fog=fog)
        self.meshes.draw(framebuffer, rel, world, origin=origin, light_direction=light, fog=fog,
                         morph_weights=getattr(frame, "morph_weights", None))
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
            line = LINE_STRAND_SIZES * self.framing.size
            w = (width, RIBBON_TIP_FRACTION * width) if style == "ribbons" else (line, line)
            self.shapes.strands(joints, counts, colours, width=w)

    def _debug(self, framebuffer, frame, camera, origin, light, fog) -> None:
        """Colliders (translucent), then chain targets and simulated joints, each over what
        is drawn (the depth buffer is cleared for them: they sit inside the meshes)."""
        shapes = self.shapes
        c = frame.colliders
        if c is not None and len(c.spheres) + len(c.capsules):
            def colour(name):
                return PICKED_COLLIDER_COLOUR if name == self.selected_collider else COLLIDER_COLOUR

            for s, name in zip(c.spheres, c.sphere_names):
                shapes.sphere(s[:3] - origin, max(s[3], MIN_COLLIDER_RADIUS), colour(name))
            for k, name in zip(c.capsules, c.capsule_names):
                shapes.capsule(k[:3] - origin, k[3:6] - origin, max(k[6], MIN_COLLIDER_RADIUS), colour(name))
            _clear_depth(framebuffer)
            shapes.render(framebuffer, camera, clear=None, light_direction=light, fog=fog)
        width = DEBUG_LINE_SIZES * self.framing.size
        lines = [(p, TARGET_COLOUR) for p in frame.chain_targets] + [(p, SIMULATED_COLOUR) for p in frame.chain_positions]
        if not lines:
            return
        joints = np.concatenate([np.asarray(p) - origin for p, _ in lines])
        counts = np.array([len(p) for p, _ in lines])
        colours = np.array([rgba(colour)[:3] for _, colour in lines])
        shapes.strands(joints, counts, colours, width=(width, width))
        _clear_depth(framebuffer)
        shapes.render(framebuffer, camera, clear=None, light_direction=light, fog=NO_FOG)

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
        colour = np.array(STRAND_COLOUR)
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
        out.append(np.clip(colour * STRAND_SHADE, 0.0, 1.0))
    return out

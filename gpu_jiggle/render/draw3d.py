"""A small 3D renderer for the demos: lit spheres, capsules, discs and a checkered ground,
and strands (hair) as camera-facing ribbons.

Meshes are generated and placed on the host with numpy (a sphere or a capsule is a
latitude-longitude grid of unit normals, each ring placed at one end of the shape) and
collected in submission order, like :mod:`gpu_jiggle.render.draw2d`; strands are uploaded as two
vertices per joint and widened toward the camera in the vertex shader. :meth:`Renderer.render`
draws the batch into any moderngl framebuffer with a depth buffer: meshes first (in order,
alpha-blended, depth-tested), then strands. Shaders: ``shaders/draw3d_mesh.vert/.frag`` and
``shaders/draw3d_strand.vert/.frag``.

It works on any moderngl context with OpenGL ≥ 3.3: the headless EGL one from
:func:`gpu_jiggle.gl.context.get_context` with an :class:`~gpu_jiggle.gl.offscreen.OffscreenTarget`
(colour + depth, multisampled; here for short) read back into a PIL image, or a glfw
window's, drawing straight into ``ctx.screen`` (create the window with a depth buffer;
glfw's default has one).

World space is right-handed, y up, in the caller's length unit (SPEC section 0); a
:class:`Camera` says where it is seen from.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import moderngl
import numpy as np

from ..sim import validation
from .draw2d import rgba
from ..gl.glsl import program
from ..gl.offscreen import OffscreenTarget

__all__ = ["Camera", "FULL_AREA", "Renderer", "OffscreenTarget", "rgba", "look_at", "perspective",
           "unit_sphere_triangles", "scalp_triangles"]

# Mesh vertex: position (3 float32, world), normal (3, world, unit), colour (4, RGBA), tile (1,
# length unit; > 0 checkers the surface on world xz).
MESH_FLOATS = 11
MESH_FORMAT = "3f 3f 4f 1f"
MESH_ATTRIBUTES = ("in_position", "in_normal", "in_colour", "in_tile")
# Strand vertex: position (3, world), tangent (3, world), signed half width (1, length unit),
# along (1, 0 at the root to 1 at the tip), colour (4, RGBA). Two per joint.
STRAND_FLOATS = 12
STRAND_FORMAT = "3f 3f 1f 1f 4f"
STRAND_ATTRIBUTES = ("in_position", "in_tangent", "in_offset", "in_along", "in_colour")

UP = np.array([0.0, 1.0, 0.0])
FULL_AREA = (0.0, 0.0, 1.0, 1.0)  # a camera's area covering the whole viewport


# -- camera ------------------------------------------------------------------------------------------
def look_at(eye, target, up=(0.0, 1.0, 0.0)) -> np.ndarray:
    """The (4, 4) float64 view matrix (world → camera, column vectors) of a camera at ``eye``
    looking at ``target``; ``up`` (3,) picks the roll. Camera space looks down -z."""
    eye, target, up = (np.asarray(v, np.float64) for v in (eye, target, up))
    forward = target - eye
    distance = np.linalg.norm(forward)
    if not distance > 0:
        raise ValueError(f"eye = {eye.tolist()} and target = {target.tolist()}: expected two different points")
    forward /= distance
    side = np.cross(forward, up)
    if np.linalg.norm(side) < 1e-9:  # looking straight along up: any side will do
        side = np.cross(forward, (1.0, 0.0, 0.0) if abs(forward[0]) < 0.9 else (0.0, 0.0, 1.0))
    side /= np.linalg.norm(side)
    true_up = np.cross(side, forward)
    m = np.eye(4)
    m[0, :3], m[1, :3], m[2, :3] = side, true_up, -forward
    m[:3, 3] = -m[:3, :3] @ eye
    return m


def perspective(fov_y_degrees: float, aspect: float, near: float, far: float) -> np.ndarray:
    """The (4, 4) float64 OpenGL projection matrix (camera → clip, depth -1..1)."""
    if not (0 < fov_y_degrees < 180 and aspect > 0 and 0 < near < far):
        raise ValueError(f"perspective: expected 0 < fov_y_degrees < 180, aspect > 0 and 0 < near < far, got "
                         f"fov_y_degrees={fov_y_degrees!r}, aspect={aspect!r}, near={near!r}, far={far!r}")
    f = 1.0 / math.tan(math.radians(fov_y_degrees) / 2.0)
    m = np.zeros((4, 4))
    m[0, 0], m[1, 1] = f / aspect, f
    m[2, 2], m[2, 3] = (far + near) / (near - far), 2.0 * far * near / (near - far)
    m[3, 2] = -1.0
    return m


@dataclass
class Camera:
    """A perspective camera.

    Attributes:
        eye: (3,) world position. target: (3,) world point it looks at.
        fov_y_degrees: vertical field of view. near, far: clip distances, length unit.
        area: the part of the viewport the camera's picture fills, ``(x0, y0, x1, y1)`` as
            fractions of its width and height from the top-left (default: all of it): the
            field of view spans the area's height, the target lands at its centre (an
            off-centre projection). A window's panel leaves such an area free.
    """

    eye: np.ndarray
    target: np.ndarray
    fov_y_degrees: float = 40.0
    near: float = 0.05
    far: float = 200.0
    area: tuple = FULL_AREA

    @classmethod
    def orbit(cls, target, azimuth: float, elevation: float, distance: float, **kwargs) -> "Camera":
        """A camera ``distance`` from ``target`` (3,), seen from ``azimuth`` radians about +y
        (0: from +z, π/2: from +x) and ``elevation`` radians above the horizon."""
        target = np.asarray(target, np.float64)
        direction = np.array([math.cos(elevation) * math.sin(azimuth), math.sin(elevation),
                              math.cos(elevation) * math.cos(azimuth)])
        return cls(target + distance * direction, target, **kwargs)

    def view(self) -> np.ndarray:
        return look_at(self.eye, self.target)

    def projection(self, aspect: float) -> np.ndarray:
        """(4, 4) float64: camera → clip space for a viewport of ``aspect`` = width / height,
        the picture placed in :attr:`area`."""
        x0, y0, x1, y1 = (float(v) for v in self.area)
        if (x0, y0, x1, y1) == FULL_AREA:
            return perspective(self.fov_y_degrees, aspect, self.near, self.far)
        if not (0.0 <= x0 < x1 <= 1.0 and 0.0 <= y0 < y1 <= 1.0):
            raise ValueError(f"area = {self.area!r}: expected 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1")
        shift = np.eye(4)  # the area's normalised device coordinates → the viewport's (y up)
        shift[0, 0], shift[0, 3] = x1 - x0, x0 + x1 - 1.0
        shift[1, 1], shift[1, 3] = y1 - y0, 1.0 - y0 - y1
        return shift @ perspective(self.fov_y_degrees, aspect * (x1 - x0) / (y1 - y0), self.near, self.far)

    def view_projection(self, aspect: float) -> np.ndarray:
        """(4, 4) float64: world → clip space for a viewport of ``aspect`` = width / height."""
        return self.projection(aspect) @ self.view()

    def project(self, points, aspect: float) -> np.ndarray:
        """(N, 2) float64: world ``points`` (N, 3) on the viewport, as fractions of its width
        and height from the top-left (outside [0, 1] off screen; points behind the camera
        are left out)."""
        p = np.asarray(points, np.float64).reshape(-1, 3)
        clip = np.c_[p, np.ones(len(p))] @ self.view_projection(aspect).T
        clip = clip[clip[:, 3] > 0]
        ndc = clip[:, :2] / clip[:, 3:4]
        return np.c_[(ndc[:, 0] + 1.0) / 2.0, (1.0 - ndc[:, 1]) / 2.0]


# -- meshes generated on the host ----------------------------------------------------------------------
def _grid_triangles(rows: int, columns: int) -> np.ndarray:
    """Vertex indices (T·3,) of the triangles of a rows × columns vertex grid (row-major)."""
    r, c = np.meshgrid(np.arange(rows - 1), np.arange(columns - 1), indexing="ij")
    i = (r * columns + c).ravel()
    return np.stack([i, i + columns, i + 1, i + 1, i + columns, i + columns + 1], axis=1).ravel()


def _round_template(stacks: int, slices: int):
    """A unit sphere split at the equator, as triangles: (T·3, 3) unit normals and (T·3,) bools
    (True for the upper half). The equator ring appears twice, once per half, so that a capsule
    pulls the two halves apart into a cylinder band between them."""
    half = stacks // 2
    latitude = np.concatenate([np.linspace(0.5 * math.pi, 0.0, half + 1), np.linspace(0.0, -0.5 * math.pi, half + 1)])
    upper = np.arange(latitude.size) <= half
    longitude = np.linspace(0.0, 2.0 * math.pi, slices + 1)
    lat, lon = np.meshgrid(latitude, longitude, indexing="ij")
    normals = np.stack([np.cos(lat) * np.sin(lon), np.sin(lat), np.cos(lat) * np.cos(lon)], axis=-1).reshape(-1, 3)
    index = _grid_triangles(latitude.size, slices + 1)
    return normals[index], np.repeat(upper, slices + 1)[index]


def unit_sphere_triangles(stacks: int = 16, slices: int = 28) -> np.ndarray:
    """(T·3, 3) float64: the triangles of a unit sphere (latitude-longitude grid), three
    vertices each, counter-clockwise seen from outside; each vertex is also its normal. Cut
    or colour parts of it and draw them with :meth:`Renderer.triangles`."""
    normals, _ = _round_template(stacks, slices)
    return normals


def scalp_triangles(on_scalp, stacks: int = 24, slices: int = 40) -> np.ndarray:
    """(3·T, 3) unit normals, head frame: the triangles of a sphere inside the hairline
    ``on_scalp`` (judged at each triangle's centre), to draw in the hair's colour under the
    strands."""
    sphere = unit_sphere_triangles(stacks, slices).reshape(-1, 3, 3)
    centroid = sphere.mean(axis=1)
    return sphere[on_scalp(centroid / np.linalg.norm(centroid, axis=1, keepdims=True))].reshape(-1, 3)


def _frame_from_y(axis: np.ndarray) -> np.ndarray:
    """(3, 3) rotation whose columns are x', y' = axis (unit), z': local y maps onto ``axis``."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
    x = np.cross(helper, axis)
    x /= np.linalg.norm(x)
    z = np.cross(x, axis)
    return np.stack([x, axis, z], axis=1)


class Renderer:
    """Collects lit meshes and strands and draws them with a perspective camera.

    Args:
        ctx: a moderngl context (OpenGL ≥ 3.3).
        stacks, slices: the latitude and longitude divisions of spheres and capsules.

    Add the shapes of one frame, then :meth:`render` (which starts a new batch). Call
    :meth:`release` when done (or use ``with``).
    """

    def __init__(self, ctx, stacks: int = 16, slices: int = 28):
        if stacks < 2 or stacks % 2 or slices < 3:
            raise ValueError(f"stacks = {stacks!r}, slices = {slices!r}: expected an even stacks >= 2 and slices >= 3")
        self.ctx = ctx
        self.mesh_program = program(ctx, "draw/draw3d_mesh.vert", "draw/draw3d_mesh.frag")
        self.strand_program = program(ctx, "draw/draw3d_strand.vert", "draw/draw3d_strand.frag")
        self._round_normals, self._round_upper = _round_template(stacks, slices)
        self._meshes: list[np.ndarray] = []
        self._strands: list[tuple[np.ndarray, np.ndarray]] = []
        self._gl = {}  # name → (buffer, vertex array or None), grown as needed

    # -- shapes --------------------------------------------------------------------------------
    def clear_batch(self) -> None:
        """Forget the shapes added since the last :meth:`render`."""
        self._meshes, self._strands = [], []

    def triangles(self, positions, normals, colour) -> None:
        """Raw lit triangles: ``positions`` and ``normals`` (3·T, 3) world, one colour."""
        p = validation.float_array("positions", positions, (None, 3))
        n = validation.float_array("normals", normals, p.shape)
        if p.shape[0] % 3:
            raise ValueError(f"positions: expected a multiple of 3 rows (triangles), got {p.shape[0]}")
        self._add_mesh(p, n, rgba(colour))

    def sphere(self, centre, radius, colour) -> None:
        """A lit sphere: ``centre`` (3,) world, ``radius`` > 0 length unit; colour as :func:`rgba`."""
        c = validation.float_array("centre", centre, (3,))
        r = _positive("radius", radius)
        self._add_mesh(c + r * self._round_normals, self._round_normals, rgba(colour))

    def capsule(self, a, b, radius, colour) -> None:
        """A lit capsule: the points within ``radius`` of the segment from ``a`` to ``b`` (3,)
        world (a sphere when they coincide)."""
        a = validation.float_array("a", a, (3,))
        b = validation.float_array("b", b, (3,))
        r = _positive("radius", radius)
        axis = b - a
        length = np.linalg.norm(axis)
        frame = _frame_from_y(axis / length) if length > 0 else np.eye(3)
        normals = self._round_normals @ frame.T
        ends = np.where(self._round_upper[:, None], b, a)
        self._add_mesh(ends + r * normals, normals, rgba(colour))

    def disc(self, centre, normal, radius, colour, segments: int = 40) -> None:
        """A flat disc facing ``normal`` (3,), e.g. a blob shadow lifted a little off the ground."""
        c = validation.float_array("centre", centre, (3,))
        n = validation.float_array("normal", normal, (3,))
        n = n / np.linalg.norm(n)
        r = _positive("radius", radius)
        frame = _frame_from_y(n)
        turn = np.linspace(0.0, 2.0 * math.pi, segments + 1)
        ring = c + r * np.stack([np.cos(turn), np.zeros_like(turn), np.sin(turn)], axis=1) @ frame.T
        fan = np.stack([np.broadcast_to(c, ring[:-1].shape), ring[1:], ring[:-1]], axis=1).reshape(-1, 3)
        self._add_mesh(fan, np.broadcast_to(n, fan.shape), rgba(colour))

    def ground(self, centre=(0.0, 0.0, 0.0), extent: float = 60.0, colour="#b9c4a5", tile: float = 1.0) -> None:
        """A square floor of side ``extent`` facing +y through ``centre`` (3,), checkered with
        tiles of side ``tile`` fixed in world space (so the floor can follow the camera)."""
        c = validation.float_array("centre", centre, (3,))
        h = 0.5 * _positive("extent", extent)
        corners = c + np.array([[-h, 0, -h], [-h, 0, h], [h, 0, h], [h, 0, -h]])
        quad = corners[[0, 1, 2, 0, 2, 3]]
        self._add_mesh(quad, np.broadcast_to(UP, quad.shape), rgba(colour), _positive("tile", tile))

    def strands(self, joints, joint_counts, colours, width=(0.01, 0.004)) -> None:
        """Strands as ribbons that face the camera.

        Args:
            joints: (J, 3) float, world space: the strands' joints back to back, each root to tip
                (the layout of ``Solver.positions()`` for point chains).
            joint_counts: (C,) ints ≥ 2 summing to J: joints per strand.
            colours: (C, 3) or (C, 4) floats in [0, 1], one colour per strand.
            width: (root, tip) full widths in the length unit, graded along each strand.
        """
        p = validation.float_array("joints", joints, (None, 3))
        counts = np.asarray(joint_counts)
        if counts.ndim != 1 or not np.issubdtype(counts.dtype, np.integer) or (counts.size and counts.min() < 2):
            raise ValueError(f"joint_counts: expected a (C,) array of integers >= 2, got {counts!r}")
        if int(counts.sum()) != p.shape[0]:
            raise ValueError(f"joint_counts: they sum to {int(counts.sum())} but joints has {p.shape[0]} rows")
        c = validation.float_array("colours", colours)
        if c.ndim != 2 or c.shape[0] != counts.size or c.shape[1] not in (3, 4):
            raise ValueError(f"colours: expected shape ({counts.size}, 3) or ({counts.size}, 4), got {c.shape}")
        validation.require("colours", c, (c >= 0) & (c <= 1), "a value in [0, 1]")
        root_width, tip_width = (_positive("width", w) for w in np.broadcast_to(np.asarray(width, np.float64), (2,)))
        if c.shape[1] == 3:
            c = np.concatenate([c, np.ones((c.shape[0], 1))], axis=1)
        if not counts.size:
            return
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        strand_of = np.repeat(np.arange(counts.size), counts)
        first, last = starts[strand_of], (starts + counts - 1)[strand_of]
        index = np.arange(p.shape[0])
        tangent = p[np.minimum(index + 1, last)] - p[np.maximum(index - 1, first)]
        along = (index - first) / (last - first)
        half = 0.5 * (root_width + (tip_width - root_width) * along)
        vertices = np.empty((p.shape[0], 2, STRAND_FLOATS), np.float32)
        vertices[:, :, 0:3] = p[:, None]
        vertices[:, :, 3:6] = tangent[:, None]
        vertices[:, 0, 6], vertices[:, 1, 6] = -half, half
        vertices[:, :, 7] = along[:, None]
        vertices[:, :, 8:12] = c[strand_of][:, None]
        segment = index[index != last]  # joint j to j + 1 within a strand
        a = 2 * segment
        triangles = np.stack([a, a + 1, a + 2, a + 1, a + 3, a + 2], axis=1).ravel()
        self._strands.append((vertices.reshape(-1, STRAND_FLOATS), triangles))

    # -- drawing -------------------------------------------------------------------------------
    def render(self, framebuffer, camera: Camera, clear="#cfe3f2", light_direction=(0.4, 0.8, 0.45),
               ground_colour="#6d6352", fog=(12.0, 45.0)) -> None:
        """Draw the collected shapes into ``framebuffer`` and start a new batch.

        Args:
            framebuffer: a moderngl framebuffer with a depth attachment (an
                :class:`OffscreenTarget`'s or a window's ``ctx.screen``).
            camera: where the scene is seen from; the aspect is the framebuffer viewport's.
            clear: the sky colour: cleared to, faded to by fog and the upper ambient light;
                None draws over what is there (the depth buffer is kept too).
            light_direction: (3,) world, toward the light (normalised here).
            ground_colour: the lower ambient light (bounced off the ground).
            fog: (start, end) distances from the eye, length unit.
        """
        light = validation.float_array("light_direction", light_direction, (3,))
        light = light / np.linalg.norm(light)
        _, _, width, height = framebuffer.viewport
        matrix = camera.view_projection(width / height).T.astype(np.float32).tobytes()  # column-major
        sky = rgba(clear if clear is not None else "#cfe3f2")
        framebuffer.use()
        if clear is not None:
            framebuffer.clear(*(float(x) for x in sky), depth=1.0)
        meshes = np.concatenate(self._meshes) if self._meshes else None
        strands = self._strands
        self.clear_batch()
        common = {"u_eye": tuple(map(float, camera.eye)), "u_light_direction": tuple(map(float, light)),
                  "u_sky_colour": tuple(map(float, sky[:3])), "u_fog": tuple(map(float, fog))}
        self.ctx.enable(moderngl.DEPTH_TEST | moderngl.BLEND)
        self.ctx.blend_func = (moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA)
        try:
            if meshes is not None:
                prog = self.mesh_program
                prog["u_view_projection"].write(matrix)
                prog["u_ground_colour"].value = tuple(map(float, rgba(ground_colour)[:3]))
                _set(prog, common)
                vao = self._vertex_array("mesh", prog, meshes, None, MESH_FORMAT, MESH_ATTRIBUTES)
                vao.render(moderngl.TRIANGLES, vertices=meshes.shape[0])
            if strands:
                vertices = np.concatenate([v for v, _ in strands])
                offsets = np.cumsum([0] + [v.shape[0] for v, _ in strands[:-1]])
                triangles = np.concatenate([t + o for (_, t), o in zip(strands, offsets)]).astype(np.uint32)
                prog = self.strand_program
                prog["u_view_projection"].write(matrix)
                _set(prog, common)
                vao = self._vertex_array("strand", prog, vertices, triangles, STRAND_FORMAT, STRAND_ATTRIBUTES)
                vao.render(moderngl.TRIANGLES, vertices=triangles.size)
        finally:
            self.ctx.disable(moderngl.DEPTH_TEST | moderngl.BLEND)

    def release(self) -> None:
        """Free the GL objects (programs, buffers, vertex arrays)."""
        for vbo, ibo, vao in self._gl.values():
            for obj in (vao, ibo, vbo):
                if obj is not None:
                    obj.release()
        self._gl = {}
        for prog in (self.mesh_program, self.strand_program):
            if prog is not None:
                prog.release()
        self.mesh_program = self.strand_program = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    # -- internals -----------------------------------------------------------------------------
    def _add_mesh(self, positions, normals, colour, tile: float = 0.0) -> None:
        block = np.empty((positions.shape[0], MESH_FLOATS), np.float32)
        block[:, 0:3] = positions
        block[:, 3:6] = normals
        block[:, 6:10] = colour
        block[:, 10] = tile
        self._meshes.append(block)

    def _vertex_array(self, name, prog, vertices, indices, fmt, attributes):
        """The vertex array for ``name``, its buffers grown when too small, with this data."""
        vbo, ibo, vao = self._gl.get(name, (None, None, None))
        grow = vbo is None or vbo.size < vertices.nbytes or (indices is not None and ibo.size < indices.nbytes)
        if grow:
            for obj in (vao, ibo, vbo):
                if obj is not None:
                    obj.release()
            vbo = self.ctx.buffer(reserve=max(2 * vertices.nbytes, 1 << 16), dynamic=True)
            ibo = None if indices is None else self.ctx.buffer(reserve=max(2 * indices.nbytes, 1 << 16), dynamic=True)
            vao = self.ctx.vertex_array(prog, [(vbo, fmt, *attributes)], index_buffer=ibo, index_element_size=4)
            self._gl[name] = (vbo, ibo, vao)
        vbo.write(vertices.tobytes())
        if indices is not None:
            ibo.write(indices.tobytes())
        return vao


def _positive(name, value) -> float:
    v = float(validation.float_array(name, value, ()))
    if not v > 0:
        raise ValueError(f"{name} = {v!r}: expected a finite value > 0")
    return v


def _set(prog, uniforms: dict) -> None:
    for key, value in uniforms.items():
        if key in prog:  # the GLSL compiler drops uniforms a stage does not use
            prog[key].value = value

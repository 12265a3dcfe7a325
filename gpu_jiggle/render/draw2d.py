"""A small 2D renderer for the demos: thick lines, filled circles and polygons.

Shapes are turned into triangles on the host with numpy (a thick line segment becomes a quad,
a circle a fan) and collected in submission order; :meth:`Renderer.render` uploads the batch
once and draws it into any moderngl framebuffer, later shapes over earlier ones. The
shaders are ``shaders/draw2d.vert`` and ``shaders/draw2d.frag``.

It works on any moderngl context with OpenGL ≥ 3.3: the headless EGL one from
:func:`gpu_jiggle.gl.context.get_context` with an :class:`~gpu_jiggle.gl.offscreen.OffscreenTarget`
(here for short, as in :mod:`gpu_jiggle.render.draw3d`) read back into a PIL image, or a window's
(``moderngl.create_context()`` on a glfw window), drawing into ``ctx.screen`` or into an
:class:`OffscreenTarget` blitted there.

Coordinates are world space in the caller's length unit; a view rectangle
``(x_min, y_min, x_max, y_max)`` says what part of the world fills the framebuffer, x right,
y up (SPEC section 0).
"""
from __future__ import annotations

import moderngl
import numpy as np

from ..sim import validation
from ..gl.glsl import program
from ..gl.offscreen import OffscreenTarget

__all__ = ["Renderer", "OffscreenTarget", "rgba"]

# Vertex layout: position (2 float32, world space) then colour (4 float32, RGBA in [0, 1]).
VERTEX_FLOATS = 6
VERTEX_FORMAT = "2f 4f"
VERTEX_ATTRIBUTES = ("in_position", "in_colour")


def rgba(colour) -> np.ndarray:
    """A colour as (4,) float32 RGBA in [0, 1].

    Accepts ``"#rrggbb"``/``"#rrggbbaa"`` strings or 3/4 numbers in [0, 1].

    Raises:
        ValueError: a malformed string, a wrong count or a value outside [0, 1].
    """
    if isinstance(colour, str):
        text = colour.lstrip("#")
        if len(text) not in (6, 8) or any(ch not in "0123456789abcdefABCDEF" for ch in text):
            raise ValueError(f"colour = {colour!r}: expected '#rrggbb' or '#rrggbbaa'")
        values = [int(text[i:i + 2], 16) / 255.0 for i in range(0, len(text), 2)]
    else:
        values = validation.float_array("colour", colour, (None,))
        if values.size not in (3, 4):
            raise ValueError(f"colour: expected 3 or 4 numbers (RGB or RGBA), got {values.size}")
        validation.require("colour", values, (values >= 0) & (values <= 1), "a value in [0, 1]")
        values = list(values)
    if len(values) == 3:
        values.append(1.0)
    return np.asarray(values, np.float32)


def _points(name: str, value, minimum: int) -> np.ndarray:
    a = validation.float_array(name, value, (None, 2))
    if a.shape[0] < minimum:
        raise ValueError(f"{name}: expected at least {minimum} points, got {a.shape[0]}")
    return a


def _per_point(name: str, value, count: int) -> np.ndarray:
    a = validation.float_array(name, value)
    if a.ndim == 0:
        a = np.full(count, float(a))
    if a.shape != (count,):
        raise ValueError(f"{name}: expected a scalar or one value per point ({count},), got shape {a.shape}")
    validation.require(name, a, a > 0, "a finite value > 0")
    return a


class Renderer:
    """Collects 2D shapes as triangles and draws them into a framebuffer.

    Args:
        ctx: a moderngl context (OpenGL ≥ 3.3).
        circle_segments: triangles per full circle (round joints use the same count).

    The shapes of one frame are added between :meth:`clear_batch` (implicit after each
    :meth:`render`) and :meth:`render`. Call :meth:`release` when done (or use ``with``).
    """

    def __init__(self, ctx, circle_segments: int = 32):
        if circle_segments < 3:
            raise ValueError(f"circle_segments = {circle_segments!r}: expected an integer >= 3")
        self.ctx = ctx
        self.program = program(ctx, "draw/draw2d.vert", "draw/draw2d.frag")
        turn = np.linspace(0.0, 2.0 * np.pi, circle_segments + 1)
        self._unit_circle = np.stack([np.cos(turn), np.sin(turn)], axis=1)  # (n + 1, 2), closed
        self._vbo = None
        self._vao = None
        self._batch: list[np.ndarray] = []

    # -- shapes --------------------------------------------------------------------------------
    def clear_batch(self) -> None:
        """Forget the shapes added since the last :meth:`render`."""
        self._batch = []

    def triangles(self, vertices, colour) -> None:
        """Add raw triangles: ``vertices`` (3·T, 2) float, world space, one colour."""
        v = validation.float_array("vertices", vertices, (None, 2))
        if v.shape[0] % 3:
            raise ValueError(f"vertices: expected a multiple of 3 rows (triangles), got {v.shape[0]}")
        self._add(v, rgba(colour))

    def circles(self, centres, radii, colour) -> None:
        """Filled circles.

        Args:
            centres: (N, 2) float, world space. radii: scalar or (N,) float > 0, length unit.
            colour: see :func:`rgba`.
        """
        c = _points("centres", centres, 0)
        r = _per_point("radii", radii, c.shape[0])
        self._add(self._circle_triangles(c, r), rgba(colour))

    def circle(self, centre, radius, colour) -> None:
        """One filled circle; ``centre`` (2,) world space, ``radius`` > 0 length unit."""
        self.circles(np.reshape(validation.float_array("centre", centre, (2,)), (1, 2)), radius, colour)

    def polygon(self, points, colour) -> None:
        """A filled polygon, fanned from its vertex mean: convex or star-shaped about that point.

        Args:
            points: (N, 2) float, N ≥ 3, world space, in order around the outline.
        """
        p = _points("points", points, 3)
        centre = np.broadcast_to(p.mean(axis=0), p.shape)
        ring = np.roll(p, -1, axis=0)
        tris = np.stack([centre, p, ring], axis=1).reshape(-1, 2)
        self._add(tris, rgba(colour))

    def polyline(self, points, width, colour, round_joints: bool = True) -> None:
        """A thick line through ``points``, each segment expanded to a quad.

        Args:
            points: (N, 2) float, N ≥ 2, world space.
            width: scalar or (N,) float > 0, length unit, the full width at each point (a
                per-point width tapers each segment from one end to the other).
            colour: see :func:`rgba`.
            round_joints: add a disc of the local width at every point, which fills the
                gaps between segments at bends and rounds the two ends.
        """
        p = _points("points", points, 2)
        w = _per_point("width", width, p.shape[0])
        a, b = p[:-1], p[1:]
        direction = b - a
        length = np.linalg.norm(direction, axis=1, keepdims=True)
        direction = np.divide(direction, length, out=np.zeros_like(direction), where=length > 0)
        normal = np.stack([-direction[:, 1], direction[:, 0]], axis=1)
        na, nb = normal * (0.5 * w[:-1, None]), normal * (0.5 * w[1:, None])
        # Quad a+na, a-na, b-nb, b+nb as the triangles (a+na, a-na, b-nb) and (a+na, b-nb, b+nb).
        quads = np.stack([a + na, a - na, b - nb, a + na, b - nb, b + nb], axis=1).reshape(-1, 2)
        colour = rgba(colour)
        self._add(quads, colour)
        if round_joints:
            self._add(self._circle_triangles(p, 0.5 * w), colour)

    # -- drawing -------------------------------------------------------------------------------
    def render(self, framebuffer, view, clear=None) -> None:
        """Draw the collected shapes into ``framebuffer`` and start a new batch.

        Args:
            framebuffer: a moderngl framebuffer (an offscreen one or ``ctx.screen``).
            view: (4,) float, the world rectangle ``(x_min, y_min, x_max, y_max)`` that fills
                the framebuffer's viewport.
            clear: a colour to clear to first (see :func:`rgba`), or None to draw over.
        """
        v = validation.float_array("view", view, (4,))
        if not (v[2] > v[0] and v[3] > v[1]):
            raise ValueError(f"view = {tuple(v)}: expected x_max > x_min and y_max > y_min")
        framebuffer.use()
        if clear is not None:
            framebuffer.clear(*(float(x) for x in rgba(clear)))
        data = np.concatenate(self._batch) if self._batch else np.zeros((0, VERTEX_FLOATS), np.float32)
        self._batch = []
        if not data.shape[0]:
            return
        self._upload(data)
        self.program["u_view"].value = tuple(float(x) for x in v)
        self.ctx.enable(moderngl.BLEND)
        self.ctx.blend_func = (moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA)
        try:
            self._vao.render(moderngl.TRIANGLES, vertices=data.shape[0])
        finally:
            self.ctx.disable(moderngl.BLEND)

    def release(self) -> None:
        """Free the GL objects (program, buffer, vertex array)."""
        for obj in (self._vao, self._vbo, self.program):
            if obj is not None:
                obj.release()
        self._vao = self._vbo = self.program = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    # -- internals -----------------------------------------------------------------------------
    def _circle_triangles(self, centres: np.ndarray, radii: np.ndarray) -> np.ndarray:
        ring = self._unit_circle[None, :, :] * radii[:, None, None] + centres[:, None, :]  # (N, n + 1, 2)
        centre = np.broadcast_to(centres[:, None, :], ring[:, :-1].shape)
        return np.stack([centre, ring[:, :-1], ring[:, 1:]], axis=2).reshape(-1, 2)

    def _add(self, positions: np.ndarray, colour: np.ndarray) -> None:
        if not positions.shape[0]:
            return
        block = np.empty((positions.shape[0], VERTEX_FLOATS), np.float32)
        block[:, :2] = positions
        block[:, 2:] = colour
        self._batch.append(block)

    def _upload(self, data: np.ndarray) -> None:
        size = data.nbytes
        if self._vbo is None or self._vbo.size < size:
            for obj in (self._vao, self._vbo):
                if obj is not None:
                    obj.release()
            self._vbo = self.ctx.buffer(reserve=max(size, 1 << 16), dynamic=True)
            self._vao = self.ctx.vertex_array(self.program, [(self._vbo, VERTEX_FORMAT, *VERTEX_ATTRIBUTES)])
        self._vbo.write(data.tobytes())

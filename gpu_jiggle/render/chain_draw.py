"""Point chains drawn straight from a solver's GPU buffers: no read-back between the
simulation and the drawing.

Each pass is one indexed draw call for all chains, whose vertex shader reads the joint
positions the solver wrote at frame time (``shaders/draw/point_draw.glsl``). A vertex id stands
for (chain, joint, edge): ``chain × vertices_per_chain + 2·joint + edge`` for ribbons,
``chain × joints_per_chain + joint`` for lines; the index buffer, built once per chain set
from its segment counts, lists exactly each chain's triangles or lines, so chains shorter
than the longest draw no degenerate ones (as instanced strips of one length would).

- :meth:`ChainDrawer.grass`: tapered, shaded blades (``grass_blade.vert/.frag``), each
  facing its own direction;
- :meth:`ChainDrawer.hair`: camera-facing ribbons, or lines (``hair_strand.vert/.frag``);
- :meth:`ChainDrawer.lines` and :meth:`ChainDrawer.targets`: the simulated joints or the
  animated targets (this frame's pose) as lines, for the debug view (``chain_lines.vert``
  with ``strand_lines.frag``).

The shaders work relative to the solver's floating origin (:attr:`Solver.origin`), so the
camera goes into the same frame first (:func:`relative_camera`, in float64 on the host).
The context must be the solver's (``Solver(..., context=ctx)``).
"""
from __future__ import annotations

from dataclasses import replace

import moderngl
import numpy as np

from .draw3d import Camera
from .draw2d import rgba
from ..gl.glsl import program
from ..sim import layouts

__all__ = ["ChainDrawer", "relative_camera", "BINDINGS"]

#: Solver buffer → the storage-buffer binding the drawing shaders read it at: the solver's own
#: (``shaders/draw/point_draw.glsl`` defaults to the point kernel's bindings).
BINDINGS = {name: layouts.POINT_BINDINGS[name]
            for name in ("chain_rig", "chain_output", "joint_offset", "joint_output")}


def relative_camera(camera: Camera, origin) -> Camera:
    """``camera`` moved into the frame of a solver's floating origin (3,) (float64 subtraction
    on the host, so that the float32 matrices stay precise far from the world origin)."""
    origin = np.zeros(3) if origin is None else np.asarray(origin, np.float64)
    return replace(camera, eye=np.asarray(camera.eye, np.float64) - origin,
                   target=np.asarray(camera.target, np.float64) - origin)


def _matrix(camera: Camera, framebuffer) -> bytes:
    _, _, width, height = framebuffer.viewport
    return camera.view_projection(width / height).T.astype(np.float32).tobytes()  # column-major


def _rgb(colour):
    return tuple(float(x) for x in rgba(colour)[:3])


class ChainDrawer:
    """The programs that draw a solver's point chains from its buffers.

    Args:
        ctx: the solver's moderngl context (OpenGL ≥ 4.3: the vertex shaders read storage
            buffers).
    """

    def __init__(self, ctx):
        self.ctx = ctx
        self.programs = {
            "grass": program(ctx, "draw/grass_blade.vert", "draw/grass_blade.frag"),
            "hair": program(ctx, "draw/hair_strand.vert", "draw/hair_strand.frag"),
            "lines": program(ctx, "draw/chain_lines.vert", "draw/strand_lines.frag"),
        }
        # (layout, stride) → (the segment counts it was built for, index buffer,
        #                     vertex arrays by program, index count)
        self._indices = {}

    # -- passes ------------------------------------------------------------------------------
    def grass(self, framebuffer, solver, camera: Camera, root_width=(0.02, 0.035), light_direction=(0.4, 0.8, 0.45),
              sky="#cfe3f2", ground="#5a5236", colour_low="#2f5e1c", colour_high="#7fae3c", tip="#c9c27a",
              fog=(15.0, 60.0), show_lod=False) -> None:
        """Every chain as a grass blade: ``root_width`` (smallest, largest) full width at the
        root in the length unit, tapering to 0 at the tip; colours as :func:`draw2d.rgba`."""
        rel = relative_camera(camera, solver.origin)
        self._uniforms("grass", view_projection=_matrix(rel, framebuffer), root_width=tuple(map(float, root_width)),
                       eye=tuple(map(float, rel.eye)), light_direction=_unit(light_direction), sky_colour=_rgb(sky),
                       ground_colour=_rgb(ground), fog=tuple(map(float, fog)), colour_low=_rgb(colour_low),
                       colour_high=_rgb(colour_high), tip_colour=_rgb(tip), show_lod=bool(show_lod))
        self._draw("grass", framebuffer, solver, "ribbons")

    def hair(self, framebuffer, solver, camera: Camera, colour=(0.42, 0.24, 0.12), width=(0.004, 0.002),
             light_direction=(0.4, 0.8, 0.45), sky="#cfe3f2", fog=(12.0, 45.0), as_lines=False) -> None:
        """Every chain as a camera-facing ribbon of full ``width`` (root, tip), length unit, or
        with ``as_lines`` as one-pixel lines; each strand's colour varies around ``colour``."""
        rel = relative_camera(camera, solver.origin)
        self._uniforms("hair", view_projection=_matrix(rel, framebuffer), eye=tuple(map(float, rel.eye)),
                       width=(0.0, 0.0) if as_lines else tuple(map(float, width)), hair_colour=_rgb(colour),
                       light_direction=_unit(light_direction), sky_colour=_rgb(sky), fog=tuple(map(float, fog)))
        self._draw("hair", framebuffer, solver, "ribbon_lines" if as_lines else "ribbons")

    def lines(self, framebuffer, solver, camera: Camera, root="#202020", tip="#ffd400", depth_test=True,
              stride: int = 1) -> None:
        """Every ``stride``-th chain as lines through its simulated joints, ``root`` colour to ``tip``."""
        self._line_pass(framebuffer, solver, camera, root, tip, depth_test, False, stride)

    def targets(self, framebuffer, solver, camera: Camera, root="#600060", tip="#ff40ff", depth_test=False,
                stride: int = 1) -> None:
        """Every ``stride``-th chain's animated targets (this frame's pose) as lines (debug view)."""
        self._line_pass(framebuffer, solver, camera, root, tip, depth_test, True, stride)

    def debug(self, framebuffer, solver, camera: Camera, most: int = 600) -> None:
        """The debug view's chains: a sample of about ``most`` of them (every k-th), their
        animated targets (magenta) and simulated joints (dark at the root, yellow at the tip),
        over everything drawn before."""
        stride = max(1, solver.chain_set.chain_count // most)
        self.targets(framebuffer, solver, camera, stride=stride)
        self.lines(framebuffer, solver, camera, root="#303030", tip="#fff36b", depth_test=False, stride=stride)

    def release(self) -> None:
        for _, buffer, arrays, _ in self._indices.values():
            for vao in arrays.values():
                vao.release()
            buffer.release()
        for prog in self.programs.values():
            prog.release()
        self._indices, self.programs = {}, {}

    # -- internals -------------------------------------------------------------------------------
    def _line_pass(self, framebuffer, solver, camera, root, tip, depth_test, show_targets, stride):
        rel = relative_camera(camera, solver.origin)
        self._uniforms("lines", view_projection=_matrix(rel, framebuffer), root_colour=_rgb(root), tip_colour=_rgb(tip),
                       show_targets=bool(show_targets))
        self._draw("lines", framebuffer, solver, "lines", depth_test, max(1, int(stride)))

    def _uniforms(self, name, **values):
        prog = self.programs[name]
        for key, value in values.items():
            if key not in prog:  # the compiler drops uniforms a program does not use
                continue
            if isinstance(value, bytes):
                prog[key].write(value)
            else:
                prog[key].value = value

    def _draw(self, name, framebuffer, solver, layout, depth_test=True, stride=1):
        chain_set = solver.chain_set
        if chain_set.chain_count == 0:
            return
        buffers = solver.gpu_buffers()
        for buffer_name, binding in BINDINGS.items():
            buffers[buffer_name].bind_to_storage_buffer(binding)
        counts = chain_set.segment_counts
        longest = int(counts.max()) + 1
        prog = self.programs[name]
        if "vertices_per_chain" in prog:
            prog["vertices_per_chain"].value = 2 * longest
        if "joints_per_chain" in prog:
            prog["joints_per_chain"].value = longest
        vao, count = self._vertex_array(name, prog, layout, counts, stride)
        framebuffer.use()
        if depth_test:
            self.ctx.enable(moderngl.DEPTH_TEST)
        try:
            vao.render(moderngl.LINES if layout != "ribbons" else moderngl.TRIANGLES, vertices=count)
        finally:
            if depth_test:
                self.ctx.disable(moderngl.DEPTH_TEST)

    def _vertex_array(self, name, prog, layout, counts, stride):
        """The vertex array of ``prog`` over the index buffer of ``layout`` for these segment
        counts (built when the chain set's counts change)."""
        cached = self._indices.get((layout, stride))
        if cached is None or cached[0] is not counts:
            if cached is not None:
                for vao in cached[2].values():
                    vao.release()
                cached[1].release()
            indices = chain_indices(counts, layout, stride)
            cached = (counts, self.ctx.buffer(indices.tobytes() if indices.size else b"\0" * 4), {}, indices.size)
            self._indices[(layout, stride)] = cached
        counts_ref, buffer, arrays, size = cached
        if name not in arrays:
            arrays[name] = self.ctx.vertex_array(prog, [], index_buffer=buffer, index_element_size=4)
        return arrays[name], size


def chain_indices(segment_counts, layout: str, stride: int = 1) -> np.ndarray:
    """(N,) uint32 vertex ids for one indexed draw of all chains (or every ``stride``-th).

    ``"ribbons"``: two triangles per segment, vertex ids ``chain × 2·most_joints + 2·joint +
    edge``. ``"ribbon_lines"``: one line per segment through edge 0 of the same ids.
    ``"lines"``: one line per segment, ids ``chain × most_joints + joint``.
    """
    counts = np.asarray(segment_counts, np.int64)
    if counts.size == 0:
        return np.zeros(0, np.uint32)
    longest = int(counts.max()) + 1
    chain = np.repeat(np.arange(counts.size), counts)
    depth = np.arange(chain.size) - np.repeat(np.cumsum(counts) - counts, counts)  # segment within its chain
    if layout == "lines":
        a = chain * longest + depth
        pairs = np.stack([a, a + 1], axis=1)
    elif layout == "ribbon_lines":
        a = chain * 2 * longest + 2 * depth
        pairs = np.stack([a, a + 2], axis=1)
    elif layout == "ribbons":
        a = chain * 2 * longest + 2 * depth
        pairs = np.stack([a, a + 1, a + 2, a + 1, a + 3, a + 2], axis=1)
    else:
        raise ValueError(f"layout = {layout!r}: expected 'ribbons', 'ribbon_lines' or 'lines'")
    if stride > 1:
        pairs = pairs[chain % stride == 0]
    if pairs.size and pairs.max() >= 2 ** 32:
        raise ValueError(f"{counts.size} chains need vertex ids past 2^32")
    return pairs.astype(np.uint32).ravel()


def _unit(v):
    a = np.asarray(v, np.float64)
    return tuple(float(x) for x in a / np.linalg.norm(a))

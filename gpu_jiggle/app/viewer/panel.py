"""The tuning panel over a demo's frames: a text panel (Pillow renders the lines into a
texture, a screen-space quad shows it; used headless and as the window's fallback) and the
Dear ImGui panel (through ``imgui-bundle``: timings, frame-rate cap, pause and step,
teleport, debug view, a slider or checkbox per :class:`~gpu_jiggle.app.viewer.session.Parameter`).

``imgui_bundle`` and ``glfw`` are imported only inside the functions that use them.
"""
from __future__ import annotations

import ctypes
import os

from ...gl.glsl import program
from .session import FPS_CAPS, Parameter, Session

__all__ = ["TextPanel", "ImGuiPanel", "imgui_available"]

TEXT_FONT_SIZE = 13                     # px
TEXT_LINE_SPACING = 3                   # px between the lines
TEXT_PADDING = (8, 6)                   # px around the text, (x, y)
TEXT_BACKGROUND = (20, 24, 28, 170)     # RGBA: dark, translucent
TEXT_COLOUR = (240, 244, 240, 255)      # RGBA
PANEL_ORIGIN = (8, 8)                   # px from the top-left corner of the framebuffer
IMGUI_PANEL_WIDTH = 340                 # px (its height follows the contents)
IMGUI_PLOT_HEIGHT = 40                  # px of the frame-time plot
CAP_LABELS = ("30 fps", "60 fps", "144 fps", "uncapped")  # one per FPS_CAPS entry


# -- a text panel drawn with Pillow into a texture -------------------------------------------------
class TextPanel:
    """Lines of text on a translucent panel at the top-left of a framebuffer: Pillow renders
    them into a texture (only when they change), a screen-space quad shows it."""

    def __init__(self, ctx, font_size: int = TEXT_FONT_SIZE):
        from PIL import ImageFont

        self.ctx = ctx
        self.program = program(ctx, "draw/overlay.vert", "draw/overlay.frag")
        self.vao = ctx.vertex_array(self.program, [])
        self.texture = None
        self._text = None
        try:
            self.font = ImageFont.load_default(size=font_size)
        except TypeError:  # Pillow without FreeType sizes
            self.font = ImageFont.load_default()

    def draw(self, framebuffer, lines, origin=PANEL_ORIGIN) -> None:
        import moderngl

        text = "\n".join(lines)
        if not text:
            return
        if text != self._text:
            self._upload(text)
        framebuffer.use()
        _, _, width, height = framebuffer.viewport
        self.program["rectangle"].value = (float(origin[0]), float(origin[1]), *map(float, self.texture.size))
        self.program["viewport"].value = (float(width), float(height))
        self.program["panel"].value = 0
        self.texture.use(0)
        self.ctx.enable(moderngl.BLEND)
        self.ctx.blend_func = (moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA)
        try:
            self.vao.render(moderngl.TRIANGLE_STRIP, vertices=4)
        finally:
            self.ctx.disable(moderngl.BLEND)

    def _upload(self, text: str) -> None:
        from PIL import Image, ImageDraw

        probe = ImageDraw.Draw(Image.new("RGBA", (1, 1)))
        left, top, right, bottom = probe.multiline_textbbox((0, 0), text, font=self.font, spacing=TEXT_LINE_SPACING)
        pad_x, pad_y = TEXT_PADDING
        size = (int(right - left) + 2 * pad_x, int(bottom - top) + 2 * pad_y)
        image = Image.new("RGBA", size, TEXT_BACKGROUND)
        ImageDraw.Draw(image).multiline_text((pad_x - left, pad_y - top), text, font=self.font, fill=TEXT_COLOUR,
                                             spacing=TEXT_LINE_SPACING)
        if self.texture is None or self.texture.size != size:
            if self.texture is not None:
                self.texture.release()
            self.texture = self.ctx.texture(size, 4)
        self.texture.write(image.tobytes())
        self._text = text

    def release(self) -> None:
        for obj in (self.vao, self.program, self.texture):
            if obj is not None:
                obj.release()
        self.vao = self.program = self.texture = None


# -- Dear ImGui through imgui-bundle ---------------------------------------------------------------------
def imgui_available():
    """(True, "") when imgui-bundle can drive this process's glfw, else (False, why).

    imgui-bundle carries its own glfw library and points the ``glfw`` package at it; both
    must use the same one, so it has to be imported before ``glfw``."""
    try:
        import imgui_bundle  # noqa: F401  (sets PYGLFW_LIBRARY before glfw loads)
        from imgui_bundle import imgui  # noqa: F401
    except Exception as exc:  # missing, or a wheel that does not load here
        return False, f"imgui-bundle is not usable ({exc})"
    import glfw

    wanted = os.environ.get("PYGLFW_LIBRARY")
    loaded = getattr(getattr(glfw, "_glfw", None), "_name", None)
    if wanted and loaded and os.path.realpath(wanted) != os.path.realpath(loaded):
        return False, f"glfw was loaded from {loaded} before imgui-bundle; the panel needs {wanted}"
    return True, ""


class ImGuiPanel:
    """The tuning panel as a Dear ImGui window over the scene (glfw + OpenGL 3 backends of
    imgui-bundle, on the window's context). Install after the window's own glfw callbacks:
    imgui's chain to them."""

    def __init__(self, window):
        from imgui_bundle import imgui

        self.imgui = imgui
        self.context = imgui.create_context()
        io = imgui.get_io()
        io.set_ini_filename("")  # no imgui.ini written next to the user's files
        address = ctypes.cast(window, ctypes.c_void_p).value
        imgui.backends.glfw_init_for_opengl(address, True)
        imgui.backends.opengl3_init("#version 330")
        self.visible = True

    def wants_mouse(self) -> bool:
        return self.visible and self.imgui.get_io().want_capture_mouse

    def wants_keyboard(self) -> bool:
        return self.visible and self.imgui.get_io().want_capture_keyboard

    def draw(self, session: Session) -> None:
        imgui = self.imgui
        imgui.backends.opengl3_new_frame()
        imgui.backends.glfw_new_frame()
        imgui.new_frame()
        if self.visible:
            self._panel(session)
        imgui.render()
        imgui.backends.opengl3_render_draw_data(imgui.get_draw_data())

    def _panel(self, session: Session) -> None:
        imgui = self.imgui
        demo = session.demo
        imgui.set_next_window_pos(imgui.ImVec2(*PANEL_ORIGIN), imgui.Cond_.first_use_ever)
        imgui.set_next_window_size(imgui.ImVec2(IMGUI_PANEL_WIDTH, 0), imgui.Cond_.first_use_ever)
        imgui.begin(demo.title)
        for line in session.timing_lines():
            imgui.text(line)
        times = session.stats.frame_times()
        if times.size > 1:
            imgui.plot_lines("frame ms", times, scale_min=0.0, graph_size=imgui.ImVec2(0, IMGUI_PLOT_HEIGHT))
        for line in demo.status():
            imgui.text(line)
        cap = session.limiter.cap
        current = FPS_CAPS.index(cap) if cap in FPS_CAPS else FPS_CAPS.index(None)
        changed, chosen = imgui.combo("frame-rate cap", current, list(CAP_LABELS))
        if changed:
            session.limiter.cap = FPS_CAPS[chosen]
        _, session.paused = imgui.checkbox("pause [P]", session.paused)
        imgui.same_line()
        if imgui.button("step [N]"):
            session.paused, session.step_once = True, True
        imgui.same_line()
        if imgui.button("teleport [T]"):
            session.teleport()
        _, session.debug = imgui.checkbox("debug view [D]", session.debug)
        imgui.separator()
        for p in demo.parameters:
            self._parameter(session, p)
        message = session.current_message()
        if message:
            imgui.text_wrapped(message)
        imgui.end()

    def _parameter(self, session: Session, p: Parameter) -> None:
        imgui = self.imgui
        label = p.label + (f" [{p.letter}]" if p.letter else "")
        if p.kind == "toggle":
            changed, value = imgui.checkbox(label, bool(p.value))
            if changed:
                session.set(p, value)
            return
        flags = imgui.SliderFlags_.logarithmic if p.log else 0
        shown = p.pending if p.pending is not None else p.value
        if p.kind == "int":
            changed, value = imgui.slider_int(label, int(shown), int(p.low), int(p.high), flags=flags)
        else:
            changed, value = imgui.slider_float(label, float(shown), float(p.low), float(p.high), p.fmt, flags)
        if p.rebuild:  # applied on release: rebuilding a solver while dragging would crawl
            if changed:
                p.pending = value
            if imgui.is_item_deactivated_after_edit() and p.pending is not None:
                value, p.pending = p.pending, None
                session.set(p, value)
        elif changed:
            session.set(p, value)

    def release(self) -> None:
        imgui = self.imgui
        imgui.backends.opengl3_shutdown()
        imgui.backends.glfw_shutdown()
        imgui.destroy_context(self.context)

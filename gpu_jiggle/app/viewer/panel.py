"""The tuning panel over a demo's frames: a text panel (Pillow renders the lines into a
texture, a screen-space quad shows it; used headless and as the window's fallback) and the
Dear ImGui panel (:mod:`~gpu_jiggle.app.viewer.imgui_panel`, through ``imgui-bundle``).

``imgui_bundle`` and ``glfw`` are imported only inside the functions that use them.
"""
from __future__ import annotations

import os

from ...gl.glsl import program
from .imgui_panel import ImGuiPanel

__all__ = ["TextPanel", "ImGuiPanel", "imgui_available"]

TEXT_FONT_SIZE = 13                     # px
TEXT_LINE_SPACING = 3                   # px between the lines
TEXT_PADDING = (8, 6)                   # px around the text, (x, y)
TEXT_BACKGROUND = (20, 24, 28, 170)     # RGBA: dark, translucent
TEXT_COLOUR = (240, 244, 240, 255)      # RGBA
PANEL_ORIGIN = (8, 8)                   # px from the top-left corner of the framebuffer


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
        self.rect = None  # (x, y, width, height) px of the panel last drawn
        try:
            self.font = ImageFont.load_default(size=font_size)
        except TypeError:  # Pillow without FreeType sizes
            self.font = ImageFont.load_default()

    def draw(self, framebuffer, lines, origin=PANEL_ORIGIN) -> None:
        import moderngl

        text = "\n".join(lines)
        if not text:
            self.rect = None
            return
        if text != self._text:
            self._upload(text)
        framebuffer.use()
        _, _, width, height = framebuffer.viewport
        self.rect = (float(origin[0]), float(origin[1]), *map(float, self.texture.size))
        self.program["rectangle"].value = self.rect
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

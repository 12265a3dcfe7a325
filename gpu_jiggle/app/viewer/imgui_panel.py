"""The Dear ImGui tuning panel (through ``imgui-bundle``): timings with their plots, the
frame-rate cap, pause, step and teleport, the debug view, the demo's buttons
(:class:`~gpu_jiggle.app.viewer.session.Action`) and a slider, checkbox or combo box per
:class:`~gpu_jiggle.app.viewer.session.Parameter`, grouped under collapsing section headings.

The panel fits its content and the window: its width is what the widest label beside a
slider of :data:`SLIDER_WIDTH` needs (measured with ``imgui.calc_text_size``), at most
:data:`PANEL_MAX_FRACTION` of the window's width; with less room the sliders shrink, and
below :data:`MIN_SLIDER_WIDTH` every label goes on a line of its own above its slider, so
that no label is ever cut. Its height is its content's, at most the window's (it scrolls
beyond). The user may drag it larger or smaller, or move it; it keeps what they chose.
The parameter the arrow keys tune has its label in :data:`SELECTED_COLOUR`; Up/Down open
its section and scroll it into view.
It docks (:mod:`~gpu_jiggle.app.viewer.imgui_dock`): dragged by its title to a window edge,
or with :meth:`ImGuiPanel.dock`, it fills that side; the splitter beside it resizes it.
Each frame it tells the session where it is (``Session.panel_rect``), so that the demo
frames its subject beside it, and keeps its measurements in :attr:`ImGuiPanel.layout`.

``imgui_bundle`` is imported only when a panel is made.
"""
from __future__ import annotations

import ctypes

from .imgui_dock import PANEL_WINDOW, PanelDock
from .session import FPS_CAPS, Parameter, Session

__all__ = ["ImGuiPanel", "panel_title", "PANEL_ORIGIN", "PANEL_MAX_FRACTION", "SLIDER_WIDTH", "MIN_SLIDER_WIDTH"]

PANEL_ORIGIN = (8, 8)          # px from the window's top-left corner, where the panel starts
PANEL_MARGIN = 8               # px the panel keeps from the window's right and bottom edges
PANEL_MAX_FRACTION = 0.36      # of the window's width, the most the panel takes by itself
PANEL_MIN_WIDTH = 240          # px, the least (unless the window is narrower)
SLIDER_WIDTH = 180             # px a slider gets when there is room
MIN_SLIDER_WIDTH = 110         # px: a narrower slider puts the labels on lines of their own
PLOT_HEIGHT = 26               # px of each timing plot
SECTIONS_OPEN_UP_TO = 16       # parameters: with more, only the first section starts open
FULL_WIDTH = -1.0              # ImGui item width: to the right edge
CAP_LABELS = ("30 fps", "60 fps", "144 fps", "uncapped")  # one per FPS_CAPS entry
CONTROL_BUTTONS = (False, True, True, False)  # the control row: pause (a checkbox), step, teleport, debug view
PLOTS = ("frame", "solver", "draw")  # the Stats plotted, each over the last seconds
SELECTED_COLOUR = (1.0, 0.78, 0.3, 1.0)  # RGBA of the label the arrow keys tune (Session.selected)


def panel_title(title: str) -> str:
    """The panel's title: the demo's window title up to its key list in parentheses."""
    return title.split(" (")[0]


class ImGuiPanel:
    """The tuning panel as a Dear ImGui window over the scene.

    Args:
        window: the glfw window (its OpenGL context current): the glfw and OpenGL 3 backends
            of imgui-bundle draw into it; install after the window's own glfw callbacks,
            imgui's chain to them. None: no backend, nothing drawn, only the layout
            (:meth:`draw` then takes the display size) — for measuring it.

    Attributes:
        visible: G hides the panel. layout: the last frame's measurements (display and
            panel rectangles, each label's text width and the extent of its widget, the
            content's right edge, whether labels sit above their sliders, whether docked), px.
        docked: the panel sat in the dock space last frame.
    """

    def __init__(self, window=None):
        from imgui_bundle import imgui

        self.imgui = imgui
        self.context = imgui.create_context()
        io = imgui.get_io()
        io.set_ini_filename("")  # no imgui.ini written next to the user's files
        io.config_flags |= imgui.ConfigFlags_.docking_enable
        self.window = window
        if window is not None:
            address = ctypes.cast(window, ctypes.c_void_p).value
            imgui.backends.glfw_init_for_opengl(address, True)
            imgui.backends.opengl3_init("#version 330")
        else:  # no renderer: the font atlas is ImGui's to manage
            io.backend_flags |= imgui.BackendFlags_.renderer_has_textures
        self.visible = True
        self.layout = {}
        self._shown = False                  # the panel has had a frame (its size is as asked)
        self._chosen = [None, None]          # width and height the user dragged the panel to
        self._content_height = None          # px the last frame's content needed
        self._items = []
        self._dock = PanelDock(imgui)
        self._selected = None                # the session's selection shown last frame
        self._reveal = False                 # it changed: open its section, scroll to it

    @property
    def docked(self) -> bool:
        return self._dock.docked

    def dock(self, side) -> None:
        """Dock the panel to the window's ``side`` ("left" or "right",
        :data:`~gpu_jiggle.app.viewer.imgui_dock.DOCK_SIDES`) at its fitted width, from the
        next frame on; None undocks it (it floats again).

        Raises:
            ValueError: another ``side``."""
        self._dock.ask(side)

    def wants_mouse(self) -> bool:
        return self.visible and self.imgui.get_io().want_capture_mouse

    def wants_keyboard(self) -> bool:
        return self.visible and self.imgui.get_io().want_capture_keyboard

    def draw(self, session: Session, display_size=None) -> None:
        """One frame of the panel over what is drawn; sets ``session.panel_rect`` (framebuffer
        px, None while hidden). ``display_size`` (width, height) px without a window."""
        imgui = self.imgui
        imgui.set_current_context(self.context)
        io = imgui.get_io()
        if self.window is not None:
            imgui.backends.opengl3_new_frame()
            imgui.backends.glfw_new_frame()
        else:
            io.display_size = imgui.ImVec2(*map(float, display_size))
            io.delta_time = 1.0 / 60.0
        imgui.new_frame()
        if self.visible:
            title = panel_title(session.demo.title)
            self._dock.frame(lambda: self._size(session, title, docked=True)[0], self.layout.get("panel", [0] * 4)[2])
        rect = self._panel(session) if self.visible else None
        imgui.render()
        if self.window is not None:
            imgui.backends.opengl3_render_draw_data(imgui.get_draw_data())
        if rect is not None:
            sx, sy = io.display_framebuffer_scale.x or 1.0, io.display_framebuffer_scale.y or 1.0
            rect = (rect[0] * sx, rect[1] * sy, rect[2] * sx, rect[3] * sy)
        session.panel_rect = rect

    # -- the window and its size -------------------------------------------------------------------
    def _size(self, session, title: str, docked: bool = False) -> tuple:
        """(width, height) px to give the panel this frame (``docked``: its fitted width, for
        the dock node, whatever the user chose while it floated)."""
        imgui = self.imgui
        style = imgui.get_style()
        display = imgui.get_io().display_size
        frame_h = imgui.get_frame_height()
        pad, inner = style.frame_padding.x, style.item_inner_spacing.x
        labels = self._labels(session)
        widest = max(imgui.calc_text_size(text).x for text in labels)
        demo = session.demo
        needs = [widest + inner + SLIDER_WIDTH, *self._widths(self._control_row(), CONTROL_BUTTONS),
                 imgui.calc_text_size(title).x + frame_h + 2 * pad + inner]  # the title bar's
        needs += [imgui.calc_text_size(s).x + frame_h + 2 * pad for s in self._sections(demo) if s]
        needs += self._widths([p.label + (f" [{p.letter}]" if p.letter else "") for p in demo.parameters
                               if p.kind == "toggle"], [False] * len(demo.parameters))
        needs += self._widths([a.label + (f" [{a.letter}]" if a.letter else "") for a in getattr(demo, "actions", [])],
                              [True] * len(getattr(demo, "actions", [])))
        wanted = max(needs) + 2 * style.window_padding.x + style.scrollbar_size
        room_x = max(display.x - PANEL_ORIGIN[0] - PANEL_MARGIN, 1.0)
        room_y = max(display.y - PANEL_ORIGIN[1] - PANEL_MARGIN, 1.0)
        fitted = min(wanted, max(PANEL_MIN_WIDTH, PANEL_MAX_FRACTION * display.x))
        width = fitted if docked else (self._chosen[0] or fitted)
        height = self._chosen[1] or self._content_height or room_y
        return min(width, room_x), min(height, room_y)

    def _panel(self, session: Session):
        """The panel's window and content; returns its rectangle (x, y, width, height) px."""
        imgui = self.imgui
        style = imgui.get_style()
        demo = session.demo
        title = panel_title(demo.title)
        width, height = self._size(session, title)
        imgui.set_next_window_pos(imgui.ImVec2(*PANEL_ORIGIN), imgui.Cond_.first_use_ever)
        if not self.docked:  # a docked panel has its dock node's size
            imgui.set_next_window_size(imgui.ImVec2(width, height), imgui.Cond_.always)
        imgui.begin(f"{title}{PANEL_WINDOW}")
        pos, size = imgui.get_window_pos(), imgui.get_window_size()
        rect = (pos.x, pos.y, size.x, size.y)
        was_docked = self._dock.seen()
        if imgui.is_window_collapsed():
            imgui.end()
            return rect
        for axis, (asked, got) in enumerate(zip((width, height), (size.x, size.y))):
            if self._shown and not (was_docked or self.docked) and abs(got - asked) > 0.5:  # the user dragged an edge
                self._chosen[axis] = got
        self._shown = True
        self._left = left = imgui.get_cursor_screen_pos().x
        self._right = left + imgui.get_content_region_avail().x
        self._items, self._columns = [], {}
        self._content(session)
        self._content_height = imgui.get_cursor_pos_y() - style.item_spacing.y + style.window_padding.y
        display = imgui.get_io().display_size
        title_room = size.x - imgui.get_frame_height() - 2 * style.frame_padding.x - style.item_inner_spacing.x
        self.layout = {"display": [display.x, display.y], "panel": list(rect), "content_left": left,
                       "content_right": self._right, "sections": self._columns,
                       "title": {"text": title, "width": imgui.calc_text_size(title).x, "room": title_room},
                       "scroll_max_y": imgui.get_scroll_max_y(), "content_height": self._content_height,
                       "docked": self.docked,
                       "items": self._items}
        imgui.end()
        return rect

    # -- the content -------------------------------------------------------------------------------
    def _content(self, session: Session) -> None:
        imgui = self.imgui
        demo = session.demo
        for line in session.timing_lines():
            self._text(line)
        shown = session.stats.shown()
        for name in PLOTS:  # full width, named by their overlay: the lines above say how each was measured
            values = session.stats.series(name)
            if values.size > 1:
                overlay = name if shown.get(name) is None else f"{name} {shown[name]:.1f} ms"
                imgui.plot_lines(f"###plot:{name}", values, overlay_text=overlay, scale_min=0.0,
                                 graph_size=imgui.ImVec2(self._right - self._left, PLOT_HEIGHT))
                self._note("")
        for line in demo.status():
            self._text(line)
        sections = self._sections(demo)
        self._column(None, ["frame-rate cap"] + [self._label(p) for p in sections[None] if p.kind != "toggle"])
        cap = session.limiter.cap
        current = FPS_CAPS.index(cap) if cap in FPS_CAPS else FPS_CAPS.index(None)
        changed, chosen = self._labelled("frame-rate cap", "cap",
                                         lambda id_: imgui.combo(id_, current, list(CAP_LABELS)))
        if changed:
            session.limiter.cap = FPS_CAPS[chosen]
        pause, step, teleport, debug = self._control_row()
        _, session.paused = imgui.checkbox(pause, session.paused)
        self._note(pause)
        self._flow(step, button=True)
        if imgui.button(step):
            session.paused, session.step_once = True, True
        self._note(step)
        self._flow(teleport, button=True)
        if imgui.button(teleport):
            session.teleport()
        self._note(teleport)
        self._flow(debug, button=False)
        _, session.debug = imgui.checkbox(debug, session.debug)
        self._note(debug)
        actions = list(getattr(demo, "actions", []))
        if actions:
            imgui.separator()
            for i, action in enumerate(actions):
                label = action.label + (f" [{action.letter}]" if action.letter else "")
                if i:
                    self._flow(label, button=True)
                if imgui.button(f"{label}###action:{action.key}"):
                    session.act(action)
                self._note(label)
        imgui.separator()
        first_named = True
        selected = session.selected_parameter()
        self._reveal = self._selected not in (None, session.selected)  # the arrow keys moved: show where to
        self._selected = session.selected
        for section, parameters in sections.items():
            if section is not None:
                open_ = len(demo.parameters) <= SECTIONS_OPEN_UP_TO or first_named
                first_named = False
                if self._reveal and any(q is selected for q in parameters):
                    imgui.set_next_item_open(True)
                expanded = imgui.collapsing_header(f"{section}###section:{section}",
                                                   imgui.TreeNodeFlags_.default_open if open_ else 0)
                # a header spans the window, padding included: its text (after the arrow) must fit
                start = imgui.get_item_rect_min().x + imgui.get_font_size() + 3 * imgui.get_style().frame_padding.x
                self._note(section, (start, start + imgui.calc_text_size(section).x))
                if not expanded:
                    continue
                self._column(section, [self._label(p) for p in parameters if p.kind != "toggle"])
            for p in parameters:
                self._parameter(session, p)
        message = session.current_message()
        if message:
            self._text(message)

    def _parameter(self, session: Session, p: Parameter) -> None:
        selected = session.selected_parameter() is p
        if selected:
            self.imgui.push_style_color(self.imgui.Col_.text, self.imgui.ImVec4(*SELECTED_COLOUR))
        try:
            self._widget(session, p)
        finally:
            if selected:
                self.imgui.pop_style_color()
        if selected and self._reveal:
            self.imgui.set_scroll_here_y(0.5)

    def _widget(self, session: Session, p: Parameter) -> None:
        imgui = self.imgui
        label = self._label(p)
        if p.kind == "toggle":
            changed, value = imgui.checkbox(f"{label}###{p.key}", bool(p.value))
            self._note(label)
            if changed:
                session.set(p, value)
            return
        if p.kind == "choice":
            changed, value = self._labelled(label, p.key, lambda id_: imgui.combo(id_, int(p.value), list(p.choices)))
            if changed:
                session.set(p, int(value))
            return
        flags = imgui.SliderFlags_.logarithmic if p.log else 0
        shown = p.pending if p.pending is not None else p.value
        if p.kind == "int":
            changed, value = self._labelled(label, p.key, lambda id_: imgui.slider_int(
                id_, int(shown), int(p.low), int(p.high), flags=flags))
        else:
            changed, value = self._labelled(label, p.key, lambda id_: imgui.slider_float(
                id_, float(shown), float(p.low), float(p.high), p.fmt, flags))
        if p.rebuild:  # applied on release: rebuilding a solver while dragging would crawl
            if changed:
                p.pending = value
            if imgui.is_item_deactivated_after_edit() and p.pending is not None:
                value, p.pending = p.pending, None
                session.set(p, value)
        elif changed:
            session.set(p, value)

    # -- layout helpers ----------------------------------------------------------------------------
    @staticmethod
    def _label(p: Parameter) -> str:
        return p.label + (f" [{p.letter}]" if p.letter else "")

    def _column(self, section, labels) -> None:
        """Size the sliders of a section (or of the top, None) to its widest label among
        ``labels`` (those beside a slider or combo box): all of the section's
        end at the same place; with less than :data:`MIN_SLIDER_WIDTH` left, its labels go
        above their sliders."""
        imgui = self.imgui
        beside = [text for text in labels if text]
        widest = max((imgui.calc_text_size(text).x for text in beside), default=0.0)
        self._slider = self._right - self._left - widest - imgui.get_style().item_inner_spacing.x
        self._stacked = self._slider < MIN_SLIDER_WIDTH
        self._columns[str(section)] = {"widest_label": widest, "slider_width": self._slider, "stacked": self._stacked}

    def _labelled(self, label: str, key: str, widget):
        """``widget(imgui_label)``, a framed widget (slider, combo, plot), with ``label``
        beside it when the sliders have room, else on a line of its own above it (full width).
        The widget's id is ``key`` either way, so that a drag survives the change."""
        imgui = self.imgui
        if self._stacked:
            imgui.text(label)
            self._note(label)
            imgui.set_next_item_width(FULL_WIDTH)
            result = widget(f"###{key}")
            self._note("")
        else:
            imgui.set_next_item_width(self._slider)
            result = widget(f"{label}###{key}")
            self._note(label)
        return result

    def _text(self, line: str) -> None:
        self.imgui.text_wrapped(line)
        self._note(line)

    def _flow(self, label: str, button: bool) -> None:
        """Put the next widget (a button, or a checkbox, labelled ``label``) beside the last
        one when it fits there, else on the next line."""
        imgui = self.imgui
        width = self._widths([label], [button])[0]
        if imgui.get_item_rect_max().x + imgui.get_style().item_spacing.x + width <= self._right:
            imgui.same_line()

    def _widths(self, labels, buttons) -> list:
        """Widths (px) of widgets with these labels: a button where ``buttons`` says True,
        else a checkbox."""
        imgui = self.imgui
        style = imgui.get_style()
        out = []
        for label, button in zip(labels, buttons):
            text = imgui.calc_text_size(label).x
            out.append(text + 2 * style.frame_padding.x if button
                       else imgui.get_frame_height() + style.item_inner_spacing.x + text)
        return out

    def _note(self, text: str, span=None) -> None:
        """Keep the last item's extent (from left to right, ``span`` when given) and its
        label's width for :attr:`layout`."""
        imgui = self.imgui
        low, high = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        left, right = span if span is not None else (low.x, high.x)
        self._items.append({"text": text, "text_width": imgui.calc_text_size(text).x if text else 0.0,
                            "left": left, "right": right, "top": low.y, "bottom": high.y})

    @staticmethod
    def _control_row() -> tuple:
        return "pause [P]", "step [N]", "teleport [T]", "debug view [D]"

    @staticmethod
    def _sections(demo) -> dict:
        """The demo's parameters by section, the unsectioned first, then in order of appearance."""
        sections = {None: []}
        for p in demo.parameters:
            sections.setdefault(getattr(p, "section", None), []).append(p)
        return sections

    def _labels(self, session: Session) -> list:
        """Every label shown beside a slider or combo box."""
        return ["frame-rate cap"] + [self._label(p) for p in session.demo.parameters if p.kind != "toggle"]

    def release(self) -> None:
        imgui = self.imgui
        imgui.set_current_context(self.context)
        if self.window is not None:
            imgui.backends.opengl3_shutdown()
            imgui.backends.glfw_shutdown()
        imgui.destroy_context(self.context)

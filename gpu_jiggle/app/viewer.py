"""The interactive window and the headless runner of the real-time demos (03 grass, 04 hair).

One frame loop serves both: step the demo's solver by the frame time, draw it straight from
the solver's buffers, then either show it in a glfw window or write it to PNGs (and a GIF
or video). Around it:

- timings: the frame time, the solver's time on the CPU (pose and parameter upload,
  dispatch) and on the GPU (an OpenGL timer query around the solver's commands, read a few
  frames later so that it never stalls the pipeline), and the drawing's;
- a tuning panel: Dear ImGui (through ``imgui-bundle``) in a window, with a text panel and
  keys as the fallback (and in headless images);
- a frame-rate cap (30, 60, 144 or none: the motion does not change with it), pause and
  single step, a teleport, a debug view.

A demo is any object with the members of :class:`Demo`; the window and the headless run
build it on their OpenGL context with ``make_demo(ctx, args)``.

Keys (window): Esc quits; P or Space pauses; N or . steps one frame (1/60 s) while paused;
T teleports; D toggles the debug view; F cycles the frame-rate cap; G hides the panel;
Up/Down (or Tab) pick a parameter in the text panel, Left/Right change it; a demo's own
toggles have their letter. Drag with the left mouse button to orbit, scroll to zoom.
"""
from __future__ import annotations

import ctypes
import math
import os
import sys
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..gl.glsl import program

__all__ = ["Parameter", "Demo", "GpuTimer", "FrameLimiter", "Stats", "TextPanel", "Session", "FPS_CAPS",
           "add_arguments", "demo_parser", "parse_demo_args", "check_arguments", "run", "run_headless",
           "run_strip", "run_window", "open_window", "parse_size"]

FPS_CAPS = (30, 60, 144, None)   # frame-rate caps offered, frames per second (None: uncapped)
STEP_SECONDS = 1.0 / 60.0        # what one single step advances while paused
MAX_FRAME_SECONDS = 0.1          # a stalled window (dragged, debugger) resumes instead of leaping ahead
PANEL_REFRESH_SECONDS = 0.25     # how often the numbers on the panel change (readable, cheap)


# -- what a demo offers ------------------------------------------------------------------------------
@dataclass
class Parameter:
    """A value the panel and the keys can change.

    Attributes:
        key: the name passed to ``Demo.set_parameter``.
        label: what the panel shows (with the unit).
        value: the current value (float, int, or bool for a toggle).
        low, high: the range a slider covers (ignored for toggles).
        kind: ``"float"``, ``"int"`` or ``"toggle"``.
        log: a logarithmic slider; keys multiply by ``step`` instead of adding it.
        step: what one key press adds (or multiplies by, with ``log``).
        rebuild: the demo rebuilds its solver for a change (a count): a slider applies it
            when released, not while dragged.
        letter: a key that flips a toggle (upper-case letter), or None.
        fmt: printf format for the value.
    """

    key: str
    label: str
    value: float
    low: float = 0.0
    high: float = 1.0
    kind: str = "float"
    log: bool = False
    step: float = 0.1
    rebuild: bool = False
    letter: str | None = None
    fmt: str = "%.2f"
    pending: object = field(default=None, repr=False, compare=False)  # a rebuild slider's value while dragged

    def text(self) -> str:
        if self.kind == "toggle":
            return f"{self.label}: {'on' if self.value else 'off'}" + (f" [{self.letter}]" if self.letter else "")
        return f"{self.label}: {self.fmt % self.value}"

    def nudged(self, direction: int):
        """The value one key press away (direction +1 or -1), within the range."""
        if self.kind == "toggle":
            return not self.value
        if self.log:
            value = self.value * self.step ** direction
        else:
            value = self.value + direction * self.step
        value = min(max(value, self.low), self.high)
        return int(round(value)) if self.kind == "int" else float(value)


class Demo:
    """The members a demo offers to :class:`Session`. Demos need not inherit from it; those
    that do get these as defaults (no parameters, a fixed camera, nothing to free).

    Attributes:
        name: file-name stem for outputs, e.g. ``"03_grass_field"``. title: window title.
        parameters: the :class:`Parameter` list shown on the panel, in order.
    """

    name = "demo"
    title = "gpu_jiggle"
    parameters: list = []

    def value(self, key: str):
        """The current value of the parameter ``key`` (KeyError for an unknown one)."""
        for p in self.parameters:
            if p.key == key:
                return p.value
        raise KeyError(key)

    def step(self, dt: float) -> None:
        """Advance the simulation by a frame of ``dt`` seconds (poses, colliders, solver)."""

    def draw(self, framebuffer, debug: bool) -> None:
        """Draw the frame into ``framebuffer`` (with a depth buffer), clearing it first."""

    def set_parameter(self, key: str, value) -> None:
        """Apply a changed parameter; raise ValueError to refuse it (the panel shows why)."""
        raise ValueError(f"unknown parameter {key!r}")

    def teleport(self) -> None:
        """Jump something far, with the solver told so (``solver.teleport``, snapped colliders)."""

    def status(self) -> list:
        """Extra lines for the panel (counts, levels of detail, ...)."""
        return []

    def orbit(self, dx: float, dy: float) -> None:
        """Turn the camera by a mouse drag of (dx, dy) pixels."""

    def zoom(self, steps: float) -> None:
        """Move the camera in (steps > 0) or out by scroll steps."""

    def pointer(self, x: float, y: float) -> None:
        """The mouse over the window, x and y in [0, 1] from the top-left."""

    def release(self) -> None:
        """Free GPU objects (the solver, programs, buffers)."""


# -- timing ------------------------------------------------------------------------------------------
class GpuTimer:
    """GPU time of the commands issued inside :meth:`measure`, from OpenGL timer queries.

    A ring of ``depth`` queries: each measurement reads the result of the query used
    ``depth`` measurements ago, which the GPU has finished by then, so reading never waits.
    :attr:`available` is False when the context has no timer queries; :attr:`last_ms` is
    None until a result came back.
    """

    def __init__(self, ctx, depth: int = 3):
        try:
            self._queries = [ctx.query(time=True) for _ in range(depth)]
        except Exception:  # no ARB_timer_query: moderngl raises its own error type
            self._queries = []
        self._count = 0
        self.last_ms = None

    @property
    def available(self) -> bool:
        return bool(self._queries)

    @contextmanager
    def measure(self):
        if not self._queries:
            yield
            return
        query = self._queries[self._count % len(self._queries)]
        if self._count >= len(self._queries):
            self.last_ms = query.elapsed * 1e-6  # nanoseconds of its previous use
        with query:
            yield
        self._count += 1

    def release(self) -> None:
        self._queries = []  # moderngl frees a query when it is collected


class FrameLimiter:
    """Sleeps so that frames start no more often than ``cap`` per second (None: never sleeps)."""

    def __init__(self, cap=None):
        self.cap = cap
        self._next = None

    def wait(self) -> None:
        if self.cap is None:
            self._next = None
            return
        now = time.perf_counter()
        if self._next is None or now - self._next > 0.1:  # late by far: start the cadence again
            self._next = now
        if self._next > now:
            time.sleep(self._next - now)
        self._next += 1.0 / self.cap


class Stats:
    """Rolling means over the last ``window`` frames, in milliseconds: frame, solver (CPU and
    GPU), drawing (CPU and GPU). :meth:`shown` gives values refreshed a few times a second."""

    NAMES = ("frame", "solver_cpu", "solver_gpu", "draw_cpu", "draw_gpu")

    def __init__(self, window: int = 60):
        self.history = {name: deque(maxlen=window) for name in self.NAMES}
        self._shown = {name: None for name in self.NAMES}
        self._shown_at = -math.inf

    def add(self, name: str, ms) -> None:
        if ms is not None:
            self.history[name].append(float(ms))

    def mean(self, name: str):
        h = self.history[name]
        return sum(h) / len(h) if h else None

    def shown(self) -> dict:
        now = time.perf_counter()
        if now - self._shown_at >= PANEL_REFRESH_SECONDS:
            self._shown = {name: self.mean(name) for name in self.NAMES}
            self._shown_at = now
        return self._shown

    def frame_times(self) -> np.ndarray:
        return np.array(self.history["frame"], np.float32)


def _ms(value) -> str:
    return "-" if value is None else f"{value:.1f}"


# -- the frame loop shared by the window and the headless run ----------------------------------------
class Session:
    """The demo and everything around its frames: pause, single step, debug view, frame-rate
    cap, the selected parameter, timings and messages.

    Args:
        ctx: the moderngl context everything runs on. make_demo: ``(ctx, args) -> demo``.
        args: the parsed command line (see :func:`add_arguments`).
    """

    def __init__(self, ctx, make_demo, args):
        self.ctx = ctx
        self.demo = make_demo(ctx, args)
        self.paused = False
        self.step_once = False
        self.debug = bool(getattr(args, "debug", False))
        self.limiter = FrameLimiter(args.fps_cap)
        self.selected = 0
        self.message, self._message_until = "", 0.0
        self.stats = Stats()
        self.solver_timer = GpuTimer(ctx)
        self.draw_timer = GpuTimer(ctx)
        # A software renderer (llvmpipe) rasterizes when the frame is flushed, not between the
        # timer query's ends: its drawing "GPU time" means nothing, so it is not shown.
        self.software = is_software(ctx)
        self.frames = 0
        self.quit = False

    def frame(self, framebuffer, dt: float) -> None:
        """One frame: step the demo (unless paused) and draw it into ``framebuffer``."""
        run = not self.paused or self.step_once
        if run:
            step = STEP_SECONDS if self.paused else dt
            self.step_once = False
            started = time.perf_counter()
            with self.solver_timer.measure():
                self.demo.step(step)
            self.stats.add("solver_cpu", 1e3 * (time.perf_counter() - started))
            self.stats.add("solver_gpu", self.solver_timer.last_ms)
        started = time.perf_counter()
        with self.draw_timer.measure():
            self.demo.draw(framebuffer, self.debug)
        if self.software:
            # llvmpipe rasterizes on the CPU when the frame is flushed: finish here, or the
            # next frame's solver dispatch would wait for it and be timed with it. (On a GPU
            # that would only stall the pipeline; there the timer queries tell the split.)
            self.ctx.finish()
        self.stats.add("draw_cpu", 1e3 * (time.perf_counter() - started))
        self.stats.add("draw_gpu", self.draw_timer.last_ms)
        self.frames += 1

    # -- controls ----------------------------------------------------------------------------
    def set(self, parameter: Parameter, value) -> bool:
        """Give ``parameter`` a new value through the demo; a refusal becomes the message."""
        if value == parameter.value:
            return True
        try:
            self.demo.set_parameter(parameter.key, value)
        except ValueError as exc:
            self.say(str(exc))
            return False
        parameter.value = value
        return True

    def nudge(self, direction: int) -> None:
        params = self.demo.parameters
        if params:
            p = params[self.selected % len(params)]
            self.set(p, p.nudged(direction))

    def select(self, direction: int) -> None:
        if self.demo.parameters:
            self.selected = (self.selected + direction) % len(self.demo.parameters)

    def toggle(self, letter: str) -> bool:
        for p in self.demo.parameters:
            if p.kind == "toggle" and p.letter == letter:
                self.set(p, not p.value)
                return True
        return False

    def cycle_cap(self) -> None:
        i = FPS_CAPS.index(self.limiter.cap) if self.limiter.cap in FPS_CAPS else -1
        self.limiter.cap = FPS_CAPS[(i + 1) % len(FPS_CAPS)]

    def teleport(self) -> None:
        self.demo.teleport()
        self.say("teleported")

    def say(self, text: str, seconds: float = 4.0) -> None:
        self.message, self._message_until = text, time.perf_counter() + seconds

    def current_message(self) -> str:
        return self.message if time.perf_counter() < self._message_until else ""

    # -- text ----------------------------------------------------------------------------------
    def timing_lines(self, fresh: bool = False) -> list:
        """Frame, solver and drawing times; ``fresh`` means now, else as last shown."""
        s = {name: self.stats.mean(name) for name in Stats.NAMES} if fresh else self.stats.shown()
        fps = 1000.0 / s["frame"] if s["frame"] else None
        cap = "uncapped" if self.limiter.cap is None else f"cap {self.limiter.cap}"
        gpu = "" if self.solver_timer.available else " (no GPU timer)"
        draw = f"draw {_ms(s['draw_cpu'])} ms cpu"
        if not self.software:
            draw += f", {_ms(s['draw_gpu'])} ms gpu"
        return [f"frame {_ms(s['frame'])} ms ({'-' if fps is None else f'{fps:.0f}'} fps, {cap})",
                f"solver {_ms(s['solver_cpu'])} ms cpu, {_ms(s['solver_gpu'])} ms gpu{gpu}", draw]

    def panel_lines(self, with_parameters: bool = True) -> list:
        lines = [self.demo.title] + self.timing_lines() + list(self.demo.status())
        state = []
        if self.paused:
            state.append("PAUSED (N steps)")
        if self.debug:
            state.append("debug view")
        if state:
            lines.append(", ".join(state))
        if with_parameters:
            for i, p in enumerate(self.demo.parameters):
                lines.append(("> " if i == self.selected % len(self.demo.parameters) else "  ") + p.text())
            lines.append("keys: P pause  N step  T teleport  D debug")
            lines.append("F fps cap  G panel  arrows tune  Esc quit")
        message = self.current_message()
        if message:
            lines.append(message)
        return lines

    def release(self) -> None:
        self.solver_timer.release()
        self.draw_timer.release()
        self.demo.release()


# -- a text panel drawn with Pillow into a texture -------------------------------------------------
class TextPanel:
    """Lines of text on a translucent panel at the top-left of a framebuffer: Pillow renders
    them into a texture (only when they change), a screen-space quad shows it."""

    def __init__(self, ctx, font_size: int = 13):
        from PIL import ImageFont

        self.ctx = ctx
        self.program = program(ctx, "overlay.vert", "overlay.frag")
        self.vao = ctx.vertex_array(self.program, [])
        self.texture = None
        self._text = None
        try:
            self.font = ImageFont.load_default(size=font_size)
        except TypeError:  # Pillow without FreeType sizes
            self.font = ImageFont.load_default()

    def draw(self, framebuffer, lines, origin=(8, 8)) -> None:
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
        left, top, right, bottom = probe.multiline_textbbox((0, 0), text, font=self.font, spacing=3)
        size = (int(right - left) + 16, int(bottom - top) + 12)
        image = Image.new("RGBA", size, (20, 24, 28, 170))
        ImageDraw.Draw(image).multiline_text((8 - left, 6 - top), text, font=self.font, fill=(240, 244, 240, 255),
                                             spacing=3)
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
        imgui.set_next_window_pos(imgui.ImVec2(8, 8), imgui.Cond_.first_use_ever)
        imgui.set_next_window_size(imgui.ImVec2(340, 0), imgui.Cond_.first_use_ever)
        imgui.begin(demo.title)
        for line in session.timing_lines():
            imgui.text(line)
        times = session.stats.frame_times()
        if times.size > 1:
            imgui.plot_lines("frame ms", times, scale_min=0.0, graph_size=imgui.ImVec2(0, 40))
        for line in demo.status():
            imgui.text(line)
        labels = ["30 fps", "60 fps", "144 fps", "uncapped"]
        current = FPS_CAPS.index(session.limiter.cap) if session.limiter.cap in FPS_CAPS else 3
        changed, chosen = imgui.combo("frame-rate cap", current, labels)
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


# -- command line ----------------------------------------------------------------------------------------
def parse_size(text: str):
    """``"960x540"`` → (960, 540)."""
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"size {text!r}: expected WIDTHxHEIGHT in pixels, e.g. 960x540") from None
    if width < 16 or height < 16:
        raise ValueError(f"size {text!r}: expected at least 16x16 pixels")
    return width, height


def parse_fps_cap(text: str):
    """``"60"`` → 60; ``"uncapped"`` (or ``"none"``, ``"0"``) → None; one of :data:`FPS_CAPS`."""
    if text.lower() in ("none", "uncapped", "0"):
        return None
    if text not in ("30", "60", "144"):
        raise ValueError(f"{text!r}: expected 30, 60, 144 or uncapped")
    return int(text)


def parse_frame_list(text: str) -> list:
    """``"6,11"`` → [6, 11] (frame numbers; empty text → [])."""
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"{text!r}: expected comma-separated frame numbers") from None


def argument_type(parse):
    """An ``argparse`` type from a parser that raises ValueError: its message is what the
    command line reports (instead of "invalid value")."""
    import argparse

    def convert(text):
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = parse.__name__
    return convert


def add_arguments(parser, default_frames=120, size=(960, 540), strip: bool = False, backend: bool = False) -> None:
    """The options the demos share: window or headless, frames, size, outputs, cap.

    Args:
        default_frames: the headless frame count, or words for it, for the help.
        size: the default image and window size (width, height) px.
        strip: the demo's headless run writes a contact strip and a GIF at its own frame size
            (:func:`run_strip`): ``--size`` is the window's, and there is no ``--png-every``
            or ``--video``.
        backend: offer ``--backend auto|gpu|cpu`` for the spring solver (demos that read
            the springs back; those drawing straight from the solver's buffers need the GPU).
    """
    if backend:
        parser.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto",
                            help="solver backend (default auto: the GPU when OpenGL 4.3 is there)")
    what = "a contact strip and a GIF" if strip else "PNGs"
    parser.add_argument("--headless", action="store_true",
                        help=f"render offscreen (EGL) to {what} in --out instead of opening a window")
    parser.add_argument("--frames", type=int, default=None,
                        help=f"frames to run (headless default {default_frames}; a window runs until closed)")
    parser.add_argument("--fps", type=float, default=60.0,
                        help="headless: frames per simulated second (default 60); a window follows real time")
    parser.add_argument("--fps-cap", type=argument_type(parse_fps_cap), default=60,
                        help="window: frame-rate cap 30, 60, 144 or uncapped (default 60; F cycles them)")
    parser.add_argument("--size", type=argument_type(parse_size), default=tuple(size),
                        help=f"{'window' if strip else 'image or window'} size (default {size[0]}x{size[1]})")
    parser.add_argument("--out", default="out/demo", help=f"headless: folder for the {what} (default out/demo)")
    if not strip:
        parser.add_argument("--png-every", type=int, default=10,
                            help="headless: write every Nth frame as a PNG (default 10; the last frame always)")
        parser.add_argument("--video", default=None,
                            help="headless: also write the frames as a video: .gif (Pillow) or .mp4 (needs ffmpeg)")
    parser.add_argument("--samples", type=int, default=None,
                        help="multisampling (antialiasing) samples; default 4, or 0 on a software renderer "
                             "(llvmpipe), where it costs several times the drawing")
    parser.add_argument("--no-panel", action="store_true", help="no timing/tuning panel over the image")
    parser.add_argument("--text-panel", action="store_true",
                        help="window: the text panel and keys instead of the Dear ImGui panel")
    parser.add_argument("--debug", action="store_true", help="start with the debug view on (D toggles it)")
    parser.add_argument("--screenshot", default=None,
                        help="window: save the last of --frames frames to this PNG, then close the window")
    parser.add_argument("--screenshot-frames", type=argument_type(parse_frame_list), default=[],
                        help="window: also save these frames (comma-separated numbers, 1 = the first), "
                             "as SCREENSHOT with _NNNN before the suffix")


def demo_parser(doc: str, **options):
    """An ``argparse`` parser for a demo script: the first paragraph of its docstring
    ``doc`` as the description (the rest shown as written) and :func:`add_arguments`
    (``options`` go to it)."""
    import argparse

    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser, **options)
    return parser


def parse_demo_args(parser, argv, title: str, counts=(), screenshot_after: int = 60):
    """Parse and check a demo's command line (:func:`check_arguments`); each option named in
    ``counts`` (e.g. ``"strands"``) must be at least 1. ``title`` is the window's."""
    args = parser.parse_args(argv)
    check_arguments(parser, args, screenshot_after)
    for name in counts:
        value = getattr(args, name.replace("-", "_"))
        if value < 1:
            parser.error(f"--{name} {value}: expected at least 1")
    args.title = title
    return args


def check_arguments(parser, args, screenshot_after: int = 60) -> None:
    """Refuse bad values (through ``parser.error``); a screenshot without ``--frames`` is
    taken after ``screenshot_after`` frames (or the last of ``--screenshot-frames``)."""
    if args.frames is not None and args.frames < 1:
        parser.error(f"--frames {args.frames}: expected at least 1")
    if not (args.fps > 0 and math.isfinite(args.fps)):
        parser.error(f"--fps {args.fps}: expected a positive number")
    if getattr(args, "png_every", 0) < 0:
        parser.error(f"--png-every {args.png_every}: expected 0 or more")
    args.screenshot_frames = sorted(set(args.screenshot_frames))
    if args.screenshot and args.frames is None:
        args.frames = max([screenshot_after] + args.screenshot_frames)
    video = getattr(args, "video", None)
    if video and Path(video).suffix.lower() not in (".gif", ".mp4"):
        parser.error(f"--video {video}: expected a .gif or .mp4 file name")
    if video and Path(video).suffix.lower() == ".mp4":
        import shutil

        if shutil.which("ffmpeg") is None:
            parser.error(f"--video {video}: MP4 needs ffmpeg on PATH; write a .gif instead")


SOFTWARE_RENDERERS = ("llvmpipe", "softpipe", "swiftshader", "software rasterizer")


def is_software(ctx) -> bool:
    """Whether ``ctx`` renders on the CPU (llvmpipe and the like)."""
    renderer = str(ctx.info.get("GL_RENDERER", "")).lower()
    return any(name in renderer for name in SOFTWARE_RENDERERS)


def choose_samples(ctx, requested) -> int:
    """MSAA samples: ``requested`` when given, else 0 on a software renderer and 4 elsewhere."""
    if requested is not None:
        return max(0, int(requested))
    return 0 if is_software(ctx) else 4


def numbered(path, frame: int) -> Path:
    p = Path(path)
    return p.with_name(f"{p.stem}_{frame:04d}{p.suffix or '.png'}")


# -- headless ----------------------------------------------------------------------------------------------
class _VideoWriter:
    """Frames to a GIF (Pillow, one palette from the first frame) or an MP4 (ffmpeg on PATH)."""

    def __init__(self, path, size, fps: float):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.size, self.fps = size, fps
        self._frames, self._process = [], None
        if self.path.suffix.lower() == ".mp4":
            import shutil
            import subprocess

            ffmpeg = shutil.which("ffmpeg")
            if ffmpeg is None:
                raise RuntimeError(f"--video {path}: MP4 needs ffmpeg on PATH; write a .gif instead")
            self._process = subprocess.Popen(
                [ffmpeg, "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24",
                 "-s", f"{size[0]}x{size[1]}", "-r", f"{fps:g}", "-i", "-", "-pix_fmt", "yuv420p",
                 "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", str(self.path)], stdin=subprocess.PIPE)

    def add(self, pixels: np.ndarray) -> None:
        if self._process is not None:
            self._process.stdin.write(np.ascontiguousarray(pixels).tobytes())
        else:
            from PIL import Image
            self._frames.append(Image.fromarray(pixels, "RGB"))

    def close(self, palette_from=None) -> None:
        """Finish the file. A GIF's one palette is taken from ``palette_from`` (a PIL image
        spanning the motion, e.g. a contact strip), else from the first frame."""
        if self._process is not None:
            self._process.stdin.close()
            if self._process.wait() != 0:
                raise RuntimeError(f"ffmpeg failed writing {self.path}")
            return
        if not self._frames:
            return
        from PIL import Image

        source = palette_from if palette_from is not None else self._frames[0]
        palette = source.quantize(colors=200, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        frames = [f.quantize(palette=palette, dither=Image.Dither.NONE) for f in self._frames]
        frames[0].save(self.path, save_all=True, append_images=frames[1:], duration=round(1000 / self.fps), loop=0)


def _run_offscreen(make_demo, args, size, frames: int, wanted, keep, panel: bool):
    """The frame loop of the headless runs: ``frames`` frames of ``1/args.fps`` s offscreen
    (EGL) at ``size`` through the same :class:`Session` as the window. After each frame
    whose index ``wanted(i)`` accepts (and the last), ``keep(i, pixels, session)`` gets its
    (H, W, 3) uint8 RGB pixels. Returns ``(session, lines, seconds)`` with the timing and
    status lines, or None (said on stderr) without an OpenGL 4.3 context."""
    from ..gl.context import get_context
    from ..gl.offscreen import OffscreenTarget

    try:
        ctx = get_context()
    except RuntimeError as exc:
        print(f"no OpenGL 4.3 context for the demo: {exc}", file=sys.stderr)
        return None
    session = Session(ctx, make_demo, args)
    session.limiter.cap = None  # headless frames come as fast as they are made
    target = OffscreenTarget(ctx, size, samples=choose_samples(ctx, args.samples))
    text = TextPanel(ctx) if panel else None
    dt = 1.0 / args.fps
    started = time.perf_counter()
    try:
        for i in range(frames):
            tick = time.perf_counter()
            session.frame(target.framebuffer, dt)
            if text is not None:
                text.draw(target.framebuffer, session.panel_lines(with_parameters=False))
            if i == frames - 1 or wanted(i):
                keep(i, target.pixels(), session)
            else:
                ctx.finish()  # frames not read back still count in full
            session.stats.add("frame", 1e3 * (time.perf_counter() - tick))
        lines = session.timing_lines(fresh=True) + list(session.demo.status())
    finally:
        if text is not None:
            text.release()
        target.release()
        session.release()
    return session, lines, time.perf_counter() - started


def _summary(session, frames: int, lines, seconds: float) -> None:
    print(f"{session.demo.name}: {frames} frames headless in {seconds:.1f} s; " + "; ".join(lines))


def run_headless(make_demo, args, default_frames: int = 120) -> int:
    """Render ``args.frames`` frames of ``1/args.fps`` s offscreen (EGL) through the same
    :class:`Session` as the window; write PNGs into ``args.out`` (every ``args.png_every``-th
    frame and the last) and optionally ``args.video``. Prints what it wrote and the timings."""
    from PIL import Image

    frames = args.frames if args.frames is not None else default_frames
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    video = _VideoWriter(args.video, args.size, args.fps) if args.video else None
    written = []

    def png_frame(i):
        return bool(args.png_every) and i % args.png_every == 0

    def keep(i, pixels, session):
        if i == frames - 1 or png_frame(i):
            path = out / f"{session.demo.name}_{i:04d}.png"
            Image.fromarray(pixels, "RGB").save(path)
            written.append(path)
        if video is not None:
            video.add(pixels)

    ran = _run_offscreen(make_demo, args, args.size, frames, lambda i: video is not None or png_frame(i), keep,
                         panel=not args.no_panel)
    if ran is None:
        return 1
    session, lines, seconds = ran
    if video is not None:
        video.close()
    name = session.demo.name
    _summary(session, frames, lines, seconds)
    print(f"{name}: {len(written)} PNGs in {out} (last: {written[-1]})")
    if video is not None:
        print(f"{name}: video: {args.video}")
    return 0


STRIP_GAP = 4  # px of white between the frames of a contact strip
STRIP_GIF_FPS = 30.0  # about this many frames per second in a strip run's GIF


def run_strip(make_demo, args, default_frames: int, frame_size, strip_frames) -> int:
    """Headless for a demo shown as a sequence (demos 01 and 02): ``args.frames`` frames of
    ``1/args.fps`` s offscreen through the same :class:`Session` as the window (no panel),
    written into ``args.out`` as ``NAME_strip.png``, a contact strip of the frames
    ``strip_frames(frames, fps)`` (a list of indices) side by side, each captioned with
    ``demo.caption()`` when the demo has one, and ``NAME.gif``, every frame at about
    :data:`STRIP_GIF_FPS` per second with one palette taken from the strip.
    ``args.screenshot``, when given, receives the last frame. Prints what it wrote and the
    timings.

    Args:
        frame_size: (width, height) px of each frame. default_frames: frames when
            ``args.frames`` is None.
    """
    from PIL import Image

    frames = args.frames if args.frames is not None else default_frames
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    gif_every = max(1, round(args.fps / STRIP_GIF_FPS))
    strip_at = set(strip_frames(frames, args.fps))
    strip, animation, last = [], [], []

    def keep(i, pixels, session):
        if i % gif_every == 0:
            animation.append(pixels)
        if i in strip_at:
            image = Image.fromarray(pixels, "RGB")
            text = session.demo.caption() if hasattr(session.demo, "caption") else None
            strip.append(caption(image, text) if text else image)
        if i == frames - 1:
            last.append(Image.fromarray(pixels, "RGB"))

    ran = _run_offscreen(make_demo, args, frame_size, frames, lambda i: i % gif_every == 0 or i in strip_at, keep,
                         panel=False)
    if ran is None:
        return 1
    session, lines, seconds = ran
    name = session.demo.name
    width, height = frame_size
    sheet = Image.new("RGB", (len(strip) * (width + STRIP_GAP) - STRIP_GAP, height), "white")
    for k, image in enumerate(strip):
        sheet.paste(image, (k * (width + STRIP_GAP), 0))
    strip_path = out / f"{name}_strip.png"
    sheet.save(strip_path)
    gif = _VideoWriter(out / f"{name}.gif", frame_size, args.fps / gif_every)
    for pixels in animation:
        gif.add(pixels)
    gif.close(palette_from=sheet)  # one palette spanning the motion: no flicker between frames
    _summary(session, frames, lines, seconds)
    print(f"{name}: contact strip ({len(strip)} frames): {strip_path}")
    print(f"{name}: animation ({len(animation)} frames): {gif.path}")
    if args.screenshot:
        Path(args.screenshot).parent.mkdir(parents=True, exist_ok=True)
        last[0].save(args.screenshot)
        print(f"{name}: last frame: {args.screenshot}")
    return 0


def spread_frames(frames: int, count: int) -> list:
    """``count`` frame indices spread evenly from the first frame to the last (fewer when
    there are fewer frames): a contact strip's default."""
    return sorted(set(np.linspace(0, frames - 1, min(count, frames)).round().astype(int).tolist()))


def caption(image, text: str):
    """Write ``text`` on a white band in the top-left corner of a PIL image (in place)."""
    from PIL import ImageDraw, ImageFont

    try:
        font = ImageFont.load_default(size=16)
    except TypeError:  # Pillow without FreeType sizes
        font = ImageFont.load_default()
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 8 + 9 * len(text), 24), fill=(255, 255, 255))
    draw.text((5, 3), text, fill=(30, 30, 30), font=font)
    return image


# -- window ---------------------------------------------------------------------------------------------------
def open_window(title: str, size):
    """A glfw window with an OpenGL 4.3 core context and a depth buffer, made current.

    Returns ``(window, gui_reason)``, gui_reason "" when the Dear ImGui panel can be used
    (else why not), or ``(None, why)`` without a window."""
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return None, "no display (DISPLAY and WAYLAND_DISPLAY are unset)"
    gui_ok, gui_reason = imgui_available()  # first: it chooses the glfw library
    import glfw

    errors = []
    glfw.set_error_callback(lambda code, text: errors.append(text.decode() if isinstance(text, bytes) else str(text)))
    if not glfw.init():
        return None, f"glfw could not start: {'; '.join(errors) or 'unknown error'}"
    glfw.window_hint(glfw.CONTEXT_VERSION_MAJOR, 4)
    glfw.window_hint(glfw.CONTEXT_VERSION_MINOR, 3)
    glfw.window_hint(glfw.OPENGL_PROFILE, glfw.OPENGL_CORE_PROFILE)
    glfw.window_hint(glfw.OPENGL_FORWARD_COMPAT, True)
    glfw.window_hint(glfw.RESIZABLE, False)
    glfw.window_hint(glfw.DEPTH_BITS, 24)
    glfw.window_hint(glfw.SAMPLES, 0)  # multisampling happens in an offscreen target (see run_window)
    window = glfw.create_window(int(size[0]), int(size[1]), title, None, None)
    if not window:
        glfw.terminate()
        return None, f"no OpenGL 4.3 core window: {'; '.join(errors) or 'unknown error'}"
    glfw.make_context_current(window)
    glfw.swap_interval(0)  # the frame-rate cap paces frames, not the display
    return window, ("" if gui_ok else gui_reason)


def save_screen(ctx, size, path) -> None:
    """Write the window's back buffer (before the swap) to ``path`` as PNG. It is copied
    into a framebuffer of ours first: reading the default framebuffer directly selects a
    colour attachment it does not have (GL_INVALID_OPERATION on a core context)."""
    from PIL import Image

    colour = ctx.renderbuffer(tuple(size), components=4)
    copy = ctx.framebuffer(color_attachments=[colour])
    try:
        ctx.copy_framebuffer(copy, ctx.screen)
        data = copy.read(components=3, alignment=1)
    finally:
        ctx.screen.use()
        copy.release()
        colour.release()
    pixels = np.frombuffer(data, np.uint8).reshape(size[1], size[0], 3)[::-1]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.ascontiguousarray(pixels), "RGB").save(path)


def run_window(make_demo, args, window, gui_reason: str = "") -> int:
    """The real-time loop in ``window``: real frame times (at most :data:`MAX_FRAME_SECONDS`),
    the cap, the panel, keys and mouse; ends when the window is closed (or after
    ``args.frames`` frames, which closes it the same way)."""
    import glfw
    import moderngl

    from ..gl.offscreen import OffscreenTarget

    session = panel = gui = target = None
    drag = {"at": None}
    try:
        ctx = moderngl.create_context()  # the window's OpenGL 4.3 context: solver and drawing share it
        session = Session(ctx, make_demo, args)
        samples = choose_samples(ctx, args.samples)
        if samples:  # draw multisampled offscreen, resolve into the window
            target = OffscreenTarget(ctx, glfw.get_framebuffer_size(window), samples=samples)
        name = session.demo.name
        size = glfw.get_framebuffer_size(window)

        def on_key(_window, key, _scancode, action, _mods):
            if action not in (glfw.PRESS, glfw.REPEAT) or (gui is not None and gui.wants_keyboard()):
                return
            if key == glfw.KEY_ESCAPE:
                glfw.set_window_should_close(window, True)
            elif action == glfw.REPEAT and key not in (glfw.KEY_LEFT, glfw.KEY_RIGHT, glfw.KEY_N, glfw.KEY_PERIOD):
                return
            elif key in (glfw.KEY_P, glfw.KEY_SPACE):
                session.paused = not session.paused
            elif key in (glfw.KEY_N, glfw.KEY_PERIOD):
                session.paused, session.step_once = True, True
            elif key == glfw.KEY_T:
                session.teleport()
            elif key == glfw.KEY_D:
                session.debug = not session.debug
            elif key == glfw.KEY_F:
                session.cycle_cap()
            elif key == glfw.KEY_G:
                if gui is not None:
                    gui.visible = not gui.visible
                else:
                    state["panel"] = not state["panel"]
            elif key in (glfw.KEY_UP, glfw.KEY_DOWN, glfw.KEY_TAB):
                session.select(-1 if key == glfw.KEY_UP else 1)
            elif key in (glfw.KEY_LEFT, glfw.KEY_RIGHT):
                session.nudge(-1 if key == glfw.KEY_LEFT else 1)
            elif glfw.KEY_A <= key <= glfw.KEY_Z:
                session.toggle(chr(key))

        def on_button(_window, button, action, _mods):
            if button == glfw.MOUSE_BUTTON_LEFT:
                grab = action == glfw.PRESS and not (gui is not None and gui.wants_mouse())
                drag["at"] = glfw.get_cursor_pos(window) if grab else None

        def on_cursor(_window, x, y):
            if drag["at"] is not None:
                x0, y0 = drag["at"]
                session.demo.orbit(x - x0, y - y0)
                drag["at"] = (x, y)
            width, height = glfw.get_window_size(window)
            session.demo.pointer(min(max(x / max(width, 1), 0.0), 1.0), min(max(y / max(height, 1), 0.0), 1.0))

        def on_scroll(_window, _dx, dy):
            if not (gui is not None and gui.wants_mouse()):
                session.demo.zoom(dy)

        state = {"panel": not args.no_panel}
        glfw.set_key_callback(window, on_key)
        glfw.set_mouse_button_callback(window, on_button)
        glfw.set_cursor_pos_callback(window, on_cursor)
        glfw.set_scroll_callback(window, on_scroll)
        if getattr(args, "text_panel", False) and not gui_reason:
            gui_reason = "--text-panel"
        if not args.no_panel and not gui_reason:
            gui = ImGuiPanel(window)  # after our callbacks: imgui chains to them
        else:
            panel = TextPanel(ctx)
        ui = "Dear ImGui panel" if gui is not None else "text panel and keys"
        if gui is None and gui_reason:
            ui += f" ({gui_reason})"
        print(f"{name}: window on {ctx.info['GL_RENDERER']}, {ui}, {samples or 'no'} multisampling")
        last = glfw.get_time()
        shots = set(args.screenshot_frames)
        while not glfw.window_should_close(window):
            glfw.poll_events()
            now = glfw.get_time()
            if session.frames:  # the first frame has no frame before it to time
                session.stats.add("frame", 1e3 * (now - last))
            dt, last = min(now - last, MAX_FRAME_SECONDS), now
            if target is not None:
                session.frame(target.framebuffer, dt)
                ctx.copy_framebuffer(ctx.screen, target.framebuffer)
            else:
                session.frame(ctx.screen, dt)
            if gui is not None:
                gui.draw(session)
            elif state["panel"]:
                panel.draw(ctx.screen, session.panel_lines())
            if args.screenshot and session.frames in shots:
                save_screen(ctx, size, numbered(args.screenshot, session.frames))
            if args.frames is not None and session.frames >= args.frames:
                if args.screenshot:
                    save_screen(ctx, size, args.screenshot)
                    print(f"{name}: screenshot after {session.frames} frames: {args.screenshot}")
                glfw.set_window_should_close(window, True)  # the same way out as the close button
            glfw.swap_buffers(window)
            session.limiter.wait()
        print(f"{name}: window closed after {session.frames} frames; " + "; ".join(session.timing_lines(fresh=True)))
        error = ctx.error
        if error != "GL_NO_ERROR":
            print(f"{name}: OpenGL error {error}", file=sys.stderr)
    finally:
        if gui is not None:
            gui.release()
        if panel is not None:
            panel.release()
        if target is not None:
            target.release()
        if session is not None:
            session.release()
        glfw.destroy_window(window)
        glfw.terminate()
    return 0


def run(make_demo, args, default_frames: int = 120, headless=None) -> int:
    """A window when there is a display and ``--headless`` is not given, else headless:
    ``headless(make_demo, args, default_frames)``, by default :func:`run_headless`."""
    if not args.headless:
        window, reason = open_window(getattr(args, "title", "gpu_jiggle"), args.size)
        if window is not None:
            return run_window(make_demo, args, window, reason)
        print(f"no window ({reason}); rendering headless instead", file=sys.stderr)
    return (headless or run_headless)(make_demo, args, default_frames)

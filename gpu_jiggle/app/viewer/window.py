"""The demos' real-time window: a glfw window with an OpenGL 4.3 core context, the frame
loop at real frame times (capped, see :class:`~gpu_jiggle.app.viewer.session.FrameLimiter`),
keys and mouse, the panel (Dear ImGui, or the text panel), screenshots; and :func:`run`,
which opens the window when there is a display and falls back to the headless run.

Keys: Esc quits; P or Space pauses; N or . steps one frame (1/60 s) while paused;
T teleports; D toggles the debug view; F cycles the frame-rate cap; G hides the panel;
Up/Down (or Tab) pick a parameter in the text panel, Left/Right change it; a demo's own
toggles have their letter. Drag with the left mouse button to orbit, scroll to zoom; a
left click without a drag goes to the demo (``Demo.click``). The window may be resized
(``--size`` is where it starts): the picture, the panel and the framing follow the new size
from the next frame; a minimised window waits, neither stepping nor drawing.

With ``GPU_JIGGLE_LAYOUT=1`` in the environment, each screenshot gets a JSON file beside it
(``NAME.layout.json``): the frame's number and framebuffer size, the panel's measurements, the
panel's rectangle the picture was framed beside, the part of the window it leaves free, the
subject's projected bounds and the timings, for tests and for checking a layout by eye.

A scripted session (tests, recordings) drives the window through ``args.each_frame`` (see
:func:`run_window`) and resizes it with :func:`resize_window`, which waits for the window
system to have resized it.

``glfw`` (and, through the panel, ``imgui_bundle``) is imported only inside the functions
that open or drive a window.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

from ...extras import require
from ...render.video import write_image
from .args import DEFAULT_FRAMES
from .headless import run_headless
from .panel import ImGuiPanel, TextPanel, imgui_available
from .session import MS_PER_SECOND, Session, choose_samples, demo_credit

__all__ = ["open_window", "resize_window", "save_screen", "save_layout", "save_shot", "layout_path", "run_window",
           "run", "numbered", "fit_framebuffers",
           "MAX_FRAME_SECONDS", "LAYOUT_ENV", "RESIZE_TIMEOUT_SECONDS"]

MAX_FRAME_SECONDS = 0.1    # a stalled window (dragged, debugger) resumes instead of leaping ahead
CLICK_SLOP = 3.0           # px the mouse may move between press and release and still click
LAYOUT_ENV = "GPU_JIGGLE_LAYOUT"  # set: each screenshot gets its layout JSON beside it
RESIZE_TIMEOUT_SECONDS = 30.0  # resize_window: a window not resized by then is an error, not a slow machine
GL_VERSION = (4, 3)        # the core profile the solver's compute shaders need
DEPTH_BITS = 24


def numbered(path, frame: int) -> Path:
    """``path`` with ``_NNNN`` (the frame number) before its suffix (``.png`` when it has
    none): where ``--screenshot-frames`` go."""
    p = Path(path)
    return p.with_name(f"{p.stem}_{frame:04d}{p.suffix or '.png'}")


def open_window(title: str, size):
    """A resizable glfw window of ``size`` (width, height) px, with an OpenGL 4.3 core
    context and a depth buffer, made current.

    Returns ``(window, gui_reason)``, gui_reason "" when the Dear ImGui panel can be used
    (else why not), or ``(None, why)`` without a window."""
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return None, "no display (DISPLAY and WAYLAND_DISPLAY are unset)"
    gui_ok, gui_reason = imgui_available()  # first: it chooses the glfw library
    glfw = require("glfw", "a window")

    errors = []
    glfw.set_error_callback(lambda code, text: errors.append(text.decode() if isinstance(text, bytes) else str(text)))
    if not glfw.init():
        return None, f"glfw could not start: {'; '.join(errors) or 'unknown error'}"
    glfw.window_hint(glfw.CONTEXT_VERSION_MAJOR, GL_VERSION[0])
    glfw.window_hint(glfw.CONTEXT_VERSION_MINOR, GL_VERSION[1])
    glfw.window_hint(glfw.OPENGL_PROFILE, glfw.OPENGL_CORE_PROFILE)
    glfw.window_hint(glfw.OPENGL_FORWARD_COMPAT, True)
    glfw.window_hint(glfw.RESIZABLE, True)
    glfw.window_hint(glfw.DEPTH_BITS, DEPTH_BITS)
    glfw.window_hint(glfw.SAMPLES, 0)  # multisampling happens in an offscreen target (see run_window)
    window = glfw.create_window(int(size[0]), int(size[1]), title, None, None)
    if not window:
        glfw.terminate()
        return None, f"no OpenGL 4.3 core window: {'; '.join(errors) or 'unknown error'}"
    glfw.make_context_current(window)
    glfw.swap_interval(0)  # the frame-rate cap paces frames, not the display
    return window, ("" if gui_ok else gui_reason)


def resize_window(window, size, timeout: float = RESIZE_TIMEOUT_SECONDS) -> tuple:
    """Resize ``window`` to ``size`` (width, height, screen coordinates), as dragging its
    corner does, and wait until the window system has done it: glfw's events are waited for
    (``glfw.wait_events_timeout``, their callbacks run) until the window reports that size,
    however long the display server takes. The frame loop fits its drawing to the new
    framebuffer from its next frame on.

    Returns the framebuffer's (width, height) px then.

    Raises:
        TimeoutError: the window still has another size after ``timeout`` seconds (a window
            manager that kept another size, a display server that does not answer)."""
    glfw = require("glfw", "a window")
    wanted = (int(size[0]), int(size[1]))
    glfw.set_window_size(window, *wanted)
    deadline = glfw.get_time() + timeout
    while (now := tuple(glfw.get_window_size(window))) != wanted:
        left = deadline - glfw.get_time()
        if left <= 0:
            raise TimeoutError(f"the window was asked to be {wanted[0]}x{wanted[1]} but is still {now[0]}x{now[1]} "
                               f"after {timeout:g} s")
        glfw.wait_events_timeout(left)
    return tuple(glfw.get_framebuffer_size(window))


def save_screen(ctx, size, path, credit: str | None = None) -> None:
    """Write the window's back buffer (before the swap), ``size`` (width, height) px, to
    ``path`` as PNG (whole or not at all), with ``credit`` (the authors and licence of what it
    shows, as :func:`~gpu_jiggle.render.video.write_image` keeps it). It is copied into a
    framebuffer of ours first: reading the default framebuffer directly selects a colour
    attachment it does not have (GL_INVALID_OPERATION on a core context)."""
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
    write_image(path, pixels, credit=credit)


def layout_path(path) -> Path:
    """Where the layout JSON of the screenshot ``path`` goes: ``NAME.layout.json`` beside it."""
    p = Path(path)
    return p.with_name(p.stem + ".layout.json")


def save_layout(session, gui, size, path) -> None:
    """Write the layout of the frame just drawn (see the module's docstring) to ``path``."""
    demo = session.demo
    subject = getattr(demo, "subject_box", None)
    box = subject() if subject is not None else None
    data = {"frame": session.frames, "size": list(size), "panel_rect": _listed(session.panel_rect),
            "framed_beside": _listed(session.framed_rect),
            "area": list(getattr(demo, "area", (0.0, 0.0, 1.0, 1.0))),
            "subject": None if box is None else [float(v) for v in box],
            "panel": gui.layout if gui is not None and gui.visible else None,
            "solver_kind": session.solver_kind, "timing_lines": session.timing_lines(fresh=True),
            "means_ms": {name: session.stats.mean(name) for name in session.stats.NAMES}}
    Path(path).write_text(json.dumps(data, indent=1))


def _listed(rect):
    return None if rect is None else list(rect)


def run_window(make_demo, args, window, gui_reason: str = "") -> int:
    """The real-time loop in ``window``: real frame times (at most :data:`MAX_FRAME_SECONDS`),
    the cap, the panel, keys and mouse; ends when the window is closed (or after
    ``args.frames`` frames, which closes it the same way).

    A scripted session (tests, recordings) gives ``args.each_frame``: called with the
    :class:`~gpu_jiggle.app.viewer.session.Session` after each frame is drawn, panel
    included, before it is shown. It may return a path: this frame is saved there as a
    screenshot (its layout JSON beside it with :data:`LAYOUT_ENV`); and it may set
    ``session.quit`` to end the run with this frame, as the last of ``args.frames`` does
    (``args.screenshot`` saved)."""
    glfw = require("glfw", "a window")
    import moderngl

    session = panel = gui = target = None
    drag = {"at": None, "from": None, "moved": 0.0}
    try:
        ctx = moderngl.create_context()  # the window's OpenGL 4.3 context: solver and drawing share it
        session = Session(ctx, make_demo, args)
        samples = choose_samples(ctx, args.samples)
        name = session.demo.name
        size = None  # the framebuffer's (width, height) px, followed each frame: the window resizes

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
            if button != glfw.MOUSE_BUTTON_LEFT:
                return
            if action == glfw.PRESS:
                grab = not (gui is not None and gui.wants_mouse())
                drag["at"] = drag["from"] = glfw.get_cursor_pos(window) if grab else None
                drag["moved"] = 0.0
            elif action == glfw.RELEASE:
                if drag["from"] is not None and drag["moved"] <= CLICK_SLOP and hasattr(session.demo, "click"):
                    x, y = glfw.get_cursor_pos(window)
                    width, height = glfw.get_window_size(window)
                    session.demo.click(min(max(x / max(width, 1), 0.0), 1.0), min(max(y / max(height, 1), 0.0), 1.0))
                drag["at"] = drag["from"] = None

        def on_cursor(_window, x, y):
            if drag["at"] is not None:
                x0, y0 = drag["at"]
                session.demo.orbit(x - x0, y - y0)
                drag["at"] = (x, y)
                drag["moved"] = max(drag["moved"], abs(x - drag["from"][0]) + abs(y - drag["from"][1]))
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
            if getattr(args, "dock", None):
                gui.dock(args.dock)
        else:
            panel = TextPanel(ctx)
        ui = "Dear ImGui panel" if gui is not None else "text panel and keys"
        if gui is None and gui_reason:
            ui += f" ({gui_reason})"
        print(f"{name}: window on {ctx.info['GL_RENDERER']}, {ui}, {f'{samples}x MSAA' if samples else 'no MSAA'}")
        last = glfw.get_time()
        shots = set(args.screenshot_frames)
        while not glfw.window_should_close(window):
            glfw.poll_events()
            now = glfw.get_time()
            if session.frames:  # the first frame has no frame before it to time
                session.stats.add("frame", MS_PER_SECOND * (now - last))
            dt, last = min(now - last, MAX_FRAME_SECONDS), now
            now_size = tuple(glfw.get_framebuffer_size(window))
            if now_size != size:
                size = now_size
                target = fit_framebuffers(ctx, size, samples, target)
            if min(size) <= 0:  # minimised: nothing steps or draws until it is back
                glfw.wait_events_timeout(MAX_FRAME_SECONDS)
                continue
            if target is not None:
                session.frame(target.framebuffer, dt)
                ctx.copy_framebuffer(ctx.screen, target.framebuffer)
                ctx.screen.use()  # the copy leaves the target bound: the panel draws into the window
            else:
                session.frame(ctx.screen, dt)
            if gui is not None:
                gui.draw(session)  # it sets session.panel_rect: the next frame is framed beside it
            elif state["panel"]:
                panel.draw(ctx.screen, session.panel_lines())
                session.panel_rect = panel.rect
            else:
                session.panel_rect = None
            each_frame = getattr(args, "each_frame", None)
            if each_frame is not None:  # a scripted session (tests, recordings): after the frame is drawn
                asked = each_frame(session)
                if asked is not None:
                    save_shot(session, gui, size, asked)
            if args.screenshot and session.frames in shots:
                save_shot(session, gui, size, numbered(args.screenshot, session.frames))
            if session.quit or (args.frames is not None and session.frames >= args.frames):
                if args.screenshot:
                    save_shot(session, gui, size, args.screenshot)
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


def save_shot(session, gui, size, path) -> None:
    """Save the frame just drawn, ``size`` (width, height) px, to ``path`` (see
    :func:`save_screen`), and its layout beside it (:func:`save_layout`) with :data:`LAYOUT_ENV`."""
    save_screen(session.ctx, size, path, demo_credit(session.demo))
    if os.environ.get(LAYOUT_ENV):
        save_layout(session, gui, size, layout_path(path))


def fit_framebuffers(ctx, size, samples: int, target):
    """Fit the window's drawing to its framebuffer's new ``size`` (width, height) px: the
    default framebuffer's viewport, and the multisampled offscreen target (``samples`` > 0,
    made anew; ``target`` the last one, released). Returns the target (None without MSAA,
    or while the window is minimised)."""
    from ...gl.offscreen import OffscreenTarget

    if target is not None:
        target.release()
    width, height = size
    if width <= 0 or height <= 0:
        return None
    ctx.screen.viewport = (0, 0, width, height)
    return OffscreenTarget(ctx, size, samples=samples) if samples else None


def run(make_demo, args, default_frames: int = DEFAULT_FRAMES, headless=None) -> int:
    """A window when there is a display and ``--headless`` is not given, else headless:
    ``headless(make_demo, args, default_frames)``, by default
    :func:`~gpu_jiggle.app.viewer.headless.run_headless`. Returns the run's exit status."""
    if not args.headless:
        window, reason = open_window(getattr(args, "title", "gpu_jiggle"), args.size)
        if window is not None:
            return run_window(make_demo, args, window, reason)
        print(f"no window ({reason}); rendering headless instead", file=sys.stderr)
    return (headless or run_headless)(make_demo, args, default_frames)

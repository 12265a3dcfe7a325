"""The frame loop the demo window and the headless runs share: what a demo offers
(:class:`Demo`, its :class:`Parameter` s), the :class:`Session` around its frames (pause,
single step, debug view, frame-rate cap, the selected parameter, messages) and the timings
(:class:`GpuTimer`, :class:`FrameLimiter`, :class:`Stats`).

Timings are in milliseconds: the frame time, the solver's time on the CPU (pose and
parameter upload, dispatch) and on the GPU (an OpenGL timer query around the solver's
commands, read a few frames later so that it never stalls the pipeline), and the drawing's.
"""
from __future__ import annotations

import math
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ...gl.offscreen import choose_samples, is_software  # noqa: F401  (re-exported: the viewer's names)

__all__ = ["Parameter", "Action", "Demo", "GpuTimer", "FrameLimiter", "Stats", "Session", "FPS_CAPS", "STEP_SECONDS",
           "MS_PER_SECOND", "is_software", "choose_samples"]

FPS_CAPS = (30, 60, 144, None)   # frame-rate caps offered, frames per second (None: uncapped)
STEP_SECONDS = 1.0 / 60.0        # what one single step advances while paused
PANEL_REFRESH_SECONDS = 0.25     # how often the numbers on the panel change (readable, cheap)
CADENCE_RESTART_SECONDS = 0.1    # a frame this late restarts the frame-rate cap's cadence
MESSAGE_SECONDS = 4.0            # how long a message stays on the panel
MS_PER_SECOND = 1e3
NS_PER_MS = 1e6


# -- what a demo offers ------------------------------------------------------------------------------
@dataclass
class Parameter:
    """A value the panel and the keys can change.

    Attributes:
        key: the name passed to ``Demo.set_parameter``.
        label: what the panel shows (with the unit).
        value: the current value (float, int, or bool for a toggle).
        low, high: the range a slider covers (ignored for toggles).
        kind: ``"float"``, ``"int"``, ``"toggle"`` or ``"choice"`` (an int index into
            ``choices``, shown as a combo box).
        log: a logarithmic slider; keys multiply by ``step`` instead of adding it.
        step: what one key press adds (or multiplies by, with ``log``).
        rebuild: the demo rebuilds its solver for a change (a count): a slider applies it
            when released, not while dragged.
        letter: a key that flips a toggle (upper-case letter), or None.
        fmt: printf format for the value.
        choices: the names a ``"choice"`` offers (its value indexes them).
        section: the heading the panel shows it under (a chain group, "wind", a collider),
            or None for the top of the panel.
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
    choices: tuple = ()
    section: str | None = None
    pending: object = field(default=None, repr=False, compare=False)  # a rebuild slider's value while dragged

    def text(self) -> str:
        if self.kind == "toggle":
            return f"{self.label}: {'on' if self.value else 'off'}" + (f" [{self.letter}]" if self.letter else "")
        if self.kind == "choice":
            return f"{self.label}: {self.choices[int(self.value)]}"
        return f"{self.label}: {self.fmt % self.value}"

    def nudged(self, direction: int):
        """The value one key press away (direction +1 or -1), within the range."""
        if self.kind == "toggle":
            return not self.value
        if self.kind == "choice":
            return (int(self.value) + direction) % len(self.choices)
        if self.log:
            value = self.value * self.step ** direction
        else:
            value = self.value + direction * self.step
        value = min(max(value, self.low), self.high)
        return int(round(value)) if self.kind == "int" else float(value)


@dataclass
class Action:
    """A button the panel shows (and a key that presses it).

    Attributes:
        key: the name passed to ``Demo.act``. label: the button's text.
        letter: an upper-case key that presses it, or None.
    """

    key: str
    label: str
    letter: str | None = None


class Demo:
    """The members a demo offers to :class:`Session`. Demos need not inherit from it; those
    that do get these as defaults (no parameters, a fixed camera, nothing to free).

    Attributes:
        name: file-name stem for outputs, e.g. ``"03_grass_field"``. title: window title.
        parameters: the :class:`Parameter` list shown on the panel, in order.
        actions: the :class:`Action` buttons shown above the parameters (save, revert, undo).
    """

    name = "demo"
    title = "gpu_jiggle"
    parameters: list = []
    actions: list = []

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

    def act(self, key: str):
        """Press the :class:`Action` ``key``; return a message for the panel (or None); raise
        ValueError or OSError to refuse (the panel shows why)."""
        raise ValueError(f"unknown action {key!r}")

    def click(self, x: float, y: float) -> None:
        """A left click (press and release without a drag) at x, y in [0, 1] from the top-left."""

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
            self.last_ms = query.elapsed / NS_PER_MS  # nanoseconds of its previous use
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
        if self._next is None or now - self._next > CADENCE_RESTART_SECONDS:  # late by far: start again
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
        args: the parsed command line (see :func:`~gpu_jiggle.app.viewer.args.add_arguments`).
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
            self.stats.add("solver_cpu", MS_PER_SECOND * (time.perf_counter() - started))
            self.stats.add("solver_gpu", self.solver_timer.last_ms)
        started = time.perf_counter()
        with self.draw_timer.measure():
            self.demo.draw(framebuffer, self.debug)
        if self.software:
            # llvmpipe rasterizes on the CPU when the frame is flushed: finish here, or the
            # next frame's solver dispatch would wait for it and be timed with it. (On a GPU
            # that would only stall the pipeline; there the timer queries tell the split.)
            self.ctx.finish()
        self.stats.add("draw_cpu", MS_PER_SECOND * (time.perf_counter() - started))
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
        """The key ``letter`` flips a toggle or presses an action; False when none has it."""
        for p in self.demo.parameters:
            if p.kind == "toggle" and p.letter == letter:
                self.set(p, not p.value)
                return True
        for a in getattr(self.demo, "actions", []):
            if a.letter == letter:
                self.act(a)
                return True
        return False

    def act(self, action) -> bool:
        """Press ``action`` (an :class:`Action`) through the demo; a refusal becomes the message."""
        try:
            said = self.demo.act(action.key)
        except (ValueError, OSError) as exc:
            self.say(str(exc))
            return False
        if said:
            self.say(str(said))
        return True

    def cycle_cap(self) -> None:
        i = FPS_CAPS.index(self.limiter.cap) if self.limiter.cap in FPS_CAPS else -1
        self.limiter.cap = FPS_CAPS[(i + 1) % len(FPS_CAPS)]

    def teleport(self) -> None:
        self.demo.teleport()
        self.say("teleported")

    def say(self, text: str, seconds: float = MESSAGE_SECONDS) -> None:
        self.message, self._message_until = text, time.perf_counter() + seconds

    def current_message(self) -> str:
        return self.message if time.perf_counter() < self._message_until else ""

    # -- text ----------------------------------------------------------------------------------
    def timing_lines(self, fresh: bool = False) -> list:
        """Frame, solver and drawing times; ``fresh`` means now, else as last shown."""
        s = {name: self.stats.mean(name) for name in Stats.NAMES} if fresh else self.stats.shown()
        fps = MS_PER_SECOND / s["frame"] if s["frame"] else None
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

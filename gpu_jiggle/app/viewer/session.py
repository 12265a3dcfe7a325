"""The frame loop the demo window and the headless runs share: what a demo offers
(:class:`Demo`, its :class:`Parameter` s), the :class:`Session` around its frames (pause,
single step, debug view, frame-rate cap, the selected parameter, messages) and its timings
(kept by :mod:`~gpu_jiggle.app.viewer.timing`).

Timings are in milliseconds, each labelled with what measured it. On a software renderer
(llvmpipe), where the GPU is this machine's CPU and a timer query cannot tell the solver's
work from the drawing rasterized at the same flush, the demo's step and its drawing are
each bracketed by ``glFinish`` and timed by the wall clock ("CPU wall, finish"). On a GPU
the solver is each solver's dispatch alone (:meth:`gpu_jiggle.Solver.measure_dispatch`: a
timer query around the dispatch, of the solvers the demo offers), the step's host time
beside it, and the drawing an OpenGL timer query around the demo's draw calls (read a few
frames later, so that it never stalls).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ...gl.offscreen import choose_samples, is_software  # noqa: F401  (re-exported: the viewer's names)
from ...gl.timing import TIMER_QUERY
from .framing import FULL_AREA, free_area
from .timing import MS_PER_SECOND, FrameLimiter, GpuTimer, Stats

__all__ = ["Parameter", "Action", "Demo", "GpuTimer", "FrameLimiter", "Stats", "Session", "FPS_CAPS", "STEP_SECONDS",
           "MS_PER_SECOND", "SOLVER_FINISH", "SOLVER_GPU", "SOLVER_HOST", "is_software", "choose_samples"]

FPS_CAPS = (30, 60, 144, None)   # frame-rate caps offered, frames per second (None: uncapped)
STEP_SECONDS = 1.0 / 60.0        # what one single step advances while paused
MESSAGE_SECONDS = 4.0            # how long a message stays on the panel
# How the solver's time was measured, as the panel says it (Session.solver_kind):
SOLVER_FINISH = "(CPU wall, finish)"   # a software renderer: the step between two glFinish, wall clock
SOLVER_GPU = "GPU"                     # the solvers' dispatches, each by a timer query
SOLVER_HOST = "CPU"                    # the step's host time (no timed dispatch to show)


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
        area: the part of the framebuffer the panel leaves free, ``(x0, y0, x1, y1)``
            fractions from the top-left (see :mod:`~gpu_jiggle.app.viewer.framing`); the
            session sets it before each ``draw`` (the whole framebuffer without a panel,
            headless included), and a demo's camera frames its subject there.
        credit: the authors and licence of what it shows where that is someone else's model
            (:mod:`gpu_jiggle.character.gltf.credit`), kept in every image and video written of
            it; None for the demo's own drawing.
    """

    name = "demo"
    title = "gpu_jiggle"
    credit = None
    parameters: list = []
    actions: list = []
    area = FULL_AREA

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

    def solvers(self) -> list:
        """The :class:`gpu_jiggle.Solver` s whose dispatches are the demo's solver time: the
        session has them time each dispatch on its own (``measure_dispatch``)."""
        return []

    def subject_box(self):
        """Where the subject was in the last drawn frame: ``(x0, y0, x1, y1)`` fractions of
        the framebuffer from the top-left (its projected bounds), or None when not known."""
        return None

    def orbit(self, dx: float, dy: float) -> None:
        """Turn the camera by a mouse drag of (dx, dy) pixels."""

    def zoom(self, steps: float) -> None:
        """Move the camera in (steps > 0) or out by scroll steps."""

    def pointer(self, x: float, y: float) -> None:
        """The mouse over the window, x and y in [0, 1] from the top-left."""

    def release(self) -> None:
        """Free GPU objects (the solver, programs, buffers)."""


def demo_credit(demo) -> str | None:
    """``demo``'s :attr:`Demo.credit` (None for a demo without one: demos need not inherit)."""
    return getattr(demo, "credit", None)


def _ms(value) -> str:
    return "-" if value is None else f"{value:.1f}"


# -- the frame loop shared by the window and the headless run ----------------------------------------
class Session:
    """The demo and everything around its frames: pause, single step, debug view, frame-rate
    cap, the selected parameter, timings and messages.

    Args:
        ctx: the moderngl context everything runs on. make_demo: ``(ctx, args) -> demo``.
        args: the parsed command line (see :func:`~gpu_jiggle.app.viewer.args.add_arguments`).

    Attributes:
        panel_rect: (x, y, width, height) px of the panel over the framebuffer, set by the
            window after each frame's panel is drawn (None without a panel).
        framed_rect: the :attr:`panel_rect` the last frame's picture was framed beside (the
            one set when that frame began; see :attr:`framed_as_drawn`).
        size: the framebuffer's (width, height) px the last frame was drawn at (None before
            the first).
        frames: frames drawn so far.
        quit: a scripted session (the window's ``each_frame``) sets it to end the run after
            the frame just drawn.
    """

    def __init__(self, ctx, make_demo, args):
        self.ctx = ctx
        self.demo = make_demo(ctx, args)
        self.paused = False
        self.step_once = False
        self.debug = bool(getattr(args, "debug", False))
        self.limiter = FrameLimiter(args.fps_cap)
        # the parameter Up/Down select and Left/Right change: at first the first slider
        self.selected = next((i for i, p in enumerate(self.demo.parameters) if p.kind in ("float", "int")), 0)
        self.message, self._message_until = "", 0.0
        self.stats = Stats()
        self.draw_timer = GpuTimer(ctx)
        # A software renderer (llvmpipe) rasterizes when the frame is flushed, not between a
        # timer query's ends: there the step and the drawing are bracketed by glFinish instead.
        self.software = is_software(ctx)
        self.solver_kind = SOLVER_FINISH if self.software else SOLVER_HOST
        self.panel_rect = None
        self.framed_rect = None
        self.size = None
        self.frames = 0
        self.quit = False

    def frame(self, framebuffer, dt: float) -> None:
        """One frame: step the demo (unless paused) and draw it into ``framebuffer``, framed
        in the part :attr:`panel_rect` leaves free (:attr:`Demo.area`)."""
        run = not self.paused or self.step_once
        if run:
            self._step(STEP_SECONDS if self.paused else dt)
        elif self.software:
            self.ctx.finish()  # the last frame's panel and swap: not timed with the drawing
        _, _, width, height = framebuffer.viewport
        self.size, self.framed_rect = (width, height), self.panel_rect
        self.demo.area = free_area((width, height), self.panel_rect)
        started = time.perf_counter()
        with self.draw_timer.measure():
            self.demo.draw(framebuffer, self.debug)
        if self.software:
            self.ctx.finish()  # llvmpipe rasterizes when the commands are flushed: here, timed
        host = MS_PER_SECOND * (time.perf_counter() - started)
        self.stats.add("draw_cpu", host)
        self.stats.add("draw", host if self.software else self.draw_timer.last_ms)
        self.frames += 1

    @property
    def framed_as_drawn(self) -> bool:
        """The last frame's picture was framed beside the panel where that same frame drew it
        (:attr:`framed_rect` is :attr:`panel_rect`). False for a frame in which the panel
        moved or was refitted (a resized window's first frame, where the panel fits the new
        size): its picture was framed beside where the panel had been, and the next frame's is
        framed beside the new place."""
        return self.frames > 0 and self.framed_rect == self.panel_rect

    def _step(self, dt: float) -> None:
        """Step the demo by ``dt`` s and time it: on a software renderer between two
        ``glFinish`` (the first lets the last frame's drawing, panel and swap finish
        untimed), else the host's time, and each solver's dispatch on its own."""
        self.step_once = False
        self._timed_solvers()
        if self.software:
            self.ctx.finish()
        started = time.perf_counter()
        self.demo.step(dt)
        if self.software:
            self.ctx.finish()
        host = MS_PER_SECOND * (time.perf_counter() - started)
        timings = [t for t in (s.dispatch_timing for s in self._timed_solvers()) if t is not None and t.seconds >= 0]
        dispatch = MS_PER_SECOND * sum(t.seconds for t in timings) if timings else None
        self.stats.add("solver_cpu", host)
        self.stats.add("dispatch", dispatch)
        if self.software:
            self.solver_kind = SOLVER_FINISH
        elif timings and all(t.how == TIMER_QUERY for t in timings):
            self.solver_kind = SOLVER_GPU
        else:
            self.solver_kind = SOLVER_HOST
        self.stats.add("solver", dispatch if self.solver_kind == SOLVER_GPU else host)

    def _timed_solvers(self) -> list:
        """The demo's solvers (:meth:`Demo.solvers`), each timing its dispatches from now on."""
        offered = getattr(self.demo, "solvers", None)
        solvers = list(offered()) if offered is not None else []
        for solver in solvers:
            if solver.dispatch_timing is None:
                solver.measure_dispatch(True)
        return solvers

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

    def selected_parameter(self):
        """The :class:`Parameter` the arrow keys change (None when the demo has none)."""
        params = self.demo.parameters
        return params[self.selected % len(params)] if params else None

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
        """Frame, solver and drawing times, each saying how it was measured (see the module's
        docstring); ``fresh`` means now, else as last shown."""
        s = {name: self.stats.mean(name) for name in Stats.NAMES} if fresh else self.stats.shown()
        fps = MS_PER_SECOND / s["frame"] if s["frame"] else None
        cap = "uncapped" if self.limiter.cap is None else f"cap {self.limiter.cap}"
        solver = f"solver {_ms(s['solver'])} ms {self.solver_kind}"
        if self.solver_kind == SOLVER_GPU:
            solver += f", step {_ms(s['solver_cpu'])} ms CPU"
        elif s["dispatch"] is not None:
            solver += f", dispatch {_ms(s['dispatch'])} ms"
        if self.software:
            draw = f"draw {_ms(s['draw'])} ms {SOLVER_FINISH}"
        elif self.draw_timer.available:
            draw = f"draw {_ms(s['draw'])} ms GPU, {_ms(s['draw_cpu'])} ms CPU"
        else:
            draw = f"draw {_ms(s['draw_cpu'])} ms CPU (no GPU timer)"
        return [f"frame {_ms(s['frame'])} ms ({'-' if fps is None else f'{fps:.0f}'} fps, {cap})", solver, draw]

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
        self.draw_timer.release()
        self.demo.release()

"""The window/headless frame loop's parts: parameters, the session's controls, the text
panel, the frame-rate cap and the GPU timer."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle.render.draw3d import OffscreenTarget
from gpu_jiggle.app.viewer import FrameLimiter, GpuTimer, Parameter, Session, TextPanel, parse_size


class CountingDemo:
    """A stand-in demo: counts steps, clears to a colour, refuses one parameter value."""

    name, title = "test", "test demo"

    def __init__(self, ctx, args):
        self.steps, self.dts, self.teleports = 0, [], 0
        self.parameters = [Parameter("f", "f (Hz)", 2.0, 0.5, 4.0, step=0.5),
                           Parameter("count", "count", 100, 10, 1000, kind="int", log=True, step=2.0, rebuild=True),
                           Parameter("lod", "lod", True, kind="toggle", letter="L")]

    def step(self, dt):
        self.steps += 1
        self.dts.append(dt)

    def draw(self, framebuffer, debug):
        framebuffer.use()
        framebuffer.clear(0.1, 0.5 if debug else 0.2, 0.3, 1.0, depth=1.0)

    def set_parameter(self, key, value):
        if key == "f" and value > 3.0:
            raise ValueError(f"f = {value} is unstable")

    def teleport(self):
        self.teleports += 1

    def status(self):
        return [f"{self.steps} steps"]

    def release(self):
        pass


class Args:
    fps_cap = 60
    debug = False


def test_parameters_step_within_their_range():
    p = Parameter("f", "f", 2.0, 0.5, 4.0, step=0.5)
    assert p.nudged(1) == 2.5 and p.nudged(-1) == 1.5
    p.value = 3.9
    assert p.nudged(1) == 4.0
    n = Parameter("n", "n", 100, 10, 150, kind="int", log=True, step=2.0)
    assert n.nudged(1) == 150 and n.nudged(-1) == 50 and isinstance(n.nudged(-1), int)
    t = Parameter("t", "t", True, kind="toggle", letter="T")
    assert t.nudged(1) is False and "on" in t.text()
    assert parse_size("320x200") == (320, 200)
    with pytest.raises(ValueError, match="WIDTHxHEIGHT"):
        parse_size("big")


def test_session_pause_step_controls_and_refusals(gl):
    session = Session(gl, CountingDemo, Args())
    target = OffscreenTarget(gl, (64, 48), samples=0)
    try:
        demo = session.demo
        session.frame(target.framebuffer, 0.02)
        session.paused = True
        session.frame(target.framebuffer, 0.02)
        assert demo.steps == 1, "paused: drawn, not stepped"
        session.step_once = True
        session.frame(target.framebuffer, 0.5)
        assert demo.steps == 2 and demo.dts[-1] == pytest.approx(1 / 60), "a single step is 1/60 s"
        session.nudge(1)
        session.nudge(1)
        assert demo.parameters[0].value == 3.0
        session.nudge(1)  # 3.5 is refused: the value stays, the reason is shown
        assert demo.parameters[0].value == 3.0 and "unstable" in session.current_message()
        assert session.toggle("L") and demo.parameters[2].value is False
        session.cycle_cap()
        assert session.limiter.cap == 144
        session.teleport()
        assert demo.teleports == 1
        lines = session.panel_lines()
        assert any("PAUSED" in line for line in lines) and any(line.startswith("> f (Hz): 3.00") for line in lines)
    finally:
        target.release()
        session.release()


def test_a_frame_is_framed_as_drawn_once_the_panel_has_stayed_put(gl):
    """A frame's picture is framed beside the panel rectangle set when it began; the frame in
    which the panel moves (set after its picture) is not framed as drawn, the next one is."""
    session = Session(gl, CountingDemo, Args())
    target = OffscreenTarget(gl, (64, 48), samples=0)
    try:
        assert not session.framed_as_drawn, "nothing drawn yet"
        session.frame(target.framebuffer, 0.02)
        assert session.framed_as_drawn and session.size == (64, 48) and session.framed_rect is None
        session.panel_rect = (0.0, 0.0, 20.0, 48.0)  # what the window does after drawing the panel
        assert not session.framed_as_drawn, "the picture was framed without the panel"
        session.frame(target.framebuffer, 0.02)
        assert session.framed_as_drawn and session.framed_rect == (0.0, 0.0, 20.0, 48.0)
        assert session.demo.area[0] > 0, "framed to the right of the panel"
    finally:
        target.release()
        session.release()


class FakeGlfw:
    """glfw's calls that ``resize_window`` makes, on a fake clock: each wait ends with an event
    half a second on, the ``events``-th bringing the resize; with ``events`` None none comes
    and each wait lasts its whole timeout."""

    def __init__(self, events):
        self.size, self.asked, self.now, self.waits, self.events = (640, 360), None, 0.0, 0, events

    def set_window_size(self, _window, width, height):
        self.asked = (width, height)

    def get_window_size(self, _window):
        return self.size

    def get_framebuffer_size(self, _window):
        return self.size

    def get_time(self):
        return self.now

    def wait_events_timeout(self, seconds):
        self.waits += 1
        if self.events is None:
            self.now += seconds
            return
        self.now += min(0.5, seconds)
        if self.waits >= self.events:
            self.size = self.asked


def test_resize_window_waits_for_the_window_system_to_resize(monkeypatch):
    from gpu_jiggle.app.viewer import window

    late = FakeGlfw(events=3)
    monkeypatch.setattr(window, "require", lambda name, why: late)
    assert window.resize_window(None, (1024, 576)) == (1024, 576)
    assert late.waits == 3, "it returns once the window has the size, after the events that brought it"
    never = FakeGlfw(events=None)
    monkeypatch.setattr(window, "require", lambda name, why: never)
    with pytest.raises(TimeoutError, match="asked to be 1024x576 but is still 640x360 after 30 s"):
        window.resize_window(None, (1024, 576), timeout=30.0)
    assert never.now == pytest.approx(30.0), "it gives up at the timeout, not before"


def test_text_panel_draws_its_lines(gl):
    target = OffscreenTarget(gl, (200, 120), samples=0)
    panel = TextPanel(gl)
    try:
        target.framebuffer.use()
        target.framebuffer.clear(1.0, 1.0, 1.0, 1.0)
        panel.draw(target.framebuffer, ["frame 16.7 ms", "solver 2.0 ms"])
        pixels = target.pixels().astype(int)
        assert pixels[12:40, 10:60].mean() < 200, "a dark panel with light text in the top-left corner"
        assert (pixels[12:40, 10:100] > 200).all(axis=-1).any(), "some text pixels"
        assert (pixels[100:, 150:] == 255).all(), "the rest untouched"
    finally:
        panel.release()
        target.release()


def test_frame_limiter_caps_the_rate(monkeypatch):
    """On a fake clock (the sleeps advance it; no real time is waited on): 15 frames at a cap
    of 144/s start 1/144 s apart, and with no cap the limiter never sleeps."""
    from gpu_jiggle.app.viewer import timing

    now = [100.0]
    sleeps = []

    def sleep(seconds):
        assert seconds > 0, seconds
        sleeps.append(seconds)
        now[0] += seconds

    monkeypatch.setattr(timing.time, "perf_counter", lambda: now[0])
    monkeypatch.setattr(timing.time, "sleep", sleep)
    limiter = FrameLimiter(144)
    starts = []
    for _ in range(15):
        limiter.wait()
        starts.append(now[0])
        now[0] += 0.001  # the frame's own work
    assert np.allclose(np.diff(starts), 1 / 144, rtol=0, atol=1e-12), np.diff(starts)
    assert len(sleeps) == 14
    limiter.cap = None
    sleeps.clear()
    for _ in range(100):
        limiter.wait()
    assert sleeps == []


def test_gpu_timer_reads_past_queries(gl):
    timer = GpuTimer(gl, depth=2)
    data = np.zeros(1 << 16, np.float32).tobytes()
    buffer = gl.buffer(reserve=len(data))
    for _ in range(4):
        with timer.measure():
            buffer.write(data)
    buffer.release()
    if timer.available:
        assert timer.last_ms is not None and timer.last_ms >= 0.0
    else:
        assert timer.last_ms is None


def test_importing_the_viewer_loads_no_window_library():
    """glfw and imgui-bundle are imported by the functions that open a window, not by the
    package: demos and the headless runs import it without them."""
    import subprocess
    import sys

    code = ("import sys, gpu_jiggle.app.viewer, gpu_jiggle.app.play, gpu_jiggle.app.render; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('glfw', 'imgui_bundle')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_samples_are_the_renderers_choice_unless_given(gl, capsys):
    """None: no MSAA on llvmpipe, 4 on a GPU; a count the renderer takes is kept; a negative
    one, one that is not a power of two, or more than the renderer takes is refused, on the
    demos' command line too (negative ones were quietly taken as 0, too many lowered, and 3
    failed inside moderngl)."""
    from gpu_jiggle.app.viewer import demo_parser, parse_demo_args
    from gpu_jiggle.gl.offscreen import OffscreenTarget, choose_samples

    software = "llvmpipe" in gl.info["GL_RENDERER"].lower()
    assert choose_samples(gl, None) == (0 if software else 4)
    most = gl.max_samples
    assert choose_samples(gl, 0) == 0 and choose_samples(gl, 2) == 2 and choose_samples(gl, most) == most
    for wrong in (-1, 3, 2 * most):  # refused, naming the count and the most it takes: never lowered quietly
        with pytest.raises(ValueError, match=rf"^samples = {wrong}: expected 0 \(no multisampling\) or a power of two "
                                             rf"up to {most} \(the most .+ takes\)$"):
            choose_samples(gl, wrong)
        with pytest.raises(ValueError, match=rf"^samples = {wrong}: "):
            OffscreenTarget(gl, (8, 8), samples=wrong)
    with pytest.raises(TypeError, match=r"^samples: expected an integer or None, got float$"):
        choose_samples(gl, 2.0)
    for wrong in ("-2", "3"):
        with pytest.raises(SystemExit):
            parse_demo_args(demo_parser("A demo."), ["--samples", wrong], "demo")
        assert f"--samples {wrong}: expected 0 (no multisampling) or a power of two" in capsys.readouterr().err

"""The tuning panel's layout, measured in-process (Dear ImGui without a window: no label cut,
sized to its content and the window, sections, scrolling, the user's resizing), the framing
beside it (free area, off-centre camera, 2D view) and the session's honest solver timings
on the software renderer."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from gpu_jiggle.app.viewer import Parameter, Session
from gpu_jiggle.app.viewer.framing import FULL_AREA, MIN_FREE_SCALE, fitted, free_area, view_2d
from gpu_jiggle.app.viewer.session import SOLVER_FINISH, Action, is_software
from gpu_jiggle.render.draw3d import Camera, OffscreenTarget, perspective

pytest.importorskip("imgui_bundle")

from gpu_jiggle.app.viewer.imgui_panel import (MIN_SLIDER_WIDTH, PANEL_MAX_FRACTION, PANEL_ORIGIN,  # noqa: E402
                                               ImGuiPanel)

GROUPS = ("tail", "mane", "ear_tuft_left", "ear_tuft_right")
VALUES = ("frequency (Hz)", "damping ratio", "air drag (1/s)", "gravity (length/s²)", "particle radius",
          "world influence", "hinge limit (deg)")


class TuningDemo:
    """A stand-in for play's tuning: a clip choice, toggles, buttons and a section of seven
    sliders per chain group and one for the wind (~40 parameters)."""

    name, title = "tuning", "gpu-jiggle play: Fox.gltf (drag orbit, Esc quit)"

    def __init__(self, ctx, args):
        self.parameters = [Parameter("clip", "clip", 2, kind="choice", choices=("Survey", "Walk", "Run", "idle")),
                           Parameter("springs", "springs", True, kind="toggle", letter="S")]
        for group in GROUPS:
            self.parameters += [Parameter(f"{group}:{k}", k, 1.0, 0.0, 5.0, section=group) for k in VALUES]
        self.parameters += [Parameter("wind:gust", "gust amplitude (length/s²)", 0.0, 0.0, 9.0, section="wind")]
        self.actions = [Action("save", "Save", "W"), Action("revert", "Revert", "R"), Action("undo", "Undo", "U")]
        self.pressed = []

    def step(self, dt):
        pass

    def draw(self, framebuffer, debug):
        pass

    def act(self, key):
        self.pressed.append(key)

    def status(self):
        return ["clip Run (1.16 s), t = 1.68 s", "drag: orbit, scroll: zoom, S springs, M travel, T teleport"]

    def release(self):
        pass


@pytest.fixture
def session(gl):
    s = Session(gl, TuningDemo, SimpleNamespace(fps_cap=60, debug=False))
    for ms in (16.0, 17.0, 15.0):
        s.stats.add("frame", ms)
        s.stats.add("solver", ms / 5)
        s.stats.add("draw", ms / 2)
    yield s
    s.release()


@pytest.fixture
def panel():
    p = ImGuiPanel(None)
    yield p
    p.release()


def frames(panel, session, size, count=3):
    for _ in range(count):
        panel.draw(session, size)
    return panel.layout


def assert_nothing_cut(layout):
    cut = [item["text"] for item in layout["items"] if item["right"] > layout["content_right"] + 0.5
           or item["left"] < layout["content_left"] - 0.5]
    assert not cut, f"cut at the panel's right edge ({layout['content_right']} px): {cut}"
    assert layout["title"]["width"] <= layout["title"]["room"]


@pytest.mark.parametrize("size", [(1280, 720), (800, 600), (960, 540)])
def test_no_label_is_cut_and_the_panel_fits_the_window(panel, session, size):
    layout = frames(panel, session, size)
    assert_nothing_cut(layout)
    x, y, w, h = layout["panel"]
    assert (x, y) == PANEL_ORIGIN
    assert w <= max(240, PANEL_MAX_FRACTION * size[0]) + 0.5, "at most a fraction of the window's width"
    assert y + h <= size[1], "no taller than the window: it scrolls beyond"
    labels = {item["text"] for item in layout["items"]}
    assert {"Save [W]", "step [N]", "frame-rate cap", "clip", "tail", "frequency (Hz)"} <= labels
    assert session.panel_rect == tuple(layout["panel"]), "the session knows where the panel is"
    # ~40 parameters: only the first section starts open, so the content stays short
    assert "tail" in layout["sections"] and "mane" not in layout["sections"]
    assert {"mane", "wind", "ear_tuft_left"} <= labels, "closed sections still show their headings"


def test_labels_go_above_their_sliders_when_the_window_is_narrow(panel, session):
    wide = frames(panel, session, (1280, 720))["sections"]
    assert not any(s["stacked"] for s in wide.values())
    assert all(s["slider_width"] >= MIN_SLIDER_WIDTH for s in wide.values())
    narrow = frames(panel, session, (400, 300))
    assert_nothing_cut(narrow)
    assert narrow["sections"]["tail"]["stacked"], "a slider below MIN_SLIDER_WIDTH puts its label above it"
    assert narrow["scroll_max_y"] > 0, "the rest scrolls"


def test_the_panel_is_as_tall_as_its_content(panel, gl):
    s = Session(gl, TuningDemo, SimpleNamespace(fps_cap=60, debug=False))
    s.demo.parameters = s.demo.parameters[:3]  # a short panel: no scrolling, no empty space below
    try:
        layout = frames(panel, s, (1280, 720))
        assert layout["scroll_max_y"] == 0
        assert layout["panel"][3] == pytest.approx(layout["content_height"], abs=1.0)
        assert layout["panel"][3] < 400
    finally:
        s.release()


def test_the_user_can_drag_the_panel_wider_and_it_stays(panel, session):
    imgui = panel.imgui
    size = (1280, 720)
    x, y, w, h = frames(panel, session, size)["panel"]
    io = imgui.get_io()
    corner = (x + w - 3, y + h - 3)  # the resize grip
    steps = [(corner, None), (corner, True)] + [((corner[0] + d, corner[1]), None) for d in (40, 80, 120)]
    steps += [((corner[0] + 120, corner[1]), False), ((corner[0] + 120, corner[1]), None)]
    for at, button in steps:
        io.add_mouse_pos_event(*at)
        if button is not None:
            io.add_mouse_button_event(0, button)
        panel.draw(session, size)
    after = frames(panel, session, size)
    assert after["panel"][2] == pytest.approx(w + 120, abs=2.0)
    assert_nothing_cut(after)


def drag(panel, session, size, start, end, steps: int = 8) -> None:
    """Press the left button at ``start`` (px), move to ``end`` in ``steps`` frames, release."""
    io = panel.imgui.get_io()
    path = [(start, None), (start, True)]
    path += [((start[0] + (end[0] - start[0]) * k / steps, start[1] + (end[1] - start[1]) * k / steps), None)
             for k in range(1, steps + 1)]
    path += [(end, None), (end, False), (end, None)]
    for at, button in path:
        io.add_mouse_pos_event(*at)
        if button is not None:
            io.add_mouse_button_event(0, button)
        panel.draw(session, size)


def test_the_panel_docks_when_its_title_is_dragged_to_the_window_edge(panel, session):
    size = (1280, 720)
    x, y, w, h = frames(panel, session, size)["panel"]
    assert not panel.docked
    drag(panel, session, size, (x + 60, y + 8), (10, size[1] / 2))  # onto the dock target at the left edge
    layout = frames(panel, session, size)
    assert layout["docked"] and panel.docked
    dx, dy, dw, dh = layout["panel"]
    assert (dx, dy, dh) == (0, 0, size[1]), "it fills the window's left side"
    assert_nothing_cut(layout)
    assert free_area(size, session.panel_rect)[0] == pytest.approx(dw / size[0]), "the scene is framed right of it"


def test_docked_it_keeps_its_fitted_width_and_refits_when_the_window_resizes(panel, session):
    floating = frames(panel, session, (1280, 720))["panel"][2]
    panel.dock("right")
    layout = frames(panel, session, (1280, 720))
    x, y, w, h = layout["panel"]
    assert layout["docked"] and x + w == 1280 and (y, h) == (0, 720)
    assert w == pytest.approx(floating, abs=2.0), "docked at the width it fits its content with"
    assert free_area((1280, 720), session.panel_rect)[2] == pytest.approx(x / 1280), "the scene left of it"
    small = frames(panel, session, (800, 600))
    x, y, w, h = small["panel"]
    assert small["docked"] and x + w == 800 and h == 600
    assert w <= max(240, PANEL_MAX_FRACTION * 800) + 2.0, "refitted to the smaller window"
    assert_nothing_cut(small)
    panel.dock(None)
    assert not frames(panel, session, (800, 600))["docked"]


def test_a_docked_panel_the_user_widened_keeps_their_width(panel, session):
    panel.dock("left")
    x, y, w, h = frames(panel, session, (1280, 720))["panel"]
    drag(panel, session, (1280, 720), (w + 1, 360), (w + 101, 360))  # the splitter between panel and scene
    widened = frames(panel, session, (1280, 720))["panel"][2]
    assert widened == pytest.approx(w + 100, abs=3.0)
    assert frames(panel, session, (1100, 700))["panel"][2] == pytest.approx(widened, abs=1.0)


def test_dock_names_the_sides_it_takes(panel):
    with pytest.raises(ValueError, match="side = 'top': expected one of left, right or None"):
        panel.dock("top")


def test_the_arrow_keys_start_on_a_slider_and_show_what_they_tune(panel, session):
    """The first selection is the first slider (not the clip list); Up/Down to a parameter in
    a closed section open it and scroll it into the panel."""
    assert session.selected_parameter().key == "tail:frequency (Hz)"
    layout = frames(panel, session, (1280, 480))
    assert "mane" not in layout["sections"] and layout["scroll_max_y"] > 0
    target = next(i for i, p in enumerate(session.demo.parameters) if p.key == "ear_tuft_left:damping ratio")
    session.select(target - session.selected)  # as the Down key does, several times
    layout = frames(panel, session, (1280, 480))
    assert "ear_tuft_left" in layout["sections"], "its section opened"
    items = layout["items"]
    header = next(i for i, item in enumerate(items) if item["text"] == "ear_tuft_left")
    row = next(item for item in items[header:] if item["text"] == "damping ratio")
    x, y, w, h = layout["panel"]
    assert y + 20 <= row["top"] and row["bottom"] <= y + h, f"scrolled into the panel {layout['panel']}: {row}"


def test_choices_are_a_combo_box_and_buttons_act(panel, session):
    layout = frames(panel, session, (1280, 720))
    combo = [item for item in layout["items"] if item["text"] == "clip"]
    assert combo and combo[0]["right"] - combo[0]["left"] > 100, "the clip is one combo box, not a slider of indices"
    session.act(session.demo.actions[0])
    assert session.demo.pressed == ["save"]


# -- framing beside the panel ------------------------------------------------------------------------
def test_free_area_is_the_largest_strip_beside_the_panel():
    assert free_area((1280, 720), None) == FULL_AREA
    right = free_area((1280, 720), (8, 8, 400, 700))
    assert right == pytest.approx((408 / 1280, 0.0, 1.0, 1.0))
    below = free_area((800, 600), (8, 8, 780, 120))
    assert below == pytest.approx((0.0, 128 / 600, 1.0, 1.0))
    assert free_area((800, 600), (0, 0, 790, 590)) == FULL_AREA, f"less than {MIN_FREE_SCALE} of the picture"
    x0, y0, x1, y1 = fitted(right, 1280 / 720, (1280, 720))
    assert (x1 - x0) * 1280 / ((y1 - y0) * 720) == pytest.approx(1280 / 720)
    assert fitted(FULL_AREA, 1.5, (300, 200)) == FULL_AREA


def test_a_2d_view_lands_in_the_free_area():
    view, size = (0.0, 0.0, 800.0, 500.0), (800, 500)
    assert view_2d(view, FULL_AREA, size) == view
    area = free_area(size, (8, 8, 300, 280))
    shown = np.array(view_2d(view, area, size))
    fx0, fy0, fx1, fy1 = fitted(area, 800 / 500, size)
    def to_px(wx, wy):
        return (wx - shown[0]) / (shown[2] - shown[0]) * 800, (shown[3] - wy) / (shown[3] - shown[1]) * 500

    assert to_px(0.0, 500.0) == pytest.approx((fx0 * 800, fy0 * 500))
    assert to_px(800.0, 0.0) == pytest.approx((fx1 * 800, fy1 * 500))


def test_an_off_centre_camera_puts_its_target_in_the_area():
    camera = Camera(np.array([0.0, 1.0, 4.0]), np.zeros(3), 40.0)
    np.testing.assert_array_equal(camera.view_projection(1.6), perspective(40.0, 1.6, 0.05, 200.0) @ camera.view())
    shifted = Camera(camera.eye, camera.target, 40.0, area=(0.4, 0.0, 1.0, 1.0))
    assert shifted.project([camera.target], 1.6)[0] == pytest.approx((0.7, 0.5))
    # the field of view spans the area's height: the same height on the screen as before
    point = [[0.3, 0.8, 0.5]]
    assert shifted.project(point, 1.6)[0][1] == pytest.approx(camera.project(point, 1.6)[0][1])
    with pytest.raises(ValueError, match="area"):
        Camera(camera.eye, camera.target, area=(0.5, 0.0, 0.4, 1.0)).view_projection(1.0)


# -- honest timings -----------------------------------------------------------------------------------
def test_the_solver_is_timed_between_finishes_on_a_software_renderer(gl):
    from gpu_jiggle import PointChainSet, Solver

    class SolverDemo(TuningDemo):
        def __init__(self, ctx, args):
            super().__init__(ctx, args)
            self.solver = Solver(PointChainSet([8] * 4, 3.0, 0.3, gravity=(0, -9.8, 0)), backend="gpu", context=ctx)
            joints = np.array([[0.2 * c, -0.1 * k, 0.0] for c in range(4) for k in range(9)])
            self.solver.set_pose(joint_positions=joints)

        def step(self, dt):
            self.solver.advance(dt)

        def solvers(self):
            return [self.solver]

        def release(self):
            self.solver.release()

    session = Session(gl, SolverDemo, SimpleNamespace(fps_cap=None, debug=False))
    target = OffscreenTarget(gl, (64, 48), samples=0)
    try:
        for _ in range(4):
            session.frame(target.framebuffer, 1 / 60)
        assert session.demo.solver.dispatch_timing is not None, "the session has the demo's solver time its dispatch"
        solver_line = session.timing_lines(fresh=True)[1]
        if is_software(gl):
            assert session.solver_kind == SOLVER_FINISH
            assert solver_line.startswith("solver ") and SOLVER_FINISH in solver_line and "dispatch" in solver_line
            # the dispatch is part of the step: never more than the step's wall time around it
            assert session.stats.mean("dispatch") <= session.stats.mean("solver")
        else:
            assert session.solver_kind == "GPU" and "GPU" in solver_line
        assert session.demo.area == FULL_AREA, "no panel: the whole framebuffer"
        session.panel_rect = (0, 0, 20, 48)
        session.frame(target.framebuffer, 1 / 60)
        assert session.demo.area == pytest.approx((20 / 64, 0.0, 1.0, 1.0))
    finally:
        target.release()
        session.release()


def test_on_a_gpu_the_solver_is_its_timed_dispatch(gl):
    """Where the solvers' dispatches come back from timer queries (a GPU), the solver's time is
    theirs, labelled GPU, with the step's host time beside it (a stand-in solver says how)."""
    from gpu_jiggle.sim.timing import DispatchTiming

    class TimedSolver:
        dispatch_timing = None

        def measure_dispatch(self, enabled=True):
            self.dispatch_timing = DispatchTiming(float("nan"), "", 0)

        def advance(self):
            self.dispatch_timing = DispatchTiming(0.0003, "timer query", 64)

    class GpuDemo(TuningDemo):
        def __init__(self, ctx, args):
            super().__init__(ctx, args)
            self.solver = TimedSolver()

        def step(self, dt):
            self.solver.advance()

        def solvers(self):
            return [self.solver]

    session = Session(gl, GpuDemo, SimpleNamespace(fps_cap=None, debug=False))
    session.software = False  # as on a GPU: no glFinish brackets
    target = OffscreenTarget(gl, (32, 24), samples=0)
    try:
        for _ in range(3):
            session.frame(target.framebuffer, 1 / 60)
        assert session.solver_kind == "GPU"
        assert session.stats.mean("solver") == pytest.approx(0.3)
        assert session.timing_lines(fresh=True)[1].startswith("solver 0.3 ms GPU, step ")
    finally:
        target.release()
        session.release()

"""The tuning panel in a real window under Xvfb: in play at 1280x720 and 800x600 and in demo
01 at its size, no label is cut, the panel fits its content and the window, the subject is
framed beside it (its projected bounds clear of the panel), and on a software renderer the
solver's time is the finish-bracketed wall time, far less than the frame's (numbers of the same
run); a window resized while it runs draws whole, the panel (floating or docked) refitted.
The layout comes from the JSON the window writes beside its screenshot."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from gpu_jiggle.app.viewer.session import SOLVER_FINISH
from gpu_jiggle.app.viewer.window import LAYOUT_ENV, layout_path

from demo_support import DEMOS, FOX, FOX_RIG, fox_orange, rgb, run_window

pytest.importorskip("imgui_bundle")

SCREEN = "1400x900x24"


def window_layout(args, tmp_path, monkeypatch, frames: int):
    monkeypatch.setenv(LAYOUT_ENV, "1")
    result = run_window([*args, "--fps-cap", "uncapped", "--frames", str(frames), "--screenshot", "shot.png"], tmp_path,
                        frames=frames, screen=SCREEN)
    assert "Dear ImGui panel" in result.stdout, result.stdout
    return result, json.loads(layout_path(tmp_path / "shot.png").read_text()), rgb(tmp_path / "shot.png")


def check_panel(layout) -> None:
    """Every label inside the panel's content, the title whole, the panel inside the window,
    and without a scroll bar every widget inside the panel (no row cut off at its bottom)."""
    panel = layout["panel"]
    cut = [i["text"] for i in panel["items"] if i["right"] > panel["content_right"] + 0.5]
    assert not cut, f"labels past the panel's edge at {panel['content_right']} px: {cut}"
    assert panel["title"]["width"] <= panel["title"]["room"]
    x, y, w, h = layout["panel_rect"]
    width, height = layout["size"]
    assert x + w <= width and y + h <= height
    if panel["scroll_max_y"] == 0:
        low = [i["text"] for i in panel["items"] if i["bottom"] > y + h]
        assert not low, f"rows cut at the panel's bottom: {low}"


def clear_of_the_panel(layout) -> None:
    """The subject's projected bounds do not reach under the panel."""
    x, y, w, h = layout["panel_rect"]
    width, height = layout["size"]
    sx0, sy0, sx1, sy1 = layout["subject"]
    apart = sx0 * width >= x + w or sx1 * width <= x or sy0 * height >= y + h or sy1 * height <= y
    assert apart, f"the subject {layout['subject']} is under the panel {layout['panel_rect']} of {layout['size']}"


def timings(stdout: str) -> dict:
    """The means the window printed when it closed: {"frame": ms, "solver": ms, ...} and the solver's label."""
    line = next(line for line in stdout.splitlines() if "window closed after" in line)
    found = {name: float(ms) for name, ms in re.findall(r"(frame|solver|draw) ([0-9.]+) ms", line)}
    found["solver label"] = re.search(r"solver [0-9.]+ ms (\(CPU wall, finish\)|GPU|CPU)", line).group(1)
    return found


@pytest.mark.parametrize("size", ["1280x720", "800x600"])
def test_play_panel_fits_and_frames_the_fox_beside_it(tmp_path, monkeypatch, size):
    result, layout, pixels = window_layout(["-m", "gpu_jiggle", "play", FOX, "--rig", FOX_RIG, "--animation", "Run",
                                            "--size", size], tmp_path, monkeypatch, frames=40)
    width, height = map(int, size.split("x"))
    assert pixels.shape == (height, width, 3)
    check_panel(layout)
    clear_of_the_panel(layout)
    x, y, w, h = (round(v) for v in layout["panel_rect"])
    free = pixels[:, x + w:]
    assert fox_orange(free).sum() > 0.01 * free.shape[0] * free.shape[1], "the fox is drawn beside the panel"
    times = timings(result.stdout)
    if "llvmpipe" in result.stdout:
        assert layout["solver_kind"] == SOLVER_FINISH and times["solver label"] == SOLVER_FINISH
        assert times["solver"] < 0.5 * times["frame"], f"the solver alone, not the frame's rasterizing: {times}"
        assert layout["means_ms"]["dispatch"] is not None and layout["means_ms"]["dispatch"] <= \
            layout["means_ms"]["solver"]


def test_demo_01_panel_fits_and_frames_the_creature_beside_it(tmp_path, monkeypatch):
    result, layout, pixels = window_layout([DEMOS / "01_tail_2d.py"], tmp_path, monkeypatch, frames=30)
    assert layout["size"] == [800, 500]
    check_panel(layout)
    clear_of_the_panel(layout)
    assert layout["panel"]["scroll_max_y"] == 0, "the demo's few controls fit without scrolling"
    assert layout["area"][0] > 0 and np.isclose(layout["area"][2], 1.0), "framed to the right of the panel"


RESIZE_SCRIPT = '''
import sys
from types import SimpleNamespace
from gpu_jiggle.app.play import CharacterPlayer
from gpu_jiggle.app.shared import open_character
from gpu_jiggle.app.viewer.window import open_window, resize_window, run_window

fox, rig_path, dock, samples = sys.argv[1:5]
character, rig = open_character(fox, rig_path)
START, RESIZED = (640, 360), (1024, 576)
LAST_FRAME = 600  # a failure guard: the layout settles within a few frames of each event
done = []  # what has happened: "before" saved, "resized"

def each_frame(session):
    # each step waits for the event it needs, never for a number of frames or seconds: the
    # first picture framed beside the panel as drawn, the window system's resize, the first
    # picture at the new size framed beside the panel as refitted for it
    import glfw  # after the panel chose its glfw library
    settled = session.panel_rect is not None and session.framed_as_drawn
    if not done and settled and session.size == START:
        done.append("before")
        return "shot_before.png"
    if done == ["before"]:  # what dragging the window's corner does
        resized = resize_window(glfw.get_current_context(), RESIZED)
        assert resized == RESIZED, f"the framebuffer is {resized}, not {RESIZED}"
        done.append("resized")
    elif done == ["before", "resized"] and settled and session.size == RESIZED:
        session.quit = True  # this frame is the screenshot

window, reason = open_window("resize", START)
assert window is not None, reason
args = SimpleNamespace(fps_cap=None, samples=int(samples), no_panel=False, frames=LAST_FRAME, screenshot="shot.png",
                       screenshot_frames=[], debug=False, size=START, each_frame=each_frame,
                       dock=None if dock == "none" else dock)
rc = run_window(lambda ctx, _a: CharacterPlayer(ctx, character, rig, "Run"), args, window, reason)
if done != ["before", "resized"]:
    sys.exit(f"no settled layout at {RESIZED} in {LAST_FRAME} frames (done: {done})")
sys.exit(rc)
'''


@pytest.mark.parametrize("dock, samples", [("none", 0), ("right", 0), ("left", 4)])
def test_a_resized_window_is_drawn_whole_with_the_panel_refitted(tmp_path, monkeypatch, dock, samples):
    """Also with multisampling, drawn offscreen and resolved into the window: the panel drawn
    after that lands in the window, not in the offscreen target."""
    monkeypatch.setenv(LAYOUT_ENV, "1")
    script = tmp_path / "resize.py"
    script.write_text(RESIZE_SCRIPT)
    result = run_window([script, FOX, FOX_RIG, dock, str(samples)], tmp_path, frames=None, screen=SCREEN)
    assert (f"{samples}x MSAA" if samples else "no MSAA") in result.stdout
    before = json.loads(layout_path(tmp_path / "shot_before.png").read_text())
    after = json.loads(layout_path(tmp_path / "shot.png").read_text())
    assert before["size"] == [640, 360] and after["size"] == [1024, 576]
    assert after["panel"]["display"] == [1024, 576], "the panel was laid out for the resized window"
    assert before["frame"] < after["frame"]
    pixels = rgb(tmp_path / "shot.png")
    assert pixels.shape == (576, 1024, 3), "the screenshot is the resized window"
    for layout in (before, after):
        assert layout["framed_beside"] == layout["panel_rect"], "the picture is framed beside the panel it shows"
        check_panel(layout)
        clear_of_the_panel(layout)
        assert layout["panel"]["docked"] == (dock != "none")
    x, y, w, h = after["panel_rect"]
    shown = pixels[round(y) + 30:round(y + h) - 10, round(x) + 10:round(x + w) - 10]
    assert shown.mean() < 90, f"the panel (dark) is drawn over the scene: mean {shown.mean():.0f}"
    if dock == "right":
        assert x + w == 1024 and h == 576, "still docked along the whole right side"
    assert w > before["panel_rect"][2], "refitted to the larger window"
    free = pixels[:, :round(x)] if dock == "right" else pixels[:, round(x + w):]
    assert fox_orange(free).sum() > 0.01 * free.shape[0] * free.shape[1], "the fox is drawn in the part left free"
    # drawn over the whole new size: where the layout says the fox is. The panel's own orange-ish
    # pixels (the tuned slider's amber label, timing plots whose bars vary with the machine's load)
    # are not the fox's, so the panel's rectangle is left out
    orange = fox_orange(pixels)
    orange[max(round(y), 0):round(y + h), max(round(x), 0):round(x + w)] = False
    ys, xs = np.nonzero(orange)
    centre = (xs.min() + xs.max()) / 2 / 1024, (ys.min() + ys.max()) / 2 / 576
    sx0, sy0, sx1, sy1 = after["subject"]
    assert sx0 < centre[0] < sx1 and sy0 < centre[1] < sy1, f"the fox's pixels centred at {centre}, not in {after['subject']}"

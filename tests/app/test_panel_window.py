"""The tuning panel in a real window under Xvfb: in play at 1280x720 and 800x600 and in demo
01 at its size, no label is cut, the panel fits its content and the window, the subject is
framed beside it (its projected bounds clear of the panel), and on a software renderer the
solver's time is the finish-bracketed wall time, far less than the frame's (numbers of the same
run). The layout comes from the JSON the window writes beside its screenshot."""
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

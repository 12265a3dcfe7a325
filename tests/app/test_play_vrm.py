"""``gpu-jiggle play`` on a VRM avatar: its own spring bones without --rig, a slider pair per
VRM spring group that tunes every chain of the group (each keeping its own profile), and the
window under Xvfb."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpu_jiggle.app.play import CharacterPlayer
from gpu_jiggle.app.shared import open_character

from demo_support import first_change, hue_saturation_value, rgb, run_window

GODETTE = Path(__file__).resolve().parents[2] / "data" / "vrm" / "Godette_vrm_v4.vrm"


def blue(pixels) -> int:
    h, s, v = hue_saturation_value(pixels)
    return int(((h >= 195) & (h <= 225) & (s > 0.5) & (v > 0.3)).sum())


@pytest.fixture
def player(gl):
    character, rig = open_character(GODETTE)
    p = CharacterPlayer(gl, character, rig, motion="shake")
    yield p
    p.release()


def test_a_slider_pair_per_spring_group_tunes_all_its_chains(player):
    keys = [p.key for p in player.parameters if p.key.startswith("frequency:")]
    assert keys == ["frequency:boneGroups[0]", "frequency:boneGroups[1]", "frequency:boneGroups[2]"]
    for _ in range(5):
        player.step(1 / 30)
    rig = player.rig
    balls = rig.chain_indices("boneGroups[2]", groups=True)
    before = {i: rig.chains[i].frequency for i in balls}
    first = before[balls[0]][0]
    player.set_parameter("frequency:boneGroups[2]", 2.0 * first)
    for i in balls:  # every hair ball's chain doubled, its own profile kept
        np.testing.assert_allclose(rig.chains[i].frequency, 2.0 * before[i], rtol=1e-12)
    others = rig.chain_indices("boneGroups[0]", groups=True)
    kept = {i: rig.chains[i].frequency for i in others}
    player.set_parameter("damping:boneGroups[0]", 0.9)
    for i in others:
        np.testing.assert_array_equal(rig.chains[i].frequency, kept[i])
        assert rig.chains[i].damping_ratio[0] == pytest.approx(0.9)
    player.step(1 / 30)


def moved(a, b) -> int:
    """Pixels that differ by more than a little (> 30 in a channel) between two images."""
    return int(np.any(np.abs(a.astype(int) - b.astype(int)) > 30, axis=-1).sum())


def test_window_under_xvfb_shows_godette_shaking_her_head(tmp_path):
    # the frames after frame 6 are looked through for the first with the head turned from it:
    # a frame steps by its real time, so which one that is follows the machine's load (two
    # frames a shake apart look alike). The run's length is a failure guard
    later, last = range(7, 46), 46
    run_window(["-m", "gpu_jiggle", "play", GODETTE, "--motion", "shake", "--size", "400x240", "--fps-cap",
                "uncapped", "--no-panel", "--frames", str(last), "--screenshot", "shot.png", "--screenshot-frames",
                ",".join(map(str, [6, *later]))], tmp_path, frames=last)
    first = rgb(tmp_path / "shot_0006.png")
    for pixels in (first, rgb(tmp_path / "shot.png")):
        assert pixels.shape == (240, 400, 3)
        assert blue(pixels) > 800, "her hair and top should be in the window"
    paths = [tmp_path / f"shot_{n:04d}.png" for n in later] + [tmp_path / "shot.png"]
    turned = first_change(first, paths, lambda a, b: moved(a, b) > 100)
    assert turned is not None, f"a frame after frame 6 (up to {last}) should differ from it: the head shakes"

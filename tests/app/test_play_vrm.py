"""``gpu-jiggle play`` on a VRM avatar: its own spring bones without --rig, a slider pair per
VRM spring group that tunes every chain of the group (each keeping its own profile), and the
window under Xvfb."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpu_jiggle.app.play import CharacterPlayer
from gpu_jiggle.app.shared import open_character

from demo_support import hue_saturation_value, rgb, run_window

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


def test_window_under_xvfb_shows_godette_shaking_her_head(tmp_path):
    run_window(["-m", "gpu_jiggle", "play", GODETTE, "--motion", "shake", "--size", "400x240", "--fps-cap",
                "uncapped", "--no-panel", "--frames", "16", "--screenshot", "shot.png", "--screenshot-frames", "6"],
               tmp_path, frames=16)
    shots = [rgb(tmp_path / name) for name in ("shot_0006.png", "shot.png")]
    for pixels in shots:
        assert pixels.shape == (240, 400, 3)
        assert blue(pixels) > 800, "her hair and top should be in the window"
    moved = np.any(np.abs(shots[0].astype(int) - shots[1].astype(int)) > 30, axis=-1).sum()
    assert moved > 100, "frames 6 and 16 should differ: the head shakes"

"""``gpu-jiggle play``: the window under Xvfb, the player's controls (live f and ζ, clips,
springs, travel, teleport, debug view) on the headless context, and bad input."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from gpu_jiggle.app import cli
from gpu_jiggle.render.draw3d import OffscreenTarget
from gpu_jiggle.app.play import CharacterPlayer
from gpu_jiggle.app.shared import open_character

from demo_support import FOX, FOX_RIG as RIG, fox_orange, middle, rgb, run_window, without_display


def test_window_under_xvfb_shows_the_fox_running(tmp_path):
    run_window(["-m", "gpu_jiggle", "play", FOX, "--rig", RIG, "--animation", "Run", "--size", "400x240", "--fps-cap",
                "uncapped", "--no-panel", "--frames", "16", "--screenshot", "shot.png", "--screenshot-frames", "6,11"],
               tmp_path, frames=16)
    shots = [rgb(tmp_path / name) for name in ("shot_0006.png", "shot_0011.png", "shot.png")]
    for pixels in shots:
        assert pixels.shape == (240, 400, 3)
        centre = middle(pixels)
        assert fox_orange(centre).sum() > 1500, "the fox should be in the middle of the window"
        background = (pixels[2, 2].astype(int), pixels[-3, 2].astype(int))  # sky, ground
        assert np.any(np.abs(centre.astype(int) - background[0]).sum(axis=-1) > 60)
    changed = np.any(np.abs(middle(shots[0]).astype(int) - middle(shots[1]).astype(int)) > 30, axis=-1).sum()
    assert changed > 400, "frames 6 and 11 should differ: the fox runs"
    assert "@tomkranis" in Image.open(tmp_path / "shot.png").text.get("Copyright", ""), "the Fox's CC-BY credit"


@pytest.fixture
def player(gl):
    character, rig = open_character(FOX, RIG)  # a fresh rig: tuning changes it
    p = CharacterPlayer(gl, character, rig, clip="Run")
    yield p
    p.release()


def tail_solver(player):
    """The solver holding the tail chain and the tail's index among its chains."""
    found = player.pipeline.solver_of("tail")
    assert found is not None, "no solver holds the tail"
    return found


def test_frequency_and_damping_change_live(player):
    for _ in range(10):
        player.step(1 / 30)
    solver, index = tail_solver(player)
    before = solver.sim_time
    segments = solver.chain_set.chain_slices()[index]
    np.testing.assert_allclose(solver.chain_set.frequency[segments], [3.0, 2.5, 2.0])
    keys = {p.key for p in player.parameters}
    assert {"frequency:tail", "damping:tail", "frequency:mane", "damping:ear_tuft_left", "clip", "springs"} <= keys
    player.set_parameter("frequency:tail", 3.0)   # the profile along the tail is kept
    player.set_parameter("damping:tail", 0.25)
    same, _ = tail_solver(player)
    assert same is solver, "tuning must not rebuild the solver"
    np.testing.assert_allclose(solver.chain_set.frequency[segments], [3.0, 2.5, 2.0])
    np.testing.assert_allclose(solver.chain_set.damping_ratio[segments], np.array([0.3, 0.25, 0.2]) * 0.25 / 0.3)
    player.step(1 / 30)
    assert solver.sim_time > before, "the motion goes on from where it was"
    with pytest.raises(ValueError, match=r"tail: frequency\[0\] = 40.0 Hz .* unstable .*largest stable"):
        player.set_parameter("frequency:tail", 40.0)
    np.testing.assert_allclose(solver.chain_set.frequency[segments], [3.0, 2.5, 2.0])  # refused: unchanged


def test_clip_springs_travel_teleport_and_debug_view(player, gl):
    with OffscreenTarget(gl, (160, 90), samples=0) as target:
        player.step(1 / 30)
        player.draw(target.framebuffer, debug=True)
        assert fox_orange(target.pixels()).sum() > 200
        player.set_parameter("clip", 1)
        assert player.clip.name == "Walk" and player.pipeline.clip.name == "Walk"
        player.set_parameter("springs", False)
        frame_off = player.pipeline.step(player.time, 1 / 30)
        assert frame_off.chain_positions[0] is frame_off.chain_targets[0]  # no springs: the pose as animated
        player.set_parameter("springs", True)
        for _ in range(5):
            player.step(1 / 30)
        player.set_parameter("travel", False)
        at = player.follow().copy()
        player.step(1 / 30)
        np.testing.assert_allclose(player.follow(), at)  # stopped, without a jump
        shape = [p - p[0] for p in player.frame.chain_positions]
        player.teleport()
        player.step(1 / 30)
        assert np.linalg.norm(player.follow() - at) > player.view.framing.size
        after = [p - p[0] for p in player.frame.chain_positions]
        drift = max(float(np.abs(a - b).max()) for a, b in zip(after, shape))
        assert drift < 0.2 * player.view.framing.size, "the springs are carried across the jump"
        player.draw(target.framebuffer, debug=False)
        assert fox_orange(target.pixels()).sum() > 200
    lines = player.status()
    assert any("clip Walk" in line for line in lines)


@pytest.mark.parametrize("args, message", [
    (["missing.gltf", "--rig", str(RIG)], "missing.gltf: no such glTF file"),
    ([str(FOX), "--rig", str(RIG), "--animation", "Gallop"], "the file's animations are: Survey, Walk, Run"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, args, message):
    rc = cli.main(["play", *args])
    assert rc == 2
    err = capsys.readouterr().err
    assert err.startswith("gpu-jiggle play: ") and message in err and err.count("\n") == 1


def test_no_display_is_a_clear_error(capsys, monkeypatch):
    without_display(monkeypatch)
    rc = cli.main(["play", str(FOX), "--rig", str(RIG), "--animation", "Run"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "no display" in err and "gpu-jiggle render" in err and err.count("\n") == 1

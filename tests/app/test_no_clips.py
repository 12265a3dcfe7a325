"""A file without clips renders, plays and bakes from the command line with a built-in motion
(``--motion idle|turn|walk``, ``--animation none``); --animation may be left out."""
from __future__ import annotations

import json

import numpy as np
import pytest

from gpu_jiggle.app import cli
from gpu_jiggle.app.play import CharacterPlayer
from gpu_jiggle.app.shared import choose_clip, open_character
from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.render.draw3d import OffscreenTarget

from demo_support import FOX, FOX_RIG as RIG, fox_orange, middle, rgb, run_window


@pytest.fixture
def still_fox(tmp_path):
    """The Fox without its animations (its buffer and texture are embedded)."""
    doc = json.loads(FOX.read_text(encoding="utf-8"))
    del doc["animations"]
    path = tmp_path / "StillFox.gltf"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_choosing_a_clip_or_a_motion():
    character, _ = open_character(FOX)
    assert choose_clip(character).name == "Survey"          # the first clip
    assert choose_clip(character, "Run").name == "Run"
    assert choose_clip(character, "none").name == "motion_idle"
    assert choose_clip(character, None, "walk").name == "motion_walk"
    assert choose_clip(character, "none", "turn").name == "motion_turn"
    with pytest.raises(ValueError, match="give --animation none"):
        choose_clip(character, "Run", "walk")


def test_render_a_file_without_clips(gl, still_fox, tmp_path, capsys):
    out = tmp_path / "frames"
    rc = cli.main(["render", str(still_fox), "--rig", str(RIG), "--motion", "turn", "--seconds", "1", "--fps", "4",
                   "--size", "240x136", "--samples", "0", "--no-progress", "--out", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "rendered 'motion_turn' with springs: 4 frames" in printed and "on the spot" in printed
    frames = [rgb(p) for p in sorted(out.glob("frame_*.png"))]
    assert all(fox_orange(middle(f)).sum() > 300 for f in frames)
    assert np.any(frames[0] != frames[2], axis=-1).sum() > 100, "the head turns"


def test_render_the_walk_instead_of_a_clip(gl, tmp_path, capsys):
    rc = cli.main(["render", str(FOX), "--rig", str(RIG), "--animation", "none", "--motion", "walk", "--seconds",
                   "0.5", "--fps", "4", "--size", "120x68", "--samples", "0", "--no-progress", "--out",
                   str(tmp_path / "walk.gif")])
    assert rc == 0
    assert "rendered 'motion_walk'" in capsys.readouterr().out and (tmp_path / "walk.gif").is_file()


@pytest.mark.parametrize("command", ["render", "bake", "play"])
def test_a_clip_and_a_motion_together_are_refused(tmp_path, capsys, command):
    out = {"render": ["--out", str(tmp_path / "x.gif")], "bake": ["--out", str(tmp_path / "x.glb")], "play": []}
    rc = cli.main([command, str(FOX), "--rig", str(RIG), "--animation", "Run", "--motion", "walk", *out[command]])
    assert rc == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gpu-jiggle {command}: ") and "give --animation none" in err and err.count("\n") == 1


def test_bake_a_file_without_clips(gl, still_fox, tmp_path, capsys, gltf_validator):
    """The idle motion is written into the copy as an animation, with the tail baked into it."""
    out = tmp_path / "idle.glb"
    rc = cli.main(["bake", str(still_fox), "--rig", str(RIG), "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    assert "baked 'motion_idle'" in capsys.readouterr().out
    baked = Character.load(out)
    assert baked.clip_names == ["motion_idle"]
    clip = baked.clip("motion_idle")
    tail = [baked.skeleton.index(name) for name in ("b_Tail01_012", "b_Tail02_013", "b_Tail03_014")]
    moved = {(c.node, c.path) for c in clip.channels}
    assert {(0, "translation"), (0, "rotation")} | {(t, "rotation") for t in tail} <= moved
    tip = next(c for c in clip.channels if c.node == tail[-1] and c.path == "rotation").sampler.values
    assert np.ptp(tip, axis=0).max() > 0.005, "the springs swing the tail (it has no keys of its own)"
    report = gltf_validator(out)
    assert report.errors == 0, report.lines()


def test_the_player_offers_the_motions(gl):
    character, rig = open_character(FOX, RIG)
    player = CharacterPlayer(gl, character, rig, motion="walk")
    try:
        assert [c.name for c in player.clips] == ["Survey", "Walk", "Run", "motion_idle", "motion_turn",
                                                  "motion_walk", "motion_shake"]
        assert player.clip.name == "motion_walk" and player.pipeline.velocity[2] > 0
        player.set_parameter("clip", 4)
        assert player.pipeline.clip.name == "motion_turn"
        with OffscreenTarget(gl, (160, 90), samples=0) as target:
            player.step(1 / 30)
            player.draw(target.framebuffer, debug=False)
            assert fox_orange(target.pixels()).sum() > 200
    finally:
        player.release()


def test_play_a_file_without_clips_under_xvfb(still_fox, tmp_path):
    run_window(["-m", "gpu_jiggle", "play", still_fox, "--rig", RIG, "--size", "320x180", "--fps-cap", "uncapped",
                "--no-panel", "--frames", "8", "--screenshot", "shot.png"], tmp_path, frames=8)
    assert fox_orange(middle(rgb(tmp_path / "shot.png"))).sum() > 300

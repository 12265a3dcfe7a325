"""``render`` and ``play`` pre-roll the clip as ``bake`` does (``--preroll``, the same default),
so that their first frame shows the chains as the bake's first key does."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle.app.play import add_command as add_play
from gpu_jiggle.app.render import add_command as add_render
from gpu_jiggle.character.baking.run import DEFAULT_PREROLL, bake_frames
from gpu_jiggle.character.travel import make_pipeline, run_preroll


def _largest_turn(a, b) -> float:
    """The largest angle (degrees) between the (n, 4) unit quaternions a and b."""
    dot = np.abs(np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64), axis=-1))
    return float(np.degrees(2.0 * np.arccos(np.clip(dot, -1.0, 1.0))).max())


def test_the_first_frame_after_the_preroll_is_the_bakes_first_key(fox, rig):
    clip = fox.clips[0]
    fps, preroll = 30.0, 1.0
    schedule, keys, _, _ = bake_frames(fox, rig, clip, fps=fps, preroll=preroll, backend="cpu")
    first = np.array([keys[node][0] for node in rig.chain_joints])
    turns = {}
    for seconds in (preroll, 0.0):
        with make_pipeline(fox, rig, clip, travel=0.0, backend="cpu") as pipeline:
            assert run_preroll(pipeline, clip.start, 1.0 / schedule.dt, seconds) == round(seconds / schedule.dt)
            frame = pipeline.step(clip.start, schedule.dt)
            turns[seconds] = _largest_turn([frame.pose.rotation[node] for node in rig.chain_joints], first)
    assert turns[preroll] < 0.05  # degrees: the same chains as the bake's first key
    assert turns[0.0] > 1.0       # without it the chains start elsewhere


@pytest.mark.parametrize("add", [add_render, add_play])
def test_render_and_play_take_bakes_preroll_and_default(add):
    import argparse

    sub = argparse.ArgumentParser().add_subparsers()
    add(sub)
    parser = next(iter(sub.choices.values()))
    extra = ["--out", "x.mp4"] if add is add_render else []
    assert parser.parse_args(["model.glb", *extra]).preroll == DEFAULT_PREROLL
    assert parser.parse_args(["model.glb", *extra, "--preroll", "0.5"]).preroll == 0.5


def test_a_bad_preroll_is_refused_before_anything_steps(fox, rig):
    clip = fox.clips[0]
    with make_pipeline(fox, rig, clip, travel=0.0, backend="cpu") as pipeline:
        for bad in (-1.0, float("nan"), float("inf")):
            with pytest.raises(ValueError, match="preroll"):
                run_preroll(pipeline, clip.start, 30.0, bad)

"""Demo 05 (a crowd of VRM avatars) and what it stands on: chain sets joined into one, a crowd
whose every copy moves as the same avatar alone would at its phase, in one dispatch, and the
demo headless and in a window under Xvfb."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gpu_jiggle import AngleChainSet, PointChainSet
from gpu_jiggle.character.crowd import Crowd, grid_placements
from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.character.motion import builtin_motion
from gpu_jiggle.character.pipeline import Pipeline
from gpu_jiggle.character.rig.reader import rig_from_dict
from gpu_jiggle.character.rig.from_vrm import rig_dict_from_vrm, rig_from_vrm

from demo_support import DEMOS, changed, demo_fixture, first_change, hue_saturation_value, rgb, run_window

demo = demo_fixture("05_vrm_crowd.py")
GODETTE = Path(__file__).resolve().parents[2] / "data" / "vrm" / "Godette_vrm_v4.vrm"


def hair_blue(pixels: np.ndarray) -> int:
    """Godette's hair and top: a saturated mid blue."""
    h, s, v = hue_saturation_value(pixels)
    return int(((h >= 195) & (h <= 225) & (s > 0.5) & (v > 0.3)).sum())


def test_chain_sets_join_in_order():
    a = PointChainSet([2, 3], frequency=[1, 2, 3, 4, 5], damping_ratio=0.3, gravity=[[0, -1, 0], [0, -2, 0]],
                      air_drag=0.5)
    b = PointChainSet([1], frequency=7.0, damping_ratio=0.1, collider_mask=3, world_influence=0.5)
    joined = PointChainSet.concatenate([a, b, a])
    np.testing.assert_array_equal(joined.segment_counts, [2, 3, 1, 2, 3])
    np.testing.assert_array_equal(joined.frequency, [1, 2, 3, 4, 5, 7, 1, 2, 3, 4, 5])
    np.testing.assert_array_equal(joined.gravity[:, 1], [-1, -2, 0, -1, -2])
    np.testing.assert_array_equal(joined.collider_mask, [0xFFFFFFFF, 0xFFFFFFFF, 3, 0xFFFFFFFF, 0xFFFFFFFF])
    np.testing.assert_array_equal(joined.world_influence, [1, 1, 0.5, 1, 1])
    angles = AngleChainSet([2], lengths=[1.0, 2.0], frequency=2.0, damping_ratio=0.5)
    np.testing.assert_array_equal(AngleChainSet.concatenate([angles, angles]).lengths, [1, 2, 1, 2])
    with pytest.raises(ValueError, match="chain_sets: expected at least one chain set"):
        PointChainSet.concatenate([])
    with pytest.raises(ValueError, match=r"chain_sets\[1\]: expected a PointChainSet, got AngleChainSet"):
        PointChainSet.concatenate([a, angles])


def test_each_copy_of_a_crowd_moves_as_the_avatar_alone_at_its_phase(gl):
    godette = Character.load(GODETTE)
    data = rig_dict_from_vrm(godette)
    for chain in data["chain"]:  # a crowd leaves the colliders out: so does the avatar alone here
        chain["colliders"] = []
    rig = rig_from_dict(data, godette.skeleton)
    motion = builtin_motion(godette, "shake")
    phases = np.array([0.0, 0.4, 1.3])
    placements = grid_placements(3, 0.7)
    fps = 30.0
    with Crowd(godette, rig, motion, placements, phases, backend="gpu", context=gl) as crowd:
        assert crowd.chain_set.chain_count == 3 * len(rig.chains)
        frames = [crowd.step(k / fps, 1.0 / fps) for k in range(45)]
    for k, (phase, placement) in enumerate(zip(phases, placements)):
        with Pipeline(godette, rig, motion, backend="gpu", context=gl) as alone:
            for i, frame in enumerate(frames):
                own = alone.step(i / fps + phase, 1.0 / fps)
                world = frame.world_matrices[k].copy()
                world[:, :3, 3] -= placement
                # one solver for all: the same chains as alone, up to float32 rounding of where they stand
                np.testing.assert_allclose(world, own.world_matrices, atol=2e-5)
    moved = np.linalg.norm(frames[-1].chain_positions[0][0] - frames[5].chain_positions[0][0], axis=1).max()
    assert moved > 0.01, "the hair moves"


def test_a_crowd_refuses_bad_placements():
    godette = Character.load(GODETTE)
    rig = rig_from_vrm(godette)
    with pytest.raises(ValueError, match=r"placements: expected shape \(N, 3\)"):
        Crowd(godette, rig, builtin_motion(godette, "shake"), np.zeros((2, 2)), backend="cpu")
    with pytest.raises(ValueError, match=r"placements\[1\] = \[0.0, nan, 0.0\]: expected finite values"):
        Crowd(godette, rig, builtin_motion(godette, "shake"), [[0, 0, 0], [0, np.nan, 0]], backend="cpu")
    with pytest.raises(ValueError, match=r"count = 0: expected an integer >= 1"):
        grid_placements(0, 1.0)


def test_headless_run_draws_the_crowd(gl, demo, tmp_path, capsys):
    rc = demo.main(["--headless", "--frames", "12", "--count", "4", "--size", "320x240", "--out", str(tmp_path),
                    "--png-every", "6", "--no-panel"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "4 avatars: 32 chains, 64 segments in one dispatch" in printed
    images = [rgb(tmp_path / f"05_vrm_crowd_{i:04d}.png") for i in (0, 6, 11)]
    for image in images:
        assert image.shape == (240, 320, 3)
        assert hair_blue(image) > 1500, "the avatars should be drawn"
    assert changed(images[1], images[2]) > 0.002, "the heads turn"
    credit = "Low-Poly Godette by SirRichard94; Adapted to VRM by Lyuma (CC BY)"  # its VRM meta's
    assert Image.open(tmp_path / "05_vrm_crowd_0011.png").text.get("Copyright") == credit


def test_window_under_xvfb(tmp_path):
    # the screenshots after frame 10 are looked through for the first with the heads turned from
    # it: a frame steps by its real time, and the heads hold still for a while between turns, so
    # which frame that is follows the machine's speed. The run's length is a failure guard
    later, last = range(15, 70, 5), 70
    result = run_window([DEMOS / "05_vrm_crowd.py", "--frames", str(last), "--count", "4", "--size", "800x450",
                         "--text-panel", "--screenshot", "shots/crowd.png", "--screenshot-frames",
                         ",".join(map(str, [10, *later]))], tmp_path, frames=last)
    last_shot, before = rgb(tmp_path / "shots" / "crowd.png"), rgb(tmp_path / "shots" / "crowd_0010.png")
    assert last_shot.shape == (450, 800, 3)
    assert hair_blue(last_shot) > 3000, result.stdout
    paths = [tmp_path / "shots" / f"crowd_{n:04d}.png" for n in later] + [tmp_path / "shots" / "crowd.png"]
    turned = first_change(before, paths, lambda a, b: changed(a, b) > 0.002)
    assert turned is not None, f"a frame after frame 10 (up to {last}) should differ from it: the heads turn"
    assert "Godette" in Image.open(tmp_path / "shots" / "crowd.png").text.get("Copyright", "")  # its credit

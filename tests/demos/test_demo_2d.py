"""Demo 01 (2D tail and hair) headless and in a window, and the pieces it is built from:
two-bone IK, keyframe tracks and the 2D renderer.

The demo is drawn with OpenGL whichever backend solves the springs, so every test that
renders takes the shared EGL context (``gl``), which also checks GL errors around it.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from gpu_jiggle.render.draw2d import OffscreenTarget, Renderer, rgba
from support.ik_2d import two_bone_fk_2d, two_bone_ik_2d
from support.keyframes import KeyframeTrack

from demo_support import DEMOS, check_animation, demo_fixture, rgb, run_window, strip_cells, without_display

demo = demo_fixture("01_tail_2d.py")


def colour_u8(colour) -> np.ndarray:
    return np.round(rgba(colour)[:3] * 255).astype(np.int16)


def count_near(pixels: np.ndarray, colour, tolerance: int = 3) -> int:
    """Pixels of an (H, W, 3) uint8 image within ``tolerance`` of ``colour`` in every channel."""
    diff = np.abs(pixels.astype(np.int16) - colour_u8(colour))
    return int(np.all(diff <= tolerance, axis=-1).sum())


# -- the demo, headless ------------------------------------------------------------------------------
@pytest.mark.parametrize("solver_backend", ["gpu", "cpu"])
def test_headless_demo_writes_strip_and_gif(gl, demo, tmp_path, capsys, solver_backend):
    frames = 12
    rc = demo.main(["--headless", "--frames", str(frames), "--out", str(tmp_path), "--backend", solver_backend])
    assert rc == 0
    printed = capsys.readouterr().out
    strip_path, gif_path = tmp_path / "01_tail_2d_strip.png", tmp_path / "01_tail_2d.gif"
    assert f"on the {solver_backend} backend" in printed
    assert str(strip_path) in printed and str(gif_path) in printed

    width, height = demo.FRAME_SIZE
    cells = strip_cells(strip_path, demo.FRAME_SIZE, demo.STRIP_FRAMES)
    ground_row = int(height * (1 - demo.GROUND_Y / (demo.VIEW[3] - demo.VIEW[1])))
    for cell in cells:
        sky = cell[:ground_row - 12]  # above the grass tufts: only the creature differs from the sky
        not_sky = sky.shape[0] * sky.shape[1] - count_near(sky, demo.SKY_COLOUR, 6)
        assert not_sky > 2000, "the creature should cover a few thousand pixels"
        assert count_near(cell, demo.TAIL_COLOUR) > 40, "the tail colour should be there"
        assert count_near(cell, demo.HAIR_COLOUR) > 20, "the hair colour should be there"
        assert count_near(cell, demo.GROUND_COLOUR) > width * 20, "the ground should be there"
    changed = np.any(cells[0] != cells[-1], axis=-1).sum()
    assert changed > 500, "the first and last frames of the strip should differ"
    check_animation(gif_path, frames, demo.FRAME_SIZE)


def test_no_display_falls_back_to_headless(gl, demo, tmp_path, capsys, monkeypatch):
    without_display(monkeypatch)
    rc = demo.main(["--frames", "2", "--out", str(tmp_path), "--backend", "cpu"])
    assert rc == 0
    captured = capsys.readouterr()
    assert "no display" in captured.err and "headless" in captured.err
    assert (tmp_path / "01_tail_2d_strip.png").is_file()


def test_frame_order_keyframes_ik_springs(demo, backend):
    """The springs get the IK-final pose: the ribbon hangs from the hand that IK placed, and
    the tail from the keyframed hip."""
    scene = demo.Scene(backend)
    dt = 1.0 / 60.0
    for i in range(30):
        pose, arm, strands = scene.step(i * dt, dt)
        np.testing.assert_allclose(strands[demo.RIBBON_CHAIN][0], arm.hand, atol=1e-3)  # float32 read-back
        np.testing.assert_allclose(strands[0][0], pose.to_world(demo.TAIL.root)[0], atol=1e-3)
        assert np.all(np.isfinite(scene.solver.positions()))
    # segment lengths are kept by construction (angle chains): check the read-back agrees
    for strand, joints in zip(demo.STRANDS, strands):
        np.testing.assert_allclose(np.linalg.norm(np.diff(joints, axis=0), axis=1), strand.length, rtol=1e-4)


def test_teleport_carries_the_strands(demo, backend):
    """T in the window: the creature jumps across the stage and its strands keep their shape."""
    jumped, stayed = demo.Scene(backend), demo.Scene(backend)
    dt = 1.0 / 60.0
    for i in range(40):
        jumped.step(i * dt, dt)
        stayed.step(i * dt, dt)
    jumped.teleport(40 * dt)
    assert abs(jumped.offset_x) == demo.TELEPORT_JUMP
    _, _, a = jumped.step(40 * dt, dt)
    _, _, b = stayed.step(40 * dt, dt)
    for moved, still in zip(a[:-1], b[:-1]):  # body strands; the ribbon follows the firefly
        np.testing.assert_allclose(moved[0] - still[0], (jumped.offset_x, 0.0), atol=1e-3)
        # keep_shape: the shape relative to the pivot is carried across (one frame's motion apart)
        np.testing.assert_allclose(moved - moved[0], still - still[0], atol=1.0)
    for i in range(41, 60):
        jumped.step(i * dt, dt)
    assert np.all(np.isfinite(jumped.solver.positions()))


# -- the demo in a window under Xvfb -------------------------------------------------------------------
def test_window_screenshot_under_xvfb(tmp_path):
    # no panel: it would cover part of the middle, where the creature must be
    run_window([DEMOS / "01_tail_2d.py", "--frames", "30", "--no-panel", "--screenshot", "tmp/x.png"], tmp_path,
               frames=30, screen="800x600x24")
    shot = tmp_path / "tmp" / "x.png"
    assert shot.is_file()
    pixels = rgb(shot)
    h, w, _ = pixels.shape
    assert (w, h) == (800, 500)
    middle = pixels[h // 4:3 * h // 4, w // 4:3 * w // 4]
    not_sky = middle.shape[0] * middle.shape[1] - count_near(middle, "#dcefff", 6)
    assert not_sky > 3000, "the creature should be in the middle of the window"


# -- two-bone IK ------------------------------------------------------------------------------------
@pytest.mark.parametrize("bend_sign", [1, -1])
def test_ik_reaches_reachable_targets(bend_sign):
    rng = np.random.default_rng(7)
    for _ in range(200):
        upper, lower = rng.uniform(0.2, 3.0, 2)
        root = rng.uniform(-5, 5, 2)
        heading = rng.uniform(-math.pi, math.pi)
        distance = rng.uniform(abs(upper - lower) + 1e-6, upper + lower - 1e-6)
        target = root + distance * np.array([math.cos(heading), math.sin(heading)])
        ik = two_bone_ik_2d(root, target, upper, lower, bend_sign=bend_sign)
        assert ik.reachable
        elbow, hand = two_bone_fk_2d(root, ik.shoulder_angle, ik.elbow_angle, upper, lower)
        np.testing.assert_allclose(hand, target, rtol=0, atol=1e-9)
        assert abs(np.linalg.norm(elbow - root) - upper) < 1e-12
        assert np.sign(ik.elbow_angle) == bend_sign
        # bend_sign +1 puts the elbow clockwise of the line root → target
        (ax, ay), (bx, by) = target - root, elbow - root
        side = ax * by - ay * bx
        assert np.sign(side) == -bend_sign or abs(side) < 1e-9
        assert -math.pi <= ik.shoulder_angle < math.pi


def test_ik_straightens_toward_an_unreachable_target():
    root, target = np.array([1.0, 2.0]), np.array([1.0 + 30.0, 2.0 + 40.0])  # 50 away, reach 7
    ik = two_bone_ik_2d(root, target, 4.0, 3.0)
    assert not ik.reachable
    assert ik.elbow_angle == pytest.approx(0.0, abs=1e-12)
    assert ik.shoulder_angle == pytest.approx(math.atan2(40.0, 30.0), abs=1e-12)
    _, hand = two_bone_fk_2d(root, ik.shoulder_angle, ik.elbow_angle, 4.0, 3.0)
    np.testing.assert_allclose(hand, root + 7.0 * np.array([0.6, 0.8]), atol=1e-12)


def test_ik_target_too_close_folds_the_arm():
    root, target = np.zeros(2), np.array([0.5, 0.0])  # closer than |4 - 1| = 3
    ik = two_bone_ik_2d(root, target, 4.0, 1.0)
    assert not ik.reachable
    assert abs(ik.elbow_angle) == pytest.approx(math.pi)
    _, hand = two_bone_fk_2d(root, ik.shoulder_angle, ik.elbow_angle, 4.0, 1.0)
    np.testing.assert_allclose(hand, [3.0, 0.0], atol=1e-12)  # nearest reachable point on the same ray


@pytest.mark.parametrize("name, args", [
    ("upper_length", dict(upper_length=0.0, lower_length=1.0)),
    ("upper_length", dict(upper_length=-2.0, lower_length=1.0)),
    ("upper_length", dict(upper_length=float("nan"), lower_length=1.0)),
    ("lower_length", dict(upper_length=1.0, lower_length=0.0)),
    ("lower_length", dict(upper_length=1.0, lower_length=-1e-3)),
    ("lower_length", dict(upper_length=1.0, lower_length=float("inf"))),
])
def test_ik_refuses_bad_lengths(name, args):
    with pytest.raises(ValueError, match=name):
        two_bone_ik_2d([0.0, 0.0], [1.0, 0.0], **args)


def test_ik_refuses_bad_points_and_bend_sign():
    with pytest.raises(ValueError, match="root"):
        two_bone_ik_2d([0.0, 0.0, 0.0], [1.0, 0.0], 1.0, 1.0)
    with pytest.raises(ValueError, match="target"):
        two_bone_ik_2d([0.0, 0.0], [float("nan"), 0.0], 1.0, 1.0)
    with pytest.raises(ValueError, match="bend_sign"):
        two_bone_ik_2d([0.0, 0.0], [1.0, 0.0], 1.0, 1.0, bend_sign=0)
    with pytest.raises(TypeError, match="target"):
        two_bone_ik_2d([0.0, 0.0], ["a", "b"], 1.0, 1.0)


# -- keyframe tracks --------------------------------------------------------------------------------
def test_keyframes_linear_and_loop():
    track = KeyframeTrack([0.0, 1.0, 3.0], [0.0, 10.0, 0.0], "linear", loop=True)
    assert track.sample(0.5) == pytest.approx(5.0)
    assert track.sample(2.0) == pytest.approx(5.0)
    assert track.sample(3.5) == pytest.approx(5.0)   # wraps with period 3
    assert track.sample(-2.5) == pytest.approx(5.0)
    np.testing.assert_allclose(track.sample(np.array([0.0, 1.0, 3.0])), [0.0, 10.0, 0.0])
    held = KeyframeTrack([0.0, 1.0], [[0.0, 1.0], [2.0, 3.0]], "linear", loop=False)
    np.testing.assert_allclose(held.sample(5.0), [2.0, 3.0])
    np.testing.assert_allclose(held.sample(-1.0), [0.0, 1.0])


def test_keyframes_smooth_hits_keys_and_does_not_overshoot():
    times, values = [0.0, 0.5, 0.6, 1.5, 2.0], [0.0, 100.0, 100.0, -20.0, 0.0]
    track = KeyframeTrack(times, values, "smooth")
    np.testing.assert_allclose(track.sample(np.array(times)), values, atol=1e-12)
    t = np.linspace(0.0, 2.0, 2001)
    y = track.sample(t)
    for k in range(len(times) - 1):
        inside = (t >= times[k]) & (t <= times[k + 1])
        lo, hi = sorted(values[k:k + 2])
        assert np.all((y[inside] >= lo - 1e-9) & (y[inside] <= hi + 1e-9)), f"overshoot between keys {k} and {k + 1}"
    assert np.max(np.abs(np.diff(y))) < 1.0  # continuous, including across the loop seam
    assert abs(track.sample(2.0 - 1e-6) - track.sample(1e-6)) < 1e-3


def test_keyframes_validate_their_input():
    with pytest.raises(ValueError, match="times"):
        KeyframeTrack([0.0, 1.0, 1.0], [0, 1, 2])
    with pytest.raises(ValueError, match="times"):
        KeyframeTrack([0.0], [0.0])
    with pytest.raises(ValueError, match="values"):
        KeyframeTrack([0.0, 1.0], [0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="values"):
        KeyframeTrack([0.0, 1.0], [0.0, float("nan")])
    with pytest.raises(ValueError, match="interpolation"):
        KeyframeTrack([0.0, 1.0], [0.0, 1.0], "cubic")
    with pytest.raises(ValueError, match="time"):
        KeyframeTrack([0.0, 1.0], [0.0, 1.0]).sample(float("inf"))


# -- the 2D renderer --------------------------------------------------------------------------------
def test_renderer_draws_where_asked(gl):
    with Renderer(gl) as renderer, OffscreenTarget(gl, (100, 50)) as target:
        renderer.circle((25.0, 25.0), 10.0, "#ff0000")                       # left half
        renderer.polyline([[60.0, 10.0], [90.0, 10.0]], 6.0, (0.0, 0.0, 1.0))  # bottom right
        renderer.polygon([[60.0, 30.0], [90.0, 30.0], [90.0, 45.0], [60.0, 45.0]], "#00ff00")
        renderer.render(target.framebuffer, (0.0, 0.0, 100.0, 50.0), clear="#ffffff")
        pixels = target.pixels()  # top row first: world y = 50 - row
    assert tuple(pixels[25, 25]) == (255, 0, 0)
    assert tuple(pixels[50 - 10, 75]) == (0, 0, 255)
    assert tuple(pixels[50 - 38, 75]) == (0, 255, 0)
    assert tuple(pixels[2, 2]) == (255, 255, 255)
    assert tuple(pixels[25, 50]) == (255, 255, 255)


def test_renderer_refuses_bad_input(gl):
    with pytest.raises(ValueError, match="colour"):
        rgba("#12345")
    with pytest.raises(ValueError, match="colour"):
        rgba((1.0, 2.0, 0.0))
    with Renderer(gl) as renderer, OffscreenTarget(gl, (8, 8)) as target:
        with pytest.raises(ValueError, match="width"):
            renderer.polyline([[0, 0], [1, 1]], 0.0, "#000000")
        with pytest.raises(ValueError, match="points"):
            renderer.polyline([[0, 0]], 1.0, "#000000")
        with pytest.raises(ValueError, match="view"):
            renderer.render(target.framebuffer, (0, 0, 0, 1))

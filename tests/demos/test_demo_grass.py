"""Demo 03 (grass field): the blades' vertex shader draws exactly what positions() reads
back, levels of detail by distance, the demo headless and in a window under Xvfb."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import Solver
from gpu_jiggle.gl import glsl
from gpu_jiggle.render.chain_draw import BINDINGS, chain_indices

from demo_support import DEMOS, changed, demo_fixture, rgb, run_window

demo = demo_fixture("03_grass_field.py")


def grass_pixels(pixels: np.ndarray) -> np.ndarray:
    """(H, W) bool: lit or shaded grass, green clearly above red and blue (the soil is an
    olive green too, but dark and dull: it is left out by the saturation bound)."""
    p = pixels.astype(np.int64)
    r, g, b = p[..., 0], p[..., 1], p[..., 2]
    return (g > r + 12) & (g > b + 25) & (g > 55)


# -- the drawing reads what positions() reads --------------------------------------------------------
def test_grass_ribbons_draw_the_read_back_positions(gl, demo):
    """Transform feedback of grass_blade.vert on a small field far from the world origin,
    after frames of wind, a rolling ball and mixed levels of detail: each ribbon vertex's
    joint is the read-back joint (less the floating origin), and its two edges straddle it."""
    field = demo.make_field(60, seed=1)
    far = np.array([800.0, 10.0, -450.0])
    s = Solver(demo.make_chain_set(field), backend="gpu", context=gl)
    s.set_pose(joint_positions=field.joints + far)
    s.set_wind(acceleration=(4.0, 0.0, 0.0), gust_amplitude=8.0, gust_wave_vector=(1.2, 0.0, 0.3),
               gust_frequency=0.5)
    rng = np.random.default_rng(7)
    for f in range(12):
        s.set_colliders(spheres=[[*(far + [0.4 * np.sin(f / 4), 0.3, 0.0]), 0.3]], planes=[[0.0, 1.0, 0.0, far[1]]])
        s.set_lod(rng.integers(0, 3, 60))
        s.advance(1 / 60 + 0.004 * (f % 3))
    counts = s.chain_set.segment_counts
    per_chain = 2 * (int(counts.max()) + 1)
    program = glsl.program(gl, "draw/grass_blade.vert", None, varyings=["joint_world", "world_position"])
    program["vertices_per_chain"].value = per_chain
    program["view_projection"].write(np.eye(4, dtype="f4").tobytes())
    program["root_width"].value = (0.02, 0.03)
    for name, binding in BINDINGS.items():
        s.gpu_buffers()[name].bind_to_storage_buffer(binding)
    captured = gl.buffer(reserve=60 * per_chain * 24)
    vao = gl.vertex_array(program, [])
    target = gl.simple_framebuffer((1, 1))  # a headless context has no default framebuffer
    target.use()
    vao.transform(captured, mode=gl.POINTS, vertices=60 * per_chain)
    gl.detect_framebuffer(0).use()
    out = np.frombuffer(captured.read(), "f4").reshape(60, per_chain // 2, 2, 6)
    expected = s.positions() - s.origin
    for c, sl in enumerate(s.chain_set.joint_slices()):
        n = counts[c] + 1
        joints = out[c, :n, :, :3]
        np.testing.assert_allclose(joints[:, 0], expected[sl], rtol=0, atol=1e-4)
        np.testing.assert_allclose(joints[:, 1], expected[sl], rtol=0, atol=1e-4)
        np.testing.assert_allclose(out[c, n:, 0, :3], np.broadcast_to(expected[sl][-1], (per_chain // 2 - n, 3)),
                                   rtol=0, atol=1e-4)  # past the tip: the tip again
        edges = out[c, :n, :, 3:]
        np.testing.assert_allclose(edges.mean(axis=1), expected[sl], rtol=0, atol=1e-4)
        half = np.linalg.norm(edges[:, 1] - edges[:, 0], axis=1) / 2
        assert half[0] > 0.0099 and half[-1] < 1e-6, "tapered from the root width to a point"
    for obj in (captured, vao, program, target):
        obj.release()
    s.release()


def test_chain_indices_list_each_segment_once():
    ribbons = chain_indices([2, 3], "ribbons").reshape(-1, 6)
    assert len(ribbons) == 5  # one quad (two triangles) per segment, none for the shorter chain's padding
    np.testing.assert_array_equal(ribbons[0], [0, 1, 2, 1, 3, 2])
    np.testing.assert_array_equal(ribbons[2], [8, 9, 10, 9, 11, 10])  # chain 1 starts at 2 × 4 joints
    lines = chain_indices([2, 3], "lines").reshape(-1, 2)
    np.testing.assert_array_equal(lines, [[0, 1], [1, 2], [4, 5], [5, 6], [6, 7]])
    np.testing.assert_array_equal(chain_indices([1, 1, 1], "lines", stride=2).reshape(-1, 2), [[0, 1], [4, 5]])


# -- levels of detail ----------------------------------------------------------------------------------------
def test_levels_of_detail_by_distance_and_near_the_ball(demo):
    pivots = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 10.0], [0.0, 0.0, 20.0], [0.0, 0.0, 30.0]])
    levels = demo.lod_levels(pivots, eye=(0.0, 1.0, 0.0))
    np.testing.assert_array_equal(levels, [0, 1, 2, 2])
    levels = demo.lod_levels(pivots, eye=(0.0, 1.0, 0.0), ball=(0.0, 0.3, 30.5))
    np.testing.assert_array_equal(levels, [0, 1, 2, 0])  # the ball's neighbours run at full rate


def test_blades_are_stored_tile_by_tile(demo):
    """Neighbours in memory are neighbours in the field, so the solver's work groups of 64
    chains mostly share a level of detail (what makes slowed and frozen blades cheaper); in a
    tile, blades of one segment count side by side, so that most SIMD batches of 8 chains walk
    no segment that one of them lacks (with counts mixed at random, almost none would)."""
    field = demo.make_field(6000)
    batches = field.segment_counts[: 8 * (len(field.pivots) // 8)].reshape(-1, 8)
    assert np.mean(batches.min(axis=1) == batches.max(axis=1)) > 0.6
    groups = field.pivots[: 64 * (len(field.pivots) // 64)].reshape(-1, 64, 3)
    spread = np.ptp(groups[:, :, [0, 2]], axis=1).max(axis=1)
    assert np.median(spread) < 2.5 * demo.TILE
    assert field.side == pytest.approx(np.sqrt(6000 / demo.DENSITY))
    assert field.segment_counts.min() >= 4 and field.segment_counts.max() <= 6


def test_parameters_apply_and_unstable_ones_are_refused(gl, demo):
    grass = demo.GrassField(gl, 800)
    try:
        grass.step(1 / 60)
        grass.set_parameter("wind", 12.0)
        grass.set_parameter("damping", 0.5)
        grass.set_parameter("lod", False)
        with pytest.raises(ValueError, match="unstable"):
            grass.set_parameter("frequency", 40.0)
        grass.set_parameter("blades", 1200)
        grass.step(1 / 60)
        assert grass.chain_set.chain_count == 1200
        assert np.all(np.isfinite(grass.solver.positions()))
    finally:
        grass.release()


def test_motion_does_not_depend_on_the_frame_rate(gl, demo):
    """What the window's frame-rate cap shows: half a second of gusting wind at 30 and at 144
    frames per second ends with the blades in the same place, within a few percent of how
    far they moved. (The ball stands still: a blade the rolling ball runs over can end up on
    either side of it, and which one turns on differences far below what the eye sees; at
    30 and 144 fps two blades of 400 did, the rest agreeing to a few millimetres.)"""
    ends = []
    for fps in (30, 144):
        grass = demo.GrassField(gl, 400, lod=False, ball=False)
        try:
            for _ in range(fps // 2):
                grass.step(1.0 / fps)
            ends.append(grass.solver.positions())
            rest = grass.field.joints
        finally:
            grass.release()
    moved = np.abs(ends[0] - rest).max()
    assert moved > 0.05, "the wind should bend the blades"
    assert np.abs(ends[0] - ends[1]).max() < 0.05 * moved


# -- the demo, headless and in a window ------------------------------------------------------------------------
def test_headless_run_writes_images_of_moving_grass(gl, demo, tmp_path, capsys):
    rc = demo.main(["--headless", "--frames", "6", "--blades", "1500", "--size", "320x180", "--out", str(tmp_path),
                    "--png-every", "1", "--no-panel"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "1500 blades" in printed and "6 PNGs" in printed
    images = [rgb(tmp_path / f"03_grass_field_{i:04d}.png") for i in range(6)]
    for image in images:
        assert image.shape == (180, 320, 3)
        assert grass_pixels(image[110:]).mean() > 0.3, "the lower part of the view should be grass"
        sky = image[:10].reshape(-1, 3).mean(axis=0)
        assert sky[2] > sky[0] and sky[2] > 180, f"the top rows should be sky: {sky}"
    assert changed(images[4][90:], images[5][90:]) > 0.01, "the wind should move the grass between frames"


def test_headless_run_writes_an_mp4_video(gl, demo, tmp_path, capsys):
    """--video x.mp4: every frame as H.264 through imageio-ffmpeg, at --size and --fps."""
    import imageio.v2 as imageio

    video = tmp_path / "grass.mp4"
    rc = demo.main(["--headless", "--frames", "5", "--blades", "1500", "--size", "160x96", "--fps", "30", "--out",
                    str(tmp_path), "--no-panel", "--video", str(video)])
    assert rc == 0 and f"video: {video}" in capsys.readouterr().out
    reader = imageio.get_reader(video, format="ffmpeg")
    try:
        meta = reader.get_meta_data()
        frames = [np.asarray(f) for f in reader]
    finally:
        reader.close()
    assert meta["codec"] == "h264" and meta["fps"] == 30
    assert len(frames) == 5 and frames[0].shape == (96, 160, 3)
    assert grass_pixels(frames[-1][60:]).mean() > 0.3, "H.264 keeps the grass green"


def test_window_under_xvfb(tmp_path):
    """The window opens, renders 30 frames and closes cleanly (``--frames`` closes it through
    the same flag as the close button); the screenshots have grass, and successive ones
    differ with the ball standing still: the wind moves the grass."""
    run_window([DEMOS / "03_grass_field.py", "--frames", "30", "--blades", "3000", "--size", "800x450", "--no-ball",
                "--screenshot", "shots/grass.png", "--screenshot-frames", "29"], tmp_path, frames=30)
    last = rgb(tmp_path / "shots" / "grass.png")
    before = rgb(tmp_path / "shots" / "grass_0029.png")
    assert last.shape == (450, 800, 3)
    view = (slice(300, 450), slice(420, 800))  # lower right: clear of the panel
    assert grass_pixels(last[view]).mean() > 0.3, "grass should fill the lower right of the window"
    assert changed(before[view], last[view]) > 0.01, "successive frames should differ while the wind blows"
    assert not (tmp_path / "imgui.ini").exists(), "the panel should not write imgui.ini"

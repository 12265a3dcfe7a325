"""Demo 04 (hair on a head): the strands' vertex shader draws exactly what positions() reads
back, the hair rig, the head following the pointer, the teleport, and the demo headless and
in a window under Xvfb."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import Solver
from gpu_jiggle.gl import glsl
from gpu_jiggle.render.chain_draw import BINDINGS

from demo_support import DEMOS, changed, demo_fixture, hue_saturation_value, rgb, run_window, skin_pixels

demo = demo_fixture("04_hair_head.py")


def hair_pixels(pixels: np.ndarray) -> int:
    """Auburn hair: orange-red hues, strongly saturated, not bright (the skin is pale, the
    shirt blue, the floor and sky grey and blue)."""
    h, s, v = hue_saturation_value(pixels)
    return int(((h >= 5) & (h <= 40) & (s > 0.55) & (v > 0.08) & (v < 0.85)).sum())


# -- the drawing reads what positions() reads --------------------------------------------------------
@pytest.mark.parametrize("as_lines", [False, True])
def test_hair_strands_draw_the_read_back_positions(gl, demo, as_lines):
    """Transform feedback of hair_strand.vert after frames of a turning head far from the world
    origin: each vertex's joint is the read-back joint (less the floating origin), the two
    edges of a ribbon straddle it, and as lines (width 0) both edges are the joint."""
    hair = demo.make_hair(40)
    far = np.array([-2500.0, 3.0, 1200.0])
    s = Solver(demo.make_chain_set(hair), backend="gpu", context=gl)
    for f in range(15):
        pose = demo.HeadPose(demo.head_rotation(0.08 * f, 0.02 * f, 0.0), far)
        spheres, capsules = pose.colliders()
        s.set_pose(joint_positions=pose.to_world(hair.rest_joints))
        s.set_colliders(spheres=spheres, capsules=capsules)
        s.advance(1 / 60 + 0.003 * (f % 2))
    counts = s.chain_set.segment_counts
    chains, per_chain = len(counts), 2 * (int(counts.max()) + 1)
    program = glsl.program(gl, "draw/hair_strand.vert", None, varyings=["joint_world", "world_position"])
    program["vertices_per_chain"].value = per_chain
    program["view_projection"].write(np.eye(4, dtype="f4").tobytes())
    program["eye"].value = tuple(map(float, np.array([0.5, 1.6, 1.5]) + far - s.origin))
    program["width"].value = (0.0, 0.0) if as_lines else (0.004, 0.002)
    for name, binding in BINDINGS.items():
        s.gpu_buffers()[name].bind_to_storage_buffer(binding)
    captured = gl.buffer(reserve=chains * per_chain * 24)
    vao = gl.vertex_array(program, [])
    target = gl.simple_framebuffer((1, 1))
    target.use()
    vao.transform(captured, mode=gl.POINTS, vertices=chains * per_chain)
    gl.detect_framebuffer(0).use()
    out = np.frombuffer(captured.read(), "f4").reshape(chains, per_chain // 2, 2, 6)
    expected = s.positions() - s.origin
    for c, sl in enumerate(s.chain_set.joint_slices()):
        n = counts[c] + 1
        np.testing.assert_allclose(out[c, :n, 0, :3], expected[sl], rtol=0, atol=1e-4)
        edges = out[c, :n, :, 3:]
        np.testing.assert_allclose(edges.mean(axis=1), expected[sl], rtol=0, atol=1e-4)
        width = np.linalg.norm(edges[:, 1] - edges[:, 0], axis=1)
        if as_lines:
            assert width.max() < 1e-6
        else:
            np.testing.assert_allclose(width, np.linspace(0.004, 0.002, n), rtol=1e-3)
    for obj in (captured, vao, program, target):
        obj.release()
    s.release()


# -- the rig and the head ----------------------------------------------------------------------------
def test_hair_rig(demo):
    hair = demo.make_hair(500)
    cs = demo.make_chain_set(hair)
    assert cs.chain_count == 500
    assert hair.segment_counts.min() >= 12 and hair.segment_counts.max() <= 24
    roots = hair.rest_joints[cs.first_joint]
    np.testing.assert_allclose(np.linalg.norm(roots, axis=1), demo.HEAD_RADIUS, rtol=1e-12)
    assert demo.on_scalp(roots / demo.HEAD_RADIUS).all()
    tips = np.delete(hair.rest_joints, cs.first_joint, axis=0)
    assert np.linalg.norm(tips, axis=1).min() > demo.HEAD_RADIUS + demo.PARTICLE_RADIUS, "combed over, not through"


def test_hair_hangs_calmly_under_gravity(gl, demo):
    """Held still for 1.5 s, the strands come to rest (stiff enough against gravity, see
    FREQUENCY_HZ) instead of curling up and whirling."""
    hair = demo.make_hair(300)
    s = Solver(demo.make_chain_set(hair), backend="gpu", context=gl)
    pose = demo.HeadPose(np.eye(3), np.zeros(3))
    spheres, capsules = pose.colliders()
    for _ in range(90):
        s.set_pose(joint_positions=pose.to_world(hair.rest_joints))
        s.set_colliders(spheres=spheres, capsules=capsules)
        s.advance(1 / 60)
    assert np.abs(s.velocities()).max() < 0.3
    s.release()


def test_head_turns_toward_the_pointer(gl, demo):
    head = demo.HairHead(gl, 60, follow_mouse=True)
    try:
        head.pointer(0.9, 0.5)
        right = head._mouse_angles()
        head.pointer(0.1, 0.5)
        left = head._mouse_angles()
        head.pointer(0.5, 0.1)
        up = head._mouse_angles()
        camera = head.camera()
        forward = camera.target - camera.eye
        screen_right = np.cross(forward, [0.0, 1.0, 0.0])

        def facing(angles):  # where the face points, world, for (yaw, pitch, roll)
            return demo.head_rotation(*angles) @ [0.0, 0.0, 1.0]

        assert facing(right) @ screen_right > 0.2, "pointer on the right: the face turns to the screen's right"
        assert facing(left) @ screen_right < -0.2, "pointer on the left: to the left"
        assert up[1] < 0 and facing(up)[1] > 0, "pointer high: the face looks up (negative pitch)"
        head.pointer(0.9, 0.5)
        for _ in range(30):  # half a second: the lag has caught up
            head.step(1 / 60)
        np.testing.assert_allclose(head.angles, right, atol=0.02)
    finally:
        head.release()


def test_teleport_carries_the_hair_with_its_shape(gl, demo):
    head = demo.HairHead(gl, 60)
    try:
        pivots = head.chain_set.first_joint

        def shape(p):
            return p - np.repeat(p[pivots], head.chain_set.segment_counts + 1, axis=0)

        shapes = []
        for _ in range(20):
            head.step(1 / 60)
            shapes.append(shape(head.solver.positions()))
        frame_motion = max(np.abs(b - a).max() for a, b in zip(shapes[-6:], shapes[-5:]))
        before = head.solver.positions()
        head.teleport()
        head.step(1 / 60)
        after = head.solver.positions()
        jump = after[pivots] - before[pivots]
        assert np.allclose(np.linalg.norm(jump, axis=1), np.linalg.norm(demo.TELEPORT_JUMP), atol=0.05)
        change = np.abs(shape(after) - shape(before)).max()
        assert change <= 1.5 * frame_motion + 1e-3, f"one frame's motion at most: {change} vs {frame_motion}"
        assert np.abs(head.solver.velocities()).max() < 5.0, "no velocity from the jump"
    finally:
        head.release()


# -- the demo, headless and in a window ------------------------------------------------------------------------
def test_headless_run_writes_images_of_moving_hair(gl, demo, tmp_path, capsys):
    rc = demo.main(["--headless", "--frames", "8", "--strands", "400", "--size", "320x240", "--out", str(tmp_path),
                    "--png-every", "4", "--no-panel"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "400 strands" in printed and "3 PNGs" in printed
    images = [rgb(tmp_path / f"04_hair_head_{i:04d}.png") for i in (0, 4, 7)]
    for image in images:
        assert image.shape == (240, 320, 3)
        assert hair_pixels(image) > 800, "the hair should be drawn"
        assert skin_pixels(image) > 300, "the face and neck should be drawn"
    assert changed(images[1], images[2]) > 0.003, "the head turns and the hair swings"


def test_window_under_xvfb(tmp_path):
    """The window (with the text panel and keys, the fallback for the Dear ImGui panel) opens,
    renders 30 frames and closes cleanly (``--frames`` closes it through the same flag as the
    close button); the screenshots show hair and a face, and differ."""
    result = run_window([DEMOS / "04_hair_head.py", "--frames", "30", "--strands", "800", "--size", "1024x450",
                         "--text-panel", "--screenshot", "shots/hair.png", "--screenshot-frames", "28"], tmp_path,
                        frames=30)
    assert "text panel and keys" in result.stdout, result.stdout + result.stderr
    last = rgb(tmp_path / "shots" / "hair.png")
    before = rgb(tmp_path / "shots" / "hair_0028.png")
    assert last.shape == (450, 1024, 3)
    figure = (slice(0, 450), slice(440, 1024))  # right of the panel
    assert hair_pixels(last[figure]) > 2000, "the hair should be in the window"
    assert skin_pixels(last[figure]) > 1000, "the face should be in the window"
    assert changed(before[figure], last[figure]) > 0.002, "successive frames should differ"

"""``gpu-jiggle render``: the Fox skinned and textured on the GPU, headless, to GIF, PNGs and
MP4; the side-by-side compare; where the character travels; bad input."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from gpu_jiggle.app import cli
from gpu_jiggle.render.draw3d import Camera, OffscreenTarget
from gpu_jiggle.app.render import render
from gpu_jiggle.app.shared import open_character
from gpu_jiggle.character.travel import ground_speed, make_pipeline
from gpu_jiggle.render.scene import Framing, SkinnedMeshes, skin_on_host
from gpu_jiggle.render.video import output_kind

from demo_support import FOX, FOX_RIG as RIG, fox_dark_brown, fox_orange, middle, mp4_copyright


@pytest.fixture(scope="module")
def fox():
    return open_character(FOX, RIG)


# -- GPU skinning ---------------------------------------------------------------------------------
def test_gpu_skinning_matches_the_host(gl, fox):
    """The vertex shader's skinning puts the mesh where numpy's does: every projected
    host-skinned vertex of a running pose lands on a drawn pixel, and the drawn silhouette
    spans the same box."""
    character, rig = fox
    frame = make_pipeline(character, rig, "Run", springs=False, travel=0).step(0.37, 1 / 30)
    framing = Framing.of(character)
    size = (200, 120)
    camera = framing.camera(size[0] / size[1])
    with OffscreenTarget(gl, size, samples=0) as target:
        meshes = SkinnedMeshes(gl, character)
        try:
            target.framebuffer.clear(0.0, 0.0, 0.0, 1.0)
            meshes.draw(target.framebuffer, camera, frame.world_matrices)
            drawn = target.pixels().max(axis=-1) > 0
        finally:
            meshes.release()
    points = skin_on_host(character, character.meshes[0], frame.world_matrices)
    clip = np.c_[points, np.ones(len(points))] @ camera.view_projection(size[0] / size[1]).T
    ndc = clip[:, :2] / clip[:, 3:]
    x = np.clip(((ndc[:, 0] + 1) / 2 * size[0]).astype(int), 0, size[0] - 1)
    y = np.clip(((1 - ndc[:, 1]) / 2 * size[1]).astype(int), 0, size[1] - 1)
    near = np.zeros_like(drawn)
    for dy in (-1, 0, 1):  # a vertex on the silhouette may round to the pixel beside it
        for dx in (-1, 0, 1):
            near |= np.roll(np.roll(drawn, dy, axis=0), dx, axis=1)
    assert near[y, x].mean() > 0.97, "host-skinned vertices should fall on the drawn mesh"
    rows, cols = np.nonzero(drawn)
    assert abs(cols.min() - x.min()) <= 2 and abs(cols.max() - x.max()) <= 2
    assert abs(rows.min() - y.min()) <= 2 and abs(rows.max() - y.max()) <= 2


def test_ground_speed_of_the_fox_clips(fox):
    character, _ = fox
    run, run_dir = ground_speed(character, character.clip("Run"))
    walk, _ = ground_speed(character, character.clip("Walk"))
    survey, _ = ground_speed(character, character.clip("Survey"))
    assert survey == 0.0, "looking around on the spot is not travelling"
    assert 60 < walk < run < 400, (walk, run)  # the model's unit is about a centimetre
    np.testing.assert_allclose(run_dir, [0, 0, 1], atol=0.02)  # the Fox faces +z


# -- render ----------------------------------------------------------------------------------------
def test_render_gif_shows_the_textured_fox_running(gl, tmp_path):
    out = tmp_path / "fox.gif"
    result = render(FOX, RIG, "Run", out, seconds=0.5, fps=10, size=(240, 136), samples=0, progress=False)
    assert result.path == out and result.kind == "gif" and result.frames == 5 and result.backend == "gpu"
    assert result.travel > 100
    assert 0 < result.frame_seconds < result.seconds  # the frames' time, without loading and compiling
    gif = Image.open(out)
    assert gif.n_frames == 5 and gif.size == (240, 136)
    frames = []
    for k in range(gif.n_frames):
        gif.seek(k)
        frames.append(np.asarray(gif.convert("RGB")))
    for pixels in frames:
        centre = middle(pixels)
        assert fox_orange(centre).sum() > 600, "the fox's orange fur should fill the middle"
        assert fox_dark_brown(centre).sum() > 30, "its dark brown legs (the texture's other colour)"
        assert fox_orange(pixels).sum() < 0.5 * fox_orange(pixels).size, "framed, not filling the image"
    assert np.any(frames[0] != frames[3], axis=-1).sum() > 500, "it runs: the frames differ"


def test_compare_differs_where_the_tail_is(gl, tmp_path, fox):
    """Left: keyframes only; right: springs. The halves differ most around the tail (and the
    ear tufts), not in the body."""
    character, rig = fox
    out = tmp_path / "frames"
    size = (480, 200)
    fps, seconds = 10, 0.9
    result = render(FOX, RIG, "Run", out, seconds=seconds, fps=fps, compare=True, size=size, samples=0,
                    progress=False)
    assert result.kind == "png" and result.frames == 9
    files = sorted(out.glob("frame_*.png"))
    assert len(files) == 9
    pixels = np.asarray(Image.open(files[-1]).convert("RGB"))
    assert pixels.shape == (size[1], size[0], 3)
    half = size[0] // 2
    left, right = pixels[:, :half], pixels[:, half:]
    band = slice(40, None)  # below the labels
    for side in (left, right):
        assert fox_orange(side[band]).sum() > 800
    differs = np.any(np.abs(left.astype(int) - right.astype(int)) > 40, axis=-1)
    differs[:40] = False
    # where the tail is: its joints (animated and simulated) projected with the render's camera
    pipeline = make_pipeline(character, rig, "Run", travel="auto")
    t = (result.frames - 1) / fps
    for k in range(result.frames):
        frame = pipeline.step(k / fps, 1 / fps)
    camera = Framing.of(character).camera(half / size[1], follow=pipeline.root_offset(t))
    tail = np.vstack([frame.chain_targets[0], frame.chain_positions[0]])
    clip = np.c_[tail, np.ones(len(tail))] @ camera.view_projection(half / size[1]).T
    ndc = clip[:, :2] / clip[:, 3:]
    x, y = (ndc[:, 0] + 1) / 2 * half, (1 - ndc[:, 1]) / 2 * size[1]
    margin = 25
    box = np.zeros_like(differs)
    box[max(int(y.min()) - margin, 0):int(y.max()) + margin, max(int(x.min()) - margin, 0):int(x.max()) + margin] = True
    assert differs[box].sum() > 150, "the tail should lag and swing differently with springs"
    rows, cols = np.nonzero(differs)
    body = (cols > x.max() + margin) & (cols < half * 0.7)  # the trunk, between the tail and the head
    assert body.sum() < 0.25 * differs.sum(), "the body itself is the same in both halves"


def test_render_mp4_from_the_command_line(gl, tmp_path, capsys):
    import imageio.v2 as imageio

    out = tmp_path / "clip.mp4"
    rc = cli.main(["render", str(FOX), "--rig", str(RIG), "--animation", "Walk", "--seconds", "0.4", "--fps", "10",
                   "--size", "200x120", "--samples", "0", "--no-progress", "--out", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "rendered 'Walk'" in printed and "4 frames" in printed and str(out) in printed
    reader = imageio.get_reader(out)
    try:
        frames = [np.asarray(f) for f in reader]
    finally:
        reader.close()
    assert len(frames) == 4 and frames[0].shape == (120, 200, 3)
    assert fox_orange(middle(frames[-1])).sum() > 300  # H.264 shifts colours a little; the fur stays orange
    # the Fox's CC-BY credit (its asset.copyright) travels with the video (data/fox/LICENSE.md)
    assert mp4_copyright(out) == json.loads(FOX.read_text())["asset"]["copyright"]


# -- what a render says it drew --------------------------------------------------------------------
def _render_cli(tmp_path, capsys, *args):
    """``gpu-jiggle render`` of 0.1 s of the Fox's Run, small: (exit status, stdout, stderr)."""
    rc = cli.main(["render", str(FOX), "--animation", "Run", "--seconds", "0.1", "--fps", "10", "--size", "64x48",
                   "--no-progress", "--out", str(tmp_path / "x.gif"), *args])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def test_multisampling_is_off_by_default_on_a_software_renderer(gl, tmp_path, capsys):
    """No --samples: none on llvmpipe (where it costs more than the rest of the drawing), 4 on
    a GPU; the summary says which. An explicit count is kept."""
    software = "llvmpipe" in gl.info["GL_RENDERER"].lower()
    result = render(FOX, RIG, "Run", tmp_path / "a.gif", seconds=0.1, fps=10, size=(64, 48), progress=False)
    assert result.samples == (0 if software else min(4, gl.max_samples))
    rc, printed, _ = _render_cli(tmp_path, capsys, "--rig", str(RIG))
    assert rc == 0 and ("no MSAA" if software else "4x MSAA") in printed
    result = render(FOX, RIG, "Run", tmp_path / "b.gif", seconds=0.1, fps=10, size=(64, 48), samples=2,
                    progress=False)
    assert result.samples == 2
    rc, printed, _ = _render_cli(tmp_path, capsys, "--rig", str(RIG), "--samples", "2")
    assert rc == 0 and "2x MSAA" in printed


@pytest.mark.parametrize("rig, says", [(None, "as keyframed (no rig)"),
                                       ("[solver]\nsubstep = 0.008\n", "as keyframed (the rig has no chains)")])
def test_without_springs_the_summary_says_the_clip_is_as_keyframed(gl, tmp_path, capsys, rig, says):
    args = []
    if rig is not None:
        (tmp_path / "empty.toml").write_text(rig)
        args = ["--rig", str(tmp_path / "empty.toml")]
    rc, printed, err = _render_cli(tmp_path, capsys, *args)
    assert rc == 0, err
    assert printed.startswith(f"rendered 'Run' {says}: 1 frames") and "backend" not in printed
    result = render(FOX, None, "Run", tmp_path / "c.gif", seconds=0.1, fps=10, size=(64, 48), progress=False)
    assert result.backend is None and result.drawn == "as keyframed (no rig)"


@pytest.mark.parametrize("args, says", [
    (["--compare"], "side by side (keyframes only | with springs)"),
    (["--compare", "--look-at"], "side by side (keyframes + look-at | look-at + springs)"),
    (["--look-at"], "with look-at and springs"),
    ([], "with springs"),
])
def test_the_summary_says_what_the_image_shows(gl, tmp_path, capsys, args, says):
    rc, printed, err = _render_cli(tmp_path, capsys, "--rig", str(RIG), *args)
    assert rc == 0, err
    assert printed.startswith(f"rendered 'Run' {says}: ") and "on the gpu backend" in printed


@pytest.mark.parametrize("args, message", [
    (["--compare"], "--compare: there are no springs to compare the keyframes with (no rig)"),
    (["--look-at"], "--look-at: there is no rig for the head to turn to"),
    (["--rig", str(RIG), "--samples", "-1"], "--samples -1: expected 0 or more"),
    (["--rig", str(RIG), "--animation", "run"], "Fox.gltf: no animation called 'run'; did you mean 'Run'?"),
    (["--animation", "none", "--motion", "idel"],
     "'idel': expected one of idle, turn, walk, shake; did you mean 'idle'?"),
])
def test_nothing_to_show_and_misspellings_are_refused(tmp_path, capsys, args, message):
    if "--motion" in args:
        with pytest.raises(SystemExit) as exited:  # argparse refuses it, exit status 2
            _render_cli(tmp_path, capsys, *args)
        assert exited.value.code == 2
        err = capsys.readouterr().err
    else:
        rc, _, err = _render_cli(tmp_path, capsys, *args)
        assert rc == 2
    assert message in err, err
    assert not (tmp_path / "x.gif").exists()


def test_output_kinds(tmp_path):
    assert output_kind(tmp_path / "a.mp4") == "mp4"
    assert output_kind(tmp_path / "a.GIF") == "gif"
    assert output_kind(tmp_path / "frames") == "png"
    assert output_kind(tmp_path) == "png"
    assert output_kind(f"{tmp_path / 'frames.v1'}/") == "png"   # a new folder with a suffix
    assert output_kind(f"{tmp_path / 'clip.mp4'}/") == "png"
    with pytest.raises(ValueError, match=r"expected a \.mp4 or \.gif file, or a folder"):
        output_kind(tmp_path / "a.avi")


# -- bad input ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("args, message", [
    (["missing.gltf", "--rig", str(RIG), "--animation", "Run"], "missing.gltf: no such glTF file"),
    ([str(FOX), "--rig", "missing.toml", "--animation", "Run"], "missing.toml: no such rig file"),
    ([str(FOX), "--rig", str(RIG), "--animation", "Gallop"],
     "no animation called 'Gallop'; the file's animations are: Survey, Walk, Run"),
    ([str(FOX), "--rig", str(RIG), "--animation", "Run", "--seconds", "0"], "seconds = 0.0: expected a duration > 0"),
    ([str(FOX), "--azimuth", "inf"], "azimuth = inf: expected a finite number of degrees"),
    ([str(FOX), "--azimuth", "nan"], "azimuth = nan: expected a finite number of degrees"),
    ([str(FOX), "--elevation", "95"], "elevation = 95.0: expected degrees above the horizon between -90 and 90"),
    ([str(FOX), "--elevation", "nan"], "elevation = nan: expected degrees above the horizon"),
    ([str(FOX), "--elevation", "-90"], "elevation = -90.0: expected degrees above the horizon"),
    ([str(FOX), "--zoom", "1e300"], "zoom = 1e+300: expected a factor from 0.2 to 8"),
    ([str(FOX), "--zoom", "0"], "zoom = 0.0: expected a factor from 0.2 to 8"),
    ([str(FOX), "--zoom", "nan"], "zoom = nan: expected a factor from 0.2 to 8"),
    ([str(FOX), "--preroll", "1e300"], "preroll = 1e+300 s at 30 fps is"),
    ([str(FOX), "--preroll", "nan"], "preroll = nan: expected a finite number of seconds >= 0"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, args, message):
    rc = cli.main(["render", *args, "--out", str(tmp_path / "x.gif"), "--no-progress"])
    assert rc == 2
    err = capsys.readouterr().err
    assert err.startswith("gpu-jiggle render: ") and message in err
    assert err.count("\n") == 1, err
    assert not (tmp_path / "x.gif").exists()


@pytest.mark.parametrize("out", ["model's folder", "above it", "the rig, as a video"])
def test_render_never_writes_over_its_inputs(tmp_path, capsys, out):
    import shutil
    folder = tmp_path / "fox"
    shutil.copytree(FOX.parent, folder)
    shutil.copy(RIG, folder / "fox.toml")
    before = sorted((p.name, p.stat().st_mtime_ns) for p in folder.iterdir())
    target = {"model's folder": f"{folder}/", "above it": str(tmp_path), "the rig, as a video": None}[out]
    if target is None:
        (folder / "rig.gif").symlink_to(folder / "fox.toml")
        target = str(folder / "rig.gif")
    rc = cli.main(["render", str(folder / FOX.name), "--rig", str(folder / "fox.toml"), "--animation", "Run",
                   "--seconds", "0.1", "--out", target, "--no-progress"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "render never writes over what it reads" in err, err
    assert sorted((p.name, p.stat().st_mtime_ns) for p in folder.iterdir() if p.name != "rig.gif") == before


def test_bad_output_suffix(tmp_path, capsys):
    rc = cli.main(["render", str(FOX), "--rig", str(RIG), "--animation", "Run", "--out", str(tmp_path / "x.avi")])
    assert rc == 2
    assert "expected a .mp4 or .gif file, or a folder" in capsys.readouterr().err


def _fox_with_a_long_clip(path, last_key: float):
    """The Fox with one more clip, "Long": the Run's channels and a key on the head at
    ``last_key`` s (its rest rotation held), so the clip lasts ``last_key`` seconds."""
    import base64
    import json

    doc = json.loads(FOX.read_text(encoding="utf-8"))
    head = next(i for i, node in enumerate(doc["nodes"]) if node.get("name") == "b_Head_05")
    times = np.array([0.0, last_key], np.float32)
    rotations = np.tile(np.asarray(doc["nodes"][head].get("rotation", [0, 0, 0, 1]), np.float32), (2, 1))
    blob = times.tobytes() + rotations.tobytes()
    doc["buffers"].append({"byteLength": len(blob),
                           "uri": "data:application/octet-stream;base64," + base64.b64encode(blob).decode()})
    buffer, views, accessors = len(doc["buffers"]) - 1, len(doc["bufferViews"]), len(doc["accessors"])
    doc["bufferViews"] += [{"buffer": buffer, "byteOffset": 0, "byteLength": times.nbytes},
                           {"buffer": buffer, "byteOffset": times.nbytes, "byteLength": rotations.nbytes}]
    doc["accessors"] += [{"bufferView": views, "componentType": 5126, "count": 2, "type": "SCALAR",
                          "min": [0.0], "max": [last_key]},
                         {"bufferView": views + 1, "componentType": 5126, "count": 2, "type": "VEC4"}]
    run = next(a for a in doc["animations"] if a["name"] == "Run")
    samplers = [dict(s) for s in run["samplers"]] + [{"input": accessors, "output": accessors + 1}]
    channels = [dict(c) for c in run["channels"] if c["target"]["node"] != head]
    channels.append({"sampler": len(samplers) - 1, "target": {"node": head, "path": "rotation"}})
    doc["animations"].append({"name": "Long", "samplers": samplers, "channels": channels})
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_a_clip_with_a_far_last_key_renders_a_short_video(gl, tmp_path):
    """The travel speed samples a bounded stretch of the clip: a clip whose last key lies at
    3000 s (the loader's limit is an hour) renders 0.2 s as readily as any other (before, it
    sampled 180,000 poses)."""
    model = _fox_with_a_long_clip(tmp_path / "long.gltf", 3000.0)
    out = tmp_path / "long.gif"
    result = subprocess.run([sys.executable, "-m", "gpu_jiggle", "render", str(model), "--rig", str(RIG),
                             "--animation", "Long", "--seconds", "0.2", "--fps", "10", "--size", "64x48",
                             "--samples", "0", "--no-progress", "--out", str(out)],
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "rendered 'Long'" in result.stdout and "2 frames" in result.stdout
    assert Image.open(out).n_frames == 2


def test_no_traceback_from_the_installed_command(tmp_path):
    result = subprocess.run([sys.executable, "-m", "gpu_jiggle", "render", str(FOX), "--rig", str(RIG), "--animation",
                             "Trot", "--out", str(tmp_path / "x.mp4")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        "gpu-jiggle render: Fox.gltf: no animation called 'Trot'; the file's animations are: Survey, Walk, Run"]


def test_look_at_turns_the_head_before_the_springs(backend, fox):
    """With --look-at the head turns to the rig's moving target (after the keyframes, before
    the springs), travelling with the fox; without it the head plays its keyframes."""
    character, rig = fox
    head = character.skeleton.index("b_Head_05")
    plain = make_pipeline(character, rig, "Run", backend=backend)
    looking = make_pipeline(character, rig, "Run", backend=backend, look_at=True)
    turned = []
    with plain, looking:
        for k in range(12):
            t = plain.start + k / 30
            a, b = plain.step(t, 1 / 30), looking.step(t, 1 / 30)
            np.testing.assert_allclose(a.keyframe_world_matrices[head], b.keyframe_world_matrices[head])
            turned.append(np.abs(a.world_matrices[head][:3, :3] - b.world_matrices[head][:3, :3]).max())
    assert max(turned) > 0.1  # the head's orientation differs by more than ~6°

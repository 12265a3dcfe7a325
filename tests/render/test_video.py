"""The one frame writer (:mod:`gpu_jiggle.render.video`): MP4 without ffmpeg on PATH, GIF on
one palette, numbered PNGs, and files written whole or not at all."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from gpu_jiggle.app.viewer import demo_parser, parse_demo_args
from gpu_jiggle.render.video import FrameWriter, write_image


def frames(count, size):
    """``count`` (H, W, 3) uint8 frames of ``size`` (w, h): a bar moving right on grey."""
    width, height = size
    out = []
    for k in range(count):
        pixels = np.full((height, width, 3), 90, np.uint8)
        x = k * (width - 4) // max(count - 1, 1)
        pixels[:, x:x + 4] = (230, 120, 20)
        out.append(pixels)
    return out


def test_mp4_needs_no_ffmpeg_on_path(tmp_path, monkeypatch):
    import imageio.v2 as imageio

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    out = tmp_path / "clip.mp4"
    with FrameWriter(out, (41, 23), 30) as writer:  # odd sides: padded to even
        for pixels in frames(6, (41, 23)):
            writer.add(pixels)
    reader = imageio.get_reader(out)
    try:
        read = [np.asarray(f) for f in reader]
    finally:
        reader.close()
    assert len(read) == 6 and read[0].shape == (24, 42, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.mp4"], "no temporary file left"


def test_gif_frames_share_one_palette(tmp_path):
    out = tmp_path / "clip.gif"
    with FrameWriter(out, (32, 20), 20) as writer:
        for pixels in frames(5, (32, 20)):
            writer.add(pixels)
    gif = Image.open(out)
    assert gif.n_frames == 5 and gif.size == (32, 20)
    palette = np.asarray(gif.getpalette()[:3 * 256]).reshape(-1, 3)
    first = {tuple(c) for c in palette.tolist()}
    for k in range(gif.n_frames):
        gif.seek(k)
        shown = {tuple(c) for c in np.asarray(gif.convert("RGB")).reshape(-1, 3).tolist()}
        assert shown <= first, "every frame draws with the first frame's palette"
    gif.seek(4)
    assert np.asarray(gif.convert("RGB"))[10, 30].tolist() != [90, 90, 90], "the bar reached the right"


def test_gif_palette_from_an_image(tmp_path):
    strip = Image.new("RGB", (8, 8), (10, 200, 30))
    out = tmp_path / "clip.gif"
    writer = FrameWriter(out, (8, 8), 10)
    writer.add(np.full((8, 8, 3), (10, 200, 30), np.uint8))
    writer.close(palette_from=strip)
    assert np.asarray(Image.open(out).convert("RGB"))[0, 0].tolist() == [10, 200, 30]


def test_png_folder_replaces_older_frames(tmp_path):
    folder = tmp_path / "frames"
    with FrameWriter(folder, (16, 16), 30) as writer:
        for pixels in frames(4, (16, 16)):
            writer.add(pixels)
    with FrameWriter(folder, (16, 16), 30) as writer:
        for pixels in frames(2, (16, 16)):
            writer.add(pixels)
    assert sorted(p.name for p in folder.iterdir()) == ["frame_0000.png", "frame_0001.png"]


@pytest.mark.parametrize("name", ["clip.mp4", "clip.gif"])
def test_a_failed_run_leaves_no_file(tmp_path, name):
    (tmp_path / name).write_bytes(b"the old one")
    with pytest.raises(KeyError):
        with FrameWriter(tmp_path / name, (16, 16), 30) as writer:
            writer.add(frames(1, (16, 16))[0])
            raise KeyError("stopped")
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]
    assert (tmp_path / name).read_bytes() == b"the old one", "the old file stays as it was"


def test_bad_frames_and_kinds(tmp_path):
    with pytest.raises(ValueError, match=r"expected a \.mp4 or \.gif file, or a folder"):
        FrameWriter(tmp_path / "clip.avi", (16, 16), 30)
    with pytest.raises(ValueError, match="expected a frame rate > 0"):
        FrameWriter(tmp_path / "clip.gif", (16, 16), 0)
    with FrameWriter(tmp_path / "clip.gif", (16, 16), 30) as writer:
        with pytest.raises(ValueError, match=r"expected \(16, 16, 3\)"):
            writer.add(np.zeros((16, 15, 3), np.uint8))
        writer.add(np.zeros((16, 16, 3), np.uint8))
    assert writer.count == 1


def test_write_image_is_whole_or_nothing(tmp_path):
    path = write_image(tmp_path / "sub" / "a.png", np.zeros((4, 6, 3), np.uint8))
    assert Image.open(path).size == (6, 4)
    with pytest.raises(ValueError):
        write_image(tmp_path / "b.unknown", np.zeros((4, 6, 3), np.uint8))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub"]


def test_demo_video_option_takes_mp4_without_ffmpeg(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    parser = demo_parser("A demo.")
    args = parse_demo_args(parser, ["--headless", "--video", str(tmp_path / "d.mp4")], "title")
    assert args.video == str(tmp_path / "d.mp4")
    with pytest.raises(SystemExit):
        parse_demo_args(parser, ["--video", str(tmp_path / "d.avi")], "title")


def test_a_failed_png_run_keeps_the_older_frames(tmp_path):
    folder = tmp_path / "frames"
    with FrameWriter(folder, (16, 16), 30) as writer:
        for pixels in frames(3, (16, 16)):
            writer.add(pixels)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with pytest.raises(KeyError):
        with FrameWriter(folder, (16, 16), 30) as writer:
            writer.add(frames(1, (16, 16))[0])
            assert {p.name for p in folder.iterdir()} == set(before), "nothing moves in before the run ends"
            raise KeyError("stopped")
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["frames"], "no temporary folder left"


@pytest.mark.parametrize("name", ["clip.mp4", "clip.gif", "frames"])
def test_no_frames_write_nothing(tmp_path, name, capfd):
    with FrameWriter(tmp_path / name, (16, 16), 30):
        pass
    assert list(tmp_path.iterdir()) == []
    assert "invalid" not in capfd.readouterr().err, "ffmpeg is not started without a frame"


def test_temporaries_of_killed_writers_are_removed(tmp_path):
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)  # a process that has ended
    stale = [tmp_path / f".clip.{pid}-0123abcd.partial.mp4", tmp_path / f".frames.{pid}-0123abcd.partial"]
    stale[0].write_bytes(b"half a video")
    stale[1].mkdir()
    (stale[1] / "frame_0000.png").write_bytes(b"half a frame")
    other = tmp_path / ".clip.1-0123abcd.partial.mp4"  # pid 1 is alive: not ours to remove
    other.write_bytes(b"someone else's")
    for out in ("clip.mp4", "frames"):
        with FrameWriter(tmp_path / out, (16, 16), 30) as writer:
            writer.add(frames(1, (16, 16))[0])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["clip.mp4", "frames", other.name])

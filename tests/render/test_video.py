"""The one frame writer (:mod:`gpu_jiggle.render.video`): MP4 without ffmpeg on PATH, GIF on
one palette, numbered PNGs, and files written whole or not at all."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gpu_jiggle.app.viewer import demo_parser, parse_demo_args
from gpu_jiggle.render.video import FrameWriter, write_image

from demo_support import mp4_copyright


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

    from gpu_jiggle.whole_files import temporary_name

    names = ("clip.mp4", "frames")
    script = ("import sys; from pathlib import Path; from gpu_jiggle.whole_files import temporary_name; "
              "print(temporary_name(Path(sys.argv[1]), '.mp4')); print(temporary_name(Path(sys.argv[2])))")
    dead = subprocess.run([sys.executable, "-c", script, *(str(tmp_path / n) for n in names)], capture_output=True,
                          text=True, check=True)
    stale = [Path(line) for line in dead.stdout.split()]  # named by a process that has ended
    stale[0].write_bytes(b"half a video")
    stale[1].mkdir()
    (stale[1] / "frame_0000.png").write_bytes(b"half a frame")
    alive = temporary_name(tmp_path / "clip.mp4", ".mp4")  # this process's: not removed
    alive.write_bytes(b"someone else's")
    other_host = tmp_path / stale[0].name.replace(stale[0].name.split(".")[3].split("-")[0], "elsewhere", 1)
    other_host.write_bytes(b"another host's")  # its pid cannot be checked from here
    for out in names:
        with FrameWriter(tmp_path / out, (16, 16), 30) as writer:
            writer.add(frames(1, (16, 16))[0])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*names, alive.name, other_host.name])


def _failing_ffmpeg(tmp_path):
    """A stand-in for ffmpeg that reads its input, writes a few bytes of 'video', says that
    the disk is full and exits with status 1, as ffmpeg does on a full disk."""
    script = tmp_path / "ffmpeg"
    script.write_text("#!/bin/sh\nfor last; do :; done\ncat > /dev/null\nprintf 'ftypisom' > \"$last\"\n"
                      "echo '[out#0/mp4] Error writing trailer: No space left on device' >&2\nexit 1\n")
    script.chmod(0o755)
    return script


def test_an_mp4_that_ffmpeg_fails_to_finish_keeps_the_old_video(tmp_path, monkeypatch):
    import imageio_ffmpeg

    out = tmp_path / "v.mp4"
    out.write_bytes(b"the old video")
    monkeypatch.setattr(imageio_ffmpeg, "get_ffmpeg_exe", lambda: str(_failing_ffmpeg(tmp_path)))
    with pytest.raises(OSError, match=r"v\.mp4: ffmpeg failed \(exit status 1\).*No space left on device"):
        with FrameWriter(out, (16, 16), 30) as writer:
            for pixels in frames(5, (16, 16)):
                writer.add(pixels)
    assert out.read_bytes() == b"the old video"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ffmpeg", "v.mp4"], "no temporary left"


@pytest.fixture
def small_disk(tmp_path):
    """A 256 KiB tmpfs (root can mount one; skipped where mounting is not allowed)."""
    import subprocess

    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(disk)], capture_output=True,
                             text=True)
    if mounted.returncode != 0:
        pytest.skip(f"a small tmpfs cannot be mounted here ({mounted.stderr.strip()}); the injected ffmpeg failure "
                    f"covers the same path")
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def test_an_mp4_render_on_a_full_disk_keeps_the_old_video_and_fails(small_disk):
    out = small_disk / "v.mp4"
    out.write_bytes(b"the old video")
    noise = np.random.default_rng(3).integers(0, 256, (40, 120, 160, 3), np.uint8)  # incompressible: > 256 KiB
    with pytest.raises(OSError, match="No space left on device"):
        with FrameWriter(out, (160, 120), 30) as writer:
            for pixels in noise:
                writer.add(pixels)
    assert out.read_bytes() == b"the old video"
    assert sorted(p.name for p in small_disk.iterdir()) == ["v.mp4"], "no temporary left"


def _old_frames(folder, count):
    folder.mkdir()
    for k in range(count):
        (folder / f"frame_{k:04d}.png").write_bytes(b"old frame %d" % k)
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def test_a_folder_inside_the_frame_folder_is_refused_before_any_frame_is_touched(tmp_path):
    folder = tmp_path / "frames"
    before = _old_frames(folder, 4)
    (folder / "frame_0002.png").unlink()
    (folder / "frame_0002.png").mkdir()
    before.pop("frame_0002.png")
    with pytest.raises(ValueError, match=r"holds 'frame_0002\.png', which is not a file"):
        FrameWriter(folder, (16, 16), 30)
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["frames"]


def test_new_frames_replace_the_old_set_in_one_step_keeping_other_files(tmp_path):
    folder = tmp_path / "frames"
    _old_frames(folder, 10)
    (folder / "notes.txt").write_bytes(b"mine")
    with FrameWriter(folder, (16, 16), 30) as writer:
        for pixels in frames(3, (16, 16)):
            writer.add(pixels)
    assert sorted(p.name for p in folder.iterdir()) == ["frame_0000.png", "frame_0001.png", "frame_0002.png",
                                                        "notes.txt"]
    assert (folder / "notes.txt").read_bytes() == b"mine"
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in folder.glob("frame_*"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["frames"]


def test_a_writer_killed_between_its_two_renames_has_the_old_frames_put_back(tmp_path):
    import signal
    import subprocess
    import sys

    folder = tmp_path / "frames"
    before = _old_frames(folder, 10)
    child = subprocess.Popen([sys.executable, "-c", f"""
import os, sys
import numpy as np
from gpu_jiggle.render import frame_folder, video
frame_folder.exchange = lambda a, b: False    # a file system without an atomic exchange
rename = os.rename
def stop_after_first(a, b):
    rename(a, b)
    if str(a) == {str(folder)!r}:
        print("aside", flush=True)
        sys.stdin.read()                       # killed here, between the two renames
os.rename = stop_after_first
with video.FrameWriter({str(folder)!r}, (16, 16), 30) as writer:
    for k in range(10):
        writer.add(np.full((16, 16, 3), k, np.uint8))
"""], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "aside"
        assert not folder.exists()
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate()
    with pytest.raises(KeyError):
        with FrameWriter(folder, (16, 16), 30):
            raise KeyError("stopped: only the restoring is looked at")
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


@pytest.mark.parametrize("fps", [15, 24, 30])
def test_a_gif_lasts_as_long_as_its_frames_at_their_rate(tmp_path, fps):
    count = 2 * fps
    out = tmp_path / "clip.gif"
    with FrameWriter(out, (32, 20), fps) as writer:
        for pixels in frames(count, (32, 20)):
            writer.add(pixels)
    gif = Image.open(out)
    shown = []
    for k in range(gif.n_frames):    # frames identical to the one before are merged, their times summed
        gif.seek(k)
        shown.append(gif.info["duration"])
    assert abs(sum(shown) - 2000) <= 5       # 2 s, to GIF's hundredths of a second
    assert min(shown) >= 1000 // fps // 10 * 10


def test_gif_frame_times_track_the_clock():
    from gpu_jiggle.render.video import gif_durations

    times = gif_durations(45, 15.0)
    assert all(t % 10 == 0 for t in times), "GIF stores hundredths of a second"
    assert set(times) == {60, 70}
    assert all(abs(sum(times[:k]) - 1000 * k / 15) <= 5 for k in range(46))


CREDIT = "Model by Someone (CC-BY 4.0) https://example.org/a?b=c&d"


@pytest.mark.parametrize("credit", [CREDIT, None])
def test_the_credit_travels_with_every_kind_of_output(tmp_path, credit):
    outputs = {"mp4": tmp_path / "clip.mp4", "gif": tmp_path / "clip.gif", "png": tmp_path / "frames"}
    for path in outputs.values():
        with FrameWriter(path, (32, 20), 10, credit=credit) as writer:
            for pixels in frames(3, (32, 20)):
                writer.add(pixels)
    still = write_image(tmp_path / "still.png", frames(1, (32, 20))[0], credit=credit)
    assert mp4_copyright(outputs["mp4"]) == credit
    comment = Image.open(outputs["gif"]).info.get("comment")
    assert (comment.decode("utf-8") if comment else None) == credit
    for png in [*sorted(outputs["png"].glob("*.png")), still]:
        assert Image.open(png).text.get("Copyright") == credit, png.name

"""What the commands write is whole or absent: a render that fails, or is stopped with
SIGTERM, leaves no half-written video and no partial set of PNG frames, and the previous
output stays as it was."""
from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from gpu_jiggle.app import render as render_module
from gpu_jiggle.app.render import render
from demo_support import FOX, FOX_RIG

ROOT = FOX.parents[2]


@pytest.mark.parametrize("name", ["fox.mp4", "frames"])
def test_a_render_that_fails_leaves_the_previous_output(gl, tmp_path, monkeypatch, name):
    out = tmp_path / name
    if name == "frames":
        out.mkdir()
        (out / "frame_0000.png").write_bytes(b"the previous frame")
    else:
        out.write_bytes(b"the previous video")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    drawn = []

    def draw(self, *args, **kwargs):
        drawn.append(1)
        if len(drawn) == 4:
            raise MemoryError("out of memory on the fourth frame")

    monkeypatch.setattr(render_module.CharacterView, "draw", draw)
    with pytest.raises(MemoryError):
        render(FOX, FOX_RIG, "Run", out, seconds=1.0, fps=10, size=(64, 48), samples=0, progress=False)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before, "nothing added, nothing half-written"
    kept = out / "frame_0000.png" if name == "frames" else out
    assert kept.read_bytes().startswith(b"the previous")


def test_sigterm_stops_a_render_without_leaving_a_file(gl, tmp_path):
    out = tmp_path / "fox.mp4"
    command = [sys.executable, "-m", "gpu_jiggle", "render", str(FOX), "--rig", str(FOX_RIG), "--animation", "Run",
               "--seconds", "600", "--fps", "30", "--size", "64x48", "--samples", "0", "--no-progress",
               "--backend", "cpu", "--out", str(out)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not any(tmp_path.iterdir()) and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.1)
        assert any(tmp_path.iterdir()), "the render started writing its temporary file"
        time.sleep(0.5)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 128 + signal.SIGTERM, err
    assert list(tmp_path.iterdir()) == [], "no video, no temporary file"

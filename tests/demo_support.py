"""What the demo, render and window tests share (not a test module): the demo and benchmark
scripts as modules, a window run under Xvfb, and reading what an image shows."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

ON_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
ROOT = Path(__file__).resolve().parent.parent
DEMOS = ROOT / "demos"
BENCHMARKS = ROOT / "benchmarks"
FOX = ROOT / "data" / "fox" / "Fox.gltf"
FOX_RIG = ROOT / "rigs" / "fox.toml"


# -- what a written file holds --------------------------------------------------------------------------
def mp4_copyright(path) -> str | None:
    """The ``copyright`` tag of an MP4, whole, as ffmpeg (imageio-ffmpeg's) exports it (its
    ffmetadata format, which escapes ``=;#\\`` with a backslash); None without one."""
    import re

    import imageio_ffmpeg

    said = subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-i", str(path), "-f", "ffmetadata", "-"],
                          capture_output=True, text=True, timeout=60, check=True).stdout
    tags = [line.split("=", 1)[1] for line in said.splitlines() if line.startswith("copyright=")]
    return re.sub(r"\\(.)", r"\1", tags[0]) if tags else None


# -- the demo and benchmark scripts -------------------------------------------------------------------
@contextmanager
def script_module(path: Path, name: str):
    """The script at ``path`` as the module ``name`` while the block runs (a script is no
    package's: no plain import)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


def demo_module(filename: str):
    """``demos/<filename>`` as a module (its file name starts with a digit, so no plain import)."""
    return script_module(DEMOS / filename, "demo_" + Path(filename).stem)


def benchmark_fixture(filename: str):
    """A module-scoped fixture ``bench``: ``benchmarks/<filename>`` loaded once for the test
    module (assign it to ``bench`` there)."""

    @pytest.fixture(scope="module")
    def bench():
        with script_module(BENCHMARKS / filename, Path(filename).stem) as module:
            yield module

    return bench


def demo_fixture(filename: str):
    """A module-scoped fixture ``demo``: ``demos/<filename>`` loaded once for the test module
    (assign it to ``demo`` there)."""

    @pytest.fixture(scope="module")
    def demo():
        with demo_module(filename) as module:
            yield module

    return demo


# -- a window under Xvfb -------------------------------------------------------------------------------
def xvfb_run() -> str:
    """The ``xvfb-run`` command; without it the test skips locally and fails on CI."""
    path = shutil.which("xvfb-run")
    if path is None:
        message = "xvfb-run is not installed (Debian/Ubuntu: apt-get install xvfb xauth)"
        if ON_CI:
            pytest.fail(f"CI must run the window test: {message}")
        pytest.skip(message)
    return path


def without_display(monkeypatch) -> None:
    """No X or Wayland display for the rest of the test (a window cannot open)."""
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)


def run_window(args, cwd, frames: int | None, screen: str = "1024x768x24") -> subprocess.CompletedProcess:
    """Run ``python ARGS`` (a demo script, or ``-m gpu_jiggle play …``) in an X server of its
    own with a ``screen`` of WIDTHxHEIGHTxDEPTH, importing the ``gpu_jiggle`` this test
    imported; check that it opened a window, closed it after ``frames`` frames (None: a
    scripted run that ends when what it waits for has happened, after any number) and exited 0
    with no traceback or OpenGL error."""
    import gpu_jiggle

    here = str(Path(gpu_jiggle.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))}
    command = [xvfb_run(), "-a", "-s", f"-screen 0 {screen}", sys.executable, *map(str, args)]
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    output = f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == 0, output
    assert "window on" in result.stdout, f"it should have opened a window:\n{output}"
    closed = "window closed after " + ("" if frames is None else f"{frames} frames")
    assert closed in result.stdout, output
    assert "Traceback" not in result.stderr and "OpenGL error" not in result.stderr, output
    return result


# -- images ---------------------------------------------------------------------------------------------
def rgb(path) -> np.ndarray:
    """(H, W, 3) uint8 RGB pixels of an image file."""
    return np.asarray(Image.open(path).convert("RGB"))


def hue_saturation_value(pixels: np.ndarray):
    """(H, W, 3) uint8 RGB → hue in degrees [0, 360), saturation and value in [0, 1]."""
    p = pixels.astype(np.float64) / 255.0
    high, low = p.max(axis=-1), p.min(axis=-1)
    spread = np.maximum(high - low, 1e-9)
    r, g, b = p[..., 0], p[..., 1], p[..., 2]
    hue = np.where(high == r, ((g - b) / spread) % 6.0,
                   np.where(high == g, (b - r) / spread + 2.0, (r - g) / spread + 4.0)) * 60.0
    return hue, np.where(high > 0, (high - low) / np.maximum(high, 1e-9), 0.0), high


def skin_pixels(pixels: np.ndarray) -> int:
    """Lit skin of the hair demos' figures (face and neck): orange hues, pale and bright."""
    h, s, v = hue_saturation_value(pixels)
    return int(((h >= 8) & (h <= 40) & (s > 0.15) & (s < 0.5) & (v > 0.55)).sum())


def fox_orange(pixels: np.ndarray) -> np.ndarray:
    """Mask of the fox's lit orange fur: the texture's orange, lit or in shade. Nothing else in
    the scene is orange (the sky is pale blue, the ground grey-green, the shadow dark green)."""
    h, s, v = hue_saturation_value(pixels)
    return (h >= 15) & (h <= 45) & (s > 0.5) & (v > 0.3)


def fox_dark_brown(pixels: np.ndarray) -> np.ndarray:
    """Mask of the dark brown of the legs and ear backs (the texture's second colour)."""
    h, s, v = hue_saturation_value(pixels)
    return (h >= 5) & (h <= 45) & (s > 0.45) & (v > 0.08) & (v <= 0.3)


def middle(pixels: np.ndarray, fraction: float = 0.6) -> np.ndarray:
    """The central ``fraction`` of an image's height and width."""
    h, w, _ = pixels.shape
    dh, dw = int(h * (1 - fraction) / 2), int(w * (1 - fraction) / 2)
    return pixels[dh:h - dh, dw:w - dw]


def changed(a: np.ndarray, b: np.ndarray) -> float:
    """Fraction of pixels that differ by more than a little (summed over RGB, > 24) between
    two images."""
    return float((np.abs(a.astype(int) - b.astype(int)).sum(axis=-1) > 24).mean())


def first_change(reference: np.ndarray, paths, moved):
    """The pixels of the first image at ``paths``, in order, that ``moved(reference, pixels)``
    says has changed from ``reference``; None when none has. For a window's screenshots: how
    many frames a motion takes to show follows the machine's speed (each frame steps by its
    real time), so a test waits for the change among them rather than expecting it at a
    given frame."""
    for path in paths:
        pixels = rgb(path)
        if moved(reference, pixels):
            return pixels
    return None


# -- a demo's headless contact strip and GIF -------------------------------------------------------------
def strip_cells(path, frame_size, count: int, gap: int = 4) -> list:
    """The ``count`` frames of a contact strip (frames of ``frame_size`` (w, h) px, ``gap``
    px apart), checking the strip's size."""
    width, height = frame_size
    strip = rgb(path)
    assert strip.shape == (height, count * (width + gap) - gap, 3)
    return [strip[:, k * (width + gap):k * (width + gap) + width] for k in range(count)]


def check_animation(path, frames: int, frame_size) -> None:
    """A headless run's GIF of ``frames`` frames at 60 fps: every second frame (30 fps), of
    ``frame_size`` (w, h), its first and last frames differing in more than 500 pixels."""
    gif = Image.open(path)
    assert gif.n_frames == frames // 2  # 60 fps, every second frame → 30 fps
    gif.seek(0)
    first = np.asarray(gif.convert("RGB"))
    gif.seek(gif.n_frames - 1)
    last = np.asarray(gif.convert("RGB"))
    assert first.shape == (frame_size[1], frame_size[0], 3)
    assert np.any(first != last, axis=-1).sum() > 500

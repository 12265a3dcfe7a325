"""ffmpeg turning raw RGB frames into an H.264 MP4, for :class:`gpu_jiggle.render.video.FrameWriter`:
imageio-ffmpeg's own binary (nothing on PATH), frames written to its stdin, its messages kept
for an error (a full disk: "No space left on device")."""
from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from fractions import Fraction
from pathlib import Path

import numpy as np

from ..extras import require

MP4_CODEC = "libx264"               # H.264
MP4_PIXEL_FORMAT = "yuv420p"        # 4:2:0 chroma: what players expect
MP4_QUALITY = 8                     # imageio-ffmpeg's scale, 0 (worst) to 10 (best)
#: The last bytes of ffmpeg's own messages kept for an error.
FFMPEG_MESSAGE_BYTES = 2000


class Mp4Encoder:
    """ffmpeg (imageio-ffmpeg's binary) turning raw RGB frames on its stdin into an H.264 MP4
    at ``path``; :meth:`close` waits for it and raises OSError, with the end of ffmpeg's own
    message, when it exits with another status than 0 (a full disk: "No space left on
    device") or stops reading frames.

    Args:
        path: the file ffmpeg writes (a temporary name). size: (width, height) pixels, even.
        fps: frames per second (> 0). target: the output's final path, named in errors.
        credit: kept as the MP4's ``copyright`` metadata (None: none).

    Raises: MissingExtra without imageio-ffmpeg; OSError when ffmpeg cannot start.
    """

    def __init__(self, path: Path, size, fps: float, target: Path, credit: str | None = None):
        imageio_ffmpeg = require("imageio_ffmpeg", "writing an MP4")

        self.target = target
        width, height = size
        quality = int((1 - MP4_QUALITY / 10.0) * 51)  # imageio-ffmpeg's mapping onto x264's crf (0 best, 51 worst)
        command = [imageio_ffmpeg.get_ffmpeg_exe(), "-y", "-f", "rawvideo", "-vcodec", "rawvideo",
                   "-s", f"{width}x{height}", "-pix_fmt", "rgb24", "-r", str(Fraction(fps).limit_denominator()),
                   "-i", "-", "-an", "-vcodec", MP4_CODEC, "-pix_fmt", MP4_PIXEL_FORMAT, "-crf", str(quality),
                   "-v", "error", *(("-metadata", f"copyright={credit}") if credit else ()), "-f", "mp4", str(path)]
        self._messages = tempfile.TemporaryFile()
        try:
            self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                             stderr=self._messages)
        except BaseException:
            self._messages.close()
            raise

    def send(self, pixels: np.ndarray) -> None:
        """One frame, (H, W, 3) uint8. OSError when ffmpeg stopped reading (it failed)."""
        try:
            self._process.stdin.write(memoryview(np.ascontiguousarray(pixels)).cast("B"))
        except (BrokenPipeError, ValueError):
            self._fail(self._process.wait())

    def close(self) -> None:
        """End the stream and wait for ffmpeg. OSError unless it exited with 0."""
        try:
            self._process.stdin.close()
        except BrokenPipeError:
            pass
        status = self._process.wait()
        if status != 0:
            self._fail(status)
        self._messages.close()

    def kill(self) -> None:
        """Stop ffmpeg without finishing the file."""
        if self._process.poll() is None:
            self._process.kill()
        with contextlib.suppress(OSError):
            self._process.stdin.close()
        self._process.wait()
        self._messages.close()

    def _fail(self, status: int):
        self._messages.seek(0, os.SEEK_END)
        self._messages.seek(max(0, self._messages.tell() - FFMPEG_MESSAGE_BYTES))
        said = " ".join(self._messages.read().decode("utf-8", "replace").split()) or "no message"
        self._messages.close()
        raise OSError(f"{self.target}: ffmpeg failed (exit status {status}): {said}")

"""Writing frames: the one writer behind every video, GIF and numbered PNG sequence the
project makes (``gpu-jiggle render``, the demos' ``--video`` and their contact-strip GIFs).

:class:`FrameWriter` picks the kind by the path (:func:`output_kind`):

- ``.mp4``: H.264 (yuv420p) through imageio-ffmpeg, which ships its own ffmpeg binary, so
  nothing has to be on PATH. H.264 with 4:2:0 chroma needs even sides: frames of an odd
  width or height are padded with black on the right or at the bottom.
- ``.gif``: Pillow, every frame on one palette (no flicker from frame to frame), taken from
  an image given for it (a contact strip spanning the motion), else from the first frame.
- a folder (no suffix, or an existing folder): ``frame_0000.png``, ``frame_0001.png``, …;
  they replace the folder's older ``frame_*.png`` when the run completes, so a shorter run
  leaves none behind.

What is written is whole or absent: a video goes to a hidden temporary name in its own
folder (made on the first frame) and is renamed into place by :meth:`FrameWriter.close`;
PNG frames go to a hidden temporary folder beside the target and are moved into it by
:meth:`FrameWriter.close`, the older frames removed only then. :meth:`FrameWriter.abort`
(or an error inside a ``with`` block, Ctrl-C, or SIGTERM through the command line) removes
the temporary file or folder instead, leaving the previous output as it was. A temporary
left by a process that was killed outright (SIGKILL) is removed by the next writer of the
same output. A single image is written the same way (:func:`write_image`).

```python
from gpu_jiggle.render.video import FrameWriter
with FrameWriter("out/clip.mp4", (320, 240), fps=30) as writer:
    for pixels in frames:              # (240, 320, 3) uint8 RGB, top row first
        writer.add(pixels)
```
"""
from __future__ import annotations

import os
import re
import secrets
import shutil
from pathlib import Path

import numpy as np

from ..extras import require

__all__ = ["FrameWriter", "output_kind", "write_image", "VIDEO_SUFFIXES"]

VIDEO_SUFFIXES = (".mp4", ".gif")   # files; anything without a suffix is a folder of PNGs
PNG_FRAME_NAME = "frame_{:04d}.png"
PNG_FRAME_GLOB = "frame_*.png"
MP4_CODEC = "libx264"               # H.264
MP4_PIXEL_FORMAT = "yuv420p"        # 4:2:0 chroma: what players expect
MP4_QUALITY = 8                     # imageio-ffmpeg's scale, 0 (worst) to 10 (best)
MP4_BLOCK = 2                       # sides must be multiples of this (4:2:0)
GIF_COLOURS = 255                   # the one palette's size
MS_PER_SECOND = 1000.0
TEMPORARY_MARK = ".partial"         # in the temporary names, before the suffix


def output_kind(path) -> str:
    """``"mp4"``, ``"gif"`` or ``"png"`` (a folder: no suffix, or an existing folder) for
    ``path``. ValueError for another suffix (the message starts with the path)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in VIDEO_SUFFIXES:
        return suffix[1:]
    if path.is_dir() or not suffix:
        return "png"
    raise ValueError(f"{path}: expected a .mp4 or .gif file, or a folder for PNG frames")


def _temporary(path: Path) -> Path:
    """A hidden name beside ``path``, unique to this writer, with the same suffix (so that
    the encoder recognises the kind)."""
    return path.with_name(f".{path.stem}.{os.getpid()}-{secrets.token_hex(4)}{TEMPORARY_MARK}{path.suffix}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale(path) -> list:
    """Remove the temporaries (:func:`_temporary`) of ``path`` left by processes that no
    longer run (killed outright, so they could not clean up); returns what was removed."""
    path = Path(path)
    pattern = re.compile(rf"^\.{re.escape(path.stem)}\.(\d+)-[0-9a-f]{{8}}{re.escape(TEMPORARY_MARK + path.suffix)}$")
    removed = []
    if not path.parent.is_dir():
        return removed
    for old in path.parent.iterdir():
        found = pattern.match(old.name)
        if found and int(found.group(1)) != os.getpid() and not _alive(int(found.group(1))):
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old, ignore_errors=True)
            else:
                _remove(old)
            removed.append(old)
    return removed


def _remove(path: Path | None) -> None:
    if path is not None:
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def write_image(path, image) -> Path:
    """Write ``image`` (a PIL image, or (H, W, 3) uint8 RGB pixels, top row first) to
    ``path`` in the format its suffix names (``.png``), whole or not at all, creating its
    folder. Returns the path.

    Raises:
        ValueError: a suffix Pillow does not know. OSError: the folder or the file cannot be
        written. Nothing is left behind either way.
    """
    Image = require("PIL.Image", "writing images")

    path = Path(path)
    if not isinstance(image, Image.Image):
        image = Image.fromarray(np.ascontiguousarray(image, np.uint8), "RGB")
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = _temporary(path)
    try:
        image.save(temporary)  # the temporary name keeps the suffix, which names the format
        os.replace(temporary, path)
    except BaseException:
        _remove(temporary)
        raise
    return path


class FrameWriter:
    """Frames of one size to an MP4, a GIF or a folder of PNGs, chosen by ``path`` (see the
    module docstring); the file appears when :meth:`close` succeeds.

    Args:
        path: ``*.mp4``, ``*.gif``, or a folder. size: (width, height) pixels of every frame.
        fps: frames per second (> 0). palette_from: a GIF's palette source (a PIL image
            spanning the motion); :meth:`close` may give it instead.

    Attributes:
        path: the final file or folder. kind: ``"mp4"``, ``"gif"`` or ``"png"``.
        count: frames added so far.

    Raises:
        ValueError: another suffix, a size under 1×1 or an fps that is not > 0.
        OSError: the folder cannot be made.
    """

    def __init__(self, path, size, fps: float, palette_from=None):
        self.path = Path(path)
        self.kind = output_kind(self.path)
        width, height = (int(v) for v in size)
        fps = float(fps)
        if width < 1 or height < 1:
            raise ValueError(f"{self.path}: frame size {tuple(size)}: expected at least 1x1 pixels")
        if not (np.isfinite(fps) and fps > 0):
            raise ValueError(f"{self.path}: fps = {fps!r}: expected a frame rate > 0")
        self.size, self.fps = (width, height), fps
        self.count = 0
        self.palette_from = palette_from
        self._gif = []
        self._encoder = None
        self._open = True
        if self.path.exists() and not (self.path.is_dir() if self.kind == "png" else self.path.is_file()):
            raise ValueError(f"{self.path}: exists and is not a {'folder' if self.kind == 'png' else 'file'}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale(self.path)
        self._temporary = _temporary(self.path)
        if self.kind == "png":
            self._temporary.mkdir()
        elif self.kind == "mp4":
            require("imageio_ffmpeg", "writing an MP4")

    def _start_encoder(self) -> None:
        """Start ffmpeg on the temporary file (on the first frame: no frame, no file)."""
        imageio_ffmpeg = require("imageio_ffmpeg", "writing an MP4")

        width, height = self.size
        encoded = tuple(-(-side // MP4_BLOCK) * MP4_BLOCK for side in self.size)
        self._padding = (encoded[1] - height, encoded[0] - width)
        self._encoder = imageio_ffmpeg.write_frames(
            str(self._temporary), encoded, fps=self.fps, codec=MP4_CODEC, quality=MP4_QUALITY,
            pix_fmt_out=MP4_PIXEL_FORMAT, macro_block_size=MP4_BLOCK, ffmpeg_log_level="error")
        self._encoder.send(None)  # start ffmpeg

    def __enter__(self) -> "FrameWriter":
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:
            self.close()
        else:
            self.abort()

    def add(self, pixels: np.ndarray) -> None:
        """One frame: (height, width, 3) uint8 RGB pixels, top row first.

        Raises:
            ValueError: pixels of another shape. RuntimeError: the writer is closed.
        """
        Image = require("PIL.Image", "writing images")

        if not self._open:
            raise RuntimeError(f"{self.path}: the writer is closed")
        pixels = np.ascontiguousarray(pixels, np.uint8)
        width, height = self.size
        if pixels.shape != (height, width, 3):
            raise ValueError(f"{self.path}: frame of shape {pixels.shape}: expected ({height}, {width}, 3)")
        if self.kind == "mp4":
            if self._encoder is None:
                self._start_encoder()
            rows, columns = self._padding
            if rows or columns:
                pixels = np.pad(pixels, ((0, rows), (0, columns), (0, 0)))
            self._encoder.send(pixels)
        elif self.kind == "gif":
            self._gif.append(Image.fromarray(pixels, "RGB"))
        else:
            Image.fromarray(pixels, "RGB").save(self._temporary / PNG_FRAME_NAME.format(self.count))
        self.count += 1

    def close(self, palette_from=None) -> None:
        """Finish the output and move it into place. A GIF's one palette comes from
        ``palette_from`` (a PIL image spanning the motion, e.g. a contact strip), else the
        constructor's, else the first frame. Without frames no file is written. Closing
        twice does nothing.

        Raises:
            OSError: the encoder failed (the temporary file is removed).
        """
        if not self._open:
            return
        try:
            if self.kind == "mp4" and self._encoder is not None:
                encoder, self._encoder = self._encoder, None
                encoder.close()  # waits for ffmpeg
                if not (self._temporary.is_file() and self._temporary.stat().st_size > 0):
                    raise OSError(f"{self.path}: ffmpeg wrote no video")
                os.replace(self._temporary, self.path)
            elif self.kind == "gif" and self._gif:
                self._save_gif(palette_from if palette_from is not None else self.palette_from)
                os.replace(self._temporary, self.path)
            elif self.kind == "png" and self.count:
                self._move_frames()
        except BaseException:
            self.abort()
            raise
        self._finish()

    def _move_frames(self) -> None:
        """The temporary folder's frames into ``path``: a new folder is the temporary one
        renamed; an existing one loses its older ``frame_*.png`` and gets the new ones."""
        if not self.path.exists():
            os.replace(self._temporary, self.path)
            return
        for old in self.path.glob(PNG_FRAME_GLOB):
            old.unlink()
        for k in range(self.count):
            name = PNG_FRAME_NAME.format(k)
            os.replace(self._temporary / name, self.path / name)

    def abort(self) -> None:
        """Stop without writing: the temporary file or folder of frames is removed, and the
        previous output stays as it was. Does nothing once closed."""
        if not self._open:
            return
        encoder, self._encoder = self._encoder, None
        try:
            if encoder is not None:
                encoder.close()
        finally:
            self._finish()

    def _finish(self) -> None:
        if self._temporary is not None and self._temporary.is_dir():
            shutil.rmtree(self._temporary, ignore_errors=True)
        else:
            _remove(self._temporary)  # gone already after a successful rename
        self._temporary = None
        self._gif = []
        self._open = False

    def _save_gif(self, palette_from) -> None:
        Image = require("PIL.Image", "writing images")

        source = palette_from if palette_from is not None else self._gif[0]
        palette = source.convert("RGB").quantize(colors=GIF_COLOURS, method=Image.Quantize.MEDIANCUT,
                                                 dither=Image.Dither.NONE)
        frames = [f.quantize(palette=palette, dither=Image.Dither.NONE) for f in self._gif]
        frames[0].save(self._temporary, format="GIF", save_all=True, append_images=frames[1:],
                       duration=round(MS_PER_SECOND / self.fps), loop=0, optimize=False)

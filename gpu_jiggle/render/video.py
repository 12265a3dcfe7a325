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
folder (made on the first frame) and is renamed into place by :meth:`FrameWriter.close`
only when ffmpeg exited with status 0 (a full disk is an OSError with ffmpeg's message, the
old video kept) and the file is flushed to disk; PNG frames go to a hidden temporary folder
beside the target, which :meth:`FrameWriter.close` exchanges with the old folder in one
step (Linux ``renameat2``), the old folder's other files carried over as hard links. A
folder holding a folder (``frame_0005.png`` being one, say) is refused up front.
:meth:`FrameWriter.abort` (or an error inside a ``with`` block, Ctrl-C, or SIGTERM through
the command line) removes the temporary file or folder instead, leaving the previous output
as it was. A temporary left by a process that was killed outright (SIGKILL) is removed by
the next writer of the same output (:func:`gpu_jiggle.whole_files.remove_stale`: this host,
a process that no longer runs). A single image is written the same way (:func:`write_image`).
The ffmpeg process is :mod:`.mp4_encoder`'s, the PNG folder's exchange :mod:`.frame_folder`'s.

```python
from gpu_jiggle.render.video import FrameWriter
with FrameWriter("out/clip.mp4", (320, 240), fps=30) as writer:
    for pixels in frames:              # (240, 320, 3) uint8 RGB, top row first
        writer.add(pixels)
```
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np

from ..extras import require
from ..whole_files import remove_stale, temporary_name
from .frame_folder import PNG_FRAME_NAME, check_frame_folder, replace_frames, restore_aside
from .mp4_encoder import Mp4Encoder

__all__ = ["FrameWriter", "output_kind", "write_image", "VIDEO_SUFFIXES"]

VIDEO_SUFFIXES = (".mp4", ".gif")   # files; anything without a suffix is a folder of PNGs
MP4_BLOCK = 2                       # sides must be multiples of this (4:2:0)
GIF_COLOURS = 255                   # the one palette's size
CENTISECONDS_PER_SECOND = 100        # GIF's unit of display time
MS_PER_CENTISECOND = 10


def output_kind(path) -> str:
    """``"mp4"``, ``"gif"`` or ``"png"`` (a folder: no suffix, an existing folder, or a path
    given with a trailing ``/``, such as ``frames.v1/``) for ``path`` (str or path-like).
    ValueError for another suffix (the message starts with the path and says how to name a
    folder with a suffix)."""
    text = os.fspath(path)
    as_folder = isinstance(text, str) and text.endswith(("/", os.sep))
    path = Path(text)
    suffix = path.suffix.lower()
    if suffix in VIDEO_SUFFIXES and not as_folder:
        return suffix[1:]
    if as_folder or path.is_dir() or not suffix:
        return "png"
    raise ValueError(f"{path}: expected a .mp4 or .gif file, or a folder for PNG frames "
                     f"(a new folder whose name has a suffix is given with a trailing '/': {path}/)")


def _temporary(path: Path) -> Path:
    """A hidden name beside ``path``, unique to this writer (host, pid), with the same suffix
    (so that Pillow recognises the kind): :func:`gpu_jiggle.whole_files.temporary_name`."""
    return temporary_name(path, path.suffix)


def _remove(path: Path | None) -> None:
    if path is not None:
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def write_image(path, image, credit: str | None = None) -> Path:
    """Write ``image`` (a PIL image, or (H, W, 3) uint8 RGB pixels, top row first) to
    ``path`` in the format its suffix names (``.png``), whole or not at all, creating its
    folder; ``credit``: the authors and licence of what it shows, kept as a PNG's
    ``Copyright`` text (:func:`png_credit`). Returns the path.

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
        image.save(temporary, **png_credit(credit, path))  # the temporary name keeps the suffix, which names the format
        os.replace(temporary, path)
    except BaseException:
        _remove(temporary)
        raise
    return path


def png_credit(credit: str | None, path) -> dict:
    """Pillow's save arguments that keep ``credit`` in a PNG at ``path`` (a ``Copyright`` text
    chunk, PNG 1.2 section 4.2.3); none for another format or no credit."""
    if not credit or Path(path).suffix.lower() != ".png":
        return {}
    PngImagePlugin = require("PIL.PngImagePlugin", "writing images")
    info = PngImagePlugin.PngInfo()
    info.add_itxt("Copyright", credit)
    return {"pnginfo": info}


class FrameWriter:
    """Frames of one size to an MP4, a GIF or a folder of PNGs, chosen by ``path`` (see the
    module docstring); the file appears when :meth:`close` succeeds.

    Args:
        path: ``*.mp4``, ``*.gif``, or a folder. size: (width, height) pixels of every frame.
        fps: frames per second (> 0). palette_from: a GIF's palette source (a PIL image
            spanning the motion); :meth:`close` may give it instead. credit: the authors and
            licence of what the frames show (a character's, :mod:`gpu_jiggle.character.gltf.credit`),
            kept in the output: an MP4's ``copyright`` metadata, a GIF's comment, each PNG
            frame's ``Copyright`` text.

    Attributes:
        path: the final file or folder. kind: ``"mp4"``, ``"gif"`` or ``"png"``.
        count: frames added so far. credit: as given; it may be set until the first frame
        is added.

    Raises:
        ValueError: another suffix, a size under 1×1 or an fps that is not > 0.
        OSError: the folder cannot be made.
    """

    def __init__(self, path, size, fps: float, palette_from=None, credit: str | None = None):
        self.kind = output_kind(path)  # before Path() drops a trailing '/'
        self.credit = credit or None
        self.path = Path(path)
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
        self._folder = Path(os.path.realpath(self.path))  # a link to a folder: its folder gets the frames
        if self.kind == "png":
            restore_aside(self._folder)
            if self._folder.is_dir():
                check_frame_folder(self._folder)
        remove_stale(self._folder if self.kind == "png" else self.path)
        if self.kind == "png":
            self._temporary = temporary_name(self._folder)
            self._temporary.mkdir()
        else:
            self._temporary = _temporary(self.path)
        if self.kind == "mp4":
            require("imageio_ffmpeg", "writing an MP4")

    def _start_encoder(self) -> None:
        """Start ffmpeg on the temporary file (on the first frame: no frame, no file)."""
        width, height = self.size
        encoded = tuple(-(-side // MP4_BLOCK) * MP4_BLOCK for side in self.size)
        self._padding = (encoded[1] - height, encoded[0] - width)
        self._encoder = Mp4Encoder(self._temporary, encoded, self.fps, self.path, self.credit)

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
            frame = self._temporary / PNG_FRAME_NAME.format(self.count)
            Image.fromarray(pixels, "RGB").save(frame, **png_credit(self.credit, frame))
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
                encoder.close()  # waits for ffmpeg; OSError unless it exited with 0
                if not (self._temporary.is_file() and self._temporary.stat().st_size > 0):
                    raise OSError(f"{self.path}: ffmpeg wrote no video")
                _flush(self._temporary)
                os.replace(self._temporary, self.path)
            elif self.kind == "gif" and self._gif:
                self._save_gif(palette_from if palette_from is not None else self.palette_from)
                os.replace(self._temporary, self.path)
            elif self.kind == "png" and self.count:
                replace_frames(self._temporary, self._folder)
        except BaseException:
            self.abort()
            raise
        self._finish()

    def abort(self) -> None:
        """Stop without writing: the temporary file or folder of frames is removed, and the
        previous output stays as it was. Does nothing once closed."""
        if not self._open:
            return
        encoder, self._encoder = self._encoder, None
        try:
            if encoder is not None:
                encoder.kill()
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
                       duration=gif_durations(len(frames), self.fps), loop=0, optimize=False,
                       **({"comment": self.credit.encode("utf-8")} if self.credit else {}))


def gif_durations(count: int, fps: float) -> list:
    """The display times (list of ``count`` ints, ms, multiples of 10) of GIF frames at ``fps``
    (frames per second, > 0). GIF stores whole hundredths of a second, so frame k shows from
    round(100·k/fps) to round(100·(k+1)/fps) hundredths and the clip lasts count/fps to within
    5 ms. (One rounded time for every frame, 67 ms at 15 fps, is stored as 60 ms: 2 s of frames
    played in 1.8 s.)"""
    ticks = [round(CENTISECONDS_PER_SECOND * k / fps) for k in range(count + 1)]
    return [int(MS_PER_CENTISECOND * (b - a)) for a, b in zip(ticks, ticks[1:])]


def _flush(path: Path) -> None:
    """The file's bytes on disk before it is renamed into place (a full disk or an I/O error
    shows here, as OSError, rather than after the rename)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

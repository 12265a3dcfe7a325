"""The demos without a window: frames rendered offscreen (EGL) through the same
:class:`~gpu_jiggle.app.viewer.session.Session` as the window, at a fixed ``1/args.fps`` s
per frame, then written out.

- :func:`run_headless` (demos 03 and 04): every ``--png-every``-th frame and the last as
  PNGs, with the text panel over them, and optionally every frame as ``--video``;
- :func:`run_strip` (demos 01 and 02): a contact strip of chosen frames and a GIF.

Videos and GIFs go through :class:`gpu_jiggle.render.video.FrameWriter`; every file is
written whole or not at all.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from ...render.video import FrameWriter, write_image
from .args import DEFAULT_FRAMES
from .panel import TextPanel
from .session import MS_PER_SECOND, Session, choose_samples, demo_credit

__all__ = ["run_headless", "run_strip", "spread_frames", "caption", "STRIP_GAP", "STRIP_GIF_FPS"]

STRIP_GAP = 4                     # px of white between the frames of a contact strip
STRIP_GIF_FPS = 30.0              # about this many frames per second in a strip run's GIF
CAPTION_FONT_SIZE = 16            # px
CAPTION_HEIGHT = 24               # px of the white band behind a caption
CAPTION_CHARACTER_WIDTH = 9       # px per character: the band's width
CAPTION_BAND_PADDING = 8          # px the band reaches past the characters' width
CAPTION_INSET = (5, 3)            # px from the band's top-left corner to the text, (x, y)
CAPTION_BAND = (255, 255, 255)    # RGB
CAPTION_TEXT = (30, 30, 30)       # RGB


def _run_offscreen(make_demo, args, size, frames: int, wanted, keep, panel: bool):
    """The frame loop of the headless runs: ``frames`` frames of ``1/args.fps`` s offscreen
    (EGL) at ``size`` through the same :class:`Session` as the window. After each frame
    whose index ``wanted(i)`` accepts (and the last), ``keep(i, pixels, session)`` gets its
    (H, W, 3) uint8 RGB pixels. Returns ``(session, lines, seconds)`` with the timing and
    status lines, or None (said on stderr) without an OpenGL 4.3 context."""
    from ...gl.context import get_context
    from ...gl.offscreen import OffscreenTarget

    try:
        ctx = get_context()
    except RuntimeError as exc:
        print(f"no OpenGL 4.3 context for the demo: {exc}", file=sys.stderr)
        return None
    session = Session(ctx, make_demo, args)
    session.limiter.cap = None  # headless frames come as fast as they are made
    target = OffscreenTarget(ctx, size, samples=choose_samples(ctx, args.samples))
    text = TextPanel(ctx) if panel else None
    dt = 1.0 / args.fps
    started = time.perf_counter()
    try:
        for i in range(frames):
            tick = time.perf_counter()
            session.frame(target.framebuffer, dt)
            if text is not None:
                text.draw(target.framebuffer, session.panel_lines(with_parameters=False))
            if i == frames - 1 or wanted(i):
                keep(i, target.pixels(), session)
            else:
                ctx.finish()  # frames not read back still count in full
            session.stats.add("frame", MS_PER_SECOND * (time.perf_counter() - tick))
        lines = session.timing_lines(fresh=True) + list(session.demo.status())
    finally:
        if text is not None:
            text.release()
        target.release()
        session.release()
    return session, lines, time.perf_counter() - started


def _summary(session, frames: int, lines, seconds: float) -> None:
    print(f"{session.demo.name}: {frames} frames headless in {seconds:.1f} s; " + "; ".join(lines))


def run_headless(make_demo, args, default_frames: int = DEFAULT_FRAMES) -> int:
    """Render ``args.frames`` frames (``default_frames`` when None) of ``1/args.fps`` s
    offscreen (EGL) at ``args.size`` (width, height) px through the same :class:`Session` as
    the window; write PNGs into ``args.out`` (every ``args.png_every``-th frame and the last)
    and, with ``args.video`` (``.mp4`` or ``.gif``), every frame as a video. Prints what it
    wrote and the timings. Returns 0, or 1 without an OpenGL 4.3 context (no video is left
    then)."""
    frames = args.frames if args.frames is not None else default_frames
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    video = FrameWriter(args.video, args.size, args.fps) if args.video else None
    written = []

    def png_frame(i):
        return bool(args.png_every) and i % args.png_every == 0

    def keep(i, pixels, session):
        credit = demo_credit(session.demo)
        if i == frames - 1 or png_frame(i):
            written.append(write_image(out / f"{session.demo.name}_{i:04d}.png", pixels, credit=credit))
        if video is not None:
            if not video.count:  # the demo is made after the writer: its credit before the first frame
                video.credit = credit
            video.add(pixels)

    try:
        ran = _run_offscreen(make_demo, args, args.size, frames, lambda i: video is not None or png_frame(i), keep,
                             panel=not args.no_panel)
        if ran is not None and video is not None:
            video.close()
    finally:
        if video is not None:
            video.abort()  # nothing once closed; else no half-written video stays
    if ran is None:
        return 1
    session, lines, seconds = ran
    name = session.demo.name
    _summary(session, frames, lines, seconds)
    print(f"{name}: {len(written)} PNGs in {out} (last: {written[-1]})")
    if video is not None:
        print(f"{name}: video: {args.video}")
    return 0


def run_strip(make_demo, args, default_frames: int, frame_size, strip_frames) -> int:
    """Headless for a demo shown as a sequence (demos 01 and 02): ``args.frames`` frames of
    ``1/args.fps`` s offscreen through the same :class:`Session` as the window (no panel),
    written into ``args.out`` as ``NAME_strip.png``, a contact strip of the frames
    ``strip_frames(frames, fps)`` (a list of indices) side by side, :data:`STRIP_GAP` px
    apart, each captioned with ``demo.caption()`` when the demo has one, and ``NAME.gif``,
    every frame at about :data:`STRIP_GIF_FPS` per second with one palette taken from the
    strip. ``args.screenshot``, when given, receives the last frame. Prints what it wrote
    and the timings. Returns 0, or 1 without an OpenGL 4.3 context.

    Args:
        frame_size: (width, height) px of each frame. default_frames: frames when
            ``args.frames`` is None.
    """
    from PIL import Image

    frames = args.frames if args.frames is not None else default_frames
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    gif_every = max(1, round(args.fps / STRIP_GIF_FPS))
    strip_at = set(strip_frames(frames, args.fps))
    strip, animation, last = [], [], []

    def keep(i, pixels, session):
        if i % gif_every == 0:
            animation.append(pixels)
        if i in strip_at:
            image = Image.fromarray(pixels, "RGB")
            text = session.demo.caption() if hasattr(session.demo, "caption") else None
            strip.append(caption(image, text) if text else image)
        if i == frames - 1:
            last.append(Image.fromarray(pixels, "RGB"))

    ran = _run_offscreen(make_demo, args, frame_size, frames, lambda i: i % gif_every == 0 or i in strip_at, keep,
                         panel=False)
    if ran is None:
        return 1
    session, lines, seconds = ran
    name = session.demo.name
    width, height = frame_size
    sheet = Image.new("RGB", (len(strip) * (width + STRIP_GAP) - STRIP_GAP, height), "white")
    for k, image in enumerate(strip):
        sheet.paste(image, (k * (width + STRIP_GAP), 0))
    credit = demo_credit(session.demo)
    strip_path = write_image(out / f"{name}_strip.png", sheet, credit=credit)
    with FrameWriter(out / f"{name}.gif", frame_size, args.fps / gif_every, palette_from=sheet,
                     credit=credit) as gif:
        for pixels in animation:  # one palette spanning the motion: no flicker between frames
            gif.add(pixels)
    _summary(session, frames, lines, seconds)
    print(f"{name}: contact strip ({len(strip)} frames): {strip_path}")
    print(f"{name}: animation ({len(animation)} frames): {gif.path}")
    if args.screenshot:
        write_image(args.screenshot, last[0], credit=credit)
        print(f"{name}: last frame: {args.screenshot}")
    return 0


def spread_frames(frames: int, count: int) -> list:
    """``count`` frame indices spread evenly from the first frame to the last (fewer when
    there are fewer frames): a contact strip's default."""
    return sorted(set(np.linspace(0, frames - 1, min(count, frames)).round().astype(int).tolist()))


def caption(image, text: str):
    """Write ``text`` on a white band in the top-left corner of a PIL image (in place);
    returns the image."""
    from PIL import ImageDraw, ImageFont

    try:
        font = ImageFont.load_default(size=CAPTION_FONT_SIZE)
    except TypeError:  # Pillow without FreeType sizes
        font = ImageFont.load_default()
    draw = ImageDraw.Draw(image)
    width = CAPTION_BAND_PADDING + CAPTION_CHARACTER_WIDTH * len(text)
    draw.rectangle((0, 0, width, CAPTION_HEIGHT), fill=CAPTION_BAND)
    draw.text(CAPTION_INSET, text, fill=CAPTION_TEXT, font=font)
    return image

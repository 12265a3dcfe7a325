"""The command line the demo scripts share: the options of :func:`add_arguments` (window or
headless, frames, size, outputs, frame-rate cap), their parsers (each raising ValueError with
the message the command line reports) and :func:`check_arguments`.
"""
from __future__ import annotations

import math
from pathlib import Path

from ...render.video import VIDEO_SUFFIXES
from .imgui_dock import DOCK_SIDES
from .session import FPS_CAPS

DOCK_HELP = "window: start with the panel docked to this side (it docks by dragging its title to an edge too)"

__all__ = ["parse_size", "parse_fps_cap", "parse_frame_list", "argument_type", "add_arguments", "demo_parser",
           "parse_demo_args", "check_arguments", "MIN_SIZE", "DEFAULT_FRAMES"]

MIN_SIZE = 16                  # px: the smallest image width or height accepted
DEFAULT_SIZE = (960, 540)      # px: a demo's image and window (width, height)
DEFAULT_FRAMES = 120           # frames of a headless run without --frames
SCREENSHOT_AFTER_FRAMES = 60   # a window's --screenshot without --frames is taken after this many
DEFAULT_FPS = 60.0             # headless: frames per simulated second
DEFAULT_FPS_CAP = 60           # window: the frame-rate cap to start with
DEFAULT_PNG_EVERY = 10         # headless: every Nth frame is written as a PNG
UNCAPPED_WORDS = ("none", "uncapped", "0")


def parse_size(text: str):
    """``"960x540"`` → (960, 540): (width, height) in pixels. ValueError for text of another
    form or a side under :data:`MIN_SIZE` pixels."""
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"size {text!r}: expected WIDTHxHEIGHT in pixels, e.g. 960x540") from None
    if width < MIN_SIZE or height < MIN_SIZE:
        raise ValueError(f"size {text!r}: expected at least {MIN_SIZE}x{MIN_SIZE} pixels")
    return width, height


def parse_fps_cap(text: str):
    """``"60"`` → 60 frames per second; ``"uncapped"`` (or ``"none"``, ``"0"``) → None: one
    of :data:`~gpu_jiggle.app.viewer.session.FPS_CAPS`. ValueError for anything else."""
    if text.lower() in UNCAPPED_WORDS:
        return None
    caps = [str(cap) for cap in FPS_CAPS if cap is not None]
    if text not in caps:
        raise ValueError(f"{text!r}: expected {', '.join(caps)} or uncapped")
    return int(text)


def parse_frame_list(text: str) -> list:
    """``"6,11"`` → [6, 11] (frame numbers; empty text → []). ValueError for a part that is
    not a whole number."""
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"{text!r}: expected comma-separated frame numbers") from None


def argument_type(parse):
    """An ``argparse`` type from a parser that raises ValueError: its message is what the
    command line reports (instead of "invalid value")."""
    import argparse

    def convert(text):
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = parse.__name__
    return convert


def add_arguments(parser, default_frames=DEFAULT_FRAMES, size=DEFAULT_SIZE, strip: bool = False,
                  backend: bool = False) -> None:
    """The options the demos share: window or headless, frames, size, outputs, cap.

    Args:
        default_frames: the headless frame count, or words for it, for the help.
        size: the default image and window size (width, height) px.
        strip: the demo's headless run writes a contact strip and a GIF at its own frame size
            (:func:`~gpu_jiggle.app.viewer.headless.run_strip`): ``--size`` is the window's,
            and there is no ``--png-every`` or ``--video``.
        backend: offer ``--backend auto|gpu|cpu`` for the spring solver (demos that read
            the springs back; those drawing straight from the solver's buffers need the GPU).
    """
    if backend:
        parser.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto",
                            help="solver backend (default auto: the GPU when OpenGL 4.3 is there)")
    what = "a contact strip and a GIF" if strip else "PNGs"
    parser.add_argument("--headless", action="store_true",
                        help=f"render offscreen (EGL) to {what} in --out instead of opening a window")
    parser.add_argument("--frames", type=int, default=None,
                        help=f"frames to run (headless default {default_frames}; a window runs until closed)")
    parser.add_argument("--fps", type=float, default=DEFAULT_FPS,
                        help=f"headless: frames per simulated second (default {DEFAULT_FPS:g}); a window follows "
                             "real time")
    parser.add_argument("--fps-cap", type=argument_type(parse_fps_cap), default=DEFAULT_FPS_CAP,
                        help=f"window: frame-rate cap 30, 60, 144 or uncapped (default {DEFAULT_FPS_CAP}; F cycles "
                             "them)")
    parser.add_argument("--size", type=argument_type(parse_size), default=tuple(size),
                        help=f"{'window' if strip else 'image or window'} size (default {size[0]}x{size[1]})")
    parser.add_argument("--out", default="out/demo", help=f"headless: folder for {what} (default out/demo)")
    if not strip:
        parser.add_argument("--png-every", type=int, default=DEFAULT_PNG_EVERY,
                            help=f"headless: write every Nth frame as a PNG (default {DEFAULT_PNG_EVERY}; the last "
                                 "frame always)")
        parser.add_argument("--video", default=None,
                            help="headless: also write the frames as a video: .mp4 (H.264) or .gif")
    parser.add_argument("--samples", type=int, default=None,
                        help="multisampling (antialiasing) samples; default 4, or 0 on a software renderer "
                             "(llvmpipe), where it costs several times the drawing")
    parser.add_argument("--no-panel", action="store_true", help="no timing/tuning panel over the image")
    parser.add_argument("--text-panel", action="store_true",
                        help="window: the text panel and keys instead of the Dear ImGui panel")
    parser.add_argument("--dock", choices=DOCK_SIDES, default=None, help=DOCK_HELP)
    parser.add_argument("--debug", action="store_true", help="start with the debug view on (D toggles it)")
    parser.add_argument("--screenshot", default=None,
                        help="window: save the last of --frames frames to this PNG, then close the window")
    parser.add_argument("--screenshot-frames", type=argument_type(parse_frame_list), default=[],
                        help="window: also save these frames (comma-separated numbers, 1 = the first), "
                             "as SCREENSHOT with _NNNN before the suffix")


def demo_parser(doc: str, **options):
    """An ``argparse`` parser for a demo script: the first paragraph of its docstring
    ``doc`` as the description (the rest shown as written) and :func:`add_arguments`
    (``options`` go to it)."""
    import argparse

    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0], allow_abbrev=False,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser, **options)
    return parser


def parse_demo_args(parser, argv, title: str, counts=(), screenshot_after: int = SCREENSHOT_AFTER_FRAMES):
    """Parse and check a demo's command line (:func:`check_arguments`); each option named in
    ``counts`` (e.g. ``"strands"``) must be at least 1. ``title`` is the window's."""
    args = parser.parse_args(argv)
    check_arguments(parser, args, screenshot_after)
    for name in counts:
        value = getattr(args, name.replace("-", "_"))
        if value < 1:
            parser.error(f"--{name} {value}: expected at least 1")
    args.title = title
    return args


def check_arguments(parser, args, screenshot_after: int = SCREENSHOT_AFTER_FRAMES) -> None:
    """Refuse bad values (through ``parser.error``); a screenshot without ``--frames`` is
    taken after ``screenshot_after`` frames (or the last of ``--screenshot-frames``)."""
    if args.frames is not None and args.frames < 1:
        parser.error(f"--frames {args.frames}: expected at least 1")
    if not (args.fps > 0 and math.isfinite(args.fps)):
        parser.error(f"--fps {args.fps}: expected a positive number")
    if getattr(args, "png_every", 0) < 0:
        parser.error(f"--png-every {args.png_every}: expected 0 or more")
    if args.samples is not None and (args.samples < 0 or args.samples & (args.samples - 1)):
        parser.error(f"--samples {args.samples}: expected 0 (no multisampling) or a power of two (2, 4, ...)")
    args.screenshot_frames = sorted(set(args.screenshot_frames))
    if args.screenshot and args.frames is None:
        args.frames = max([screenshot_after] + args.screenshot_frames)
    video = getattr(args, "video", None)
    if video and Path(video).suffix.lower() not in VIDEO_SUFFIXES:
        parser.error(f"--video {video}: expected a .gif or .mp4 file name")

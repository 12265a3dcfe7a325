"""``gpu-jiggle render``: a glTF character with its springs, rendered headless (EGL) to an
MP4, a GIF or a folder of PNGs.

```python
from gpu_jiggle.app.render import render
from gpu_jiggle.data import fox_path, fox_rig_path  # the bundled Fox (data/fox/Fox.gltf in a checkout)
result = render(fox_path(), fox_rig_path(), "Run", "out/fox.mp4", seconds=6, fps=30, compare=True)
print(result.path, result.frames, result.seconds, result.drawn, result.samples)
render("model.glb", None, None, "out/idle.gif", motion="turn")   # no clips: a built-in motion, no springs
```

Each frame steps a :class:`~gpu_jiggle.character.travel.TravellingPipeline` (keyframes, then
look-at, springs and skinning; a locomotion clip is carried forward at the speed its feet
give, see :mod:`gpu_jiggle.character.travel`) and draws it with
:class:`~gpu_jiggle.render.scene.CharacterView`, the camera following the character. With
``compare`` the left half plays the keyframes alone and the right half with springs, each
labelled. Multisampling is the renderer's choice unless asked for: none on a software
renderer (llvmpipe), where it costs more than the rest of the drawing, 4 samples on a GPU
(:func:`~gpu_jiggle.gl.offscreen.choose_samples`). The frames go to
:class:`~gpu_jiggle.render.video.FrameWriter`: the file appears whole when the render has
finished, and not at all when it fails.
"""
from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..extras import require
from ..character.baking.run import MAX_BAKE_FRAMES
from ..character.rig.specs import LookAtSpec, TwoBoneIKSpec
from ..character.baking.run import DEFAULT_PREROLL
from ..character.gltf.credit import credit_of
from ..character.travel import make_pipeline, preroll_frames, run_preroll
from ..gl.offscreen import OffscreenTarget, choose_samples
from ..render.scene import ZOOM_RANGE, CharacterView, Framing
from ..render.video import FrameWriter, output_kind
from .shared import add_clip_options, add_preroll_option, choose_clip, one_line, open_character, parse_travel

__all__ = ["render", "RenderResult", "add_command", "run_command"]

DIVIDER = (30, 34, 38)       # the line between the halves of a compare, RGB
DIVIDER_WIDTH = 2            # px
SIZE = (960, 540)            # px: the default image
COMPARE_SIZE = (1280, 540)   # px: the default image of a compare (two halves)
MIN_SIZE = 16                # px: the smallest width or height
MAX_ELEVATION_DEGREES = 90.0  # the camera's height above the horizon stays strictly within ±90°
COMPARE_LABELS = ("keyframes only", "with springs")  # the left half's is "keyframes + look-at" with a look-at
NO_RIG = "no rig"                  # what a render without springs says of the rig
NO_CHAINS = "the rig has no chains"
LABEL_LINES_PER_IMAGE = 24   # a label's text is 1/24 of the image's height
LABEL_MIN_FONT = 10          # px
LABEL_BAND = (20, 24, 28, 160)    # RGBA: the dark band behind a label
LABEL_TEXT = (245, 245, 240, 255)  # RGBA
PROGRESS_REFRESH_SECONDS = 0.5


def _label(pixels: np.ndarray, text: str) -> np.ndarray:
    """``pixels`` with ``text`` on a dark band in the top-left corner."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.fromarray(pixels, "RGB")
    size = max(LABEL_MIN_FONT, pixels.shape[0] // LABEL_LINES_PER_IMAGE)
    try:
        font = ImageFont.load_default(size=size)
    except TypeError:  # Pillow without FreeType sizes
        font = ImageFont.load_default()
    draw = ImageDraw.Draw(image, "RGBA")
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    pad = size // 2
    draw.rectangle((0, 0, right - left + 2 * pad, bottom - top + 2 * pad), fill=LABEL_BAND)
    draw.text((pad - left, pad - top), text, font=font, fill=LABEL_TEXT)
    return np.asarray(image)


# -- render --------------------------------------------------------------------------------------------
@dataclass
class RenderResult:
    """What :func:`render` did.

    Attributes:
        path: the written file or folder. kind: ``"mp4"``, ``"gif"`` or ``"png"``.
        frames: frames written. size: (width, height) pixels. fps. seconds: wall-clock time
        of the whole render. backend: the spring solver's backend (None: no springs). travel:
        the speed the character moved at (length unit/s). clip: the animation's name.
        compare: side by side. samples: the MSAA samples drawn with (0: none). drawn: what the
        image shows, in words: ``"with springs"``, ``"side by side (keyframes only | with
        springs)"`` (the halves' labels), ``"as keyframed (no rig)"``, ... frame_seconds:
        wall-clock time of the frames alone (stepped, drawn, read back and written), without
        loading, compiling and the pre-roll.
    """

    path: Path
    kind: str
    frames: int
    size: tuple
    fps: float
    seconds: float
    backend: str | None
    travel: float
    clip: str
    compare: bool = False
    samples: int = 0
    drawn: str = ""
    extra: dict = field(default_factory=dict)
    frame_seconds: float = 0.0


def _refuse_inputs_in_output(out, kind: str, inputs) -> None:
    """ValueError when writing ``out`` would replace an input: a video that is one of the
    ``inputs`` files (also through a link), or a PNG folder (written whole, so replaced whole)
    that holds one of them or their folder (a glTF's buffers and images lie beside it)."""
    from ..whole_files import same_file

    for source in inputs:
        if kind != "png":
            if same_file(out, source):
                raise ValueError(f"--out {out}: is the input {source}; render never writes over what it reads")
            continue
        folder = os.path.realpath(out)
        held = os.path.dirname(os.path.realpath(source))
        if held == folder or held.startswith(folder.rstrip(os.sep) + os.sep):
            raise ValueError(f"--out {out}: a PNG folder is written whole, and this one holds the input {source}; "
                             f"render never writes over what it reads; give another folder")


def _check_drawable(rig, compare: bool, look_at: bool) -> None:
    """ValueError for a compare without springs or a look-at without a target: nothing to show."""
    if look_at and not (rig is not None and any(isinstance(c, LookAtSpec) for c in rig.constraints)):
        raise ValueError(f"--look-at: {'there is no rig' if rig is None else 'the rig has no [[look_at]] target'} "
                         f"for the head to turn to")
    if compare and not (rig is not None and rig.chains):
        raise ValueError(f"--compare: there are no springs to compare the keyframes with "
                         f"({NO_RIG if rig is None else NO_CHAINS}); leave out --compare or give a rig with chains")


def _drawn(rig, compare: bool, constraints) -> tuple:
    """``(the halves' labels, or [None], the words for what is drawn)`` for a render of ``rig``
    (None: no rig) whose pipelines apply ``constraints`` (look-at, two-bone IK)."""
    stages = [name for name, kind in (("look-at", LookAtSpec), ("IK", TwoBoneIKSpec))
              if any(isinstance(c, kind) for c in constraints)]
    keyed = " + ".join(["keyframes", *stages])
    if compare:
        # each half names what it shows: the constraints run in both, the springs on the right
        labels = (keyed if stages else COMPARE_LABELS[0],
                  " + ".join([*stages, "springs"]) if stages else COMPARE_LABELS[1])
        return labels, f"side by side ({labels[0]} | {labels[1]})"
    if rig is None or not rig.chains:
        return [None], f"as {keyed.replace('keyframes', 'keyframed', 1)} ({NO_RIG if rig is None else NO_CHAINS})"
    return [None], f"with {', '.join(stages)} and springs" if stages else "with springs"


#: The most frames one render draws, as a bake's most (:data:`~gpu_jiggle.character.baking.run.MAX_BAKE_FRAMES`).
MAX_RENDER_FRAMES = MAX_BAKE_FRAMES


def largest_size(ctx) -> int:
    """The largest side (pixels) of an image ``ctx`` can draw into: the least of its texture,
    renderbuffer and viewport limits."""
    info = ctx.info
    viewport = info.get("GL_MAX_VIEWPORT_DIMS") or (1 << 30,)
    return int(min(info.get("GL_MAX_TEXTURE_SIZE") or 1 << 30, info.get("GL_MAX_RENDERBUFFER_SIZE") or 1 << 30,
                   *viewport))


def render(model, rig, animation: str | None, out, seconds: float = 4.0, fps: float = 30.0, compare: bool = False,
           size=None, backend: str = "auto", samples: int | None = None, travel="auto", debug: bool = False,
           progress: bool = True, azimuth_degrees: float | None = None, elevation_degrees: float | None = None,
           zoom: float = 1.0, look_at: bool = False, motion: str | None = None,
           preroll: float = DEFAULT_PREROLL) -> RenderResult:
    """Render ``seconds`` of ``animation`` at ``fps`` headless (EGL) to ``out`` (an ``.mp4``,
    a ``.gif`` or a folder for PNGs, see :class:`~gpu_jiggle.render.video.FrameWriter`),
    springs on (none without a rig: the clip as keyframed); with ``compare`` the left half
    plays the keyframes alone and the right half with springs, side by side, each labelled.

    Args:
        model: a glTF path or a loaded Character. rig: a TOML rig path, a Rig, or None (no springs).
        animation, motion: the clip's name, or ``"none"`` / None and a built-in motion
            (``idle``, ``turn``, ``walk``): see :func:`~gpu_jiggle.app.shared.choose_clip`.
        size: (width, height) pixels (rounded up to even numbers); default 960×540, or
            1280×540 with ``compare``.
        backend: the spring solver's. samples: MSAA samples, 0 for none or a power of two up
            to the context's most, or None: 0 on a software renderer (llvmpipe), 4 on a GPU
            (:func:`~gpu_jiggle.gl.offscreen.choose_samples`; another count: ValueError).
        travel: ``"auto"`` or a speed in length unit/s (see
            :func:`~gpu_jiggle.character.travel.make_pipeline`). debug: draw the debug view.
        progress: show a progress bar on stderr (tqdm).
        azimuth_degrees, elevation_degrees, zoom: change the camera's framing (zoom within
            gpu_jiggle.render.scene.ZOOM_RANGE).
        look_at: the head follows the rig's look-at target (see
            :func:`~gpu_jiggle.character.travel.make_pipeline`).
        preroll: seconds of the clip played before the first frame (s, >= 0; default 4, as
            ``bake``'s), at ``fps`` (:func:`~gpu_jiggle.character.travel.run_preroll`), so that
            the first frame shows the chains settled as the bake's first key does.

    Raises:
        FileNotFoundError: a missing model or rig. ValueError: an invalid file, an unknown
        clip (the message names the closest or lists the clips) or motion, bad numbers
        (samples the renderer cannot take included), an unknown output kind, ``compare``
        without springs to compare, ``look_at`` without a rig's look-at target. TypeError: samples not an
        integer. RuntimeError: no OpenGL context.
    """
    from ..gl.context import get_context

    started = time.perf_counter()
    seconds, fps = float(seconds), float(fps)
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"seconds = {seconds!r}: expected a duration > 0")
    if not (math.isfinite(fps) and fps > 0):
        raise ValueError(f"fps = {fps!r}: expected a frame rate > 0")
    if seconds * fps > MAX_RENDER_FRAMES:
        raise ValueError(f"seconds = {seconds:g} at {fps:g} fps is {math.ceil(seconds * fps)} frames; at most "
                         f"{MAX_RENDER_FRAMES} (gpu_jiggle.app.render.MAX_RENDER_FRAMES, "
                         f"{MAX_RENDER_FRAMES / fps:g} s at {fps:g} fps)")
    preroll = float(preroll)
    preroll_frames(preroll, fps)  # checked before anything is opened or drawn
    try:
        kind = output_kind(out)
    except ValueError as exc:
        raise ValueError(f"--out {exc}") from None
    _refuse_inputs_in_output(out, kind, [p for p in (model, rig) if isinstance(p, (str, os.PathLike))])
    if size is None:
        size = COMPARE_SIZE if compare else SIZE
    width, height = (int(v) + int(v) % 2 for v in size)
    if width < MIN_SIZE or height < MIN_SIZE:
        raise ValueError(f"size = {tuple(size)}: expected at least {MIN_SIZE}x{MIN_SIZE} pixels")
    if not ZOOM_RANGE[0] <= float(zoom) <= ZOOM_RANGE[1]:
        raise ValueError(f"zoom = {float(zoom)!r}: expected a factor from {ZOOM_RANGE[0]:g} to {ZOOM_RANGE[1]:g} "
                         f"(> 1 moves the camera closer; gpu_jiggle.render.scene.ZOOM_RANGE)")
    if azimuth_degrees is not None and not math.isfinite(float(azimuth_degrees)):
        raise ValueError(f"azimuth = {float(azimuth_degrees)!r}: expected a finite number of degrees")
    if elevation_degrees is not None and not -MAX_ELEVATION_DEGREES < float(elevation_degrees) < MAX_ELEVATION_DEGREES:
        raise ValueError(f"elevation = {float(elevation_degrees)!r}: expected degrees above the horizon between "
                         f"-{MAX_ELEVATION_DEGREES:g} and {MAX_ELEVATION_DEGREES:g} (exclusive: the camera looks "
                         f"straight down or up there and has no up direction)")
    character, rig = open_character(model, rig)
    clip = choose_clip(character, animation, motion)
    _check_drawable(rig, compare, look_at)
    ctx = get_context()
    largest = largest_size(ctx)
    if width > largest or height > largest:
        raise ValueError(f"size = {width}x{height}: this OpenGL context draws at most {largest}x{largest} pixels "
                         f"(GL_MAX_TEXTURE_SIZE, GL_MAX_RENDERBUFFER_SIZE, GL_MAX_VIEWPORT_DIMS)")
    samples = choose_samples(ctx, samples)
    framing = Framing.of(character, zoom=float(zoom))
    if azimuth_degrees is not None:
        framing.azimuth = math.radians(float(azimuth_degrees))
    if elevation_degrees is not None:
        framing.elevation = math.radians(float(elevation_degrees))
    runs = [True] if not compare else [False, True]
    pipelines = [make_pipeline(character, rig, clip, springs=s, travel=travel, backend=backend, context=ctx,
                               look_at=look_at) for s in runs]
    labels, drawn = _drawn(rig, compare, pipelines[0].constraints)
    for pipeline in pipelines:
        run_preroll(pipeline, clip.start, fps, preroll)
    view = CharacterView(ctx, character, rig, framing)
    panel = (width // 2 if compare else width, height)
    target = OffscreenTarget(ctx, panel, samples=samples)
    count = max(1, int(round(seconds * fps)))
    bar = _progress(count, progress, Path(out).name)
    left = panel[0] - DIVIDER_WIDTH // 2
    looped = time.perf_counter()
    try:
        with FrameWriter(out, (width, height), fps, credit=credit_of(character.json)) as writer:
            for k in range(count):
                t = clip.start + k / fps
                halves = []
                for pipeline, label in zip(pipelines, labels):
                    frame = pipeline.step(t, 1.0 / fps)
                    view.draw(target.framebuffer, frame, follow=pipeline.root_offset(t), debug=debug)
                    pixels = target.pixels()
                    halves.append(_label(pixels, label) if label else pixels)
                image = np.concatenate(halves, axis=1)
                if compare:
                    image[:, left:left + DIVIDER_WIDTH] = DIVIDER
                writer.add(image)
                bar.update(1)
        backend_used = pipelines[-1].backend
        frame_seconds = time.perf_counter() - looped
    finally:
        bar.close()
        target.release()
        view.release()
        for p in pipelines:
            p.release()
    return RenderResult(Path(out), kind, writer.count, (width, height), fps, time.perf_counter() - started,
                        backend_used, float(np.linalg.norm(pipelines[-1].velocity)), clip.name, compare,
                        target.samples, drawn, frame_seconds=frame_seconds)


def _progress(total: int, enabled: bool, name: str):
    tqdm = require("tqdm", "the progress bar").tqdm

    return tqdm(total=total, unit="frame", desc=f"render {name}", disable=not enabled, file=sys.stderr,
                dynamic_ncols=True, mininterval=PROGRESS_REFRESH_SECONDS)


# -- command line -----------------------------------------------------------------------------------
def add_command(sub) -> None:
    """Register ``render`` on an argparse subparsers object (see :mod:`gpu_jiggle.app.cli`)."""
    from .viewer.args import argument_type, parse_size

    size = argument_type(parse_size)
    p = sub.add_parser("render", help="render a glTF character with its springs to MP4, GIF or PNGs (headless)",
                       description="Play an animation through keyframes -> springs -> skinning and render the "
                                   "skinned, textured mesh with its strands offscreen (EGL) to an MP4, a GIF or a "
                                   "folder of PNGs. --compare puts the keyframes alone (left) beside the springs "
                                   "(right).")
    p.add_argument("model", metavar="MODEL", help="the .gltf, .glb or .vrm file")
    p.add_argument("--rig", default=None, metavar="RIG",
                   help="the TOML rig (e.g. rigs/fox.toml); without one, a VRM's own spring bones, else no springs")
    add_clip_options(p, "render")
    p.add_argument("--seconds", type=float, default=4.0, metavar="S", help="seconds of animation (default 4)")
    p.add_argument("--fps", type=float, default=30.0, metavar="F", help="frames per second (default 30)")
    p.add_argument("--out", required=True, metavar="FILE",
                   help="output: .mp4 (H.264), .gif, or a folder for frame_NNNN.png (no suffix, or ending in /)")
    p.add_argument("--compare", action="store_true",
                   help="side by side: without springs (left), with (right); needs a rig with chains")
    p.add_argument("--size", type=size, default=None, metavar="WxH",
                   help="image size in pixels (default 960x540, 1280x540 with --compare)")
    p.add_argument("--samples", type=int, default=None,
                   help="multisampling (antialiasing) samples, 0 for none; default 0 on a software renderer "
                        "(llvmpipe), where it costs more than the rest of the drawing, else 4")
    p.add_argument("--travel", default="auto", metavar="SPEED",
                   help="'auto' (default): move a locomotion clip forward at the speed its feet give; "
                        "0 keeps it on the spot; or a speed in model units per second")
    p.add_argument("--azimuth", type=float, default=None, metavar="DEG",
                   help="camera direction about the vertical, degrees (default -68: the left side, a little "
                        "from the front)")
    p.add_argument("--elevation", type=float, default=None, metavar="DEG", help="camera height, degrees (default 10)")
    p.add_argument("--zoom", type=float, default=1.0,
                   help=f"> 1 moves the camera closer ({ZOOM_RANGE[0]:g} to {ZOOM_RANGE[1]:g}, default 1)")
    p.add_argument("--debug", action="store_true", help="draw chain targets, simulated joints and colliders")
    p.add_argument("--look-at", action="store_true",
                   help="the head turns to the rig's look-at target (an IK stage between keyframes and springs)")
    add_preroll_option(p)
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto",
                   help="spring solver: gpu (GLSL compute), cpu (numpy reference) or auto (default)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=run_command)


def run_command(args) -> int:
    """``gpu-jiggle render``: 0 on success, 2 with a one-line message for bad input."""
    try:
        if args.samples is not None and args.samples < 0:
            raise ValueError(f"--samples {args.samples}: expected 0 or more")
        travel = parse_travel(args.travel)
        result = render(args.model, args.rig, args.animation, args.out, seconds=args.seconds, fps=args.fps,
                        compare=args.compare, size=args.size, backend=args.backend, samples=args.samples,
                        travel=travel, debug=args.debug, progress=not args.no_progress,
                        azimuth_degrees=args.azimuth, elevation_degrees=args.elevation, zoom=args.zoom,
                        look_at=args.look_at, motion=args.motion, preroll=args.preroll)
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"gpu-jiggle render: {one_line(exc)}", file=sys.stderr)
        return 2
    moving = f", travelling {result.travel:.0f} units/s" if result.travel > 0 else ", on the spot"
    msaa = f"{result.samples}x MSAA" if result.samples else "no MSAA"
    backend = f" on the {result.backend} backend" if result.backend else ""
    print(f"rendered {result.clip!r} {result.drawn}: {result.frames} frames ({result.frames / result.fps:g} s at "
          f"{result.fps:g} fps, {result.size[0]}x{result.size[1]}, {msaa}{moving}){backend} in "
          f"{result.seconds:.1f} s ({1e3 * result.frame_seconds / result.frames:.0f} ms a frame, the other "
          f"{result.seconds - result.frame_seconds:.1f} s loading, compiling and pre-rolling) -> {result.path}")
    return 0


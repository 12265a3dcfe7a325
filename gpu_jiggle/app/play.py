"""``gpu-jiggle play``: a glTF character and its springs in a glfw window.

The window, the frame loop, the tuning panel (Dear ImGui when imgui-bundle works here, else
a text panel and keys), the frame-rate cap, pause and single step come from
:mod:`gpu_jiggle.app.viewer`; the scene is drawn by :class:`gpu_jiggle.render.scene.CharacterView`.
This module adds the character: :class:`CharacterPlayer`, the demo object the viewer runs.

```python
from gpu_jiggle.app.play import play
from gpu_jiggle.data import fox_path, fox_rig_path   # the bundled Fox (data/fox/Fox.gltf in a checkout)
play(fox_path(), fox_rig_path(), animation="Run")   # returns the exit status
```

The clip list offers the file's clips and then the built-in motions (idle, turn, walk, shake; see
:mod:`gpu_jiggle.character.motion`), which a file without clips starts with.

Every value of the rig can be tuned live, without resetting the motion
(:mod:`gpu_jiggle.app.tuning`): per chain group its frequency, damping ratio, air drag, gravity,
particle radius, max distance, world influence and cone limit; the wind; the colliders (click
one in the debug view to pick it). **Save** (W) writes the values changed into the rig's TOML
file, comments and order kept; **Revert** (R) reads the file again; a file changed on disk by
another editor is followed live; **Undo** (U) takes the last edits back.

Controls: drag with the left mouse button to orbit, scroll to zoom. Keys: Esc quits;
P or Space pauses; N steps one frame; T teleports the character (the springs are carried
across with their shape); D toggles the debug view (animated targets in magenta, simulated
chains in yellow, colliders, the picked one in orange); F cycles the frame-rate cap (30, 60,
144, uncapped); S turns the springs off and on; M stops or restarts the travel; W, R, U save,
revert, undo; Up/Down pick a value, Left/Right move it.
"""
from __future__ import annotations

import math
import sys
import time
from types import SimpleNamespace

import numpy as np

from ..character.baking.run import DEFAULT_PREROLL
from ..character.gltf.credit import credit_of
from ..character.motion import MOTIONS, Motion, builtin_motion
from ..character.travel import make_pipeline, preroll_frames, run_preroll
from ..render.scene import ZOOM_RANGE, CharacterView
from .shared import add_clip_options, add_preroll_option, choose_clip, one_line, open_character, parse_travel
from .tuning import RigTuning
from .viewer.imgui_dock import DOCK_SIDES, check_dock_side
from .viewer.session import FPS_CAPS, Parameter

__all__ = ["CharacterPlayer", "play", "add_command", "run_command"]

WRAP_SIZES = 200.0  # the travel jumps back (a teleport, unseen) after this many body sizes
NOTICE_SECONDS = 4.0               # how long a notice (a reload, a pick) stays in the status lines
TELEPORT_SIZES = (1.5, 0.0, 2.0)   # T jumps this far (world x, y, z), in body sizes
ORBIT_RADIANS_PER_PIXEL = 0.008    # mouse drag → camera turn
ELEVATION_RANGE_DEGREES = (-5.0, 80.0)
ZOOM_PER_STEP = 1.1                # one scroll step
PREROLL_FPS = 60.0                 # the preroll's frames per second where the frame rate is uncapped


class CharacterPlayer:
    """The demo object for :mod:`gpu_jiggle.app.viewer`: one character, its rig and a clip.

    Args:
        ctx: the window's moderngl context (solvers and drawing share it).
        character, rig: loaded (see :func:`gpu_jiggle.app.shared.open_character`).
        clip, motion: the starting clip's name, or ``"none"`` / None and a built-in motion
            (:func:`gpu_jiggle.app.shared.choose_clip`; default: the first clip, else idle).
        backend: the spring solver's. travel: as :func:`gpu_jiggle.character.travel.make_pipeline`.
        preroll: seconds of each clip played before its first frame (default 4, as ``bake``'s),
            in frames of 1/``preroll_fps`` s (:func:`~gpu_jiggle.character.travel.run_preroll`),
            so that a clip starts with its chains settled as the bake's first key shows them.

    Attributes: clips: the file's clips, then the built-in motions (:data:`MOTIONS`).
    """

    name = "play"
    area = (0.0, 0.0, 1.0, 1.0)  # the part of the window the viewer's panel leaves free (set before each draw)

    def __init__(self, ctx, character, rig, clip: str | None = None, backend: str = "auto", travel="auto",
                 motion: str | None = None, preroll: float = DEFAULT_PREROLL, preroll_fps: float = PREROLL_FPS):
        self.ctx = ctx
        self.preroll, self.preroll_fps = preroll, preroll_fps
        self.character = character
        self.credit = credit_of(character.json)  # kept in the screenshots and videos of it
        self._rig = rig  # as loaded; each pipeline plays its own copy (Pipeline.rig)
        self.backend = backend
        self.travel = travel
        self.title = f"gpu-jiggle play: {character.path.name}"
        self.view = CharacterView(ctx, character, rig)
        self.clips = list(character.clips) + [builtin_motion(character, kind) for kind in MOTIONS]
        start = choose_clip(character, clip, motion)
        if isinstance(start, Motion):
            self.clip_index = len(character.clips) + MOTIONS.index(start.kind)
        elif start in character.clips:
            self.clip_index = character.clips.index(start)
        else:  # a VRM animation: offered after the file's clips and the motions
            self.clips.append(start)
            self.clip_index = len(self.clips) - 1
        names = [c.name for c in self.clips]
        self.springs = rig is not None and bool(rig.chains)
        self.moving = True
        self.time = 0.0
        self.frame = None
        self.pipeline = None
        self.camera, self.aspect = None, 1.0   # the last frame's, for picking by clicks
        self._notice, self._notice_until = "", -1.0
        self.parameters = []
        if len(names) > 1:
            self.parameters.append(Parameter("clip", "clip", self.clip_index, 0, len(names) - 1, kind="choice",
                                             choices=tuple(names), rebuild=True))
        if self.springs:
            self.parameters.append(Parameter("springs", "springs", True, kind="toggle", letter="S"))
        self.parameters.append(Parameter("travel", "travel forward", True, kind="toggle", letter="M"))
        # every value of the rig, live, with save / revert / undo (see gpu_jiggle.app.tuning)
        self.tuning = RigTuning(rig, character.skeleton, lambda: self.pipeline, self.view.framing.size) \
            if self.springs else None
        self.actions = list(self.tuning.actions) if self.tuning else []
        if self.tuning:
            self.parameters.extend(self.tuning.parameters)
        self._start_clip()

    # -- the clip and its pipeline -------------------------------------------------------------
    @property
    def rig(self):
        """The rig being played, with the values tuned live: the pipeline's own copy (the next
        clip's pipeline starts from it), or the rig as loaded before the first pipeline."""
        return self.pipeline.rig if self.pipeline is not None else self._rig

    @property
    def clip(self):
        return self.clips[self.clip_index]

    def _start_clip(self) -> None:
        if self.pipeline is not None:
            self.pipeline.release()
        self.pipeline = make_pipeline(self.character, self.rig, self.clip, springs=self.springs, travel=self.travel,
                                      backend=self.backend, context=self.ctx)
        self.speed = self.pipeline.velocity.copy()
        if not self.moving:
            self.pipeline.velocity = np.zeros(3)
        self.time = self.clip.start
        run_preroll(self.pipeline, self.time, self.preroll_fps, self.preroll)
        self.frame = None

    def follow(self) -> np.ndarray:
        return self.pipeline.root_offset(self.time)

    # -- Demo protocol -------------------------------------------------------------------------
    def step(self, dt: float) -> None:
        if self.tuning is not None:
            try:
                said = self.tuning.poll()
            except ValueError as exc:
                said = str(exc)
            if said:
                self.notice(said)
        self.time += dt
        self.frame = self.pipeline.step(self.time, dt)
        far = WRAP_SIZES * self.view.framing.size
        offset = self.follow()
        if np.abs(offset[[0, 2]]).max() > far:  # keep the numbers small: jump back by whole ground tiles
            tile = 2 * self.view.tile
            self.pipeline.teleport(-np.round(offset / tile) * tile * np.array([1.0, 0.0, 1.0]))

    def draw(self, framebuffer, debug: bool) -> None:
        if self.frame is None:
            self.frame = self.pipeline.step(self.time, 0.0)
        self.view.selected_collider = self.tuning.selected_collider if self.tuning else None
        self.camera = self.view.draw(framebuffer, self.frame, follow=self.follow(), debug=debug, area=self.area)
        _, _, width, height = framebuffer.viewport
        self.aspect = width / height

    def subject_box(self):
        """The character's joints' bounds on the last drawn frame (x0, y0, x1, y1), fractions
        from the top-left; None before a frame is drawn."""
        if self.camera is None or self.frame is None:
            return None
        at = self.camera.project(self.frame.world_matrices[:, :3, 3], self.aspect)
        return (*at.min(axis=0), *at.max(axis=0)) if len(at) else None

    def solvers(self) -> list:
        """The spring solver, whose dispatch the viewer times on its own."""
        return self.pipeline.solvers() if self.pipeline is not None else []

    def set_parameter(self, key: str, value) -> None:
        if key == "clip":
            self.clip_index = int(value)
            self._start_clip()
        elif key == "springs":
            self.springs = bool(value)
            self.pipeline.reset()
            self.pipeline.springs = self.springs
        elif key == "travel":
            self.moving = bool(value)
            p = self.pipeline
            p.offset, p.start = p.root_offset(self.time), self.time  # no jump: travel on from here
            p.velocity = self.speed.copy() if self.moving else np.zeros(3)
        elif self.tuning is not None and self.tuning.handles(key):
            self.tuning.set(key, value)
        else:
            raise ValueError(f"unknown parameter {key!r}")

    def act(self, key: str):
        """Save, revert or undo (:class:`~gpu_jiggle.app.tuning.RigTuning`); returns what was
        done. ValueError/OSError when it cannot be (the panel shows why)."""
        if self.tuning is None:
            raise ValueError(f"{key}: no rig is being tuned")
        if key not in ("save", "revert", "undo"):
            raise ValueError(f"unknown action {key!r}")
        return getattr(self.tuning, key)()

    def click(self, x: float, y: float) -> None:
        """A click picks the collider under it (its sliders then edit it)."""
        if self.tuning is not None and self.frame is not None:
            name = self.tuning.pick(x, y, self.camera, self.aspect, self.frame.colliders)
            if name:
                self.notice(f"collider {name!r} picked")

    def notice(self, text: str) -> None:
        """Show ``text`` in the status lines for a few seconds."""
        self._notice, self._notice_until = text, time.perf_counter() + NOTICE_SECONDS

    def teleport(self) -> None:
        size = self.view.framing.size
        self.pipeline.teleport(tuple(k * size for k in TELEPORT_SIZES))

    def status(self) -> list:
        clip = self.clip
        speed = float(np.linalg.norm(self.pipeline.velocity))
        lines = [f"clip {clip.name} ({clip.duration:.2f} s), t = {self.time:.2f} s",
                 f"{self._springs_text()}, "
                 f"travel {speed:.0f} units/s"]
        lines.append("drag: orbit, scroll: zoom, S springs, M travel, T teleport")
        if self.tuning is not None:
            lines.append("W save, R revert, U undo; click a collider (debug view) to pick it")
        if time.perf_counter() < self._notice_until:
            lines.append(self._notice)
        return lines

    def _springs_text(self) -> str:
        if self.rig is None or not self.rig.chains:
            return "no springs (" + ("no rig" if self.rig is None else "the rig has no chains") + ")"
        return f"springs on ({self.pipeline.backend or '-'})" if self.springs else "springs off [S]"

    def orbit(self, dx: float, dy: float) -> None:
        framing = self.view.framing
        low, high = (math.radians(a) for a in ELEVATION_RANGE_DEGREES)
        framing.azimuth -= ORBIT_RADIANS_PER_PIXEL * dx
        framing.elevation = min(max(framing.elevation + ORBIT_RADIANS_PER_PIXEL * dy, low), high)

    def zoom(self, steps: float) -> None:
        framing = self.view.framing
        framing.zoom = min(max(framing.zoom * ZOOM_PER_STEP ** steps, ZOOM_RANGE[0]), ZOOM_RANGE[1])

    def pointer(self, x: float, y: float) -> None:
        pass

    def release(self) -> None:
        if self.pipeline is not None:
            self.pipeline.release()
        self.view.release()


# -- entry points ------------------------------------------------------------------------------------
def play(model, rig, animation: str | None = None, size=(1280, 720), fps_cap=60, backend: str = "auto",
         travel="auto", debug: bool = False, frames: int | None = None, screenshot=None, screenshot_frames=(),
         samples: int | None = None, panel: bool = True, motion: str | None = None, dock: str | None = None,
         preroll: float = DEFAULT_PREROLL) -> int:
    """Open the window and run until it is closed (or for ``frames`` frames, then save
    ``screenshot``); returns 0. ``dock``: "left" or "right" starts with the panel docked there.
    ``preroll``: seconds of the clip played before its first frame, at the frame-rate cap (60
    fps uncapped), as ``bake`` does (s, >= 0; default 4).

    Raises:
        FileNotFoundError, ValueError: a missing or invalid model or rig, an unknown clip
        (the message lists the clips) or motion. RuntimeError: no display or no OpenGL 4.3 window.
    """
    from .viewer.window import open_window, run_window

    if fps_cap not in FPS_CAPS:
        raise ValueError(f"fps_cap = {fps_cap!r}: expected one of 30, 60, 144 or None (uncapped)")
    check_dock_side(dock, "dock")  # before any window opens
    preroll = float(preroll)
    preroll_frames(preroll, fps_cap or PREROLL_FPS)  # at the rate it plays (below), before any window opens
    character, rig = open_character(model, rig)
    choose_clip(character, animation, motion)  # unknown: ValueError listing the clips, before any window opens
    window, reason = open_window(f"gpu-jiggle play: {character.path.name}", size)
    if window is None:
        raise RuntimeError(f"no window: {reason}; 'gpu-jiggle render' works without a display")
    args = SimpleNamespace(fps_cap=fps_cap, samples=samples, no_panel=not panel, frames=frames, screenshot=screenshot,
                           screenshot_frames=sorted(set(screenshot_frames)), debug=debug, size=size, dock=dock)
    if args.screenshot and args.frames is None:
        args.frames = max([60] + args.screenshot_frames)
    return run_window(lambda ctx, _args: CharacterPlayer(ctx, character, rig, animation, backend, travel, motion,
                                                         preroll, fps_cap or PREROLL_FPS), args, window, reason)


def add_command(sub) -> None:
    """Register ``play`` on an argparse subparsers object (see :mod:`gpu_jiggle.app.cli`)."""
    from .viewer.args import DOCK_HELP, argument_type, parse_fps_cap, parse_frame_list, parse_size

    size, cap, frame_list = (argument_type(f) for f in (parse_size, parse_fps_cap, parse_frame_list))
    p = sub.add_parser("play", help="a glTF character and its springs in a window (orbit, clips, live tuning)",
                       description="Open a window playing an animation through keyframes -> springs -> skinning. "
                                   "Drag to orbit, scroll to zoom; P pause, N step, T teleport, D debug view, "
                                   "F frame-rate cap, S springs, M travel; every rig value tunes live (arrows or the "
                                   "panel; click a collider to pick it), W saves it into the rig's TOML, R reverts, "
                                   "U undoes; the rig's file is followed when it changes on disk. Esc quits.")
    p.add_argument("model", metavar="MODEL", help="the .gltf, .glb or .vrm file")
    p.add_argument("--rig", default=None, metavar="RIG",
                   help="the TOML rig (e.g. rigs/fox.toml); without one, a VRM's own spring bones, else no springs")
    add_clip_options(p, "play")
    p.add_argument("--fps-cap", type=cap, default=60, metavar="CAP",
                   help="frame-rate cap: 30, 60, 144 or uncapped (default 60; F cycles them)")
    p.add_argument("--size", type=size, default=(1280, 720), metavar="WxH", help="window size (default 1280x720)")
    p.add_argument("--travel", default="auto", metavar="SPEED",
                   help="'auto' (default): move a locomotion clip forward at the speed its feet give; "
                        "0 keeps it on the spot; or a speed in model units per second")
    p.add_argument("--debug", action="store_true", help="start with the debug view on (D toggles it)")
    p.add_argument("--no-panel", action="store_true", help="no tuning panel over the scene")
    p.add_argument("--dock", choices=DOCK_SIDES, default=None, help=DOCK_HELP)
    p.add_argument("--samples", type=int, default=None,
                   help="multisampling samples (default 4, or 0 on a software renderer)")
    add_preroll_option(p)
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto",
                   help="spring solver: gpu (GLSL compute), cpu (numpy reference) or auto (default)")
    p.add_argument("--frames", type=int, default=None, help="close the window after this many frames")
    p.add_argument("--screenshot", default=None, metavar="PNG",
                   help="save the last of --frames frames (default 60) to this PNG, then close")
    p.add_argument("--screenshot-frames", type=frame_list, default=[], metavar="N,N,...",
                   help="also save these frames (1 = the first) as PNG with _NNNN before the suffix")
    p.set_defaults(run=run_command)


def run_command(args) -> int:
    """``gpu-jiggle play``: the window's exit status, or 2 with a one-line message for bad
    input (a missing file, an unknown clip, no display)."""
    try:
        if args.frames is not None and args.frames < 1:
            raise ValueError(f"--frames {args.frames}: expected at least 1")
        travel = parse_travel(args.travel)
        return play(args.model, args.rig, animation=args.animation, size=args.size, fps_cap=args.fps_cap,
                    backend=args.backend, travel=travel, debug=args.debug, frames=args.frames,
                    screenshot=args.screenshot, screenshot_frames=args.screenshot_frames, samples=args.samples,
                    panel=not args.no_panel, motion=args.motion, dock=args.dock, preroll=args.preroll)
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"gpu-jiggle play: {one_line(exc)}", file=sys.stderr)
        return 2

"""``gpu-jiggle bake``: bake spring motion into a copy of a glTF file as rotation keyframes
(:func:`gpu_jiggle.character.bake.bake`).

Without ``--animation`` it bakes the file's first clip; a file without clips, or
``--animation none``, bakes a built-in motion (``--motion idle|turn|walk``,
:mod:`gpu_jiggle.character.motion`), written into the copy as one more animation.

Exit status: 0 on success, 2 with a one-line message for bad input (a missing file, an
unknown clip, a rig without joint chains, a bad fps, preroll or output name).
"""
from __future__ import annotations

import sys

from ..character.bake import DEFAULT_FPS, DEFAULT_PREROLL, MIN_SOURCE_FPS, bake
from ..character.motion import with_motion
from .shared import add_clip_options, choose_clip, open_character


def add_command(sub) -> None:
    """Register ``bake`` on an argparse subparsers object (see :mod:`gpu_jiggle.app.cli`)."""
    p = sub.add_parser("bake", help="bake spring motion into a copy of a glTF file as rotation keyframes",
                       description="Play an animation through keyframes -> springs with a TOML rig (or a VRM's own "
                                   "spring bones) and write a copy of the glTF file whose animation carries the chain "
                                   "joints' rotations after springs as keyframes; everything else is copied unchanged "
                                   "(a .vrm keeps its spring bones: a VRM viewer would run them again over the baked "
                                   "motion).")
    p.add_argument("model", metavar="MODEL", help="the .gltf, .glb or .vrm file")
    p.add_argument("--rig", default=None, metavar="RIG",
                   help="the TOML rig (e.g. rigs/fox.toml); without one, the model's VRM spring bones")
    add_clip_options(p, "bake")
    p.add_argument("--fps", type=float, default=None, metavar="F",
                   help=f"resample at F keys per second or more, the last key at the clip's end (default: the "
                        f"clip's own key times when they are evenly spaced at {MIN_SOURCE_FPS:g} or more per "
                        f"second, else {DEFAULT_FPS:g})")
    p.add_argument("--out", required=True, metavar="OUT", help="the copy to write (.glb, .gltf or .vrm)")
    p.add_argument("--preroll", type=float, default=DEFAULT_PREROLL, metavar="SECONDS",
                   help=f"seconds of the looping clip simulated before recording (default {DEFAULT_PREROLL:g})")
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto",
                   help="spring solver: gpu (GLSL compute), cpu (numpy reference) or auto (default)")
    p.set_defaults(run=run_command)


def run_command(args) -> int:
    """``gpu-jiggle bake``: 0 on success, 2 with a one-line message for bad input."""
    try:
        character, rig = open_character(args.model, args.rig)
        if rig is None:
            raise ValueError(f"{args.model}: no --rig given and the model has no VRM spring bones")
        clip = choose_clip(character, args.animation, args.motion)
        if clip not in character.clips:  # a motion or a .vrma: written into the copy as one more animation
            character = with_motion(character, clip)
        result = bake(character, rig, clip.name, args.fps, args.out, preroll=args.preroll, backend=args.backend)
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"gpu-jiggle bake: {exc}", file=sys.stderr)
        return 2
    joints = ", ".join(character.skeleton.names[n] for n in result.rotations)
    schedule = result.schedule
    keys = "the clip's own key times" if schedule.source else f"{schedule.rate:.4g} per second"
    print(f"baked {result.clip!r}: {len(result.times)} keys ({keys}, {float(result.times[0]):g} to "
          f"{float(result.times[-1]):g} s) for {len(result.rotations)} joints ({joints}) on the {result.backend} "
          f"backend in {result.seconds:.2f} s -> {result.path}")
    return 0

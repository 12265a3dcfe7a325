"""``gpu-jiggle bake``: bake spring motion into a copy of a glTF file as rotation keyframes
(:func:`gpu_jiggle.character.baking.run.bake`).

Without ``--animation`` it bakes the file's first clip; a file without clips, or
``--animation none``, bakes a built-in motion (``--motion idle|turn|walk``,
:mod:`gpu_jiggle.character.motion`), written into the copy as one more animation.
``--look-at`` bakes the rig's look-ats as ``render --look-at`` shows them; ``--strands
joints`` bakes the rig's procedural strands as skinned joints (:mod:`gpu_jiggle.character.baking.strands`).
What the copy does not carry (strands without ``--strands joints``, constraints that are off)
is printed after the summary, one ``not baked:`` line each.

Exit status: 0 on success, 2 with a one-line message for bad input (a missing file, an
unknown clip, a rig with nothing to bake, ``--look-at`` or ``--strands joints`` for a rig
without look-ats or strands, a bad fps, preroll or output name, an output that is one of the
inputs or links to one, a model that is itself a bake without ``--force``). A baked copy
carries a mark (``asset.extras.gpu_jiggle_baked`` and ``asset.generator``).
"""
from __future__ import annotations

import sys

from ..character.baking.run import DEFAULT_FPS, DEFAULT_PREROLL, MIN_SOURCE_FPS, bake, refuse_inputs
from ..character.baking.strands import STRAND_MODES
from ..character.motion import with_motion
from .shared import add_clip_options, choose_clip, open_character


def add_command(sub) -> None:
    """Register ``bake`` on an argparse subparsers object (see :mod:`gpu_jiggle.app.cli`)."""
    p = sub.add_parser("bake", help="bake spring motion into a copy of a glTF file as rotation keyframes",
                       description="Play an animation through keyframes -> constraints -> springs with a TOML rig "
                                   "(or a VRM's own spring bones) and write a copy of the glTF file whose animation "
                                   "carries the chain joints' rotations after springs, and those of the joints the "
                                   "rig's enabled constraints turn, as keyframes; everything else is copied unchanged "
                                   "(a .vrm keeps its spring bones: a VRM viewer would run them again over the baked "
                                   "motion). What is not baked (procedural strands without --strands joints, "
                                   "constraints that are off) is listed after the summary.")
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
    p.add_argument("--look-at", action="store_true",
                   help="the head turns to the rig's look-at target as with render --look-at (the target standing "
                        "still: the copy does not travel), and its joint's rotations are baked")
    p.add_argument("--strands", choices=STRAND_MODES, default="none",
                   help="none (default): the rig's procedural strands are left out (listed as not baked); joints: "
                        "each strand becomes a chain of new joints under the joint it hangs from, with a skin, a "
                        "ribbon mesh and rotation keys from the simulated strand")
    p.add_argument("--force", action="store_true",
                   help="bake a file that gpu-jiggle bake wrote (its asset.extras mark): its springs are already "
                        "in its keyframes, so they are simulated again on top (refused without --force)")
    p.set_defaults(run=run_command)


def run_command(args) -> int:
    """``gpu-jiggle bake``: 0 on success, 2 with a one-line message for bad input."""
    try:
        animation = [args.animation] if args.animation and args.animation.lower().endswith(".vrma") else []
        refuse_inputs(args.out, [p for p in (args.model, args.rig, *animation) if p])  # before anything is read
        character, rig = open_character(args.model, args.rig)
        if rig is None:
            raise ValueError(f"{args.model}: no --rig given and the model has no VRM spring bones")
        clip = choose_clip(character, args.animation, args.motion)
        if clip not in character.clips:  # a motion or a .vrma: written into the copy as one more animation
            character = with_motion(character, clip)
        result = bake(character, rig, clip.name, args.fps, args.out, preroll=args.preroll, backend=args.backend,
                      look_at=args.look_at, strands=args.strands, force=args.force,
                      inputs=[p for p in (args.rig, *animation) if p])
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"gpu-jiggle bake: {exc}", file=sys.stderr)
        return 2
    joints = ", ".join(character.skeleton.names[n] for n in result.rotations)
    schedule = result.schedule
    keys = "the clip's own key times" if schedule.source else f"{schedule.rate:.4g} per second"
    strands = result.strands
    extra = (f" and {strands.joint_count} strand joints ({', '.join(strands.groups)})" if strands is not None
             else "")
    print(f"baked {result.clip!r}: {len(result.times)} keys ({keys}, {float(result.times[0]):g} to "
          f"{float(result.times[-1]):g} s) for {len(result.rotations)} joints ({joints}){extra} on the "
          f"{result.backend} backend in {result.seconds:.2f} s -> {result.path}")
    for line in result.not_baked:
        print(f"not baked: {line}")
    return 0

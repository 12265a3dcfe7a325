"""``gpu-jiggle bake``: bake spring motion into a copy of a glTF file as rotation keyframes
(:func:`gpu_jiggle.character.bake.bake`).

Exit status: 0 on success, 2 with a one-line message for bad input (a missing file, an
unknown clip, a rig without joint chains, a bad fps, preroll or output name).
"""
from __future__ import annotations

import sys

from ..character.bake import DEFAULT_PREROLL, bake
from ..character.gltf import Character
from ..character.rig import load_rig


def add_command(sub) -> None:
    """Register ``bake`` on an argparse subparsers object (see :mod:`gpu_jiggle.app.cli`)."""
    p = sub.add_parser("bake", help="bake spring motion into a copy of a glTF file as rotation keyframes",
                       description="Play an animation through keyframes -> springs with a TOML rig and write a "
                                   "copy of the glTF file whose animation carries the chain joints' rotations "
                                   "after springs as keyframes; everything else is copied unchanged.")
    p.add_argument("model", metavar="MODEL", help="the .gltf or .glb file")
    p.add_argument("--rig", required=True, metavar="RIG", help="the TOML rig (e.g. rigs/fox.toml)")
    p.add_argument("--animation", required=True, metavar="NAME", help="the animation (clip) to bake")
    p.add_argument("--fps", type=float, default=30.0, metavar="F", help="keyframes per second (default 30)")
    p.add_argument("--out", required=True, metavar="OUT", help="the copy to write (.glb or .gltf)")
    p.add_argument("--preroll", type=float, default=DEFAULT_PREROLL, metavar="SECONDS",
                   help=f"seconds of the looping clip simulated before recording (default {DEFAULT_PREROLL:g})")
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto",
                   help="spring solver: gpu (GLSL compute), cpu (numpy reference) or auto (default)")
    p.set_defaults(run=run_command)


def run_command(args) -> int:
    """``gpu-jiggle bake``: 0 on success, 2 with a one-line message for bad input."""
    try:
        character = Character.load(args.model)
        rig = load_rig(args.rig, character.skeleton)
        result = bake(character, rig, args.animation, args.fps, args.out, preroll=args.preroll, backend=args.backend)
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"gpu-jiggle bake: {exc}", file=sys.stderr)
        return 2
    joints = ", ".join(character.skeleton.names[n] for n in result.rotations)
    print(f"baked {result.clip!r}: {len(result.times)} keys at {args.fps:g} fps for {len(result.rotations)} joints "
          f"({joints}) on the {result.backend} backend in {result.seconds:.2f} s -> {result.path}")
    return 0

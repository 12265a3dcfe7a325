"""``gpu-jiggle rig MODEL --out RIG.toml``: a VRM avatar's spring bones, imported
(:mod:`gpu_jiggle.character.rig.from_vrm`), written as a TOML rig to edit and use with ``--rig``.
The text is read back as a rig before it is written, and written whole or not at all.
Exit status 0, or 2 with one line for a model without VRM spring bones or bad ones.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..extras import require
from ..character.rig.from_vrm import RATE_RANGE
from .shared import one_line


def rig_toml(data: dict, header: str) -> str:
    """The rig tables ``data`` (:func:`~gpu_jiggle.character.rig.from_vrm.rig_dict_from_vrm`) as
    TOML text (tomlkit), ``header`` as its first comment lines. Numbers are written in full
    (Python's shortest exact form), so the file reads back as the same rig."""
    tomlkit = require("tomlkit", "writing a TOML rig")
    doc = tomlkit.document()
    for line in header.splitlines():
        doc.add(tomlkit.comment(line))
    doc.add(tomlkit.nl())
    doc["solver"] = data["solver"]
    for key in ("chain", "collider"):
        tables = tomlkit.aot()
        for entry in data.get(key, []):
            table = tomlkit.table()
            for name, value in entry.items():
                table[name] = value
            tables.append(table)
        if tables:
            doc[key] = tables
    return tomlkit.dumps(doc)


def run_command(args) -> int:
    from ..character.baking.run import write_whole
    from ..character.gltf.loader import Character
    from ..character.rig.reader import rig_from_dict
    from ..character.rig.toml import tomllib
    from ..character.gltf.vrm import read_springs
    from ..character.rig.from_vrm import rig_dict_from_vrm

    out = Path(args.out)
    try:
        if out.suffix.lower() != ".toml":
            raise ValueError(f"--out {args.out}: expected a .toml file")
        character = Character.load(args.model)
        springs = read_springs(character)
        data = rig_dict_from_vrm(character, args.rate, springs)
        # checked as the model's rig first, so that a bad value names the model, not the output
        rig_from_dict(data, character.skeleton, f"{args.model} (VRM {springs.version})")
        header = (f"The spring bones of {Path(args.model).name} (VRM {springs.version}), imported by gpu-jiggle rig:\n"
                  f"VRM's per-frame update matched at {args.rate:g} frames per second (docs/VRM.md).")
        text = rig_toml(data, header)
        rig_from_dict(tomllib.loads(text), character.skeleton, str(out))  # reads back as a rig, before writing
        out.parent.mkdir(parents=True, exist_ok=True)
        write_whole(out, text.encode("utf-8"))
    except (FileNotFoundError, ValueError) as exc:
        print(f"gpu-jiggle rig: {one_line(exc)}", file=sys.stderr)
        return 2
    chains, colliders = len(data["chain"]), len(data["collider"])
    print(f"{chains} chain{'s' if chains != 1 else ''}, {colliders} collider{'s' if colliders != 1 else ''} "
          f"from VRM {springs.version} -> {out}")
    return 0


def add_command(sub) -> None:
    """Register ``rig`` on an argparse subparsers object (see :mod:`gpu_jiggle.app.cli`)."""
    p = sub.add_parser("rig", help="write a VRM avatar's spring bones as a TOML rig",
                       description="Import the spring bones of a VRM file (VRM 0.x secondaryAnimation or VRM 1.0 "
                                   "VRMC_springBone, with extended colliders and limits) and write them as a TOML "
                                   "rig, to edit and give to render, play and bake with --rig.")
    p.add_argument("model", metavar="MODEL", help="the .vrm file (or a glTF with VRMC_springBone)")
    p.add_argument("--out", required=True, metavar="RIG", help="the .toml file to write")
    p.add_argument("--rate", type=_rate, default=60.0, metavar="HZ",
                   help="the frame rate at which VRM's per-frame update is matched (default 60)")
    p.set_defaults(run=run_command)


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a frame rate in Hz") from None
    low, high = RATE_RANGE
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a frame rate in [{low:g}, {high:g}] Hz")
    return value

"""What the ``render``, ``play`` and ``bake`` commands share: opening a character and its rig
from the paths on the command line, the clip to play (``--animation`` / ``--motion``), the
``--travel`` value, and one-line error messages.
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["open_character", "choose_clip", "add_clip_options", "parse_travel", "one_line", "NO_ANIMATION"]

NO_ANIMATION = "none"  # --animation none: play a built-in motion instead of the file's clips


def open_character(model, rig=None):
    """``(character, rig)`` from paths (or already loaded objects); ``rig`` may be None.

    Args:
        model: a ``.gltf``/``.glb`` path or a loaded :class:`~gpu_jiggle.character.gltf.loader.Character`.
        rig: a TOML rig path, a loaded :class:`~gpu_jiggle.character.rig.model.Rig`, or None: the
            model's own VRM spring bones when it has them
            (:func:`~gpu_jiggle.character.rig.from_vrm.rig_from_vrm`), else no rig.

    Raises:
        FileNotFoundError: a missing model or rig file. ValueError: an invalid glTF file or rig
        (VrmError for bad VRM spring bones).
    """
    from ..character.gltf.loader import Character
    from ..character.rig.model import Rig
    from ..character.rig.reader import load_rig
    from ..character.gltf.vrm import has_springs
    from ..character.rig.from_vrm import rig_from_vrm

    character = model if hasattr(model, "skeleton") else Character.load(model)
    if rig is None and has_springs(character.json):
        rig = rig_from_vrm(character)
    elif rig is not None and not isinstance(rig, Rig):
        if not Path(rig).is_file():
            from ..character.gltf.io import no_such_file
            raise FileNotFoundError(no_such_file(rig, "rig file"))
        rig = load_rig(rig, character.skeleton)
    return character, rig


def choose_clip(character, animation: str | None = None, motion: str | None = None):
    """The clip ``--animation`` and ``--motion`` ask for:

    - ``animation`` a clip's name: that clip (``motion`` must then be None); a ``.vrma``
      file: that VRM animation on the avatar's humanoid bones
      (:func:`~gpu_jiggle.character.gltf.vrma.vrma_clip`);
    - ``animation`` ``"none"``, or ``motion`` given without ``animation``: the built-in
      motion ``motion`` (default ``idle``; :func:`~gpu_jiggle.character.motion.builtin_motion`);
    - neither: the file's first clip, or the ``idle`` motion when the file has none.

    Raises:
        ValueError: an unknown clip (listing the file's), an unknown motion, or a clip name
        and a motion together; a VRM animation that cannot play on the avatar (VrmaError).
        FileNotFoundError: a missing ``.vrma``.
    """
    from ..character.motion import builtin_motion
    from ..character.gltf.vrma import vrma_clip

    if animation is not None and animation != NO_ANIMATION:
        if motion is not None:
            raise ValueError(f"--animation {animation} --motion {motion}: a built-in motion plays instead of a clip; "
                             f"give --animation none (or leave --animation out) with --motion")
        if animation.lower().endswith(".vrma"):
            return vrma_clip(character, animation)
        return character.clip(animation)
    if animation is None and motion is None and character.clips:
        return character.clips[0]
    return builtin_motion(character, motion or "idle")


def add_clip_options(parser, verb: str) -> None:
    """``--animation`` and ``--motion`` on ``parser`` (``verb``: "play", "bake", ...)."""
    from ..character.motion import MOTIONS

    parser.add_argument("--animation", default=None, metavar="NAME",
                        help=f"the animation (clip) to {verb} (default: the file's first), or a .vrma file (a VRM "
                             f"animation on a VRM avatar's humanoid bones); 'none' {verb}s a built-in motion instead "
                             f"(--motion)")
    parser.add_argument("--motion", type=_motion, default=None, metavar="{" + ",".join(MOTIONS) + "}",
                        help=f"the built-in motion to {verb} when the file has no clips or with --animation none: "
                             f"idle sway, head turn, walk cycle or head shake (default idle)")


def add_preroll_option(parser) -> None:
    """``--preroll SECONDS`` on ``parser``, with ``bake``'s default (DEFAULT_PREROLL, 4 s), so
    that a render's or a play's first frame shows the chains as the bake's first key does."""
    from ..character.baking.run import DEFAULT_PREROLL

    parser.add_argument("--preroll", type=float, default=DEFAULT_PREROLL, metavar="SECONDS",
                        help=f"seconds of the looping clip simulated before the first frame, as bake does, so that "
                             f"the chains start settled (default {DEFAULT_PREROLL:g}; 0: they start on their "
                             f"authored pose)")


def _motion(text: str) -> str:
    """``--motion``: one of the built-in motions; an unknown one is refused naming the closest."""
    import argparse

    from ..character.motion import MOTIONS
    from ..sim.validation import closest_name

    if text not in MOTIONS:
        close = closest_name(text, MOTIONS)
        raise argparse.ArgumentTypeError(f"{text!r}: expected one of {', '.join(MOTIONS)}"
                                         f"{f'; did you mean {close!r}?' if close else ''}")
    return text


def parse_travel(text: str):
    """``--travel``: ``"auto"`` stays ``"auto"``, anything else is a speed (float, length
    unit/s; its range is checked by :func:`~gpu_jiggle.character.travel.make_pipeline`).

    Raises:
        ValueError: text that is neither ``auto`` nor a number.
    """
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"--travel {text!r}: expected 'auto' or a number") from None


def one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line (its whitespace runs, newlines included, become
    single spaces)."""
    return " ".join(str(exc).split())

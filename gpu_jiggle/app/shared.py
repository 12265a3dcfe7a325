"""What the ``render`` and ``play`` commands share: opening a character and its rig from
the paths on the command line, the ``--travel`` value, and one-line error messages.
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["open_character", "parse_travel", "one_line"]


def open_character(model, rig=None):
    """``(character, rig)`` from paths (or already loaded objects); ``rig`` may be None.

    Args:
        model: a ``.gltf``/``.glb`` path or a loaded :class:`~gpu_jiggle.character.gltf.Character`.
        rig: a TOML rig path, a loaded :class:`~gpu_jiggle.character.rig.Rig`, or None.

    Raises:
        FileNotFoundError: a missing model or rig file. ValueError: an invalid glTF file or rig.
    """
    from ..character.gltf import Character
    from ..character.rig import Rig, load_rig

    character = model if hasattr(model, "skeleton") else Character.load(model)
    if rig is not None and not isinstance(rig, Rig):
        if not Path(rig).is_file():
            raise FileNotFoundError(f"{rig}: no such rig file")
        rig = load_rig(rig, character.skeleton)
    return character, rig


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

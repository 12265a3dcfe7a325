"""TOML in and out. In: :func:`read_toml`, a TOML file read only when it is small enough
(rigs, and the manifests of ``gpu-jiggle bake-many``), with ``tomllib`` (``tomli`` on Python
3.10). Out: writing a tuned rig back into its TOML text: only the values that changed, each in the form
the file gave it (a number, a list per segment or a curve), with the file's comments, order and
layout kept (``tomlkit``, which round-trips TOML). The text written reads back as the tuned rig.

``saved_rig_text(text, tuned, loaded)`` compares the live rig ``tuned`` with ``loaded`` (the rig
the same ``text`` gives) and changes, in ``text``: the spring values of ``[[chain]]`` and
``[[strands]]`` tables (the live parameters of ``Pipeline.set_parameters``), the ``[wind]`` table
(added when the file had none), and the radius, offset, end and normal of ``[[collider]]`` s.
"""
from __future__ import annotations

import sys

import numpy as np

from ...extras import require
from ...spec import cite
from .curves import curve_values, is_curve
from .limits import LIMIT_KEYS
from .specs import WIND_DEFAULTS

__all__ = ["read_toml", "tomllib", "saved_rig_text", "same_layout", "SIGNIFICANT_DIGITS"]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = require("tomli", "reading a TOML rig on Python 3.10")


def read_toml(path, max_bytes: int, error: type, what: str) -> dict:
    """The tables of the TOML file ``path`` (a regular file), read only when it holds at most
    ``max_bytes`` bytes, so the work is bounded by the bound, not the file.

    Raises: ``error`` (an exception class taking one message) naming ``path`` for a larger
    file (``"...; not read as {what}"``) or one that is not UTF-8 TOML; OSError as ``open``."""
    with open(path, "rb") as f:
        raw = f.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise error(f"{path}: larger than {max_bytes} bytes; not read as {what}")
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise error(f"{path}: not valid TOML: {exc}") from None

#: Digits a tuned number keeps in the file: float32's precision, without binary noise
#: (3.3000000000000003 is written 3.3).
SIGNIFICANT_DIGITS = 7
#: Per-segment values a chain table holds, and the chain set's array (and factor) behind each.
SEGMENT_VALUES = {"frequency": ("frequency", 1.0), "damping_ratio": ("damping_ratio", 1.0),
                  "particle_radius": ("particle_radius", 1.0), "max_distance": ("max_distance", 1.0),
                  "air_drag": ("air_drag", 1.0), "angle_limit_deg": ("angle_limit", 180.0 / np.pi)}
#: Limits a chain table gives as rows ([least, greatest], [pitch, yaw]) in degrees: the chain set's array.
ROW_VALUES = {"hinge_limit_deg": "hinge_limit", "spherical_limit_deg": "spherical_limit"}
CHAIN_VALUES = ("gravity", "world_influence")
COLLIDER_VALUES = ("radius", "offset", "end", "normal")


def _number(x) -> float:
    x = float(x)
    return x if not np.isfinite(x) else float(f"{x:.{SIGNIFICANT_DIGITS}g}")


def _same(a, b) -> bool:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isclose(a, b, rtol=1e-9, atol=0.0))))


def same_layout(a, b) -> bool:
    """Whether rigs ``a`` and ``b`` have the same chains (names, kinds, joints, segments) and
    colliders (names, shapes, joints), so that ``b``'s values can replace ``a``'s live."""
    chains = [(c.name, c.kind, tuple(np.asarray(c.nodes).tolist()), c.segments) for c in a.chains]
    other = [(c.name, c.kind, tuple(np.asarray(c.nodes).tolist()), c.segments) for c in b.chains]
    colliders = [(c.name, c.shape, c.node) for c in a.colliders]
    return (chains == other and colliders == [(c.name, c.shape, c.node) for c in b.colliders]
            and a.substep == b.substep and a.integrator == b.integrator)


def _segment_values(chain, name, factor):
    cs = chain.rig.chain_set
    first = int(cs.first_segment[chain.index])
    return np.asarray(getattr(cs, name)[first:first + chain.segments], np.float64) * factor


def _in_form(given, key, new, old, springy):
    """``new`` (the segments that swing) in the form ``given`` had in the file (None: absent).
    ``springy``: (n,) bool for a joint chain with segments carried rigidly, else None."""
    n = len(new) if springy is None else len(springy)
    if springy is not None and not springy.all():  # the rigid segments keep what the file gave them
        if given is None:
            full = np.zeros(n)
        elif is_curve(given):
            full = curve_values(key, given, n)
        else:
            full = np.broadcast_to(np.asarray(given, np.float64), (n,)).copy()
        full[springy] = new
        old = np.asarray(old, np.float64)
        new = full
    if is_curve(given) and len(old) == len(new) and np.all(old != 0):
        ratio = new / old
        if np.allclose(ratio, ratio[0], rtol=1e-9, atol=0.0):  # a scaled curve is the curve of the scaled ends
            curve = dict(given)
            curve["root"], curve["tip"] = _number(given["root"] * ratio[0]), _number(given["tip"] * ratio[0])
            return curve
    if not isinstance(given, list) and np.all(new == new[0]):
        return _number(new[0])
    return [_number(x) for x in new]


def _rows_in_form(given, key, new, springy):
    """Rows ``new`` ((segments, 2), the segments that swing) as one row when the file gave one
    and they are all equal, else a row per segment (the rigid ones keeping the file's)."""
    if springy is not None and not springy.all():
        row = LIMIT_KEYS[key][0] if given is None else given
        full = np.array(given if isinstance(given, list) and given and isinstance(given[0], list)
                        else [row] * len(springy), np.float64)
        full[springy] = new
        new = full
    if not (isinstance(given, list) and given and isinstance(given[0], list)) and np.all(new == new[0]):
        return [_number(x) for x in new[0]]
    return [[_number(x) for x in row] for row in new]


def _put(tomlkit, table, key, value) -> None:
    """``table[key] = value``, keeping the comment after the old value."""
    old = table.get(key)
    if isinstance(value, dict):  # a curve: inline, on its line, as the file writes them
        item = tomlkit.inline_table()
        item.update(value)
    else:
        item = tomlkit.item(value)
    if old is not None and hasattr(old, "trivia") and old.trivia.comment:
        item.trivia.comment_ws, item.trivia.comment = old.trivia.comment_ws, old.trivia.comment
    if isinstance(value, list) and len(value) > 1 and not isinstance(value[0], list):
        item.multiline(False)
    table[key] = item


def _chain_table_changes(table, chain, loaded_chain) -> dict:
    changes = {}
    for key, (name, factor) in SEGMENT_VALUES.items():
        new, old = _segment_values(chain, name, factor), _segment_values(loaded_chain, name, factor)
        if not _same(new, old):
            springy = chain.springy if chain.kind == "joints" else None
            changes[key] = _in_form(table.get(key), key, new, old, springy)
    for key, name in ROW_VALUES.items():
        new, old = _segment_values(chain, name, 180.0 / np.pi), _segment_values(loaded_chain, name, 180.0 / np.pi)
        if not _same(new, old):
            springy = chain.springy if chain.kind == "joints" else None
            changes[key] = _rows_in_form(table.get(key), key, new, springy)
    for key in CHAIN_VALUES:
        new, old = getattr(chain, key), getattr(loaded_chain, key)
        if not _same(new, old):
            changes[key] = [_number(x) for x in new] if np.ndim(new) else _number(new)
    return changes


def saved_rig_text(text: str, tuned, loaded) -> str:
    """``text`` (a TOML rig) with the values in which ``tuned`` differs from ``loaded`` (the rig
    ``text`` gives) written into it; everything else, comments included, as it was.

    Raises: ValueError when the two rigs do not have the same chains and colliders
    (:func:`same_layout`); ImportError naming the extra when tomlkit is missing."""
    tomlkit = require("tomlkit", "saving a tuned rig")
    if not same_layout(tuned, loaded):
        raise ValueError(f"{loaded.source}: the file's chains or colliders are not those of the rig being tuned; "
                         f"not saved (revert to read it)")
    doc = tomlkit.parse(text)
    # a table's first chain: a [[chain]]'s own, a strand group's first strand (they share values)
    first = {}
    for c in loaded.chains:
        first.setdefault((c.kind, c.group if c.kind == "strand" else c.name), c.index)
    for key, kind in (("chain", "joints"), ("strands", "strand")):
        for i, table in enumerate(doc.get(key, [])):
            index = first.get((kind, str(table.get("name", f"{key}{i}"))))
            if index is None:
                continue
            for k, v in _chain_table_changes(table, tuned.chains[index], loaded.chains[index]).items():
                _put(tomlkit, table, k, v)
    _save_wind(tomlkit, doc, tuned.wind, loaded.wind)
    loaded_colliders = {c.name: c for c in loaded.colliders}
    for i, table in enumerate(doc.get("collider", [])):
        name = table.get("name", f"collider{i}")
        new, old = next((c for c in tuned.colliders if c.name == name), None), loaded_colliders.get(name)
        if new is None or old is None:
            continue
        for key in COLLIDER_VALUES:
            a, b = getattr(new, key), getattr(old, key)
            if a is None or (key == "end" and new.shape != "capsule") or (key == "radius" and new.shape == "plane"):
                continue
            if not _same(a, b):
                _put(tomlkit, table, key, [_number(x) for x in a] if np.ndim(a) else _number(a))
    return tomlkit.dumps(doc)


def _save_wind(tomlkit, doc, new, old) -> None:
    if new is None or (old is not None and all(_same(getattr(new, k), getattr(old, k)) for k in WIND_DEFAULTS)):
        return
    if old is None and new.strength == 0 and new.gust_amplitude == 0:
        return  # a file without wind, and still none blowing: nothing to add
    if "wind" not in doc:
        table = tomlkit.table()
        table.add(tomlkit.comment(f"the wind every chain feels ({cite(4.1)}), world space; lengths/s², Hz"))
        doc.add("wind", table)
    table = doc["wind"]
    for key in WIND_DEFAULTS:
        a = getattr(new, key)
        if old is None or not _same(a, getattr(old, key)):
            _put(tomlkit, table, key, [_number(x) for x in a] if np.ndim(a) else _number(a))

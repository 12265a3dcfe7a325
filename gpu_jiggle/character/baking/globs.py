"""Globs of ``bake-many`` manifests (:func:`glob_paths`), bounded: ``**`` does not enter linked
folders (two links ``x -> .`` made :func:`glob.glob` run until memory ran out), and a glob
stops with :class:`GlobLimitError` past :data:`MAX_GLOB_MATCHES` matches or
:data:`MAX_GLOB_ENTRIES` folder entries looked at (``/**``, ``/proc/**``), which bounds the
time and memory of planning a manifest.
"""
from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path, PurePosixPath

#: The most paths one glob may match, and the most folder entries it may look at: beyond
#: either the manifest is refused (a glob over ``/**`` or ``/proc/**`` would otherwise run for
#: as long as the file system lasts).
MAX_GLOB_MATCHES = 10_000
MAX_GLOB_ENTRIES = 200_000


class GlobLimitError(ValueError):
    """A glob that matched more than :data:`MAX_GLOB_MATCHES` paths or looked at more than
    :data:`MAX_GLOB_ENTRIES` folder entries."""


def glob_paths(folder: Path, pattern: str, max_matches: int | None = None, max_entries: int | None = None) -> list:
    """The paths (absolute, sorted) that the glob ``pattern`` matches, relative to ``folder``
    unless absolute (``~`` expanded): ``*``, ``?`` and ``[...]`` within one name (not a
    leading ``.`` unless the pattern's name starts with one), ``**`` any run of folders.
    ``**`` does not enter linked folders (a link to a folder above it would loop forever);
    a linked folder named in the pattern is followed. Unreadable folders are skipped.

    Raises:
        GlobLimitError: more than ``max_matches`` (default :data:`MAX_GLOB_MATCHES`) matches,
        or more than ``max_entries`` (default :data:`MAX_GLOB_ENTRIES`) folder entries looked
        at: the time and memory a glob takes are bounded by these.
    """
    max_matches = MAX_GLOB_MATCHES if max_matches is None else max_matches
    max_entries = MAX_GLOB_ENTRIES if max_entries is None else max_entries
    text = os.path.expanduser(pattern)
    parts = PurePosixPath(text).parts
    if PurePosixPath(text).is_absolute():
        base, parts = Path(parts[0]), parts[1:]
    else:
        base = Path(folder)
    magic = re.compile(r"[*?[]")
    found, seen, stack, entries = set(), set(), [(base, 0)], 0

    def listing(path: Path):
        nonlocal entries
        try:
            with os.scandir(path) as it:
                for entry in it:
                    entries += 1
                    if entries > max_entries:
                        raise GlobLimitError(f"the glob {pattern!r} looked at more than {max_entries} folder entries; "
                                             f"give a narrower pattern")
                    yield entry
        except (PermissionError, FileNotFoundError, NotADirectoryError):
            return

    def add(path: Path) -> None:
        found.add(Path(os.path.abspath(path)))
        if len(found) > max_matches:
            raise GlobLimitError(f"the glob {pattern!r} matches more than {max_matches} paths; give a narrower "
                                 f"pattern")

    while stack:
        path, i = stack.pop()
        if (path, i) in seen:
            continue
        seen.add((path, i))
        last = i == len(parts) - 1
        if i == len(parts):
            add(path)
            continue
        name = parts[i]
        if name == "**":
            stack.append((path, i + 1))
            for entry in listing(path):
                if entry.name.startswith("."):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append((Path(entry.path), i))
                elif last:  # a final ** matches files too
                    add(Path(entry.path))
        elif magic.search(name):
            for entry in listing(path):
                if entry.name.startswith(".") and not name.startswith("."):
                    continue
                if fnmatch.fnmatchcase(entry.name, name):
                    if last:
                        add(Path(entry.path))
                    elif entry.is_dir():
                        stack.append((Path(entry.path), i + 1))
        else:
            child = path / name
            if last:
                if os.path.lexists(child):
                    add(child)
            elif child.is_dir():
                stack.append((child, i + 1))
    return sorted(found)

"""The manifest of ``gpu-jiggle bake-many``: which characters to bake, with which rigs and
clips, read from TOML, checked whole, and expanded into one :class:`BakeJob` per output file.

The manifest's format, its keys and defaults, the placeholders of ``output`` and how a run
goes: docs/BATCH.md. Relative paths are relative to the manifest's folder; a clip entry
ending in ``.vrma`` is a VRM animation file; ``output`` takes ``{job}``, ``{character}``,
``{clip}`` and ``{ext}``, each value put in with every character other than letters, digits,
``.``, ``-`` and ``_`` replaced by ``_``, and must end in ``.glb``, ``.gltf`` or ``.vrm`` and
stay inside ``--out``.

:func:`read_manifest` refuses, before anything runs, with a :class:`ManifestError` naming the
manifest, the job and the key: a file that is not TOML, an unknown key (naming the closest
valid one), a value of the wrong type or range, a character, rig or ``.vrma`` that does not
exist, a glob that matches nothing, a file of the wrong kind, two jobs of one name and two
bakes writing one output. What needs a character's contents (a clip name, its springs, a
broken file) is the job's own failure when it runs, reported without stopping the others;
only ``clips = "all"`` reads a file's animation names here, and a file it cannot read becomes
one :class:`BakeJob` with its ``error`` set.
"""
from __future__ import annotations

import math
import os
import re
import string
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ...sim.validation import closest_name, unknown_name
from .run import DEFAULT_PREROLL
from .strands import STRAND_MODES
from .globs import GlobLimitError, glob_paths
from ..gltf.io import Budget, GltfLimits, read_container
from ..rig.toml import read_toml

#: The keys a [[job]] table takes.
JOB_KEYS = ("name", "character", "rig", "clips", "fps", "preroll", "look_at", "strands", "output")
#: The keys [defaults] takes: those of a job that can be shared.
DEFAULT_KEYS = ("rig", "clips", "fps", "preroll", "look_at", "strands", "output")
TOP_KEYS = ("defaults", "job")
DEFAULT_OUTPUT = "{job}/{character}_{clip}{ext}"
#: The placeholders of ``output``.
PLACEHOLDERS = ("job", "character", "clip", "ext")
CHARACTER_SUFFIXES = (".gltf", ".glb", ".vrm")
#: A clip entry ending so is a VRM animation file (:mod:`..gltf.vrma`).
VRMA_SUFFIX = ".vrma"
OUTPUT_SUFFIXES = (".glb", ".gltf", ".vrm")
ALL_CLIPS = "all"
#: The largest manifest file read (bytes).
MAX_MANIFEST_BYTES = 16 << 20


class ManifestError(ValueError):
    """A manifest refused before anything ran; the message names the manifest, the job and
    the key."""


@dataclass(frozen=True)
class BakeJob:
    """One output file of a manifest: one character, rig and clip.

    Attributes:
        job: the [[job]]'s name. index: its position in the manifest (1-based).
        character: Path, absolute. rig: Path, absolute, or None (the character's VRM spring
        bones). clip: the animation's name (``"all"`` for a job whose clips could not be
        listed), or the absolute path of a ``.vrma`` file (a VRM animation, :attr:`vrma`).
        fps: keys per second, or None (the clip's own key times where even). preroll:
        seconds >= 0. look_at: bool. strands: ``"none"`` or ``"joints"``. output: the
        output's path under ``--out``, POSIX, relative. error: why the job cannot run (its
        character's animations could not be read), else None.
    """

    job: str
    index: int
    character: Path
    rig: Path | None
    clip: str
    fps: float | None
    preroll: float
    look_at: bool
    strands: str
    output: str
    error: str | None = None

    @property
    def vrma(self) -> Path | None:
        """The VRM animation file the clip is, or None (a clip of the character's file)."""
        return Path(self.clip) if is_vrma(self.clip) else None

    @property
    def settings(self) -> dict:
        """What besides the files' contents decides the output: the clip (a .vrma by its file
        name), fps, preroll, look_at, strands."""
        clip = self.vrma.name if self.vrma is not None else self.clip
        return {"clip": clip, "fps": self.fps, "preroll": self.preroll, "look_at": self.look_at,
                "strands": self.strands}


def read_manifest(path) -> list:
    """The :class:`BakeJob` s of the manifest at ``path``, in its order: per [[job]], per
    character (globs sorted), per clip.

    Raises:
        ManifestError: see the module docstring (the manifest itself missing included).
    """
    path = Path(path)
    if not path.is_file():
        from ..gltf.io import no_such_file
        raise ManifestError(no_such_file(path, "manifest file"))
    return _Reader(path).read(read_toml(path, MAX_MANIFEST_BYTES, ManifestError, "a manifest"))


class _Reader:
    def __init__(self, path: Path):
        self.path = path
        self.folder = Path(os.path.abspath(path)).parent

    def fail(self, where: str, key: str, message: str) -> ManifestError:
        return ManifestError(f"{self.path}: {where}key {key!r}: {message}")

    def read(self, data: dict) -> list:
        self.keys(data, TOP_KEYS, "")
        defaults = data.get("defaults", {})
        if not isinstance(defaults, dict):
            raise self.fail("", "defaults", "expected a table ([defaults])")
        self.keys(defaults, DEFAULT_KEYS, "[defaults], ", JOB_KEYS)
        tables = data.get("job")
        if not isinstance(tables, list) or not tables or not all(isinstance(t, dict) for t in tables):
            raise self.fail("", "job", "expected one or more [[job]] tables")
        jobs, names, outputs = [], {}, {}
        for number, table in enumerate(tables, 1):
            name = table.get("name", f"job{number}")
            where = f"[[job]] {number} ({name!r}), " if isinstance(name, str) else f"[[job]] {number}, "
            self.keys(table, JOB_KEYS, where)
            if not isinstance(name, str) or not name.strip():
                raise self.fail(where, "name", f"{name!r}: expected a non-empty string")
            if name in names:
                raise self.fail(where, "name", f"{name!r} is also the name of [[job]] {names[name]}")
            names[name] = number
            for job in self.expand(number, name, _Settings(table, defaults, where)):
                if job.error is None:
                    self.unique(where, job, outputs)
                jobs.append(job)
        return jobs

    def keys(self, table: dict, known: tuple, where: str, elsewhere: tuple = ()) -> None:
        for key in table:
            if key not in known:
                if key in elsewhere:
                    raise self.fail(where, key, "not shared through [defaults]; give it in each [[job]]")
                raise self.fail(where, key, unknown_name("key", key, known))

    def expand(self, number: int, name: str, settings: "_Settings"):
        characters = self.characters(*settings.get("character"))
        rig = self.rig(*settings.get("rig"))
        clips = self.clips(*settings.get("clips", ALL_CLIPS))
        where, fps = settings.get("fps")
        if fps is not None:
            fps = self.number(where, "fps", fps, "a finite number > 0", lambda v: v > 0)
        where, preroll = settings.get("preroll", DEFAULT_PREROLL)
        preroll = self.number(where, "preroll", preroll, "a finite number of seconds >= 0", lambda v: v >= 0)
        where, look_at = settings.get("look_at", False)
        if not isinstance(look_at, bool):
            raise self.fail(where, "look_at", f"{look_at!r}: expected true or false")
        where, strands = settings.get("strands", "none")
        if strands not in STRAND_MODES:
            close = closest_name(strands, STRAND_MODES)
            raise self.fail(where, "strands", f"{strands!r}: expected one of {', '.join(map(repr, STRAND_MODES))}"
                                              f"{f'; did you mean {close!r}?' if close else ''}")
        where, pattern = settings.get("output", DEFAULT_OUTPUT)
        pattern = self.pattern(where, pattern)
        for character in characters:
            names, error = (clips, None) if clips != ALL_CLIPS else clip_names(character)
            if error is not None:
                yield BakeJob(name, number, character, rig, ALL_CLIPS, fps, preroll, look_at, strands, "", error)
                continue
            for clip in names:
                label = Path(clip).stem if is_vrma(clip) else clip
                values = {"job": _file_part(name), "character": _file_part(character.stem),
                          "clip": _file_part(label), "ext": ".vrm" if character.suffix.lower() == ".vrm" else ".glb"}
                output = self.output(where, pattern, values)
                yield BakeJob(name, number, character, rig, clip, fps, preroll, look_at, strands, output)

    def characters(self, where: str, value) -> list:
        entries = [value] if isinstance(value, str) else value
        if value is None:
            raise self.fail(where, "character", "missing: give a .gltf, .glb or .vrm file, a glob or a list of them")
        if not isinstance(entries, list) or not entries or not all(isinstance(e, str) and e for e in entries):
            raise self.fail(where, "character", f"{value!r}: expected a path or glob, or a list of them")
        found = []
        for entry in entries:
            for file in self.files(where, "character", entry, CHARACTER_SUFFIXES):
                if file not in found:
                    found.append(file)
        return found

    def files(self, where: str, key: str, entry: str, suffixes: tuple) -> list:
        """The files ``entry`` names: itself, or the files a glob matches (sorted); each must
        end in one of ``suffixes``."""
        is_glob = any(c in entry for c in "*?[")
        if is_glob:
            try:
                files = [f for f in glob_paths(self.folder, entry) if f.is_file()]
            except GlobLimitError as exc:
                raise self.fail(where, key, str(exc)) from None
            if not files:
                raise self.fail(where, key, f"the glob {entry!r} matches no file (in {self.folder})")
        else:
            file = self.absolute(entry)
            if not file.is_file():
                raise self.fail(where, key, f"{entry!r}: no such file ({file})")
            files = [file]
        for file in files:
            if file.suffix.lower() not in suffixes:
                source = f" (matched by {entry!r})" if is_glob else ""
                raise self.fail(where, key, f"{str(file)!r}{source} is not a {', '.join(suffixes)} file")
        return files

    def rig(self, where: str, value):
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            raise self.fail(where, "rig", f"{value!r}: expected the path of a TOML rig")
        file = self.absolute(value)
        if not file.is_file():
            raise self.fail(where, "rig", f"{value!r}: no such file ({file})")
        return file

    def clips(self, where: str, value):
        if value == ALL_CLIPS:
            return ALL_CLIPS
        entries = [value] if isinstance(value, str) else value
        if not isinstance(entries, list) or not entries or not all(isinstance(n, str) and n for n in entries):
            raise self.fail(where, "clips", f"{value!r}: expected {ALL_CLIPS!r} or a list of clip names and "
                                            f".vrma files")
        clips = []
        for entry in entries:
            found = ([str(f) for f in self.files(where, "clips", entry, (VRMA_SUFFIX,))]
                     if entry.lower().endswith(VRMA_SUFFIX) else [entry])
            for clip in found:
                if clip in clips:
                    raise self.fail(where, "clips", f"{clip!r} is listed twice" + (f" (by {entry!r})"
                                                                                   if clip != entry else ""))
                clips.append(clip)
        return clips

    def number(self, where: str, key: str, value, expected: str, ok) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not ok(value):
            raise self.fail(where, key, f"{value!r}: expected {expected}")
        return float(value)

    def pattern(self, where: str, value) -> str:
        key = "output"
        if not isinstance(value, str) or not value:
            raise self.fail(where, key, f"{value!r}: expected a file name pattern such as {DEFAULT_OUTPUT!r}")
        try:
            fields = [f for _, f, spec, conv in string.Formatter().parse(value) if f is not None]
        except ValueError as exc:
            raise self.fail(where, key, f"{value!r}: {exc} (a literal brace is written {{{{ or }}}})") from None
        for field in fields:
            if field not in PLACEHOLDERS:
                raise self.fail(where, key, f"{value!r}: {unknown_name('placeholder', field, PLACEHOLDERS)}")
        return value

    def output(self, where: str, pattern: str, values: dict) -> str:
        text = pattern.format(**values)
        name = PurePosixPath(text)
        if name.is_absolute() or ".." in name.parts or text.startswith("~") or not name.parts:
            raise self.fail(where, "output", f"{text!r} (from {pattern!r}) leaves the --out folder; give a "
                                             f"relative name inside it")
        if name.suffix.lower() not in OUTPUT_SUFFIXES:
            raise self.fail(where, "output", f"{text!r} (from {pattern!r}): expected a name ending in "
                                             f"{', '.join(OUTPUT_SUFFIXES)}")
        return str(name)

    def unique(self, where: str, job: BakeJob, outputs: dict) -> None:
        other = outputs.get(job.output.lower())
        if other is not None:
            also = "this job" if other.index == job.index else f"[[job]] {other.index} ({other.job!r})"
            raise self.fail(where, "output", f"{job.output!r} ({job.character.name}, clip {job.clip!r}) is also the "
                                             f"output of {also} ({other.character.name}, clip {other.clip!r}); "
                                             f"give each bake its own name, e.g. with {{job}}, {{character}} and "
                                             f"{{clip}}")
        outputs[job.output.lower()] = job

    def absolute(self, name: str) -> Path:
        return Path(os.path.abspath(self.folder / os.path.expanduser(name)))


class _Settings:
    """A [[job]]'s values over those of [defaults]: ``get(key)`` is ``(where, value)``, where
    naming the job, and [defaults] when the value comes from there."""

    def __init__(self, table: dict, defaults: dict, where: str):
        self.table, self.defaults, self.where = table, defaults, where

    def get(self, key: str, default=None):
        if key in self.table:
            return self.where, self.table[key]
        if key in self.defaults:
            return f"{self.where}[defaults], ", self.defaults[key]
        return self.where, default


def is_vrma(clip: str) -> bool:
    """Whether a manifest's clip entry names a VRM animation file (it ends in ``.vrma``)."""
    return clip.lower().endswith(VRMA_SUFFIX)


def _file_part(value: str) -> str:
    """``value`` with each run of characters other than letters, digits, ``.``, ``-``, ``_``
    replaced by ``_``, and no leading dot (``"."`` and ``".."`` become ``"_"``)."""
    text = re.sub(r"[^A-Za-z0-9._-]+", "_", value)
    return "_" + text[1:] if text.startswith(".") else text or "_"


def clip_names(character: Path):
    """``(names, None)``: the animation names of a glTF file, as
    :class:`~gpu_jiggle.character.gltf.loader.Character` names them (``animation<i>`` when unnamed),
    read from its JSON alone; or ``(None, why)`` when the file cannot be read or has none."""
    limits = GltfLimits()
    try:
        raw, _ = read_container(character, limits, Budget(limits))
        animations = raw.get("animations") or []
        names = [a.get("name") or f"animation{i}" for i, a in enumerate(animations)]
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        return None, f"the animations to bake (clips = 'all') cannot be listed: {' '.join(str(exc).split())}"
    if not names:
        return None, f"{character.name}: no animations to bake (clips = 'all')"
    if not all(isinstance(n, str) for n in names):
        return None, f"{character.name}: an animation's name is not a string (clips = 'all')"
    return names, None

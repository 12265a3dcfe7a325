"""What a baked file was made from, and whether it still would be: the content hash of a
bake's inputs, kept beside the output, so that ``gpu-jiggle bake-many`` skips a bake whose
output exists with the same inputs and an interrupted run resumes where it stopped.

A bake's digest (:func:`bake_digest`, SHA-256, hex) covers the character's bytes and those of
the files its buffers and images refer to (:func:`character_digest`), the rig's bytes (or
none: the character's VRM spring bones), the clip (a ``.vrma`` clip's bytes too, and those
of the ``.bin`` and images it refers to), fps,
preroll, ``look_at`` and ``strands``, the solver backend asked for, the output's format and
the gpu_jiggle version. The record
(:func:`write_record`) is JSON in ``<output>.bake.json`` (:func:`record_path`), written whole
after the output, with the output's own size and digest, so that a truncated or replaced
output is not taken for the bake's; :func:`forget` removes it before a bake rewrites the output, so an output
never sits beside the record of other inputs.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

from ... import __version__
from .run import write_whole
from .gltf import baked_mark, referenced_files
from ..gltf.io import Budget, GltfLimits, is_data_uri, read_container, resolve_uri

RECORD_SUFFIX = ".bake.json"
RECORD_FORMAT = 2  # 2: the output's own size and digest recorded
_CHUNK_BYTES = 1 << 20


def record_path(output) -> Path:
    """Where the record of ``output`` lives: ``<output>.bake.json`` beside it."""
    output = Path(output)
    return output.with_name(output.name + RECORD_SUFFIX)


def file_digest(path) -> str:
    """SHA-256 (hex) of the file's bytes. Raises OSError when it cannot be read."""
    sha = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK_BYTES), b""):
            sha.update(chunk)
    return sha.hexdigest()


def character_digest(path) -> str:
    """SHA-256 (hex) of a glTF file (a character, or a ``.vrma`` written as glTF JSON) and of
    the files its buffers and images name by a relative URI (each with its URI; one that cannot
    be read counts as such). A file whose JSON cannot be read is hashed alone (its bake will
    fail). Raises OSError when ``path`` cannot be read."""
    return character_inputs(path)[0]


def character_inputs(path):
    """``(digest, files, mark)`` of a glTF file from one read: :func:`character_digest`, the
    files it reads (itself first, then those its URIs name, resolved) and its bake mark
    (:func:`~gpu_jiggle.character.baking.gltf.baked_mark`, None for a source). Raises OSError
    when ``path`` cannot be read."""
    path = Path(path)
    sha = hashlib.sha256(file_digest(path).encode())
    limits = GltfLimits()
    try:
        raw, _ = read_container(path, limits, Budget(limits))
        uris = [item.get("uri") for kind in ("buffers", "images") for item in raw.get(kind) or []
                if isinstance(item, dict)]
    except (ValueError, TypeError, AttributeError):
        raw, uris = {}, []
    for uri in uris:
        if not isinstance(uri, str) or is_data_uri(uri):
            continue
        try:
            part = file_digest(resolve_uri(path, "", uri))
        except (OSError, ValueError):
            part = "unreadable"
        sha.update(f"\0{uri}\0{part}".encode())
    try:
        files = [path, *referenced_files(path, raw)]
        mark = baked_mark(raw)
    except (TypeError, AttributeError):
        files, mark = [path], None
    return sha.hexdigest(), files, mark


class Digests:
    """File digests computed once per path for a run: ``character(path)`` (also a ``.vrma``:
    its external ``.bin`` counts), ``file(path)``; ``files(path)`` and ``mark(path)`` of a
    character from the same read."""

    def __init__(self):
        self._seen = {}

    def character(self, path) -> str:
        return self._memo(("character", str(path)), character_inputs, path)[0]

    def files(self, path) -> list:
        return self._memo(("character", str(path)), character_inputs, path)[1]

    def mark(self, path) -> dict | None:
        return self._memo(("character", str(path)), character_inputs, path)[2]

    def file(self, path) -> str:
        return self._memo(("file", str(path)), file_digest, path)

    def _memo(self, key, fn, path):
        if key not in self._seen:
            self._seen[key] = fn(path)
        return self._seen[key]


def bake_digest(job, backend: str, character: str, rig: str | None, animation: str | None = None) -> str:
    """SHA-256 (hex) of one bake's inputs: ``job`` (a
    :class:`~gpu_jiggle.character.baking.manifest.BakeJob`: its settings and the output's
    suffix), the ``backend`` asked for, and the digests of the ``character``, the ``rig``
    (None: the character's own spring bones) and the ``.vrma`` ``animation`` (None: a clip of
    the character's file)."""
    inputs = {"format": RECORD_FORMAT, "gpu_jiggle": __version__, "character": character, "rig": rig,
              "animation": animation, "backend": backend, "output_format": Path(job.output).suffix.lower(),
              **job.settings}
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def read_record(output) -> dict | None:
    """The record beside ``output`` as a dict, or None when there is none or it is not one."""
    try:
        with open(record_path(output), "rb") as f:
            record = json.loads(f.read(1 << 20))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("format") == RECORD_FORMAT else None


def up_to_date(output, digest: str) -> dict | None:
    """The record of ``output`` when the output exists, was made from inputs of ``digest`` and
    is still the file the bake wrote (its size and SHA-256 as recorded: a truncated or
    replaced output is baked again); else None (the bake has to run)."""
    record = read_record(output)
    if record is None or record.get("digest") != digest or not Path(output).is_file():
        return None
    try:
        if Path(output).stat().st_size != record.get("output_bytes") or \
                file_digest(output) != record.get("output_digest"):
            return None
    except OSError:
        return None
    return record


def write_record(output, digest: str, fields: dict) -> None:
    """Write the record of ``output`` (made from inputs of ``digest``), with ``fields`` (JSON
    values: what the bake reports) and the output's own size and SHA-256 (``output_bytes``,
    ``output_digest``, read back from the file), whole or not at all. Raises OSError."""
    record = {"format": RECORD_FORMAT, "digest": digest, "output": Path(output).name,
              "output_bytes": Path(output).stat().st_size, "output_digest": file_digest(output), **fields}
    write_whole(record_path(output), (json.dumps(record, indent=2) + "\n").encode("utf-8"))


def forget(output) -> None:
    """Remove the record of ``output``, if any (before the output is rewritten)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(record_path(output))

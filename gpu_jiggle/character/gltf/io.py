"""Reading glTF 2.0 files that may come from anywhere: the container, URIs, buffers, limits.

This module touches files and bytes; :mod:`.access` checks buffer views and
accessors, :mod:`.check` the document's structure, :mod:`.loader` builds the character.

Guarantees (for any input file):

- **Containment.** A buffer or image ``uri`` is either a ``data:`` URI or a relative path
  that, percent-decoded and with every symbolic link resolved, lies inside the resolved
  folder of the model file. Other schemes (``file:``, ``http:``, …), absolute paths and
  paths leading out of the folder are refused before anything is opened. Only regular
  files are read (not devices, FIFOs or ``/proc`` entries reached through a link).
- **Bounded reads.** An external buffer is read up to its declared ``byteLength`` and no
  further; an image up to :data:`MAX_IMAGE_BYTES` (``GltfLimits.max_image_bytes``).
- **Quiet errors.** Messages name the model file, the JSON pointer (RFC 6901) of the
  offending value and the value, never facts about files outside the folder (not even
  whether they exist).
- **Limits** (:class:`GltfLimits`, the defaults below): the file, its buffers, images and
  every array decoded while loading share one byte budget; node count, accessors without a
  buffer view, JSON nesting and clip length are capped. Exceeding one is a
  :class:`GltfError` naming the limit, so a caller who trusts a file can raise it.

Every error is a :class:`GltfError` (a ``ValueError``) except a missing model file or a
missing file in the model's folder, which raise ``FileNotFoundError``.
"""
from __future__ import annotations

import base64
import binascii
import json
import os
import re
import stat
import struct
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

GLB_MAGIC = b"glTF"
CHUNK_JSON = 0x4E4F534A
CHUNK_BIN = 0x004E4942

MAX_TOTAL_BYTES = 1 << 30
"""Bytes a load may read and decode in all (the file, buffers, images, decoded arrays): 1 GiB."""
MAX_NODES = 65_536
"""Nodes in a file (characters have hundreds)."""
MAX_VIEWLESS_ACCESSOR_BYTES = 64 << 20
"""Bytes (count × element size) of one accessor without a bufferView (all zeros): 64 MiB."""
MAX_IMAGE_BYTES = 64 << 20
"""Encoded bytes of one image (external file, data URI or buffer view): 64 MiB."""
MAX_IMAGE_PIXELS = 8192 * 8192
"""Pixels of one decoded image (8192 × 8192, 256 MiB as RGBA)."""
MAX_CLIP_SECONDS = 3600.0
"""The latest animation key time accepted: one hour."""
MAX_JSON_DEPTH = 128
"""Nesting of JSON arrays and objects (glTF itself needs fewer than ten levels)."""
MAX_JSON_BYTES = 32 << 20
"""Bytes of a file's JSON (the ``.loader`` or the GLB's JSON chunk): 32 MiB (large characters
have a few MiB)."""
JSON_OBJECT_FACTOR = 32
"""Python's objects of parsed JSON take up to this many times the text's bytes (``[{},{}…]``
about 24, ``[[],[]…]`` about 21); a load charges the JSON this many times its size."""
JSON_DEPTH_CHUNK = 1 << 22
"""Bytes of JSON whose brackets :func:`json_depth` sums at once (bounds its temporaries)."""


@dataclass(frozen=True)
class GltfLimits:
    """Resource limits of one load; the defaults are the module constants of the same name.

    Attributes:
        max_total_bytes: int, bytes read and decoded in all.
        max_nodes: int. max_viewless_accessor_bytes: int. max_image_bytes: int.
        max_image_pixels: int. max_clip_seconds: float, seconds. max_json_depth: int.
        max_json_bytes: int, bytes of the JSON text.
    """

    max_total_bytes: int = MAX_TOTAL_BYTES
    max_nodes: int = MAX_NODES
    max_viewless_accessor_bytes: int = MAX_VIEWLESS_ACCESSOR_BYTES
    max_image_bytes: int = MAX_IMAGE_BYTES
    max_image_pixels: int = MAX_IMAGE_PIXELS
    max_clip_seconds: float = MAX_CLIP_SECONDS
    max_json_depth: int = MAX_JSON_DEPTH
    max_json_bytes: int = MAX_JSON_BYTES


class GltfError(ValueError):
    """A file that is not valid glTF 2.0, or one beyond a :class:`GltfLimits` limit.

    Attributes:
        file: the model file (or None). pointer: the JSON pointer of the offending value,
        e.g. ``"/accessors/3/byteStride"`` (or None for file-level problems).
    """

    def __init__(self, message: str, file=None, pointer: str | None = None):
        super().__init__(message)
        self.file = file
        self.pointer = pointer


def show(value, width: int = 60) -> str:
    """``repr(value)`` cut to ``width`` characters, for messages about untrusted values."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def escape(key) -> str:
    """One JSON pointer reference token (RFC 6901: ``~`` → ``~0``, ``/`` → ``~1``)."""
    return str(key).replace("~", "~0").replace("/", "~1")


def pointer(*parts) -> str:
    """The JSON pointer (RFC 6901) of a path of keys and indices: ``pointer("nodes", 3)``
    is ``"/nodes/3"``."""
    return "".join("/" + escape(p) for p in parts)


def fail(file, where: str, message: str) -> GltfError:
    """A :class:`GltfError` reading ``"<file>: <message> (at <where>)"``."""
    return GltfError(f"{file}: {message} (at {where})", file, where)


class Budget:
    """The bytes one load may still read or decode (``GltfLimits.max_total_bytes``)."""

    def __init__(self, limits: GltfLimits):
        self.limit = int(limits.max_total_bytes)
        self.used = 0

    def charge(self, nbytes: int, file, where: str, what: str, transient: int = 0) -> None:
        """Count ``nbytes`` more; GltfError when the total would pass the limit, or when
        ``transient`` bytes more (a decoder's temporaries, freed when it returns) would."""
        if self.used + int(nbytes) + int(transient) > self.limit:
            raise fail(file, where, f"{what} would take this load past {self.limit} bytes read and decoded "
                                    f"(GltfLimits.max_total_bytes)")
        self.used += int(nbytes)


# -- the container ---------------------------------------------------------------------------
def read_container(path: Path, limits: GltfLimits, budget: Budget):
    """(the JSON document as a dict, the GLB binary chunk or None) of a ``.loader``/``.glb``.

    Raises:
        FileNotFoundError: no regular file at ``path``. GltfError: anything else (see the
        module docstring).
    """
    if not path.is_file():
        raise FileNotFoundError(no_such_file(path, "glTF file"))
    size = path.stat().st_size
    budget.charge(size, path, "/", f"the file's {size} bytes")
    with open(path, "rb") as f:
        data = f.read(budget.limit + 1)
    budget.charge(max(len(data) - size, 0), path, "/", "the file")
    binary = data[:4] == GLB_MAGIC
    if binary:
        text, blob = split_glb(path, data)
    else:
        blob = None
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise GltfError(f"{path}: not a glTF file (neither glTF JSON nor binary glTF with the "
                            f"'glTF' magic)", path) from None
    kind = "the JSON chunk of this binary glTF" if binary else "this file"
    json_bytes = len(text)  # characters: at least as many bytes
    if json_bytes > limits.max_json_bytes:
        raise GltfError(f"{path}: {kind} has {json_bytes} characters of JSON, more than {limits.max_json_bytes} "
                        f"(GltfLimits.max_json_bytes)", path, "/")
    budget.charge(JSON_OBJECT_FACTOR * json_bytes, path, "/",
                  f"the JSON's objects (about {JSON_OBJECT_FACTOR} × its {json_bytes} characters)")
    depth = json_depth(text)
    if depth > limits.max_json_depth:
        raise GltfError(f"{path}: {kind} nests JSON arrays and objects {depth} deep, more than "
                        f"{limits.max_json_depth} (GltfLimits.max_json_depth)", path, "/")
    try:
        raw = json.loads(text, parse_constant=_no_constant, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        raise GltfError(f"{path}: not a glTF file: {kind} is not valid JSON ({exc}); "
                        f"a truncated or damaged file?", path) from None
    except (RecursionError, ValueError) as exc:
        raise GltfError(f"{path}: not a glTF file: {kind} is not valid JSON ({exc})", path) from None
    check_top_level(path, raw)
    return raw, blob


def no_such_file(path, what: str) -> str:
    """The message for a ``what`` (``"glTF file"``) missing at ``path``: that it is a folder
    when it is one, else that there is no such file."""
    return f"{path}: is a folder, not a {what}" if Path(path).is_dir() else f"{path}: no such {what}"


def _no_constant(name):
    raise ValueError(f"{name} is not a JSON number")


#: The most digits of a JSON integer: any more and it is beyond a float64 (about 1.8e308), where
#: the checks of a value (finite, within a range) cannot take it; smaller ones reach those checks.
MAX_INT_DIGITS = 308


def _bounded_int(digits: str) -> int:
    """A JSON integer, refused past :data:`MAX_INT_DIGITS` digits (10**400 would otherwise
    surface later as a bare OverflowError, far from the file)."""
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"the integer {digits[:12]}… has {len(digits.lstrip('-'))} digits, beyond any number "
                         f"(at most {MAX_INT_DIGITS})")
    return int(digits)


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


#: +1 for an opening bracket, -1 for a closing one, 0 for any other byte.
_BRACKET_STEP = np.zeros(256, np.int8)
_BRACKET_STEP[[0x5B, 0x7B]], _BRACKET_STEP[[0x5D, 0x7D]] = 1, -1


def json_depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` in JSON ``text``, counted without parsing
    (strings removed by a regular expression, brackets summed by numpy in slices of
    :data:`JSON_DEPTH_CHUNK` bytes): linear time, no recursion, and about twice the text's
    size in memory, so it is safe on any input."""
    bare = _STRING.sub("", text).encode("utf-8", "replace")
    depth = deepest = 0
    for start in range(0, len(bare), JSON_DEPTH_CHUNK):
        steps = _BRACKET_STEP[np.frombuffer(bare, np.uint8, min(JSON_DEPTH_CHUNK, len(bare) - start), start)]
        running = np.cumsum(steps, dtype=np.int64)
        if running.size:
            deepest = max(deepest, depth + int(running.max()))
            depth += int(running[-1])
    return deepest


def split_glb(path, data: bytes):
    """(JSON text, BIN chunk bytes or None) of a binary glTF, checking every length
    (glTF 2.0 specification, section 4 "GLB File Format Specification")."""
    if len(data) < 12:
        raise GltfError(f"{path}: truncated binary glTF: {len(data)} bytes, shorter than the 12-byte header", path)
    _, version, length = struct.unpack_from("<4sII", data, 0)
    if version != 2:
        raise GltfError(f"{path}: binary glTF version {version}; only version 2 is supported", path)
    if length > len(data):
        raise GltfError(f"{path}: truncated binary glTF: the header says {length} bytes, the file has {len(data)}",
                        path)
    offset, text, blob = 12, None, None
    while offset < length:
        if offset + 8 > length:
            raise GltfError(f"{path}: truncated binary glTF: a chunk header at byte {offset} is cut off", path)
        chunk_length, chunk_type = struct.unpack_from("<II", data, offset)
        start = offset + 8
        if start + chunk_length > length:
            raise GltfError(f"{path}: truncated binary glTF: a chunk of {chunk_length} bytes at byte {start} "
                            f"runs past the end ({length} bytes)", path)
        chunk = data[start:start + chunk_length]
        if chunk_type == CHUNK_JSON and text is None:
            try:
                text = chunk.decode("utf-8")
            except UnicodeDecodeError:
                raise GltfError(f"{path}: the JSON chunk of this binary glTF is not UTF-8", path) from None
        elif chunk_type == CHUNK_BIN and blob is None and text is not None:
            blob = chunk
        offset = start + chunk_length
    if text is None:
        raise GltfError(f"{path}: binary glTF without a JSON chunk", path)
    return text, blob


SECTIONS = ("nodes", "meshes", "skins", "animations", "accessors", "bufferViews", "buffers", "images",
            "materials", "textures", "samplers", "scenes", "cameras")


def check_top_level(path, raw) -> None:
    """The asset version and that every top-level array is a list of objects."""
    if not isinstance(raw, dict) or not isinstance(raw.get("asset"), dict):
        raise GltfError(f"{path}: not a glTF file: the JSON has no 'asset' object", path)
    version = str(raw["asset"].get("version", ""))
    if not version.startswith("2."):
        raise GltfError(f"{path}: glTF asset version {version!r}; only glTF 2.x is supported", path, "/asset/version")
    for key in SECTIONS:
        if key in raw and not (isinstance(raw[key], list) and all(isinstance(x, dict) for x in raw[key])):
            raise GltfError(f"{path}: malformed glTF: '{key}' must be a list of objects (at /{key})", path, f"/{key}")


# -- URIs -------------------------------------------------------------------------------------
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def is_data_uri(uri) -> bool:
    return isinstance(uri, str) and uri[:5].lower() == "data:"


def decode_data_uri(file, where: str, uri: str) -> bytes:
    """The bytes of a ``data:`` URI (RFC 2397; base64 strictly checked, ASCII whitespace
    ignored); GltfError naming ``where`` when it is malformed."""
    header, comma, payload = uri.partition(",")
    if not comma:
        raise fail(file, where, "a data URI without the ',' before its data")
    if header.lower().endswith(";base64"):
        try:
            return base64.b64decode(re.sub(r"[ \t\r\n]", "", payload), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise fail(file, where, f"the data URI's base64 is malformed ({exc})") from None
    return urllib.parse.unquote_to_bytes(payload)


def resolve_uri(file: Path, where: str, uri) -> Path:
    """The file a relative ``uri`` names: percent-decoded, symbolic links resolved, and
    inside the resolved folder of ``file``; GltfError (naming only the URI) otherwise."""
    if not isinstance(uri, str) or not uri:
        raise fail(file, where, f"uri {show(uri)} is not a non-empty string")
    if _SCHEME.match(uri):
        raise fail(file, where, f"uri {show(uri)}: only data: URIs and paths relative to the model's folder "
                                f"are read")
    try:
        name = urllib.parse.unquote(uri, errors="strict")
    except UnicodeDecodeError:
        raise fail(file, where, f"uri {show(uri)} does not percent-decode to UTF-8") from None
    if "\0" in name or name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) or os.path.isabs(name):
        raise fail(file, where, f"uri {show(uri)} is an absolute path; only paths relative to the model's "
                                f"folder are read")
    folder = Path(os.path.abspath(file)).parent
    try:
        root = folder.resolve()
        target = (folder / name).resolve()
    except (OSError, RuntimeError, ValueError):
        raise fail(file, where, f"uri {show(uri)} cannot be resolved inside the model's folder") from None
    if target != root and root not in target.parents:
        raise fail(file, where, f"uri {show(uri)} leads outside the model's folder")
    return target


def read_external(file: Path, where: str, uri: str, what: str, size: int, exact: bool) -> bytes:
    """Read a file in the model's folder (see :func:`resolve_uri`): exactly ``size`` bytes
    when ``exact`` (a buffer's byteLength), else at most ``size`` (an image).

    Raises:
        FileNotFoundError: no such file in the folder. GltfError: refused URI, not a regular
        file, shorter than ``size`` (exact) or longer (not exact).
    """
    target = resolve_uri(file, where, uri)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(target, flags)
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(f"{file}: {what} refers to {show(uri)}, which is not a file in the model's folder "
                                f"(at {where})") from None
    except OSError as exc:
        raise fail(file, where, f"{what}: uri {show(uri)} cannot be opened ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise fail(file, where, f"{what}: uri {show(uri)} is not a regular file")
        data = f.read(size if exact else size + 1)
    if exact and len(data) < size:
        raise fail(file, where, f"{what}: the file {show(uri)} ends before its declared byteLength {size}")
    if not exact and len(data) > size:
        raise fail(file, where, f"{what}: the file {show(uri)} is larger than {size} bytes "
                                f"(GltfLimits.max_image_bytes)")
    return data


# -- buffers ----------------------------------------------------------------------------------
def is_index(value) -> bool:
    """An integer JSON value (``true`` is not an index)."""
    return type(value) is int


def read_buffers(file: Path, raw: dict, blob, budget: Budget) -> list:
    """Each buffer's bytes, exactly ``byteLength`` long (glTF 2.0 section 3.6.1 "Buffers and
    Buffer Views"; a GLB's buffer 0 without uri is the BIN chunk, section 3.6.1.2)."""
    out = []
    for i, buffer in enumerate(raw.get("buffers", [])):
        where = pointer("buffers", i)
        what = f"buffer {i}"
        length = buffer.get("byteLength")
        if not is_index(length) or length < 1:
            raise fail(file, where + "/byteLength", f"{what} has byteLength {show(length)}; expected an integer >= 1")
        budget.charge(length, file, where + "/byteLength", f"{what} ({length} bytes)")
        uri = buffer.get("uri")
        if uri is None:
            if i != 0 or blob is None:
                raise fail(file, where, f"{what} has no uri and there is no binary chunk to take it from")
            if len(blob) < length:
                raise fail(file, where + "/byteLength", f"{what}: the binary chunk holds {len(blob)} bytes but "
                                                        f"declares byteLength {length}")
            data = blob[:length]
        elif is_data_uri(uri):
            data = decode_data_uri(file, where + "/uri", uri)
            if len(data) < length:
                raise GltfError(f"{file}: {what} holds {len(data)} bytes but declares byteLength {length}: "
                                f"a truncated file or buffer? (at {where}/byteLength)", file, where + "/byteLength")
            data = data[:length]
        else:
            data = read_external(file, where + "/uri", uri, what, length, exact=True)
        out.append(data)
    return out

"""Bake spring motion into a copy of a glTF file as rotation keyframes.

``bake(character, rig, "Run", fps=30, out="fox_run.glb")`` plays the clip through the
pipeline (keyframes → springs; the rig's constraints are not applied, since they would
change joints whose channels must stay as they are), and writes a copy of the file in which
that animation's rotation channels of the rig's chain joints are replaced by LINEAR
keyframes at ``start + k / fps`` seconds, k = 0 .. ceil(duration · fps): the joints' local
rotations after springs, as float32. A chain joint without a rotation channel gets one.
Everything else is copied as it was: the JSON objects (other channels, samplers, accessors,
buffer views, nodes, meshes, materials, the asset's credits) and every byte of the
existing buffers. The new keyframes go into new accessors and buffer views appended after
the old data. Procedural strands have no joints in the file and are not baked.

To make the loop seamless, the springs first run ``preroll`` seconds (default 2 s) of the
looping clip before the recorded span, so the chains are in their steady swing when the
recording starts. The baked values equal, bit for bit, those of a live run of
:class:`~gpu_jiggle.character.pipeline.Pipeline` with the same backend, fps and preroll:
``Pipeline(character, rig, clip, constraints=[]).play(fps, (P + n - 1) / fps, start=clip.start - P / fps)``
with ``P = round(preroll · fps)`` frames of preroll, frames P .. P + n - 1 recorded (see
:func:`bake_frames`).

The output is a ``.glb`` (buffer 0 becomes the binary chunk, other buffers and external
images become ``data:`` URIs so the file stands alone) or a ``.gltf`` with every buffer
as a ``data:`` URI. What is embedded is only what :meth:`Character.load
<gpu_jiggle.character.gltf.Character.load>` read and accepted (``character.buffers``,
``character.image_data``); the bake opens no file of the model's. An external image that no
texture uses is left out of the copy (texture ``source`` indices renumbered), since the
loader never reads it. The output is written whole or not at all: into a temporary file in
the same folder, renamed over ``out`` once complete.
"""
from __future__ import annotations

import base64
import contextlib
import copy
import json
import math
import os
import secrets
import struct
import time as _time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .gltf import CHUNK_BIN, CHUNK_JSON, GLB_MAGIC, Character
from .gltf_io import is_data_uri
from .pipeline import Pipeline
from .rig import Rig

FLOAT = 5126
DEFAULT_PREROLL = 2.0


@dataclass
class BakeResult:
    """What :func:`bake` did.

    Attributes:
        path: the written file. clip: the animation's name. times: (n,) float32 key times
        (s). rotations: {node index: (n, 4) float32 local rotations (x, y, z, w)}.
        backend: the solver backend. seconds: wall-clock time of simulation and writing.
    """

    path: Path
    clip: str
    times: np.ndarray
    rotations: dict
    backend: str
    seconds: float


#: The most frames (preroll and keys) one bake simulates: about 55 minutes at 60 fps.
MAX_BAKE_FRAMES = 200_000


def key_count(duration: float, fps: float) -> int:
    """Keys of a bake: ``ceil(duration · fps) + 1`` (k = 0 .. ceil(duration · fps))."""
    return int(math.ceil(duration * fps - 1e-9)) + 1


def preroll_frames(preroll: float, fps: float) -> int:
    return int(round(preroll * fps))


def bake_frames(character: Character, rig: Rig, clip, fps: float, preroll: float = DEFAULT_PREROLL,
                backend: str = "auto", context=None, max_frames: int = MAX_BAKE_FRAMES):
    """Run the pipeline for a bake; returns ``(times (n,) float32, {node: (n, 4) float32},
    backend name)`` (see the module docstring).

    Raises: ValueError for a bad fps or preroll, a rig without joint chains, or a bake of
    more than ``max_frames`` frames (preroll included: the clip's duration × fps)."""
    fps = _positive("fps", fps)
    preroll = float(preroll)
    if not (math.isfinite(preroll) and preroll >= 0):
        raise ValueError(f"preroll = {preroll!r}: expected a finite number of seconds >= 0")
    if not rig.joint_chains:
        raise ValueError(f"{rig.source}: the rig has no [[chain]] on skeleton joints: nothing to bake "
                         f"(procedural strands are not part of the file)")
    clip = character.clip(clip) if isinstance(clip, str) else clip
    total = (clip.duration + preroll) * fps
    if total > max_frames:
        raise ValueError(f"clip {clip.name!r} of {clip.duration:g} s with {preroll:g} s of preroll at {fps:g} fps is "
                         f"{math.ceil(total)} frames to simulate; at most {max_frames} "
                         f"(gpu_jiggle.character.bake.MAX_BAKE_FRAMES; or lower the fps or the preroll)")
    n = key_count(clip.duration, fps)
    skip = preroll_frames(preroll, fps)
    nodes = rig.chain_joints
    rotations = {node: np.empty((n, 4), np.float32) for node in nodes}
    with Pipeline(character, rig, clip, loop=True, backend=backend, constraints=[], context=context) as pipeline:
        for k, frame in enumerate(pipeline.play(fps, (skip + n - 1) / fps, start=clip.start - skip / fps)):
            if k < skip:
                continue
            for node in nodes:
                rotations[node][k - skip] = frame.pose.rotation[node].astype(np.float32)
        used = pipeline.backend
    times = (clip.start + np.arange(n) / fps).astype(np.float32)
    return times, rotations, used


def bake(character: Character, rig: Rig, clip: str, fps: float, out, preroll: float = DEFAULT_PREROLL,
         backend: str = "auto", context=None, max_frames: int = MAX_BAKE_FRAMES) -> BakeResult:
    """Bake ``clip``'s spring motion into a copy of ``character``'s file at ``out``
    (``.glb`` or ``.gltf``); see the module docstring.

    Raises:
        ValueError: an unknown clip (listing the clips), fps ≤ 0, a bad preroll, a rig
        without joint chains, more than ``max_frames`` frames to simulate, or an output name
        that is neither .glb nor .gltf.
        OSError: the output cannot be written (``out`` is then as it was).
    """
    start = _time.perf_counter()
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix not in (".glb", ".gltf"):
        raise ValueError(f"out = {str(out)!r}: expected a .glb or .gltf file name")
    name = clip if isinstance(clip, str) else clip.name
    index = character.clip_index(name)
    times, rotations, used = bake_frames(character, rig, name, fps, preroll, backend, context, max_frames)
    doc, blob = _with_keyframes(character, index, times, rotations)
    if suffix == ".glb":
        data = _glb(doc, blob)
    else:
        doc["buffers"][0]["uri"] = _data_uri(blob)
        data = json.dumps(doc, indent=2).encode("utf-8")
    write_whole(out, data)
    return BakeResult(out, name, times, rotations, used, _time.perf_counter() - start)


def _positive(name, value):
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} = {value!r}: expected a finite number > 0")
    return v


def _data_uri(data: bytes, mime: str = "application/octet-stream") -> str:
    return f"data:{mime};base64," + base64.b64encode(data).decode("ascii")


def _pad(data: bytes, fill: bytes = b"\0") -> bytes:
    return data + fill * (-len(data) % 4)


def write_whole(out: Path, data: bytes) -> None:
    """Write ``data`` to ``out`` whole or not at all: a new temporary file in ``out``'s
    folder (mode 0o666 less the umask), flushed to disk, then ``os.replace`` d onto ``out``
    (atomic within one file system); on any error the temporary file is removed."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = out.with_name(f".{out.name}.{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"{out}: no free temporary name in {out.parent}")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _image_mime(data: bytes, declared) -> str:
    """The image's ``mimeType``, or the type its first bytes show (PNG, JPEG, WebP)."""
    if isinstance(declared, str) and declared:
        return declared
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "image/png"
    if data[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return "application/octet-stream"


def _embed_images(character, doc: dict) -> None:
    """External images that textures use become ``data:`` URIs of the bytes the loader
    read (``character.image_data``); external images no texture uses are dropped and the
    texture ``source`` indices (and texture extensions' ``source``) renumbered."""
    images = doc.get("images")
    if not images:
        return
    kept, renumber = [], {}
    for i, img in enumerate(images):
        uri = img.get("uri")
        if uri is not None and img.get("bufferView") is None and not is_data_uri(uri):
            data = character.image_data.get(i)
            if data is None:
                continue  # unused and never read: nothing of it goes into the copy
            img["uri"] = _data_uri(data, _image_mime(data, img.get("mimeType")))
        renumber[i] = len(kept)
        kept.append(img)
    if len(kept) == len(images):
        return
    if kept:
        doc["images"] = kept
    else:
        del doc["images"]
    for texture in doc.get("textures", []):
        if texture.get("source") is not None:
            texture["source"] = renumber[texture["source"]]
        for ext in (texture.get("extensions") or {}).values():
            if isinstance(ext, dict) and ext.get("source") is not None:
                ext["source"] = renumber[ext["source"]]


def _with_keyframes(character, anim_index, times, rotations):
    """(the new JSON dict, buffer 0's new bytes): old JSON objects kept, new accessors,
    buffer views and samplers appended, the chain joints' rotation channels repointed."""
    doc = copy.deepcopy(character.json)
    buffers = doc.setdefault("buffers", [])
    if not buffers:
        buffers.append({"byteLength": 0})
    blob = bytearray(character.buffers[0] if character.buffers else b"")
    # other buffers and external images travel inside the copy, bytes unchanged
    for i, b in enumerate(buffers):
        if i:
            b["uri"] = _data_uri(character.buffers[i])
        else:
            b.pop("uri", None)
    _embed_images(character, doc)
    accessors = doc.setdefault("accessors", [])
    views = doc.setdefault("bufferViews", [])

    def append(array: np.ndarray, kind: str, with_bounds: bool) -> int:
        nonlocal blob
        blob = bytearray(_pad(bytes(blob)))
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": array.nbytes})
        blob += array.tobytes()
        acc = {"bufferView": len(views) - 1, "componentType": FLOAT, "count": int(len(array)), "type": kind}
        if with_bounds:
            acc["min"] = [float(array.min())]
            acc["max"] = [float(array.max())]
        accessors.append(acc)
        return len(accessors) - 1

    time_accessor = append(np.ascontiguousarray(times, np.float32), "SCALAR", True)
    anim = doc["animations"][anim_index]
    samplers = anim.setdefault("samplers", [])
    channels = anim.setdefault("channels", [])
    users = {}
    for ch in channels:
        users[ch.get("sampler")] = users.get(ch.get("sampler"), 0) + 1
    for node, values in rotations.items():
        output = append(np.ascontiguousarray(values, np.float32), "VEC4", False)
        sampler = {"input": time_accessor, "output": output, "interpolation": "LINEAR"}
        channel = next((c for c in channels if c.get("target", {}).get("node") == node
                        and c.get("target", {}).get("path") == "rotation"), None)
        if channel is None:
            samplers.append(sampler)
            channels.append({"sampler": len(samplers) - 1, "target": {"node": node, "path": "rotation"}})
        elif users.get(channel["sampler"], 0) > 1:  # shared with another channel: leave it for that one
            samplers.append(sampler)
            channel["sampler"] = len(samplers) - 1
        else:
            old = samplers[channel["sampler"]]
            for key in ("input", "output", "interpolation"):
                old[key] = sampler[key]
    blob = bytes(blob)
    buffers[0]["byteLength"] = len(blob)
    return doc, blob


def _glb(doc: dict, blob: bytes) -> bytes:
    text = _pad(json.dumps(doc, separators=(",", ":")).encode("utf-8"), b" ")
    body = _pad(blob)
    parts = [struct.pack("<II", len(text), CHUNK_JSON), text]
    if body:
        parts += [struct.pack("<II", len(body), CHUNK_BIN), body]
    payload = b"".join(parts)
    return GLB_MAGIC + struct.pack("<II", 2, 12 + len(payload)) + payload

"""Bake spring motion into a copy of a glTF file as rotation keyframes.

``bake(character, rig, "Run", fps=None, out="fox_run.glb")`` plays the clip through the
pipeline (keyframes → constraints → springs, the constraints a preview applies:
:func:`~gpu_jiggle.character.travel.preview_constraints`, the rig's enabled ones and with
``look_at=True`` its look-ats too), and writes a copy of the file in which that animation's
rotation channels of the rig's spring-driven chain joints, and of the joints the constraints
turn (a look-at's joint, a two-bone IK's root and mid joints), are replaced by LINEAR
keyframes: the joints' local rotations after constraints and springs, as float32. A baked
joint without a rotation channel gets one; a joint on a zero-length segment, which the springs
carry rigidly (:mod:`..rig.model`), keeps its channels. Everything else is copied as it was (see
:mod:`.gltf` for the few changes that keep the copy valid glTF: a baked joint's
``matrix`` as TRS, strides glTF forbids, embedded images): the JSON objects and every byte
of the existing buffers. Procedural strands have no joints in the file: ``strands="none"``
(the default) leaves them out, ``strands="joints"`` adds each strand to the copy as a chain
of new joints with a skin, a ribbon mesh and rotation keys (:mod:`.strands`).
:attr:`BakeResult.not_baked` lists what the bake leaves out: strands, and constraints that
are off. A constraint's target that does not repeat with the clip (the Fox's look-at sweeps
at 0.4 Hz) makes the baked clip's first and last keys of its joints differ.

**Key times** (:func:`bake_schedule`), from the clip's ``start`` to its ``end`` (the
earliest and latest key time of all its channels):

- ``fps=None``: the clip's own key times (all channels' together) when they are evenly
  spaced at :data:`MIN_SOURCE_FPS` or more per second, the float32 values of the file
  unchanged; otherwise resampled at :data:`DEFAULT_FPS`.
- ``fps=F``: ``m = max(ceil(duration · F), 1)`` equal steps of ``duration / m`` seconds (at
  least F keys per second, and at least the first and the last key), the last key exactly at
  ``end``.

Either way the baked clip spans exactly the source's ``[start, end]`` (the same float32
first and last key), so channels outside the chain still end with it and a looping clip
does not drift. The springs are stepped at those times with ``dt = duration / (n - 1)``
and follow the clip sampled at exactly those times (no looping arithmetic: ``loop=False``),
so the other channels of the copy, unchanged, hold at each baked key what the springs saw.

**Seamless loops.** The springs first run ``preroll`` seconds (default 4 s) of the looping
clip, ``P = round(preroll / dt)`` frames at the same times wrapped into the clip (the key
grid before ``end``: key ``k mod (n - 1)`` for k = -P .. -1), so the chains enter the first
key in the steady swing they leave the last one with; the first and last baked keys are
then the same instant of the loop. The baked values equal, bit for bit, those of a live
:class:`~gpu_jiggle.character.pipeline.Pipeline` (``loop=False``, ``constraints=
preview_constraints(rig, look_at)``, the same backend) stepped at ``schedule.sample_times``
with ``schedule.dt``.

The output is a ``.glb`` (buffer 0 becomes the binary chunk and takes the images textures
use, other buffers become ``data:`` URIs so the file stands alone) or a ``.gltf`` with every
buffer and external image as a ``data:`` URI. What is embedded is only what :meth:`Character.load
<gpu_jiggle.character.gltf.loader.Character.load>` read and accepted (``character.buffers``,
``character.image_data``); the bake opens no file of the model's. The output is written
whole or not at all: into a temporary file in the same folder, renamed over ``out`` once
complete.
"""
from __future__ import annotations

import json
import math
import time as _time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...whole_files import same_file, write_whole  # noqa: F401  (write_whole re-exported: the bake's writer)
from .gltf import BAKED_MARK, BakeError, baked_mark, data_uri, glb, referenced_files, with_keyframes  # noqa: F401
from .strands import STRAND_MODES, StrandJoints
from ..gltf.loader import Character
from ..pipeline import Pipeline
from ..rig.model import LookAtSpec, Rig
from ..travel import preview_constraints

DEFAULT_PREROLL = 4.0
#: Keys per second of a bake resampled because ``fps`` is None and the clip's own key times
#: are uneven or sparser than :data:`MIN_SOURCE_FPS`.
DEFAULT_FPS = 30.0
#: The sparsest even key grid of a clip that a bake with ``fps=None`` keeps (keys per second).
MIN_SOURCE_FPS = 24.0
#: Key times count as evenly spaced when each lies within this fraction of a step of
#: ``start + k · step`` (float32 times of a 24 fps grid are within about 1e-5).
EVEN_TOLERANCE = 1e-3
#: The most frames (preroll and keys) one bake simulates: about 55 minutes at 60 fps.
MAX_BAKE_FRAMES = 200_000


@dataclass(frozen=True)
class BakeSchedule:
    """When a bake samples its clip (see the module docstring).

    Attributes:
        times: (n,) float32 key times written (s), ``times[0]`` the clip's start and
            ``times[-1]`` its end. preroll: (P,) float64 clip times (s) of the frames played
            before the first key. dt: seconds per frame. source: the keys are the clip's
            own key times (else resampled).
    """

    times: np.ndarray
    preroll: np.ndarray
    dt: float
    source: bool

    @property
    def sample_times(self) -> np.ndarray:
        """(P + n,) float64: every frame's clip time, preroll first."""
        return np.concatenate([self.preroll, self.times.astype(np.float64)])

    @property
    def rate(self) -> float:
        """Keys per second (``1 / dt``; 0 for a clip of one instant)."""
        return 1.0 / self.dt if self.dt > 0 else 0.0


@dataclass
class BakeResult:
    """What :func:`bake` did.

    Attributes:
        path: the written file. clip: the animation's name. times: (n,) float32 key times
        (s). rotations: {node index: (n, 4) float32 local rotations (x, y, z, w)}, the
        chain joints' and the constrained joints'. backend: the solver backend. seconds:
        wall-clock time of simulation and writing. schedule: the :class:`BakeSchedule`.
        strands: the :class:`~gpu_jiggle.character.baking.strands.StrandJoints` written
        (``strands="joints"``), else None. not_baked: what the rig has that the copy does
        not carry, one line each, phrased for the command line (:func:`not_baked`).
    """

    path: Path
    clip: str
    times: np.ndarray
    rotations: dict
    backend: str
    seconds: float
    schedule: BakeSchedule | None = None
    strands: StrandJoints | None = None
    not_baked: list = field(default_factory=list)


def source_times(clip) -> np.ndarray:
    """(K,) float64: the sorted distinct key times of all of ``clip``'s channels."""
    if not clip.channels:
        return np.zeros(1)
    return np.unique(np.concatenate([c.sampler.times for c in clip.channels]))


def evenly_spaced(times: np.ndarray, min_rate: float = MIN_SOURCE_FPS) -> bool:
    """Whether ``times`` (K,) seconds, K ≥ 2, are ``times[0] + k · step`` within
    :data:`EVEN_TOLERANCE` of a step, with ``1 / step ≥ min_rate`` (within the tolerance)."""
    if len(times) < 2:
        return False
    step = (times[-1] - times[0]) / (len(times) - 1)
    grid = times[0] + np.arange(len(times)) * step
    return bool(np.abs(times - grid).max() <= EVEN_TOLERANCE * step and step * min_rate <= 1.0 + EVEN_TOLERANCE)


def bake_schedule(clip, fps: float | None = None, preroll: float = DEFAULT_PREROLL,
                  max_frames: int = MAX_BAKE_FRAMES) -> BakeSchedule:
    """The key times, preroll times and frame step of a bake of ``clip`` (module docstring).

    Raises: ValueError for an fps that is not a finite number > 0, a preroll that is not a
    finite number of seconds >= 0, or more than ``max_frames`` frames (preroll and keys) to
    simulate, checked before any array is made."""
    if fps is not None:
        fps = _positive("fps", fps)
    preroll = float(preroll)
    if not (math.isfinite(preroll) and preroll >= 0):
        raise ValueError(f"preroll = {preroll!r}: expected a finite number of seconds >= 0")
    start, end, duration = clip.start, clip.end, clip.duration
    own = source_times(clip) if fps is None else None
    source = own is not None and evenly_spaced(own)
    rate = fps if fps is not None else DEFAULT_FPS
    # At least one step: the first and the last key of a clip with a duration, however low the rate.
    steps = len(own) - 1 if source else (max(int(math.ceil(duration * rate - 1e-9)), 1) if duration > 0 else 0)
    dt = duration / steps if steps else 0.0
    total = steps + 1 + (preroll / dt if dt > 0 else 0.0)
    if total > max_frames:
        shown = 1.0 / dt if source else rate
        raise ValueError(f"clip {clip.name!r} of {duration:g} s with {preroll:g} s of preroll at {shown:g} fps is "
                         f"{math.ceil(total)} frames to simulate; at most {max_frames} "
                         f"(gpu_jiggle.character.baking.run.MAX_BAKE_FRAMES; or lower the fps or the preroll)")
    if source:
        times = own.astype(np.float32)
    else:
        times = (start + np.arange(steps + 1) * dt).astype(np.float32)
        times[0], times[-1] = np.float32(start), np.float32(end)  # the clip's own float32 first and last keys
        if len(times) > 1 and not np.all(np.diff(times) > 0):
            raise ValueError(f"fps = {rate!r}: {steps} steps over the {duration:g} s of clip {clip.name!r} are "
                             f"closer than float32 key times can be told apart; lower the fps")
    count = int(round(preroll / dt)) if dt > 0 else 0
    grid = times.astype(np.float64)
    before = grid[np.arange(-count, 0) % (len(grid) - 1)] if count else np.zeros(0)
    return BakeSchedule(times, before, dt, bool(source))


def not_baked(rig: Rig, look_at: bool = False, strands: str = "none") -> list:
    """What a bake of ``rig`` with these options leaves out, one line each (phrased for the
    command line): strands with ``strands="none"``, look-ats that are off in the rig without
    ``look_at``, two-bone IK that is off in the rig."""
    out = []
    if strands == "none" and rig.strand_chains:
        groups = ", ".join(repr(g) for g in dict.fromkeys(c.group or c.name for c in rig.strand_chains))
        out.append(f"strands {groups} (procedural; --strands joints bakes them as joints)")
    off = [c for c in rig.constraints if not c.enabled and not (look_at and isinstance(c, LookAtSpec))]
    looks = ", ".join(repr(c.name) for c in off if isinstance(c, LookAtSpec))
    if looks:
        out.append(f"look-at {looks} (off in the rig; --look-at bakes it)")
    iks = ", ".join(repr(c.name) for c in off if not isinstance(c, LookAtSpec))
    if iks:
        out.append(f"two-bone IK {iks} (off in the rig)")
    return out


def constrained_joints(constraints) -> list:
    """The nodes ``constraints`` turn, in order: a look-at's joint, a two-bone IK's root and mid."""
    nodes = [n for c in constraints for n in ((c.node,) if isinstance(c, LookAtSpec) else (c.root, c.mid))]
    return [int(n) for n in dict.fromkeys(nodes)]


def bake_frames(character: Character, rig: Rig, clip, fps: float | None = None, preroll: float = DEFAULT_PREROLL,
                backend: str = "auto", context=None, max_frames: int = MAX_BAKE_FRAMES, look_at: bool = False,
                strands: str = "none"):
    """Run the pipeline for a bake; returns ``(schedule, {node: (n, 4) float32 local
    rotations (x, y, z, w)}, backend name, StrandJoints or None)`` (see the module
    docstring): the rotations of the spring-driven chain joints, then of the joints the
    constraints turn; the strands' joints with ``strands="joints"``.

    Raises: ValueError for a bad fps or preroll, ``look_at`` not a bool, ``look_at`` with a
    rig without look-ats, ``strands`` other than ``"none"`` or ``"joints"``, ``"joints"``
    for a rig without strands, nothing to bake (no spring-driven chain joints, constraints or
    strands baked as joints), or a bake of more than ``max_frames`` frames."""
    if not isinstance(look_at, (bool, np.bool_)):
        raise ValueError(f"look_at = {look_at!r}: expected True or False")
    if strands not in STRAND_MODES:
        raise ValueError(f"strands = {strands!r}: expected one of {', '.join(map(repr, STRAND_MODES))}")
    if look_at and not any(isinstance(c, LookAtSpec) for c in rig.constraints):
        raise ValueError(f"look_at = True: {rig.source} has no [[look_at]] constraint to turn on")
    constraints = preview_constraints(rig, bool(look_at))
    nodes = list(dict.fromkeys(rig.chain_joints + constrained_joints(constraints)))
    if not nodes and strands == "none":
        raise ValueError(f"{rig.source}: the rig has no [[chain]] on skeleton joints that springs drive and no "
                         f"constraint on: nothing to bake (procedural strands are baked with --strands joints)")
    clip = character.clip(clip) if isinstance(clip, str) else clip
    schedule = bake_schedule(clip, fps, preroll, max_frames)
    n = len(schedule.times)
    skip = len(schedule.preroll)
    joints = StrandJoints.plan(character, rig, n) if strands == "joints" else None
    rotations = {node: np.empty((n, 4), np.float32) for node in nodes}
    sk = character.skeleton
    with Pipeline(character, rig, clip, loop=False, backend=backend, constraints=constraints,
                  context=context) as pipeline:
        for k, t in enumerate(schedule.sample_times):
            frame = pipeline.step(float(t), schedule.dt)
            if k >= skip:
                for node in nodes:
                    rotations[node][k - skip] = frame.pose.rotation[node].astype(np.float32)
                if joints is not None:
                    joints.record(k - skip, frame, sk.world_rotations(frame.pose))
        used = pipeline.backend
    return schedule, rotations, used, joints


def bake(character: Character, rig: Rig, clip: str, fps: float | None, out, preroll: float = DEFAULT_PREROLL,
         backend: str = "auto", context=None, max_frames: int = MAX_BAKE_FRAMES, look_at: bool = False,
         strands: str = "none", force: bool = False, inputs=()) -> BakeResult:
    """Bake ``clip``'s spring motion into a copy of ``character``'s file at ``out``
    (``.glb``, ``.gltf``, or ``.vrm``: a binary glTF whose VRM extensions are kept as they
    are, like the rest of the file); ``fps`` None keeps the clip's own key times where it can (see
    the module docstring). ``look_at``: turn on the rig's look-ats as ``render --look-at``
    does (their targets standing still: the copy does not travel) and bake their joints.
    ``strands``: ``"none"`` (left out, listed in ``not_baked``) or ``"joints"`` (written as
    skinned joints, :mod:`.strands`). ``force``: bake a file that a bake wrote (its
    mark, :func:`~gpu_jiggle.character.baking.gltf.baked_mark`), springs on springs.
    ``inputs``: the other files the bake reads (the rig, an animation file), which ``out``
    must not be either.

    Raises:
        ValueError: an unknown clip (listing the clips), fps ≤ 0, a bad preroll, a bad
        ``look_at`` or ``strands`` (or one the rig has nothing for), nothing to bake, more
        than ``max_frames`` frames to simulate, an output name that is not .glb, .gltf or
        .vrm, or (a :class:`BakeError`) a source the copy cannot be made valid from: a baked
        joint's matrix with shear, an image of unknown format.
        ValueError before anything runs: ``out`` is a folder or another file that is not a
        regular file, or is (or links to) the character's file, a
        file it refers to, or one of ``inputs``; the character is a baked file and
        ``force`` is not given; or ``out`` is a ``.vrm`` and the character is not a VRM.
        OSError: the output cannot be written (``out`` is then as it was).
    """
    started = _time.perf_counter()
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix not in (".glb", ".gltf", ".vrm"):
        raise ValueError(f"out = {str(out)!r}: expected a .glb, .gltf or .vrm file name")
    binary = suffix in (".glb", ".vrm")  # a .vrm is a binary glTF
    if out.exists() and not out.is_file():  # found before the run, not by the write after it
        kind = "a folder" if out.is_dir() else "not a regular file"
        raise ValueError(f"out = {str(out)!r}: is {kind}; a bake writes one file and replaces only a file")
    refuse_inputs(out, [character.path, *referenced_files(character.path, character.json), *inputs])
    mark = baked_mark(character.json)
    if mark is not None and not force:
        raise ValueError(f"{character.path}: already a bake (gpu_jiggle bake of clip {mark.get('clip')!r}, "
                         f"asset.extras.{BAKED_MARK}); baking it again puts springs on springs; force it to bake "
                         f"it anyway (gpu-jiggle bake --force)")
    extensions = character.json.get("extensions") or {}
    if suffix == ".vrm" and not ("VRM" in extensions or "VRMC_vrm" in extensions):
        raise ValueError(f"out = {str(out)!r}: {character.path.name} is not a VRM (no VRM or VRMC_vrm extension), so "
                         f"a .vrm of it would not be one either; give a .glb or .gltf name")
    name = clip if isinstance(clip, str) else clip.name
    index = character.clip_index(name)
    schedule, rotations, used, joints = bake_frames(character, rig, name, fps, preroll, backend, context, max_frames,
                                                    look_at, strands)
    doc, blob = with_keyframes(character, index, schedule.times, rotations, binary=binary, strands=joints)
    if binary:
        data = glb(doc, blob)
    else:
        doc["buffers"][0]["uri"] = data_uri(blob)
        data = json.dumps(doc, indent=2).encode("utf-8")
    write_whole(out, data)
    return BakeResult(out, name, schedule.times, rotations, used, _time.perf_counter() - started, schedule,
                      joints, not_baked(rig, look_at, strands))


def refuse_inputs(out, inputs) -> None:
    """ValueError when ``out`` is one of ``inputs`` or names the same file (a symlink, a hard
    link: :func:`~gpu_jiggle.whole_files.same_file`): a bake never writes over what it reads."""
    for source in inputs:
        if same_file(out, source):
            same = "" if str(Path(out)) == str(Path(source)) else f" (the same file as {source})"
            raise ValueError(f"out = {str(out)!r}{same}: is an input of the bake; a bake never writes over what it "
                             f"reads; give another output name")


def _positive(name, value):
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} = {value!r}: expected a finite number > 0")
    return v

"""Built-in motions for characters without clips: idle sway, head turn, walk cycle, head shake.

A file with no animation (or ``--animation none``) still needs its springs shaken to be
seen and baked. :func:`builtin_motion` makes a :class:`Motion`: a looping
:class:`~gpu_jiggle.character.pose.animation.Clip` of LINEAR keyframes (:data:`KEY_RATE` keys per
second over one period, or :data:`KEY_RATES`) that the pipeline plays and the bake writes like any clip. It moves
the joints a character has:

- the **root nodes** (every node without a parent but a skinned mesh's, whose transform
  glTF ignores), always: each root's transform is
  multiplied in world space by a rigid motion about the **pivot**, the centre of the
  rest-pose bounds at floor height, so that several roots move as one body;
- a **head** joint: a VRM's humanoid head bone, else one that :func:`find_head` finds by
  name (``head``/``Head`` variants such as ``b_Head_05``, the VRM humanoid ``J_Bip_C_Head``,
  else the highest ``neck`` joint): turned about the world's vertical and lateral axes
  through its own pivot.

The motions (periods in :data:`PERIODS`; amplitudes in :data:`AMPLITUDES`, lengths in units
of the rest-pose bounds' diagonal so they suit a mouse or a giant):

- ``idle``: the body shifts its weight from side to side (a quick shift, then a hold:
  ``tanh`` of a sine), turning and rolling with it, and breathes; the head looks about and
  nods;
- ``turn``: the head turns left and right, quickly, holding each side (``tanh`` of a sine);
  the body turns a little with it, or the whole turn when there is no head;
- ``shake``: the head shakes "no" twice in a second (±30°, 2 Hz), then holds still for two
  seconds, so that what the springs do after it stops is seen (the whole body turns when
  there is no head);
- ``walk``: a stride on the root: the body bobs twice per stride, sways, turns and rolls with
  each step, and travels forward (+z, the front of a glTF asset, section 3.4) at
  ``speed`` (:attr:`Motion.speed`, length unit/s), which
  :func:`~gpu_jiggle.character.travel.make_pipeline` uses as the travel speed.

:func:`with_motion` gives a copy of the character whose file holds the motion as one more
animation (its keyframes in a new buffer), so that :func:`~gpu_jiggle.character.baking.run.bake`
writes it, with the springs baked into it, like any clip of the file.

Angles are radians, times seconds, lengths the model's unit.
"""
from __future__ import annotations

import base64
import copy
import math
import re

import numpy as np

from ..sim.validation import closest_name
from .pose import quat
from .pose.animation import Channel, Clip, Sampler
from .gltf.morph import posed_positions
from .gltf.vrm import humanoid_bones

__all__ = ["MOTIONS", "Motion", "builtin_motion", "find_head", "with_motion", "KEY_RATE", "KEY_RATES", "PERIODS",
           "AMPLITUDES"]

MOTIONS = ("idle", "turn", "walk", "shake")
KEY_RATE = 30.0  # keys per second
#: Motions keyed more finely: the shake's quick turns at 30 keys/s would put kinks in the head's
#: path (steps in its angular velocity) between the frames of some frame rates and not others.
KEY_RATES = {"shake": 120.0}
PERIODS = {"idle": 3.0, "turn": 4.0, "walk": 1.0, "shake": 3.0}  # seconds per loop (walk: one stride, two steps)
AMPLITUDES = {
    # lengths in rest-pose diagonals, angles in degrees
    "idle": dict(sway=0.03, breathe=0.006, yaw=6.0, roll=3.0, head_yaw=20.0, head_nod=6.0, sharpness=3.0),
    "turn": dict(body_yaw=12.0, head_yaw=50.0, no_head_yaw=45.0, sharpness=3.0),
    "walk": dict(bob=0.03, sway=0.02, yaw=5.0, roll=3.0, pitch=2.0, head_yaw=-3.0, speed=0.6),
    "shake": dict(head_yaw=30.0, no_head_yaw=20.0, rate=2.0, shakes=2),
}
FORWARD = np.array([0.0, 0.0, 1.0])  # glTF: the front of an asset faces +z
UP = np.array([0.0, 1.0, 0.0])
LATERAL = np.array([1.0, 0.0, 0.0])
_HEAD_EXCLUDED = ("end", "top", "tip", "nub", "null", "target", "ik")  # helper bones past the head


class Motion(Clip):
    """A built-in motion as a clip (module docstring).

    Attributes (besides the clip's): kind: one of :data:`MOTIONS`. roots: (R,) int64 the
    root nodes moved. head: the head node moved, or None. pivot: (3,) float64 world, the
    point the body turns about. speed: length unit/s the character should travel at (0 but
    for ``walk``). direction: (3,) unit world travel direction.
    """

    def __init__(self, name, channels, kind, roots, head, pivot, speed, direction):
        super().__init__(name, channels)
        self.kind = kind
        self.roots = np.asarray(roots, np.int64)
        self.head = head
        self.pivot = np.asarray(pivot, np.float64)
        self.speed = float(speed)
        self.direction = np.asarray(direction, np.float64)

    def __repr__(self):
        return f"Motion({self.name!r}, channels={len(self.channels)}, duration={self.duration:g} s)"


def find_head(skeleton) -> int | None:
    """The node that turns as the head: the shallowest whose name has ``head`` as a word
    part (``Head``, ``b_Head_05``, ``J_Bip_C_Head``, ``mixamorig:Head``; not ``HeadTop_End``
    or other helper bones past it), else the deepest whose name has ``neck``; None when
    there is neither."""
    depth = np.zeros(skeleton.node_count, np.int64)
    for i in skeleton.order:
        p = skeleton.parents[i]
        depth[i] = 0 if p < 0 else depth[p] + 1

    def words(name):
        # split snake_case, camelCase, digits and separators into lower-case parts
        return [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)]

    heads, necks = [], []
    for i, name in enumerate(skeleton.names):
        parts = words(name)
        if any(x in parts for x in _HEAD_EXCLUDED):
            continue
        if "head" in parts:
            heads.append(i)
        elif "neck" in parts:
            necks.append(i)
    if heads:
        return min(heads, key=lambda i: (depth[i], i))
    if necks:
        return max(necks, key=lambda i: (depth[i], -i))
    return None


def _rest_bounds(character):
    """(low (3,), high (3,)) of the rest pose: the meshes' posed vertices, else the nodes'
    positions."""
    sk = character.skeleton
    world = sk.world_matrices(sk.rest_pose())
    points = [posed_positions(character, m, world) for m in character.meshes]
    points = np.concatenate(points) if points else world[:, :3, 3]
    points = points[np.isfinite(points).all(axis=1)]
    if not len(points):
        return np.zeros(3), np.zeros(3)
    return points.min(axis=0), points.max(axis=0)


def _profiles(kind: str, phase: np.ndarray, has_head: bool):
    """Per key: body translation (K, 3) in diagonals, body (yaw, roll, pitch) (K, 3) and head
    (yaw, pitch) (K, 2) in degrees, at ``phase`` (K,) radians."""
    a = AMPLITUDES[kind]
    zero = np.zeros_like(phase)
    if kind == "idle":
        shift = np.tanh(a["sharpness"] * np.sin(phase)) / math.tanh(a["sharpness"])
        look = np.tanh(a["sharpness"] * np.sin(phase + math.pi / 2)) / math.tanh(a["sharpness"])
        move = np.stack([a["sway"] * shift, a["breathe"] * 0.5 * (1 - np.cos(2 * phase)), zero], axis=1)
        body = np.stack([a["yaw"] * shift, a["roll"] * shift, zero], axis=1)
        head = np.stack([a["head_yaw"] * look, a["head_nod"] * np.sin(2 * phase)], axis=1)
    elif kind == "turn":
        p = np.tanh(a["sharpness"] * np.sin(phase)) / math.tanh(a["sharpness"])
        move = np.zeros((len(phase), 3))
        body = np.stack([(a["body_yaw"] if has_head else a["no_head_yaw"]) * p, zero, zero], axis=1)
        head = np.stack([a["head_yaw"] * p, zero], axis=1)
    elif kind == "shake":
        # the head shakes "no" (shakes cycles at rate Hz) from the start of the loop, then holds
        t = phase * PERIODS["shake"] / (2 * math.pi)
        p = np.where(t < a["shakes"] / a["rate"], np.sin(2 * math.pi * a["rate"] * t), 0.0)
        move = np.zeros((len(phase), 3))
        body = np.stack([zero if has_head else a["no_head_yaw"] * p, zero, zero], axis=1)
        head = np.stack([a["head_yaw"] * p, zero], axis=1)
    else:  # walk
        move = np.stack([a["sway"] * np.sin(phase), a["bob"] * 0.5 * (1 - np.cos(2 * phase)), zero], axis=1)
        body = np.stack([a["yaw"] * np.sin(phase), a["roll"] * np.sin(phase), a["pitch"] * np.sin(2 * phase)], axis=1)
        head = np.stack([a["head_yaw"] * np.sin(phase), zero], axis=1)
    return move, body, head


def _turns(angles_degrees, axes) -> np.ndarray:
    """(K, 4) the product of rotations about ``axes`` (world) by ``angles_degrees`` (K, n),
    the first axis outermost."""
    out = np.tile(quat.IDENTITY, (len(angles_degrees), 1))
    for k, axis in enumerate(axes):
        out = quat.multiply(out, quat.from_axis_angle(np.tile(axis, (len(out), 1)), np.radians(angles_degrees[:, k])))
    return out


def builtin_motion(character, kind: str = "idle") -> Motion:
    """The built-in motion ``kind`` (one of :data:`MOTIONS`) for ``character``, as a looping
    :class:`Motion` named ``motion_<kind>`` (module docstring).

    Raises:
        ValueError: an unknown kind (listing them), or a file without nodes.
    """
    if kind not in MOTIONS:
        close = closest_name(kind, MOTIONS)
        raise ValueError(f"motion = {kind!r}: expected one of {', '.join(MOTIONS)}"
                         f"{f'; did you mean {close!r}?' if close else ''}")
    sk = character.skeleton
    if sk.node_count == 0:
        raise ValueError(f"{character.path.name}: the file has no nodes for a motion to move")
    low, high = _rest_bounds(character)
    size = float(np.linalg.norm(high - low)) or 1.0
    pivot = np.array([(low[0] + high[0]) / 2, low[1], (low[2] + high[2]) / 2])
    head = humanoid_bones(character.json).get("head")
    head = head if head is not None and 0 <= head < sk.node_count else find_head(sk)
    roots = np.flatnonzero(sk.parents < 0)
    nodes = character.json.get("nodes", [])
    # a skinned mesh's node transform moves nothing (glTF 2.0, section 3.7.3): leave it be
    unskinned = [r for r in roots if not (r < len(nodes) and "skin" in nodes[r])]
    roots = np.asarray(unskinned or roots, np.int64)
    period = PERIODS[kind]
    rate = KEY_RATES.get(kind, KEY_RATE)
    times = np.arange(int(round(period * rate)) + 1) / rate
    move, body, head_angles = _profiles(kind, 2 * math.pi * times / period, head is not None)
    turn = _turns(body, (UP, FORWARD, LATERAL))      # yaw, then roll, then pitch, in world axes
    rest = sk.rest_pose()
    channels = []
    for r in roots:
        # world = D · rest_local with D = translate(pivot + move) · turn · translate(-pivot)
        t = pivot + quat.rotate(turn, rest.translation[r] - pivot) + size * move
        q = quat.normalize(quat.multiply(turn, np.tile(rest.rotation[r], (len(times), 1))))
        channels += [Channel(int(r), "translation", Sampler(times, t, "LINEAR")),
                     Channel(int(r), "rotation", Sampler(times, q, "LINEAR"))]
    if head is not None and head not in roots:
        parent = sk.parents[head]
        parent_world = sk.world_rotations(rest)[parent]
        world_turn = _turns(head_angles, (UP, LATERAL))
        # the turn in world axes carried into the parent's frame: conj(P) · turn · P · local
        local = quat.multiply(quat.multiply(quat.conjugate(parent_world), world_turn),
                              quat.multiply(parent_world, rest.rotation[head]))
        channels.append(Channel(int(head), "rotation", Sampler(times, quat.normalize(local), "LINEAR")))
    speed = AMPLITUDES["walk"]["speed"] * size if kind == "walk" else 0.0
    return Motion(f"motion_{kind}", channels, kind, roots, head, pivot, speed, FORWARD)


FLOAT = 5126


def with_motion(character, motion: Motion):
    """A new :class:`~gpu_jiggle.character.gltf.loader.Character` of the same file with ``motion``
    appended to its JSON as the last animation (named ``motion.name``): its key times and
    values as float32 accessors in one more buffer (a ``data:`` URI). A moved node given by
    a ``matrix`` gets its rest translation, rotation and scale instead, since glTF 2.0
    (section 3.11) animates only TRS nodes. Everything else is the file's as loaded.

    Raises:
        GltfError: as :meth:`Character.load <gpu_jiggle.character.gltf.loader.Character.load>` (the
        copy is checked like a file).
    """
    doc = copy.deepcopy(character.json)
    rest = character.skeleton.rest
    blob = bytearray()
    views = doc.setdefault("bufferViews", [])
    accessors = doc.setdefault("accessors", [])
    buffer = len(doc.setdefault("buffers", []))

    def append(values, kind, bounds=False) -> int:
        data = np.ascontiguousarray(values, np.float32)
        blob.extend(b"\0" * (-len(blob) % 4))
        views.append({"buffer": buffer, "byteOffset": len(blob), "byteLength": data.nbytes})
        blob.extend(data.tobytes())
        acc = {"bufferView": len(views) - 1, "componentType": FLOAT, "count": len(data), "type": kind}
        if bounds:
            acc["min"], acc["max"] = [float(data.min())], [float(data.max())]
        accessors.append(acc)
        return len(accessors) - 1

    samplers, channels, inputs = [], [], {}
    for c in motion.channels:
        key = id(c.sampler.times)
        if key not in inputs:
            inputs[key] = append(c.sampler.times, "SCALAR", bounds=True)
        output = append(c.sampler.values, "VEC4" if c.path == "rotation" else "VEC3")
        samplers.append({"input": inputs[key], "output": output, "interpolation": c.sampler.interpolation})
        channels.append({"sampler": len(samplers) - 1, "target": {"node": c.node, "path": c.path}})
        node = doc["nodes"][c.node]
        if node.get("matrix") is not None:
            del node["matrix"]
            node.update(translation=rest.translation[c.node].tolist(), rotation=rest.rotation[c.node].tolist(),
                        scale=rest.scale[c.node].tolist())
    doc.setdefault("animations", []).append({"name": motion.name, "samplers": samplers, "channels": channels})
    data = bytes(blob)
    doc["buffers"].append({"byteLength": len(data),
                           "uri": "data:application/octet-stream;base64," + base64.b64encode(data).decode("ascii")})
    return type(character)(character.path, doc, list(character.buffers) + [data], character.limits)

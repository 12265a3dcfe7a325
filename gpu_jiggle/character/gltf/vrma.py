"""VRM animations (``.vrma``, ``VRMC_vrm_animation``) played on a VRM avatar's humanoid bones.

A ``.vrma`` is a binary glTF whose nodes form a humanoid in its own rest pose, named by
``extensions.VRMC_vrm_animation.humanoid.humanBones``, with a clip on them. Each humanoid bone's
rotation is carried over as the turn it makes in the world from its rest, with its parent at
rest: ``Δ = P · q · W⁻¹`` (P its parent's rest world rotation in the animation, W its own, q its
animated local rotation); on the avatar the same turn gives the local rotation
``P'⁻¹ · Δ · W'`` (P', W' the avatar's rest world rotations of the bone's parent and the bone).
So each bone turns in the world as in the animation, whatever the two rest poses' local axes,
as long as both rest poses are alike (T-poses). The hips' translation is carried as its move
from rest in the world, scaled by the two hips' heights. VRM 0.x avatars face -z where VRM 1.0
and its animations face +z: their turns and moves are turned half round the vertical.
Expressions and look-at (the animation's other channels) are not played.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..pose import quat
from ..pose.animation import Channel, Clip, Sampler
from .loader import Character
from .vrm import humanoid_bones

#: Half a turn about +y: VRM 0.x avatars face -z.
HALF_TURN = np.array([0.0, 1.0, 0.0, 0.0])


class VrmaError(ValueError):
    """A VRM animation that cannot be played on an avatar (names the file and why)."""


def vrma_clip(avatar: Character, path) -> Clip:
    """The animation of the ``.vrma`` at ``path`` as a clip of ``avatar``'s nodes, named
    ``vrma_<file stem>``: a rotation channel per humanoid bone both have and the animation
    turns, and the hips' translation.

    Raises:
        FileNotFoundError: no such file. GltfError: a bad glTF. VrmaError: no
        VRMC_vrm_animation humanoid, no clip, an avatar without humanoid bones, or no bone
        in common that the animation moves.
    """
    path = Path(path)
    animation = Character.load(path)
    bones = humanoid_bones({"extensions": {"VRMC_vrm_animation":
                                           (animation.json.get("extensions") or {}).get("VRMC_vrm_animation")}})
    if not bones:
        raise VrmaError(f"{path}: no extensions.VRMC_vrm_animation.humanoid.humanBones: not a VRM animation")
    if not animation.clips:
        raise VrmaError(f"{path}: the file has no animation")
    targets = humanoid_bones(avatar.json)
    if not targets:
        raise VrmaError(f"{avatar.path}: no VRM humanoid bones to play {path.name} on")
    node_bone = {node: name for name, node in bones.items()}
    src, dst = animation.skeleton, avatar.skeleton
    src_world = src.world_rotations(src.rest)
    dst_world = dst.world_rotations(dst.rest)
    turn = HALF_TURN if "VRM" in (avatar.json.get("extensions") or {}) else quat.IDENTITY  # VRM 0.x faces -z
    channels = []
    for channel in animation.clips[0].channels:
        bone = node_bone.get(channel.node)
        if bone not in targets or not 0 <= targets[bone] < dst.node_count:
            continue
        node, target = channel.node, targets[bone]
        sampler = channel.sampler
        if channel.path == "rotation":
            parent = src.parents[node]
            before = quat.IDENTITY if parent < 0 else src_world[parent]
            after = quat.conjugate(src_world[node])
            dst_parent = dst.parents[target]
            onto = quat.IDENTITY if dst_parent < 0 else dst_world[dst_parent]
            left = quat.multiply(quat.conjugate(onto), quat.multiply(turn, before))
            right = quat.multiply(after, quat.multiply(quat.conjugate(turn), dst_world[target]))
            values = quat.multiply(quat.multiply(left, sampler.values), right)  # keys and tangents alike
            channels.append(Channel(target, "rotation", Sampler(sampler.times, values, sampler.interpolation)))
        elif channel.path == "translation" and bone == "hips":
            channels.append(Channel(target, "translation",
                                    Sampler(sampler.times, _hips_moves(src, dst, node, target, sampler.values, turn,
                                                                       (path, avatar.path)), sampler.interpolation)))
    if not channels:
        raise VrmaError(f"{path}: none of the humanoid bones it animates is a bone of {avatar.path.name}")
    return Clip(f"vrma_{path.stem}", channels)


#: The largest ratio of the two hips' rest heights a clip is scaled by (either way): a person's
#: hips are within a factor of a few of another's; past this one the file's rest pose is broken.
MAX_HIPS_SCALE = 1000.0


def _hips_moves(src, dst, node, target, values, turn, paths):
    """The animation's hips translations (keys, or CUBICSPLINE rows of in-tangent, value,
    out-tangent) as the avatar's: the world move from rest, scaled by the hips' heights and
    turned with the avatar, in the avatar hips' parent's space (tangents as moves alone)."""
    src_rest, dst_rest = src.world_matrices(src.rest), dst.world_matrices(dst.rest)
    parent, dst_parent = src.parents[node], dst.parents[target]
    to_world = src_rest[parent] if parent >= 0 else np.eye(4)
    from_world = np.linalg.inv(dst_rest[dst_parent]) if dst_parent >= 0 else np.eye(4)
    scale = dst_rest[target, 1, 3] / src_rest[node, 1, 3] if src_rest[node, 1, 3] > 0 else 1.0
    if not 1.0 / MAX_HIPS_SCALE <= abs(scale) <= MAX_HIPS_SCALE:
        raise VrmaError(f"{paths[0]}: its hips rest at height {src_rest[node, 1, 3]:g} and those of "
                        f"{paths[1].name} at {dst_rest[target, 1, 3]:g}: the moves would be scaled by {scale:g}, "
                        f"beyond a factor of {MAX_HIPS_SCALE:g} either way (a broken rest pose?)")
    linear = from_world[:3, :3] @ quat.to_matrix(turn) @ (scale * to_world[:3, :3])
    rest_local = from_world[:3, :3] @ dst_rest[target, :3, 3] + from_world[:3, 3]
    out = values @ linear.T
    if values.ndim == 3:  # CUBICSPLINE: the values move from rest; the tangents are rates
        out[:, 1] += rest_local - linear @ src.rest.translation[node]
    else:
        out += rest_local - linear @ src.rest.translation[node]
    return out

"""Morph targets (glTF 2.0 section 3.7.2.2 "Morph Targets") and posed vertices on the host.

A primitive's targets move its vertices by weighted offsets before skinning:
``position = base + Σ_t w_t · ΔP_t`` and ``normal = normalize(base + Σ_t w_t · ΔN_t)``.
:func:`read_targets` reads them at load (``targets[t].POSITION`` and ``.NORMAL``; a target
without one offsets nothing there); :func:`default_weights` gives a node's weights when no
animation drives them: the node's ``weights``, else the mesh's ``weights``, else zeros. An
animation's ``weights`` channel replaces them while it plays (section 3.11;
:meth:`Pipeline.morph_weights <gpu_jiggle.character.pipeline.Pipeline.morph_weights>`).

A primitive without a ``NORMAL`` attribute gets normals computed from its triangles
(:func:`~.loader.vertex_normals`); its targets' normal offsets are then computed too: the
normals of the fully morphed shape (``base + ΔP_t``) minus the base normals.

:func:`posed_positions` is the host's version of the vertex shader (morph, then linear
blend skinning), for bounds, colours and tests.
"""
from __future__ import annotations

import numpy as np

from .access import read_accessor
from .io import fail, pointer

__all__ = ["read_targets", "default_weights", "morphed_positions", "posed_positions"]


def read_targets(character, where: str, prim: dict, positions, indices, computed_normals=None):
    """``(positions (T, V, 3) float32, normals (T, V, 3) float32 or None)``: the offsets of
    the primitive's ``T`` targets, or ``(None, None)`` without targets.

    Args:
        character: the :class:`~.loader.Character` being loaded. where: the primitive's JSON
            pointer. prim: its JSON. positions: (V, 3) float32 base positions. indices: (I,)
            its triangle list.
        computed_normals: None when the file gives the primitive's normals; else the
            function ``(positions, indices) → (V, 3)`` that computed them, which then gives
            the targets' normal offsets too.

    Raises:
        GltfError: a target offset that is not finite.
    """
    targets = prim.get("targets") or []
    if not targets:
        return None, None
    count = len(positions)
    dp = np.zeros((len(targets), count, 3), np.float32)
    dn = np.zeros((len(targets), count, 3), np.float32)
    any_normal = False
    for t, target in enumerate(targets):
        for key, out in (("POSITION", dp), ("NORMAL", dn)):
            if target.get(key) is None:
                continue
            values = np.asarray(read_accessor(character, target[key]), np.float32)
            if not np.isfinite(values).all():
                raise fail(character.path, f"{where}/targets/{t}/{key}", f"morph target {t} {key} holds values "
                                                                         f"that are not finite")
            out[t] = values
            any_normal |= key == "NORMAL"
    if computed_normals is not None:
        base = computed_normals(positions, indices)
        for t in range(len(targets)):
            dn[t] = computed_normals(positions + dp[t], indices) - base
        any_normal = True
    return dp, (dn if any_normal else None)


def default_weights(character, node_index: int, mesh_index: int, target_count: int) -> np.ndarray:
    """(T,) float64: node ``weights``, else mesh ``weights``, else zeros (section 3.7.2.2).

    Raises:
        GltfError: weights whose length is not the number of morph targets.
    """
    node = character.json["nodes"][node_index]
    mesh = character.json["meshes"][mesh_index]
    for owner, where in ((node, pointer("nodes", node_index, "weights")), (mesh, pointer("meshes", mesh_index,
                                                                                          "weights"))):
        weights = owner.get("weights")
        if weights is None:
            continue
        if len(weights) != target_count:
            raise fail(character.path, where, f"{len(weights)} weights for a mesh with {target_count} morph targets; "
                                              f"glTF 2.0 requires one per target")
        return np.asarray(weights, np.float64)
    return np.zeros(target_count, np.float64)


def morphed_positions(mesh, weights=None) -> np.ndarray:
    """(V, 3) float64 bind-pose positions of ``mesh`` (a :class:`~.loader.MeshPrimitive`)
    with its morph targets at ``weights`` (T,) (default: the mesh's default weights).

    Raises:
        ValueError: weights of the wrong length.
    """
    p = mesh.positions.astype(np.float64)
    if mesh.morph_positions is None:
        return p
    w = mesh.morph_weights if weights is None else np.asarray(weights, np.float64).reshape(-1)
    if w.shape != (len(mesh.morph_positions),):
        raise ValueError(f"weights: expected {len(mesh.morph_positions)} morph weights for {mesh.name}, "
                         f"got shape {w.shape}")
    return p + np.einsum("t,tvk->vk", w, mesh.morph_positions.astype(np.float64))


def posed_positions(character, mesh, world_matrices, weights=None) -> np.ndarray:
    """(V, 3) float64 world positions of ``mesh`` under node ``world_matrices`` (N, 4, 4):
    morphed by ``weights`` (see :func:`morphed_positions`), then skinned (linear blend, the
    vertex shader's formula) or, without a skin, placed by the mesh node's world matrix."""
    morphed = morphed_positions(mesh, weights)
    p = np.concatenate([morphed, np.ones((len(morphed), 1))], axis=1)
    if mesh.skin is None or mesh.joints is None or mesh.weights is None:
        return (p @ np.asarray(world_matrices)[mesh.node].T)[:, :3]
    joint_matrices = character.skins[mesh.skin].skinning_matrices(world_matrices)
    blended = np.einsum("vk,vkij->vij", mesh.weights.astype(np.float64), joint_matrices[mesh.joints])
    return np.einsum("vij,vj->vi", blended, p)[:, :3]

"""A glTF character's mesh primitives on the GPU: morphed, skinned, with their materials.

:class:`SkinnedMeshes` uploads every triangle-list primitive of a
:class:`~gpu_jiggle.character.gltf.loader.Character` once (positions, normals, the base colour
texture's UV set, joints, weights, ``COLOR_0``; the morph target offsets in one float texture
per primitive) and draws it each frame with ``shaders/draw/skinned_mesh.vert/.frag``:

- morph targets on the GPU before skinning, positions and normals (glTF 2.0 section
  3.7.2.2), weighted by the frame's per-node weights (``Frame.morph_weights``) or, without
  them, each node's default weights;
- linear blend skinning by the skin's joint matrices ``world(joint) · inverse_bind``
  (section 3.7.3), or the node's world matrix for a primitive without a skin;
- the material (:class:`~gpu_jiggle.character.gltf.material.Material`): base colour factor ×
  texture (its sampler's wrap and filters, KHR_texture_transform) × ``COLOR_0``; alpha mode
  OPAQUE, MASK (``alphaCutoff``) or BLEND; ``doubleSided`` (back faces culled otherwise, the
  winding flipped for an unskinned node whose world matrix mirrors, section 3.7.4);
  KHR_materials_unlit (no lighting).

Draw order (section 3.9.4): OPAQUE and MASK primitives first, in the file's order, with depth
writes; then BLEND primitives from the farthest to the nearest (by the camera-space depth of
their posed centre), depth-tested without depth writes, alpha-blended over what is drawn.
The base colour texture is used as it is stored (sRGB values blended and lit as they are,
like the rest of the scene).
"""
from __future__ import annotations


import moderngl
import numpy as np

from ..character.gltf.material import CLAMP_TO_EDGE, MIRRORED_REPEAT
from ..character.gltf.morph import posed_positions
from ..gl.glsl import program
from .draw2d import rgba
from .draw3d import Camera

__all__ = ["SkinnedMeshes", "skin_on_host", "MORPH_TEXTURE_WIDTH", "TRIANGLES"]

LIGHT_DIRECTION = (0.45, 0.85, 0.35)
SKY = "#cfe3f2"
GROUND_LIGHT = "#6d6352"
NO_FOG = (1e9, 2e9)
MESH_HIGHLIGHT = 0.08              # the meshes' specular highlight
TEXTURE_ANISOTROPY = 8.0           # anisotropic filtering of the base-colour textures (with mipmaps)
TRIANGLES = 4                      # the glTF primitive mode drawn (triangle lists)
MORPH_TEXTURE_WIDTH = 4096         # texels per row of a morph target texture
ALPHA_MODES = {"OPAQUE": 0, "MASK": 1, "BLEND": 2}  # as in skinned_mesh.frag
FILTERS = {9728: moderngl.NEAREST, 9729: moderngl.LINEAR, 9984: moderngl.NEAREST_MIPMAP_NEAREST,
           9985: moderngl.LINEAR_MIPMAP_NEAREST, 9986: moderngl.NEAREST_MIPMAP_LINEAR,
           9987: moderngl.LINEAR_MIPMAP_LINEAR}


def skin_on_host(character, mesh, world_matrices, morph_weights=None) -> np.ndarray:
    """(V, 3) float64 world positions of ``mesh`` under node ``world_matrices`` (N, 4, 4),
    morphed by ``morph_weights`` (T,) (default: the mesh's default weights) and skinned: the
    vertex shader's formula in numpy (:func:`~gpu_jiggle.character.gltf.morph.posed_positions`)."""
    return posed_positions(character, mesh, world_matrices, morph_weights)


def _column_major(matrices) -> bytes:
    m = np.asarray(matrices, np.float64)
    return np.ascontiguousarray(np.swapaxes(m, -1, -2), np.float32).tobytes()


class SkinnedMeshes:
    """Every triangle-list primitive of a character in GPU buffers, drawn morphed, skinned and
    shaded by its material (module docstring).

    Args:
        ctx: a moderngl context (OpenGL ≥ 3.3). character: a loaded
            :class:`~gpu_jiggle.character.gltf.loader.Character`.

    Raises:
        ValueError: a primitive's morph targets need a texture taller than the context's
            ``GL_MAX_TEXTURE_SIZE``.
    """

    def __init__(self, ctx, character):
        self.ctx = ctx
        self.character = character
        self.most_joints = most_joints = max([len(s.joints) for s in character.skins] + [1])
        most_targets = max([len(m.morph_positions) for m in character.meshes if m.morph_positions is not None] + [1])
        self.program = program(ctx, "draw/skinned_mesh.vert", "draw/skinned_mesh.frag",
                               vertex_defines={"MAX_JOINTS": most_joints, "MAX_TARGETS": most_targets})
        self._white = ctx.texture((1, 1), 4, bytes([255, 255, 255, 255]))
        self._no_targets = ctx.texture((1, 1), 3, np.zeros(3, np.float32).tobytes(), dtype="f4")
        self._textures = {}
        self._parts = []
        for mesh in character.meshes:
            if mesh.mode == TRIANGLES:  # only triangle lists are drawn
                self._parts.append(self._upload(mesh))

    def _upload(self, mesh) -> dict:
        ctx = self.ctx
        count = len(mesh.positions)
        material = mesh.material
        joints = mesh.joints if mesh.joints is not None else np.zeros((count, 4), np.uint16)
        weights = mesh.weights if mesh.weights is not None else np.tile([1.0, 0, 0, 0], (count, 1))
        uvs = mesh.uv_sets[material.texcoord] if material.texcoord < len(mesh.uv_sets) else np.zeros((count, 2))
        arrays = [(mesh.positions, np.float32, "3f", "in_position"), (mesh.normals, np.float32, "3f", "in_normal"),
                  (uvs, np.float32, "2f", "in_uv"), (joints, np.uint32, "4u", "in_joints"),
                  (weights, np.float32, "4f", "in_weights")]
        if mesh.colors is not None:
            arrays.append((mesh.colors, np.float32, "4f", "in_colour"))
        arrays = [a for a in arrays if a[3] in self.program]  # unused inputs are dropped
        buffers = [ctx.buffer(np.ascontiguousarray(a, dtype).tobytes()) for a, dtype, _, _ in arrays]
        layout = [(b, fmt, name) for b, (_, _, fmt, name) in zip(buffers, arrays)]
        index = ctx.buffer(np.ascontiguousarray(mesh.indices, np.uint32).tobytes())
        vao = ctx.vertex_array(self.program, layout, index_buffer=index, index_element_size=4)
        texture = None if material.base_color_texture is None else self._texture(material)
        morph = self._morph_texture(mesh)
        # for sorting BLEND primitives: the bind-pose centre, its morph offsets and each joint's share
        centre = (mesh.positions.min(axis=0).astype(np.float64) + mesh.positions.max(axis=0)) / 2
        offsets = None if mesh.morph_positions is None else mesh.morph_positions.astype(np.float64).mean(axis=1)
        share = None
        if mesh.skin is not None and mesh.joints is not None and mesh.weights is not None:
            share = np.zeros(len(self.character.skins[mesh.skin].joints))
            np.add.at(share, mesh.joints.reshape(-1), mesh.weights.astype(np.float64).reshape(-1))
            share /= share.sum() or 1.0
        return dict(mesh=mesh, vao=vao, buffers=buffers + [index], texture=texture, morph=morph,
                    count=len(mesh.indices), centre=centre, offsets=offsets, share=share)

    def _texture(self, material):
        """The base colour texture with the material's sampler (shared by primitives with the
        same image and sampler)."""
        image = material.base_color_texture
        key = (id(image), material.wrap, material.min_filter, material.mag_filter)
        if key not in self._textures:
            # row 0 is the top: uploaded as is, it meets glTF UVs
            texture = self.ctx.texture((image.shape[1], image.shape[0]), 4, np.ascontiguousarray(image).tobytes())
            if material.mipmaps:
                texture.build_mipmaps()
                texture.anisotropy = TEXTURE_ANISOTROPY
            texture.filter = (FILTERS[material.min_filter], FILTERS[material.mag_filter])
            texture.repeat_x = material.wrap[0] != CLAMP_TO_EDGE
            texture.repeat_y = material.wrap[1] != CLAMP_TO_EDGE
            self._textures[key] = (texture, image)  # the image is held so that its id stays unique
        return self._textures[key][0]

    def _morph_texture(self, mesh):
        """An RGB32F texture of the primitive's target offsets (positions, then normals), or
        None without targets."""
        if mesh.morph_positions is None:
            return None
        rows = [mesh.morph_positions] + ([mesh.morph_normals] if mesh.morph_normals is not None else [])
        data = np.concatenate([r.reshape(-1, 3) for r in rows]).astype(np.float32)
        width = min(len(data), MORPH_TEXTURE_WIDTH)
        height = -(-len(data) // width)
        limit = int(self.ctx.info["GL_MAX_TEXTURE_SIZE"])
        if height > limit or width > limit:
            raise ValueError(f"{mesh.name}: {len(mesh.morph_positions)} morph targets of {len(mesh.positions)} vertices "
                             f"need a {width} × {height} texture; this context allows at most {limit} × {limit}")
        data = np.concatenate([data, np.zeros((width * height - len(data), 3), np.float32)])
        texture = self.ctx.texture((width, height), 3, data.tobytes(), dtype="f4")
        texture.filter = (moderngl.NEAREST, moderngl.NEAREST)
        return texture

    def draw(self, framebuffer, camera: Camera, world_matrices, origin=(0.0, 0.0, 0.0),
             light_direction=LIGHT_DIRECTION, sky=SKY, ground=GROUND_LIGHT, fog=NO_FOG, morph_weights=None) -> None:
        """Draw every primitive morphed by ``morph_weights`` ({node: (T,)}; a node missing from
        it, or None, takes its default weights) and skinned by node ``world_matrices``
        (N, 4, 4) float64, all positions taken relative to ``origin`` (3,) (the camera must be
        in that frame too).

        Raises:
            ValueError: weights of another length than the node's mesh has targets.
        """
        world = np.array(world_matrices, np.float64)
        world[:, :3, 3] -= np.asarray(origin, np.float64)
        morph_weights = morph_weights or {}
        prog = self.program
        _, _, width, height = framebuffer.viewport
        prog["u_view_projection"].write(_column_major(camera.view_projection(width / height)))
        light = np.asarray(light_direction, np.float64)
        uniforms = {"u_eye": tuple(map(float, camera.eye)), "u_light_direction": tuple(map(float, light / np.linalg.norm(light))),
                    "u_sky_colour": tuple(map(float, rgba(sky)[:3])), "u_ground_colour": tuple(map(float, rgba(ground)[:3])),
                    "u_fog": tuple(map(float, fog)), "u_highlight": MESH_HIGHLIGHT, "u_base_colour_texture": 0,
                    "u_morph_targets": 1}
        for key, value in uniforms.items():
            if key in prog:
                prog[key].value = value
        skins = [s.skinning_matrices(world) for s in self.character.skins]
        opaque = [p for p in self._parts if p["mesh"].material.alpha_mode != "BLEND"]
        blended = [p for p in self._parts if p["mesh"].material.alpha_mode == "BLEND"]
        if blended:
            view = camera.view()
            depth = [-(view @ np.append(self._centre(p, world, skins, morph_weights), 1.0))[2] for p in blended]
            blended = [blended[i] for i in np.argsort(depth, kind="stable")[::-1]]  # farthest first
        framebuffer.use()
        ctx = self.ctx
        ctx.enable(moderngl.DEPTH_TEST)
        try:
            for part in opaque:
                self._draw_part(part, world, skins, morph_weights)
            if blended:
                ctx.enable(moderngl.BLEND)
                ctx.blend_func = (moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA)
                framebuffer.depth_mask = False
                for part in blended:
                    self._draw_part(part, world, skins, morph_weights)
        finally:
            framebuffer.depth_mask = True
            ctx.disable(moderngl.DEPTH_TEST | moderngl.BLEND | moderngl.CULL_FACE)
            ctx.front_face = "ccw"

    def _weights(self, mesh, morph_weights) -> np.ndarray:
        w = morph_weights.get(mesh.node)
        if w is None:
            return mesh.morph_weights
        w = np.asarray(w, np.float64).reshape(-1)
        if w.shape != mesh.morph_weights.shape:
            raise ValueError(f"morph_weights[{mesh.node}]: expected {mesh.morph_weights.size} weights for "
                             f"{mesh.name}, got {w.size}")
        return w

    def _centre(self, part, world, skins, morph_weights) -> np.ndarray:
        """(3,) the primitive's bind-pose centre, morphed and posed: by the share-weighted
        blend of its joints' matrices when skinned, else by its node's world matrix."""
        mesh = part["mesh"]
        c = part["centre"]
        if part["offsets"] is not None:
            c = c + self._weights(mesh, morph_weights) @ part["offsets"]
        m = world[mesh.node] if part["share"] is None else np.einsum("j,jik->ik", part["share"], skins[mesh.skin])
        return (m @ np.append(c, 1.0))[:3]

    def _draw_part(self, part, world, skins, morph_weights) -> None:
        prog, ctx = self.program, self.ctx
        mesh = part["mesh"]
        material = mesh.material
        skinned = part["share"] is not None
        prog["u_skinned"].value = skinned
        if skinned:
            matrices = np.asarray(skins[mesh.skin])
            if len(matrices) < self.most_joints:  # the uniform array is sized for the largest skin
                matrices = np.concatenate([matrices, np.broadcast_to(np.eye(4), (self.most_joints - len(matrices), 4, 4))])
            prog["u_joint_matrices"].write(_column_major(matrices))
        if "u_model" in prog:
            prog["u_model"].write(_column_major(world[mesh.node]))
        targets = 0 if mesh.morph_positions is None else len(mesh.morph_positions)
        values = {"u_base_colour_factor": tuple(map(float, material.base_color_factor)),
                  "u_alpha_mode": ALPHA_MODES[material.alpha_mode], "u_alpha_cutoff": float(material.alpha_cutoff),
                  "u_unlit": bool(material.unlit), "u_vertex_colours": mesh.colors is not None,
                  "u_mirrored_repeat": tuple(w == MIRRORED_REPEAT for w in material.wrap),
                  "u_morph_count": targets, "u_morph_vertices": len(mesh.positions),
                  "u_morph_normals": mesh.morph_normals is not None}
        for key, value in values.items():
            if key in prog:
                prog[key].value = value
        if "u_uv_transform" in prog:
            prog["u_uv_transform"].write(np.ascontiguousarray(material.uv_transform.T, np.float32).tobytes())
        if targets and "u_morph_weights" in prog:
            w = np.zeros(4 * prog["u_morph_weights"].array_length, np.float32)
            w[:targets] = self._weights(mesh, morph_weights)
            prog["u_morph_weights"].write(w.tobytes())
        (part["texture"] or self._white).use(0)
        (part["morph"] or self._no_targets).use(1)
        if material.double_sided:
            ctx.disable(moderngl.CULL_FACE)
        else:
            ctx.enable(moderngl.CULL_FACE)
            ctx.cull_face = "back"
            mirrored = not skinned and np.linalg.det(world[mesh.node][:3, :3]) < 0
            ctx.front_face = "cw" if mirrored else "ccw"
        part["vao"].render(moderngl.TRIANGLES, vertices=part["count"])

    def release(self) -> None:
        for part in self._parts:
            part["vao"].release()
            for b in part["buffers"]:
                b.release()
            if part["morph"] is not None:
                part["morph"].release()
        for texture, _ in self._textures.values():
            texture.release()
        self._parts, self._textures = [], {}
        for obj in (self._white, self._no_targets, self.program):
            if obj is not None:
                obj.release()
        self._white = self._no_targets = self.program = None

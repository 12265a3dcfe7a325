"""Tiny glTF files built in the tests (not a test module): quads with materials, vertex
colours and morph targets, and drawing them with the character renderer from the front."""
from __future__ import annotations

import base64
import io
import json

import numpy as np
from PIL import Image

from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.render.draw3d import Camera, OffscreenTarget
from gpu_jiggle.render.meshes import SkinnedMeshes

FLOAT, UBYTE, USHORT, UINT = 5126, 5121, 5123, 5125
NEAREST, REPEAT = 9728, 10497
SIZE = (64, 64)
# from +z, 4 units away, 30° high: the square -1.07..1.07 fills the image
FRONT = Camera(eye=np.array([0.0, 0.0, 4.0]), target=np.zeros(3), fov_y_degrees=30.0, near=0.1, far=20.0)


class Scene:
    """A glTF document being built: one buffer, a node per mesh."""

    def __init__(self):
        self.blob = bytearray()
        self.doc = {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": []}], "nodes": [], "meshes": [],
                    "accessors": [], "bufferViews": []}

    def accessor(self, values, kind: str, component: int = FLOAT, normalized: bool = False) -> int:
        dtype = {FLOAT: np.float32, UBYTE: np.uint8, USHORT: np.uint16, UINT: np.uint32}[component]
        data = np.ascontiguousarray(values, dtype)
        self.blob.extend(b"\0" * (-len(self.blob) % 4))
        self.doc["bufferViews"].append({"buffer": 0, "byteOffset": len(self.blob), "byteLength": data.nbytes})
        self.blob.extend(data.tobytes())
        acc = {"bufferView": len(self.doc["bufferViews"]) - 1, "componentType": component,
               "count": len(data), "type": kind}
        if normalized:
            acc["normalized"] = True
        if kind == "VEC3" and component == FLOAT:
            acc["min"], acc["max"] = data.min(axis=0).tolist(), data.max(axis=0).tolist()
        if kind == "SCALAR" and component == FLOAT:
            acc["min"], acc["max"] = [float(data.min())], [float(data.max())]
        self.doc["accessors"].append(acc)
        return len(self.doc["accessors"]) - 1

    def texture(self, rgba: np.ndarray, sampler: dict | None = None) -> int:
        """A PNG texture of ``rgba`` (H, W, 4) uint8, sampled NEAREST unless ``sampler`` says."""
        png = io.BytesIO()
        Image.fromarray(np.asarray(rgba, np.uint8), "RGBA").save(png, "PNG")
        images = self.doc.setdefault("images", [])
        images.append({"uri": "data:image/png;base64," + base64.b64encode(png.getvalue()).decode()})
        samplers = self.doc.setdefault("samplers", [])
        samplers.append(sampler or {"magFilter": NEAREST, "minFilter": NEAREST})
        textures = self.doc.setdefault("textures", [])
        textures.append({"source": len(images) - 1, "sampler": len(samplers) - 1})
        return len(textures) - 1

    def material(self, **fields) -> int:
        materials = self.doc.setdefault("materials", [])
        materials.append(fields)
        return len(materials) - 1

    def mesh(self, positions, indices, material=None, uvs=(), colours=None, colour_component=FLOAT,
             targets=(), weights=None, node_weights=None, translation=None) -> int:
        """One primitive on its own node (returns the node index). ``uvs``: TEXCOORD_0, _1, …;
        ``targets``: per target (V, 3) position offsets."""
        attributes = {"POSITION": self.accessor(positions, "VEC3")}
        for n, uv in enumerate(uvs):
            attributes[f"TEXCOORD_{n}"] = self.accessor(uv, "VEC2")
        if colours is not None:
            colours = np.asarray(colours)
            kind = f"VEC{colours.shape[1]}"
            attributes["COLOR_0"] = self.accessor(colours, kind, colour_component, colour_component != FLOAT)
        prim = {"attributes": attributes, "indices": self.accessor(indices, "SCALAR", UINT)}
        if material is not None:
            prim["material"] = material
        if len(targets):
            prim["targets"] = [{"POSITION": self.accessor(t, "VEC3")} for t in targets]
        mesh = {"primitives": [prim]}
        if weights is not None:
            mesh["weights"] = list(weights)
        self.doc["meshes"].append(mesh)
        node = {"mesh": len(self.doc["meshes"]) - 1}
        if node_weights is not None:
            node["weights"] = list(node_weights)
        if translation is not None:
            node["translation"] = list(translation)
        self.doc["nodes"].append(node)
        self.doc["scenes"][0]["nodes"].append(len(self.doc["nodes"]) - 1)
        return len(self.doc["nodes"]) - 1

    def quad(self, half: float = 0.8, z: float = 0.0, facing: int = 1, **kwargs) -> int:
        """A square of side 2·half at depth ``z``, facing +z (``facing`` 1) or -z (-1), UVs
        (0, 0) at the top-left corner to (1, 1) at the bottom-right."""
        positions = np.array([[-half, -half, z], [half, -half, z], [half, half, z], [-half, half, z]])
        indices = [0, 1, 2, 0, 2, 3] if facing > 0 else [0, 2, 1, 0, 3, 2]
        kwargs.setdefault("uvs", [np.array([[0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0]])])
        return self.mesh(positions, indices, **kwargs)

    def save(self, path) -> Character:
        self.doc["buffers"] = [{"byteLength": len(self.blob),
                                "uri": "data:application/octet-stream;base64," + base64.b64encode(bytes(self.blob)).decode()}]
        path.write_text(json.dumps(self.doc), encoding="utf-8")
        return Character.load(path)


def unlit(colour=(1.0, 1.0, 1.0, 1.0), **fields) -> dict:
    """The fields of an unlit material of base colour ``colour``."""
    pbr = fields.pop("pbrMetallicRoughness", {})
    pbr.setdefault("baseColorFactor", list(colour))
    return dict(pbrMetallicRoughness=pbr, extensions={"KHR_materials_unlit": {}}, **fields)


def draw(gl, character, weights=None, light=(0.0, 0.0, 1.0), camera=FRONT, size=SIZE, background=(0.0, 0.0, 0.0),
         save=None) -> np.ndarray:
    """(H, W, 3) uint8: ``character``'s rest pose drawn over ``background`` (RGB in [0, 1]),
    saved as a PNG to ``save`` when given."""
    sk = character.skeleton
    world = sk.world_matrices(sk.rest_pose())
    with OffscreenTarget(gl, size, samples=0) as target:
        meshes = SkinnedMeshes(gl, character)
        try:
            target.framebuffer.clear(*background, 1.0)
            meshes.draw(target.framebuffer, camera, world, light_direction=light, morph_weights=weights)
            pixels = target.pixels()
        finally:
            meshes.release()
    if save is not None:
        Image.fromarray(pixels).save(save)
    return pixels


def covered(points, size=SIZE, camera=FRONT) -> np.ndarray:
    """(H, W) bool: the pixel centres inside the triangle ``points`` (3, 3) world, projected."""
    clip = np.c_[points, np.ones(3)] @ camera.view_projection(size[0] / size[1]).T
    ndc = clip[:, :2] / clip[:, 3:]
    corners = np.stack([(ndc[:, 0] + 1) / 2 * size[0], (1 - ndc[:, 1]) / 2 * size[1]], axis=1)
    y, x = np.mgrid[0:size[1], 0:size[0]] + 0.5
    (ax, ay), (bx, by), (cx, cy) = corners
    orientation = np.sign((bx - ax) * (cy - ay) - (by - ay) * (cx - ax))
    inside = np.ones(x.shape, bool)
    for k in range(3):
        (px, py), (qx, qy) = corners[k], corners[(k + 1) % 3]
        inside &= ((qx - px) * (y - py) - (qy - py) * (x - px)) * orientation >= 0
    return inside

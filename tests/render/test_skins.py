"""A character whose skins have different joint counts draws each with its own joints (the
joint-matrix uniform array is sized for the largest skin and a smaller skin's is padded)."""
from __future__ import annotations

import numpy as np

from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.render.draw3d import Camera
from gltf_build import UBYTE, Builder, skinned_strip, write
from gltf_scenes import draw


def test_skins_of_different_joint_counts_both_draw(gl, tmp_path):
    b = Builder()
    doc = skinned_strip(b)
    # a second strip, skinned to the first two joints only, by a skin of two joints
    joints = b.accessor(np.array([[0, 0, 0, 0]] * 2 + [[1, 0, 0, 0]] * 4), UBYTE, target=34962)
    positions = b.accessor(np.array([[2, 0, 0], [3, 0, 0], [2, 1, 0], [3, 1, 0], [2, 2, 0], [3, 2, 0]]), bounds=True,
                           target=34962)
    weights = doc["meshes"][0]["primitives"][0]["attributes"]["WEIGHTS_0"]
    indices = doc["meshes"][0]["primitives"][0]["indices"]
    ibm = np.tile(np.eye(4), (2, 1, 1))
    ibm[1, 3, :3] = [0, -1, 0]
    inverse_binds = b.accessor(ibm.reshape(2, 16), kind="MAT4")
    doc = b.document(**{k: v for k, v in doc.items() if k not in ("accessors", "bufferViews", "buffers", "asset")})
    doc["meshes"].append({"name": "short", "primitives": [{"attributes": {"POSITION": positions, "JOINTS_0": joints,
                                                                          "WEIGHTS_0": weights}, "indices": indices}]})
    doc["skins"].append({"joints": [1, 2], "inverseBindMatrices": inverse_binds})
    doc["nodes"].append({"name": "short body", "mesh": 1, "skin": 1})
    doc["scenes"][0]["nodes"].append(len(doc["nodes"]) - 1)
    character = Character.load(write(tmp_path, doc))
    assert sorted(len(s.joints) for s in character.skins) == [2, 3]
    camera = Camera(eye=np.array([1.5, 1.0, 9.0]), target=np.array([1.5, 1.0, 0.0]), fov_y_degrees=30.0, near=0.1,
                    far=20.0)
    pixels = draw(gl, character, camera=camera, background=(0.0, 0.0, 0.0))
    lit = pixels.max(axis=-1) > 20
    columns = np.flatnonzero(lit.any(axis=0))
    assert columns.size, "nothing drawn"
    # the two strips stand apart (x in [0, 1] and [2, 3]): two separate runs of lit columns
    assert np.count_nonzero(np.diff(columns) > 1) >= 1, "both skins' strips are drawn"

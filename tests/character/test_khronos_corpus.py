"""Khronos glTF sample models nobody here wrote (tests/data/khronos, each with its LICENSE.md):
every file loads and every clip samples; where the file has a skin, a rig of one chain built
from its skeleton bakes, and the baked copy passes the Khronos validator with no error,
keeps every clip's first and last key time to the float, and is byte for byte the source
outside the chain's rotation channels (and the chain joints a ``matrix`` defined, rewritten
as translation, rotation and scale)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpu_jiggle

from gpu_jiggle.character.baking.run import bake
from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.character.gltf.draco import draco_installed
from gpu_jiggle.character.rig.reader import rig_from_dict
from gltf_validator import assert_valid

CORPUS = Path(__file__).resolve().parents[1] / "data" / "khronos"
FILES = sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.glob("*/*/*.gl*"))
#: Files without a chain to bake, and why: they load and sample only.
NOT_BAKED = {
    "AnimatedMorphCube/glTF-Binary/AnimatedMorphCube.glb": "one node, no skin: morph weights only",
    "SimpleMorph/glTF-Embedded/SimpleMorph.gltf": "one node, no skin: morph weights only",
}
DRACO = "glTF-Draco"


def load(name: str) -> Character:
    if DRACO in name and not draco_installed():
        pytest.skip("DracoPy (the [draco] extra, in [all]) is not installed")
    return Character.load(CORPUS / name)


def longest_chain(character, most: int = 3) -> list[str]:
    """The longest parent → child path of skin joints, at most ``most`` joints, first found
    in skin order (each joint's first child among the joints)."""
    sk = character.skeleton
    joints = [int(j) for skin in character.skins for j in skin.joints]
    best = []
    for j in joints:
        path = [j]
        while len(path) < most:
            children = [c for c in sk.children(path[-1]) if c in joints]
            if not children:
                break
            path.append(children[0])
        best = path if len(path) > len(best) else best
    return [sk.names[j] for j in best]


def input_bounds(character) -> list:
    """Per animation, (min, max) over every sampler input, the file's float32 values."""
    out = []
    for a in character.json.get("animations", []):
        inputs = [character.accessor(s["input"]) for s in a["samplers"]]
        out.append((min(i.min() for i in inputs), max(i.max() for i in inputs)))
    return out


def test_the_corpus_is_here_with_its_licences():
    assert len(FILES) == 8, FILES
    for folder in {name.split("/")[0] for name in FILES}:
        assert (CORPUS / folder / "LICENSE.md").is_file(), folder


@pytest.mark.parametrize("name", FILES)
def test_loads_and_every_clip_samples(name):
    character = load(name)
    rest = character.skeleton.rest_pose()
    assert character.clips, "every sample here is animated"
    for clip in character.clips:
        assert clip.duration > 0
        for t in np.linspace(clip.start, clip.end, 7):
            pose = clip.sample(rest, t, loop=False)
            assert np.isfinite(pose.translation).all() and np.isfinite(pose.rotation).all()
            np.testing.assert_allclose(np.linalg.norm(pose.rotation, axis=1), 1.0, atol=1e-6)
            for weights in clip.sample_weights(t, loop=False).values():
                assert np.isfinite(weights).all()
        world = character.skeleton.world_matrices(clip.sample(rest, clip.start))
        for skin in character.skins:
            assert np.isfinite(skin.skinning_matrices(world)).all()
    for mesh in character.meshes:
        assert len(mesh.indices) and mesh.indices.max() < len(mesh.positions)
        assert np.isfinite(mesh.positions).all()


@pytest.mark.parametrize("name", [n for n in FILES if n not in NOT_BAKED])
@pytest.mark.parametrize("suffix", [".glb", ".gltf"])
def test_bakes_valid_and_unchanged_outside_the_chain(name, suffix, tmp_path, gltf_validator):
    source = load(name)
    joints = longest_chain(source)
    assert len(joints) >= 2, f"{name}: no chain of two joints"
    rig = rig_from_dict({"chain": [{"name": "chain", "joints": joints, "frequency": 3.0, "damping_ratio": 0.5,
                                    "gravity": [0.0, -9.8, 0.0]}]}, source.skeleton, f"{name} chain")
    clip = source.clip_names[0]
    out = tmp_path / f"baked{suffix}"
    result = bake(source, rig, clip, None, out, preroll=0.5, backend="cpu")
    print(f"{name} -> {out.name}: chain {joints}, {len(result.times)} keys "
          f"({'own key times' if result.schedule.source else f'{result.schedule.rate:.4g}/s'})")
    assert_valid(out, gltf_validator)
    copy = Character.load(out)
    assert input_bounds(copy) == input_bounds(source), "every clip keeps its first and last key time"
    assert copy.clip_names == source.clip_names

    baked = set(result.rotations)
    before, after = source.json, copy.json
    for n, (a, b) in enumerate(zip(before["nodes"], after["nodes"])):
        if n in baked and "matrix" in a:  # rewritten as the loader's own decomposition
            assert "matrix" not in b and {k: v for k, v in b.items() if k not in ("translation", "rotation",
                                                                                  "scale")} == {
                k: v for k, v in a.items() if k != "matrix"}
            np.testing.assert_array_equal(copy.skeleton.rest.translation[n], source.skeleton.rest.translation[n])
            np.testing.assert_array_equal(copy.skeleton.rest.scale[n], source.skeleton.rest.scale[n])
        else:
            assert a == b, n
    for key in ("meshes", "skins", "materials", "textures", "samplers", "scenes", "scene"):
        assert after.get(key) == before.get(key), key
    # the asset differs by the bake's mark alone: asset.extras.gpu_jiggle_baked and the generator
    asset_before, asset_after = dict(before["asset"]), dict(after["asset"])
    extras = dict(asset_after.pop("extras"))
    assert extras.pop("gpu_jiggle_baked") == {"clip": clip, "gpu_jiggle": gpu_jiggle.__version__}
    if extras or "extras" in asset_before:
        assert extras == asset_before.pop("extras")
    generator = asset_before.pop("generator", None)
    assert asset_after.pop("generator") == f"gpu_jiggle {gpu_jiggle.__version__} bake" + (
        f" (source: {generator})" if generator else "")
    assert asset_after == asset_before
    # a baked rotation's output and key times take the places of the ones they replace, or new ones
    replaced = set()
    for a, b in zip(before["animations"], after["animations"]):
        for ca, cb in zip(a["channels"], b["channels"]):
            if cb["target"].get("node") in baked and cb["target"]["path"] == "rotation":
                for key in ("output", "input"):
                    old, new = a["samplers"][ca["sampler"]][key], b["samplers"][cb["sampler"]][key]
                    assert new == old or new >= len(before["accessors"]), (key, old, new)
                    replaced.add(new)
    for i, (a, b) in enumerate(zip(before["accessors"], after["accessors"])):
        assert a == b or i in replaced, i
    assert copy.buffers[0][: len(source.buffers[0])] == source.buffers[0], "every old byte where it was"
    for i in range(1, len(source.buffers)):
        assert copy.buffers[i] == source.buffers[i]
    assert copy.image_data == source.image_data, "the images the source uses, bytes unchanged"
    for image in after.get("images", []):
        assert image["mimeType"] in ("image/png", "image/jpeg")
    for a, b in zip(before["animations"], after["animations"]):
        for ca, cb in zip(a["channels"], b["channels"]):
            assert ca == cb
            if ca["target"].get("node") in baked and ca["target"]["path"] == "rotation":
                continue
            sa, sb = a["samplers"][ca["sampler"]], b["samplers"][cb["sampler"]]
            assert sa == sb
            for key in ("input", "output"):
                assert copy.accessor(sb[key]).tobytes() == source.accessor(sa[key]).tobytes()
    for m_source, m_copy in zip(source.meshes, copy.meshes):
        np.testing.assert_array_equal(m_source.positions, m_copy.positions)
        np.testing.assert_array_equal(m_source.indices, m_copy.indices)

"""Hostile VRM spring bones: small files that ask for much work. The collider cap is checked
before any collider is read, and merging collider groups, naming chains and reading the rig
take work linear in what the file lists (each file generated here)."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from gpu_jiggle.character.gltf import vrm as vrm_module
from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.character.rig.model import MAX_COLLIDERS
from gpu_jiggle.character.pose.skeleton import Skeleton
from gpu_jiggle.character.gltf.vrm import VrmError, read_springs
from gpu_jiggle.character.rig.from_vrm import rig_from_vrm

SCENE = Path(__file__).resolve().parents[2] / "data" / "vrm" / "sphere-collider.gltf"


@pytest.fixture(scope="module")
def scene():
    return Character.load(SCENE)


def edited(character, edit):
    """The character with ``edit(VRMC_springBone, document)`` applied to a copy of its JSON."""
    doc = copy.deepcopy(character.json)
    edit(doc["extensions"]["VRMC_springBone"], doc)
    return type(character)(character.path, doc, list(character.buffers), character.limits)


def test_too_many_colliders_are_refused_before_any_is_read(scene):
    # entries that are not even objects: reading one first would refuse it, not the count
    def many(ext, doc):
        ext["colliders"] = ["not a collider"] * (MAX_COLLIDERS + 1)
    with pytest.raises(VrmError, match=rf"{MAX_COLLIDERS + 1} colliders; a rig takes at most {MAX_COLLIDERS}"):
        read_springs(edited(scene, many))


def test_vrm0_colliders_are_counted_over_all_groups_before_they_are_read(scene):
    half = MAX_COLLIDERS // 2 + 1

    def vrm0(ext, doc):
        del doc["extensions"]["VRMC_springBone"]
        doc["extensions"]["VRM"] = {"secondaryAnimation": {
            "colliderGroups": [{"node": 5, "colliders": [{"radius": 0.1}] * half},
                               {"node": 5, "colliders": ["not a collider"] * half}],
            "boneGroups": [{"bones": [0], "colliderGroups": [0, 1]}]}}
    with pytest.raises(VrmError, match=rf"{2 * half} colliders; a rig takes at most {MAX_COLLIDERS}"):
        read_springs(edited(scene, vrm0))


def test_a_group_referenced_many_times_is_merged_once(scene):
    """1024 colliders in one group, referenced 100,000 times by one spring and listed 100,000
    times in the group: each collider once, in order (the list-membership merge took ~1e11
    steps)."""
    references = 100_000

    def repeated(ext, doc):
        ext["colliders"] = [copy.deepcopy(ext["colliders"][0]) for _ in range(MAX_COLLIDERS)]
        ext["colliderGroups"] = [{"colliders": [k % MAX_COLLIDERS for k in range(references)]}]
        ext["springs"][0]["colliderGroups"] = [0] * references
    character = edited(scene, repeated)
    springs = read_springs(character)
    assert springs.springs[0].colliders == [f"colliders[{k}]" for k in range(MAX_COLLIDERS)]
    rig = rig_from_vrm(character, springs=springs)
    assert len(rig.colliders) == MAX_COLLIDERS and len({c.group for c in rig.colliders}) == 1


def _springs_of_one_name(count, node_names=True):
    """``count`` two-joint springs named "hair"; their root nodes are named apart, or all
    "root" (then every chain's name, spring and node, is the same)."""
    def edit(ext, doc):
        first = len(doc["nodes"])
        for k in range(count):
            doc["nodes"].append({"name": f"root {k}" if node_names else "root", "translation": [0, 1, 0],
                                 "children": [first + 2 * k + 1]})
            doc["nodes"].append({"name": f"end {k}", "translation": [0, 1, 0]})
        doc["scenes"][0]["nodes"] += [first + 2 * k for k in range(count)]
        ext["springs"] = [{"name": "hair", "joints": [{"node": first + 2 * k}, {"node": first + 2 * k + 1}],
                           "colliderGroups": [0]} for k in range(count)]
    return edit


def test_many_springs_of_one_name_are_named_in_linear_steps(scene, monkeypatch):
    count = 400
    lookups = []

    class CountingSet(set):
        def __contains__(self, item):
            lookups.append(item)
            return set.__contains__(self, item)

    original = vrm_module._Reader.__init__

    def init(self, character):
        original(self, character)
        self.chain_names = CountingSet()
    monkeypatch.setattr(vrm_module._Reader, "__init__", init)
    springs = read_springs(edited(scene, _springs_of_one_name(count, node_names=False)))
    names = [s.name for s in springs.springs]
    assert names[:3] == ["hair: root", "hair: root (2)", "hair: root (3)"] and len(set(names)) == count
    assert len(lookups) <= 3 * count  # trying 2, 3, … from the start for each took count²/2


def test_a_rig_of_many_chains_computes_the_rest_pose_once(scene, monkeypatch):
    count = 300
    calls = []
    original = Skeleton.world_matrices

    def counted(self, pose):
        calls.append(1)
        return original(self, pose)
    monkeypatch.setattr(Skeleton, "world_matrices", counted)
    rig = rig_from_vrm(edited(scene, _springs_of_one_name(count)))
    assert len(rig.chains) == count
    assert len(calls) <= 5  # once per chain made reading n chains O(n · nodes)


def test_an_integer_too_large_for_any_value_is_refused_naming_the_file(scene, tmp_path):
    """A radius of 10**400 (JSON allows it; math.isfinite cannot take it) is refused when the
    file is read, naming the file and the digits, not as a bare OverflowError later."""
    import json
    import shutil

    from gpu_jiggle.character.gltf.loader import GltfError
    shutil.copy(SCENE.with_name("sphere_mesh.bin"), tmp_path)
    text = json.dumps(scene.json).replace('"radius": 0.5', '"radius": RADIUS', 1)
    assert "RADIUS" in text
    path = tmp_path / "huge.gltf"
    path.write_text(text.replace("RADIUS", str(10 ** 400)))
    with pytest.raises(GltfError, match=r"huge\.gltf: .*the integer 100000000000… has 401 digits, beyond any number"):
        Character.load(path)


def test_gpu_jiggle_rig_blames_the_model_for_a_bad_value_not_the_output(scene, tmp_path, capsys):
    import json
    import shutil

    from gpu_jiggle.app.cli import main
    shutil.copy(SCENE.with_name("sphere_mesh.bin"), tmp_path)
    doc = copy.deepcopy(scene.json)
    doc["extensions"]["VRMC_springBone"]["colliders"][0]["shape"]["sphere"]["radius"] = 1e308
    model = tmp_path / "wide.gltf"
    model.write_text(json.dumps(doc))
    out = tmp_path / "wide.toml"
    assert main(["rig", str(model), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{model} (VRM 1.0): collider 'colliders[0]': radius = 1e+308" in err and "wide.toml" not in err
    assert not out.exists()


def test_the_vrm_reader_bounds_colliders_as_a_rig_does():
    """The VRM reader, below the rig wing, names its own bound: it must be the rig's."""
    assert vrm_module.MAX_COLLIDERS == MAX_COLLIDERS

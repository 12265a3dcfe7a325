"""The manifest of gpu-jiggle bake-many: expanded into one bake per character and clip, refused
whole (naming the manifest, the job and the key) before anything runs; and the records that
let a run skip the outputs made from the same inputs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from demo_support import FOX, FOX_RIG

from gpu_jiggle.character.baking.inputs import (Digests, bake_digest, character_digest, forget, record_path,
                                              up_to_date, write_record)
from gpu_jiggle.character.baking.manifest import ManifestError, read_manifest

VRM_FOLDER = FOX.parents[1] / "vrm"


def write_manifest(folder: Path, text: str) -> Path:
    path = folder / "manifest.toml"
    path.write_text(text.replace("{FOX}", json.dumps(str(FOX))).replace("{RIG}", json.dumps(str(FOX_RIG)))
                    .replace("{VRM}", json.dumps(str(VRM_FOLDER))[1:-1]))
    return path


def test_a_manifest_expands_into_one_bake_per_character_and_clip(tmp_path):
    (tmp_path / "chars").mkdir()
    for name in ("b fox.gltf", "a.fox.gltf"):
        (tmp_path / "chars" / name).write_bytes(FOX.read_bytes())
    manifest = write_manifest(tmp_path, """
[defaults]
preroll = 2.5

[[job]]
name = "all of them"
character = "chars/*.gltf"
rig = {RIG}
clips = ["Run"]
fps = 40

[[job]]
character = {FOX}
rig = {RIG}
clips = "all"
output = "{character}/{clip}{ext}"

[[job]]
name = "godette"
character = "{VRM}/*.vrm"
clips = ["{VRM}/*.vrma"]
""")
    jobs = read_manifest(manifest)
    assert [(j.job, j.character.name, Path(j.clip).name, j.output) for j in jobs] == [
        ("all of them", "a.fox.gltf", "Run", "all_of_them/a.fox_Run.glb"),  # globs sorted; names made file-safe
        ("all of them", "b fox.gltf", "Run", "all_of_them/b_fox_Run.glb"),
        ("job2", "Fox.gltf", "Survey", "Fox/Survey.glb"),  # "all": the file's clips, in its order
        ("job2", "Fox.gltf", "Walk", "Fox/Walk.glb"),
        ("job2", "Fox.gltf", "Run", "Fox/Run.glb"),
        ("godette", "Godette_vrm_v4.vrm", "test.vrma", "godette/Godette_vrm_v4_test.vrm"),  # a VRM stays one
    ]
    assert [j.fps for j in jobs] == [40.0, 40.0, None, None, None, None]
    assert {j.preroll for j in jobs} == {2.5} and all(j.character.is_absolute() for j in jobs)
    assert jobs[0].rig == FOX_RIG and jobs[-1].rig is None  # none: the VRM's own spring bones
    assert jobs[-1].vrma == VRM_FOLDER / "test.vrma"
    assert jobs[-1].settings["clip"] == "test.vrma"


def test_a_file_whose_clips_cannot_be_listed_is_one_failed_bake_not_a_refused_manifest(tmp_path):
    (tmp_path / "broken.glb").write_bytes(b"not a model")
    manifest = write_manifest(tmp_path, '[[job]]\ncharacter = ["broken.glb", {FOX}]\nrig = {RIG}\n')
    jobs = read_manifest(manifest)
    assert [(j.character.name, j.clip, j.error is None) for j in jobs] == [
        ("broken.glb", "all", False), ("Fox.gltf", "Survey", True), ("Fox.gltf", "Walk", True),
        ("Fox.gltf", "Run", True)]
    assert "cannot be listed" in jobs[0].error and "not a glTF file" in jobs[0].error


JOB = '[[job]]\nname = "fox"\ncharacter = {FOX}\nrig = {RIG}\n'
REFUSED = {
    "unknown key": (JOB + 'clip = ["Run"]\n', ["[[job]] 1 ('fox')", "key 'clip'", "did you mean 'clips'?"]),
    "unknown table": (JOB.replace("[[job]]", "[[jobs]]"), ["key 'jobs'", "did you mean 'job'?"]),
    "unknown default": ("[defaults]\nprerol = 1.0\n" + JOB, ["[defaults], key 'prerol'", "did you mean 'preroll'?"]),
    "no default": ('[defaults]\nname = "x"\n' + JOB, ["[defaults], key 'name'", "give it in each [[job]]"]),
    "no job": ("[defaults]\npreroll = 1.0\n", ["key 'job'", "expected one or more [[job]] tables"]),
    "missing character": (JOB.replace("{FOX}", '"nofox.gltf"'), ["[[job]] 1 ('fox')", "key 'character'",
                                                                "'nofox.gltf': no such file"]),
    "no character": ('[[job]]\nname = "fox"\nrig = {RIG}\n', ["key 'character'", "missing"]),
    "empty glob": (JOB.replace("{FOX}", '"chars/*.glb"'), ["key 'character'",
                                                          "the glob 'chars/*.glb' matches no file"]),
    "not a model": (JOB.replace("{FOX}", "{RIG}"), ["key 'character'", "fox.toml", "is not a .gltf, .glb, .vrm file"]),
    "missing rig": (JOB.replace("{RIG}", '"nofox.toml"'), ["key 'rig'", "'nofox.toml': no such file"]),
    "missing vrma": (JOB + 'clips = ["Run", "walk.vrma"]\n', ["key 'clips'", "'walk.vrma': no such file"]),
    "clip twice": (JOB + 'clips = ["Run", "Run"]\n', ["key 'clips'", "'Run' is listed twice"]),
    "fps": (JOB + "fps = 0\n", ["[[job]] 1 ('fox'), key 'fps'", "0: expected a finite number > 0"]),
    "fps default": ("[defaults]\nfps = true\n" + JOB, ["[[job]] 1 ('fox'), [defaults], key 'fps'",
                                                       "True: expected a finite number > 0"]),
    "preroll": (JOB + "preroll = -1\n", ["key 'preroll'", "expected a finite number of seconds >= 0"]),
    "look_at": (JOB + 'look_at = "yes"\n', ["key 'look_at'", "expected true or false"]),
    "strands": (JOB + 'strands = "joint"\n', ["key 'strands'", "did you mean 'joints'?"]),
    "placeholder": (JOB + 'output = "{clipname}.glb"\n', ["key 'output'", "unknown placeholder 'clipname'",
                                                          "did you mean 'clip'?"]),
    "outside": (JOB + 'output = "../{clip}.glb"\n', ["key 'output'", "'../Survey.glb'", "leaves the --out folder"]),
    "format": (JOB + 'output = "{clip}.fbx"\n', ["key 'output'", "expected a name ending in .glb, .gltf, .vrm"]),
    "same output": (JOB + 'output = "{clip}.glb"\n' + JOB.replace('"fox"', '"fox2"') + 'output = "{clip}.glb"\n',
                    ["[[job]] 2 ('fox2'), key 'output'", "'Survey.glb' (Fox.gltf, clip 'Survey') is also the output "
                                                         "of [[job]] 1 ('fox')"]),
    "same name": (JOB + JOB, ["[[job]] 2 ('fox'), key 'name'", "'fox' is also the name of [[job]] 1"]),
    "not toml": ("[[job]\n", ["not valid TOML"]),
}


@pytest.mark.parametrize("case", REFUSED)
def test_a_bad_manifest_is_refused_naming_the_manifest_the_job_and_the_key(tmp_path, case):
    text, expected = REFUSED[case]
    manifest = write_manifest(tmp_path, text)
    with pytest.raises(ManifestError) as refused:
        read_manifest(manifest)
    message = str(refused.value)
    assert message.startswith(f"{manifest}: ")
    assert [e for e in expected if e not in message] == [], message


def test_a_missing_manifest_is_refused(tmp_path):
    with pytest.raises(ManifestError, match="no such manifest file"):
        read_manifest(tmp_path / "none.toml")


def test_a_record_vouches_for_its_output_only_beside_it_and_for_the_same_inputs(tmp_path):
    out = tmp_path / "fox_Run.glb"
    assert up_to_date(out, "d1") is None
    out.write_bytes(b"baked")
    assert up_to_date(out, "d1") is None  # an output without its record: stopped before the record was written
    write_record(out, "d1", {"frames": 36})
    assert record_path(out).name == "fox_Run.glb.bake.json"
    assert up_to_date(out, "d1")["frames"] == 36
    assert up_to_date(out, "d2") is None  # other inputs
    out.unlink()
    assert up_to_date(out, "d1") is None  # the output is gone
    forget(out)
    forget(out)  # nothing left to forget: no error
    assert not record_path(out).exists() and list(tmp_path.iterdir()) == []


def test_a_digest_follows_the_contents_of_every_input_and_the_settings(tmp_path):
    model = tmp_path / "model.gltf"
    model.write_text(json.dumps({"asset": {"version": "2.0"}, "buffers": [{"uri": "data.bin", "byteLength": 4}]}))
    (tmp_path / "data.bin").write_bytes(b"1234")
    before = character_digest(model)
    (tmp_path / "data.bin").write_bytes(b"1235")  # the buffer the file refers to changes
    assert character_digest(model) != before
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("model.gltf", "data.bin"):
        (copy / name).write_bytes((tmp_path / name).read_bytes())
    assert character_digest(copy / "model.gltf") == character_digest(model)  # contents, not paths

    jobs = read_manifest(write_manifest(tmp_path, JOB + 'clips = ["Run"]\n'))
    digests = Digests()
    job = jobs[0]
    base = bake_digest(job, "auto", digests.character(job.character), digests.file(job.rig))
    assert base == bake_digest(job, "auto", digests.character(job.character), digests.file(job.rig))
    changed = [bake_digest(job, "cpu", "c", "r"), bake_digest(job, "auto", "c2", "r"),
               bake_digest(job, "auto", "c", None), bake_digest(job, "auto", "c", "r", "a")]
    for settings in ('fps = 40\n', 'preroll = 1.0\n', 'look_at = true\n', 'strands = "joints"\n',
                     'output = "{clip}.gltf"\n'):
        other = read_manifest(write_manifest(tmp_path, JOB + 'clips = ["Run"]\n' + settings))[0]
        changed.append(bake_digest(other, "auto", digests.character(job.character), digests.file(job.rig)))
    assert len({base, bake_digest(job, "auto", "c", "r"), *changed}) == len(changed) + 2


def test_the_documented_manifest_reads_as_it_says(tmp_path):
    doc = (Path(__file__).resolve().parents[2] / "docs" / "BATCH.md").read_text(encoding="utf-8")
    section = doc.split("\n## The manifest\n", 1)[1].split("\n## ", 1)[0]
    text = section.split("```toml\n", 1)[1].split("```", 1)[0]
    for folder, name, source in (("characters", "fox.glb", FOX), ("rigs", "fox.toml", FOX_RIG),
                                 ("avatars", "godette.vrm", VRM_FOLDER / "Godette_vrm_v4.vrm"),
                                 ("motions", "wave.vrma", VRM_FOLDER / "test.vrma")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_bytes(source.read_bytes())
    (tmp_path / "library.toml").write_text(text)
    jobs = read_manifest(tmp_path / "library.toml")
    assert [(j.job, j.output, j.fps, j.preroll, j.rig is None) for j in jobs] == [
        ("foxes", "foxes/fox_Survey.glb", 30.0, 4.0, False), ("foxes", "foxes/fox_Walk.glb", 30.0, 4.0, False),
        ("foxes", "foxes/fox_Run.glb", 30.0, 4.0, False), ("avatars", "avatars/godette_wave.vrm", None, 4.0, True)]


def _library_with_links_to_itself(tmp_path: Path) -> Path:
    """A folder with a character, a subfolder with another, and two links back to the folder
    (``x -> .``, ``sub/up -> ..``): a glob that follows links under ``**`` never ends."""
    import os

    library = tmp_path / "library"
    (library / "sub").mkdir(parents=True)
    (library / "a.vrm").write_bytes(b"x")
    (library / "sub" / "b.vrm").write_bytes(b"x")
    os.symlink(".", library / "x")
    os.symlink("..", library / "sub" / "up")
    return library


def test_a_double_star_glob_does_not_follow_linked_folders_into_a_loop(tmp_path):
    from gpu_jiggle.character.baking.globs import glob_paths

    library = _library_with_links_to_itself(tmp_path)
    assert glob_paths(library, "**/*.vrm") == [library / "a.vrm", library / "sub" / "b.vrm"]
    assert glob_paths(library, "x/*.vrm") == [library / "x" / "a.vrm"], "a link named in the pattern is followed"
    manifest = write_manifest(library, '[[job]]\ncharacter = "**/*.vrm"\nclips = ["Run"]\n')
    assert [job.character.name for job in read_manifest(manifest)] == ["a.vrm", "b.vrm"]


def test_a_glob_that_matches_or_looks_at_too_much_is_refused_naming_the_limit(tmp_path, monkeypatch):
    from gpu_jiggle.character.baking import globs

    library = tmp_path / "library"
    (library / "deep").mkdir(parents=True)
    for k in range(12):
        (library / f"c{k}.vrm").write_bytes(b"x")
        (library / "deep" / f"n{k}.txt").write_bytes(b"x")
    manifest = write_manifest(library, '[[job]]\ncharacter = "*.vrm"\nclips = ["Run"]\n')
    assert len(read_manifest(manifest)) == 12
    monkeypatch.setattr(globs, "MAX_GLOB_MATCHES", 10)
    with pytest.raises(ManifestError, match=r"key 'character': the glob '\*\.vrm' matches more than 10 paths"):
        read_manifest(manifest)
    monkeypatch.setattr(globs, "MAX_GLOB_MATCHES", 100)
    monkeypatch.setattr(globs, "MAX_GLOB_ENTRIES", 20)
    manifest = write_manifest(library, '[[job]]\ncharacter = "**/c1.vrm"\nclips = ["Run"]\n')
    with pytest.raises(ManifestError, match=r"the glob '\*\*/c1\.vrm' looked at more than 20 folder entries"):
        read_manifest(manifest)

"""Clip sampling as the glTF 2.0 specification says: the Fox's own keys at their times, and a
small glTF built here with STEP, LINEAR (slerp, short way round) and CUBICSPLINE channels
checked between keys against values worked out by hand; looping and holding."""
from __future__ import annotations

import base64
import json
import math

import numpy as np
import pytest

from gpu_jiggle.character.gltf.loader import Character


def test_fox_keys_are_reproduced_at_their_own_times(fox):
    rest = fox.skeleton.rest_pose()
    for clip in fox.clips:
        for ch in clip.channels:
            s = ch.sampler
            for k, t in enumerate(s.times):
                want = s.values[k]
                got = s.sample(float(t), rotation=ch.path == "rotation")
                np.testing.assert_allclose(got, want, rtol=0, atol=1e-7, err_msg=f"{clip.name} {ch.path} key {k}")
                pose = clip.sample(rest, float(t), loop=False)
                value = getattr(pose, ch.path)[ch.node]
                if ch.path == "rotation":
                    want = want / np.linalg.norm(want)
                np.testing.assert_allclose(value, want, rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", ["Survey", "Walk", "Run"])
def test_looped_fox_clip_is_continuous_at_the_wrap(fox, name):
    clip = fox.clip(name)
    sk = fox.skeleton
    rest = sk.rest_pose()

    def joints(t):
        return sk.world_matrices(clip.sample(rest, t, loop=True))[:, :3, 3]

    eps = 1e-4
    end = clip.end
    np.testing.assert_allclose(joints(end), joints(clip.start), atol=1e-9)  # one period later: the start again
    np.testing.assert_allclose(joints(end + 0.3), joints(0.3), atol=1e-6)
    across = np.abs(joints(end - eps) - joints(end + eps)).max()
    inside = max(np.abs(joints(t - eps) - joints(t + eps)).max() for t in np.linspace(0.1, end - 0.1, 25))
    assert across <= 1.5 * inside + 1e-6, (across, inside)  # no jump larger than ordinary motion


# -- a small file built here -------------------------------------------------------------------
def _rot_z(degrees):
    h = math.radians(degrees) / 2
    return [0.0, 0.0, math.sin(h), math.cos(h)]


CHANNELS = [  # node, path, interpolation, times, values (cubic: in-tangent, value, out-tangent per key)
    (0, "translation", "LINEAR", [0.0, 2.0], [[0, 0, 0], [4, 2, -2]]),
    (1, "rotation", "LINEAR", [0.0, 1.0], [_rot_z(0), _rot_z(120)]),
    (2, "rotation", "LINEAR", [0.0, 1.0], [_rot_z(0), [-x for x in _rot_z(90)]]),  # q1 stored negated
    (3, "scale", "STEP", [0.0, 1.0, 2.0], [[1, 1, 1], [2, 2, 2], [3, 3, 3]]),
    (4, "translation", "CUBICSPLINE", [0.0, 2.0], [[0, 0, 0], [0, 0, 0], [1, 2, 0],
                                                  [0, 0, 4], [2, 0, 0], [0, 0, 0]]),
    (5, "rotation", "CUBICSPLINE", [0.0, 1.0], [[0, 0, 0, 0], _rot_z(0), [0, 0, 0, 0],
                                                [0, 0, 0, 0], _rot_z(90), [0, 0, 0, 0]]),
]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    blob = bytearray()
    accessors, views, samplers, channels = [], [], [], []
    for node, path, interpolation, times, values in CHANNELS:
        for data, kind in ((np.asarray(times, np.float32), "SCALAR"), (np.asarray(values, np.float32), None)):
            views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": data.nbytes})
            blob += data.tobytes()
            acc = {"bufferView": len(views) - 1, "componentType": 5126, "count": len(data),
                   "type": kind or f"VEC{data.shape[1]}"}
            if kind:
                acc.update(min=[float(data.min())], max=[float(data.max())])
            accessors.append(acc)
        samplers.append({"input": len(accessors) - 2, "output": len(accessors) - 1, "interpolation": interpolation})
        channels.append({"sampler": len(samplers) - 1, "target": {"node": node, "path": path}})
    doc = {"asset": {"version": "2.0"}, "scenes": [{"nodes": [0]}], "scene": 0,
           "nodes": [{"name": f"n{i}", "children": [i + 1]} for i in range(5)] + [{"name": "n5"}],
           "animations": [{"name": "test", "samplers": samplers, "channels": channels}],
           "accessors": accessors, "bufferViews": views,
           "buffers": [{"byteLength": len(blob),
                        "uri": "data:application/octet-stream;base64," + base64.b64encode(bytes(blob)).decode()}]}
    path = tmp_path_factory.mktemp("small") / "small.gltf"
    path.write_text(json.dumps(doc))
    return Character.load(path)


def _at(character, t, loop=False):
    return character.clip("test").sample(character.skeleton.rest_pose(), t, loop=loop)


def _same_rotation(a, b, atol=1e-6):
    a, b = np.asarray(a), np.asarray(b)
    assert min(np.abs(a - b).max(), np.abs(a + b).max()) <= atol, (a, b)


def test_linear_translation(small):
    np.testing.assert_allclose(_at(small, 0.5).translation[0], [1.0, 0.5, -0.5], atol=1e-6)


def test_linear_rotation_is_slerp(small):
    # identity → 120° about z, a quarter of the way: 30° about z (slerp keeps constant speed)
    _same_rotation(_at(small, 0.25).rotation[1], _rot_z(30))
    # identity → -(90° about z) is the same 90° turn; the short way round passes 45° halfway
    _same_rotation(_at(small, 0.5).rotation[2], _rot_z(45))


def test_step(small):
    assert _at(small, 0.999).scale[3].tolist() == [1, 1, 1]
    assert _at(small, 1.0).scale[3].tolist() == [2, 2, 2]
    assert _at(small, 1.5).scale[3].tolist() == [2, 2, 2]
    assert _at(small, 2.0).scale[3].tolist() == [3, 3, 3]


def test_cubic_spline_translation(small):
    # t = 0.5 between keys at 0 and 2: td = 2, s = 0.25;
    # p = (2s³-3s²+1)·v0 + td(s³-2s²+s)·b0 + (-2s³+3s²)·v1 + td(s³-s²)·a1
    #   = 0.84375·(0,0,0) + 0.28125·(1,2,0) + 0.15625·(2,0,0) - 0.09375·(0,0,4)
    np.testing.assert_allclose(_at(small, 0.5).translation[4], [0.59375, 0.5625, -0.375], atol=1e-6)


def test_cubic_spline_rotation_is_normalised(small):
    # zero tangents, s = 0.5: (identity + 90° about z)/2, normalised = 45° about z
    _same_rotation(_at(small, 0.5).rotation[5], _rot_z(45))


def test_before_first_and_after_last_key_hold(small):
    np.testing.assert_allclose(_at(small, -1.0).translation[0], [0, 0, 0])
    np.testing.assert_allclose(_at(small, 5.0).translation[0], [4, 2, -2])
    np.testing.assert_allclose(_at(small, 5.0).translation[4], [2, 0, 0])


def test_looping_repeats_the_clip(small):
    clip = small.clip("test")
    assert clip.duration == 2.0
    a, b = _at(small, 0.5), _at(small, 4.5, loop=True)
    for name in ("translation", "rotation", "scale"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), atol=1e-12)
    assert clip.local_time(-0.5) == pytest.approx(1.5)
    with pytest.raises(ValueError, match="time = nan"):
        clip.local_time(float("nan"))

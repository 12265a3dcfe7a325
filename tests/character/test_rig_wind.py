"""A rig's ``[wind]`` table (SPEC 4.1 in an artist's terms) and the live changes of the wind and
of colliders (``Pipeline.set_wind``, ``Pipeline.set_collider``)."""
from __future__ import annotations

import math
import os
import re

import numpy as np
import pytest

from gpu_jiggle.character.pipeline import Pipeline
from gpu_jiggle.character.rig.model import RigError
from gpu_jiggle.character.rig.reader import rig_from_dict


def fox_rig_with(rig_data, fox, **wind):
    data = dict(rig_data)
    if wind:
        data["wind"] = wind
    return rig_from_dict(data, fox.skeleton)


def tail_lean(fox, rig, frames=45):
    """The tail tip's mean offset from its animated place over the last frames (world)."""
    with Pipeline(fox, rig, "Survey", backend="cpu") as p:
        out = []
        for i in range(frames):
            f = p.step(i / 30, 1 / 30)
            out.append(f.chain_positions[0][-1] - f.chain_targets[0][-1])
    return np.mean(out[-15:], axis=0)


def test_the_wind_table_is_read_and_blows_the_chains_along_its_direction(fox, rig_data):
    rig = fox_rig_with(rig_data, fox, direction=[0.0, 0.0, 2.0], strength=400.0, gust_amplitude=50.0,
                       gust_frequency=0.5, gust_wavelength=300.0)
    assert np.allclose(rig.wind.direction, [0.0, 0.0, 1.0]) and rig.wind.strength == 400.0
    args = rig.wind.solver_arguments()
    np.testing.assert_allclose(args["acceleration"], [0.0, 0.0, 400.0])
    np.testing.assert_allclose(args["gust_wave_vector"], [0.0, 0.0, 2 * math.pi / 300.0])
    calm, windy = tail_lean(fox, fox_rig_with(rig_data, fox)), tail_lean(fox, rig)
    assert windy[2] - calm[2] > 1.0, "the tail leans downwind (+z)"


@pytest.mark.parametrize("wind, message", [
    ({"strenght": 1.0}, "unknown key 'strenght'"),
    ({"direction": [0.0, 0.0, 0.0]}, "direction"),
    ({"strength": -1.0}, "strength = -1.0"),
    ({"gust_frequency": float("nan")}, "gust_frequency"),
    ({"gust_amplitude": 5.0}, "gust_amplitude = 5.0 with strength = 0"),
    ({"direction": [1.0, "x", 0.0]}, "direction"),
])
def test_a_bad_wind_table_is_refused_naming_the_key(fox, rig_data, wind, message):
    with pytest.raises(RigError, match=r"\[wind\]") as info:
        fox_rig_with(rig_data, fox, **wind)
    assert message in str(info.value)


def test_wind_and_colliders_change_live_and_refusals_change_nothing(fox, rig_data):
    rig = fox_rig_with(rig_data, fox)
    with Pipeline(fox, rig, "Survey", backend="cpu") as p:
        p.step(0.0, 1 / 30)
        solver = p.solver
        p.set_wind(strength=250.0, direction=[1.0, 0.0, 0.0])
        assert p.rig.wind.strength == 250.0
        with pytest.raises(TypeError, match="did you mean 'strength'"):
            p.set_wind(strenght=1.0)
        with pytest.raises(ValueError, match="strength = -5.0"):
            p.set_wind(strength=-5.0)
        assert p.rig.wind.strength == 250.0
        name = p.rig.colliders[0].name
        p.set_collider(name, radius=4.0, offset=[1.0, 2.0, 3.0])
        assert p.rig.colliders[0].radius == 4.0 and np.allclose(p.rig.colliders[0].end, [1.0, 2.0, 3.0])
        with pytest.raises(ValueError, match="did you mean"):
            p.set_collider(name + "x", radius=1.0)
        with pytest.raises(ValueError, match=r"radius = -1.0"):
            p.set_collider(name, radius=-1.0)
        with pytest.raises(TypeError, match="has no live 'normal'"):
            p.set_collider(name, normal=[0.0, 1.0, 0.0])
        assert p.rig.colliders[0].radius == 4.0
        assert rig.colliders[0].radius != 4.0 and (rig.wind is None or rig.wind.strength != 250.0)  # as authored
        frame = p.step(1 / 30, 1 / 30)
        assert p.solver is solver, "live changes keep the motion"
        assert 4.0 in np.round(frame.colliders.spheres[:, 3], 6)


def test_a_rig_path_that_is_not_a_file_is_refused_as_such(fox, tmp_path):
    from gpu_jiggle.character.rig.reader import load_rig

    with pytest.raises(OSError, match=f"{re.escape(str(tmp_path))}: is a folder, not a rig file"):
        load_rig(tmp_path, fox.skeleton)  # a folder is called one (not "no such rig file")
    fifo = tmp_path / "rig.toml"
    os.mkfifo(fifo)  # neither a file nor a folder: refused without opening it (which would block)
    with pytest.raises(RigError, match="not a regular file"):
        load_rig(fifo, fox.skeleton)
    with pytest.raises(FileNotFoundError, match="no such rig file"):
        load_rig(tmp_path / "missing.toml", fox.skeleton)

"""A released solver refuses every input and read-back call, naming the call, instead of
taking it silently (or saying it runs on the CPU)."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, PointChainSet, Solver

CALLS = {
    "point": [("set_pose", lambda s: s.set_pose(np.zeros((4, 3)))), ("teleport", lambda s: s.teleport()),
              ("set_lod", lambda s: s.set_lod("half")), ("rebase", lambda s: s.rebase((1.0, 0.0, 0.0))),
              ("set_colliders", lambda s: s.set_colliders(spheres=[[0, 0, 0, 1]])),
              ("set_wind", lambda s: s.set_wind((1.0, 0.0, 0.0))), ("gpu_buffers", lambda s: s.gpu_buffers())],
    "angle": [("set_pose", lambda s: s.set_pose([[0.0, 0.0]], [0.0], np.zeros(3))),
              ("teleport", lambda s: s.teleport()), ("set_lod", lambda s: s.set_lod("frozen")),
              ("set_wind", lambda s: s.set_wind((1.0, 0.0))), ("gpu_buffers", lambda s: s.gpu_buffers()),
              ("gpu_textures", lambda s: s.gpu_textures())],
}


@pytest.mark.parametrize("kind", sorted(CALLS))
def test_every_call_after_release_is_refused_naming_it(kind):
    chain_set = PointChainSet([3], 2.0, 0.5) if kind == "point" else AngleChainSet([3], 0.5, 2.0, 0.5)
    solver = Solver(chain_set, backend="cpu")
    solver.release()
    for name, call in CALLS[kind]:
        with pytest.raises(RuntimeError, match=rf"{name}\(\) after release\(\): this \w+Solver was released"):
            call(solver)

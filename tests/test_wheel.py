"""An installed wheel, not the source tree, finds its shaders and runs one GPU step of each chain
kind with none of the optional packages importable (what ``pip install gpu-jiggle`` without
extras gives)."""
from __future__ import annotations

import os
import subprocess
import sys

PROBE = """
import pathlib, sys
for extra in ("glfw", "imgui_bundle", "matplotlib", "pygltflib", "PIL", "imageio", "imageio_ffmpeg", "tqdm", "tomli",
              "DracoPy"):
    sys.modules[extra] = None  # not installed, as far as this process can tell
import numpy as np
import gpu_jiggle
from gpu_jiggle import AngleChainSet, PointChainSet, Solver
from gpu_jiggle.gl import glsl
site = pathlib.Path(sys.argv[1]).resolve()
assert pathlib.Path(gpu_jiggle.__file__).resolve().is_relative_to(site), gpu_jiggle.__file__
assert pathlib.Path(str(glsl.shader_root())).resolve().is_relative_to(site), glsl.shader_root()
p = Solver(PointChainSet([2], 3.0, 0.5, gravity=(9.8, 0, 0)), backend="gpu")
p.set_pose(np.array([[0, 0, 0], [0, -1, 0], [0, -2, 0.0]]))
assert p.advance(1 / 60) == 2 and p.positions()[2, 0] > 0  # gravity along +x pulled the tip
s = Solver(AngleChainSet([3], 1.0, 2.0, 0.5, gravity=(0, -9.8)), backend="gpu")
s.set_pose(np.zeros((1, 2)), np.zeros(1), np.zeros(3))
assert s.advance(1 / 120) == 1
print("ok", s.backend, glsl.shader_root(), s.angular_velocities(raw=True)[0])
"""


def test_installed_wheel_runs_a_gpu_step(installed_wheel, tmp_path, gl):
    site, names = installed_wheel
    assert "gpu_jiggle/shaders/sim/angle_chains.comp" in names
    assert "gpu_jiggle/shaders/sim/common.glsl" in names
    env = dict(os.environ, PYTHONPATH=str(site))
    result = subprocess.run([sys.executable, "-c", PROBE, str(site)], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok gpu")
    # Gravity pulled the horizontal chain during that one substep: it really ran.
    assert float(result.stdout.split()[-1]) < 0

"""Both backends implement the declared interface (sim/backends/interface.py), the solver finds
its kind's class through the registry its subclasses fill, and every numpy twin is named after
its kernel (shaders/sim/X.comp or X.glsl <-> sim/backends/reference/X.py)."""
from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Protocol

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, AngleSolver, PointChainSet, PointSolver, Solver
from gpu_jiggle.sim.backends.gpu_angle import GpuAngleBackend
from gpu_jiggle.sim.backends.gpu_point import GpuPointBackend
from gpu_jiggle.sim.backends.interface import Backend, PointBackend
from gpu_jiggle.sim.backends.reference.angle_chains import ReferenceAngleBackend
from gpu_jiggle.sim.backends.reference.point_chains import ReferencePointBackend

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "shaders" / "sim"
TWINS = ROOT / "gpu_jiggle" / "sim" / "backends" / "reference"

# What each kind's upload_targets takes after chain_target (the interface's *kind_targets).
KIND_TARGETS = {"angle": ("local_angle",), "point": ("chain_control", "joint_offset", "joint_rotation")}
CLASSES = [("angle", Backend, ReferenceAngleBackend), ("angle", Backend, GpuAngleBackend),
           ("point", PointBackend, ReferencePointBackend), ("point", PointBackend, GpuPointBackend)]


def interface_methods(protocol):
    """The calls ``protocol`` declares, its bases' included."""
    return sorted({name for base in protocol.__mro__ if base not in (object, Protocol)
                   for name, value in vars(base).items() if inspect.isfunction(value) and not name.startswith("_")})


@pytest.mark.parametrize("kind, protocol, cls", CLASSES, ids=lambda v: getattr(v, "__name__", v))
def test_each_backend_class_takes_every_call_of_the_interface(kind, protocol, cls):
    for name in interface_methods(protocol):
        method = getattr(cls, name, None)
        assert callable(method), f"{cls.__name__} lacks {name}"
        wanted = [p.name for p in list(inspect.signature(getattr(protocol, name)).parameters.values())[1:]
                  if p.kind is p.POSITIONAL_OR_KEYWORD]
        if name == "upload_targets":
            wanted = ["chain_target", *KIND_TARGETS[kind]]
        args = [None] * len(wanted)
        try:
            inspect.signature(method).bind(None, *args)
        except TypeError as exc:
            pytest.fail(f"{cls.__name__}.{name} does not take the interface's ({', '.join(wanted)}): {exc}")
    assert isinstance(cls.name, str) and cls.name in ("cpu", "gpu")


@pytest.mark.parametrize("chain_set, kind_class, protocol",
                         [(AngleChainSet([2], 1.0, 2.0, 0.5), AngleSolver, Backend),
                          (PointChainSet([2], 2.0, 0.5), PointSolver, PointBackend)], ids=["angle", "point"])
def test_a_solver_is_its_kind_and_holds_a_backend_of_the_interface(backend, chain_set, kind_class, protocol):
    with Solver(chain_set, backend=backend) as solver:
        assert type(solver) is kind_class and solver.backend == backend
        assert isinstance(solver._backend, protocol)
    assert Solver.solver_kinds() == {"angle": AngleSolver, "point": PointSolver}


def test_a_subclass_of_a_kind_does_not_take_its_place_in_the_registry():
    class Traced(PointSolver):
        pass

    assert Solver.solver_kinds()["point"] is PointSolver
    assert type(Solver(PointChainSet([1], 2.0, 0.5), backend="cpu")) is PointSolver
    with pytest.raises(TypeError, match="expected an AngleChainSet or a PointChainSet, got ndarray"):
        Solver(np.zeros(3), backend="cpu")


def kernel_of(stem: str):
    found = [p for p in (KERNELS / f"{stem}.comp", KERNELS / f"{stem}.glsl") if p.exists()]
    return found[0] if found else None


@pytest.mark.parametrize("twin", sorted(p for p in TWINS.glob("*.py") if p.name != "__init__.py"), ids=lambda p: p.name)
def test_every_numpy_twin_is_named_after_its_kernel_and_the_kernel_names_it(twin):
    kernel = kernel_of(twin.stem)
    assert kernel is not None, f"{twin.name}: no shaders/sim/{twin.stem}.comp or .glsl of the same name"
    assert f"gpu_jiggle/sim/backends/reference/{twin.name}" in kernel.read_text(encoding="utf-8"), \
        f"{kernel.name} does not name its numpy twin {twin.name}"


def test_every_twin_a_kernel_names_exists():
    for kernel in sorted(KERNELS.glob("*.*")):
        for named in re.findall(r"gpu_jiggle/sim/backends/reference/(\w+)\.py", kernel.read_text(encoding="utf-8")):
            assert (TWINS / f"{named}.py").exists(), f"{kernel.name} names a twin that does not exist: {named}.py"

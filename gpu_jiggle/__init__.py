"""gpu_jiggle: secondary motion with damped springs solved in GLSL compute shaders.

Public names: :class:`AngleChainSet`, :class:`PointChainSet` (the static rigs),
:class:`Solver` (which gives an :class:`AngleSolver` or a :class:`PointSolver`),
:class:`LagFollower`, :func:`stable_frequency`, :func:`to_frequency_damping_ratio`,
:func:`to_mass_stiffness_damping`, :func:`recut`, :func:`describe`, :class:`InputError`,
:class:`UnstableSpringError`, and the warnings a solver gives (to filter by),
:class:`RootAccelerationWarning` and :class:`FrameTimeWarning`. The model is specified in
docs/SPEC.md; the layers of the package are described in docs/ARCHITECTURE.md. This import
needs only numpy and moderngl.
"""
from .sim import AngleChainSet, AngleSolver, LagFollower, PointChainSet, PointSolver, Solver
from .sim.clock import FrameTimeWarning
from .sim.root_motion import RootAccelerationWarning
from .sim.response import describe
from .sim.spring import (UnstableSpringError, recut, stable_frequency, to_frequency_damping_ratio,
                         to_mass_stiffness_damping)
from .sim.validation import InputError

__all__ = ["AngleChainSet", "PointChainSet", "Solver", "AngleSolver", "PointSolver", "LagFollower",
           "stable_frequency", "to_frequency_damping_ratio", "to_mass_stiffness_damping", "recut", "describe",
           "InputError", "UnstableSpringError", "RootAccelerationWarning", "FrameTimeWarning"]
__version__ = "0.1.0"

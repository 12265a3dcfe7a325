"""gpu_jiggle: secondary motion with damped springs solved in GLSL compute shaders.

Public names: :class:`AngleChainSet`, :class:`PointChainSet`, :class:`Solver`, :class:`LagFollower`,
:func:`stable_frequency`, :func:`to_frequency_damping_ratio`,
:func:`to_mass_stiffness_damping`. The model is specified in SPEC.md.
"""
from .sim.chains import AngleChainSet, PointChainSet
from .sim.lag import LagFollower
from .sim.solver import Solver
from .sim.spring import stable_frequency, to_frequency_damping_ratio, to_mass_stiffness_damping

__all__ = ["AngleChainSet", "PointChainSet", "Solver", "LagFollower", "stable_frequency", "to_frequency_damping_ratio",
           "to_mass_stiffness_damping"]
__version__ = "0.1.0"

"""The solver core: numpy in, numpy out; it imports only :mod:`gpu_jiggle.gl`.

- :mod:`.spring`: f, ζ → k, c; the stability check; converters (SPEC 1).
- :mod:`.root_motion`: the root acceleration angle chains stay stable under, and the watch
  that warns when a frame's root accelerates past it (SPEC 1).
- :mod:`.clock`: the fixed-step clocks and their plans, full and half rate (SPEC 2).
- :mod:`.chains`: the static rigs, :class:`AngleChainSet` and :class:`PointChainSet`.
- :mod:`.inputs`: per-frame inputs beside the pose: colliders and wind (SPEC 4.1, 4.2).
- :mod:`.layouts`: std430 dtypes and binding numbers shared with the GLSL.
- :mod:`.validation`: the checks at the public boundary (SPEC 7).
- :mod:`.solver`, :mod:`.angle`, :mod:`.point`: :class:`Solver` and the solver of each kind,
  with the packing of its records; :mod:`.packing`: what both kinds pack alike.
- :mod:`.lag`: :class:`LagFollower` (SPEC 6).
- :mod:`.backends`: the numpy reference and the GLSL compute path behind one interface.
"""
from .angle import AngleSolver
from .chains import AngleChainSet, PointChainSet
from .lag import LagFollower
from .point import PointSolver
from .solver import Solver

__all__ = ["AngleChainSet", "PointChainSet", "Solver", "AngleSolver", "PointSolver", "LagFollower"]

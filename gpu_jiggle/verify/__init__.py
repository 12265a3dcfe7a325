"""The properties of SPEC section 8, measured: one function per check, for angle chains
(:func:`free_decay`, :func:`rest`, :func:`frame_rates`, :func:`wraparound`, :func:`teleport`,
:func:`cross_check`) and for point chains (:func:`point_free_decay`, :func:`point_rest`,
:func:`point_frame_rates`, :func:`point_teleport`, :func:`point_cross_check`; property 4,
wraparound, is about angles only). ``gpu-jiggle verify`` and the tests
(``tests/verify/test_properties.py``, ``tests/verify/test_point_properties.py``) all call them.

Modules: :mod:`~gpu_jiggle.verify.scenarios` (the rigs, poses, motions and frame times the
checks and the tests drive the solver with), :mod:`~gpu_jiggle.verify.measure` (helpers the
checks share), :mod:`~gpu_jiggle.verify.angle` (angle chains, properties 1-5),
:mod:`~gpu_jiggle.verify.point` (point chains, 1 and 2), :mod:`~gpu_jiggle.verify.point_motion`
(point chains, 3 and 5), :mod:`~gpu_jiggle.verify.cross` (property 6 for both),
:mod:`~gpu_jiggle.verify.field` (model v2's field scenarios: :func:`ear_frame_rates`,
:func:`tracking`, :func:`contact`, :func:`precision`; its depths from
:mod:`~gpu_jiggle.verify.contact_geometry`), :mod:`~gpu_jiggle.verify.low_rates`
(:func:`low_frame_rates`: the target path at 10-20 fps, SPEC 2), :mod:`~gpu_jiggle.verify.cut` (:func:`cut_response`:
how the response depends on the cut, and ``recut``), :mod:`~gpu_jiggle.verify.integrator`
(:func:`exact_integrator`: the exact step against the analytic step response, SPEC 1),
:mod:`~gpu_jiggle.verify.limits` (:func:`cone_limit`, :func:`inside_colliders`: point chains
driven hard against their cone limits and inside colliders, SPEC 9),
:mod:`~gpu_jiggle.verify.joint_limits` (:func:`hinge_limit`, :func:`spherical_limit`: the same
against hinges and ellipses in the joints' frames; all four plotted by
:mod:`~gpu_jiggle.verify.limits_plot`),
:mod:`~gpu_jiggle.verify.lod` (:func:`lod_switches`: level-of-detail switches on a walking body),
:mod:`~gpu_jiggle.verify.result` (:class:`CheckResult`), :mod:`~gpu_jiggle.verify.runner`
(:data:`CHECKS`, :func:`run_all`, :func:`format_table`, :func:`write_plots`) and
:mod:`~gpu_jiggle.verify.plots` (matplotlib, imported only by :func:`write_plots`).

This package uses :mod:`gpu_jiggle.sim` and :mod:`gpu_jiggle.gl` only.
"""
from .angle import free_decay, frame_rates, rest, teleport, wraparound
from .cross import cross_check, point_cross_check
from .cut import cut_response
from .field import contact, ear_frame_rates, precision, tracking
from .low_rates import low_frame_rates
from .integrator import exact_integrator
from .joint_limits import hinge_limit, spherical_limit
from .limits import cone_limit, inside_colliders
from .lod import lod_switches
from .measure import REFERENCE_VARIANTS, gpu_available, half_cycle_peaks, wrap
from .point import point_free_decay, point_rest
from .point_motion import point_frame_rates, point_teleport
from .result import CheckResult
from .runner import CHECKS, format_table, run_all, write_plots
from .scenarios import (FORCE_VARIANTS, axis_rotation, point_body_motion, random_chains, random_point_chains,
                        root_motion, standard_chains, standard_point_chains, standard_point_pose, variant_name)

__all__ = [
    "CheckResult",
    "standard_chains",
    "root_motion",
    "random_chains",
    "half_cycle_peaks",
    "wrap",
    "free_decay",
    "rest",
    "frame_rates",
    "wraparound",
    "teleport",
    "cross_check",
    "FORCE_VARIANTS",
    "REFERENCE_VARIANTS",
    "variant_name",
    "standard_point_chains",
    "standard_point_pose",
    "point_body_motion",
    "axis_rotation",
    "random_point_chains",
    "point_free_decay",
    "point_rest",
    "point_frame_rates",
    "point_teleport",
    "point_cross_check",
    "ear_frame_rates",
    "tracking",
    "contact",
    "precision",
    "low_frame_rates",
    "CHECKS",
    "cut_response",
    "exact_integrator",
    "cone_limit",
    "inside_colliders",
    "hinge_limit",
    "spherical_limit",
    "lod_switches",
    "run_all",
    "format_table",
    "write_plots",
    "gpu_available",
]

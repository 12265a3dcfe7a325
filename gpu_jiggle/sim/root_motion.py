"""The root acceleration an angle chain stays stable under, and a watch that warns when a
frame's root accelerates harder (SPEC section 1, "Stability of the whole step").

The inertia term of SPEC 3 feels the root's acceleration A through ``g_eff = g - μ·A + W``,
which turns a segment of length L like a spring of stiffness ``μ·|A|/L``. The solver refuses
up front a chain that cannot stay stable under its ``max_root_acceleration``
(:func:`~gpu_jiggle.sim.spring.check_stable`); :func:`largest_root_accelerations` gives the
most each chain stays stable under, and :class:`RootAccelerationWatch` holds it against the
acceleration the kernel saw on each frame (its ``watch_root`` stage) and says so once when a
chain's goes past it, never clamping anything.
"""
from __future__ import annotations

import warnings

import numpy as np

from .clock import stacklevel_outside_package
from .spring import largest_external_stiffness

__all__ = ["RootAccelerationWarning", "largest_root_accelerations", "RootAccelerationWatch"]


class RootAccelerationWarning(UserWarning):
    """A frame on which a chain's root accelerates harder than its segments stay stable under
    (SPEC 1, "Stability"): it may flail. The frame runs as given. Said once per chain until its
    acceleration drops back under the bound."""


def largest_root_accelerations(chain_set, wind, substep: float, integrator: str) -> np.ndarray:
    """(C,) float64, length/s²: for each angle chain the largest root acceleration |A| under
    which every one of its segments stays stable at ``substep`` seconds with ``wind``
    (:class:`~gpu_jiggle.sim.inputs.Wind`): the largest external stiffness K the step keeps
    stable (:func:`~gpu_jiggle.sim.spring.largest_external_stiffness`), less the gust's
    gradient, times L, less gravity, wind and gust across the segment, over μ; inf for a chain
    whose segments all have μ = 0, 0 for one that has no room left."""
    amplitude = abs(float(wind.gust_amplitude))
    gust_stiffness = amplitude * float(np.linalg.norm(wind.gust_wave_vector))
    largest = largest_external_stiffness(chain_set.frequency, chain_set.damping_ratio, substep, chain_set.air_drag,
                                         integrator) - gust_stiffness
    steady = np.linalg.norm(np.asarray(chain_set.gravity, np.float64) + wind.acceleration, axis=-1) + amplitude
    room = np.maximum(largest, 0.0) * chain_set.lengths - np.repeat(steady, chain_set.segment_counts)
    inertia = chain_set.inertia
    with np.errstate(divide="ignore", invalid="ignore"):
        per_segment = np.where(inertia > 0, np.maximum(room, 0.0) / inertia, np.where(room > 0, np.inf, 0.0))
    if chain_set.segment_count == 0:
        return np.zeros(0)
    return np.minimum.reduceat(per_segment, chain_set.first_segment)


#: Seconds a chain's root acceleration must stay under its bound before a new warning for it.
QUIET_SECONDS = 1.0


class RootAccelerationWatch:
    """Says when a chain's root accelerates past the bound it stays stable under, once per chain
    until it has stayed under for :data:`QUIET_SECONDS` (SPEC 1, "Stability"), never clamping
    anything.

    The acceleration judged is the kernel's own: each frame, both backends' ``watch_root`` stage
    gives per chain the largest |A| of the root's acceleration over its substeps (SPEC 3, step
    1, the A it integrates with, on the target path it rebuilds from the poses, SPEC 2), or
    none where the frame is not judged (the chain ran no substeps, jumped, or started moving:
    a cut is the caller's). The watch keeps only what it has said.

    Args:
        chain_count: C.
    """

    def __init__(self, chain_count: int):
        self.over = np.zeros(chain_count, bool)     # warned, not yet quiet again
        self.quiet = np.zeros(chain_count)          # s under the bound since the warning

    def warn(self, estimate, bound, substep, declared, frame_seconds, sim_time: float) -> None:
        """Say once (a :class:`RootAccelerationWarning`) for the chains whose ``estimate``
        passes ``bound`` ((C,) length/s², at each chain's ``substep``, s), and again only after
        it stayed under for :data:`QUIET_SECONDS`; ``declared``: (C,) their
        max_root_acceleration; ``frame_seconds``: (C,) the time each chain's frame covered
        (its level's span); ``sim_time``: the simulated time at the frame's end (s), in the
        message, so that a warning said again is not the same text as the first (Python's
        default filter shows a text once per place). NaN estimates (frames not judged) change
        nothing. Only the chains past their bound and those warned and not yet quiet are
        looked at one by one."""
        past = np.flatnonzero(estimate > bound)  # NaN is never past
        if self.over.any():  # each chain warned and seen this frame counts its frame under the bound
            over = np.flatnonzero(self.over)
            seen = over[~np.isnan(estimate[over])]
            self.quiet[seen] += frame_seconds[seen]
            self.quiet[past] = 0.0
            self.over[over[self.quiet[over] >= QUIET_SECONDS]] = False
        else:
            self.quiet[past] = 0.0
        new = past[~self.over[past]]
        self.over[past] = True
        if not new.size:
            return
        c = int(new[np.argmax(estimate[new] / np.maximum(bound[new], 1e-300))])
        others = f" ({new.size - 1} other chain{'s' if new.size > 2 else ''} too)" if new.size > 1 else ""
        warnings.warn(
            f"chain {c}: its root accelerates at {estimate[c]:.4g} length/s² on this frame (at {sim_time:.6g} s of "
            f"simulated time, on the target path rebuilt from the poses), more than the {bound[c]:.4g} length/s² its segments stay stable under at the "
            f"substep {substep[c]:.4g} s{others}; it may flail (docs/SPEC.md section 1, \"Stability\"; its "
            f"max_root_acceleration is {declared[c]:.4g}). Raise max_root_acceleration to have the chain set "
            f"checked for it, lengthen its shortest segments or lower the substep; a cut or respawn is a teleport. "
            f"Said again only after {QUIET_SECONDS:g} s under the bound.", RootAccelerationWarning,
            stacklevel=stacklevel_outside_package())

    def arrays(self) -> dict:
        """The watch as numpy arrays, for a saved state: ``quiet`` (C,) float64 and ``flags``
        (C,) uint8, bit 1 set for a chain warned and not yet quiet."""
        return {"quiet": self.quiet.copy(), "flags": self.over.astype(np.uint8) << 1}

    def restore(self, arrays: dict) -> None:
        """Take what :meth:`arrays` gave (a float64 and a uint8 array of the right shapes). A
        state saved when the watch followed the root's path on the host holds that path too
        (``start``, ``rate``, ``velocity``, ``path_lag``): the kernel's state has it, so it is
        not read."""
        self.quiet = np.array(arrays["quiet"], np.float64)
        self.over = (np.asarray(arrays["flags"], np.uint8) & 2) != 0

"""The root acceleration an angle chain stays stable under, and a watch on the poses that
warns when a frame's root accelerates harder (SPEC section 1, "Stability of the whole step").

The inertia term of SPEC 3 feels the root's acceleration A through ``g_eff = g - μ·A + W``,
which turns a segment of length L like a spring of stiffness ``μ·|A|/L``. The solver refuses
up front a chain that cannot stay stable under its ``max_root_acceleration``
(:func:`~gpu_jiggle.sim.spring.check_stable`); :func:`largest_root_accelerations` gives the
most each chain stays stable under, and :class:`RootAccelerationWatch` estimates, on the host
and from the poses alone, the acceleration the kernel will see on the target path it rebuilds
between them (SPEC 2), and says so once when a chain's goes past it, never clamping anything.
"""
from __future__ import annotations

import warnings

import numpy as np

from . import layouts
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


def _start_tangent(d, m0s, path: int):
    """The start velocity (× span) the target path of kind ``path`` takes toward the move
    ``d`` ((n, 2) float64), as ``start_tangent`` in ``common.glsl`` (SPEC 2): the monotone
    path keeps its part along d within [0, 3]·d and its part across d within 3|d|."""
    if path != layouts.PATH_MONOTONE:
        return m0s
    dd = _dot(d, d)
    moves = dd != 0
    along = _dot(m0s, d) / np.where(moves, dd, 1.0)
    across = m0s - along[:, None] * d
    aa = _dot(across, across)
    long = aa > 9.0 * dd
    if long.any():
        across = np.where(long[:, None], across * np.sqrt(9.0 * dd / np.where(long, aa, 1.0))[:, None], across)
    return np.where(moves[:, None], np.clip(along, 0.0, 3.0)[:, None] * d + across, 0.0)


def _dot(a, b):
    """Row-wise dot product of (n, 2) arrays."""
    return a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1]


def _length(a):
    """Row-wise length of (n, 2) arrays."""
    return np.sqrt(_dot(a, a))


#: Seconds a chain's root acceleration must stay under its bound before a new warning for it.
QUIET_SECONDS = 1.0


def _path_weights(alpha, path: int):
    """``(p, q, dp, dq)`` (float64 arrays) of the target path at fractions ``alpha`` (SPEC 2;
    ``path_weights`` in ``common.glsl``)."""
    alpha = np.asarray(alpha, np.float64)
    if path == layouts.PATH_LINEAR:
        return alpha, 0.0 * alpha, 1.0 + 0.0 * alpha, 0.0 * alpha
    u = 1.0 - alpha
    return alpha * alpha * (2.0 - alpha), alpha * u * u, alpha * (4.0 - 3.0 * alpha), u * (1.0 - 3.0 * alpha)


class RootAccelerationWatch:
    """Follows each angle chain's root along the target path the kernel rebuilds from the
    poses, and warns when its acceleration passes the chain's bound.

    The path is SPEC 2's, in float64 on the host: from where the last substep left it (x0,
    with its velocity) to this frame's pose over ``span`` seconds, sampled at the frame's
    substeps; the acceleration is the kernel's (SPEC 3, step 1): ``V = (P - P_prev)/path_step``,
    ``A = (V - V_prev)/path_step``. Teleports move it as the kernel does (SPEC 5) and their
    frames are not judged (a cut is the caller's); a chain declared moving, and a frozen one
    (snapped moving every frame), starts its path at the speed it is seen to have, with no
    acceleration, as the kernel does.

    Args:
        chain_count: C.
    """

    def __init__(self, chain_count: int):
        self.start = np.zeros((chain_count, 2))     # x0: the path at the last substep (length)
        self.rate = np.zeros((chain_count, 2))      # the path's velocity there (length/s)
        self.velocity = np.zeros((chain_count, 2))  # V_prev: the last substep's (length/s)
        self.moving = np.zeros(chain_count, bool)   # the next frame that runs starts moving
        self.over = np.zeros(chain_count, bool)     # warned, not yet quiet again
        self.quiet = np.zeros(chain_count)          # s under the bound since the warning
        self._spans = np.zeros(chain_count)         # s, each chain's span on the last frame

    def observe(self, pose, teleport, levels, plan, path: int) -> np.ndarray:
        """Take this frame's pose; returns (C,) float64, the largest |A| (length/s²) of each
        chain's substeps on this frame, NaN for chains that run none or jump.

        The path is a cubic in the fraction α (section 2), so on the frame's even grid of α
        the kernel's second differences are exact: ``A_j = (4 - 6·α_{j-1})·(d - m0s)/span²``
        for j ≥ 2, largest at j = 2 or n; ``A_1`` compares the first substep's velocity with
        the last frame's. So a few (C, 2) passes serve any number of substeps.

        Args:
            pose: (C, 2) float64 root positions. teleport: (C,) uint32 flags. levels: (C,)
                uint32 levels of detail this frame runs. plan: the frame's
                :class:`~gpu_jiggle.sim.clock.FramePlan`. path: the ``layouts.PATH_*`` kind.
        """
        pose = np.asarray(pose, np.float64)
        frozen = levels == layouts.LOD_FROZEN
        if frozen.any():
            teleport = np.where(frozen, np.uint32(layouts.TELEPORT_SNAP | layouts.TELEPORT_MOVING), teleport)
        jumps = bool(teleport.any())
        if jumps:
            mode = teleport & layouts.TELEPORT_MODE_MASK
            snap, keep = mode == layouts.TELEPORT_SNAP, mode == layouts.TELEPORT_KEEP_SHAPE
            declared_moving = (teleport & layouts.TELEPORT_MOVING) != 0
            mirrored = np.flatnonzero((teleport & layouts.TELEPORT_MIRROR) != 0)
            if mirrored.size:  # reflected about the vertical through the root
                self.start[mirrored, 0] = 2.0 * pose[mirrored, 0] - self.start[mirrored, 0]
                self.rate[mirrored, 0] *= -1.0
                self.velocity[mirrored, 0] *= -1.0
            self.moving |= declared_moving & ~snap  # a snapped chain starts moving on its next frame
        estimate = np.full(len(pose), np.nan)
        for level, step in ((layouts.LOD_FULL, plan.full), (layouts.LOD_HALF, plan.half)):
            chains = levels == level
            if not chains.any():
                continue
            span = step.span
            if jumps and keep.any():  # the path carried by the jump (as apply_teleport)
                self.start = np.where((keep & chains)[:, None], pose - span * self.rate, self.start)
            n = step.substep_count
            if not n:
                continue
            runs = chains & ~snap if jumps else chains
            any_moving = bool(self.moving.any())
            d = pose - self.start
            m0s = _start_tangent(d, span * self.rate, path)
            if any_moving:
                m0s = np.where(self.moving[:, None], d, m0s)
            alphas = np.asarray(step.alphas, np.float64)[[0, max(n - 2, 0), n - 1]]
            p, q, dp, dq = _path_weights(alphas, path)
            first = self.start + p[0] * d + q[0] * m0s
            before_last = first if n <= 2 else self.start + p[1] * d + q[1] * m0s
            last = first if n == 1 else self.start + p[2] * d + q[2] * m0s
            ps = step.path_step
            v_first = (first - self.start) / ps
            judged = runs & ~self.moving & ~keep if jumps else (runs & ~self.moving if any_moving else runs)
            a_first = _length(v_first - self.velocity) / ps
            if n >= 2 and path != layouts.PATH_LINEAR:  # the cubic's own, at j = 2 and j = n
                reach = max(abs(4.0 - 6.0 * alphas[0]), abs(4.0 - 6.0 * alphas[1]))
                a_first = np.maximum(a_first, reach * _length(d - m0s) / (span * span))
            v_last = (last - before_last) / ps if n >= 2 else v_first
            rate = (dp[2] * d + dq[2] * m0s) / span
            if runs.all():  # the common frame: every chain runs at this level, none jumps
                estimate = np.where(judged, a_first, np.nan) if jumps or any_moving else a_first
                self.start, self.rate, self.velocity = last, rate, v_last
                self.moving[:] = False
                continue
            estimate = np.where(judged, a_first, estimate)
            ran = runs[:, None]
            self.start = np.where(ran, last, self.start)
            self.rate = np.where(ran, rate, self.rate)
            self.velocity = np.where(ran, v_last, self.velocity)
            self.moving &= ~runs
        if jumps:
            self.start[snap], self.rate[snap], self.velocity[snap] = pose[snap], 0.0, 0.0
            self.moving |= declared_moving & snap
        self._spans = np.where(levels == layouts.LOD_HALF, plan.half.span, plan.full.span)
        return estimate

    def warn(self, estimate, bound, substep, declared) -> None:
        """Say once (a :class:`RootAccelerationWarning`) for the chains whose ``estimate``
        passes ``bound`` ((C,) length/s², at each chain's ``substep``, s), and again only after
        it stayed under for :data:`QUIET_SECONDS`; ``declared``: (C,) their
        max_root_acceleration. NaN estimates change nothing."""
        seen = ~np.isnan(estimate)
        past = seen & (np.where(seen, estimate, 0.0) > bound)
        self.quiet = np.where(past, 0.0, np.where(seen & self.over, self.quiet + self._spans, self.quiet))
        self.over &= ~(self.quiet >= QUIET_SECONDS)
        new = np.flatnonzero(past & ~self.over)
        self.over |= past
        if not new.size:
            return
        c = int(new[np.argmax(estimate[new] / np.maximum(bound[new], 1e-300))])
        others = f" ({new.size - 1} other chains too)" if new.size > 1 else ""
        warnings.warn(
            f"chain {c}: its root accelerates at {estimate[c]:.4g} length/s² on this frame (on the target path "
            f"rebuilt from the poses), more than the {bound[c]:.4g} length/s² its segments stay stable under at the "
            f"substep {substep[c]:.4g} s{others}; it may flail (docs/SPEC.md section 1, \"Stability\"; its "
            f"max_root_acceleration is {declared[c]:.4g}). Raise max_root_acceleration to have the chain set "
            f"checked for it, lengthen its shortest segments or lower the substep; a cut or respawn is a teleport. "
            f"Said again only after {QUIET_SECONDS:g} s under the bound.", RootAccelerationWarning,
            stacklevel=stacklevel_outside_package())

    def arrays(self) -> dict:
        """The watch as numpy arrays, for a saved state."""
        flags = self.moving.astype(np.uint8) | self.over.astype(np.uint8) << 1
        return {"start": self.start.copy(), "rate": self.rate.copy(), "velocity": self.velocity.copy(),
                "quiet": self.quiet.copy(), "flags": flags}

    def restore(self, arrays: dict) -> None:
        """Take what :meth:`arrays` gave (float64 and uint8 arrays of the right shapes)."""
        self.start, self.rate, self.velocity, self.quiet = (np.array(arrays[k], np.float64) for k in
                                                            ("start", "rate", "velocity", "quiet"))
        flags = np.asarray(arrays["flags"], np.uint8)
        self.moving, self.over = (flags & 1) != 0, (flags & 2) != 0

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
from .inputs import path_weights, start_tangent
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


def _complex(a):
    """(n,) complex64 x + iy of (n, 2) float32 rows, a view where they are contiguous: a 2D
    vector's scaling, sum and length each in one pass."""
    return np.ascontiguousarray(a, np.float32).view(np.complex64)[:, 0]


def _pairs(z):
    """(n, 2) float32 rows (x, y), a view of (n,) complex64 ``z``."""
    return z.view(np.float32).reshape(-1, 2)


#: Seconds a chain's root acceleration must stay under its bound before a new warning for it.
QUIET_SECONDS = 1.0


class _FrameWeights:
    """One level's frame on the target path as float64 scalars: each quantity the watch needs is
    ``a·d + b·m0s`` for the frame's move d and limited start tangent m0s (SPEC 2), with (a, b)
    from :func:`~gpu_jiggle.sim.inputs.path_weights` at the frame's substeps α_0 = 0, α_1..α_n:
    ``first`` the first substep's velocity (× path_step), ``moves`` the path's move to its last
    substep, ``rates`` its velocity there (× span), ``last`` the last substep's velocity
    (× path_step), ``bends`` the second differences of positions at substeps 2 and n (× path_step²,
    none for n = 1). For weights that are cubics in α (every kind in ``layouts.PATH_*``) the
    second differences on the even grid of α are linear in α, so the kernel's largest |A_j| over
    j ≥ 2 is at j = 2 or j = n."""

    def __init__(self, step, path: int):
        n = step.substep_count
        alphas = [0.0] + np.asarray(step.alphas, np.float64).tolist()[:n]
        at = [np.array(path_weights(alpha, path)[:2], np.float64) for alpha in alphas]
        self.count = n
        if not n:
            return
        self.first = at[1] - at[0]
        self.moves = at[n] - at[0]
        self.rates = np.array(path_weights(alphas[n], path)[2:], np.float64)
        self.last = at[n] - at[n - 1]
        self.bends = [at[j] - 2.0 * at[j - 1] + at[j - 2] for j in sorted({2, n})] if n >= 2 else []
        # The Hermite weights add up to α, so their second differences are (c, -c) up to the
        # rounding of α: then every |A_j| is |c_j|·|d - m0s| and one length serves them all.
        along_bend = bool(self.bends) and all(abs(a + b) <= 1e-6 * abs(a) for a, b in self.bends)
        self.reach = max(abs(a) for a, _ in self.bends) if along_bend else None


def _lags(plan, index: int) -> tuple:
    """(start_lag, end_lag) of the plan's full (index 0) or half (1) clock as float32, as the
    kernel's schedule holds them (SPEC 2, "Levels of detail")."""
    return np.float32(plan.start_lags[index]), np.float32(plan.end_lags[index])


class RootAccelerationWatch:
    """Follows each angle chain's root along the target path the kernel rebuilds from the
    poses, and warns when its acceleration passes the chain's bound.

    The path is SPEC 2's, on the host: from where the last substep left it (x0, float64 world
    coordinates, with its velocity; the moves and velocities float32, as the kernel's) to this
    frame's pose over ``span`` seconds, sampled at the frame's substeps; the acceleration is
    the kernel's (SPEC 3, step 1): ``V = (P - P_prev)/path_step``, ``A = (V - V_prev)/path_step``.
    Teleports move it as the kernel does (SPEC 5) and their frames are not judged (a cut is the
    caller's); a chain declared moving, and a frozen one (snapped moving every frame), starts
    its path at the speed it is seen to have over its own time, with no acceleration, and a
    chain whose path lags its clock's (back from frozen or a snap, between full and half) has
    it carried along its velocity to the clock's start, as the kernel does (SPEC 2, "Levels of
    detail": each chain's path_lag, kept here too).

    Args:
        chain_count: C.
    """

    def __init__(self, chain_count: int):
        self.start = np.zeros((chain_count, 2))     # x0: the path at the last substep (length)
        self.rate = np.zeros((chain_count, 2), np.float32)  # the path's velocity there (length/s)
        self.velocity = np.zeros((chain_count, 2), np.float32)  # V_prev: the last substep's (length/s)
        self.moving = np.zeros(chain_count, bool)   # the next frame that runs starts moving
        self.path_lag = np.zeros(chain_count, np.float32)  # s from x0 to the last frame's time
        self.over = np.zeros(chain_count, bool)     # warned, not yet quiet again
        self.quiet = np.zeros(chain_count)          # s under the bound since the warning
        self._levels = None                         # (C,) the levels of the last frame observed
        self._level_spans = (0.0, 0.0)              # s, its spans at full and half rate

    def observe(self, pose, teleport, levels, plan, path: int) -> np.ndarray:
        """Take this frame's pose; returns (C,) float32, the largest |A| (length/s²) of each
        chain's substeps on this frame, NaN for chains that run none or jump.

        The path's weights are cubics in the fraction α (section 2), so on the frame's even grid
        of α the kernel's second differences are linear in α, largest at substep 2 or n; ``A_1``
        compares the first substep's velocity with the last frame's (:class:`_FrameWeights`).
        So a few (C,) complex64 passes (x + iy) serve any number of substeps: the moves and
        velocities are float32, as the kernel's, and the path's start stays float64 (world
        coordinates). A frame where every chain runs at one level in step with its clock, none
        jumping or starting to move, takes them over all chains at once; any other goes level
        by level over the chains that run.

        Args:
            pose: (C, 2) float64 root positions. teleport: (C,) uint32 flags. levels: (C,)
                uint32 levels of detail this frame runs. plan: the frame's
                :class:`~gpu_jiggle.sim.clock.FramePlan`. path: the ``layouts.PATH_*`` kind.
        """
        pose = np.asarray(pose, np.float64)
        self.rate = np.ascontiguousarray(self.rate, np.float32)
        self.velocity = np.ascontiguousarray(self.velocity, np.float32)
        self._levels, self._level_spans = levels, (plan.full.span, plan.half.span)
        estimate = np.full(len(pose), np.nan, np.float32)
        level = int(levels[0]) if len(levels) else layouts.LOD_FULL
        if level != layouts.LOD_FROZEN:  # the common frame: one level, no jump, every chain in step
            step, start_lag, end_lag = ((plan.full, *_lags(plan, 0)) if level == layouts.LOD_FULL else
                                        (plan.half, *_lags(plan, 1)))
            if (not teleport.any() and not self.moving.any() and bool((levels == level).all())
                    and bool((self.path_lag == start_lag).all())):
                self.path_lag[:] = end_lag
                return self._follow(pose, step, path) if step.substep_count else estimate
        frozen = levels == layouts.LOD_FROZEN
        if frozen.any():
            teleport = np.where(frozen, np.uint32(layouts.TELEPORT_SNAP | layouts.TELEPORT_MOVING), teleport)
        mode = teleport & layouts.TELEPORT_MODE_MASK
        snap, keep = mode == layouts.TELEPORT_SNAP, mode == layouts.TELEPORT_KEEP_SHAPE
        declared_moving = (teleport & layouts.TELEPORT_MOVING) != 0
        mirrored = np.flatnonzero((teleport & layouts.TELEPORT_MIRROR) != 0)
        if mirrored.size:  # reflected about the vertical through the root
            self.start[mirrored, 0] = 2.0 * pose[mirrored, 0] - self.start[mirrored, 0]
            self.rate[mirrored, 0] *= -1.0
            self.velocity[mirrored, 0] *= -1.0
        self.moving |= declared_moving & ~snap  # a snapped chain starts moving on its next frame
        lag, frame_time = self.path_lag.copy(), np.float32(plan.frame_time)
        in_step = np.zeros(len(pose), bool)
        for index, (level, step) in enumerate(((layouts.LOD_FULL, plan.full), (layouts.LOD_HALF, plan.half))):
            chains = levels == level
            start_lag, end_lag = _lags(plan, index)
            in_step |= chains & (lag == start_lag)
            carried = np.flatnonzero(keep & chains)
            if carried.size:  # the path carried by the jump (as apply_teleport)
                self.start[carried] = pose[carried] - step.span * self.rate[carried].astype(np.float64)
            rows = np.flatnonzero(chains & ~snap)
            if not step.substep_count or not rows.size:
                continue
            moving = self.moving[rows]
            if moving.any():  # the path starts at the speed seen over the chain's own time (start_moving)
                starting = rows[moving]
                own = lag[starting] + frame_time
                with np.errstate(divide="ignore"):
                    inv_own = np.where(own > 0, np.float32(1.0) / own, np.float32(0.0))
                inv_own = np.where(lag[starting] == start_lag, np.float32(1.0 / step.span), inv_own)
                seen = (pose[starting] - self.start[starting]).astype(np.float32)
                self.rate[starting] = seen * inv_own[:, None]
            behind = rows[lag[rows] != start_lag]
            if behind.size:  # carried along the path's velocity to the clock's start (resume_path)
                self.start[behind] += ((lag[behind] - start_lag)[:, None] * self.rate[behind]).astype(np.float64)
            found = self._follow(pose, step, path, rows)
            estimate[rows] = np.where(moving | keep[rows], np.float32(np.nan), found)
            self.moving[rows] = False
            in_step[rows] = True  # it ran: its path ends where the clock does
        self.start[snap], self.rate[snap], self.velocity[snap] = pose[snap], 0.0, 0.0
        self.moving |= declared_moving & snap
        half = levels == layouts.LOD_HALF
        ends = np.where(half, _lags(plan, 1)[1], _lags(plan, 0)[1])
        self.path_lag = np.where(snap, np.float32(0.0), np.where(in_step, ends, lag + frame_time)).astype(np.float32)
        return estimate

    def _follow(self, pose, step, path: int, rows=None) -> np.ndarray:
        """Moves the chains ``rows`` (an index array; None: all) along this frame's path of kind
        ``path`` over ``step`` (a :class:`~gpu_jiggle.sim.clock.StepPlan` that runs substeps);
        returns their largest |A| (float32, length/s²)."""
        start = self.start if rows is None else self.start[rows]
        rate = _complex(self.rate if rows is None else self.rate[rows])
        velocity = _complex(self.velocity if rows is None else self.velocity[rows])
        d = ((pose if rows is None else pose[rows]) - start).astype(np.float32)
        m0s = _complex(start_tangent(d, _pairs(np.float32(step.span) * rate), path))
        d = _complex(d)
        w = _FrameWeights(step, path)
        per_step, per_span = 1.0 / step.path_step, 1.0 / step.span

        def along(weights, scale):  # a·d + b·m0s, one pass fewer where b is 0 (α = 0 or 1)
            a, b = float(weights[0] * scale), float(weights[1] * scale)
            return a * d if b == 0.0 else a * d + b * m0s

        jump = along(w.first, per_step)
        jump -= velocity
        estimate = np.abs(jump)
        estimate *= np.float32(per_step)
        if w.reach is not None:
            np.maximum(estimate, np.abs(d - m0s) * np.float32(w.reach * per_step * per_step), out=estimate)
        else:
            for bend in w.bends:
                np.maximum(estimate, np.abs(along(bend, per_step * per_step)), out=estimate)
        moved = start + _pairs(along(w.moves, 1.0))
        rate, velocity = _pairs(along(w.rates, per_span)), _pairs(along(w.last, per_step))
        if rows is None:
            self.start, self.rate, self.velocity = moved, rate, velocity
        else:
            self.start[rows], self.rate[rows], self.velocity[rows] = moved, rate, velocity
        return estimate

    def warn(self, estimate, bound, substep, declared) -> None:
        """Say once (a :class:`RootAccelerationWarning`) for the chains whose ``estimate``
        passes ``bound`` ((C,) length/s², at each chain's ``substep``, s), and again only after
        it stayed under for :data:`QUIET_SECONDS`; ``declared``: (C,) their
        max_root_acceleration. NaN estimates change nothing. Only the chains past their bound
        and those warned and not yet quiet are looked at one by one."""
        past = np.flatnonzero(estimate > bound)  # NaN is never past
        if self.over.any():  # each chain warned and seen this frame counts its frame under the bound
            over = np.flatnonzero(self.over)
            seen = over[~np.isnan(estimate[over])]
            levels = self._levels[seen] if self._levels is not None else np.full(seen.size, layouts.LOD_FULL)
            self.quiet[seen] += np.where(levels == layouts.LOD_HALF, *self._level_spans[::-1])
            self.quiet[past] = 0.0
            self.over[over[self.quiet[over] >= QUIET_SECONDS]] = False
        else:
            self.quiet[past] = 0.0
        new = past[~self.over[past]]
        self.over[past] = True
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
        return {"start": self.start.copy(), "rate": self.rate.astype(np.float64), "velocity":
                self.velocity.astype(np.float64), "quiet": self.quiet.copy(), "flags": flags,
                "path_lag": self.path_lag.copy()}

    def restore(self, arrays: dict) -> None:
        """Take what :meth:`arrays` gave (float64, float32 and uint8 arrays of the right shapes);
        without ``path_lag`` (a state saved before it was kept) the path lags stay as they are."""
        self.start, self.quiet = (np.array(arrays[k], np.float64) for k in ("start", "quiet"))
        self.rate, self.velocity = (np.array(arrays[k], np.float32) for k in ("rate", "velocity"))
        flags = np.asarray(arrays["flags"], np.uint8)
        self.moving, self.over = (flags & 1) != 0, (flags & 2) != 0
        if "path_lag" in arrays:
            self.path_lag = np.array(arrays["path_lag"], np.float32)

"""The numpy reference backend: the GLSL kernel ``shaders/sim/angle_chains.comp`` written again in
float32 numpy, vectorised over chains, with the same stages and the same operation order.

Chains are walked root to tip by depth: at depth d every chain with more than d segments
advances its d-th segment at once, so the only Python loops are over substeps and depth. The
state lives in contiguous float32 arrays, one per field, in the depth order of
:class:`~.common.DepthOrder` (longest chains first, segments depth-major), where each
depth is a slice: the walk reads and writes views, and records in the solver's order are made
only when the state is read.
"""
from __future__ import annotations

import numpy as np

from ... import layouts
from .common import DepthWalkBackend, FieldState, exact_change, path_weights, start_tangent

F = np.float32
PI = F(np.pi)
TWO_PI = F(2.0 * np.pi)
INV_TWO_PI = F(1.0 / (2.0 * np.pi))

_CHAIN_FIELDS = ("prev_root_position", "prev_root_velocity", "last_root_position", "root_position_rate",
                 "last_root_angle", "root_angle_rate", "flags", "path_lag")
_SEGMENT_FIELDS = ("angle", "angular_velocity", "prev_angle", "prev_angular_velocity", "last_local_angle",
                   "local_angle_rate", "target_angle")


def wrap_angle(a):
    """``a - 2π·floor((a + π)·(1/2π))`` in float32, as ``wrap_angle`` in ``common.glsl`` (in
    one work array: the same operations in the same order)."""
    turns = np.add(a, PI, dtype=F)
    turns *= INV_TWO_PI
    np.floor(turns, out=turns)
    turns *= TWO_PI
    return np.subtract(a, turns, out=turns)


class ReferenceAngleBackend(DepthWalkBackend):
    """Angle chains in numpy (float32). See :mod:`gpu_jiggle.sim.backends` for the interface."""

    OUTPUTS = {"joint_output": (layouts.ANGLE_JOINT_OUTPUT, "joint"),
               "segment_output": (layouts.ANGLE_SEGMENT_OUTPUT, "segment"),
               "chain_output": (layouts.ANGLE_CHAIN_OUTPUT, "chain")}
    DTYPES = {"chain_target": (layouts.ANGLE_CHAIN_TARGET, "chain")}

    def __init__(self, chain_set):
        super().__init__(chain_set)
        self.local_angle = np.zeros(self.segment_count, F)  # storage order
        self.state = FieldState(self.order, {
            "chain_state": (layouts.ANGLE_CHAIN_STATE, "chain", dict.fromkeys(_CHAIN_FIELDS)),
            "segment_state": (layouts.ANGLE_SEGMENT_STATE, "segment", dict.fromkeys(_SEGMENT_FIELDS))})

    def upload_rig(self, chain_rig, segment_rig, exact_step):
        super().upload_rig(chain_rig, segment_rig, exact_step)
        order = self.order.segment_order
        #: The rig per field, contiguous float32 in storage order.
        self.rig = {name: np.ascontiguousarray(segment_rig[name][order]) for name in
                    ("length", "inv_length", "stiffness", "damping", "inertia", "angle_limit", "air_drag")}
        self.gravity = np.ascontiguousarray(chain_rig["gravity"][self.order.chain_order].astype(F))

    def upload_targets(self, chain_target, local_angle):
        self.chain_target = chain_target.copy()
        self.local_angle = np.asarray(local_angle, F)[self.order.segment_order]

    def run_frame(self, params):
        size = layouts.ANGLE_FRAME_PARAMS.itemsize
        header = params[:size].view(layouts.ANGLE_FRAME_PARAMS)[0]
        options = int(header["options"])
        self.target_path = layouts.path_kind(options)
        self.relative_damping = bool(options & layouts.OPTION_RELATIVE_DAMPING)
        self.exact = bool(options & layouts.OPTION_EXACT_INTEGRATOR)
        self.windy = bool(np.any(header["wind"][:3] != 0))
        s = _FrameScratch(self, header)
        self.shift_anchor(s)
        lod = s.lod
        # Frozen chains sit on their targets: a snap every frame, of a body that is moving (SPEC
        # 5), so that back at a level that runs they start moving with their targets.
        frozen = lod == layouts.LOD_FROZEN
        s.teleport = np.where(frozen, np.uint32(layouts.TELEPORT_SNAP | layouts.TELEPORT_MOVING), s.teleport)
        self.apply_teleport(s)
        snapped = (s.teleport & layouts.TELEPORT_MODE_MASK) == layouts.TELEPORT_SNAP
        lag = s.path_lag.copy()
        sigma = np.zeros(self.chain_count, F)
        judged = np.zeros(self.chain_count, bool)  # watch_root: the chains whose frame is judged
        s.watched = np.zeros(self.chain_count, F)
        for schedule, alphas, chains, seg in self.schedules(header, params, lod, sigma):
            every = chains.size == self.chain_count
            depth = self.depth_lists(None if every else chains)
            rows, positions = (slice(None), slice(None)) if every else (chains, seg)  # views for all chains
            # Declared moving: starts moving on the first frame after its snap that runs substeps.
            snapped_now = snapped[chains]
            moving = chains[((s.flags[chains] & layouts.CHAIN_START_MOVING) != 0) & ~snapped_now]
            self.start_moving(s, schedule, moving)
            self.resume_path(s, schedule, chains[~snapped_now & (lag[chains] != F(schedule["start_lag"]))])
            first_moving = np.zeros(self.chain_count, bool)
            first_moving[moving] = True
            judged[chains] = True
            judged[moving] = False
            for j, alpha in enumerate(alphas):
                self.substep(s, schedule, alpha, j, rows, depth, first_moving if j == 0 else None)
            self.end_path(s, schedule, alphas[-1], rows, positions)
        s.path_lag = self.path_lags(header, lod, lag, snapped)
        s.store(self)
        self.write_output(s, sigma, self.per_chain(header, lod, "substep"))
        self.watch_root(s, judged & ((s.teleport & layouts.TELEPORT_MODE_MASK) == layouts.TELEPORT_NONE))

    # -- stages (named as in angle_chains.comp) --------------------------------------------
    @staticmethod
    def shift_anchor(s):
        """The state follows each chain's anchor, moved to this frame's root (SPEC 3.4)."""
        s.prev_root_position = s.prev_root_position + s.anchor_shift
        s.last_root_position = s.last_root_position + s.anchor_shift

    def mirror_chains(self, s, chains):
        """SPEC 5, mirror: the chains reflected about the vertical through their root."""
        seg = np.flatnonzero(np.isin(self.order.chain_of_position, chains))
        for name in ("angle", "prev_angle", "target_angle"):
            getattr(s, name)[seg] = wrap_angle(PI - getattr(s, name)[seg])
        for name in ("angular_velocity", "prev_angular_velocity", "last_local_angle", "local_angle_rate"):
            getattr(s, name)[seg] = -getattr(s, name)[seg]
        root_x = s.root_position_pose[chains, 0]
        s.prev_root_position[chains, 0] = F(2) * root_x - s.prev_root_position[chains, 0]
        s.last_root_position[chains, 0] = F(2) * root_x - s.last_root_position[chains, 0]
        s.prev_root_velocity[chains, 0] = -s.prev_root_velocity[chains, 0]
        s.root_position_rate[chains, 0] = -s.root_position_rate[chains, 0]
        s.last_root_angle[chains] = wrap_angle(PI - s.last_root_angle[chains])
        s.root_angle_rate[chains] = -s.root_angle_rate[chains]

    def apply_teleport(self, s):
        """SPEC section 5: mirror, then snap (the path at rest) or carry flagged chains."""
        flags = s.teleport
        if not flags.any():
            return
        mirrored = np.flatnonzero((flags & layouts.TELEPORT_MIRROR) != 0)
        if mirrored.size:
            self.mirror_chains(s, mirrored)
        mode = flags & layouts.TELEPORT_MODE_MASK
        snap = mode == layouts.TELEPORT_SNAP
        keep = mode == layouts.TELEPORT_KEEP_SHAPE
        # keep_shape carries the jump: the pose's distance from where the root's path would
        # have taken it this frame (as in the shader).
        span = self.per_chain(s.header, s.lod, "span")
        turn = wrap_angle(s.root_angle_pose - (s.last_root_angle + span * s.root_angle_rate))
        jump = s.root_position_pose - (s.last_root_position + span[:, None] * s.root_position_rate)
        phi_parent = s.root_angle_pose.copy()
        for ch, seg in self.depth_lists():
            snapped, kept = snap[ch], keep[ch]
            phi = wrap_angle(phi_parent[ch] + s.local_angle[seg])
            for name in ("angle", "prev_angle", "target_angle"):
                value = getattr(s, name)[seg]
                getattr(s, name)[seg] = np.where(snapped, phi, np.where(kept, wrap_angle(value + turn[ch]), value))
            for name in ("angular_velocity", "prev_angular_velocity", "local_angle_rate"):
                getattr(s, name)[seg] = np.where(snapped, F(0), getattr(s, name)[seg])
            s.last_local_angle[seg] = np.where(snapped, s.local_angle[seg], s.last_local_angle[seg])
            phi_parent[ch] = np.where(snapped, phi, phi_parent[ch])
        s.prev_root_position[snap] = s.root_position_pose[snap]
        s.prev_root_velocity[snap] = F(0)
        s.last_root_position[snap] = s.root_position_pose[snap]
        s.root_position_rate[snap] = F(0)
        s.last_root_angle[snap] = s.root_angle_pose[snap]
        s.root_angle_rate[snap] = F(0)
        s.prev_root_position[keep] += jump[keep]
        s.last_root_position[keep] += jump[keep]
        s.last_root_angle[keep] = wrap_angle(s.last_root_angle[keep] + turn[keep])
        s.flags = np.where((flags & layouts.TELEPORT_MOVING) != 0, s.flags | layouts.CHAIN_START_MOVING, s.flags)

    def start_moving(self, s, schedule, chains):
        """SPEC 5, moving: the path of ``chains`` starts at the speed it is seen to have (m0 =
        m1), over the chain's own time from its path's start to this frame's pose (its
        path_lag plus the frame time; resume_path then carries it to the schedule's start)."""
        if not chains.size:
            return
        inv_span = self.own_inv_span(schedule, s.path_lag[chains])
        s.flags[chains] = s.flags[chains] & ~np.uint32(layouts.CHAIN_START_MOVING)
        s.root_position_rate[chains] = (s.root_position_pose[chains] - s.last_root_position[chains]) \
            * inv_span[:, None]
        s.root_angle_rate[chains] = wrap_angle(s.root_angle_pose[chains] - s.last_root_angle[chains]) * inv_span
        rank = self.chain_ranks(chains)
        for ch, seg in self.depth_lists(chains):
            s.local_angle_rate[seg] = wrap_angle(s.local_angle[seg] - s.last_local_angle[seg]) * inv_span[rank[ch]]

    def resume_path(self, s, schedule, chains):
        """SPEC 2, "Levels of detail": the paths of ``chains``, which start at the chain's own
        last substep (its path_lag before the last frame's time), carried along their velocity
        to the schedule's start (its start_lag): Δ = path_lag - start_lag seconds, the root's
        position path and P_prev together, its heading's path and each local angle's path,
        x0 += Δ·m0."""
        if not chains.size:
            return
        shift = s.path_lag[chains] - F(schedule["start_lag"])
        moved = shift[:, None] * s.root_position_rate[chains]
        s.last_root_position[chains] = s.last_root_position[chains] + moved
        s.prev_root_position[chains] = s.prev_root_position[chains] + moved
        s.last_root_angle[chains] = wrap_angle(s.last_root_angle[chains] + shift * s.root_angle_rate[chains])
        rank = self.chain_ranks(chains)
        for ch, seg in self.depth_lists(chains):
            s.last_local_angle[seg] = wrap_angle(s.last_local_angle[seg] + shift[rank[ch]] * s.local_angle_rate[seg])

    def interpolate_root(self, s, w, span, inv_path_step, chains, first_moving):
        """SPEC section 3, step 1: P and Θ on the target path; V and A from P_prev, V_prev
        (no acceleration on a moving chain's first substep). Returns A for ``chains``."""
        p, q = w[0], w[1]
        last_position, last_angle = s.last_root_position[chains], s.last_root_angle[chains]
        d_position = s.root_position_pose[chains] - last_position
        d_angle = wrap_angle(s.root_angle_pose[chains] - last_angle)
        m_position = start_tangent(d_position, span * s.root_position_rate[chains], self.target_path)
        m_angle = start_tangent(d_angle, span * s.root_angle_rate[chains], self.target_path)
        s.root_position[chains] = last_position + p * d_position + q * m_position
        s.root_angle[chains] = last_angle + p * d_angle + q * m_angle
        velocity = (s.root_position[chains] - s.prev_root_position[chains]) * inv_path_step
        previous = s.prev_root_velocity[chains]
        if first_moving is not None:
            previous = np.where(first_moving[chains][:, None], velocity, previous)
        acceleration = (velocity - previous) * inv_path_step
        s.prev_root_position[chains] = s.root_position[chains]
        s.prev_root_velocity[chains] = velocity
        return acceleration

    @staticmethod
    def wind_at(header, schedule, x, chain_phase, elapsed):
        """SPEC 3, the 2D wind at (n, 2) positions relative to the anchor."""
        gust, wind, direction = header["gust"].astype(F), header["wind"].astype(F), header["gust_direction"].astype(F)
        phase = (gust[0] * x[:, 0] + gust[1] * x[:, 1]) + chain_phase + F(schedule["gust_phase"]) - gust[2] * elapsed
        return wind[:2] + wind[2] * direction[:2] * np.sin(phase)[:, None]

    def limit_angle(self, target_angle, target_rate, limit, phi, omega):
        """SPEC section 3, step 2, the limit. Returns (φ, ω)."""
        dd = wrap_angle(phi - target_angle)
        over = np.abs(dd) > limit
        with np.errstate(invalid="ignore"):  # sign(0)·inf where no limit applies: not taken
            phi = np.where(over, target_angle + np.sign(dd) * limit, phi)
        if self.relative_damping:
            return phi, np.where(over & ((omega - target_rate) * dd > F(0)), target_rate, omega)
        return phi, np.where(over & (omega * dd > F(0)), F(0), omega)

    def integrate_segment(self, s, seg, ch, phi_parent, w, span, inv_path_step, h, root_acceleration, gravity, wind,
                          first_moving, direction=None):
        """SPEC section 3, step 2, the segments ``seg`` of chains ``ch`` (one per chain, with
        their (n, 2) root acceleration, gravity and wind; ``direction``: (cos φ, sin φ) when the
        caller has them): returns their new φ. The spring
        compares φ with ``reference`` (v2: τ_prev; v1: τ), which moves at ``rate`` (v2: τ̇;
        v1: 0) over the substep; semi-implicit Euler, or the exact step (SPEC 1)."""
        rig = {name: values[seg] for name, values in self.rig.items()}
        last = s.last_local_angle[seg]
        d_local = wrap_angle(s.local_angle[seg] - last)
        lam = last + w[0] * d_local + w[1] * start_tangent(d_local, span * s.local_angle_rate[seg], self.target_path)
        target_angle = phi_parent + lam
        target_rate = wrap_angle(target_angle - s.target_angle[seg]) * inv_path_step
        phi = s.angle[seg]
        omega = s.angular_velocity[seg] if first_moving is None else np.where(first_moving, target_rate,
                                                                                s.angular_velocity[seg])
        ex, ey = (np.cos(phi), np.sin(phi)) if direction is None else direction
        gx = gravity[:, 0] - rig["inertia"] * root_acceleration[:, 0] + wind[:, 0]
        gy = gravity[:, 1] - rig["inertia"] * root_acceleration[:, 1] + wind[:, 1]
        alpha_ext = (ex * gy - ey * gx) * rig["inv_length"]
        if self.relative_damping:
            reference, rate = s.target_angle[seg], target_rate
        else:
            reference, rate = target_angle, np.zeros_like(target_rate)
        d = wrap_angle(phi - reference)
        if self.exact:
            b = alpha_ext - rig["air_drag"] * rate
            change_d, change_rate = exact_change(self.exact_steps(seg, ch), d, omega - rate, b)
            omega_new = omega + change_rate
            phi_new = phi + (rate * h + change_d)
        else:
            acc = -rig["stiffness"] * d - rig["damping"] * (omega - rate) - rig["air_drag"] * omega + alpha_ext
            omega_new = omega + acc * h
            phi_new = phi + omega_new * h
        phi_new, omega_new = self.limit_angle(target_angle, target_rate, rig["angle_limit"], phi_new, omega_new)
        s.prev_angle[seg] = phi
        s.prev_angular_velocity[seg] = s.angular_velocity[seg]
        s.target_angle[seg] = wrap_angle(target_angle)
        phi_new = wrap_angle(phi_new)
        s.angle[seg] = phi_new
        s.angular_velocity[seg] = omega_new
        return phi_new

    def substep(self, s, schedule, alpha, j, chains, depth, first_moving):
        w = path_weights(alpha, self.target_path)
        span, inv_path_step, h = F(schedule["span"]), F(schedule["inv_path_step"]), F(schedule["substep"])
        tip = s.prev_root_position.copy()  # the tips of the last substep, for the wind
        acceleration = np.zeros((self.chain_count, 2), F)
        acceleration[chains] = a = self.interpolate_root(s, w, span, inv_path_step, chains, first_moving)
        s.watched[chains] = np.maximum(s.watched[chains], np.sqrt(a[:, 0] * a[:, 0] + a[:, 1] * a[:, 1]))
        phi_parent = s.root_angle.copy()
        elapsed = F(j) * h
        for ch, seg in depth:
            wind = np.zeros((s.gust_phase[ch].shape[0], 2), F)
            direction = None
            if self.windy:
                phi = s.angle[seg]
                direction = np.cos(phi), np.sin(phi)
                tip[ch] = tip[ch] + self.rig["length"][seg][:, None] * np.stack(direction, 1)
                wind = self.wind_at(s.header, schedule, tip[ch], s.gust_phase[ch], elapsed)
            moving = None if first_moving is None else first_moving[ch]
            phi_parent[ch] = self.integrate_segment(s, seg, ch, phi_parent[ch], w, span, inv_path_step, h,
                                                    acceleration[ch], s.gravity[ch], wind, moving, direction)

    def end_path(self, s, schedule, alpha, chains, seg):
        """SPEC section 2: the path's x0 and m0 become its value and velocity at the frame's
        last substep, for ``chains`` and their segments ``seg``."""
        p, q, dp, dq = path_weights(alpha, self.target_path)
        span, inv_span = F(schedule["span"]), F(schedule["inv_span"])
        d_position = s.root_position_pose[chains] - s.last_root_position[chains]
        m_position = start_tangent(d_position, span * s.root_position_rate[chains], self.target_path)
        d_angle = wrap_angle(s.root_angle_pose[chains] - s.last_root_angle[chains])
        m_angle = start_tangent(d_angle, span * s.root_angle_rate[chains], self.target_path)
        s.last_root_position[chains] = s.last_root_position[chains] + p * d_position + q * m_position
        s.root_position_rate[chains] = (dp * d_position + dq * m_position) * inv_span
        s.last_root_angle[chains] = wrap_angle(s.last_root_angle[chains] + p * d_angle + q * m_angle)
        s.root_angle_rate[chains] = (dp * d_angle + dq * m_angle) * inv_span
        d_local = wrap_angle(s.local_angle[seg] - s.last_local_angle[seg])
        m_local = start_tangent(d_local, span * s.local_angle_rate[seg], self.target_path)
        s.last_local_angle[seg] = wrap_angle(s.last_local_angle[seg] + p * d_local + q * m_local)
        s.local_angle_rate[seg] = (dp * d_local + dq * m_local) * inv_span

    def watch_root(self, s, judged):
        """SPEC 1, "Stability": each chain's largest |A| over its substeps of the frame (the A
        interpolate_root gave), ROOT_NOT_JUDGED where ``judged`` (C,) is False: the chain ran no
        substeps, jumped or started moving (as ``watch_root`` in the shader)."""
        watched = np.where(judged, s.watched, F(layouts.ROOT_NOT_JUDGED))
        self.output.put("chain_output", "root_acceleration", (self.order.chain_order, watched))

    def write_output(self, s, sigma, substep):
        """SPEC section 2, "Output at frame time", with each chain's σ and substep h (C,),
        relative to the anchors: each angle carried from the last substep to the frame, σ·h
        later, at its angular velocity extrapolated from the last two substeps, then forward
        kinematics from this frame's root (as ``write_output`` in the shader). Computed in
        storage order, written to the solver's order once."""
        order = self.order
        base = s.root_position_pose.copy()
        raw_base = s.prev_root_position.copy()
        first_joint = self.chain_rig["first_joint"].astype(np.int64)[order.chain_order]
        pivot, pivot_raw = base.copy(), raw_base.copy()
        position = np.empty((self.segment_count, 2), F)
        raw_position = np.empty((self.segment_count, 2), F)
        angle = np.empty(self.segment_count, F)
        omega = np.empty(self.segment_count, F)
        for ch, seg in order.depth_slices():
            length = self.rig["length"][seg]
            phi = s.angle[seg]
            sg, w, w_prev = sigma[ch], s.angular_velocity[seg], s.prev_angular_velocity[seg]
            angle[seg] = wrap_angle(phi + (sg * substep[ch]) * (F(2) * w - w_prev))
            omega[seg] = w_prev + sg * (w - w_prev)
            base[ch] = base[ch] + length[:, None] * np.stack([np.cos(angle[seg]), np.sin(angle[seg])], axis=1)
            raw_base[ch] = raw_base[ch] + length[:, None] * np.stack([np.cos(phi), np.sin(phi)], axis=1)
            position[seg] = base[ch]
            raw_position[seg] = raw_base[ch]
        tips, segments = order.joint_of_position, order.segment_order
        self.output.put("joint_output", "position", (first_joint, pivot), (tips, position))
        self.output.put("joint_output", "raw_position", (first_joint, pivot_raw), (tips, raw_position))
        self.output.put("segment_output", "angle", (segments, angle))
        self.output.put("segment_output", "angular_velocity", (segments, omega))


class _FrameScratch:
    """One frame's view of the state (the arrays themselves, rebound by the stages and given
    back by :meth:`store`) and its targets in sorted chain order."""

    def __init__(self, backend, header):
        order, tg = backend.order.chain_order, backend.chain_target
        self.header = header
        self.gravity = backend.gravity
        for name in _CHAIN_FIELDS + _SEGMENT_FIELDS:
            setattr(self, name, getattr(backend.state, name))
        self.root_position = self.last_root_position.copy()
        self.root_angle = self.last_root_angle.copy()
        self.root_position_pose = tg["root_position"][order]
        self.root_angle_pose = tg["root_angle"][order]
        self.teleport = tg["teleport"][order]
        self.lod = tg["lod"][order]
        self.gust_phase = tg["gust_phase"][order]
        self.anchor_shift = tg["anchor_shift"][order]
        self.local_angle = backend.local_angle

    def store(self, backend):
        for name in _CHAIN_FIELDS + _SEGMENT_FIELDS:
            setattr(backend.state, name, getattr(self, name))

"""The numpy reference for point chains: ``shaders/sim/point_chains.comp`` written again in
float32 numpy, vectorised over chains (walked root to tip by depth), with the same stages
and the same operation order; the contact stages are in :mod:`.point_contact`, the
teleports in :mod:`.point_teleport`, the frame-time output in
:mod:`.point_output`. See
:mod:`gpu_jiggle.sim.backends` for the interface.

The state is held as contiguous float32 arrays per field in
:class:`~.common.DepthOrder` (longest chains first, segments depth-major), where each
depth of the walk is a slice; its records are made when they are read.
"""
from __future__ import annotations

import logging

import numpy as np

from ... import layouts
from .point_contact import Contact, collide_near, settle_contact
from .point_geometry import (MIN_LENGTH, axis_code, axis_from_code, dot, follow_parent, length, safe_divide,
                                 turn_axis)
from .point_limits import limit_angle, nlerp, target_frame
from .point_output import PointOutput
from .point_teleport import AXIS_CODES, CHAIN_XYZ, SEGMENT_XYZ, PointTeleports
from .point_sweep import CONTACT_STEP_FRACTION, contact_substeps
from .common import DepthWalkBackend, FieldState, exact_change, path_weights, start_tangent

F = np.float32
log = logging.getLogger(__name__)


class ReferencePointBackend(PointTeleports, PointOutput, DepthWalkBackend):
    """Point chains in numpy (float32). See :mod:`gpu_jiggle.sim.backends` for the interface."""

    OUTPUTS = {"joint_output": (layouts.POINT_JOINT_OUTPUT, "joint"),
               "segment_output": (layouts.POINT_SEGMENT_OUTPUT, "segment")}
    DTYPES = {"chain_target": (layouts.POINT_CHAIN_TARGET, "chain"),
              "chain_control": (layouts.POINT_CHAIN_CONTROL, "chain")}
    #: Whether the frame-time output holds the segments' rotations (the frame's options).
    rotation_outputs = True

    def __init__(self, chain_set):
        super().__init__(chain_set)
        self.state = FieldState(self.order, {
            "chain_state": (layouts.POINT_CHAIN_STATE, "chain", {**dict.fromkeys(CHAIN_XYZ, 3), "flags": None,
                                                                 "path_lag": None}),
            "segment_state": (layouts.POINT_SEGMENT_STATE, "segment",
                              {**dict.fromkeys(SEGMENT_XYZ, 3), "last_rotation": None}, AXIS_CODES)})
        #: This frame's joint offsets (xyz) and rotations, in storage order.
        self.offset_now = np.zeros((self.segment_count, 3), F)
        self.rotation_now = np.tile(np.array([0, 0, 0, 1], F), (self.segment_count, 1))
        self.colliders = {"spheres": np.zeros(0, layouts.SPHERE_COLLIDER),
                          "capsules": np.zeros(0, layouts.CAPSULE_COLLIDER),
                          "planes": np.zeros(0, layouts.PLANE_COLLIDER)}

    def upload_targets(self, chain_target, chain_control, joint_offset=None, joint_rotation=None):
        """``joint_offset``, ``joint_rotation`` None: unchanged since the last upload."""
        self.chain_target = chain_target.copy()
        self.chain_control = chain_control.copy()
        if joint_offset is not None:
            self.offset_now = np.ascontiguousarray(np.asarray(joint_offset, F)[self.order.segment_order])
        if joint_rotation is not None:
            self.rotation_now = np.asarray(joint_rotation, F)[self.order.segment_order]

    def chain_lod(self):
        return self.chain_control["lod"]

    def check_colliders(self, sphere_count, capsule_count, plane_count):
        """The reference takes any number of colliders."""

    def upload_colliders(self, spheres, capsules, planes):
        self.colliders = {"spheres": spheres.copy(), "capsules": capsules.copy(), "planes": planes.copy()}

    def run_frame(self, params):
        size = layouts.POINT_FRAME_PARAMS.itemsize
        header = params[:size].view(layouts.POINT_FRAME_PARAMS)[0]
        options = int(header["options"])
        self.target_path = layouts.path_kind(options)
        self.relative_damping = bool(options & layouts.OPTION_RELATIVE_DAMPING)
        self.exact = bool(options & layouts.OPTION_EXACT_INTEGRATOR)
        self.rotation_outputs = not options & layouts.OPTION_NO_ROTATION_OUTPUTS
        self.count = {name: int(header[f"{name[:-1]}_count"]) for name in ("spheres", "capsules", "planes")}
        f = _PointScratch(self)
        self.shift_anchor(f)
        # Frozen chains: a snap every frame, of a body that is moving (SPEC 5; as the shader).
        frozen_flags = np.uint32(layouts.TELEPORT_SNAP | layouts.TELEPORT_MOVING)
        teleport = np.where(f.lod == layouts.LOD_FROZEN, frozen_flags, f.teleport)
        self.apply_teleport(f, teleport, self.per_chain(header, f.lod, "span"))
        snapped = (teleport & layouts.TELEPORT_MODE_MASK) == layouts.TELEPORT_SNAP
        lag = f.path_lag.copy()
        sigma = np.zeros(self.chain_count, F)  # sorted chains
        for schedule, alphas, chains, positions in self.schedules(header, params, f.lod, sigma):
            every = chains.size == self.chain_count
            rows, positions = (slice(None), slice(None)) if every else (chains, positions)  # views for all chains
            # Declared moving: starts moving on the first frame after its snap that runs substeps.
            snapped_now = snapped[chains]
            moving = chains[((f.flags[chains] & layouts.CHAIN_START_MOVING) != 0) & ~snapped_now]
            self.start_moving(f, schedule, moving)
            self.resume_path(f, schedule, chains[~snapped_now & (lag[chains] != F(schedule["start_lag"]))])
            self._run_schedule(f, header, schedule, alphas, None if every else chains, moving)
            self.end_path(f, schedule, alphas[-1], rows, positions)
        f.path_lag = self.path_lags(header, f.lod, lag, snapped)
        f.store(self)
        self.write_output(f, sigma, self.per_chain(header, f.lod, "substep"))

    def upload_rig(self, chain_rig, segment_rig, exact_step):
        super().upload_rig(chain_rig, segment_rig, exact_step)
        #: The rig's records in storage order (sorted chains, depth-major segments).
        self.sorted_chain_rig = chain_rig[self.order.chain_order]
        self.sorted_segment_rig = segment_rig[self.order.segment_order]
        # SPEC 9, contact sub-steps: each chain's reach (its rest lengths in order root to tip,
        # then its largest particle radius) and smallest particle radius, as the shader sums them.
        chain = self.order.chain_of_position
        rest, rho = self.sorted_segment_rig["rest_length"].astype(F), self.sorted_segment_rig["particle_radius"]
        reach = np.zeros(self.chain_count, F)
        np.add.at(reach, chain, rest)
        largest = np.zeros(self.chain_count, F)
        np.maximum.at(largest, chain, rho.astype(F))
        self.chain_min_radius = np.full(self.chain_count, np.inf, F)
        np.minimum.at(self.chain_min_radius, chain, rho.astype(F))
        self.chain_reach = reach + largest

    # -- stages (named as in point_chains.comp) -----------------------------------------------
    @staticmethod
    def shift_anchor(f):
        """The state follows each chain's anchor, moved to this frame's pivot (SPEC 4.4)."""
        f.prev_pivot += f.anchor_shift
        f.last_pivot += f.anchor_shift

    def start_moving(self, f, schedule, chains):
        """SPEC 5, moving: the path of ``chains`` starts at the speed it is seen to have (m0 =
        m1), over the chain's own time from its path's start to this frame's pose (its
        path_lag plus the frame time; resume_path then carries it to the schedule's start)."""
        if not chains.size:
            return
        inv_span = self.own_inv_span(schedule, f.path_lag[chains])
        f.flags[chains] = f.flags[chains] & ~np.uint32(layouts.CHAIN_START_MOVING)
        f.pivot_rate[chains] = -f.last_pivot[chains] * inv_span[:, None]
        rank = self.chain_ranks(chains)
        for ch, seg in self.depth_lists(chains):
            f.offset_rate[seg] = (f.offset_now[seg] - f.last_offset[seg]) * inv_span[rank[ch]][:, None]

    def resume_path(self, f, schedule, chains):
        """SPEC 2, "Levels of detail": the paths of ``chains``, which start at the chain's own
        last substep (its path_lag before the last frame's time), carried along their velocity
        to where the schedule's start (its start_lag): Δ = path_lag - start_lag seconds, the
        pivot's path and p_prev (so the particles, relative to the pivot, go with it) and each
        target offset's path, x0 += Δ·m0."""
        if not chains.size:
            return
        shift = (f.path_lag[chains] - F(schedule["start_lag"]))[:, None]
        moved = shift * f.pivot_rate[chains]
        f.last_pivot[chains] = f.last_pivot[chains] + moved
        f.prev_pivot[chains] = f.prev_pivot[chains] + moved
        rank = self.chain_ranks(chains)
        for ch, seg in self.depth_lists(chains):
            f.last_offset[seg] = f.last_offset[seg] + shift[rank[ch]] * f.offset_rate[seg]

    def _run_schedule(self, f, header, schedule, alphas, chains, moving):
        """The substeps of one level of detail, for its sorted chains (None: all chains)."""
        chains = slice(None) if chains is None else chains
        influence = self.sorted_chain_rig["world_influence"]
        span, scale = F(schedule["span"]), F(schedule["collider_time_scale"])
        first_moving = np.zeros(self.chain_count, bool)
        first_moving[moving] = True
        pivot = f.last_pivot.copy()
        # SPEC 4, world influence: the chain feels the fraction ``felt`` of its pivot's motion;
        # the rest carries it. v2: its velocity relative to that carriage (the carriage moving
        # at ``carried`` times the pivot's path velocity) is what the spring and the damping
        # see; v1 kept the velocity as it was (felt 1 for the target, carried 0).
        felt = influence if self.relative_damping else np.ones_like(influence)
        carried = (F(1) - influence) if self.relative_damping else np.zeros_like(influence)
        pivot_velocity = f.pivot_rate.copy()  # the pivot's path velocity at the last substep
        rows = np.arange(self.chain_count) if isinstance(chains, slice) else chains
        for j, alpha in enumerate(alphas):
            alpha_start = alphas[j - 1] if j else F(0)
            collider_alpha = np.clip(F(1) - (F(1) - alpha) * scale, F(0), F(1))
            # Where the colliders were at the start of the substep, for the swept contact (SPEC 9):
            # before this frame's path (a half-rate substep started a frame earlier) the path is
            # extended backwards, not held at its start, so the sweep sees the whole move.
            collider_start = np.minimum(F(1) - (F(1) - alpha_start) * scale, F(1))
            substeps, contact = self.contact_substeps(f, rows, w=path_weights(alpha, self.target_path), span=span,
                                                      alpha=collider_alpha, start=collider_start,
                                                      cap=int(header["contact_substep_cap"]))
            every_one = substeps.size == rows.size and (substeps == 1).all()
            # Every chain of the frame in one substep: the colliders the count placed for them at
            # its end are those of the substep itself (the same pivots), placed once.
            placed = contact if every_one and isinstance(chains, slice) else None
            for k in np.unique(substeps):
                group = chains if k == 1 and every_one else rows[substeps == k]
                for sub in range(int(k)):
                    self._substep(f, header, schedule, group, j, sub, int(k), (alpha_start, alpha),
                                  (collider_start, collider_alpha), first_moving, pivot, pivot_velocity,
                                  (felt, carried), placed)

    warned_cap = False  # contact_substeps has warned of its cap (said once per backend)

    def contact_substeps(self, f, rows, w, span, alpha, start, cap):
        """SPEC 9, contact sub-steps: (len(rows),) int, how many equal sub-steps the substep of
        each of the sorted chains ``rows`` takes (``contact_substeps`` in point_sweep.py),
        from its pivot's move to its place on the path at weights ``w`` and the colliders at
        path fraction ``alpha`` having moved from ``start``; 1 for all where no sphere or capsule
        is live. Also the :class:`Contact` of ``rows`` it placed them in (None where none is
        live). Warns (logged, once) where a chain needs more than ``cap``."""
        if not (self.count["spheres"] or self.count["capsules"]):
            return np.ones(rows.size, np.int64), None
        pivot = self.pivot_on_path(f, w, span, rows)
        chain_rig = self.sorted_chain_rig[rows]
        contact = Contact(self.live_colliders(), chain_rig["collider_mask"], f.anchor[rows], pivot, alpha,
                          path_weights(alpha, self.target_path), path_weights(start, self.target_path))
        need, capped = contact_substeps(contact, pivot - f.prev_pivot[rows], self.chain_reach[rows],
                                        self.chain_min_radius[rows], cap)
        if capped.any() and not self.warned_cap:
            self.warned_cap = True
            log.warning("contact sub-steps: %d chain(s) met a collider moving more than %d times %.3g of its "
                        "radius (with the particle radius) in one substep; capped at %d sub-steps, so their path "
                        "may cut it (docs/SPEC.md section 9, \"Swept contact\")", int(capped.sum()), cap,
                        float(CONTACT_STEP_FRACTION), cap)
        return need, contact

    def _substep(self, f, header, schedule, chains, j, sub, k, alphas, collider_alphas, first_moving, pivot,
                 pivot_velocity, carriage, placed=None):
        """Sub-step ``sub`` of ``k`` of substep ``j`` for the sorted chains ``chains`` (an index
        array, or a slice for all): a substep of h/k at the path fraction (sub + 1)/k of the way
        from ``alphas[0]`` to ``alphas[1]``, the colliders likewise along ``collider_alphas``
        (SPEC 9, contact sub-steps; k = 1: the substep itself). ``placed``: the colliders of
        every chain for this substep already placed (contact_substeps'), or None."""
        depth = self.depth_lists(None if isinstance(chains, slice) else chains)
        rig, chain_rig = self.sorted_segment_rig, self.sorted_chain_rig
        mask, influence = chain_rig["collider_mask"], chain_rig["world_influence"]
        gravity = chain_rig["gravity"][:, :3].astype(F)
        felt, carried = carriage
        h, span, inv_span = F(schedule["substep"]), F(schedule["span"]), F(schedule["inv_span"])
        inv_path_step = F(schedule["inv_path_step"])
        elapsed = F(j) * h
        alpha_start, alpha = alphas
        collider_start, collider_alpha = collider_alphas
        share = None
        if k > 1:  # the sub-step's path fractions (its end exact at the last), length, the exact step's share
            if sub < k - 1:
                alpha = alpha_start + F(sub + 1) / F(k) * (alpha - alpha_start)
                collider_alpha = collider_start + F(sub + 1) / F(k) * (collider_alpha - collider_start)
            collider_start = collider_start + F(sub) / F(k) * (collider_alphas[1] - collider_start)
            h = h / F(k)
            inv_path_step = inv_path_step * F(k)
            elapsed = elapsed + F(sub) * h
            share = F(1) / F(k)
        w = path_weights(alpha, self.target_path)
        cw = path_weights(collider_alpha, self.target_path)
        carry_before = carried[:, None] * pivot_velocity
        if sub == 0:
            f.prev_pivot_rate[chains] = pivot_velocity[chains]  # the pivot's path velocity a substep back
        moved = self.interpolate_pivot(f, w, span, inv_span, chains, pivot, pivot_velocity)
        carry = carried[:, None] * pivot_velocity
        contact = placed if placed is not None else Contact(
            self.live_colliders(), mask, f.anchor, pivot, collider_alpha, cw,
            path_weights(collider_start, self.target_path))  # each depth takes its rows
        contact.carriage = carry  # the velocities' frame (SPEC 9, "Push-out velocity")
        base = np.zeros_like(pivot)
        base_start = -moved  # where each segment's base was at the start of the substep
        v_base = (felt[:, None] * moved) * inv_path_step
        offset_base = np.zeros_like(pivot)
        parent_animated = np.zeros_like(pivot)
        parent_simulated = np.zeros_like(pivot)
        pushed_base = np.zeros_like(pivot)  # how far contact moved each base this substep
        parent_axis = np.zeros_like(pivot)  # the turn axis of the parent's bend (turn_axis)
        for d, (ch, seg) in enumerate(depth):
            r = rig[seg]
            last = f.last_offset[seg]
            d_offset = f.offset_now[seg] - last
            offset = last + w[0] * d_offset + w[1] * start_tangent(d_offset, span * f.offset_rate[seg], self.target_path)
            animated = offset - offset_base[ch]
            t = base[ch] + (follow_parent(parent_animated[ch], parent_simulated[ch], animated, parent_axis[ch]) if d
                            else animated)
            x = f.position[seg] - influence[ch][:, None] * moved[ch]
            t_prev = f.target[seg] - felt[ch][:, None] * moved[ch]
            v_t = (t - t_prev) * inv_path_step
            v = f.velocity[seg] - carry_before[ch]
            v = np.where(first_moving[ch][:, None], v_t, v) if j == 0 and sub == 0 else v
            wind = self.wind_at(header, schedule, pivot[ch] + x, f.gust_phase[ch], elapsed)
            step = self.exact_steps(seg, ch) if self.exact else None
            start = x  # where the particle was at the start of the substep (swept contact)
            x, v = self.integrate_particle(r, step, t, t_prev, v_t, carry[ch], gravity[ch], wind, h, x, v, share)
            ct = contact.rows(ch)
            free_x, free_v = x, v
            x, v = collide_near(ct, r["particle_radius"], x, v, h, start)
            pushed = (x - free_x) - (v - free_v) * h  # what contact moved x without velocity
            x, v = self.limit_distance(r["max_distance"], t, x, v)
            x, v, pushed = self.enforce_length(r["rest_length"], base[ch], v_base[ch], pushed_base[ch], pushed, h,
                                               x, v)
            frame = None
            if (r["limit_kind"] >= layouts.LIMIT_HINGE).any():  # the base joint's rotation on its path
                rotation = nlerp(f.last_rotation[seg], f.rotation_now[seg], alpha)
                frame = target_frame(parent_animated[ch], parent_simulated[ch], rotation, parent_axis[ch])
            x, v = limit_angle(r, frame, base[ch], t, v_t, x, v)
            settled_x, settled_v = x, v
            x, v = settle_contact(ct, r["particle_radius"], base[ch], r["rest_length"], h, x, v, base_start[ch],
                                  start)
            pushed_base[ch] = pushed + ((x - settled_x) - (v - settled_v) * h)
            if sub == 0:  # the substep's start, for the output's blend
                f.prev_position[seg] = f.position[seg]
                # A chain starting to move had the velocity it starts with (for the frame-time output).
                f.prev_velocity[seg] = np.where(first_moving[ch][:, None], v_t + carry_before[ch],
                                                f.velocity[seg]) if j == 0 else f.velocity[seg]
            f.position[seg] = x
            f.velocity[seg] = v + carry[ch]  # the world velocity
            f.target[seg] = t
            # the axis of this segment's bend, carried to the next substep (SPEC 4, step 2)
            parent_axis[ch], bend = turn_axis(animated, x - base[ch], axis_from_code(f.bend_code[seg]))
            f.bend_code[seg] = axis_code(bend)
            parent_animated[ch] = animated
            parent_simulated[ch] = x - base[ch]
            offset_base[ch] = offset
            base[ch] = x
            base_start[ch] = start
            v_base[ch] = v

    def live_colliders(self):
        """The colliders of this frame (the buffers may hold more records than are live)."""
        return {name: records[:self.count[name]] for name, records in self.colliders.items()}

    def pivot_path(self, f, span, chains):
        """SPEC 4, step 1, the target path of the pivots of ``chains`` (sorted, an index array or
        a slice) over the frame's span (s): its start x0 (the last substep's pivot), its change
        to this frame's pivot (the anchor, 0) and its start tangent, each (C, 3) float32 relative
        to the anchors."""
        last = f.last_pivot[chains]
        d = -last
        return last, d, start_tangent(d, span * f.pivot_rate[chains], self.target_path)

    def pivot_on_path(self, f, w, span, chains):
        """The pivots of ``chains`` on their target path (:meth:`pivot_path`) at the path weights
        ``w``: (C, 3) float32, relative to the anchors (as ``pivot_on_path`` in the shader)."""
        last, d, m = self.pivot_path(f, span, chains)
        return last + w[0] * d + w[1] * m

    def interpolate_pivot(self, f, w, span, inv_span, chains, pivot, velocity):
        """SPEC 4, step 1: the pivots of ``chains`` on their path (this frame's pivot is the
        anchor, 0); fills ``pivot`` (C, 3) and their path velocity ``velocity`` (C, 3, length/s,
        as ``end_path`` leaves ``pivot_rate``) and returns each chain's move Δp (C, 3)."""
        last, d, m = self.pivot_path(f, span, chains)
        pivot[chains] = last + w[0] * d + w[1] * m
        velocity[chains] = (w[2] * d + w[3] * m) * inv_span
        moved = np.zeros_like(pivot)
        moved[chains] = pivot[chains] - f.prev_pivot[chains]
        f.prev_pivot[chains] = pivot[chains]
        return moved

    @staticmethod
    def wind_at(header, schedule, x, chain_phase, elapsed):
        gust, wind, direction = header["gust"].astype(F), header["wind"].astype(F), header["gust_direction"].astype(F)
        phase = (gust[0] * x[:, 0] + gust[1] * x[:, 1] + gust[2] * x[:, 2]) + chain_phase + F(schedule["gust_phase"]) \
            - gust[3] * elapsed
        return wind[:3] + wind[3] * direction[:3] * np.sin(phase)[:, None]

    def integrate_particle(self, r, step, t, t_prev, v_t, carry, gravity, wind, h, x, v, share=None):
        """SPEC 4, step 2. The spring compares x with ``reference`` (v2: t_prev; v1: t), which
        moves at ``rate`` (v2: v_t; v1: 0) over the substep; damping relative to that rate, air
        drag of the world velocity (v + ``carry``, the carriage's velocity: SPEC 4, world
        influence). Semi-implicit Euler, or the exact step (SPEC 1) with the segments'
        EXACT_STEP records ``step``; in a contact sub-step of h/k (SPEC 9) the exact step over the
        substep's h taken ``share`` = 1/k of (h the sub-step's length then)."""
        k, c, c_air = r["stiffness"][:, None], r["damping"][:, None], r["air_drag"][:, None]
        if self.relative_damping:
            reference, rate = t_prev, v_t
        else:
            reference, rate = t, np.zeros_like(v_t)
        if self.exact:
            change_x, change_v = exact_change(step, x - reference, v - rate, gravity + wind - c_air * (rate + carry))
            if share is not None:
                change_x, change_v = change_x * share, change_v * share
            return x + (rate * h + change_x), v + change_v
        acc = -k * (x - reference) - c * (v - rate) - c_air * (v + carry) + gravity + wind
        v = v + acc * h
        x = x + v * h
        return x, v

    @staticmethod
    def limit_distance(max_distance, t, x, v):
        """SPEC 4, step 2, max distance from the target (as ``limit_distance`` in the shader);
        nothing to do, and nothing worked out, where every max distance is infinite."""
        if not np.isfinite(max_distance).any():
            return x, v
        e = x - t
        d = length(e)
        over = d > max_distance
        n = safe_divide(e, d)
        x = np.where(over[:, None], t + n * np.where(over, max_distance, F(0))[:, None], x)
        v = np.where(over[:, None], v - np.maximum(dot(v, n), F(0))[:, None] * n, v)
        return x, v

    def enforce_length(self, rest_length, base, v_base, pushed_base, pushed, h, x, v):
        """SPEC 4, the length step (as ``enforce_length`` in the shader): x projected onto its
        length sphere; v2 with the semi-implicit step: v += Δx/h, the Δx of the same projection
        made without what contact moved x and its base without velocity this substep (``pushed``,
        ``pushed_base`` (n, 3)), so a base pushed out of a collider carries its tip without
        flinging it (docs/SPEC.md section 9, "Push-out velocity"); v1 (world damping) and the
        exact integrator: the velocity along the segment relative to its base removed (Δx/h
        assumes the Euler step's Δx = v·h). Returns x, v and what x was moved without velocity,
        the projection's position less the velocity's."""
        d = x - base
        n = d / np.maximum(length(d), MIN_LENGTH)[:, None]
        projected = base + n * rest_length[:, None]
        if not self.relative_damping or self.exact:
            return projected, v - dot(v - v_base, n)[:, None] * n, pushed
        moving_x, moving_base = x - pushed, base - pushed_base
        d = moving_x - moving_base
        moving_projected = moving_base + d / np.maximum(length(d), MIN_LENGTH)[:, None] * rest_length[:, None]
        return projected, v + (moving_projected - moving_x) / h, projected - moving_projected

    def end_path(self, f, schedule, alpha, chains, seg):
        """SPEC 2: the paths' x0 and m0 become their value and velocity at the frame's last substep."""
        p, q, dp, dq = path_weights(alpha, self.target_path)
        span, inv_span = F(schedule["span"]), F(schedule["inv_span"])
        last, d, m = self.pivot_path(f, span, chains)
        f.last_pivot[chains] = last + p * d + q * m
        f.pivot_rate[chains] = (dp * d + dq * m) * inv_span
        last = f.last_offset[seg]
        d = f.offset_now[seg] - last
        m = start_tangent(d, span * f.offset_rate[seg], self.target_path)
        f.last_offset[seg] = last + p * d + q * m
        f.offset_rate[seg] = (dp * d + dq * m) * inv_span
        f.last_rotation[seg] = nlerp(f.last_rotation[seg], f.rotation_now[seg], alpha)


class _PointScratch:
    """One frame's view of the state (the backend's arrays themselves, changed in place or
    rebound by the stages and given back by :meth:`store`), its targets and its chains'
    per-frame inputs, in storage order (segments as positions, chains sorted)."""

    def __init__(self, backend):
        chains, tg, control = backend.order.chain_order, backend.chain_target, backend.chain_control
        for name in SEGMENT_XYZ + ("last_rotation",) + tuple(AXIS_CODES) + CHAIN_XYZ + ("flags", "path_lag"):
            setattr(self, name, getattr(backend.state, name))
        self.offset_now, self.rotation_now = backend.offset_now, backend.rotation_now
        self.anchor = tg["anchor"][chains]
        self.anchor_shift = tg["anchor_shift"][chains]
        self.gust_phase = tg["gust_phase"][chains]
        self.teleport = control["teleport"][chains]
        self.lod = control["lod"][chains]

    def store(self, backend):
        for name in SEGMENT_XYZ + ("last_rotation",) + tuple(AXIS_CODES) + CHAIN_XYZ + ("flags", "path_lag"):
            setattr(backend.state, name, getattr(self, name))

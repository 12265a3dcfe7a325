"""The numpy reference for point chains: ``shaders/sim/point_chains.comp`` written again in
float32 numpy, vectorised over chains (walked root to tip by depth), with the same stages
and the same operation order. See :mod:`gpu_jiggle.sim.backends` for the interface.
"""
from __future__ import annotations

import numpy as np

from .. import layouts
from .reference_walk import DepthWalkBackend

F = np.float32
MIN_LENGTH = F(1e-6)
UP = np.array([0.0, 1.0, 0.0], F)


def dot(a, b):
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def length(a):
    return np.sqrt(dot(a, a))


def cross(a, b):
    return np.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                     a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)


def safe_divide(a, d):
    """a / d[:, None] where d > 0, else a (the caller masks those rows)."""
    return a / np.where(d > 0, d, F(1))[..., None]


def perpendicular(u):
    """A unit vector perpendicular to each unit u (as ``perpendicular`` in the shader)."""
    axis = np.where((np.abs(u[..., 0]) < F(0.9))[..., None], np.array([1, 0, 0], F), np.array([0, 1, 0], F))
    p = cross(u, axis)
    return safe_divide(p, length(p))


def follow_parent(u, w, a):
    """Each a turned by the smallest rotation taking u onto w (SPEC 4, step 2)."""
    lu, lw = length(u), length(w)
    degenerate = (lu < MIN_LENGTH) | (lw < MIN_LENGTH)
    u, w = safe_divide(u, lu), safe_divide(w, lw)
    c = dot(u, w)
    axis = perpendicular(u)
    half_turn = F(2) * dot(axis, a)[..., None] * axis - a
    v = cross(u, w)
    with np.errstate(divide="ignore", invalid="ignore"):
        turned = a * c[..., None] + cross(v, a) + v * (dot(v, a) / (F(1) + c))[..., None]
    out = np.where((c < F(-0.9999))[..., None], half_turn, turned)
    return np.where(degenerate[..., None], a, out)


def rotation_between(u, w):
    """Quaternions (x, y, z, w) of the smallest rotations taking u onto w."""
    lu, lw = length(u), length(w)
    degenerate = (lu < MIN_LENGTH) | (lw < MIN_LENGTH)
    u, w = safe_divide(u, lu), safe_divide(w, lw)
    c = dot(u, w)
    q = np.concatenate([cross(u, w), (F(1) + c)[..., None]], axis=-1)
    q = q / np.sqrt(np.sum(q * q, axis=-1, dtype=F))[..., None].clip(min=F(1e-30))
    half_turn = np.concatenate([perpendicular(u), np.zeros_like(c)[..., None]], axis=-1)
    q = np.where((c < F(-0.9999))[..., None], half_turn, q)
    return np.where(degenerate[..., None], np.array([0, 0, 0, 1], F), q)


def push_out(q, r, x, v, active):
    delta = x - q
    d = length(delta)
    inside = active & (d < r)
    n = np.where((d < MIN_LENGTH)[..., None], UP, safe_divide(delta, d))
    x = np.where(inside[..., None], q + n * r[..., None], x)
    v = np.where(inside[..., None], v - np.minimum(dot(v, n), F(0))[..., None] * n, v)
    return x, v


def closest_on_segment(a, b, x):
    ab = b - a
    t = np.clip(dot(x - a, ab) / np.maximum(dot(ab, ab), F(1e-12)), F(0), F(1))
    return a + t[..., None] * ab


def slide_out(base, rest_length, q, r, x, v, active):
    """As ``slide_out`` in the shader: back out of a sphere along the length sphere."""
    delta = x - q
    inside = active & (dot(delta, delta) < r * r)
    bq = q - base
    d = length(bq)
    ok = inside & (d >= MIN_LENGTH)
    axis = safe_divide(bq, d)
    with np.errstate(divide="ignore", invalid="ignore"):  # d = 0 rows are masked by ok
        h = (d * d + rest_length * rest_length - r * r) / (F(2) * d)
        ring2 = rest_length * rest_length - h * h
        ok &= ring2 > 0
        centre = base + axis * np.where(ok, h, F(0))[..., None]
    xc = x - centre
    radial = xc - dot(xc, axis)[..., None] * axis
    lr = length(radial)
    direction = np.where((lr < MIN_LENGTH)[..., None], perpendicular(axis), safe_divide(radial, lr))
    new_x = centre + direction * np.sqrt(np.maximum(ring2, 0))[..., None]
    nq = new_x - q
    n = safe_divide(nq, length(nq))
    new_v = v - np.minimum(dot(v, n), F(0))[..., None] * n
    return np.where(ok[..., None], new_x, x), np.where(ok[..., None], new_v, v)


def slide_out_of_plane(base, rest_length, n, offset, x, v, active):
    depth = dot(n, x) - offset
    base_height = dot(n, base) - offset
    ok = active & (depth < 0) & (np.abs(base_height) <= rest_length)
    centre = base - base_height[..., None] * n
    xc = x - centre
    radial = xc - dot(xc, n)[..., None] * n
    lr = length(radial)
    direction = np.where((lr < MIN_LENGTH)[..., None], perpendicular(n), safe_divide(radial, lr))
    new_x = centre + direction * np.sqrt(np.maximum(rest_length * rest_length - base_height * base_height,
                                                    F(0)))[..., None]
    new_v = v - np.minimum(dot(v, n), F(0))[..., None] * n
    return np.where(ok[..., None], new_x, x), np.where(ok[..., None], new_v, v)


class ReferencePointBackend(DepthWalkBackend):
    """Point chains in numpy (float32). See :mod:`gpu_jiggle.sim.backends` for the interface."""

    DTYPES = {"chain_state": (layouts.POINT_CHAIN_STATE, "chain"),
              "segment_state": (layouts.POINT_SEGMENT_STATE, "segment"),
              "joint_output": (layouts.POINT_JOINT_OUTPUT, "joint"),
              "segment_output": (layouts.POINT_SEGMENT_OUTPUT, "segment"),
              "chain_target": (layouts.POINT_CHAIN_TARGET, "chain")}

    def __init__(self, chain_set):
        super().__init__(chain_set)
        self.joint_offset = np.zeros((self.segment_count, 4), F)
        self.colliders = {"spheres": np.zeros(0, layouts.SPHERE_COLLIDER),
                          "capsules": np.zeros(0, layouts.CAPSULE_COLLIDER),
                          "planes": np.zeros(0, layouts.PLANE_COLLIDER)}

    def upload_targets(self, chain_target, joint_offset=None):
        """``joint_offset`` None: unchanged since the last upload."""
        self.chain_target = chain_target.copy()
        if joint_offset is not None:
            self.joint_offset = np.asarray(joint_offset, F).copy()

    def upload_colliders(self, spheres, capsules, planes):
        self.colliders = {"spheres": spheres.copy(), "capsules": capsules.copy(), "planes": planes.copy()}

    def run_frame(self, params):
        size = layouts.POINT_FRAME_PARAMS.itemsize
        header = params[:size].view(layouts.POINT_FRAME_PARAMS)[0]
        lod = self.chain_target["lod"]
        self.apply_teleport(np.where(lod == layouts.LOD_FROZEN, np.uint32(layouts.TELEPORT_SNAP),
                                     self.chain_target["teleport"]))
        cs, ss = self.chain_state, self.segment_state
        f = _PointScratch(cs, ss, self.joint_offset)
        sigma = np.zeros(self.chain_count, F)
        for schedule, alphas, chains, seg in self.schedules(header, params, lod, sigma):
            self._run_schedule(f, header, schedule, alphas, chains)
            alpha = alphas[-1]
            last = f.last_offset[seg]
            f.last_offset[seg] = last + alpha * (f.offset_now[seg] - last)
        f.store(cs, ss)
        self.write_output(sigma)

    def _run_schedule(self, f, header, schedule, alphas, chains):
        """The substeps of one level of detail, for its chains."""
        depth = self.depth_lists(chains)
        rig, chain_rig = self.segment_rig, self.chain_rig
        mask = chain_rig["collider_mask"]
        influence = chain_rig["world_influence"]
        h = F(schedule["substep"])
        inv_path_step = F(schedule["inv_path_step"])
        gust_phase = F(schedule["gust_phase"])
        collider_time_scale = F(schedule["collider_time_scale"])
        gravity = chain_rig["gravity"][:, :3].astype(F)
        wind = header["wind"].astype(F)
        gust = header["gust"].astype(F)
        gust_direction = header["gust_direction"].astype(F)
        target_pivot = self.chain_target["pivot"][:, :3]
        last_pivot = f.last_pivot.copy()
        pivot = f.last_pivot.copy()
        for j, alpha in enumerate(alphas):
            elapsed = F(j) * h
            collider_alpha = np.clip(F(1) - (F(1) - alpha) * collider_time_scale, F(0), F(1))
            # interpolate_pivot
            pivot[chains] = last_pivot[chains] + alpha * (target_pivot[chains] - last_pivot[chains])
            moved = np.zeros_like(pivot)
            moved[chains] = pivot[chains] - f.prev_pivot[chains]
            f.prev_pivot[chains] = pivot[chains]
            base = np.zeros_like(pivot)
            v_base = moved * inv_path_step
            offset_base = np.zeros_like(pivot)
            parent_animated = np.zeros_like(pivot)
            parent_simulated = np.zeros_like(pivot)
            for d, (ch, seg) in enumerate(depth):
                r = rig[seg]
                last = f.last_offset[seg]
                offset = last + alpha * (f.offset_now[seg] - last)
                animated = offset - offset_base[ch]
                follow = follow_parent(parent_animated[ch], parent_simulated[ch], animated) if d else animated
                t = base[ch] + follow
                x = f.position[seg] - influence[ch][:, None] * moved[ch]
                v = f.velocity[seg]
                # integrate_particle
                wx = pivot[ch] + x
                phase = dot(gust[:3], wx) + gust_phase - gust[3] * elapsed
                w = wind[:3] + wind[3] * gust_direction[:3] * np.sin(phase)[:, None]
                acc = (-r["stiffness"][:, None] * (x - t) - r["damping"][:, None] * v + gravity[ch]) + w
                v = v + acc * h
                x = x + v * h
                x, v = self.collide(mask[ch], r["particle_radius"], collider_alpha, pivot[ch], x, v)
                x, v = self.limit_distance(r["max_distance"], t, x, v)
                x, v = self.enforce_length(r["rest_length"], base[ch], v_base[ch], x, v)
                x, v = self.keep_outside(mask[ch], r["particle_radius"], collider_alpha, pivot[ch], base[ch],
                                         r["rest_length"], x, v)
                f.prev_position[seg] = f.position[seg]
                f.prev_velocity[seg] = f.velocity[seg]
                f.position[seg] = x
                f.velocity[seg] = v
                parent_animated[ch] = animated
                parent_simulated[ch] = x - base[ch]
                offset_base[ch] = offset
                base[ch] = x
                v_base[ch] = v
        f.last_pivot[chains] = pivot[chains]

    # -- stages (named as in point_chains.comp) -----------------------------------------------
    def apply_teleport(self, flag):
        """SPEC section 5: snap or carry flagged chains (flag (C,): 0 none, 1 snap, 2 keep
        shape); reset p_prev and the last targets."""
        if not flag.any():
            return
        ss = self.segment_state
        seg_flag = np.repeat(flag, self.chain_rig["segment_count"].astype(np.int64))
        snap = seg_flag == layouts.TELEPORT_SNAP
        for name in ("position", "prev_position"):
            ss[name][snap] = self.joint_offset[snap]
        for name in ("velocity", "prev_velocity"):
            ss[name][snap] = 0
        moved = seg_flag != layouts.TELEPORT_NONE
        ss["last_offset"][moved] = self.joint_offset[moved]
        chains = flag != layouts.TELEPORT_NONE
        self.chain_state["prev_pivot"][chains] = self.chain_target["pivot"][chains]
        self.chain_state["last_pivot"][chains] = self.chain_target["pivot"][chains]

    def collide(self, mask, rho, alpha, pivot, x, v):
        """SPEC 4.2: spheres, then capsules, then planes, each pushing the particle out."""
        for s in self.colliders["spheres"]:
            active = ((mask >> s["group"]) & 1) != 0
            sphere = s["from_sphere"] + alpha * (s["to_sphere"] - s["from_sphere"])
            x, v = push_out(sphere[:3] - pivot, np.full(len(x), sphere[3], F) + rho, x, v, active)
        for c in self.colliders["capsules"]:
            active = ((mask >> c["group"]) & 1) != 0
            a, b, r = self._capsule(c, alpha, pivot)
            x, v = push_out(closest_on_segment(a, b, x), r + rho, x, v, active)
        for p in self.colliders["planes"]:
            active = ((mask >> p["group"]) & 1) != 0
            n, offset = self._plane(p, alpha, pivot)
            depth = dot(n, x) - (offset + rho)
            hit = active & (depth < 0)
            x = np.where(hit[:, None], x - depth[:, None] * n, x)
            v = np.where(hit[:, None], v - np.minimum(dot(v, n), F(0))[:, None] * n, v)
        return x, v

    @staticmethod
    def _capsule(c, alpha, pivot):
        a4 = c["from_a"] + alpha * (c["to_a"] - c["from_a"])
        b4 = c["from_b"] + alpha * (c["to_b"] - c["from_b"])
        return a4[:3] - pivot, b4[:3] - pivot, np.full(len(pivot), a4[3], F)

    @staticmethod
    def _plane(p, alpha, pivot):
        plane = p["from_plane"] + alpha * (p["to_plane"] - p["from_plane"])
        n = plane[:3] / np.sqrt(dot(plane[:3], plane[:3]))
        return n, plane[3] - dot(np.broadcast_to(n, pivot.shape), pivot)

    @staticmethod
    def limit_distance(max_distance, t, x, v):
        e = x - t
        d = length(e)
        over = d > max_distance
        n = safe_divide(e, d)
        x = np.where(over[:, None], t + n * np.where(over, max_distance, F(0))[:, None], x)
        v = np.where(over[:, None], v - np.maximum(dot(v, n), F(0))[:, None] * n, v)
        return x, v

    @staticmethod
    def enforce_length(rest_length, base, v_base, x, v):
        d = x - base
        n = d / np.maximum(length(d), MIN_LENGTH)[:, None]
        x = base + n * rest_length[:, None]
        v = v - dot(v - v_base, n)[:, None] * n
        return x, v

    def keep_outside(self, mask, rho, alpha, pivot, base, rest_length, x, v):
        for s in self.colliders["spheres"]:
            active = ((mask >> s["group"]) & 1) != 0
            sphere = s["from_sphere"] + alpha * (s["to_sphere"] - s["from_sphere"])
            q = np.broadcast_to(sphere[:3], x.shape) - pivot
            x, v = slide_out(base, rest_length, q, np.full(len(x), sphere[3], F) + rho, x, v, active)
        for c in self.colliders["capsules"]:
            active = ((mask >> c["group"]) & 1) != 0
            a, b, r = self._capsule(c, alpha, pivot)
            for _ in range(2):
                x, v = slide_out(base, rest_length, closest_on_segment(a, b, x), r + rho, x, v, active)
        for p in self.colliders["planes"]:
            active = ((mask >> p["group"]) & 1) != 0
            n, offset = self._plane(p, alpha, pivot)
            x, v = slide_out_of_plane(base, rest_length, np.broadcast_to(n, x.shape), offset + rho, x, v, active)
        return x, v

    def write_output(self, sigma_per_chain):
        """SPEC section 2, "Output at frame time", relative to this frame's pivot: segment
        directions blended between the last two substeps, the chain rebuilt with its rest
        lengths (as ``write_output`` in the shader)."""
        ss = self.segment_state
        first_joint = self.chain_rig["first_joint"].astype(np.int64)
        self.joint_output[first_joint] = np.zeros(1, layouts.POINT_JOINT_OUTPUT)
        base = np.zeros((self.chain_count, 3), F)
        prev_base = np.zeros((self.chain_count, 3), F)
        cur_base = np.zeros((self.chain_count, 3), F)
        animated_base = np.zeros((self.chain_count, 3), F)
        for d, (ch, seg) in enumerate(self.depth_lists()):
            sigma = sigma_per_chain[ch][:, None]
            prev, cur = ss["prev_position"][seg, :3], ss["position"][seg, :3]
            prev_dir = prev - prev_base[ch]
            cur_dir = cur - cur_base[ch]
            direction = prev_dir + sigma * (cur_dir - prev_dir)
            ld = length(direction)
            fallback = cur_dir / np.maximum(length(cur_dir), MIN_LENGTH)[:, None]
            direction = np.where((ld < MIN_LENGTH)[:, None], fallback, safe_divide(direction, ld))
            x = base[ch] + direction * self.segment_rig["rest_length"][seg][:, None]
            pv, cv = ss["prev_velocity"][seg, :3], ss["velocity"][seg, :3]
            v = pv + sigma * (cv - pv)
            animated = self.joint_offset[seg, :3]
            q = rotation_between(animated - animated_base[ch], x - base[ch])
            joint = first_joint[ch] + 1 + d
            self.joint_output["position"][joint, :3] = x
            self.joint_output["position"][joint, 3] = 0
            self.joint_output["raw_position"][joint, :3] = cur
            self.joint_output["raw_position"][joint, 3] = 0
            self.segment_output["velocity"][seg, :3] = v
            self.segment_output["velocity"][seg, 3] = 0
            self.segment_output["rotation"][seg] = q
            base[ch] = x
            prev_base[ch] = prev
            cur_base[ch] = cur
            animated_base[ch] = animated


class _PointScratch:
    """Contiguous float32 xyz copies of the point state for one frame."""

    SEGMENT_FIELDS = ("position", "velocity", "prev_position", "prev_velocity", "last_offset")

    def __init__(self, chain_state, segment_state, joint_offset):
        for name in self.SEGMENT_FIELDS:
            setattr(self, name, segment_state[name][:, :3].copy())
        self.prev_pivot = chain_state["prev_pivot"][:, :3].copy()
        self.last_pivot = chain_state["last_pivot"][:, :3].copy()
        self.offset_now = joint_offset[:, :3]

    def store(self, chain_state, segment_state):
        for name in self.SEGMENT_FIELDS:
            segment_state[name][:, :3] = getattr(self, name)
        chain_state["prev_pivot"][:, :3] = self.prev_pivot
        chain_state["last_pivot"][:, :3] = self.last_pivot

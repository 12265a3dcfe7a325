"""The numpy reference backend: the GLSL kernel ``shaders/sim/angle_chains.comp`` written again in
float32 numpy, vectorised over chains, with the same stages and the same operation order.

Chains are walked root to tip by depth: at depth d every chain with more than d segments
advances its d-th segment at once, so the only Python loops are over substeps and depth.
"""
from __future__ import annotations

import numpy as np

from .. import layouts
from .reference_walk import DepthWalkBackend

F = np.float32
PI = F(np.pi)
TWO_PI = F(2.0 * np.pi)
INV_TWO_PI = F(1.0 / (2.0 * np.pi))


def wrap_angle(a):
    """``a - 2π·floor((a + π)·(1/2π))`` in float32, as ``wrap_angle`` in ``common.glsl``."""
    return a - TWO_PI * np.floor((a + PI) * INV_TWO_PI)


class ReferenceAngleBackend(DepthWalkBackend):
    """Angle chains in numpy (float32). See :mod:`gpu_jiggle.sim.backends` for the interface."""

    DTYPES = {"chain_state": (layouts.ANGLE_CHAIN_STATE, "chain"),
              "segment_state": (layouts.ANGLE_SEGMENT_STATE, "segment"),
              "joint_output": (layouts.ANGLE_JOINT_OUTPUT, "joint"),
              "segment_output": (layouts.ANGLE_SEGMENT_OUTPUT, "segment"),
              "chain_target": (layouts.ANGLE_CHAIN_TARGET, "chain")}

    def __init__(self, chain_set):
        super().__init__(chain_set)
        self.local_angle = np.zeros(self.segment_count, F)

    def upload_targets(self, chain_target, local_angle):
        self.chain_target = chain_target.copy()
        self.local_angle = np.asarray(local_angle, F).copy()

    def run_frame(self, params):
        size = layouts.ANGLE_FRAME_PARAMS.itemsize
        header = params[:size].view(layouts.ANGLE_FRAME_PARAMS)[0]
        s = _FrameScratch(self)
        lod = s.lod
        # Frozen chains sit on their targets: a snap every frame.
        s.teleport = np.where(lod == layouts.LOD_FROZEN, np.uint32(layouts.TELEPORT_SNAP), s.teleport)
        self.apply_teleport(s)
        sigma = np.zeros(self.chain_count, F)
        for schedule, alphas, chains, seg in self.schedules(header, params, lod, sigma):
            depth = self.depth_lists(chains)
            h, inv_path_step = F(schedule["substep"]), F(schedule["inv_path_step"])
            for alpha in alphas:
                self.substep(s, alpha, chains, depth, h, inv_path_step)
            s.last_root_position[chains] = s.root_position[chains]
            s.last_root_angle[chains] = wrap_angle(s.root_angle[chains])
            alpha = alphas[-1]
            last = s.last_local_angle[seg]
            s.last_local_angle[seg] = wrap_angle(last + alpha * wrap_angle(s.local_angle[seg] - last))
        s.store(self)
        self.write_output(s, sigma)

    # -- stages (named as in angle_chains.comp) --------------------------------------------
    def apply_teleport(self, s):
        """SPEC section 5: snap or carry flagged chains, reset P_prev, V_prev, last targets."""
        flag = s.teleport
        if not flag.any():
            return
        snap = flag == layouts.TELEPORT_SNAP
        turn = wrap_angle(s.root_angle_pose - s.last_root_angle)
        phi_parent = s.root_angle_pose.copy()
        for ch, seg in self.depth_lists():
            keep = flag[ch] == layouts.TELEPORT_KEEP_SHAPE
            snapped = snap[ch]
            phi = wrap_angle(phi_parent[ch] + s.local_angle[seg])
            s.angle[seg] = np.where(snapped, phi, np.where(keep, wrap_angle(s.angle[seg] + turn[ch]), s.angle[seg]))
            s.prev_angle[seg] = np.where(snapped, phi,
                                         np.where(keep, wrap_angle(s.prev_angle[seg] + turn[ch]), s.prev_angle[seg]))
            s.angular_velocity[seg] = np.where(snapped, F(0), s.angular_velocity[seg])
            s.prev_angular_velocity[seg] = np.where(snapped, F(0), s.prev_angular_velocity[seg])
            s.last_local_angle[seg] = np.where(flag[ch] != 0, s.local_angle[seg], s.last_local_angle[seg])
            phi_parent[ch] = np.where(snapped, phi, phi_parent[ch])
        moved = flag != 0
        s.prev_root_position[moved] = s.root_position_pose[moved]
        s.prev_root_velocity[moved] = F(0)
        s.last_root_position[moved] = s.root_position_pose[moved]
        s.last_root_angle[moved] = s.root_angle_pose[moved]

    def interpolate_root(self, s, alpha, chains, inv_path_step):
        """SPEC section 3, step 1: P and Θ on the target path; V and A from P_prev, V_prev.
        Returns A for the given chains."""
        last_position, last_angle = s.last_root_position[chains], s.last_root_angle[chains]
        s.root_position[chains] = last_position + alpha * (s.root_position_pose[chains] - last_position)
        s.root_angle[chains] = last_angle + alpha * wrap_angle(s.root_angle_pose[chains] - last_angle)
        velocity = (s.root_position[chains] - s.prev_root_position[chains]) * inv_path_step
        acceleration = (velocity - s.prev_root_velocity[chains]) * inv_path_step
        s.prev_root_position[chains] = s.root_position[chains]
        s.prev_root_velocity[chains] = velocity
        return acceleration

    @staticmethod
    def limit_angle(target_angle, limit, phi, omega):
        """SPEC section 3, step 2, the limit. Returns (φ, ω)."""
        dd = wrap_angle(phi - target_angle)
        over = np.abs(dd) > limit
        with np.errstate(invalid="ignore"):  # sign(0)·inf where no limit applies: not taken
            phi = np.where(over, target_angle + np.sign(dd) * limit, phi)
        omega = np.where(over & (omega * dd > F(0)), F(0), omega)
        return phi, omega

    def integrate_segment(self, s, seg, phi_parent, alpha, root_acceleration, gravity, h):
        """SPEC section 3, step 2, the segments ``seg`` (one per chain, with their chains'
        (n, 2) root acceleration and gravity): returns their new φ."""
        rig = self.segment_rig[seg]
        last = s.last_local_angle[seg]
        lam = last + alpha * wrap_angle(s.local_angle[seg] - last)
        target_angle = phi_parent + lam
        phi = s.angle[seg]
        omega = s.angular_velocity[seg]
        d = wrap_angle(phi - target_angle)
        ex, ey = np.cos(phi), np.sin(phi)
        gx = gravity[:, 0] - rig["inertia"] * root_acceleration[:, 0]
        gy = gravity[:, 1] - rig["inertia"] * root_acceleration[:, 1]
        alpha_ext = (ex * gy - ey * gx) * rig["inv_length"]
        acc = -rig["stiffness"] * d - rig["damping"] * omega + alpha_ext
        omega_new = omega + acc * h
        phi_new = phi + omega_new * h
        phi_new, omega_new = self.limit_angle(target_angle, rig["angle_limit"], phi_new, omega_new)
        s.prev_angle[seg] = phi
        s.prev_angular_velocity[seg] = omega
        phi_new = wrap_angle(phi_new)
        s.angle[seg] = phi_new
        s.angular_velocity[seg] = omega_new
        return phi_new

    def substep(self, s, alpha, chains, depth, h, inv_path_step):
        acceleration = np.zeros((self.chain_count, 2), F)
        acceleration[chains] = self.interpolate_root(s, alpha, chains, inv_path_step)
        phi_parent = s.root_angle.copy()
        for ch, seg in depth:
            phi_parent[ch] = self.integrate_segment(s, seg, phi_parent[ch], alpha, acceleration[ch], s.gravity[ch], h)

    def write_output(self, s, sigma):
        """SPEC section 2, "Output at frame time", with each chain's σ (C,)."""
        first_joint = self.chain_rig["first_joint"].astype(np.int64)
        base = s.root_position_pose.copy()
        raw_base = s.prev_root_position.copy()
        self.joint_output["position"][first_joint] = base
        self.joint_output["raw_position"][first_joint] = raw_base
        st = self.segment_state
        for d, (ch, seg) in enumerate(self.depth_lists()):
            length = self.segment_rig["length"][seg]
            phi, prev = st["angle"][seg], st["prev_angle"][seg]
            sg = sigma[ch]
            angle = wrap_angle(prev + sg * wrap_angle(phi - prev))
            omega = st["prev_angular_velocity"][seg] + sg * (st["angular_velocity"][seg] - st["prev_angular_velocity"][seg])
            base[ch] = base[ch] + length[:, None] * np.stack([np.cos(angle), np.sin(angle)], axis=1)
            raw_base[ch] = raw_base[ch] + length[:, None] * np.stack([np.cos(phi), np.sin(phi)], axis=1)
            joint = first_joint[ch] + 1 + d
            self.joint_output["position"][joint] = base[ch]
            self.joint_output["raw_position"][joint] = raw_base[ch]
            self.segment_output["angle"][seg] = angle
            self.segment_output["angular_velocity"][seg] = omega


class _FrameScratch:
    """Contiguous float32 copies of the state and targets for one frame."""

    def __init__(self, backend):
        cs, ss, tg = backend.chain_state, backend.segment_state, backend.chain_target
        self.gravity = backend.chain_rig["gravity"].astype(F)
        self.prev_root_position = cs["prev_root_position"].copy()
        self.prev_root_velocity = cs["prev_root_velocity"].copy()
        self.last_root_position = cs["last_root_position"].copy()
        self.last_root_angle = cs["last_root_angle"].copy()
        self.root_position = self.last_root_position.copy()
        self.root_angle = self.last_root_angle.copy()
        self.angle = ss["angle"].copy()
        self.angular_velocity = ss["angular_velocity"].copy()
        self.prev_angle = ss["prev_angle"].copy()
        self.prev_angular_velocity = ss["prev_angular_velocity"].copy()
        self.last_local_angle = ss["last_local_angle"].copy()
        self.root_position_pose = tg["root_position"].copy()
        self.root_angle_pose = tg["root_angle"].copy()
        self.teleport = tg["teleport"].copy()
        self.lod = tg["lod"].copy()
        self.local_angle = backend.local_angle

    def store(self, backend):
        cs, ss = backend.chain_state, backend.segment_state
        cs["prev_root_position"] = self.prev_root_position
        cs["prev_root_velocity"] = self.prev_root_velocity
        cs["last_root_position"] = self.last_root_position
        cs["last_root_angle"] = self.last_root_angle
        for name in ("angle", "angular_velocity", "prev_angle", "prev_angular_velocity", "last_local_angle"):
            ss[name] = getattr(self, name)

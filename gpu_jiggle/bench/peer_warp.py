"""The NVIDIA Warp peer (see :mod:`gpu_jiggle.bench.peers`): one Warp thread per chain walks it
root to tip through every substep of a frame, in float32 world coordinates, on device "cpu"
or "cuda".

The kernels take the arrays of :data:`~gpu_jiggle.bench.peer_host.ANGLE_ARRAYS` / ``POINT_ARRAYS``
in that order ((N, 2), (N, 3) and (N, 4) float32 as ``wp.vec2`` / ``wp.vec3`` / ``wp.vec4``
arrays, (N,) as ``float`` arrays), then the frame's scalars. The angle kernel is here; the
point chains' kernel is :func:`.peer_warp_point.point_frame`, its stages in
:mod:`.peer_warp_geometry`, :mod:`.peer_warp_colliders`, :mod:`.peer_warp_contact`,
:mod:`.peer_warp_segment_contact`, :mod:`.peer_warp_limits` and :mod:`.peer_warp_output`. Warp compiles the kernels on first
launch and caches the build on disk (``~/.cache/warp``).
"""
from __future__ import annotations

import numpy as np

from ..extras import require

wp = require("warp", "the Warp peer")
# No start-up or module-load lines in the benchmark's table (log_level in Warp 1.10+, quiet before).
if hasattr(wp, "LOG_WARNING"):
    wp.config.log_level = wp.LOG_WARNING
wp.config.quiet = True

from .peer_warp_colliders import ColliderPath, collider_paths, end_collider_paths  # noqa: E402
from .peer_warp_geometry import path_weights, start_tangent, wrap  # noqa: E402
from .peer_warp_point import point_frame  # noqa: E402


class WarpEngine:
    """Holds the peer's arrays on a Warp device and launches the Warp kernel of its kind."""

    library = "warp"

    def __init__(self, kind: str, device=None):
        wp.init()
        if device is None:
            device = "cuda" if wp.is_cuda_available() else "cpu"
        self.device = wp.get_device(device)
        self.kernel = angle_frame if kind == "angle" else point_frame
        self.name = f"warp ({self.device.alias})"
        self.arrays = {}
        self.order = ()
        self.chain_count = 0
        self.paths = None  # point chains: this frame's collider paths

    def load(self, names, values: dict) -> None:
        """Set the arrays ``names`` from ``values`` (float32 numpy), copied into the device
        arrays already there; the first call gives them all."""
        for name in names:
            value = np.ascontiguousarray(values[name], np.float32)
            dtype = {2: wp.vec2, 3: wp.vec3, 4: wp.vec4}[value.shape[1]] if value.ndim == 2 else wp.float32
            held = self.arrays.get(name)
            if held is not None and held.shape == value.shape[:1]:
                held.assign(value)
            else:
                self.arrays[name] = wp.array(value, dtype=dtype, device=self.device)
        if not self.order:
            self.order = tuple(names)
            self.chain_count = self.arrays["gravity"].shape[0]

    def run(self, scalars) -> None:
        """One frame: the kernel over all chains (the frame's alphas go up first); for point
        chains with colliders, their paths laid out before it and ended after it
        (:mod:`.peer_warp_colliders`)."""
        alphas = wp.array(scalars[0], dtype=wp.float32, device=self.device)
        vector = {2: wp.vec2, 3: wp.vec3}
        rest = [vector[s.size](*s) if isinstance(s, np.ndarray) else s.item() if isinstance(s, np.generic) else s
                for s in scalars[1:]]
        inputs = [*(self.arrays[n] for n in self.order), alphas, *rest]
        if self.kernel is not point_frame:
            wp.launch(self.kernel, dim=self.chain_count, inputs=inputs, device=self.device)
            return
        a = self.arrays
        spheres = a["sphere_radius"].shape[0]
        colliders = spheres + a["capsule_radius"].shape[0]
        if self.paths is None:
            self.paths = wp.zeros(max(colliders, 1), dtype=ColliderPath, device=self.device)
        moving = ("sphere_last", "sphere_rate", "sphere_radius_last", "capsule_a_last", "capsule_b_last",
                  "capsule_a_rate", "capsule_b_rate", "capsule_radius_last")
        if colliders:
            wp.launch(collider_paths, dim=colliders,
                      inputs=[*(a[n] for n in ("sphere_centre", "sphere_radius", "capsule_a", "capsule_b",
                                               "capsule_radius", *moving)), rest[3], self.paths],
                      device=self.device)
        wp.launch(point_frame, dim=self.chain_count, inputs=[*inputs, self.paths], device=self.device)
        substeps = int(rest[0])
        if colliders and substeps > 0:
            wp.launch(end_collider_paths, dim=colliders,
                      inputs=[self.paths, spheres, float(scalars[0][substeps - 1]), rest[4],
                              *(a[n] for n in moving)],
                      device=self.device)

    def read(self, name) -> np.ndarray:
        return self.arrays[name].numpy().copy()

    def synchronize(self) -> None:
        wp.synchronize_device(self.device)


@wp.kernel
def angle_frame(length: wp.array(dtype=float), stiffness: wp.array(dtype=float), damping: wp.array(dtype=float),
                air_drag: wp.array(dtype=float), inertia: wp.array(dtype=float), gravity: wp.array(dtype=wp.vec2),
                root_position: wp.array(dtype=wp.vec2), root_angle: wp.array(dtype=float),
                local_angle: wp.array(dtype=float),
                root_last: wp.array(dtype=wp.vec2), root_rate: wp.array(dtype=wp.vec2),
                heading_last: wp.array(dtype=float), heading_rate: wp.array(dtype=float),
                root_prev: wp.array(dtype=wp.vec2), root_velocity_prev: wp.array(dtype=wp.vec2),
                angle: wp.array(dtype=float), angular_velocity: wp.array(dtype=float),
                angular_velocity_before: wp.array(dtype=float), target_angle: wp.array(dtype=float),
                local_last: wp.array(dtype=float), local_rate: wp.array(dtype=float),
                joint_output: wp.array(dtype=wp.vec2),
                alphas: wp.array(dtype=float), substep_count: int, segments: int, h: float, span: float,
                inv_span: float, inv_path_step: float, blend: float,
                wind: wp.vec2, gust_amplitude: float, gust_direction: wp.vec2, gust_wave_vector: wp.vec2,
                gust_angular_frequency: float, gust_phase: float):
    """One frame of angle chains (SPEC 3): substeps, the path's end (SPEC 2), frame-time output."""
    c = wp.tid()
    windy = wind[0] != 0.0 or wind[1] != 0.0 or gust_amplitude != 0.0
    gust = gust_direction * gust_amplitude
    first = c * segments
    pose = root_position[c]
    heading_pose = root_angle[c]
    last = root_last[c]
    heading0 = heading_last[c]
    # SPEC 2: the moves this frame and the monotone path's start velocities (× span).
    dr = pose - last
    mr = start_tangent(dr, span * root_rate[c])
    da = wrap(heading_pose - heading0)
    ma = start_tangent(da, span * heading_rate[c])
    for j in range(substep_count):
        p, q, dp, dq = path_weights(alphas[j])
        elapsed = float(j) * h
        tip = root_prev[c]  # the tips of the last substep, for the wind
        # SPEC 3 step 1: the root on its path, its velocity and acceleration.
        root = last + p * dr + q * mr
        heading = heading0 + p * da + q * ma
        velocity = (root - root_prev[c]) * inv_path_step
        acceleration = (velocity - root_velocity_prev[c]) * inv_path_step
        root_prev[c] = root
        root_velocity_prev[c] = velocity
        g = gravity[c]
        # SPEC 3 step 2: root to tip.
        phi_parent = heading
        for i in range(segments):
            s = first + i
            local0 = local_last[s]
            dl = wrap(local_angle[s] - local0)
            target = phi_parent + (local0 + p * dl + q * start_tangent(dl, span * local_rate[s]))
            target_rate = wrap(target - target_angle[s]) * inv_path_step
            phi = angle[s]
            omega = angular_velocity[s]
            e = wp.vec2(wp.cos(phi), wp.sin(phi))
            g_eff = g - inertia[s] * acceleration
            if windy:  # SPEC 3 and 4.1, 2D, at the segment's tip from the last substep
                tip = tip + length[s] * e
                g_eff = g_eff + (wind + gust * wp.sin(wp.dot(gust_wave_vector, tip) + gust_phase
                                                      - gust_angular_frequency * elapsed))
            torque = (e[0] * g_eff[1] - e[1] * g_eff[0]) / length[s]
            d = wrap(phi - target_angle[s])
            acc = -stiffness[s] * d - damping[s] * (omega - target_rate) - air_drag[s] * omega + torque
            omega = omega + acc * h
            phi_new = wrap(phi + omega * h)
            angular_velocity_before[s] = angular_velocity[s]
            angular_velocity[s] = omega
            target_angle[s] = wrap(target)
            angle[s] = phi_new
            phi_parent = phi_new
    if substep_count > 0:  # SPEC 2: x0, m0 become the path's value and velocity at α_n
        p, q, dp, dq = path_weights(alphas[substep_count - 1])
        root_last[c] = last + p * dr + q * mr
        root_rate[c] = (dp * dr + dq * mr) * inv_span
        heading_last[c] = wrap(heading0 + p * da + q * ma)
        heading_rate[c] = (dp * da + dq * ma) * inv_span
        for i in range(segments):
            s = first + i
            dl = wrap(local_angle[s] - local_last[s])
            ml = start_tangent(dl, span * local_rate[s])
            local_last[s] = wrap(local_last[s] + p * dl + q * ml)
            local_rate[s] = (dp * dl + dq * ml) * inv_span
    # SPEC 2 and 9, output at frame time, σ·h after the last substep: each angle carried there
    # at its angular velocity extrapolated from the last two substeps, 2ω - ω_prev, then laid
    # out from this frame's root.
    ahead = blend * h
    joint = c * (segments + 1)
    base = pose
    joint_output[joint] = base
    for i in range(segments):
        s = first + i
        a = wrap(angle[s] + ahead * (2.0 * angular_velocity[s] - angular_velocity_before[s]))
        base = base + length[s] * wp.vec2(wp.cos(a), wp.sin(a))
        joint_output[joint + 1 + i] = base


def check_device(device: str) -> str | None:
    """None when Warp has ``device`` ("cpu", "cuda", "cuda:0", ...) on this machine, else why
    not, in one line naming ``--peer-device``."""
    wp.init()
    try:
        wp.get_device(device)
    except (ValueError, RuntimeError) as exc:
        names = ", ".join(str(d) for d in wp.get_devices())
        return f"--peer-device {device}: Warp has no such device here ({' '.join(str(exc).split())}); it has {names}"
    return None

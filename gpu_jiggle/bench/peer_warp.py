"""The NVIDIA Warp peer (see :mod:`gpu_jiggle.bench.peers`): one Warp thread per chain walks it
root to tip through every substep of a frame, in float32 world coordinates, on device "cpu"
or "cuda".

The kernels take the arrays of :data:`~gpu_jiggle.bench.peers.ANGLE_ARRAYS` / ``POINT_ARRAYS``
in that order ((N, 2) and (N, 3) float32 as ``wp.vec2`` / ``wp.vec3`` arrays, (N,) as
``float`` arrays), then the frame's scalars. Warp compiles them on first launch and caches
the build on disk.
"""
from __future__ import annotations

import numpy as np

from ..extras import require

wp = require("warp", "the Warp peer")
# No start-up or module-load lines in the benchmark's table (log_level in Warp 1.10+, quiet before).
if hasattr(wp, "LOG_WARNING"):
    wp.config.log_level = wp.LOG_WARNING
wp.config.quiet = True

PI = wp.constant(float(np.float32(np.pi)))
TWO_PI = wp.constant(float(np.float32(2.0 * np.pi)))
INV_TWO_PI = wp.constant(float(np.float32(1.0 / (2.0 * np.pi))))
MIN_LENGTH = wp.constant(1e-6)           # below it a direction is undefined (SPEC 4)
HALF_TURN_COSINE = wp.constant(-0.9999)  # u·w below it: the half-turn branch of R(u → w) (SPEC 4)
NEAR_ZERO = wp.constant(1e-12)


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
        """One frame: the kernel over all chains (the frame's alphas go up first)."""
        alphas = wp.array(scalars[0], dtype=wp.float32, device=self.device)
        vector = {2: wp.vec2, 3: wp.vec3}
        rest = [vector[s.size](*s) if isinstance(s, np.ndarray) else s.item() if isinstance(s, np.generic) else s
                for s in scalars[1:]]
        wp.launch(self.kernel, dim=self.chain_count, inputs=[*(self.arrays[n] for n in self.order), alphas, *rest],
                  device=self.device)

    def read(self, name) -> np.ndarray:
        return self.arrays[name].numpy().copy()

    def synchronize(self) -> None:
        wp.synchronize_device(self.device)


@wp.func
def wrap(a: float):
    """SPEC 0: ``a - 2π·floor((a + π)/2π)``, in [-π, π)."""
    return a - TWO_PI * wp.floor((a + PI) * INV_TWO_PI)


@wp.func
def path_weights(alpha: float):
    """(p, q, dp, dq) of the target path at ``alpha`` (SPEC 2): x(α) = x0 + p·d + q·m,
    its velocity (dp·d + dq·m)/span, with d = x1 - x0 and m the start velocity × span
    (``start_tangent``)."""
    u = 1.0 - alpha
    return alpha * alpha * (2.0 - alpha), alpha * u * u, alpha * (4.0 - 3.0 * alpha), u * (1.0 - 3.0 * alpha)


@wp.func
def start_tangent(d: float, m: float):
    """The monotone path's start velocity × span (SPEC 2) toward the move ``d`` of an angle:
    span·m0 clamped to [0, 3]·d (none where the motion stopped or turned back)."""
    if d * m <= 0.0:
        return 0.0
    if wp.abs(m) > 3.0 * wp.abs(d):
        return 3.0 * d
    return m


@wp.func
def start_tangent(d: wp.vec2, m: wp.vec2):
    """Of a 2-vector move: the part of span·m0 along d clamped to [0, 3]·d, the part across
    it to the length 3|d|."""
    dd = wp.dot(d, d)
    if dd == 0.0:
        return wp.vec2(0.0)
    along = wp.dot(m, d) / dd
    across = m - along * d
    aa = wp.dot(across, across)
    if aa > 9.0 * dd:
        across = across * wp.sqrt(9.0 * dd / aa)
    return wp.clamp(along, 0.0, 3.0) * d + across


@wp.func
def start_tangent(d: wp.vec3, m: wp.vec3):
    """Of a 3-vector move, as for a 2-vector one."""
    dd = wp.dot(d, d)
    if dd == 0.0:
        return wp.vec3(0.0)
    along = wp.dot(m, d) / dd
    across = m - along * d
    aa = wp.dot(across, across)
    if aa > 9.0 * dd:
        across = across * wp.sqrt(9.0 * dd / aa)
    return wp.clamp(along, 0.0, 3.0) * d + across


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


@wp.func
def follow_parent(u: wp.vec3, w: wp.vec3, a: wp.vec3):
    """SPEC 4 step 2: ``a`` turned by the smallest rotation taking direction u onto w."""
    lu = wp.length(u)
    lw = wp.length(w)
    if lu < MIN_LENGTH or lw < MIN_LENGTH:
        return a
    un = u / lu
    wn = w / lw
    c = wp.dot(un, wn)
    if c < HALF_TURN_COSINE:  # a half turn about an axis perpendicular to u
        side = wp.vec3(0.0, 1.0, 0.0)
        if wp.abs(un[0]) < 0.9:
            side = wp.vec3(1.0, 0.0, 0.0)
        axis = wp.cross(un, side)
        axis = axis / wp.length(axis)
        return (2.0 * wp.dot(axis, a)) * axis - a
    v = wp.cross(un, wn)
    return a * c + wp.cross(v, a) + v * (wp.dot(v, a) / (1.0 + c))


@wp.func
def push_out(q: wp.vec3, r: float, x: wp.vec3, v: wp.vec3):
    """SPEC 4 step 2, colliders: x out of the ball (q, r), the inward velocity removed."""
    delta = x - q
    d = wp.length(delta)
    if d < r:
        n = wp.vec3(0.0, 1.0, 0.0)
        if d >= MIN_LENGTH:
            n = delta / d
        vn = wp.dot(v, n)
        if vn < 0.0:
            return q + n * r, v - n * vn
        return q + n * r, v
    return x, v


@wp.func
def collide(sphere_centre: wp.array(dtype=wp.vec3), sphere_radius: wp.array(dtype=float),
            capsule_a: wp.array(dtype=wp.vec3), capsule_b: wp.array(dtype=wp.vec3),
            capsule_radius: wp.array(dtype=float), rho: float, x_in: wp.vec3, v_in: wp.vec3):
    """SPEC 4.2: spheres, then capsules (the point of the axis closest to x), one pass."""
    x = x_in
    v = v_in
    for k in range(sphere_radius.shape[0]):
        x, v = push_out(sphere_centre[k], sphere_radius[k] + rho, x, v)
    for k in range(capsule_radius.shape[0]):
        a = capsule_a[k]
        ab = capsule_b[k] - a
        t = wp.min(wp.max(wp.dot(x - a, ab) / wp.max(wp.dot(ab, ab), NEAR_ZERO), 0.0), 1.0)
        x, v = push_out(a + ab * t, capsule_radius[k] + rho, x, v)
    return x, v


@wp.func
def turn_ahead(dir_before: wp.vec3, dir_now: wp.vec3, change: wp.vec3, h: float, ahead: float):
    """SPEC 9, frame-time output: the direction at the last substep turned ``ahead`` seconds
    further at its angular velocity extrapolated from the last two substeps, 2Ω - Ω_prev
    (Ω = d × ḋ / |d|², ḋ = (dir_now - dir_before)/h now and ḋ - ``change`` a substep back),
    across the direction by Rodrigues' formula, keeping its length."""
    rate = (dir_now - dir_before) / h
    lc = wp.max(wp.length(dir_now), MIN_LENGTH)
    lp = wp.max(wp.length(dir_before), MIN_LENGTH)
    u = dir_now / lc
    omega = wp.cross(u, rate) / lc
    omega_prev = wp.cross(dir_before / lp, rate - change) / lp
    turn = (omega * 2.0 - omega_prev) * ahead
    turn = turn - u * wp.dot(turn, u)
    angle = wp.length(turn)
    sinc = float(1.0)
    if angle > 0.0:
        sinc = wp.sin(angle) / angle
    return dir_now * wp.cos(angle) + wp.cross(turn, dir_now) * sinc


@wp.kernel
def point_frame(rest_length: wp.array(dtype=float), stiffness: wp.array(dtype=float),
                damping: wp.array(dtype=float), air_drag: wp.array(dtype=float), particle_radius: wp.array(dtype=float),
                max_distance: wp.array(dtype=float), angle_limit: wp.array(dtype=float),
                gravity: wp.array(dtype=wp.vec3),
                sphere_centre: wp.array(dtype=wp.vec3), sphere_radius: wp.array(dtype=float),
                capsule_a: wp.array(dtype=wp.vec3), capsule_b: wp.array(dtype=wp.vec3),
                capsule_radius: wp.array(dtype=float),
                joint_target: wp.array(dtype=wp.vec3),
                sphere_last: wp.array(dtype=wp.vec3), sphere_rate: wp.array(dtype=wp.vec3),
                sphere_radius_last: wp.array(dtype=float), capsule_a_last: wp.array(dtype=wp.vec3),
                capsule_b_last: wp.array(dtype=wp.vec3), capsule_a_rate: wp.array(dtype=wp.vec3),
                capsule_b_rate: wp.array(dtype=wp.vec3), capsule_radius_last: wp.array(dtype=float),
                joint_last: wp.array(dtype=wp.vec3), joint_rate: wp.array(dtype=wp.vec3),
                pivot_rate_before: wp.array(dtype=wp.vec3),
                pivot: wp.array(dtype=wp.vec3), pivot_before: wp.array(dtype=wp.vec3),
                position: wp.array(dtype=wp.vec3), velocity: wp.array(dtype=wp.vec3),
                position_before: wp.array(dtype=wp.vec3), velocity_before: wp.array(dtype=wp.vec3),
                target: wp.array(dtype=wp.vec3), bend_code: wp.array(dtype=wp.vec2),
                swing_code: wp.array(dtype=wp.vec2), world_code: wp.array(dtype=wp.vec2),
                joint_output: wp.array(dtype=wp.vec3), swing: wp.array(dtype=wp.vec4),
                world_rotation: wp.array(dtype=wp.vec4),
                alphas: wp.array(dtype=float), substep_count: int, segments: int, h: float, span: float,
                inv_span: float, inv_path_step: float, blend: float,
                wind: wp.vec3, gust_amplitude: float, gust_direction: wp.vec3, gust_wave_vector: wp.vec3,
                gust_angular_frequency: float, gust_phase: float):
    """One frame of point chains (SPEC 4): substeps, the path's end (SPEC 2), frame-time output.
    The colliders stay at this frame's pose (``sphere_centre`` ...); the limits
    (``max_distance``, ``angle_limit``: none, the peer refuses others), the collider paths
    (``*_last``, ``*_rate``), the axis codes and the rotations (``swing``, ``world_rotation``)
    are the numba peer's, taken and left as they are."""
    c = wp.tid()
    first = c * segments
    first_joint = c * (segments + 1)
    g = gravity[c]
    gust = gust_direction * gust_amplitude
    for j in range(substep_count):
        p, q, dp, dq = path_weights(alphas[j])
        elapsed = float(j) * h
        # SPEC 4 step 1: the pivot on its path.
        last = joint_last[first_joint]
        d_pivot = joint_target[first_joint] - last
        base = last + d_pivot * p + start_tangent(d_pivot, joint_rate[first_joint] * span) * q
        pivot_before[c] = pivot[c]
        pivot[c] = base
        offset_before = wp.vec3(0.0)  # the tips' targets go as offsets from the pivot on its path
        parent_animated = wp.vec3(0.0)
        parent_simulated = wp.vec3(0.0)
        for i in range(segments):
            s = first + i
            J = first_joint + 1 + i
            last = joint_last[J]
            d_tip = joint_target[J] - last
            offset = last + d_tip * p + start_tangent(d_tip, joint_rate[J] * span) * q
            animated = offset - offset_before
            t = base + animated
            if i > 0:
                t = base + follow_parent(parent_animated, parent_simulated, animated)
            x = position[s]
            v = velocity[s]
            t_prev = target[s]
            v_t = (t - t_prev) * inv_path_step
            # SPEC 4.1, at the particle at the start of the substep.
            w = wind + gust * wp.sin(wp.dot(gust_wave_vector, x) + gust_phase - gust_angular_frequency * elapsed)
            acc = (x - t_prev) * (-stiffness[s]) - (v - v_t) * damping[s] - v * air_drag[s] + g + w
            v = v + acc * h
            x = x + v * h
            x, v = collide(sphere_centre, sphere_radius, capsule_a, capsule_b, capsule_radius, particle_radius[s], x, v)
            # The length step (SPEC 9): onto the rest-length sphere about the base, v += Δx/h.
            d = x - base
            projected = base + (d / wp.max(wp.length(d), MIN_LENGTH)) * rest_length[s]
            v = v + (projected - x) / h
            x = projected
            position_before[s] = position[s]
            velocity_before[s] = velocity[s]
            position[s] = x
            velocity[s] = v
            target[s] = t
            parent_animated = animated
            parent_simulated = x - base
            base = x
            offset_before = offset
    if substep_count > 0:  # SPEC 2: x0, m0 become the path's value and velocity at α_n
        # The pivot's path velocity a substep back (for the frame-time output).
        if substep_count > 1:
            p0, q0, dp0, dq0 = path_weights(alphas[substep_count - 2])
            d0 = joint_target[first_joint] - joint_last[first_joint]
            m0 = start_tangent(d0, joint_rate[first_joint] * span)
            pivot_rate_before[c] = (d0 * dp0 + m0 * dq0) * inv_span
        else:
            pivot_rate_before[c] = joint_rate[first_joint]
        p, q, dp, dq = path_weights(alphas[substep_count - 1])
        for J in range(first_joint, first_joint + segments + 1):
            d = joint_target[J] - joint_last[J]
            m = start_tangent(d, joint_rate[J] * span)
            joint_last[J] = joint_last[J] + d * p + m * q
            joint_rate[J] = (d * dp + m * dq) * inv_span
    # SPEC 2 and 9, output at frame time, σ·h after the last substep: each direction carried
    # there at its angular velocity extrapolated from the last two substeps (turn_ahead),
    # rebuilt with the rest lengths from this frame's pivot, pushed out of the colliders.
    base = joint_target[first_joint]
    base_before = pivot_before[c]
    base_now = pivot[c]
    base_change = joint_rate[first_joint] - pivot_rate_before[c]
    joint_output[first_joint] = base
    for i in range(segments):
        s = first + i
        before = position_before[s]
        now = position[s]
        dir_before = before - base_before
        dir_now = now - base_now
        change = (velocity[s] - velocity_before[s]) - base_change
        direction = turn_ahead(dir_before, dir_now, change, h, blend * h)
        base_change = velocity[s] - velocity_before[s]
        ld = wp.length(direction)
        if ld < MIN_LENGTH:
            direction = dir_now / wp.max(wp.length(dir_now), MIN_LENGTH)
        else:
            direction = direction / ld
        x = base + direction * rest_length[s]
        x, unused = collide(sphere_centre, sphere_radius, capsule_a, capsule_b, capsule_radius, particle_radius[s],
                            x, wp.vec3(0.0))
        joint_output[first_joint + 1 + i] = x
        base = x
        base_before = before
        base_now = now


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

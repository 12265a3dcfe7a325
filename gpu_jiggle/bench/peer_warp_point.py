"""The Warp peer's point-chain kernel (see :mod:`gpu_jiggle.bench.peer_warp`; SPEC 4 and 9): one
Warp thread per chain walks it root to tip through every substep (and contact sub-step) of a
frame, in float32 world coordinates. The contact stages, collider paths, limits and frame-time
output are in :mod:`.peer_warp_contact`, :mod:`.peer_warp_segment_contact`,
:mod:`.peer_warp_colliders`, :mod:`.peer_warp_limits` and :mod:`.peer_warp_output`.

:func:`point_frame` takes the arrays of :data:`~gpu_jiggle.bench.peer_host.POINT_ARRAYS` in that
order ((N, 3) float32 as ``wp.vec3``, (S, 2) as ``wp.vec2``, (S, 4) as ``wp.vec4``, (N,) as
``float``), the frame's scalars (:meth:`~gpu_jiggle.bench.peer_host._Peer.frame_scalars`), then
this frame's collider paths (:func:`~.peer_warp_colliders.collider_paths`, run before it).
"""
from __future__ import annotations

from .peer_warp_colliders import ColliderPath, Placement, placement
from .peer_warp_contact import collide_near, contact_substeps
from .peer_warp_geometry import (MIN_LENGTH, axis_code, axis_from_code, bend, bend_axis, on_path, path_weights,
                                 start_tangent, turn_by_bend, wp)
from .peer_warp_limits import limit_angle, limit_distance
from .peer_warp_output import Codes, Floats, Vectors, write_output
from .peer_warp_segment_contact import settle_contact

Paths = wp.array(dtype=ColliderPath)


@wp.func
def chain_substep(c: int, segments: int, p: float, q: float, span: float, h: float, inv_path_step: float,
                  elapsed: float, first_of_substep: int, paths: Paths, spheres: int, colliders: int, w: Placement,
                  rest_length: Floats, stiffness: Floats, damping: Floats, air_drag: Floats,
                  particle_radius: Floats, max_distance: Floats, angle_limit: Floats, gravity: Vectors,
                  joint_target: Vectors, joint_last: Vectors, joint_rate: Vectors, pivot: Vectors,
                  pivot_before: Vectors, position: Vectors, velocity: Vectors, position_before: Vectors,
                  velocity_before: Vectors, target: Vectors, bend_code: Codes, w0: wp.vec3, gust: wp.vec3,
                  kappa: wp.vec3, gust_phase: float, gust_angular_frequency: float):
    """One substep (or contact sub-step, SPEC 9) of h seconds of chain ``c`` at the path weights
    (p, q), the colliders placed at ``w``: the pivot on its path (SPEC 4 step 1), then root to
    tip: the target turned with the parent's bend (its half-turn axis carried as a code in
    ``bend_code``, SPEC 4 step 2 and 9), the spring, damping relative to the target, air drag,
    gravity and wind (SPEC 4.1) in a semi-implicit Euler step, the particle stage
    (``collide_near``), the max distance, the length step with v += Δx/h less what contact
    moved without velocity (SPEC 9, "Push-out velocity"), the cone angle limit (SPEC 9), then
    ``settle_contact``. ``first_of_substep``: the first sub-step of a substep, whose start the
    frame-time output blends from."""
    first = c * segments
    first_joint = c * (segments + 1)
    zero = wp.vec3(0.0)
    g = gravity[c]
    base = on_path(joint_last[first_joint], joint_rate[first_joint], joint_target[first_joint], p, q, span)
    base_start = pivot[c]  # each segment's base at the start of the substep
    if first_of_substep != 0:
        pivot_before[c] = base_start
    pivot[c] = base
    offset_before = zero  # the tips' targets go as offsets from the pivot on its path
    parent = bend(zero, zero)  # the parent's bend, animated → simulated
    parent_axis = zero
    pushed_base = zero  # how far contact moved the base without velocity this substep
    for i in range(segments):
        s = first + i
        J = first_joint + 1 + i
        offset = on_path(joint_last[J], joint_rate[J], joint_target[J], p, q, span)
        animated = offset - offset_before
        t = base + animated
        if i > 0:
            t = base + turn_by_bend(parent, animated, parent_axis)  # follow_parent
        start = position[s]
        v = velocity[s]
        t_prev = target[s]
        v_t = (t - t_prev) * inv_path_step
        # SPEC 4.1, at the particle at the start of the substep.
        wind = w0 + gust * wp.sin(wp.dot(kappa, start) + gust_phase - gust_angular_frequency * elapsed)
        acc = (start - t_prev) * (-stiffness[s]) - (v - v_t) * damping[s]
        acc = acc - v * air_drag[s] + g + wind
        v = v + acc * h
        x = start + v * h
        rho = particle_radius[s]
        rest = rest_length[s]
        free_x = x
        free_v = v
        if colliders > 0:
            x, v = collide_near(paths, spheres, colliders, w, rho, h, start, x, v)
        pushed = (x - free_x) - (v - free_v) * h  # what contact moved x without velocity
        x, v = limit_distance(max_distance[s], t, x, v)
        # The length step (SPEC 9): onto the rest-length sphere about the base; v += Δx/h of the
        # same projection made without what contact moved x and its base without velocity.
        d = x - base
        projected = base + d / wp.max(wp.length(d), MIN_LENGTH) * rest
        if pushed == zero and pushed_base == zero:  # (the same projection: not made twice)
            v = v + (projected - x) / h
        else:
            moving_x = x - pushed
            moving_base = base - pushed_base
            dm = moving_x - moving_base
            moving_projected = moving_base + dm / wp.max(wp.length(dm), MIN_LENGTH) * rest
            v = v + (moving_projected - moving_x) / h
            pushed = projected - moving_projected
        x = projected
        x, v = limit_angle(angle_limit[s], base, t, v_t, x, v)
        settled_x = x
        settled_v = v
        if colliders > 0:
            x, v = settle_contact(paths, spheres, colliders, w, rho, base, rest, h, base_start, start, x, v)
        pushed_base = pushed + ((x - settled_x) - (v - settled_v) * h)
        if first_of_substep != 0:
            position_before[s] = start
            velocity_before[s] = velocity[s]
        position[s] = x
        velocity[s] = v
        target[s] = t
        # the axis of this segment's bend, carried to the next substep (SPEC 4 step 2, 9)
        parent = bend(animated, x - base)
        parent_axis, carried = bend_axis(parent, axis_from_code(bend_code[s]))  # turn_axis
        bend_code[s] = axis_code(carried)
        base = x
        base_start = start
        offset_before = offset


@wp.kernel
def point_frame(rest_length: Floats, stiffness: Floats, damping: Floats, air_drag: Floats, particle_radius: Floats,
                max_distance: Floats, angle_limit: Floats, gravity: Vectors,
                sphere_centre: Vectors, sphere_radius: Floats, capsule_a: Vectors, capsule_b: Vectors,
                capsule_radius: Floats,
                joint_target: Vectors,
                sphere_last: Vectors, sphere_rate: Vectors, sphere_radius_last: Floats, capsule_a_last: Vectors,
                capsule_b_last: Vectors, capsule_a_rate: Vectors, capsule_b_rate: Vectors,
                capsule_radius_last: Floats,
                joint_last: Vectors, joint_rate: Vectors, pivot_rate_before: Vectors, pivot: Vectors,
                pivot_before: Vectors, position: Vectors, velocity: Vectors, position_before: Vectors,
                velocity_before: Vectors, target: Vectors, bend_code: Codes, swing_code: Codes, world_code: Codes,
                joint_output: Vectors, swing: wp.array(dtype=wp.vec4), world_rotation: wp.array(dtype=wp.vec4),
                alphas: Floats, substep_count: int, segments: int, h: float, span: float,
                inv_span: float, inv_path_step: float, blend: float,
                wind: wp.vec3, gust_amplitude: float, gust_direction: wp.vec3, gust_wave_vector: wp.vec3,
                gust_angular_frequency: float, gust_phase: float, paths: Paths):
    """One frame of point chain ``tid`` (SPEC 4, 9), the arrays of POINT_ARRAYS (shapes and
    units in :mod:`.peers`) changed in place: per substep the contact sub-steps the colliders'
    motion asks for (SPEC 9), each a :func:`chain_substep`; the joints' paths' end (SPEC 2);
    then the frame-time output (:func:`~.peer_warp_output.write_output`). The colliders
    (``paths``) move on this frame's paths; their ``*_last``, ``*_rate`` are read there (by
    ``collider_paths``) and ended after it (``end_collider_paths``)."""
    c = wp.tid()
    first = c * segments
    first_joint = c * (segments + 1)
    spheres = sphere_radius.shape[0]
    colliders = spheres + capsule_radius.shape[0]
    gust = gust_direction * gust_amplitude
    # SPEC 9, contact sub-steps: the chain's reach and smallest particle radius.
    reach = float(0.0)
    largest = float(0.0)
    smallest = float(3.0e38)
    for s in range(first, first + segments):
        reach += rest_length[s]
        largest = wp.max(largest, particle_radius[s])
        smallest = wp.min(smallest, particle_radius[s])
    reach += largest
    for j in range(substep_count):
        alpha = alphas[j]
        alpha_start = float(0.0)
        if j > 0:
            alpha_start = alphas[j - 1]
        collider_alpha = wp.min(wp.max(1.0 - (1.0 - alpha), 0.0), 1.0)
        collider_start = wp.min(1.0 - (1.0 - alpha_start), 1.0)
        p, q, dp, dq = path_weights(alpha)
        cp, cq, cdp, cdq = path_weights(collider_alpha)
        sp, sq, sdp, sdq = path_weights(collider_start)
        w = placement(cp, cq, collider_alpha, sp, sq)
        k = int(1)
        if colliders > 0:
            end = on_path(joint_last[first_joint], joint_rate[first_joint], joint_target[first_joint], p, q, span)
            k = contact_substeps(paths, spheres, colliders, w, end, end - pivot[c], reach, smallest)
        for part in range(k):
            h_part = h
            rate = inv_path_step
            elapsed = float(j) * h
            if k > 1:  # sub-step part of k: its path fractions, the last one's end exact
                a = alpha
                a_collider = collider_alpha
                if part < k - 1:
                    a = alpha_start + float(part + 1) / float(k) * (alpha - alpha_start)
                    a_collider = collider_start + float(part + 1) / float(k) * (collider_alpha - collider_start)
                a_start = collider_start + float(part) / float(k) * (collider_alpha - collider_start)
                h_part = h / float(k)
                rate = inv_path_step * float(k)
                elapsed = elapsed + float(part) * h_part
                p, q, dp, dq = path_weights(a)
                cp, cq, cdp, cdq = path_weights(a_collider)
                sp, sq, sdp, sdq = path_weights(a_start)
                w = placement(cp, cq, a_collider, sp, sq)
            first_part = int(0)
            if part == 0:
                first_part = 1
            chain_substep(c, segments, p, q, span, h_part, rate, elapsed, first_part, paths, spheres, colliders, w,
                          rest_length, stiffness, damping, air_drag, particle_radius, max_distance, angle_limit,
                          gravity, joint_target, joint_last, joint_rate, pivot, pivot_before, position, velocity,
                          position_before, velocity_before, target, bend_code, wind, gust, gust_wave_vector,
                          gust_phase, gust_angular_frequency)
    if substep_count > 0:  # SPEC 2: x0, m0 become the path's value and velocity at α_n
        # The pivot's path velocity a substep back (for the frame-time output).
        if substep_count > 1:
            p0, q0, dp0, dq0 = path_weights(alphas[substep_count - 2])
            d0 = joint_target[first_joint] - joint_last[first_joint]
            m0 = start_tangent(d0, joint_rate[first_joint] * span)
            pivot_rate_before[c] = (d0 * dp0 + m0 * dq0) * inv_span
        else:
            pivot_rate_before[c] = joint_rate[first_joint]
        pn, qn, dpn, dqn = path_weights(alphas[substep_count - 1])
        for J in range(first_joint, first_joint + segments + 1):
            d = joint_target[J] - joint_last[J]
            m = start_tangent(d, joint_rate[J] * span)
            joint_last[J] = joint_last[J] + d * pn + m * qn
            joint_rate[J] = (d * dpn + m * dqn) * inv_span
    at_pose = placement(1.0, 0.0, 1.0, 1.0, 0.0)  # the colliders at this frame's pose, at rest
    write_output(c, segments, h, blend * h, paths, spheres, colliders, at_pose, rest_length, particle_radius,
                 angle_limit, joint_target, joint_rate, pivot_rate_before, pivot, pivot_before, position, velocity,
                 position_before, velocity_before, swing_code, world_code, joint_output, swing, world_rotation)

#version 430
// One frame of point chains (SPEC sections 2, 4 and 5): one invocation per chain walks its
// particles root to tip, for every substep of the frame, inside this one dispatch.
// Stages, named as in gpu_jiggle/sim/backends/reference_point.py: apply_teleport,
// interpolate_pivot, follow_parent, integrate_particle, collide, limit_distance,
// enforce_length, keep_outside, write_output.
#define LOCAL_SIZE 64

layout(local_size_x = LOCAL_SIZE) in;

#include "common.glsl"
#include "dispatch.glsl"
#include "point_common.glsl"

// The schedule of this invocation's chain (its level of detail), set first thing in main().
Schedule sch;

const float MIN_LENGTH = 1e-6;

// A unit vector perpendicular to u (u unit).
vec3 perpendicular(vec3 u) {
    vec3 axis = abs(u.x) < 0.9 ? vec3(1.0, 0.0, 0.0) : vec3(0.0, 1.0, 0.0);
    return normalize(cross(u, axis));
}

// a turned by the smallest rotation taking direction u onto direction w (SPEC 4, step 2);
// a half turn about an axis perpendicular to u when u·w < -0.9999; a itself when either
// direction has no length.
vec3 follow_parent(vec3 u, vec3 w, vec3 a) {
    float lu = length(u);
    float lw = length(w);
    if (lu < MIN_LENGTH || lw < MIN_LENGTH) {
        return a;
    }
    u = u / lu;
    w = w / lw;
    float c = dot(u, w);
    if (c < -0.9999) {
        vec3 axis = perpendicular(u);
        return 2.0 * dot(axis, a) * axis - a;
    }
    vec3 v = cross(u, w);
    return a * c + cross(v, a) + v * (dot(v, a) / (1.0 + c));
}

// The quaternion (x, y, z, w) of the smallest rotation taking u onto w; identity for a
// zero-length direction.
vec4 rotation_between(vec3 u, vec3 w) {
    float lu = length(u);
    float lw = length(w);
    if (lu < MIN_LENGTH || lw < MIN_LENGTH) {
        return vec4(0.0, 0.0, 0.0, 1.0);
    }
    u = u / lu;
    w = w / lw;
    float c = dot(u, w);
    if (c < -0.9999) {
        return vec4(perpendicular(u), 0.0);
    }
    return normalize(vec4(cross(u, w), 1.0 + c));
}

// SPEC section 5 for one chain.
void apply_teleport(PointChainRig chain, uint c, PointChainTarget target, uint mode) {
    for (uint i = 0u; i < chain.segment_count; ++i) {
        uint s = chain.first_segment + i;
        PointSegmentState st = segment_state[s];
        if (mode == TELEPORT_SNAP) {
            st.position = joint_offset[s];
            st.velocity = vec4(0.0);
            st.prev_position = joint_offset[s];
            st.prev_velocity = vec4(0.0);
        }
        // keep_shape: positions are relative to the pivot, so the shape moves with it.
        st.last_offset = joint_offset[s];
        segment_state[s] = st;
    }
    chain_state[c].prev_pivot = target.pivot;
    chain_state[c].last_pivot = target.pivot;
}

// SPEC section 4, step 1: the pivot on its target path; returns its motion Δp this substep.
vec3 interpolate_pivot(uint c, PointChainTarget target, float alpha, out vec3 pivot) {
    vec3 last = chain_state[c].last_pivot.xyz;
    pivot = last + alpha * (target.pivot.xyz - last);
    vec3 moved = pivot - chain_state[c].prev_pivot.xyz;
    chain_state[c].prev_pivot = vec4(pivot, 0.0);
    return moved;
}

// W(x, t) of SPEC 4.1 at a position relative to the origin, `elapsed` seconds into the frame.
vec3 wind_at(vec3 x, float elapsed) {
    float phase = dot(params.gust.xyz, x) + sch.gust_phase - params.gust.w * elapsed;
    return params.wind.xyz + params.wind.w * params.gust_direction.xyz * sin(phase);
}

// Semi-implicit Euler toward the target t (SPEC 4, step 2).
void integrate_particle(PointSegmentRig rig, vec3 t, vec3 gravity, vec3 wind, inout vec3 x, inout vec3 v) {
    vec3 acc = -rig.stiffness * (x - t) - rig.damping * v + gravity + wind;
    v = v + acc * sch.substep;
    x = x + v * sch.substep;
}

// Push x out of a sphere (centre q, radius r) and remove the inward velocity.
void push_out(vec3 q, float r, inout vec3 x, inout vec3 v) {
    vec3 delta = x - q;
    float d = length(delta);
    if (d < r) {
        vec3 n = d < MIN_LENGTH ? vec3(0.0, 1.0, 0.0) : delta / d;
        x = q + n * r;
        v = v - min(dot(v, n), 0.0) * n;
    }
}

vec3 closest_on_segment(vec3 a, vec3 b, vec3 x) {
    vec3 ab = b - a;
    float t = clamp(dot(x - a, ab) / max(dot(ab, ab), 1e-12), 0.0, 1.0);
    return a + t * ab;
}

// Collider shapes at this substep, relative to the pivot.
vec4 sphere_at(uint k, float alpha, vec3 pivot) {
    vec4 s = spheres[k].from_sphere + alpha * (spheres[k].to_sphere - spheres[k].from_sphere);
    return vec4(s.xyz - pivot, s.w);
}

void capsule_at(uint k, float alpha, vec3 pivot, out vec3 a, out vec3 b, out float r) {
    CapsuleCollider cap = capsules[k];
    vec4 a4 = cap.from_a + alpha * (cap.to_a - cap.from_a);
    vec4 b4 = cap.from_b + alpha * (cap.to_b - cap.from_b);
    a = a4.xyz - pivot;
    b = b4.xyz - pivot;
    r = a4.w;
}

vec4 plane_at(uint k, float alpha, vec3 pivot) {
    vec4 p = planes[k].from_plane + alpha * (planes[k].to_plane - planes[k].from_plane);
    vec3 n = normalize(p.xyz);
    return vec4(n, p.w - dot(n, pivot));
}

bool in_mask(uint mask, uint group) {
    return ((mask >> group) & 1u) != 0u;
}

// SPEC 4.2: spheres, then capsules, then planes, each pushing the particle out.
void collide(uint mask, float rho, float alpha, vec3 pivot, inout vec3 x, inout vec3 v) {
    for (uint k = 0u; k < params.sphere_count; ++k) {
        if (in_mask(mask, spheres[k].group)) {
            vec4 s = sphere_at(k, alpha, pivot);
            push_out(s.xyz, s.w + rho, x, v);
        }
    }
    for (uint k = 0u; k < params.capsule_count; ++k) {
        if (in_mask(mask, capsules[k].group)) {
            vec3 a, b;
            float r;
            capsule_at(k, alpha, pivot, a, b, r);
            push_out(closest_on_segment(a, b, x), r + rho, x, v);
        }
    }
    for (uint k = 0u; k < params.plane_count; ++k) {
        if (in_mask(mask, planes[k].group)) {
            vec4 p = plane_at(k, alpha, pivot);
            float depth = dot(p.xyz, x) - (p.w + rho);
            if (depth < 0.0) {
                x = x - depth * p.xyz;
                v = v - min(dot(v, p.xyz), 0.0) * p.xyz;
            }
        }
    }
}

// SPEC 4, step 2, max distance from the target.
void limit_distance(float max_distance, vec3 t, inout vec3 x, inout vec3 v) {
    vec3 e = x - t;
    float d = length(e);
    if (d > max_distance) {
        vec3 n = e / d;
        x = t + n * max_distance;
        v = v - max(dot(v, n), 0.0) * n;
    }
}

// SPEC 4, step 2, the length constraint; the constrained velocity component leaves too.
void enforce_length(float rest_length, vec3 base, vec3 v_base, inout vec3 x, inout vec3 v) {
    vec3 d = x - base;
    vec3 n = d / max(length(d), MIN_LENGTH);
    x = base + n * rest_length;
    v = v - dot(v - v_base, n) * n;
}

// The length step can pull a particle back into a collider it was pushed out of. Move it
// along the sphere of its rest length around its base to the nearest point outside a
// sphere of radius r at q (the circle where the two spheres meet). Nothing to do when the
// two spheres do not meet. (No test of whether the base is inside: a base resting on the
// surface must not switch this on and off with rounding.)
void slide_out(vec3 base, float rest_length, vec3 q, float r, inout vec3 x, inout vec3 v) {
    vec3 delta = x - q;
    if (dot(delta, delta) >= r * r) {
        return;
    }
    vec3 bq = q - base;
    float d = length(bq);
    if (d < MIN_LENGTH) {
        return;
    }
    vec3 axis = bq / d;
    float h = (d * d + rest_length * rest_length - r * r) / (2.0 * d);
    float ring2 = rest_length * rest_length - h * h;
    if (ring2 <= 0.0) {
        return;
    }
    vec3 centre = base + axis * h;
    vec3 radial = (x - centre) - dot(x - centre, axis) * axis;
    float lr = length(radial);
    vec3 dir = lr < MIN_LENGTH ? perpendicular(axis) : radial / lr;
    x = centre + dir * sqrt(ring2);
    vec3 n = normalize(x - q);
    v = v - min(dot(v, n), 0.0) * n;
}

void slide_out_of_plane(vec3 base, float rest_length, vec3 n, float offset, inout vec3 x, inout vec3 v) {
    float depth = dot(n, x) - offset;
    float base_height = dot(n, base) - offset;
    if (depth >= 0.0 || abs(base_height) > rest_length) {
        return;
    }
    // The circle where the length sphere meets the plane n·x = offset.
    vec3 centre = base - base_height * n;
    vec3 radial = (x - centre) - dot(x - centre, n) * n;
    float lr = length(radial);
    vec3 dir = lr < MIN_LENGTH ? perpendicular(n) : radial / lr;
    x = centre + dir * sqrt(max(rest_length * rest_length - base_height * base_height, 0.0));
    v = v - min(dot(v, n), 0.0) * n;
}

// Colliders again, keeping the rest length (spheres, capsules, planes).
void keep_outside(uint mask, float rho, float alpha, vec3 pivot, vec3 base, float rest_length,
                  inout vec3 x, inout vec3 v) {
    for (uint k = 0u; k < params.sphere_count; ++k) {
        if (in_mask(mask, spheres[k].group)) {
            vec4 s = sphere_at(k, alpha, pivot);
            slide_out(base, rest_length, s.xyz, s.w + rho, x, v);
        }
    }
    for (uint k = 0u; k < params.capsule_count; ++k) {
        if (in_mask(mask, capsules[k].group)) {
            vec3 a, b;
            float r;
            capsule_at(k, alpha, pivot, a, b, r);
            for (int pass = 0; pass < 2; ++pass) {  // the closest point moves with x
                slide_out(base, rest_length, closest_on_segment(a, b, x), r + rho, x, v);
            }
        }
    }
    for (uint k = 0u; k < params.plane_count; ++k) {
        if (in_mask(mask, planes[k].group)) {
            vec4 p = plane_at(k, alpha, pivot);
            slide_out_of_plane(base, rest_length, p.xyz, p.w + rho, x, v);
        }
    }
}

// SPEC section 2, "Output at frame time", relative to this frame's pivot. Like the angle
// chains, which blend angles and rebuild the chain from its pivot, each segment's direction
// is blended between the last two substeps and the chain rebuilt with its rest lengths, so
// that a fast-moving pivot does not shorten the blended chain.
void write_output(PointChainRig chain, uint c) {
    float sigma = sch.blend;
    joint_output[chain.first_joint] = PointJointOutput(vec4(0.0), vec4(0.0));
    vec3 base = vec3(0.0);
    vec3 prev_base = vec3(0.0);
    vec3 cur_base = vec3(0.0);
    vec3 animated_base = vec3(0.0);
    for (uint i = 0u; i < chain.segment_count; ++i) {
        uint s = chain.first_segment + i;
        PointSegmentState st = segment_state[s];
        vec3 prev_dir = st.prev_position.xyz - prev_base;
        vec3 cur_dir = st.position.xyz - cur_base;
        vec3 dir = prev_dir + sigma * (cur_dir - prev_dir);
        float ld = length(dir);
        dir = ld < MIN_LENGTH ? cur_dir / max(length(cur_dir), MIN_LENGTH) : dir / ld;
        vec3 x = base + dir * segment_rig[s].rest_length;
        vec3 v = st.prev_velocity.xyz + sigma * (st.velocity.xyz - st.prev_velocity.xyz);
        vec3 animated = joint_offset[s].xyz;
        vec4 q = rotation_between(animated - animated_base, x - base);
        joint_output[chain.first_joint + 1u + i] = PointJointOutput(vec4(x, 0.0), vec4(st.position.xyz, 0.0));
        segment_output[s] = PointSegmentOutput(vec4(v, 0.0), q);
        base = x;
        prev_base = st.prev_position.xyz;
        cur_base = st.position.xyz;
        animated_base = animated;
    }
}

void main() {
    uint c = invocation_index();
    if (c >= params.chain_count) {
        return;
    }
    PointChainRig chain = chain_rig[c];
    PointChainTarget target = chain_target[c];
    sch = target.lod == LOD_HALF ? params.half_rate : params.full_rate;
    if (target.lod == LOD_FROZEN) {
        // Frozen: sits on its animated targets, as a snap teleport every frame.
        apply_teleport(chain, c, target, TELEPORT_SNAP);
        write_output(chain, c);
        return;
    }
    if (target.teleport != TELEPORT_NONE) {
        apply_teleport(chain, c, target, target.teleport);
    }
    uint first_alpha = target.lod * params.alpha_stride;
    float influence = chain.world_influence;
    vec3 pivot = chain_state[c].last_pivot.xyz;
    for (uint j = 0u; j < sch.substep_count; ++j) {
        float alpha = alphas[first_alpha + j];
        float elapsed = float(j) * sch.substep;
        // The colliders' path covers the full-rate span; map this substep's time onto it.
        float collider_alpha = clamp(1.0 - (1.0 - alpha) * sch.collider_time_scale, 0.0, 1.0);
        vec3 moved = interpolate_pivot(c, target, alpha, pivot);
        vec3 base = vec3(0.0);
        vec3 v_base = moved * sch.inv_path_step;
        vec3 offset_base = vec3(0.0);
        vec3 parent_animated = vec3(0.0);
        vec3 parent_simulated = vec3(0.0);
        for (uint i = 0u; i < chain.segment_count; ++i) {
            uint s = chain.first_segment + i;
            PointSegmentRig rig = segment_rig[s];
            PointSegmentState st = segment_state[s];
            vec3 last = st.last_offset.xyz;
            vec3 offset = last + alpha * (joint_offset[s].xyz - last);
            vec3 animated = offset - offset_base;
            vec3 t = base + (i == 0u ? animated : follow_parent(parent_animated, parent_simulated, animated));
            // Positions are kept relative to the pivot, which moved: a particle that stays
            // put in the world moves by -Δp; world influence w keeps the fraction w of that.
            vec3 x = st.position.xyz - influence * moved;
            vec3 v = st.velocity.xyz;
            integrate_particle(rig, t, chain.gravity.xyz, wind_at(pivot + x, elapsed), x, v);
            collide(chain.collider_mask, rig.particle_radius, collider_alpha, pivot, x, v);
            limit_distance(rig.max_distance, t, x, v);
            enforce_length(rig.rest_length, base, v_base, x, v);
            keep_outside(chain.collider_mask, rig.particle_radius, collider_alpha, pivot, base, rig.rest_length, x, v);
            segment_state[s].prev_position = st.position;  // relative to the previous substep's pivot
            segment_state[s].prev_velocity = st.velocity;
            segment_state[s].position = vec4(x, 0.0);
            segment_state[s].velocity = vec4(v, 0.0);
            parent_animated = animated;
            parent_simulated = x - base;
            offset_base = offset;
            base = x;
            v_base = v;
        }
    }
    if (sch.substep_count > 0u) {
        chain_state[c].last_pivot = vec4(pivot, 0.0);
        float alpha = alphas[first_alpha + sch.substep_count - 1u];
        for (uint i = 0u; i < chain.segment_count; ++i) {
            uint s = chain.first_segment + i;
            vec3 last = segment_state[s].last_offset.xyz;
            segment_state[s].last_offset = vec4(last + alpha * (joint_offset[s].xyz - last), 0.0);
        }
    }
    write_output(chain, c);
}

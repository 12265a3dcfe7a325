#version 430
// One frame of angle chains (SPEC sections 2, 3 and 5): one invocation per chain walks its
// segments root to tip, for every substep of the frame, inside this one dispatch.
// Stages, named as in gpu_jiggle/sim/backends/reference_angle.py: apply_teleport, interpolate_root,
// integrate_segment, limit_angle, write_output.
#define LOCAL_SIZE 64

layout(local_size_x = LOCAL_SIZE) in;

#include "common.glsl"
#include "dispatch.glsl"
#include "angle_common.glsl"

// The schedule of this invocation's chain (its level of detail), set first thing in main().
Schedule sch;

// SPEC section 5: snap to the current targets, or carry the shape across the jump; then
// reset P_prev, V_prev and the last targets to this frame's pose.
void apply_teleport(AngleChainRig chain, uint c, AngleChainTarget target, uint mode) {
    float turn = wrap_angle(target.root_angle - chain_state[c].last_root_angle);
    float phi_parent = target.root_angle;
    for (uint i = 0u; i < chain.segment_count; ++i) {
        uint s = chain.first_segment + i;
        AngleSegmentState st = segment_state[s];
        if (mode == TELEPORT_SNAP) {
            float phi = wrap_angle(phi_parent + local_angle[s]);
            st.angle = phi;
            st.angular_velocity = 0.0;
            st.prev_angle = phi;
            st.prev_angular_velocity = 0.0;
            phi_parent = phi;
        } else {
            st.angle = wrap_angle(st.angle + turn);
            st.prev_angle = wrap_angle(st.prev_angle + turn);
        }
        st.last_local_angle = local_angle[s];
        segment_state[s] = st;
    }
    chain_state[c].prev_root_position = target.root_position;
    chain_state[c].prev_root_velocity = vec2(0.0);
    chain_state[c].last_root_position = target.root_position;
    chain_state[c].last_root_angle = target.root_angle;
}

// SPEC section 3, step 1. Returns the root acceleration A; sets P (root_position) and Θ.
// V and A are measured per second of target path (inv_path_step), see sim/clock.py StepPlan.
vec2 interpolate_root(uint c, AngleChainTarget target, float alpha, out vec2 root_position, out float root_angle) {
    AngleChainState cs = chain_state[c];
    root_position = cs.last_root_position + alpha * (target.root_position - cs.last_root_position);
    root_angle = cs.last_root_angle + alpha * wrap_angle(target.root_angle - cs.last_root_angle);
    vec2 velocity = (root_position - cs.prev_root_position) * sch.inv_path_step;
    vec2 acceleration = (velocity - cs.prev_root_velocity) * sch.inv_path_step;
    chain_state[c].prev_root_position = root_position;
    chain_state[c].prev_root_velocity = velocity;
    return acceleration;
}

// SPEC section 3, step 2, the limit: keep the angle within β of its target.
void limit_angle(float target_angle, float limit, inout float phi, inout float omega) {
    float dd = wrap_angle(phi - target_angle);
    if (abs(dd) > limit) {
        phi = target_angle + sign(dd) * limit;
        if (omega * dd > 0.0) {
            omega = 0.0;
        }
    }
}

// SPEC section 3, step 2, one segment: semi-implicit Euler, velocity first. Returns φ.
float integrate_segment(uint s, float phi_parent, float alpha, vec2 root_acceleration, vec2 gravity) {
    AngleSegmentRig rig = segment_rig[s];
    AngleSegmentState st = segment_state[s];
    float lambda = st.last_local_angle + alpha * wrap_angle(local_angle[s] - st.last_local_angle);
    float target_angle = phi_parent + lambda;
    float phi = st.angle;
    float omega = st.angular_velocity;
    float d = wrap_angle(phi - target_angle);
    vec2 e = vec2(cos(phi), sin(phi));
    vec2 g_eff = gravity - rig.inertia * root_acceleration;
    float alpha_ext = (e.x * g_eff.y - e.y * g_eff.x) * rig.inv_length;
    float acc = -rig.stiffness * d - rig.damping * omega + alpha_ext;
    omega = omega + acc * sch.substep;
    float phi_new = phi + omega * sch.substep;
    limit_angle(target_angle, rig.angle_limit, phi_new, omega);
    segment_state[s].prev_angle = phi;
    segment_state[s].prev_angular_velocity = st.angular_velocity;
    phi_new = wrap_angle(phi_new);
    segment_state[s].angle = phi_new;
    segment_state[s].angular_velocity = omega;
    return phi_new;
}

// SPEC section 2, "Output at frame time": blend the last two substeps with σ, then forward
// kinematics from this frame's root position; the raw positions start at P_prev.
void write_output(AngleChainRig chain, uint c, AngleChainTarget target) {
    float sigma = sch.blend;
    vec2 base = target.root_position;
    vec2 raw_base = chain_state[c].prev_root_position;
    joint_output[chain.first_joint] = AngleJointOutput(base, raw_base);
    for (uint i = 0u; i < chain.segment_count; ++i) {
        uint s = chain.first_segment + i;
        AngleSegmentState st = segment_state[s];
        float seg_length = segment_rig[s].length;
        float angle = wrap_angle(st.prev_angle + sigma * wrap_angle(st.angle - st.prev_angle));
        float omega = st.prev_angular_velocity + sigma * (st.angular_velocity - st.prev_angular_velocity);
        base = base + seg_length * vec2(cos(angle), sin(angle));
        raw_base = raw_base + seg_length * vec2(cos(st.angle), sin(st.angle));
        joint_output[chain.first_joint + 1u + i] = AngleJointOutput(base, raw_base);
        segment_output[s] = AngleSegmentOutput(angle, omega);
    }
}

void main() {
    uint c = invocation_index();
    if (c >= params.chain_count) {
        return;
    }
    AngleChainRig chain = chain_rig[c];
    AngleChainTarget target = chain_target[c];
    sch = target.lod == LOD_HALF ? params.half_rate : params.full_rate;
    if (target.lod == LOD_FROZEN) {
        // Frozen: sits on its animated targets, as a snap teleport every frame.
        apply_teleport(chain, c, target, TELEPORT_SNAP);
        write_output(chain, c, target);
        return;
    }
    if (target.teleport != TELEPORT_NONE) {
        apply_teleport(chain, c, target, target.teleport);
    }
    uint first_alpha = target.lod * params.alpha_stride;
    vec2 root_position = chain_state[c].last_root_position;
    float root_angle = chain_state[c].last_root_angle;
    for (uint j = 0u; j < sch.substep_count; ++j) {
        float alpha = alphas[first_alpha + j];
        vec2 root_acceleration = interpolate_root(c, target, alpha, root_position, root_angle);
        float phi_parent = root_angle;
        for (uint i = 0u; i < chain.segment_count; ++i) {
            phi_parent = integrate_segment(chain.first_segment + i, phi_parent, alpha, root_acceleration,
                                           chain.gravity);
        }
    }
    if (sch.substep_count > 0u) {
        // The target applied at the last substep becomes the start of the next frame's path.
        chain_state[c].last_root_position = root_position;
        chain_state[c].last_root_angle = wrap_angle(root_angle);
        float alpha = alphas[first_alpha + sch.substep_count - 1u];
        for (uint i = 0u; i < chain.segment_count; ++i) {
            uint s = chain.first_segment + i;
            float last = segment_state[s].last_local_angle;
            segment_state[s].last_local_angle = wrap_angle(last + alpha * wrap_angle(local_angle[s] - last));
        }
    }
    write_output(chain, c, target);
}

// Buffers of the point-chain kernel (SPEC section 4). Every struct here has a numpy
// structured dtype of the same name in gpu_jiggle/sim/layouts.py, and every buffer its binding
// there (POINT_BINDINGS); tests/sim/test_layouts.py checks that the two agree.
//
// Positions reach the shader relative to the solver's floating origin (float64 on the host,
// SPEC 4.4), and the particles are kept relative to their chain's pivot.

// gravity: xyz g of this chain, length/s², world; w unused (0).
struct PointChainRig {
    uint first_segment;
    uint segment_count;
    uint first_joint;
    uint collider_mask;
    float world_influence;
    float pad0;
    float pad1;
    float pad2;
    vec4 gravity;
};

struct PointSegmentRig {
    float rest_length;
    float stiffness;
    float damping;
    float particle_radius;
    float max_distance;
    float pad0;
    float pad1;
    float pad2;
};

// xyz: tip position relative to the chain's pivot after the last substep, velocity (world),
// the same after the substep before, and the tip's target offset from the pivot applied at
// the last substep. w: unused (0).
struct PointSegmentState {
    vec4 position;
    vec4 velocity;
    vec4 prev_position;
    vec4 prev_velocity;
    vec4 last_offset;
};

// xyz: the pivot at the last substep (p_prev) and the pivot target applied then; w unused.
struct PointChainState {
    vec4 prev_pivot;
    vec4 last_pivot;
};

struct PointChainTarget {
    vec4 pivot;
    uint teleport;
    uint lod;
    uint pad0;
    uint pad1;
};

// Colliders at the last substep of the previous frame ("from") and in this frame ("to"),
// interpolated per substep like poses. Sphere: xyz centre, w radius. Capsule: a.xyz, b.xyz
// end points, a.w radius. Plane: xyz unit normal, w offset (particles keep n·x ≥ w + ρ).
struct SphereCollider {
    vec4 from_sphere;
    vec4 to_sphere;
    uint group;
    uint pad0;
    uint pad1;
    uint pad2;
};

struct CapsuleCollider {
    vec4 from_a;
    vec4 from_b;
    vec4 to_a;
    vec4 to_b;
    uint group;
    uint pad0;
    uint pad1;
    uint pad2;
};

struct PlaneCollider {
    vec4 from_plane;
    vec4 to_plane;
    uint group;
    uint pad0;
    uint pad1;
    uint pad2;
};

// wind: xyz uniform acceleration w0, w gust amplitude A; gust: xyz wave vector
// κ, w angular frequency 2π·f_w; gust_direction: xyz unit u. Each schedule holds its gust
// phase κ·origin - 2π·f_w·t at its first substep (host float64, reduced mod 2π). The
// alphas of level of detail l start at alphas[l * alpha_stride].
struct PointFrameParams {
    uint chain_count;
    uint alpha_stride;
    uint sphere_count;
    uint capsule_count;
    uint plane_count;
    uint pad0;
    uint pad1;
    uint pad2;
    Schedule full_rate;
    Schedule half_rate;
    vec4 wind;
    vec4 gust;
    vec4 gust_direction;
};

// Frame-time output, relative to this frame's pivot (xyz; w unused), and the raw position
// relative to p_prev.
struct PointJointOutput {
    vec4 position;
    vec4 raw_position;
};

// Frame-time velocity (xyz) and the rotation (x, y, z, w) taking the segment's animated
// direction onto its simulated one.
struct PointSegmentOutput {
    vec4 velocity;
    vec4 rotation;
};

#ifndef POINT_DRAW_ONLY
layout(std430, binding = 0) readonly buffer FrameBuffer { PointFrameParams params; float alphas[]; };
layout(std430, binding = 1) readonly buffer ChainRigBuffer { PointChainRig chain_rig[]; };
layout(std430, binding = 2) readonly buffer SegmentRigBuffer { PointSegmentRig segment_rig[]; };
layout(std430, binding = 3) buffer ChainStateBuffer { PointChainState chain_state[]; };
layout(std430, binding = 4) buffer SegmentStateBuffer { PointSegmentState segment_state[]; };
layout(std430, binding = 5) readonly buffer ChainTargetBuffer { PointChainTarget chain_target[]; };
layout(std430, binding = 6) readonly buffer JointOffsetBuffer { vec4 joint_offset[]; };
layout(std430, binding = 7) writeonly buffer JointOutputBuffer { PointJointOutput joint_output[]; };
layout(std430, binding = 8) writeonly buffer SegmentOutputBuffer { PointSegmentOutput segment_output[]; };
layout(std430, binding = 9) readonly buffer SphereBuffer { SphereCollider spheres[]; };
layout(std430, binding = 10) readonly buffer CapsuleBuffer { CapsuleCollider capsules[]; };
layout(std430, binding = 11) readonly buffer PlaneBuffer { PlaneCollider planes[]; };
#endif

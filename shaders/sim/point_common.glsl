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

// air_drag: c_air (1/s), damping of the particle's motion in the world (SPEC 4). The angle
// limit (docs/SPEC.md section 9, "Angle limits"): limit_kind (LIMIT_*), limit_axis (xyz, unit,
// in the base joint's frame: the hinge axis, the spherical limit's pitch axis), limit_bounds
// (cone: x = β; hinge: x, y = least and greatest angle; spherical: x, y = pitch and yaw; rad).
struct PointSegmentRig {
    float rest_length;
    float stiffness;
    float damping;
    float particle_radius;
    float max_distance;
    float air_drag;
    uint limit_kind;
    float pad1;
    vec4 limit_axis;
    vec4 limit_bounds;
};

#define LIMIT_NONE 0u
#define LIMIT_CONE 1u
#define LIMIT_HINGE 2u
#define LIMIT_SPHERICAL 3u

// xyz, relative to the chain's pivot: the tip after the last substep, its velocity (world),
// the same after the substep before; the tip's target offset path (SPEC 2): x0 and m0 (per
// second of target path); target: t_prev, the tip's target at the last substep (SPEC 4).
// last_rotation: the base joint's animated rotation (x, y, z, w) at the last
// substep, where its nlerp path starts. The w of the first six hold the unit axes carried
// over from the last evaluation of the segment's rotations built from two directions (SPEC 4,
// step 2, turn_axis), each as two floats (axis_code; SPEC 9 "Swings"): position.w and
// velocity.w its bend (animated direction onto simulated) at the last substep; at the last
// frame's output last_offset.w and offset_rate.w its swing (animated direction onto the
// output's), prev_position.w and prev_velocity.w its world rotation's turn (target direction
// onto the output's). target.w: unused (0). Every write of these vec4s keeps their w.
struct PointSegmentState {
    vec4 position;
    vec4 velocity;
    vec4 prev_position;
    vec4 prev_velocity;
    vec4 last_offset;
    vec4 offset_rate;
    vec4 target;
    vec4 last_rotation;
};

// xyz relative to the chain's anchor (its pivot in this frame's pose, float64 on the host,
// SPEC 4.4): the pivot at the last substep (p_prev), and its path: x0 and m0. flags: CHAIN_*.
// prev_pivot_rate: the pivot's path velocity at the substep before the last (frame-time output).
// path_lag: seconds from the chain's last substep (where its paths start) to the last frame's time.
// contact_near: 1 where the far pass found a collider near the chain (SPEC 9, "Near and far
// chains"), for near_chains.comp; 0 between frames.
struct PointChainState {
    vec4 prev_pivot;
    vec4 last_pivot;
    vec4 pivot_rate;
    vec4 prev_pivot_rate;
    uint flags;
    float path_lag;
    uint contact_near;
    uint pad2;
};

// Uploaded every frame, 40 bytes. anchor: the chain's pivot in this frame's pose, world, double
// (the colliders, in double world coordinates, are taken relative to it: SPEC 4.4).
// anchor_shift: old anchor - new, the move the state follows. gust_phase: the wind's κ·anchor
// (mod 2π). Arrays, not dvec3 and vec3, so that nothing pads the struct.
struct PointChainTarget {
    double anchor[3];
    float anchor_shift[3];
    float gust_phase;
};

// Uploaded only when it changed: teleport flags (TELEPORT_*) and level of detail (LOD_*).
struct PointChainControl {
    uint teleport;
    uint lod;
};

// Written on a frame's first dispatch, for drawing (point_draw.glsl): this frame's pivot
// relative to the solver's drawing origin (params.origin), and the chain's level of detail.
struct PointChainOutput {
    vec3 pivot;
    uint lod;
};

// Colliders on their target path (SPEC 2 and 4.2): where they were at the last substep
// (start, double world coordinates), their move this frame (delta, float) and their path
// velocity times the span (start_rate, float). Sphere: xyz centre, w radius. Capsule: a and
// b ends, a.w radius. Plane: xyz unit normal, w offset (particles keep n·x ≥ w + ρ); normals,
// radii and offsets move linearly, centres and ends on the path. Where each can be over the
// frame, for the far pass (point_far.glsl; the host's, gpu_jiggle/sim/collider_bounds.py):
// frame_bound, a ball (double world centre, radius); frame_a, frame_b, a capsule (its radius
// in frame_a.w); frame_offset, a plane's largest offset; frame_move, the longest move over one
// substep; frame_radius, the smallest radius.
struct SphereCollider {
    dvec4 start;
    vec4 delta;
    vec4 start_rate;
    dvec4 frame_bound;
    uint group;
    uint inside;
    float frame_move;
    float frame_radius;
    uint pad0;
    uint pad1;
    uint pad2;
    uint pad3;
};

struct CapsuleCollider {
    dvec4 start_a;
    dvec4 start_b;
    vec4 delta_a;
    vec4 delta_b;
    vec4 rate_a;
    vec4 rate_b;
    dvec4 frame_a;
    dvec4 frame_b;
    uint group;
    uint inside;
    float frame_move;
    float frame_radius;
    uint pad0;
    uint pad1;
    uint pad2;
    uint pad3;
};

struct PlaneCollider {
    dvec4 start;
    vec4 delta;
    double frame_offset;
    uint group;
    uint pad0;
};

// wind: xyz uniform acceleration w0, w gust amplitude A; gust: xyz wave vector κ, w angular
// frequency 2π·f_w; gust_direction: xyz unit u. Each schedule holds its gust phase -2π·f_w·t
// at its first substep (host float64, reduced mod 2π), each chain its κ·anchor. The alphas of
// level of detail l start at alphas[l * alpha_stride]. options: OPTION_* bits.
// contact_substep_cap: the most contact sub-steps one substep of a chain may take in this
// dispatch (SPEC 9). origin (xyz; w 0): the solver's drawing origin, world, double. Laid out
// alike in a storage and a uniform block (std430, std140).
struct PointFrameParams {
    uint chain_count;
    uint alpha_stride;
    uint sphere_count;
    uint capsule_count;
    uint plane_count;
    uint options;
    uint substep_begin;
    uint substep_end;
    Schedule full_rate;
    Schedule half_rate;
    vec4 wind;
    vec4 gust;
    vec4 gust_direction;
    uint contact_substep_cap;
    uint pad1;
    uint pad2;
    uint pad3;
    dvec4 origin;
};

// Frame-time output, relative to this frame's pivot (xyz; w unused), and the raw position
// relative to p_prev.
struct PointJointOutput {
    vec4 position;
    vec4 raw_position;
};

// Frame-time velocity (xyz), the rotation (x, y, z, w) taking the segment's animated
// direction onto its simulated one, and the simulated segment's world rotation (its target
// frame turned onto its direction).
struct PointSegmentOutput {
    vec4 velocity;
    vec4 rotation;
    vec4 world_rotation;
};

#ifndef POINT_DRAW_ONLY
// The frame buffer: its header (PointFrameParams, 14 uvec4s) is read through the uniform block
// `params` below; the alphas from here.
layout(std430, binding = 0) readonly buffer FrameBuffer { uvec4 params_words[14]; float alphas[]; };
layout(std430, binding = 1) readonly buffer ChainRigBuffer { PointChainRig chain_rig[]; };
layout(std430, binding = 2) readonly buffer SegmentRigBuffer { PointSegmentRig segment_rig[]; };
// The chain state, declared as uvec4s (five a record) and read and written whole by
// load_chain_state and store_chain_state: Mesa's llvmpipe moves a vector per invocation at
// once but each field of a struct apart (docs/PERFORMANCE.md); uints, so that no flag passes
// through a float.
layout(std430, binding = 3) coherent buffer ChainStateBuffer { uvec4 chain_state_words[]; };
// The buffers a frame reads or writes per segment, as 64-bit words (words64.glsl; include it
// first), through the load_/store_ functions below: the segment state (a record four
// word64x4s), the outputs, the exact steps and the joint rotations. The layout is the structs'
// own.
layout(std430, binding = 4) coherent buffer SegmentStateBuffer { word64x4 segment_state_words[]; };
layout(std430, binding = 5) readonly buffer ChainTargetBuffer { PointChainTarget chain_target[]; };
layout(std430, binding = 6) readonly buffer JointOffsetBuffer { float joint_offset[]; };  // xyz per segment
layout(std430, binding = 7) writeonly buffer JointOutputBuffer { word64x4 joint_output_words[]; };
layout(std430, binding = 8) writeonly buffer SegmentOutputBuffer { word64x2 segment_output_words[]; };
// The colliders: a shape whose slots are compiled in (SPHERE_SLOTS and the others > 0,
// point_colliders.glsl) is read through its uniform block below (its name then stands for
// the block's), the others from here.
layout(std430, binding = 9) readonly buffer SphereBuffer { SphereCollider spheres[]; };
layout(std430, binding = 10) readonly buffer CapsuleBuffer { CapsuleCollider capsules[]; };
layout(std430, binding = 11) readonly buffer PlaneBuffer { PlaneCollider planes[]; };
layout(std430, binding = 12) readonly buffer ExactStepBuffer { word64x4 exact_step_words[]; };
layout(std430, binding = 13) readonly buffer JointRotationBuffer { word64x2 joint_rotation_words[]; };
#if !defined(NEAR_FAR) || NEAR_FAR != 2  // the near pass has the near chains' list there (near_chains.glsl)
layout(std430, binding = 14) writeonly buffer ChainOutputBuffer { PointChainOutput chain_output[]; };
#endif
layout(std430, binding = 15) readonly buffer ChainControlBuffer { PointChainControl chain_control[]; };

// Read through uniform blocks (POINT_UNIFORM_BLOCKS in gpu_jiggle/sim/layouts.py): Mesa's
// llvmpipe loads a uniform block's value once for the 8 invocations of a vector where a
// storage buffer's is loaded once per invocation, and every invocation reads the same frame
// header and colliders. The blocks are views of the buffers above, laid out alike.
layout(std140, binding = 0) uniform FrameBlock { PointFrameParams params; };
#if SPHERE_SLOTS > 0
layout(std140, binding = 1) uniform SphereBlock { SphereCollider sphere_block[SPHERE_SLOTS]; };
#define spheres sphere_block  // the storage buffer's name, read here
#endif
#if CAPSULE_SLOTS > 0
layout(std140, binding = 2) uniform CapsuleBlock { CapsuleCollider capsule_block[CAPSULE_SLOTS]; };
#define capsules capsule_block  // the storage buffer's name, read here
#endif
#if PLANE_SLOTS > 0
layout(std140, binding = 3) uniform PlaneBlock { PlaneCollider plane_block[PLANE_SLOTS]; };
#define planes plane_block  // the storage buffer's name, read here
#endif

#if BUFFER_IMAGES
// The same buffers' read-only image views (buffer_views.glsl; units POINT_VIEWS in
// gpu_jiggle/sim/layouts.py): the segment state (8 texels a segment), its rig (4), the joint
// rotations (1) and the target offsets (r32ui, 3 a segment); the chain rig (3 texels a
// chain), the chain targets (rg32ui, 5), the chain controls (rg32ui, 1) and the chain state (5).
layout(rgba32ui, binding = 0) coherent readonly uniform uimageBuffer segment_state_view;
layout(rgba32ui, binding = 1) readonly uniform uimageBuffer segment_rig_view;
layout(rgba32ui, binding = 2) readonly uniform uimageBuffer joint_rotation_view;
layout(r32ui, binding = 3) readonly uniform uimageBuffer joint_offset_view;
layout(rgba32ui, binding = 4) readonly uniform uimageBuffer chain_rig_view;
layout(rg32ui, binding = 5) readonly uniform uimageBuffer chain_target_view;
layout(rg32ui, binding = 6) readonly uniform uimageBuffer chain_control_view;
layout(rgba32ui, binding = 7) coherent readonly uniform uimageBuffer chain_state_view;
#define CHAIN_STATE_WORDS(t) VIEW_UVEC4(chain_state_view, t)
#else
#define CHAIN_STATE_WORDS(t) chain_state_words[t]
#endif

// Chain c's rig, its targets this frame and its control record.
PointChainRig load_chain_rig(uint c) {
#if BUFFER_IMAGES
    uvec4 a = VIEW_UVEC4(chain_rig_view, 3u * c);
    vec4 b = VIEW_VEC4(chain_rig_view, 3u * c + 1u);
    return PointChainRig(a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, VIEW_VEC4(chain_rig_view, 3u * c + 2u));
#else
    return chain_rig[c];
#endif
}

PointChainTarget load_chain_target(uint c) {
#if BUFFER_IMAGES
    uvec2 x = VIEW_UVEC4(chain_target_view, 5u * c).xy;
    uvec2 y = VIEW_UVEC4(chain_target_view, 5u * c + 1u).xy;
    uvec2 z = VIEW_UVEC4(chain_target_view, 5u * c + 2u).xy;
    vec2 shift_xy = uintBitsToFloat(VIEW_UVEC4(chain_target_view, 5u * c + 3u).xy);
    vec2 shift_z_phase = uintBitsToFloat(VIEW_UVEC4(chain_target_view, 5u * c + 4u).xy);
    return PointChainTarget(double[3](packDouble2x32(x), packDouble2x32(y), packDouble2x32(z)),
                            float[3](shift_xy.x, shift_xy.y, shift_z_phase.x), shift_z_phase.y);
#else
    return chain_target[c];
#endif
}

PointChainControl load_chain_control(uint c) {
#if BUFFER_IMAGES
    uvec2 w = VIEW_UVEC4(chain_control_view, c).xy;
    return PointChainControl(w.x, w.y);
#else
    return chain_control[c];
#endif
}

// Segment s's rig.
PointSegmentRig load_segment_rig(uint s) {
#if BUFFER_IMAGES
    vec4 a = VIEW_VEC4(segment_rig_view, 4u * s);
    vec4 b = VIEW_VEC4(segment_rig_view, 4u * s + 1u);
    return PointSegmentRig(a.x, a.y, a.z, a.w, b.x, b.y, floatBitsToUint(b.z), b.w, VIEW_VEC4(segment_rig_view, 4u * s + 2u),
                           VIEW_VEC4(segment_rig_view, 4u * s + 3u));
#else
    return segment_rig[s];
#endif
}

PointChainState load_chain_state(uint c) {
    uvec4 flags = CHAIN_STATE_WORDS(5u * c + 4u);
    return PointChainState(uintBitsToFloat(CHAIN_STATE_WORDS(5u * c)), uintBitsToFloat(CHAIN_STATE_WORDS(5u * c + 1u)),
                           uintBitsToFloat(CHAIN_STATE_WORDS(5u * c + 2u)),
                           uintBitsToFloat(CHAIN_STATE_WORDS(5u * c + 3u)), flags.x, uintBitsToFloat(flags.y), flags.z,
                           flags.w);
}

void store_chain_state(uint c, PointChainState cs) {
    chain_state_words[5u * c] = floatBitsToUint(cs.prev_pivot);
    chain_state_words[5u * c + 1u] = floatBitsToUint(cs.last_pivot);
    chain_state_words[5u * c + 2u] = floatBitsToUint(cs.pivot_rate);
    chain_state_words[5u * c + 3u] = floatBitsToUint(cs.prev_pivot_rate);
    chain_state_words[5u * c + 4u] = uvec4(cs.flags, floatBitsToUint(cs.path_lag), cs.contact_near, cs.pad2);
}

// Through the view where the kernel says so (SEGMENT_STATE_VIEW, point_chains.comp).
PointSegmentState load_segment_state(uint s) {
#if SEGMENT_STATE_VIEW
    uint t = 8u * s;
    return PointSegmentState(VIEW_VEC4(segment_state_view, t), VIEW_VEC4(segment_state_view, t + 1u),
                             VIEW_VEC4(segment_state_view, t + 2u), VIEW_VEC4(segment_state_view, t + 3u),
                             VIEW_VEC4(segment_state_view, t + 4u), VIEW_VEC4(segment_state_view, t + 5u),
                             VIEW_VEC4(segment_state_view, t + 6u), VIEW_VEC4(segment_state_view, t + 7u));
#else
    word64x4 a = segment_state_words[4u * s];
    word64x4 b = segment_state_words[4u * s + 1u];
    word64x4 c = segment_state_words[4u * s + 2u];
    word64x4 d = segment_state_words[4u * s + 3u];
    return PointSegmentState(words_vec4(a.x, a.y), words_vec4(a.z, a.w), words_vec4(b.x, b.y), words_vec4(b.z, b.w),
                             words_vec4(c.x, c.y), words_vec4(c.z, c.w), words_vec4(d.x, d.y), words_vec4(d.z, d.w));
#endif
}

void store_segment_state(uint s, PointSegmentState st) {
    segment_state_words[4u * s] = word64x4(vec4_words(st.position), vec4_words(st.velocity));
    segment_state_words[4u * s + 1u] = word64x4(vec4_words(st.prev_position), vec4_words(st.prev_velocity));
    segment_state_words[4u * s + 2u] = word64x4(vec4_words(st.last_offset), vec4_words(st.offset_rate));
    segment_state_words[4u * s + 3u] = word64x4(vec4_words(st.target), vec4_words(st.last_rotation));
}

void store_joint_output(uint j, PointJointOutput out_joint) {
    joint_output_words[j] = word64x4(vec4_words(out_joint.position), vec4_words(out_joint.raw_position));
}

void store_segment_output(uint s, PointSegmentOutput out_segment) {
    segment_output_words[3u * s] = vec4_words(out_segment.velocity);
    segment_output_words[3u * s + 1u] = vec4_words(out_segment.rotation);
    segment_output_words[3u * s + 2u] = vec4_words(out_segment.world_rotation);
}

// Its velocity alone (a solver without rotation outputs).
void store_segment_velocity(uint s, vec3 velocity) {
    segment_output_words[3u * s] = vec4_words(vec4(velocity, 0.0));
}

// Exact step i (2·segment + schedule index: SPEC 1).
ExactStep load_exact_step(uint i) {
    word64x4 w = exact_step_words[i];
    return exact_step_of(words_vec4(w.x, w.y), words_vec4(w.z, w.w));
}

// Segment s's base joint rotation (x, y, z, w, world) in this frame's pose.
vec4 joint_rotation(uint s) {
#if BUFFER_IMAGES
    return VIEW_VEC4(joint_rotation_view, s);
#else
    word64x2 w = joint_rotation_words[s];
    return words_vec4(w.x, w.y);
#endif
}

// Segment s's tip target offset from its chain's pivot in this frame's pose.
vec3 target_offset(uint s) {
#if BUFFER_IMAGES
    return vec3(VIEW_FLOAT(joint_offset_view, 3u * s), VIEW_FLOAT(joint_offset_view, 3u * s + 1u),
                VIEW_FLOAT(joint_offset_view, 3u * s + 2u));
#else
    return vec3(joint_offset[3u * s], joint_offset[3u * s + 1u], joint_offset[3u * s + 2u]);
#endif
}
#endif

// Buffers of the angle-chain kernel (SPEC section 3). Every struct here has a numpy
// structured dtype of the same name in gpu_jiggle/sim/layouts.py, and every buffer its binding
// there (ANGLE_BINDINGS); tests/sim/test_layouts.py checks that the two agree.

// gravity: g of this chain, length/s², world.
struct AngleChainRig {
    uint first_segment;
    uint segment_count;
    uint first_joint;
    uint pad0;
    vec2 gravity;
    float pad1;
    float pad2;
};

// air_drag: c_air (1/s), damping of the segment's motion in the world (SPEC 3).
struct AngleSegmentRig {
    float length;
    float inv_length;
    float stiffness;
    float damping;
    float inertia;
    float angle_limit;
    float air_drag;
    float pad0;
};

// After the last substep and the one before it: world angle φ and angular velocity ω; the
// local target angle's path (SPEC 2): its value x0 at the last substep and its velocity m0
// (rad per second of target path); target_angle: τ_prev, the world target angle at the last
// substep (SPEC 3).
struct AngleSegmentState {
    float angle;
    float angular_velocity;
    float prev_angle;
    float prev_angular_velocity;
    float last_local_angle;
    float local_angle_rate;
    float target_angle;
    float pad0;
};

// Positions relative to the chain's anchor (its root in this frame's pose, float64 on the
// host, SPEC 3.4): P_prev, V_prev, and the root's path: x0 and m0 of its position and heading.
// flags: CHAIN_START_MOVING. path_lag: seconds from the chain's last substep (where its paths
// start) to the last frame's time.
struct AngleChainState {
    vec2 prev_root_position;
    vec2 prev_root_velocity;
    vec2 last_root_position;
    vec2 root_position_rate;
    float last_root_angle;
    float root_angle_rate;
    uint flags;
    float path_lag;
};

// This frame's root (relative to the chain's anchor) and heading, teleport flags, level of
// detail, the wind's phase κ·anchor (mod 2π) and the anchor's move since the last frame (old
// anchor - new, added to the positions kept relative to it).
struct AngleChainTarget {
    vec2 root_position;
    float root_angle;
    uint teleport;
    uint lod;
    float gust_phase;
    vec2 anchor_shift;
};

// The alphas of level of detail l start at alphas[l * alpha_stride]. options: OPTION_* bits.
// 2D wind (SPEC 3): wind.xy w0, wind.z the gust amplitude A; gust.xy κ, gust.z 2π·f_w;
// gust_direction.xy u.
struct AngleFrameParams {
    uint chain_count;
    uint alpha_stride;
    uint options;
    uint pad0;
    uint substep_begin;
    uint substep_end;
    uint pad1;
    uint pad2;
    Schedule full_rate;
    Schedule half_rate;
    vec4 wind;
    vec4 gust;
    vec4 gust_direction;
};

struct AngleJointOutput {
    vec2 position;
    vec2 raw_position;
};

struct AngleSegmentOutput {
    float angle;
    float angular_velocity;
};

struct AngleChainOutput {
    float root_acceleration;
};
// AngleChainOutput.root_acceleration of a frame not judged (layouts.ROOT_NOT_JUDGED)
#define ROOT_NOT_JUDGED -1.0

// The buffers hold the structs above, but are declared as arrays of vectors and read and
// written through the load_/store_ functions below: Mesa's llvmpipe moves a storage buffer one
// invocation and one component at a time (per component, a loop over the lanes), so the same
// bytes take fewer instructions as fewer, wider components (docs/PERFORMANCE.md). The buffers
// read or written per segment are 64-bit words (words64.glsl: a segment's state is one
// word64x4, its joint output a word64x2, its output a word64); the per-chain records uvec4s
// (uints, so that no flag passes through a float, where a small one would be a denormal GLSL
// lets a GPU flush). The layout is the structs' own.
// The frame buffer: its header (AngleFrameParams, 11 uvec4s) is read through the uniform block
// `params` (ANGLE_UNIFORM_BLOCKS in gpu_jiggle/sim/layouts.py: llvmpipe loads a uniform
// block's value once for the 8 invocations of a vector, a storage buffer's once per
// invocation; the same bytes, laid out alike), the alphas from here.
layout(std430, binding = 0) readonly buffer FrameBuffer { uvec4 params_words[11]; float alphas[]; };
layout(std140, binding = 0) uniform FrameBlock { AngleFrameParams params; };
layout(std430, binding = 1) readonly buffer ChainRigBuffer { uvec4 chain_rig_words[]; };
layout(std430, binding = 3) coherent buffer ChainStateBuffer { uvec4 chain_state_words[]; };
layout(std430, binding = 4) coherent buffer SegmentStateBuffer { word64x4 segment_state_words[]; };
layout(std430, binding = 5) readonly buffer ChainTargetBuffer { uvec4 chain_target_words[]; };
layout(std430, binding = 6) readonly buffer LocalAngleBuffer { float local_angle[]; };
layout(std430, binding = 7) writeonly buffer JointOutputBuffer { word64x2 joint_output_words[]; };
layout(std430, binding = 8) writeonly buffer SegmentOutputBuffer { word64 segment_output_words[]; };
layout(std430, binding = 9) readonly buffer ExactStepBuffer { word64x4 exact_step_words[]; };
// (read back in a frame's later dispatches, SPEC 1's watch of the root: one float a chain)
layout(std430, binding = 10) buffer ChainOutputBuffer { AngleChainOutput chain_output[]; };
// The segments' rig, read in every substep and written by no dispatch, is held in a texture
// (record_texture.glsl; texture unit ANGLE_TEXTURES in gpu_jiggle/sim/layouts.py): two texels
// a record, one gather each on llvmpipe (0.9× the dispatch of a storage buffer at 1M segments).
uniform usampler2D segment_rig_texels;
uniform uint segment_rig_row_shift;

AngleSegmentRig load_segment_rig(uint s) {
    vec4 a = uintBitsToFloat(record_texel(segment_rig_texels, segment_rig_row_shift, 2u * s));
    vec4 b = uintBitsToFloat(record_texel(segment_rig_texels, segment_rig_row_shift, 2u * s + 1u));
    return AngleSegmentRig(a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w);
}

#if BUFFER_IMAGES
// The same buffers' read-only image views (buffer_views.glsl; units ANGLE_VIEWS in
// gpu_jiggle/sim/layouts.py): the segment state (2 texels a segment), the local angles
// (r32ui), the chain rig (2 texels a chain), the chain state (3) and the chain targets (2).
layout(rgba32ui, binding = 0) coherent readonly uniform uimageBuffer segment_state_view;
layout(r32ui, binding = 1) readonly uniform uimageBuffer local_angle_view;
layout(rgba32ui, binding = 2) readonly uniform uimageBuffer chain_rig_view;
layout(rgba32ui, binding = 3) coherent readonly uniform uimageBuffer chain_state_view;
layout(rgba32ui, binding = 4) readonly uniform uimageBuffer chain_target_view;
#define CHAIN_RIG_WORDS(t) VIEW_UVEC4(chain_rig_view, t)
#define CHAIN_STATE_WORDS(t) VIEW_UVEC4(chain_state_view, t)
#define CHAIN_TARGET_WORDS(t) VIEW_UVEC4(chain_target_view, t)
#else
#define CHAIN_RIG_WORDS(t) chain_rig_words[t]
#define CHAIN_STATE_WORDS(t) chain_state_words[t]
#define CHAIN_TARGET_WORDS(t) chain_target_words[t]
#endif

AngleSegmentState load_segment_state(uint s) {
#if BUFFER_IMAGES
    vec4 a = VIEW_VEC4(segment_state_view, 2u * s);
    vec4 b = VIEW_VEC4(segment_state_view, 2u * s + 1u);
#else
    word64x4 w = segment_state_words[s];
    vec4 a = words_vec4(w.x, w.y);
    vec4 b = words_vec4(w.z, w.w);
#endif
    return AngleSegmentState(a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w);
}

// Segment s's local angle target in this frame's pose.
float local_target_angle(uint s) {
#if BUFFER_IMAGES
    return VIEW_FLOAT(local_angle_view, s);
#else
    return local_angle[s];
#endif
}

void store_segment_state(uint s, AngleSegmentState st) {
    segment_state_words[s] = word64x4(vec4_words(vec4(st.angle, st.angular_velocity, st.prev_angle, st.prev_angular_velocity)),
                                      vec4_words(vec4(st.last_local_angle, st.local_angle_rate, st.target_angle, st.pad0)));
}

AngleChainState load_chain_state(uint c) {
    vec4 a = uintBitsToFloat(CHAIN_STATE_WORDS(3u * c));
    vec4 b = uintBitsToFloat(CHAIN_STATE_WORDS(3u * c + 1u));
    uvec4 d = CHAIN_STATE_WORDS(3u * c + 2u);
    return AngleChainState(a.xy, a.zw, b.xy, b.zw, uintBitsToFloat(d.x), uintBitsToFloat(d.y), d.z, uintBitsToFloat(d.w));
}

void store_chain_state(uint c, AngleChainState cs) {
    chain_state_words[3u * c] = floatBitsToUint(vec4(cs.prev_root_position, cs.prev_root_velocity));
    chain_state_words[3u * c + 1u] = floatBitsToUint(vec4(cs.last_root_position, cs.root_position_rate));
    chain_state_words[3u * c + 2u] = uvec4(floatBitsToUint(cs.last_root_angle), floatBitsToUint(cs.root_angle_rate), cs.flags,
                                           floatBitsToUint(cs.path_lag));
}

AngleChainRig load_chain_rig(uint c) {
    uvec4 a = CHAIN_RIG_WORDS(2u * c);
    vec4 b = uintBitsToFloat(CHAIN_RIG_WORDS(2u * c + 1u));
    return AngleChainRig(a.x, a.y, a.z, a.w, b.xy, b.z, b.w);
}

AngleChainTarget load_chain_target(uint c) {
    uvec4 a = CHAIN_TARGET_WORDS(2u * c);
    uvec4 b = CHAIN_TARGET_WORDS(2u * c + 1u);
    return AngleChainTarget(uintBitsToFloat(a.xy), uintBitsToFloat(a.z), a.w, b.x, uintBitsToFloat(b.y), uintBitsToFloat(b.zw));
}

// Exact step i (2·segment + schedule index: SPEC 1).
ExactStep load_exact_step(uint i) {
    word64x4 w = exact_step_words[i];
    return exact_step_of(words_vec4(w.x, w.y), words_vec4(w.z, w.w));
}

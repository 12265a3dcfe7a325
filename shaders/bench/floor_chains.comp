#version 430
#extension GL_ARB_gpu_shader_int64 : enable
// The floor of benchmarks/bench_floor.py: the least work a damped-spring chain kernel does on
// this context, to hold the point kernel (shaders/sim/point_chains.comp) against. One
// invocation per chain walks its segments root to tip for each of the frame's substeps, the
// chain's state in registers over the frame (read once, written once), as the point kernel's
// frames without colliders do (FUSED_SUBSTEPS). Per segment and substep: the spring towards
// its target, damping, gravity and a gusting wind (one sine), a symplectic Euler step, the
// length step (SPEC 2's stages, without the v2 carriage, the target path, limits or contact).
// Out: each tip's position and the rotation from its rest direction to its simulated one.
// Every storage buffer moves as 64-bit words (sim/words64.glsl), the cheapest way there is on
// llvmpipe, as the point kernel's do.
// The pivots do not move (grass), so there is no pivot path either.
//
// MODEL_BYTES 0 moves the least a solver must: per segment its position and velocity read
// and written (2 vec4s), its rest length and spring (1 vec4), its target (1 vec4) and its
// output (2 vec4s). Its bit 1 reads the point kernel's bytes per segment too, the way it
// does (layouts.py): the whole segment state (STATE_VEC4S) through an image view, the rig
// (RIG_VEC4S) and the joint rotation through views, and per chain its state (CHAIN_VEC4S);
// its bit 2 writes them: the whole segment state, the whole output (OUTPUT_VEC4S) and the
// chain's state. The extra
// bytes feed the arithmetic 1e-30-weighted, so the compiler keeps every load, and are
// written back bounded (a position and a count), so that frames on frames stay finite.
#define LOCAL_SIZE 64
#define SEGMENTS 5
#define SUBSTEPS 2
#define MODEL_BYTES 0
#define STATE_VEC4S 8
#define RIG_VEC4S 4
#define OUTPUT_VEC4S 5
#define CHAIN_VEC4S 5

layout(local_size_x = LOCAL_SIZE) in;

#include "sim/dispatch.glsl"
#include "sim/words64.glsl"

#define LOAD(w) words_vec4((w).x, (w).y)
#define MODEL_READS ((MODEL_BYTES & 1) != 0)
#define MODEL_WRITES ((MODEL_BYTES & 2) != 0)

// per segment: position (xyz), velocity (xyz), then the model's other fields
layout(std430, binding = 0) buffer SegmentState { word64x2 segment_state[]; };
// per segment: rest length (m), stiffness ω² (1/s²), damping 2ζω (1/s), then the model's
layout(std430, binding = 1) readonly buffer SegmentRig { word64x2 segment_rig[]; };
// per chain, SEGMENTS + 1 joints: the pivot, then each tip's target, world space (m)
layout(std430, binding = 2) readonly buffer JointTarget { word64x2 joint_target[]; };
// per segment: its tip's position, its rotation (x, y, z, w), then the model's
layout(std430, binding = 3) writeonly buffer SegmentOutput { word64x2 segment_output[]; };
#if MODEL_BYTES
layout(std430, binding = 4) buffer ChainState { word64x2 chain_state[]; };
#endif
#if MODEL_READS
layout(rgba32ui, binding = 0) uniform readonly uimageBuffer segment_state_view;
layout(rgba32ui, binding = 1) uniform readonly uimageBuffer segment_rig_view;
layout(rgba32ui, binding = 2) uniform readonly uimageBuffer joint_rotation_view;
#define STATE_AT(t) uintBitsToFloat(imageLoad(segment_state_view, int(t)))
#define RIG_AT(t) uintBitsToFloat(imageLoad(segment_rig_view, int(t)))
#else
#define STATE_AT(t) LOAD(segment_state[t])
#define RIG_AT(t) LOAD(segment_rig[t])
#endif

uniform uint chain_count;
uniform float substep_seconds;
uniform float frame_time_seconds;  // the frame's start, for the gusts
uniform vec3 gravity;              // m/s²
uniform vec4 wind;                 // xyz: acceleration (m/s²); w: gust frequency (Hz)

void main() {
    uint c = invocation_index();
    if (c >= chain_count) {
        return;
    }
    uint first = c * uint(SEGMENTS);
    uint first_joint = c * uint(SEGMENTS + 1);
    vec3 pivot = LOAD(joint_target[first_joint]).xyz;
    float gust_phase = dot(pivot, vec3(0.9, 0.0, 0.7));
    vec3 position[SEGMENTS];
    vec3 velocity[SEGMENTS];
    vec3 target[SEGMENTS];
    vec4 spring[SEGMENTS];
    vec4 extra[SEGMENTS];
    vec4 chain_extra = vec4(0.0);
#if MODEL_READS
    for (uint k = 0u; k < uint(CHAIN_VEC4S); ++k) {
        chain_extra += LOAD(chain_state[c * uint(CHAIN_VEC4S) + k]);
    }
#endif
    for (uint i = 0u; i < uint(SEGMENTS); ++i) {
        uint s = first + i;
        position[i] = STATE_AT(s * uint(STATE_VEC4S)).xyz;
        velocity[i] = STATE_AT(s * uint(STATE_VEC4S) + 1u).xyz;
        target[i] = LOAD(joint_target[first_joint + 1u + i]).xyz;
        spring[i] = RIG_AT(s * uint(RIG_VEC4S));
        extra[i] = chain_extra;
#if MODEL_READS
        for (uint k = 2u; k < uint(STATE_VEC4S); ++k) {
            extra[i] += STATE_AT(s * uint(STATE_VEC4S) + k);
        }
        for (uint k = 1u; k < uint(RIG_VEC4S); ++k) {
            extra[i] += RIG_AT(s * uint(RIG_VEC4S) + k);
        }
        extra[i] += uintBitsToFloat(imageLoad(joint_rotation_view, int(s)));
#endif
    }
    float h = substep_seconds;
    for (uint k = 0u; k < uint(SUBSTEPS); ++k) {
        float gust = 1.0 + 0.5 * sin(6.2831853 * wind.w * (frame_time_seconds + float(k) * h) + gust_phase);
        vec3 parent = pivot;
        for (uint i = 0u; i < uint(SEGMENTS); ++i) {
            vec3 acceleration = spring[i].y * (target[i] - position[i]) - spring[i].z * velocity[i]
                                + gravity + gust * wind.xyz + 1e-30 * extra[i].xyz;
            velocity[i] += h * acceleration;
            vec3 moved = position[i] + h * velocity[i];
            vec3 along = moved - parent;
            moved = parent + along * (spring[i].x / max(length(along), 1e-9));  // the length step
            velocity[i] = (moved - position[i]) / h;
            position[i] = moved;
            parent = moved;
        }
    }
    vec3 parent = pivot;
    vec3 parent_target = pivot;
    for (uint i = 0u; i < uint(SEGMENTS); ++i) {
        uint s = first + i;
        segment_state[s * uint(STATE_VEC4S)] = vec4_words(vec4(position[i], 0.0));
        segment_state[s * uint(STATE_VEC4S) + 1u] = vec4_words(vec4(velocity[i], 0.0));
        vec3 rest = normalize(target[i] - parent_target);
        vec3 now = normalize(position[i] - parent);
        vec4 rotation = normalize(vec4(cross(rest, now), 1.0 + dot(rest, now)));  // the shorter arc
        segment_output[s * uint(OUTPUT_VEC4S)] = vec4_words(vec4(position[i], 1.0));
        segment_output[s * uint(OUTPUT_VEC4S) + 1u] = vec4_words(rotation);
#if MODEL_WRITES
        for (uint k = 2u; k < uint(STATE_VEC4S); ++k) {
            segment_state[s * uint(STATE_VEC4S) + k] = vec4_words(vec4(position[i], float(k)));
        }
        for (uint k = 2u; k < uint(OUTPUT_VEC4S); ++k) {
            segment_output[s * uint(OUTPUT_VEC4S) + k] = vec4_words(vec4(velocity[i], float(k)) * rotation.w);
        }
#endif
        parent = position[i];
        parent_target = target[i];
    }
#if MODEL_WRITES
    for (uint k = 0u; k < uint(CHAIN_VEC4S); ++k) {
        chain_state[c * uint(CHAIN_VEC4S) + k] = vec4_words(chain_extra + vec4(position[SEGMENTS - 1], float(k)));
    }
#endif
}

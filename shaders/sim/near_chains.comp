#version 430
#extension GL_ARB_gpu_shader_int64 : enable
// The near and far chains of a point-chain frame (SPEC 9, "Near and far chains"), around the
// passes of point_chains.comp: list_near lists the chains the far pass marked near
// (contact_near) and sizes the near pass's indirect dispatch; keep_near, after the near pass
// ran them on their own copy of the state (near_chain_state, near_segment_state: the state the
// dispatch started with), copies their state back. Host side: gpu_jiggle/sim/backends/near_far.py.
#define LOCAL_SIZE 64
#define KEEP_NEAR 0  // 0: list_near, one invocation per chain; 1: keep_near, one per listed chain

layout(local_size_x = LOCAL_SIZE) in;

#define POINT_DRAW_ONLY  // point_common.glsl's structs, without its buffers
#include "common.glsl"
#include "words64.glsl"
#include "dispatch.glsl"
#include "point_common.glsl"
#include "near_chains.glsl"

layout(std430, binding = 0) readonly buffer FrameBuffer { PointFrameParams params; float alphas[]; };
layout(std430, binding = 1) readonly buffer ChainRigBuffer { PointChainRig chain_rig[]; };
layout(std430, binding = 3) buffer ChainStateBuffer { PointChainState chain_state[]; };
layout(std430, binding = 4) buffer SegmentStateBuffer { word64x4 segment_state_words[]; };  // four a segment
layout(std430, binding = 5) readonly buffer NearChainStateBuffer { PointChainState near_chain_state[]; };
layout(std430, binding = 6) readonly buffer NearSegmentStateBuffer { word64x4 near_segment_state_words[]; };

// Chain c in the list where the far pass marked it near; the work groups cover the list (rows
// of at most 65535 groups, as gpu_jiggle/gl/dispatch.py's dispatch_size).
void list_near(uint c) {
    if (chain_state[c].contact_near == 0u) {
        return;
    }
    uint listed = atomicAdd(near_count, 1u);
    near_chain[listed] = c;
    uint groups = listed / gl_WorkGroupSize.x + 1u;
    atomicMax(near_groups_x, min(groups, 65535u));
    atomicMax(near_groups_y, (groups + 65534u) / 65535u);
}

// The near pass's state of chain c, which it ran on its own copy, back in the solver's state.
void keep_near(uint c) {
    chain_state[c] = near_chain_state[c];
    PointChainRig chain = chain_rig[c];
    for (uint i = 0u; i < chain.segment_count;) {  // tested at its end too (common.glsl, "Loops")
        uint s = chain.first_segment + i;
        segment_state_words[4u * s] = near_segment_state_words[4u * s];
        segment_state_words[4u * s + 1u] = near_segment_state_words[4u * s + 1u];
        segment_state_words[4u * s + 2u] = near_segment_state_words[4u * s + 2u];
        segment_state_words[4u * s + 3u] = near_segment_state_words[4u * s + 3u];
        if (++i == chain.segment_count) {
            break;
        }
    }
}

void main() {
#if KEEP_NEAR == 0
    uint c = invocation_index();
    if (c < params.chain_count) {
        list_near(c);
    }
#else
    uint c;
    if (listed_chain(params.chain_count, c)) {
        keep_near(c);
    }
#endif
}

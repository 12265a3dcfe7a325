// For vertex shaders that draw point chains straight from the solver's buffers (no read-back):
// declares them read-only and gives a joint's position at frame time, relative to the
// solver's floating origin (the caller's camera works in the same frame; see
// Solver.origin). Bind Solver.gpu_buffers() "chain_rig", "chain_output" and "joint_output"
// to the bindings below (defaults; override the defines to move them).
//
// Requires common.glsl and point_common.glsl's structs: include this after them, with
// POINT_DRAW_ONLY defined so that point_common.glsl declares structs only.

#ifndef CHAIN_RIG_BINDING
#define CHAIN_RIG_BINDING 1
#endif
#ifndef CHAIN_OUTPUT_BINDING
#define CHAIN_OUTPUT_BINDING 14
#endif
#ifndef JOINT_OUTPUT_BINDING
#define JOINT_OUTPUT_BINDING 7
#endif

layout(std430, binding = CHAIN_RIG_BINDING) readonly buffer DrawChainRigBuffer { PointChainRig draw_chain_rig[]; };
layout(std430, binding = CHAIN_OUTPUT_BINDING) readonly buffer DrawChainOutputBuffer { PointChainOutput draw_chain_output[]; };
layout(std430, binding = JOINT_OUTPUT_BINDING) readonly buffer DrawJointOutputBuffer { PointJointOutput draw_joint_output[]; };

// Joint k (0 = the pivot) of chain c at frame time, relative to the floating origin: this
// frame's pivot plus the frame-time offset the solver wrote (SPEC section 2).
vec3 joint_position(uint c, uint k) {
    PointChainRig chain = draw_chain_rig[c];
    return draw_chain_output[c].pivot + draw_joint_output[chain.first_joint + k].position.xyz;
}

uint joint_count(uint c) {
    return draw_chain_rig[c].segment_count + 1u;
}

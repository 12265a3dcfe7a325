#version 430
// First-order lag (SPEC section 6): x ← t + (x - t)·exp(-rate·Δt), rate = ln 2 / half-life.
// One invocation per value. Stage name as in gpu_jiggle/sim/lag.py: follow.
#define LOCAL_SIZE 64

layout(local_size_x = LOCAL_SIZE) in;

#include "common.glsl"
#include "dispatch.glsl"

layout(std430, binding = 0) buffer ValueBuffer { float value[]; };
layout(std430, binding = 1) readonly buffer TargetBuffer { float target[]; };
layout(std430, binding = 2) readonly buffer RateBuffer { float rate[]; };

uniform uint value_count;
uniform float frame_dt;

void main() {
    uint i = invocation_index();
    if (i >= value_count) {
        return;
    }
    float t = target[i];
    value[i] = t + (value[i] - t) * exp(-rate[i] * frame_dt);
}

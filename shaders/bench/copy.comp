#version 430
// The memory-bandwidth yardstick of gpu-jiggle bench: one invocation per vec4 copies it from
// one storage buffer to another, so a dispatch reads and writes each byte once.
#define LOCAL_SIZE 256

layout(local_size_x = LOCAL_SIZE) in;

#include "sim/dispatch.glsl"

layout(std430, binding = 0) readonly buffer Source { vec4 source[]; };
layout(std430, binding = 1) writeonly buffer Destination { vec4 destination[]; };

uniform uint vec4_count;

void main() {
    uint i = invocation_index();
    if (i < vec4_count) {
        destination[i] = source[i];
    }
}

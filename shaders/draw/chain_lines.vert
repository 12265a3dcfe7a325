#version 430
// Debug view: point chains as lines straight from the solver's buffers, either their
// simulated joints at frame time or their animated targets (this frame's pose). The pose sits
// in chain_output (the pivot, written by the solver) and joint_offset (each tip's target
// relative to the pivot, three floats per segment). Positions are relative to the solver's
// floating origin. Colour with strand_lines.frag.
//
// One indexed draw of lines for all chains (gpu_jiggle/render/chain_draw.py builds the indices):
// vertex id = chain × joints_per_chain + joint; ids past a chain's tip repeat it.
#define POINT_DRAW_ONLY 1

#include "sim/common.glsl"
#include "sim/point_common.glsl"
#include "point_draw.glsl"

#ifndef JOINT_OFFSET_BINDING
#define JOINT_OFFSET_BINDING 6
#endif

layout(std430, binding = JOINT_OFFSET_BINDING) readonly buffer DrawJointOffsetBuffer { float draw_joint_offset[]; };

uniform uint joints_per_chain;  // the most joints any chain has
uniform bool show_targets;      // the animated targets instead of the simulated joints
uniform mat4 view_projection;

out vec3 world_position;
out float along;  // 0 at the pivot, 1 at the tip

void main() {
    uint c = uint(gl_VertexID) / joints_per_chain;
    PointChainRig chain = draw_chain_rig[c];
    uint k = min(uint(gl_VertexID) % joints_per_chain, chain.segment_count);
    if (show_targets) {
        vec3 pivot = draw_chain_output[c].pivot;
        uint s = chain.first_segment + k - 1u;
        world_position = k == 0u ? pivot : pivot + vec3(draw_joint_offset[3u * s], draw_joint_offset[3u * s + 1u],
                                                        draw_joint_offset[3u * s + 2u]);
    } else {
        world_position = joint_position(c, k);
    }
    along = float(k) / float(chain.segment_count);
    gl_Position = view_projection * vec4(world_position, 1.0);
}

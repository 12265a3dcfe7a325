#version 430
// Point chains drawn straight from the solver's buffers: one instance per chain, one vertex
// per joint (draw as a line strip per instance, or capture world_position with transform
// feedback). Positions are relative to the solver's floating origin, as is the camera.
#define POINT_DRAW_ONLY 1

#include "sim/common.glsl"
#include "sim/point_common.glsl"
#include "point_draw.glsl"

uniform mat4 view_projection;

out vec3 world_position;
out float along;  // 0 at the pivot, 1 at the tip

void main() {
    uint c = uint(gl_InstanceID);
    uint count = joint_count(c);
    uint k = min(uint(gl_VertexID), count - 1u);
    world_position = joint_position(c, k);
    along = float(k) / float(count - 1u);
    gl_Position = view_projection * vec4(world_position, 1.0);
}

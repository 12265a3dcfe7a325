#version 430
// Grass blades drawn straight from the solver's buffers (no read-back): a ribbon per blade
// (a point chain) with two vertices per joint, widened across the blade along its own
// facing direction (a fixed yaw per blade) and tapered to a point at the tip. Positions are
// relative to the solver's floating origin, as is the camera (see Solver.origin).
//
// One indexed draw of triangles for the whole field (gpu_jiggle/render/chain_draw.py builds the
// indices): vertex id = chain × vertices_per_chain + 2k + edge, for joint k and edge 0 or 1.
// Ids past a chain's last joint repeat its tip.
#define POINT_DRAW_ONLY 1

#include "sim/common.glsl"
#include "sim/point_common.glsl"
#include "point_draw.glsl"

uniform uint vertices_per_chain;  // 2 × the most joints any chain has
uniform mat4 view_projection;  // origin-relative world -> clip
uniform vec2 root_width;       // full width at the root: (smallest, largest), length unit

out vec3 world_position;  // this vertex of the ribbon, origin-relative, length unit
out vec3 joint_world;     // the joint it widens (what Solver.positions() reads, less the origin)
out vec3 normal;          // unit, across the ribbon's face (either side is lit)
out float along;          // 0 at the root, 1 at the tip
out float blade_shade;    // per blade, in [0, 1): picks its colour
flat out uint blade_lod;  // the blade's level of detail this frame (LOD_FULL, LOD_HALF, LOD_FROZEN)

// A well-mixed 32-bit hash (lowbias32), for per-blade variation that needs no buffer.
uint hash(uint x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

float unit_hash(uint x) {
    return float(hash(x) >> 8) * (1.0 / 16777216.0);
}

void main() {
    uint c = uint(gl_VertexID) / vertices_per_chain;
    uint v = uint(gl_VertexID) % vertices_per_chain;
    uint count = joint_count(c);
    uint k = min(v >> 1, count - 1u);
    float edge = (v & 1u) == 0u ? -1.0 : 1.0;

    vec3 p = joint_position(c, k);
    vec3 before = joint_position(c, k > 0u ? k - 1u : k);
    vec3 after = joint_position(c, min(k + 1u, count - 1u));
    vec3 tangent = after - before;
    tangent = length(tangent) > 1e-9 ? normalize(tangent) : vec3(0.0, 1.0, 0.0);

    float yaw = TWO_PI * unit_hash(2u * c);
    vec3 facing = vec3(cos(yaw), 0.0, sin(yaw));      // the direction across the blade
    vec3 side = facing - dot(facing, tangent) * tangent;
    side = length(side) > 1e-4 ? normalize(side) : normalize(cross(tangent, vec3(0.0, 0.0, 1.0)));

    along = float(k) / float(count - 1u);
    float width = mix(root_width.x, root_width.y, unit_hash(2u * c + 1u));
    float half_width = 0.5 * width * pow(max(1.0 - along, 0.0), 0.7);

    joint_world = p;
    world_position = p + edge * half_width * side;
    // A blade is folded a little along its midrib: tilt the normal toward the edge.
    normal = normalize(cross(side, tangent) + 0.35 * edge * side);
    blade_shade = unit_hash(hash(c) + 7u);
    blade_lod = draw_chain_output[c].lod;
    gl_Position = view_projection * vec4(world_position, 1.0);
}

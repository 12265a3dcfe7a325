#version 430
// Hair strands drawn straight from the solver's buffers (no read-back) as ribbons that face
// the camera, two vertices per joint, widened across the strand and the view ray; with a
// width of 0 and line indices, as lines. Positions are relative to the solver's floating
// origin, as is the camera (see Solver.origin).
//
// One indexed draw for all strands (gpu_jiggle/render/chain_draw.py builds the indices): vertex id =
// chain × vertices_per_chain + 2k + edge, for joint k and edge 0 or 1. Ids past a chain's
// last joint repeat its tip.
#define POINT_DRAW_ONLY 1

#include "sim/common.glsl"
#include "sim/point_common.glsl"
#include "point_draw.glsl"

uniform uint vertices_per_chain;  // 2 × the most joints any chain has
uniform mat4 view_projection;  // origin-relative world -> clip
uniform vec3 eye;              // camera, origin-relative
uniform vec2 width;            // full width at the root and at the tip, length unit
uniform vec3 hair_colour;      // the strands' mean colour; each strand varies around it

out vec3 world_position;  // this vertex of the ribbon, origin-relative
out vec3 joint_world;     // the joint it widens (what Solver.positions() reads, less the origin)
out vec3 tangent;         // unit, along the strand
out float along;          // 0 at the root, 1 at the tip
out vec3 strand_colour;

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
    vec3 t = after - before;
    t = length(t) > 1e-9 ? normalize(t) : vec3(0.0, -1.0, 0.0);
    vec3 view = normalize(eye - p);
    vec3 side = cross(t, view);
    float l = length(side);
    // Looking straight along the strand: any direction across it will do.
    side = l > 1e-4 ? side / l : normalize(cross(t, abs(t.y) < 0.9 ? vec3(0.0, 1.0, 0.0) : vec3(1.0, 0.0, 0.0)));

    along = float(k) / float(count - 1u);
    joint_world = p;
    world_position = p + edge * 0.5 * mix(width.x, width.y, along) * side;
    tangent = t;
    float shade = mix(0.7, 1.25, unit_hash(c));
    vec3 tint = vec3(unit_hash(3u * c + 1u), unit_hash(3u * c + 2u), unit_hash(3u * c + 3u)) * 0.16 - 0.08;
    strand_colour = clamp(hair_colour * shade * (1.0 + tint), 0.0, 1.0);
    gl_Position = view_projection * vec4(world_position, 1.0);
}

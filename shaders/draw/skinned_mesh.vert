#version 330
// A glTF mesh primitive morphed and skinned on the GPU.
//
// Morph targets first (glTF 2.0 section 3.7.2.2): position = base + sum_t weight_t * dP_t,
// normal = base + sum_t weight_t * dN_t, with the offsets of every target in one RGB32F
// texture (u_morph_targets, read by texelFetch): row-major texel t * V + v holds target t's
// position offset of vertex v, texel (T + t) * V + v its normal offset (V = u_morph_vertices,
// T = u_morph_count); the weights come from the host each frame (the node's or its animation's).
// Then linear blend skinning (section 3.7.3): world position = sum_i weight_i *
// joint_matrix[joint_i] * morphed position, a joint matrix being world(joint) * inverse_bind(joint),
// computed on the host each frame (gpu_jiggle/render/meshes.py). A primitive without a skin uses
// u_model (its node's world matrix).
#define MAX_JOINTS 64
#define MAX_TARGETS 4

uniform mat4 u_view_projection;             // world -> clip space
uniform mat4 u_joint_matrices[MAX_JOINTS];  // bind pose -> world, one per skin joint
uniform mat4 u_model;                       // bind pose -> world for unskinned primitives
uniform bool u_skinned;
uniform sampler2D u_morph_targets;          // RGB32F offsets, model unit (a 1x1 texture without targets)
uniform int u_morph_count;                  // T, 0 without targets
uniform int u_morph_vertices;               // V, the primitive's vertex count
uniform bool u_morph_normals;               // the texture holds normal offsets after the position offsets
uniform vec4 u_morph_weights[(MAX_TARGETS + 3) / 4];  // weight t in component t % 4 of entry t / 4
uniform mat3 u_uv_transform;                // KHR_texture_transform: uv -> texture coordinates
uniform bool u_vertex_colours;              // the primitive has COLOR_0

in vec3 in_position;  // bind pose, model unit
in vec3 in_normal;    // bind pose, unit
in vec2 in_uv;        // the base colour texture's TEXCOORD_n, origin at the image's top-left (glTF)
in uvec4 in_joints;   // JOINTS_0: indices into the skin's joints
in vec4 in_weights;   // WEIGHTS_0: summing to 1
in vec4 in_colour;    // COLOR_0, RGBA (alpha 1 for RGB colours)

out vec3 v_world;
out vec3 v_normal;
out vec2 v_uv;
out vec4 v_colour;

vec3 morph_offset(int texel) {
    int width = textureSize(u_morph_targets, 0).x;
    return texelFetch(u_morph_targets, ivec2(texel % width, texel / width), 0).xyz;
}

void main() {
    vec3 position = in_position;
    vec3 normal = in_normal;
    for (int t = 0; t < u_morph_count; ++t) {
        float w = u_morph_weights[t / 4][t % 4];
        if (w == 0.0) {
            continue;
        }
        position += w * morph_offset(t * u_morph_vertices + gl_VertexID);
        if (u_morph_normals) {
            normal += w * morph_offset((u_morph_count + t) * u_morph_vertices + gl_VertexID);
        }
    }
    mat4 m = u_model;
    if (u_skinned) {
        m = in_weights.x * u_joint_matrices[in_joints.x] + in_weights.y * u_joint_matrices[in_joints.y]
          + in_weights.z * u_joint_matrices[in_joints.z] + in_weights.w * u_joint_matrices[in_joints.w];
    }
    vec4 world = m * vec4(position, 1.0);
    v_world = world.xyz;
    // Rotation and uniform scale only (as skins are in practice): the upper 3x3 carries normals.
    v_normal = mat3(m) * normal;
    v_uv = (u_uv_transform * vec3(in_uv, 1.0)).xy;
    v_colour = u_vertex_colours ? in_colour : vec4(1.0);
    gl_Position = u_view_projection * world;
}

#version 330
// A glTF mesh primitive skinned on the GPU (linear blend skinning, glTF 2.0 "Skins"):
// world position = sum_i weight_i * joint_matrix[joint_i] * bind-pose position, where a joint
// matrix is world(joint) * inverse_bind(joint), computed on the host each frame
// (gpu_jiggle/render/scene.py). A primitive without a skin uses u_model (its node's world matrix).
#define MAX_JOINTS 64

uniform mat4 u_view_projection;             // world -> clip space
uniform mat4 u_joint_matrices[MAX_JOINTS];  // bind pose -> world, one per skin joint
uniform mat4 u_model;                       // bind pose -> world for unskinned primitives
uniform bool u_skinned;

in vec3 in_position;  // bind pose, model unit
in vec3 in_normal;    // bind pose, unit
in vec2 in_uv;        // TEXCOORD_0, origin at the image's top-left (glTF)
in uvec4 in_joints;   // JOINTS_0: indices into the skin's joints
in vec4 in_weights;   // WEIGHTS_0: summing to 1

out vec3 v_world;
out vec3 v_normal;
out vec2 v_uv;

void main() {
    mat4 m = u_model;
    if (u_skinned) {
        m = in_weights.x * u_joint_matrices[in_joints.x] + in_weights.y * u_joint_matrices[in_joints.y]
          + in_weights.z * u_joint_matrices[in_joints.z] + in_weights.w * u_joint_matrices[in_joints.w];
    }
    vec4 world = m * vec4(in_position, 1.0);
    v_world = world.xyz;
    // Rotation and uniform scale only (as skins are in practice): the upper 3x3 carries normals.
    v_normal = mat3(m) * in_normal;
    v_uv = in_uv;
    gl_Position = u_view_projection * world;
}

// Buffers of the angle-chain kernel (SPEC section 3). Every struct here has a numpy
// structured dtype of the same name in gpu_jiggle/sim/layouts.py, and every buffer its binding
// there (ANGLE_BINDINGS); tests/sim/test_layouts.py checks that the two agree.

// gravity: g of this chain, length/s², world.
struct AngleChainRig {
    uint first_segment;
    uint segment_count;
    uint first_joint;
    uint pad0;
    vec2 gravity;
    float pad1;
    float pad2;
};

struct AngleSegmentRig {
    float length;
    float inv_length;
    float stiffness;
    float damping;
    float inertia;
    float angle_limit;
    float pad0;
    float pad1;
};

struct AngleSegmentState {
    float angle;
    float angular_velocity;
    float prev_angle;
    float prev_angular_velocity;
    float last_local_angle;
    float pad0;
    float pad1;
    float pad2;
};

struct AngleChainState {
    vec2 prev_root_position;
    vec2 prev_root_velocity;
    vec2 last_root_position;
    float last_root_angle;
    float pad0;
};

struct AngleChainTarget {
    vec2 root_position;
    float root_angle;
    uint teleport;
    uint lod;
    uint pad0;
    uint pad1;
    uint pad2;
};

// The alphas of level of detail l start at alphas[l * alpha_stride].
struct AngleFrameParams {
    uint chain_count;
    uint alpha_stride;
    uint pad0;
    uint pad1;
    Schedule full_rate;
    Schedule half_rate;
};

struct AngleJointOutput {
    vec2 position;
    vec2 raw_position;
};

struct AngleSegmentOutput {
    float angle;
    float angular_velocity;
};

layout(std430, binding = 0) readonly buffer FrameBuffer { AngleFrameParams params; float alphas[]; };
layout(std430, binding = 1) readonly buffer ChainRigBuffer { AngleChainRig chain_rig[]; };
layout(std430, binding = 2) readonly buffer SegmentRigBuffer { AngleSegmentRig segment_rig[]; };
layout(std430, binding = 3) buffer ChainStateBuffer { AngleChainState chain_state[]; };
layout(std430, binding = 4) buffer SegmentStateBuffer { AngleSegmentState segment_state[]; };
layout(std430, binding = 5) readonly buffer ChainTargetBuffer { AngleChainTarget chain_target[]; };
layout(std430, binding = 6) readonly buffer LocalAngleBuffer { float local_angle[]; };
layout(std430, binding = 7) writeonly buffer JointOutputBuffer { AngleJointOutput joint_output[]; };
layout(std430, binding = 8) writeonly buffer SegmentOutputBuffer { AngleSegmentOutput segment_output[]; };

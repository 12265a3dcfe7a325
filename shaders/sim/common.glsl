// Shared declarations for every gpu_jiggle compute shader: constants, wrap().
// Source of the conventions: SPEC.md section 0.

const float PI = 3.14159265358979;
const float TWO_PI = 6.28318530717959;
const float INV_TWO_PI = 0.159154943091895;

// wrap(a) = a - 2π·floor((a + π) / 2π), a value in [-π, π). The division is written as a
// multiplication by 1/2π so that GLSL and the numpy reference round the same way.
float wrap_angle(float a) {
    return a - TWO_PI * floor((a + PI) * INV_TWO_PI);
}

// Teleport flag per chain (per frame, SPEC section 5): none, snap onto the targets, or carry
// the chain's shape across the jump.
#define TELEPORT_NONE 0u
#define TELEPORT_SNAP 1u
#define TELEPORT_KEEP_SHAPE 2u

// Level of detail per chain (per frame): every frame at the substep h, every second frame at
// 2h with both frames' time (so the motion keeps its speed at half the cost), or frozen on
// its animated targets.
#define LOD_FULL 0u
#define LOD_HALF 1u
#define LOD_FROZEN 2u

// The substeps one level of detail runs in this frame (see gpu_jiggle.sim.clock.StepPlan).
// substep: h in seconds; inv_path_step: 1 / seconds of target path per substep; blend: σ of
// the frame-time output; gust_phase: point chains' wind phase at the first substep;
// collider_time_scale: this schedule's span over the full-rate span, which the colliders'
// interpolation covers (1 at full rate, about 2 at half rate).
struct Schedule {
    uint substep_count;
    float substep;
    float inv_path_step;
    float blend;
    float gust_phase;
    float collider_time_scale;
    float pad1;
    float pad2;
};

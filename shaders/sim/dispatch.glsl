// For compute shaders only (it uses compute built-ins): the invocation's index over a 2D
// grid of work groups, x first, then rows of y, so that more than 65535 groups' worth of
// chains fit one dispatch (gpu_jiggle.backends.gpu.dispatch_size).
uint invocation_index() {
    return gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x + gl_GlobalInvocationID.x;
}

// The near chains of a point-chain frame (SPEC 9, "Near and far chains"): the chains the far
// pass found a collider near, listed by near_chains.comp (list_near) for the near pass, with
// the work groups of its indirect dispatch (x, y, z: read by glDispatchComputeIndirect, reset
// to 0, 1, 1 and a count of 0 before each far pass). Binding and layout as
// gpu_jiggle/sim/backends/near_far.py (NEAR_CHAINS_BINDING, NEAR_CHAINS_HEADER).
layout(std430, binding = 14) buffer NearChainBuffer {
    uint near_groups_x;
    uint near_groups_y;
    uint near_groups_z;
    uint near_count;
    uint near_chain[];
};

// The near chain this invocation of an indirect dispatch over the list runs, or false past the
// list's end (or for an index outside the frame's chains: the list is never trusted).
bool listed_chain(uint chain_count, out uint c) {
    uint listed = invocation_index();
    c = listed < near_count ? near_chain[listed] : 0xFFFFFFFFu;
    return c < chain_count;
}

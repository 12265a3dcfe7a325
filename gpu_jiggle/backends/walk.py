"""What both numpy reference backends share: the root-to-tip walk by depth over a ragged
chain set, and the std430 records they hold (the same ones the GPU buffers hold)."""
from __future__ import annotations

import numpy as np


class DepthWalkBackend:
    """Holds the records of one chain kind and walks its chains root to tip by depth: at
    depth d every chain with more than d segments advances its d-th segment at once, so the
    only Python loops are over substeps and depth.

    Subclasses set ``DTYPES`` (record name → dtype, sized per chain, segment or joint).
    """

    name = "cpu"
    #: record name → (dtype, "chain" | "segment" | "joint")
    DTYPES: dict = {}

    def __init__(self, chain_set):
        counts = chain_set.segment_counts
        self.chain_count = chain_set.chain_count
        self.segment_count = chain_set.segment_count
        self.segment_counts = counts
        max_depth = int(counts.max()) if counts.size else 0
        # For each depth: the chains deep enough, and their segment at that depth.
        self._chains_at = [np.flatnonzero(counts > d) for d in range(max_depth)]
        self._segments_at = [chain_set.first_segment[ch] + d for d, ch in enumerate(self._chains_at)]
        sizes = {"chain": self.chain_count, "segment": self.segment_count,
                 "joint": self.segment_count + self.chain_count}
        for name, (dtype, per) in self.DTYPES.items():
            setattr(self, name, np.zeros(sizes[per], dtype))

    def depth_lists(self, chains=None):
        """(chains, segments) per depth, kept to ``chains`` (all when None)."""
        if chains is None:
            return list(zip(self._chains_at, self._segments_at))
        keep = np.zeros(self.chain_count, bool)
        keep[chains] = True
        return [(ch[keep[ch]], seg[keep[ch]]) for ch, seg in zip(self._chains_at, self._segments_at)]

    # -- interface (see gpu_jiggle.backends) ---------------------------------------------------
    def upload_rig(self, chain_rig, segment_rig):
        self.chain_rig = chain_rig.copy()
        self.segment_rig = segment_rig.copy()

    def write_state(self, chain_state, segment_state):
        self.chain_state = chain_state.copy()
        self.segment_state = segment_state.copy()

    def read(self, name):
        return getattr(self, name).copy()

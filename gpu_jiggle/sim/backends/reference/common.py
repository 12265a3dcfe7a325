"""What both numpy reference backends share: the root-to-tip walk by depth over a ragged
chain set, and the std430 records they hold (the same ones the GPU buffers hold)."""
from __future__ import annotations

import numpy as np

from ... import layouts


F = np.float32


def exact_change(step, d, d_rate, b):
    """SPEC 1, the exact integrator: the change of the offset ``d`` from the target and of its
    rate ``d_rate`` over one substep, ``b`` the held external acceleration (angle chains: (n,);
    point chains: (n, 3)), from the segments' EXACT_STEP records ``step`` (as in the shaders)."""
    shape = (-1,) + (1,) * (np.ndim(d) - 1)
    c = {name: step[name].reshape(shape) for name in layouts.EXACT_STEP_FIELDS}
    return (c["d_d"] * d + c["d_v"] * d_rate + c["d_b"] * b,
            c["v_d"] * d + c["v_v"] * d_rate + c["v_b"] * b)


def path_weights(alpha, path: int) -> tuple:
    """``(p, q, dp, dq)`` float32 of the target path of kind ``path`` (``layouts.PATH_*``) at
    fraction ``alpha`` (SPEC 2), as ``path_weights`` in ``common.glsl``: x(α) = x0 + p·d + q·m0s,
    velocity (dp·d + dq·m0s)/span (m0s as :func:`start_tangent` gives it); the Hermite and the
    monotone path share the weights."""
    alpha = F(alpha)
    if path == layouts.PATH_LINEAR:
        return alpha, F(0), F(1), F(0)
    u = F(1) - alpha
    return alpha * alpha * (F(2) - alpha), alpha * u * u, alpha * (F(4) - F(3) * alpha), u * (F(1) - F(3) * alpha)


def start_tangent(d, m0s, path: int):
    """The start velocity m0s (× span) the path of kind ``path`` takes toward the move ``d``
    this frame, as ``start_tangent`` in ``common.glsl`` (SPEC 2): the monotone path clamps its
    part along d to [0, 3]·d (none where the motion stopped or turned back; Fritsch & Carlson
    1980) and its part across d to the length 3|d|; the others keep m0s. ``d``, ``m0s``: (n,) angles or (n, k) vectors, float32."""
    if path != layouts.PATH_MONOTONE:
        return m0s
    if np.ndim(d) == 1:
        return np.where(d * m0s <= 0, F(0), np.where(np.abs(m0s) > F(3) * np.abs(d), F(3) * d, m0s)).astype(F)
    dd = _dot(d, d)
    moves = dd != 0
    along = _dot(m0s, d) / np.where(moves, dd, F(1))
    across = m0s - along[:, None] * d
    aa = _dot(across, across)
    long = aa > F(9) * dd
    across = np.where(long[:, None], across * np.sqrt(F(9) * dd / np.where(long, aa, F(1)))[:, None], across)
    out = np.clip(along, F(0), F(3))[:, None] * d + across
    return np.where(moves[:, None], out, F(0)).astype(F)


def _dot(a, b):
    """Row-wise dot product of (n, k) float32 arrays, summed left to right as GLSL's dot."""
    out = a[:, 0] * b[:, 0]
    for i in range(1, a.shape[1]):
        out = out + a[:, i] * b[:, i]
    return out


class DepthOrder:
    """The numpy paths' storage order, in which every depth of the walk is a pair of slices.

    Chains are sorted longest first (stably), and segments depth-major in that order: at depth
    d the chains deep enough are the first ``n_d`` sorted chains, and their segments the
    positions ``start_d … start_d + n_d`` (sorted chain i's segment at depth d sits at
    ``start_d + i``). Reading and writing a depth are then views, not gathers and scatters.

    Attributes (int64 arrays): ``chain_order`` (C,), sorted position → chain;
    ``segment_order`` (S,), storage position → segment; ``chain_of_position`` (S,), the
    sorted chain of each position; ``joint_of_position`` (S,), the joint at each position's
    tip; ``counts`` (C,), the sorted chains' segment counts; ``starts``, ``sizes``: per depth.
    """

    def __init__(self, segment_counts, first_segment, first_joint):
        counts = np.asarray(segment_counts, np.int64)
        self.chain_order = np.argsort(-counts, kind="stable")
        self.counts = counts[self.chain_order]
        max_depth = int(counts.max()) if counts.size else 0
        self.sizes = [int((self.counts > d).sum()) for d in range(max_depth)]
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.int64)
        ranks = [np.arange(n) for n in self.sizes]
        self.chain_of_position = np.concatenate(ranks).astype(np.int64) if ranks else np.zeros(0, np.int64)
        depth = np.repeat(np.arange(max_depth), self.sizes)
        chains = self.chain_order[self.chain_of_position]
        self.segment_order = (np.asarray(first_segment, np.int64)[chains] + depth).astype(np.int64)
        self.joint_of_position = (np.asarray(first_joint, np.int64)[chains] + 1 + depth).astype(np.int64)

    def depth_slices(self):
        """``(chains, positions)`` per depth, as slices of the sorted chains and positions."""
        return [(slice(0, n), slice(int(start), int(start) + n)) for n, start in zip(self.sizes, self.starts)]

    def depth_lists(self, chains):
        """``(chains, positions)`` per depth for the sorted chains ``chains`` only (int arrays)."""
        keep = np.zeros(self.counts.size, bool)
        keep[chains] = True
        out = []
        for n, start in zip(self.sizes, self.starts):
            ch = np.flatnonzero(keep[:n])
            out.append((ch, start + ch))
        return out


class FieldState:
    """A backend's dynamic state as contiguous arrays, one per field of its state records:
    chain fields (C, ...) in sorted chain order, segment fields (S, ...) in storage order
    (:class:`DepthOrder`); all zero at first.

    Args:
        order: the :class:`DepthOrder`.
        parts: record name → (dtype, ``"chain"`` | ``"segment"``, {field: width}[, {name:
            fields}]): a width keeps the field's first components (xyz of a vec4 whose w holds
            nothing, or something kept apart); None keeps it whole. The optional last part
            gathers the w of vec4 fields: ``name`` (n, len(fields)) holds the w of each of
            ``fields`` in turn (the point state's carried axis codes, SPEC 9 "Swings").
    """

    def __init__(self, order: DepthOrder, parts: dict):
        self._index = {"chain": order.chain_order, "segment": order.segment_order}
        self._parts = {record: (part + ({},))[:4] for record, part in parts.items()}
        for dtype, per, fields, gathered in self._parts.values():
            for name, width in fields.items():
                sub = dtype.fields[name][0]
                shape = sub.shape if width is None else (width,)
                setattr(self, name, np.zeros((self._index[per].size,) + shape, sub.base.newbyteorder("=")))
            for name, of in gathered.items():
                setattr(self, name, np.zeros((self._index[per].size, len(of)), np.float32))

    def records(self, record: str) -> np.ndarray:
        """The fields as records of ``record`` in the solver's order (a new array)."""
        dtype, per, fields, gathered = self._parts[record]
        index = self._index[per]
        out = np.zeros(index.size, dtype)
        for name, width in fields.items():
            column = out[name] if width is None else out[name][:, :width]
            column[index] = getattr(self, name)
        for name, of in gathered.items():
            for k, field in enumerate(of):
                out[field][index, 3] = getattr(self, name)[:, k]
        return out

    def load(self, record: str, records: np.ndarray) -> None:
        """Take the fields of ``records`` (the solver's order)."""
        _, per, fields, gathered = self._parts[record]
        for name, width in fields.items():
            column = records[name] if width is None else records[name][:, :width]
            setattr(self, name, np.ascontiguousarray(column[self._index[per]]))
        for name, of in gathered.items():
            setattr(self, name, np.ascontiguousarray(np.stack([records[field][:, 3] for field in of], axis=1)
                                                     [self._index[per]], dtype=np.float32))


class FrameOutput:
    """The outputs of a backend's last frame (joint_output, segment_output), each field as the
    walk computed it, in storage order, and put in the solver's order only when read: a frame
    whose outputs are not read pays for no scatter, and a read of one field for that field.

    Args:
        dtypes: record name → (dtype, record count).
    """

    def __init__(self, dtypes: dict):
        self._dtypes = dtypes
        self._records = {name: np.zeros(size, dtype) for name, (dtype, size) in dtypes.items()}
        self._pending = {name: {} for name in dtypes}

    def put(self, name: str, field: str, *parts) -> None:
        """This frame's ``field`` of the records ``name``: (rows, values) pairs, the rows in
        the solver's order; values (n,) or (n, w), w up to the field's width (the rest 0). Rows
        no pair names are 0. The values are kept, not copied: give arrays the walk leaves alone."""
        self._pending[name][field] = parts

    def field(self, name: str, field: str) -> np.ndarray:
        """``field`` of the records ``name`` in the solver's order (a new contiguous array)."""
        parts = self._pending[name].get(field)
        if parts is None:
            return self._records[name][field].copy()
        dtype, size = self._dtypes[name]
        sub = dtype.fields[field][0]
        out = np.zeros((size,) + sub.shape, sub.base)
        for rows, values in parts:
            (out if values.shape[1:] == sub.shape else out[:, :values.shape[1]])[rows] = values
        return out

    def records(self, name: str) -> np.ndarray:
        """The records ``name`` in the solver's order (a new array)."""
        records = self._records[name]
        for field in list(self._pending[name]):
            records[field] = self.field(name, field)
            del self._pending[name][field]
        return records.copy()

    def replace(self, name: str, records: np.ndarray) -> None:
        """Take ``records`` (the solver's order) as the outputs ``name``."""
        self._records[name] = records.copy()
        self._pending[name] = {}


class DepthWalkBackend:
    """Holds the records of one chain kind and walks its chains root to tip by depth: at
    depth d every chain with more than d segments advances its d-th segment at once, so the
    only Python loops are over substeps and depth.

    Subclasses set ``DTYPES`` (record name → dtype, sized per chain, segment or joint),
    ``OUTPUTS`` (the same for "joint_output" and "segment_output", kept in ``self.output``, a
    :class:`FrameOutput`) and ``state``, their :class:`FieldState` (records "chain_state" and
    "segment_state").
    """

    name = "cpu"
    #: record name → (dtype, "chain" | "segment" | "joint")
    DTYPES: dict = {}
    OUTPUTS: dict = {}

    def prepare(self, header, **switch_inputs) -> None:
        """Nothing to compile (the GPU backends' ``prepare`` compiles their kernel variants)."""

    def release(self) -> None:
        """Nothing to free: numpy arrays go with the backend."""

    def __init__(self, chain_set):
        self.chain_count = chain_set.chain_count
        self.segment_count = chain_set.segment_count
        self.order = DepthOrder(chain_set.segment_counts, chain_set.first_segment, chain_set.first_joint)
        sizes = {"chain": self.chain_count, "segment": self.segment_count,
                 "joint": self.segment_count + self.chain_count}
        for name, (dtype, per) in self.DTYPES.items():
            setattr(self, name, np.zeros(sizes[per], dtype))
        self.output = FrameOutput({name: (dtype, sizes[per]) for name, (dtype, per) in self.OUTPUTS.items()})

    def chain_ranks(self, chains):
        """(C,) int64: each sorted chain's row in the subset ``chains`` (a sorted-chain index
        array), -1 for a chain not in it; per-chain values computed for the subset are read at
        ``values[chain_ranks(chains)[ch]]``."""
        rank = np.full(self.chain_count, -1, np.int64)
        rank[chains] = np.arange(chains.size)
        return rank

    def depth_lists(self, chains=None):
        """(sorted chains, storage positions) per depth: slices for all chains, else arrays for
        the sorted chains ``chains``."""
        return self.order.depth_slices() if chains is None else self.order.depth_lists(chains)

    @staticmethod
    def per_chain(header, lod, field: str) -> np.ndarray:
        """(C,) float32: each chain's ``field`` of its level of detail's SCHEDULE this frame
        (``"span"``, ``"inv_path_step"``; the full rate's for frozen chains, as in the shaders)."""
        return np.where(lod == layouts.LOD_HALF, np.float32(header["half_rate"][field]),
                        np.float32(header["full_rate"][field])).astype(np.float32)

    def path_lags(self, header, lod, lag, snapped):
        """SPEC 2, "Levels of detail": (C,) float32, each chain's path_lag after this frame
        (as ``next_path_lag`` in ``common.glsl``), from ``lag`` (C,), its value before, and
        ``snapped`` (C,), the chains snapped this frame (frozen ones included), sorted as
        :class:`DepthOrder`. A snapped chain's paths start at this frame's pose (0); one that ran
        substeps, or is in step with its level's clock, is where that clock is after the frame
        (its end_lag); any other waits a frame longer (lag + frame time)."""
        start, end = self.per_chain(header, lod, "start_lag"), self.per_chain(header, lod, "end_lag")
        ran = np.where(lod == layouts.LOD_HALF, header["half_rate"]["substep_count"],
                       header["full_rate"]["substep_count"]) > 0
        waited = lag + self.per_chain(header, lod, "frame_time")
        return np.where(snapped, F(0), np.where(ran | (lag == start), end, waited)).astype(F)

    @staticmethod
    def own_inv_span(schedule, lag):
        """(n,) float32: 1 / the seconds from the paths' start of chains whose path_lag is
        ``lag`` (n,) to this frame's pose, ``lag + frame_time`` (0 for none; the schedule's
        inv_span where the chain is in step with it), as ``own_inv_span`` in ``common.glsl``."""
        own = lag + F(schedule["frame_time"])
        inv = np.where(own > 0, F(1) / np.where(own > 0, own, F(1)), F(0))
        return np.where(lag == F(schedule["start_lag"]), F(schedule["inv_span"]), inv).astype(F)

    def schedules(self, header, params, lod, sigma):
        """For each level of detail with substeps in this frame, yield ``(schedule, alphas,
        chains, positions)``: its SCHEDULE record, its (n,) float32 alphas, its chains (indices
        in the order of ``lod`` (C,), sorted as :class:`DepthOrder`) and their segments' storage
        positions. Fills ``sigma`` (C,), in the same order, with each chain's frame-time blend.
        """
        stride = int(header["alpha_stride"])
        all_alphas = params[header.dtype.itemsize:].view(np.float32)
        for level, name in ((layouts.LOD_FULL, "full_rate"), (layouts.LOD_HALF, "half_rate")):
            schedule = header[name]
            n = int(schedule["substep_count"])
            in_level = lod == level
            chains = np.flatnonzero(in_level)
            sigma[chains] = np.float32(schedule["blend"])
            if n and chains.size:
                positions = np.flatnonzero(in_level[self.order.chain_of_position])
                yield schedule, all_alphas[level * stride: level * stride + n], chains, positions

    # -- interface (see gpu_jiggle.sim.backends) ---------------------------------------------------
    def upload_rig(self, chain_rig, segment_rig, exact_step):
        self.chain_rig = chain_rig.copy()  # each backend keeps its segments' rig in storage order
        self.exact_step = exact_step.copy()

    def exact_steps(self, seg, chains):
        """The EXACT_STEP records of storage positions ``seg`` of sorted chains ``chains`` at
        their chains' rate (``2·s`` at full rate, ``2·s + 1`` at half rate, as ``exact_step``
        in the shaders)."""
        half = self.chain_lod()[self.order.chain_order[chains]] == layouts.LOD_HALF
        return self.exact_step[2 * self.order.segment_order[seg] + half]

    def chain_lod(self):
        """(C,) uint32: each chain's level of detail (LOD_*) this frame, in the solver's order."""
        return self.chain_target["lod"]

    # -- the state (a FieldState, ``self.state``) as records in the solver's order, made on request
    @property
    def chain_state(self):
        return self.state.records("chain_state")

    @property
    def segment_state(self):
        return self.state.records("segment_state")

    def write_state(self, chain_state, segment_state):
        self.state.load("chain_state", chain_state)
        self.state.load("segment_state", segment_state)

    def write_outputs(self, joint_output, segment_output):
        self.output.replace("joint_output", joint_output)
        self.output.replace("segment_output", segment_output)

    def read(self, name):
        return self.output.records(name) if name in self.OUTPUTS else getattr(self, name).copy()

    def read_field(self, name, field):
        return self.output.field(name, field) if name in self.OUTPUTS else getattr(self, name)[field].copy()

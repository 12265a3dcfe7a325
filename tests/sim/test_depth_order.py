"""The numpy paths' storage order (:class:`DepthOrder`): longest chains first, segments
depth-major, so that each depth of the root-to-tip walk is a slice; and the angle reference
keeps its state in that order while reading and writing records in the solver's order."""
from __future__ import annotations

import numpy as np

from gpu_jiggle import AngleChainSet, PointChainSet, Solver
from gpu_jiggle.sim import layouts
from gpu_jiggle.sim.backends.reference.angle_chains import ReferenceAngleBackend
from gpu_jiggle.sim.backends.reference.common import DepthOrder


def test_each_depth_is_a_slice_of_the_segments_at_that_depth():
    counts = np.array([2, 5, 1, 5, 3])
    first_segment = np.concatenate([[0], np.cumsum(counts)[:-1]])
    first_joint = first_segment + np.arange(counts.size)
    order = DepthOrder(counts, first_segment, first_joint)
    assert list(order.chain_order) == [1, 3, 4, 0, 2]  # longest first, ties in chain order
    assert sorted(order.segment_order) == list(range(counts.sum()))  # every segment once
    for depth, (chains, positions) in enumerate(order.depth_slices()):
        chain_ids = order.chain_order[chains]
        assert list(chain_ids) == [c for c in order.chain_order if counts[c] > depth]
        np.testing.assert_array_equal(order.segment_order[positions], first_segment[chain_ids] + depth)
        np.testing.assert_array_equal(order.joint_of_position[positions], first_joint[chain_ids] + 1 + depth)
        np.testing.assert_array_equal(order.chain_of_position[positions], np.arange(chains.stop))
    kept = order.depth_lists(np.array([1, 3]))  # sorted chains 1 and 3: chains 3 and 0
    assert [list(order.segment_order[positions]) for _, positions in kept] == [[8, 0], [9, 1], [10], [11], [12]]


def test_the_state_read_back_is_the_state_written_in_the_solvers_order():
    chain_set = AngleChainSet([2, 4, 1, 3], 0.1, 2.0, 0.5)
    backend = ReferenceAngleBackend(chain_set)
    rng = np.random.default_rng(3)
    chain_state = np.zeros(4, layouts.ANGLE_CHAIN_STATE)
    segment_state = np.zeros(10, layouts.ANGLE_SEGMENT_STATE)
    for records in (chain_state, segment_state):
        for name in records.dtype.names:
            if not name.startswith("pad") and name != "flags":
                records[name] = rng.normal(size=records[name].shape)
    backend.write_state(chain_state, segment_state)
    assert backend.read("chain_state").tobytes() == chain_state.tobytes()
    assert backend.read("segment_state").tobytes() == segment_state.tobytes()
    assert backend.state.angle.flags.c_contiguous and backend.state.angle.dtype == np.float32


def test_chains_of_every_length_follow_their_own_pose():
    """Sorting chains by length must not mix them up: a chain of each length alone and
    together give the same numbers."""
    counts = [3, 1, 4, 2]
    together = Solver(AngleChainSet(counts, 0.1, [2.0, 3.0, 4.0, 5.0], 0.3, gravity=(0, -9.8)), backend="cpu")
    roots = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])
    local = np.linspace(-0.3, 0.3, sum(counts))
    for frame in range(20):
        together.set_pose(roots + [0.1 * np.sin(frame), 0.0], np.full(4, 0.2 * frame), local)
        together.advance(1 / 60)
    joints = together.positions()
    first = np.concatenate([[0], np.cumsum(np.array(counts) + 1)])
    starts = np.concatenate([[0], np.cumsum(counts)])
    for c, n in enumerate(counts):
        alone = Solver(AngleChainSet([n], 0.1, [2.0 + c], 0.3, gravity=(0, -9.8)), backend="cpu")
        for frame in range(20):
            alone.set_pose(roots[c:c + 1] + [0.1 * np.sin(frame), 0.0], [0.2 * frame], local[starts[c]:starts[c + 1]])
            alone.advance(1 / 60)
        np.testing.assert_array_equal(alone.positions(), joints[first[c]:first[c + 1]])


def _point_pose(counts, frame):
    joints = []
    for c, n in enumerate(counts):
        joints += [[0.2 * c + 0.05 * np.sin(0.3 * frame), -0.1 * k, 0.02 * frame * (c % 2)] for k in range(n + 1)]
    return np.array(joints)


def test_outputs_read_a_field_at_a_time_or_skipped_are_those_of_every_frame_read_whole():
    """The numpy backends keep a frame's outputs per field until read (FrameOutput): a field
    read alone, a frame whose outputs nobody read, and a restored output all give the records
    a solver that reads everything every frame gives."""
    counts = [3, 1, 4, 2]
    chain_sets = {"point": PointChainSet(counts, 2.5, 0.3, gravity=(0, -9.8, 0)),
                  "angle": AngleChainSet(counts, 0.1, 2.0, 0.4, gravity=(0, -9.8))}
    local = np.random.default_rng(8).uniform(-0.5, 0.5, sum(counts))
    for kind, chain_set in chain_sets.items():
        every, sometimes = (Solver(chain_set, backend="cpu") for _ in range(2))
        for frame in range(9):
            for solver in (every, sometimes):
                if kind == "point":
                    solver.set_pose(_point_pose(counts, frame))
                else:
                    solver.set_pose([[0.1 * frame, 0.0]] * 4, np.full(4, 0.2 * frame), local)
                solver.advance(1 / 60)
            whole = {name: every._backend.read(name) for name in ("joint_output", "segment_output")}
            is_tip = np.ones(sum(counts) + len(counts), bool)
            is_tip[chain_set.first_joint] = False
            tips = whole["joint_output"]["position"][is_tip]
            assert np.all(np.abs(tips).sum(axis=-1) > 0.05), kind  # this frame's joints, not zeros
            assert frame == 0 or not np.array_equal(whole["joint_output"], last), kind
            last = whole["joint_output"]
            if frame % 3 == 2:  # the other solver reads only now, one field at a time
                for name, records in whole.items():
                    for field in records.dtype.names:
                        np.testing.assert_array_equal(sometimes._backend.read_field(name, field), records[field],
                                                      err_msg=f"{kind} {name}.{field}")
                        assert sometimes._backend.read_field(name, field).flags.c_contiguous
                    assert sometimes._backend.read(name).tobytes() == records.tobytes(), (kind, name)
        restored = {name: records.copy() for name, records in whole.items()}
        restored["joint_output"][1] = restored["joint_output"][0]  # something no frame wrote
        sometimes._backend.write_outputs(restored["joint_output"], restored["segment_output"])
        for name, records in restored.items():
            assert sometimes._backend.read(name).tobytes() == records.tobytes(), (kind, name)

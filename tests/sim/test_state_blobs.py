"""Solver states from elsewhere are not trusted: a blob's sizes are checked against its header
before anything is made or read, unknown and compressed members are refused, and every value
goes through the checks of the call that sets it (each blob is made here from a real state)."""
from __future__ import annotations

import io
import tracemalloc
import zipfile

import numpy as np
import pytest

from gpu_jiggle import PointChainSet, Solver
from gpu_jiggle.sim import state

HANG = np.array([[0.0, 0.0, 0.0], [0.0, -0.2, 0.0], [0.0, -0.4, 0.0], [0.0, -0.6, 0.0]])


def _saved() -> dict:
    s = Solver(PointChainSet([3, 3], 3.0, 0.4, gravity=(0.0, -9.8, 0.0)), backend="cpu")
    s.set_pose(np.concatenate([HANG, HANG + [1.0, 0.0, 0.0]]))
    s.advance(1 / 60)
    return state.unpack(s.save_state())


def _peak_bytes(call) -> int:
    """The peak of Python's and numpy's allocations during ``call()`` (which must raise ValueError)."""
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as refused:
            call()
        return tracemalloc.get_traced_memory()[1], str(refused.value)
    finally:
        tracemalloc.stop()


def _with(**changes) -> bytes:
    arrays = _saved()
    arrays.update(changes)
    return state.pack({k: v for k, v in arrays.items() if v is not None})


def test_a_small_blob_claiming_many_segments_is_refused_before_anything_is_built():
    blob = _with(segment_counts=np.array([2 ** 24], np.int64))
    assert len(blob) < 20_000
    peak, message = _peak_bytes(lambda: Solver.load_state(blob, backend="cpu"))
    assert "chain_state does not fit the chain set" in message or "segment_state does not fit" in message, message
    assert peak < 50 * len(blob)  # building it first took 5.7 GB


def test_a_member_whose_header_claims_more_than_it_holds_is_refused_before_it_is_read():
    arrays = _saved()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for name, value in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, value)
            raw = member.getvalue()
            if name == "record.segment_state":  # the header says 2^28 bytes; the data is as saved
                raw = raw.replace(f"'shape': ({value.size},)".encode(), b"'shape': (268435456,)")
            archive.writestr(name + ".npy", raw)
    peak, message = _peak_bytes(lambda: state.unpack(out.getvalue()))
    assert "claims shape (268435456,)" in message
    assert peak < 50 * len(out.getvalue())


def test_compressed_and_unknown_members_are_refused_before_inflating():
    arrays = _saved()
    out = io.BytesIO()
    np.savez_compressed(out, **arrays, **{"input.pad": np.zeros(2 ** 22)})  # 32 MiB in a few KB
    blob = out.getvalue()
    peak, message = _peak_bytes(lambda: state.unpack(blob))
    assert "is compressed" in message and peak < 50 * len(blob)
    for name in ("payload", "record.extra", "option.colour", "chain_set.a.b.c"):
        with pytest.raises(ValueError, match=rf"unknown member '{name}\.npy'"):
            state.unpack(state.pack({**arrays, name: np.zeros(1)}))


@pytest.mark.parametrize("changes, message", [
    ({"input.rest_lengths": np.array([0.2, np.nan, 0.2, 0.2, 0.2, 0.2])},
     r"state rest_lengths\[1\] = nan: expected a finite number"),
    ({"clock": np.array([np.nan, 0, 0, 0, 0, 0, 0, 1.0])}, r"state clock\[0\] = nan: expected a finite number"),
    ({"clock": np.array([0, np.inf, 0, 0, 0, 0, 0, 1.0])}, r"state clock\[1\] = inf: expected a finite number"),
    ({"clock": np.array([0, 2.5, 0, 0, 0, 0, 0, 1.0])}, r"state clock\[1\] = 2.5: expected a whole number"),
    ({"substep": np.array([1 / 120, 1 / 60])}, r"its substep is of shape \(2,\) and dtype float64; expected one"),
    ({"max_substeps": np.array(np.inf)}, r"its max_substeps = inf; expected a finite number"),
    ({"chain_set.frequenzy": np.full(6, 3.0)}, r"chain set parameter 'frequenzy'.*frequency"),
])
def test_bad_values_are_refused_with_what_the_public_checks_say(changes, message):
    blob = _with(**changes)
    with pytest.raises(ValueError, match=message):
        Solver.load_state(blob, backend="cpu")


def test_a_nan_in_a_state_record_is_refused_naming_the_field():
    arrays = _saved()
    records = arrays["record.segment_state"].copy()
    from gpu_jiggle.sim import layouts
    view = records.view(layouts.POINT_SEGMENT_STATE)
    field = next(n for n in view.dtype.names if view.dtype[n].base.kind == "f")
    view[field].reshape(len(view), -1)[1, 0] = np.nan
    blob = _with(**{"record.segment_state": records})
    s = Solver(PointChainSet([3, 3], 3.0, 0.4, gravity=(0.0, -9.8, 0.0)), backend="cpu")
    s.set_pose(np.concatenate([HANG, HANG + [1.0, 0.0, 0.0]]))
    s.advance(1 / 60)
    before = s.positions().copy()
    with pytest.raises(ValueError, match=rf"state segment_state\.{field}\[1(, 0)?\] = nan: expected a finite"):
        s.restore(blob)
    assert s.positions().tobytes() == before.tobytes()  # a refused restore changes nothing
    with pytest.raises(ValueError, match=rf"state segment_state\.{field}"):
        Solver.load_state(blob, backend="cpu")


@pytest.mark.parametrize("field, value, message", [
    ("position", 3.5, r"position\[:, 3\]\[2\] = 3.5: expected 0 \(no axis carried\) or a carried axis's code in \[1, 3\]"),
    ("offset_rate", -1.25, r"offset_rate\[:, 3\]\[2\] = -1.25: expected a carried axis's code in \[-1, 1\]"),
    ("last_offset", np.nan, r"last_offset\[2, 3\] = nan: expected a finite"),
    ("prev_velocity", 0.5, r"prev_velocity\[:, 3\]\[2\] = 0.5: expected .* or 0 where prev_position's w is 0"),
    ("target", 2.0, r"target\[:, 3\]\[2\] = 2.0: expected 0 \(unused\)"),
])
def test_a_carried_axis_code_outside_its_square_is_refused(field, value, message):
    """The axes point segments carry near antiparallel sit in the w of their state's vec4s as
    two-float codes (SPEC 9, "Swings"); a saved state's codes are checked, not trusted: each
    must be (0, 0) (none carried) or lie in [1, 3] × [-1, 1]; target's w is 0. A refused
    restore changes nothing."""
    arrays = _saved()
    records = arrays["record.segment_state"].copy()
    from gpu_jiggle.sim import layouts
    view = records.view(layouts.POINT_SEGMENT_STATE)
    view[field][2, 3] = value
    blob = _with(**{"record.segment_state": records})
    s = Solver(PointChainSet([3, 3], 3.0, 0.4, gravity=(0.0, -9.8, 0.0)), backend="cpu")
    s.set_pose(np.concatenate([HANG, HANG + [1.0, 0.0, 0.0]]))
    s.advance(1 / 60)
    before = s.save_state()
    with pytest.raises(ValueError, match=message):
        s.restore(blob)
    assert s.save_state() == before
    with pytest.raises(ValueError, match=message):
        Solver.load_state(blob, backend="cpu")


@pytest.mark.parametrize("kind", ["point", "angle"])
def test_a_state_saved_with_a_teleport_pending_goes_on_as_the_solver_would(kind):
    """Saved between ``teleport(moving=True)`` (and, for angle chains, a mirror) and the next
    frame, a state restores with its flags and the frame after is the same, bit for bit."""
    from gpu_jiggle import AngleChainSet

    if kind == "point":
        def make():
            return Solver(PointChainSet([3], 3.0, 0.4, gravity=(0.0, -9.8, 0.0)), backend="cpu")

        def pose(solver, x):
            solver.set_pose(HANG + [x, 0.0, 0.0])
    else:
        def make():
            return Solver(AngleChainSet([3], 0.2, 3.0, 0.4, gravity=(0.0, -9.8)), backend="cpu")

        def pose(solver, x):
            solver.set_pose(root_position=[[x, 0.0]], root_angle=[0.3], local_angle=np.full(3, 0.1))
    solver = make()
    pose(solver, 0.0)
    solver.advance(1 / 60)
    pose(solver, 0.5)
    solver.teleport(moving=True, **({"mirror": True} if kind == "angle" else {}))
    blob = solver.save_state()
    restored = Solver.load_state(blob, backend="cpu")
    for s in (solver, restored):
        pose(s, 0.52)
        s.advance(1 / 60)
    assert solver.positions().tobytes() == restored.positions().tobytes()


def test_unknown_teleport_bits_are_refused():
    arrays = _saved()
    for bad in (3, 8, 16, 1 | 32):  # mode 3; a mirror on point chains; bits it never sets
        blob = state.pack({**arrays, "teleport": np.array([0, bad], np.uint32)})
        with pytest.raises(ValueError, match=rf"state teleport\[1\] = {bad}: expected teleport flags"):
            Solver.load_state(blob, backend="cpu")

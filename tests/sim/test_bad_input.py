"""SPEC section 7: every bad input is refused with the stated error, naming the argument,
index and value, and leaves the solver exactly as it was."""
from __future__ import annotations

import re

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, InputError, PointChainSet, Solver, UnstableSpringError

NAN, INF = float("nan"), float("inf")


def chain_set(**overrides):
    args = dict(segment_counts=[2, 3], lengths=1.0, frequency=2.0, damping_ratio=0.5)
    args.update(overrides)
    return AngleChainSet(**args)


@pytest.mark.parametrize("overrides, message", [
    ({"segment_counts": [2, 0]}, "segment_counts[1] = 0"),
    ({"segment_counts": [2, -1]}, "segment_counts[1] = -1"),
    ({"segment_counts": [[2, 3]]}, "segment_counts: expected a 1-D"),
    ({"lengths": [1, 1, 1, 0, 1]}, "lengths[3] = 0.0"),
    ({"lengths": [1, -2.0]}, "lengths[1] = -2.0"),  # per chain: the index of the value as given
    ({"lengths": [1, 1, NAN, 1, 1]}, "lengths[2] = nan"),
    ({"lengths": [1, 1, 1]}, "lengths: expected a scalar, one value per chain (2,) or one per segment (5,)"),
    ({"frequency": 0.0}, "frequency = 0.0"),
    ({"frequency": [2, 2, 2, 2, INF]}, "frequency[4] = inf"),
    ({"damping_ratio": -0.1}, "damping_ratio = -0.1"),
    ({"inertia": [1, -1e-3]}, "inertia[1] = -0.001"),
    ({"angle_limit": 0.0}, "angle_limit = 0.0"),
    ({"angle_limit": NAN}, "angle_limit = nan"),
    ({"gravity": (0, NAN)}, "gravity[1] = nan"),
    ({"gravity": (0, 0, -9.8)}, "gravity: expected one vector (2,) for every chain or one per chain (2, 2), got shape (3,)"),
    ({"gravity": [(0, -9.8)] * 3}, "gravity: expected one vector (2,) for every chain or one per chain (2, 2), got shape (3, 2)"),
    ({"gravity": [(0, -9.8), (0, np.inf)]}, "gravity[1, 1] = inf"),
])
def test_chain_set_refuses(overrides, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        chain_set(**overrides)


@pytest.mark.parametrize("overrides, error", [
    ({"segment_counts": [2.5, 1]}, TypeError),
    ({"lengths": "long"}, TypeError),
    ({"frequency": None}, TypeError),
])
def test_chain_set_refuses_types(overrides, error):
    with pytest.raises(error):
        chain_set(**overrides)


def test_unstable_frequency_names_the_largest_stable_one():
    with pytest.raises(ValueError, match=r"frequency\[0\] = 40.0 Hz .* largest stable frequency .* 15.82 Hz"):
        Solver(chain_set(frequency=40.0, damping_ratio=1.0), backend="cpu")


def test_bad_solver_settings():
    with pytest.raises(ValueError, match="backend = 'cuda'"):
        Solver(chain_set(), backend="cuda")
    with pytest.raises(TypeError, match="chain_set"):
        Solver([2, 3])
    with pytest.raises(ValueError, match="substep = -0.01"):
        Solver(chain_set(), backend="cpu", substep=-0.01)


def moving_solver(backend):
    s = Solver(chain_set(inertia=0.7, gravity=(0, -9.8), angle_limit=1.0), backend=backend)
    for i in range(10):
        s.set_pose([[0.1 * i, 0.0], [1.0, 0.2 * i]], [0.1 * i, -0.3], np.linspace(-0.4, 0.4, 5))
        s.advance(1 / 50)
    return s


def assert_same_state(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], np.ndarray):
            assert a[key].tobytes() == b[key].tobytes(), key
        elif isinstance(a[key], tuple):
            for x, y in zip(a[key], b[key]):
                assert np.asarray(x).tobytes() == np.asarray(y).tobytes(), key
        else:
            assert a[key] == b[key], key


BAD_CALLS = [
    # (call, error, message fragment)
    (lambda s: s.set_pose([[0, 0]], [0, 0], np.zeros(5)), ValueError, "root_position: expected shape (2, 2), got (1, 2)"),
    (lambda s: s.set_pose([[0, 0], [0, NAN]], [0, 0], np.zeros(5)), ValueError, "root_position[1, 1] = nan"),
    (lambda s: s.set_pose([[0, 0], [0, 0]], [0, INF], np.zeros(5)), ValueError, "root_angle[1] = inf"),
    (lambda s: s.set_pose([[0, 0], [0, 0]], [0, 0], np.zeros(4)), ValueError, "local_angle: expected shape (5,)"),
    (lambda s: s.set_pose([[0, 0], [0, 0]], [0, 0], ["a"] * 5), TypeError, "local_angle"),
    (lambda s: s.teleport([0, 2]), ValueError, "chains[1] = 2: expected a chain index in [0, 2)"),
    (lambda s: s.teleport([-1]), ValueError, "chains[0] = -1"),
    (lambda s: s.teleport([0.5]), TypeError, "chains"),
    (lambda s: s.teleport(0, keep_shape="yes"), TypeError, "keep_shape"),
    (lambda s: s.advance(-1 / 60), ValueError, "frame_dt = -0.016"),
    (lambda s: s.advance(NAN), ValueError, "frame_dt = nan"),
    (lambda s: s.advance(INF), ValueError, "frame_dt = inf"),
    (lambda s: s.advance("1/60"), TypeError, "frame_dt"),
    (lambda s: s.set_parameters(frequency=-1.0), ValueError, "frequency = -1.0"),
    (lambda s: s.set_parameters(frequency=[2, 2, 2, 2, 90.0]), ValueError, "frequency[4] = 90.0 Hz"),
    (lambda s: s.set_parameters(damping_ratio=[0.5, NAN]), ValueError, "damping_ratio[1] = nan"),
    (lambda s: s.set_parameters(angle_limit=-1.0), ValueError, "angle_limit = -1.0"),
    (lambda s: s.set_parameters(inertia=-2.0), ValueError, "inertia = -2.0"),
    (lambda s: s.set_parameters(gravity=(NAN, 0)), ValueError, "gravity[0] = nan"),
    (lambda s: s.set_parameters(stiffness=3.0), TypeError, "unknown parameter 'stiffness'"),
]


def assert_refusal_changes_nothing(make_solver, call, error, message):
    """``call`` on a solver from ``make_solver()`` raises ``error`` with ``message``, leaves
    the full state byte-identical, and the next frame equals a twin's that never saw it."""
    s = make_solver()
    before = s.state()
    with pytest.raises(error, match=re.escape(message)):
        call(s)
    assert_same_state(before, s.state())
    s.advance(1 / 60)
    twin = make_solver()
    twin.advance(1 / 60)
    assert s.positions().tobytes() == twin.positions().tobytes()


@pytest.mark.parametrize("call, error, message", BAD_CALLS)
def test_refused_call_changes_nothing(backend, call, error, message):
    assert_refusal_changes_nothing(lambda: moving_solver(backend), call, error, message)


def test_read_and_advance_before_a_pose(backend):
    s = Solver(chain_set(), backend=backend)
    with pytest.raises(RuntimeError, match="set_pose"):
        s.advance(1 / 60)
    with pytest.raises(RuntimeError, match="before the first advance"):
        s.positions()
    assert s.sim_time == 0.0


def test_empty_chain_set(backend):
    s = Solver(AngleChainSet([], 1.0, 2.0, 0.5), backend=backend)
    s.set_pose(np.zeros((0, 2)), np.zeros(0), np.zeros(0))
    assert s.advance(1 / 30) == 4
    assert s.positions().shape == (0, 2)
    assert s.angles().shape == (0,)
    assert s.angular_velocities(raw=True).shape == (0,)


def test_missing_context_says_how_to_get_one(monkeypatch):
    import gpu_jiggle.gl.context as context

    def refuse(**kwargs):
        raise Exception("eglGetDisplay failed")

    monkeypatch.setattr(context, "_context", None)
    monkeypatch.setattr(context, "_failure", None)
    monkeypatch.setattr(context.moderngl, "create_standalone_context", refuse)
    with pytest.raises(RuntimeError, match=r"llvmpipe.*backend=\"cpu\"") as info:
        Solver(chain_set(), backend="gpu")
    assert "EGL" in str(info.value)
    # "auto" falls back to the reference and says so.
    assert Solver(chain_set(), backend="auto").backend == "cpu"



def test_an_unstable_spring_is_named_by_its_chain_and_segment():
    """The solver checks the flat per-segment arrays; its refusal also names the chain and
    the segment within it, however the values were given."""
    with pytest.raises(UnstableSpringError, match=r"^frequency\[4\] = 90.0 Hz with damping_ratio\[4\] = 0.5 "
                                                  r"\(segment 1 of chain 1\) is unstable") as refused:
        Solver(PointChainSet([3, 2], frequency=[3.0, 3.0, 3.0, 3.0, 90.0], damping_ratio=0.5), backend="cpu")
    assert refused.value.index == 4 and refused.value.argument == "frequency"
    solver = Solver(PointChainSet([3, 2], frequency=[3.0, 20.0], damping_ratio=0.5), backend="cpu")  # per chain
    with pytest.raises(UnstableSpringError, match=r"^frequency\[3\] = 20.0 Hz with damping_ratio\[3\] = 0.5 "
                                                  r"\(segment 0 of chain 1\) is unstable .* level of detail 'half'"):
        solver.set_lod(["full", "half"])


def test_the_first_bad_entry_is_named_whichever_way_it_is_bad():
    """SPEC 7: the first offending index, whether it is out of range or not finite (a NaN after
    an out-of-range coordinate does not take its place)."""
    from gpu_jiggle.sim import validation

    with pytest.raises(validation.InputError) as raised:
        validation.coordinates("root_position", [[0.0, 1e16], [np.nan, 0.0]])
    assert raised.value.index == 1 and "root_position[0, 1]" in str(raised.value) and "within" in str(raised.value)
    with pytest.raises(validation.InputError) as raised:
        validation.coordinates("root_position", [[0.0, np.inf], [1e16, 0.0]])
    assert "root_position[0, 1]" in str(raised.value) and "finite" in str(raised.value)
    with pytest.raises(validation.InputError) as raised:
        validation.float_array("lengths", [0.1, 1e39, np.nan])
    assert raised.value.index == 1 and "float32 range" in str(raised.value)


@pytest.mark.parametrize("entry, why", [(None, r"got NoneType None"), ({"x": 1}, r"got dict \{'x': 1\}")])
def test_a_pose_entry_that_is_no_number_is_named(entry, why):
    """None or a dict among the numbers: the error names its place and what it is, where
    numpy saw only an array of objects."""
    solver = Solver(PointChainSet([1], 2.0, 0.5), backend="cpu")
    with pytest.raises(TypeError, match=r"joint_positions\[1, 2\]: expected real numbers, " + why):
        solver.set_pose([[0.0, 0.0, 0.0], [0.0, -0.1, entry]])
    with pytest.raises(TypeError, match=r"joint_positions: expected real numbers, got list holding text"):
        solver.set_pose([[0.0, 0.0, 0.0], [0.0, -0.1, "0.2"]])


def test_a_python_int_past_float64_is_a_bad_value_named_with_its_place():
    """10**400 is a number, too large for any float: an InputError (a ValueError) with its
    place, as a float out of range gets, its value shown by its ends and length."""
    solver = Solver(PointChainSet([1], 2.0, 0.5), backend="cpu")
    with pytest.raises(InputError, match=r"joint_positions\[1, 2\] = 1000.*\(401 characters\): expected a number "
                                         r"within float32 range") as caught:
        solver.set_pose([[0.0, 0.0, 0.0], [0.0, -0.1, 10 ** 400]])
    assert caught.value.index == 5 and caught.value.indices == (1, 2) and caught.value.value == 10 ** 400

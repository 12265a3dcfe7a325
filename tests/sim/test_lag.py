"""SPEC section 6: first-order lag, on both backends."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import LagFollower


def test_half_life_halves_the_distance(backend):
    lag = LagFollower(0.25, np.zeros((3, 2)), backend=backend)
    assert lag.backend == backend
    target = np.array([[1.0, -2.0], [4.0, 0.0], [-8.0, 16.0]])
    out = lag.update(target, 0.25)
    np.testing.assert_allclose(out, target / 2, rtol=1e-6)
    assert out.shape == (3, 2) and out.dtype == np.float32


def test_two_half_steps_equal_one_whole_step(backend):
    rng = np.random.default_rng(0)
    start, target = rng.normal(size=1000), rng.normal(size=1000)
    half_lives = rng.uniform(0.05, 2.0, 1000)
    whole = LagFollower(half_lives, start, backend=backend)
    halves = LagFollower(half_lives, start, backend=backend)
    for dt in rng.uniform(0, 0.1, 20):
        a = whole.update(target, dt)
        halves.update(target, dt / 2)
        b = halves.update(target, dt / 2)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)  # float32 rounding of exp and products, 20 steps
    assert np.all(np.abs(a - target) <= np.abs(start - target))  # never overshoots


def test_backends_agree(gl):
    rng = np.random.default_rng(1)
    start, half_lives = rng.normal(size=500), rng.uniform(0.05, 2.0, 500)
    cpu = LagFollower(half_lives, start, backend="cpu")
    gpu = LagFollower(half_lives, start, backend="gpu")
    for _ in range(50):
        target, dt = rng.normal(size=500), rng.uniform(0, 0.05)
        np.testing.assert_allclose(gpu.update(target, dt), cpu.update(target, dt), rtol=0, atol=1e-5)


@pytest.mark.parametrize("args, error, message", [
    ((0.0, [1.0]), ValueError, "half_life = 0.0"),
    ((-1.0, [1.0]), ValueError, "half_life = -1.0"),
    (([0.1, 0.2], [1.0, 2.0, 3.0]), ValueError, "half_life: expected a scalar or 3 values"),
    ((0.1, [1.0, float("nan")]), ValueError, r"initial\[1\] = nan"),
])
def test_bad_construction(args, error, message):
    with pytest.raises(error, match=message):
        LagFollower(*args, backend="cpu")


def test_bad_update_changes_nothing(backend):
    lag = LagFollower(0.1, [0.0, 1.0], backend=backend)
    lag.update([1.0, 1.0], 0.05)
    before = lag.value
    with pytest.raises(ValueError, match="dt = -0.1"):
        lag.update([2.0, 2.0], -0.1)
    with pytest.raises(ValueError, match=r"target\[0\] = inf"):
        lag.update([np.inf, 2.0], 0.1)
    with pytest.raises(ValueError, match=r"target: expected shape \(2,\)"):
        lag.update([1.0], 0.1)
    assert lag.value.tobytes() == before.tobytes()

"""SPEC 2, the target path at low frame rates (``gpu-jiggle verify`` row "low frame rates"):
the default path keeps a soft chain's flop and a dead stop at 10-20 fps as at 240 fps, where
the chord-tangent Hermite overshoots the stop."""
from __future__ import annotations

import pytest

from gpu_jiggle import verify
from gpu_jiggle.verify import low_rates


@pytest.fixture(scope="module")
def dense():
    return (low_rates.bob_deflection("cpu", 240, "monotone"), low_rates.stop_swing_deg("cpu", 240, "monotone"))


@pytest.mark.parametrize("fps", [10, 15, 20])
def test_the_default_path_keeps_the_flop_and_the_stop(dense, fps):
    bob, stop = dense
    assert abs(low_rates.bob_deflection("cpu", fps, "monotone") / bob - 1.0) <= 0.05
    assert low_rates.stop_swing_deg("cpu", fps, "monotone") - stop <= 0.2


def test_the_chord_tangent_path_overshoots_a_dead_stop_at_10_fps():
    """What the monotone path fixes: the Hermite whose end tangent is the frame's chord keeps
    the body's speed into the frame after it stopped, and the chain swings on."""
    stop = low_rates.stop_swing_deg("cpu", 240, "hermite")
    assert low_rates.stop_swing_deg("cpu", 10, "hermite") - stop > 0.4


def test_the_row_is_in_the_verify_table():
    assert verify.low_frame_rates in verify.CHECKS

"""Model v2's field scenarios (the table of what v2 requires, SPEC 2-4 and 8.3, 8.7, 8.8), on
both backends, through the same checks ``gpu-jiggle verify`` runs."""
from __future__ import annotations

import pytest

from gpu_jiggle import verify


def test_ears_match_a_dense_run_at_every_frame_rate(backend):
    r = verify.ear_frame_rates(backend)
    assert r.details["30 fps peak error (limit 0.03)"] <= 0.03
    for fps in (60, 144, 165):
        assert r.details[f"{fps} fps peak error (limit 0.01)"] <= 0.01
    # The v1 path is what v2 fixes: at 30 fps it is clearly worse.
    assert r.details["v1 30 fps peak error (not held)"] > 2 * r.details["30 fps peak error (limit 0.03)"]
    assert r.passed


def test_chains_track_a_moving_and_a_turning_body(backend):
    r = verify.tracking(backend)
    assert r.figure <= 0.005
    assert r.details["turning 1 turn/s: tip lag, degrees (limit 1)"] <= 1.0
    # v1's world damping trails by 2ζV/ω0 and lags the turn by tens of degrees.
    assert r.details["v1: carried at 2 units/s / chain length (not held)"] > 0.5
    assert r.details["v1: turning, tip lag, degrees (not held)"] > 30
    assert r.passed


def test_thin_bar_and_spinning_head_stay_outside(backend):
    r = verify.contact(backend)
    assert r.details["thin bar: worst depth / chain length"] <= 1e-4
    assert r.details["thin bar: tip pushed aside to x, units (> 0.1)"] > 0.1  # the bar pushed it
    assert r.details["spinning head: worst depth / chain length"] <= 1e-4
    # The strands do lie on the head (animated into it; v1's frame-time output showed them 3.6 %
    # of their length inside): joints past the first segment come within 2.5 cm of its surface.
    # Nearest on the first frame after the snap, as its second substep leaves them: 2.08 cm (the
    # blend of the last two substeps drew its first substep there, 1.53 cm); 3-4 cm after it.
    nearest = r.details["spinning head: closest joint past the first segment to the head's surface, units (not held)"]
    assert nearest < 0.025
    assert r.passed


def test_chains_anywhere_move_like_at_the_origin(backend):
    r = verify.precision(backend)
    for key, value in r.details.items():
        if key.startswith("angle"):
            assert value <= 0.01, key
        else:
            assert value <= 1e-5, key
    assert r.passed


@pytest.mark.parametrize("check", [verify.ear_frame_rates, verify.tracking, verify.contact, verify.precision])
def test_field_checks_are_in_the_verify_table(check):
    assert check in verify.CHECKS


@pytest.mark.parametrize("kind", ["point", "angle"])
def test_level_of_detail_switches_are_not_seen_on_a_walking_body(backend, kind):
    """The ``verify`` row's run at 30 fps with the switches on frames that run the half rate:
    the first frame after each switch moves no more than the largest frame before it, and 1 s
    after the return to full rate the chain is within 2° of one that never switched (before:
    1.8 (point) and 3.9 (angle) times the largest motion, and 42° and 22°)."""
    from gpu_jiggle.verify.lod import switch_run

    run = switch_run(backend, kind, 30, offset_frames=1)
    assert max(run["ratios"]) <= 1.001
    assert run["settled_deg"] <= 2.0

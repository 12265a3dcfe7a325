"""The verify checks of cone, hinge and spherical limits and inside colliders (docs/SPEC.md
section 9, "Angle limits" and "Inside colliders"): point chains driven hard, never outside
their limits or the inside sphere and capsule. The bounds are written here, not taken from
the checks.
"""
from __future__ import annotations

import pytest

from gpu_jiggle import verify

#: Never more than this outside a cone (rad) or beyond an inside collider's wall (units).
LIMIT_TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def check_result():
    """``check_result(check, backend)``: ``verify.<check>(backend)``, run once for this module;
    the listing test reads the CPU runs that the checks' own tests made."""
    results = {}

    def result(check, backend):
        if (check, backend) not in results:
            results[check, backend] = getattr(verify, check)(backend)
        return results[check, backend]
    return result


def _detail(r, start):
    keys = [k for k in r.details if k.startswith(start)]
    assert len(keys) == 1, (start, list(r.details))
    return r.details[keys[0]]


def test_cone_limit_check(backend, check_result):
    r = check_result("cone_limit", backend)
    assert r.passed, (r.figure, r.details)
    assert r.name == "cone_limit" and r.title == "cone limit" and r.bound == "<"
    assert r.figure < LIMIT_TOLERANCE
    assert _detail(r, "raw states after a substep: largest angle outside") < LIMIT_TOLERANCE
    assert _detail(r, "frame-time read-backs: largest angle outside") < LIMIT_TOLERANCE
    assert _detail(r, "limit-0 chain: largest angle off its target") < LIMIT_TOLERANCE
    assert _detail(r, "segment-frames pressed against their cone") > 0  # the limits acted
    # Without a limit the chain swings far beyond the largest cone (0.5 rad).
    assert _detail(r, "unlimited chain: largest angle off its target") > 0.5


def test_inside_colliders_check(backend, check_result):
    r = check_result("inside_colliders", backend)
    assert r.passed, (r.figure, r.details)
    assert r.name == "inside_colliders" and r.title == "inside colliders" and r.bound == "<"
    assert r.figure < LIMIT_TOLERANCE
    for shape in ("sphere", "capsule"):
        assert _detail(r, f"{shape}: largest distance beyond the allowed region") < LIMIT_TOLERANCE
        assert _detail(r, f"{shape}: particle-frames touching the wall") > 0  # the wall acted


@pytest.mark.parametrize("check, kind", [("hinge_limit", "hinge"), ("spherical_limit", "ellipse")])
def test_joint_frame_limit_checks(backend, check, kind, check_result):
    r = check_result(check, backend)
    assert r.passed, (r.figure, r.details)
    assert r.name == check and r.title == check.replace("_", " ") and r.bound == "<"
    assert r.figure < LIMIT_TOLERANCE
    assert _detail(r, f"raw states after a substep: largest angle outside the {kind}") < LIMIT_TOLERANCE
    assert _detail(r, f"frame-time read-backs: largest angle outside the {kind}") < LIMIT_TOLERANCE
    assert _detail(r, f"segment-frames pressed against their {kind}") > 100  # the limits acted
    if kind == "hinge":
        assert _detail(r, "largest angle off the hinge plane") < LIMIT_TOLERANCE


def test_limit_checks_are_listed_and_plotted(tmp_path, check_result):
    pytest.importorskip("matplotlib")
    exact = verify.CHECKS.index(verify.exact_integrator)
    assert verify.CHECKS[exact + 1:exact + 5] == (verify.cone_limit, verify.inside_colliders, verify.hinge_limit,
                                                  verify.spherical_limit)
    results = [check_result(check, "cpu") for check in ("cone_limit", "inside_colliders", "hinge_limit",
                                                        "spherical_limit")]
    paths = verify.write_plots(results, tmp_path)
    assert [p.name for p in paths] == ["cone_limit.png", "inside_colliders.png", "hinge_limit.png",
                                       "spherical_limit.png"]
    assert all(p.stat().st_size > 10_000 for p in paths)

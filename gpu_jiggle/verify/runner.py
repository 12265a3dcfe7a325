"""Running the SPEC section 8 checks: the list of them (:data:`CHECKS`), :func:`run_all`, the
text table (:func:`format_table`) and the PNG plots (:func:`write_plots`, which draws with
:mod:`gpu_jiggle.verify.plots` and is the only way in to matplotlib).
"""
from __future__ import annotations

import math
from pathlib import Path

from ..extras import require
from .angle import free_decay, frame_rates, rest, teleport, wraparound
from .cross import cross_check, point_cross_check
from .cut import cut_response
from .field import FIELD_CHECKS
from .integrator import exact_integrator
from .joint_limits import hinge_limit, spherical_limit
from .limits import cone_limit, inside_colliders
from .lod import lod_switches
from .low_rates import low_frame_rates
from .point import point_free_decay, point_rest
from .point_motion import point_frame_rates, point_teleport
from .result import CheckResult

#: The resolution of the written plots, dots per inch.
PLOT_DPI = 100

#: Every check ``run_all`` runs: the angle chains', the point chains' (all four force
#: variants each), then model v2's field scenarios (:mod:`gpu_jiggle.verify.field`), the
#: target path at low frame rates (:mod:`gpu_jiggle.verify.low_rates`), the cut row (:mod:`gpu_jiggle.verify.cut`), the exact integrator's
#: (:mod:`gpu_jiggle.verify.integrator`), the cone limits and inside colliders of point
#: chains (:mod:`gpu_jiggle.verify.limits`) and their hinge and spherical limits
#: (:mod:`gpu_jiggle.verify.joint_limits`), then level-of-detail switches on a walking body
#: (:mod:`gpu_jiggle.verify.lod`).
CHECKS = ((free_decay, rest, frame_rates, wraparound, teleport, cross_check,
           point_free_decay, point_rest, point_frame_rates, point_teleport, point_cross_check)
          + FIELD_CHECKS + (low_frame_rates, cut_response, exact_integrator, cone_limit, inside_colliders, hinge_limit,
                           spherical_limit, lod_switches))


def run_all(backend: str, checks=None) -> list[CheckResult]:
    """Run every check of ``checks`` (default :data:`CHECKS`) on ``backend`` (``"cpu"`` or
    ``"gpu"``); the cross-check runs when an OpenGL 4.3 context can be made and is reported
    as skipped otherwise.

    A check that raises is reported as failed, with the exception in its note, and the
    others still run: one broken check should not hide what the rest measured.
    """
    results = []
    for check in CHECKS if checks is None else checks:
        try:
            results.append(check(backend))
        except Exception as exc:  # reported in the table, not swallowed
            name = check.__name__
            results.append(CheckResult(name, name.replace("_", " "), math.nan, math.nan, False, "the check raised",
                                       note=f"error: {type(exc).__name__}: {exc}"))
    return results


def format_table(results) -> str:
    """The results as a text table: check, figure, limit, pass/fail; then the details."""
    rows = [("check", "figure", "limit", "result")]
    for r in results:
        unit = f" {r.unit}" if r.unit else ""
        figure = "-" if r.passed is None else f"{r.figure:.3g}{unit}"
        rows.append((r.title, figure, f"{r.bound} {r.limit:.3g}{unit}", r.status))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("")
    for r in results:
        lines.append(f"{r.title}: {r.measure}")
        if r.note:
            lines.append(f"    {r.note}")
        for name, value in r.details.items():
            text = f"{value:.4g}" if isinstance(value, float) else str(value)
            lines.append(f"    {name}: {text}")
    return "\n".join(lines)



def write_plots(results, out_dir) -> list[Path]:
    """One PNG per check that has traces, into ``out_dir`` (made if missing), named after the
    check (``decay.png``, ...). Returns the paths.

    Figures are drawn with matplotlib's object API on the Agg canvas (no pyplot), so this
    neither needs a display nor changes the caller's matplotlib backend. matplotlib is
    imported here, not when :mod:`gpu_jiggle.verify` is.
    """
    require("matplotlib", "writing verify's plots")
    from .plots import PAINTERS

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for r in results:
        if r.name not in PAINTERS or not r.traces:
            continue
        fig, title = PAINTERS[r.name](r)
        fig.suptitle(f"{title} [{r.status}]")
        path = out / f"{r.name}.png"
        fig.savefig(path, dpi=PLOT_DPI)
        written.append(path)
    return written

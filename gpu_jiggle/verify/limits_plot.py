"""The PNG plots of the limit and inside-collider checks (:mod:`gpu_jiggle.verify.limits`,
:mod:`gpu_jiggle.verify.joint_limits`; docs/SPEC.md section 9, "Angle limits" and "Inside
colliders"), by check name in
:data:`LIMIT_PAINTERS`, which :data:`gpu_jiggle.verify.plots.PAINTERS` takes in.

Imported only through :mod:`gpu_jiggle.verify.plots`, when plots are written; figures use
matplotlib's object API on the Agg canvas, like the others.
"""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

#: The tip distances are drawn over the first this many seconds, s.
WINDOW = 3.0


def _plot_cone_limit(r):
    """Angle off target vs time for one segment per chain (raw after each substep, and read
    back), with each limit; and the largest angle outside the cone per frame."""
    tr = r.traces
    fig = Figure(figsize=(15, 4.8), layout="constrained")
    ax, excess_ax = fig.subplots(1, 2, width_ratios=(2, 1))
    time = tr["time"]
    for j, (beta, seg, n) in enumerate(zip(tr["limits"], tr["segment"], tr["counts"])):
        colour = f"C{j}"
        name = "no limit" if not np.isfinite(beta) else f"limit {beta:g} rad"
        ax.plot(time, tr["raw"][:, j], "-", color=colour, lw=1, label=f"{name}: segment {seg + 1} of {n}, raw")
        ax.plot(time, tr["read"][:, j], ".", color=colour, ms=2, label="read back")
        if np.isfinite(beta):
            ax.axhline(beta, color=colour, ls="--", lw=1)
    ax.plot([], [], "k--", lw=1, label="the limits")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("angle off the target direction (rad)")
    ax.set_title("spun at 2 turns/s about the vertical, with hitches and gravity", fontsize=9)
    ax.legend(fontsize=7, ncol=2, loc="upper right")
    scale = 1e6
    excess_ax.plot(time, scale * tr["excess"], ".", ms=2, color="C0", label="largest, limited segments")
    excess_ax.axhline(scale * r.limit, color="C3", ls="--", label=f"limit {r.limit:g} rad")
    excess_ax.set_ylim(-0.5 * scale * r.limit, 1.5 * scale * r.limit)
    excess_ax.set_xlabel("time (s)")
    excess_ax.set_ylabel("angle outside the cone (µrad; negative: inside)")
    excess_ax.set_title("per frame, raw and read back", fontsize=9)
    excess_ax.legend(fontsize=7, loc="upper right")
    return fig, f"cone limit: segments held within their cones (worst {r.figure:.2g} rad outside)"


def _plot_inside_colliders(r):
    """Per shape: each chain tip's distance from the centre (sphere) or axis (capsule) over
    the first ``WINDOW`` seconds, with the allowed radius; and the largest distance of any
    particle beyond it per frame, the whole run."""
    shapes = r.traces["shapes"]
    fig = Figure(figsize=(16, 4.8), layout="constrained")
    axes = fig.subplots(1, len(shapes) + 1)
    scale = 1e6
    for j, (ax, (name, tr)) in enumerate(zip(axes, shapes.items())):
        shown = tr["time"] <= WINDOW
        for c in range(tr["tip raw"].shape[1]):
            ax.plot(tr["time"][shown], tr["tip raw"][shown, c], lw=0.9, color=f"C{c}", label=f"tip of chain {c}")
        ax.axhline(tr["allowed"], color="k", ls="--", lw=1, label=f"allowed: radius - ρ = {tr['allowed']:g}")
        ax.set_xlabel("time (s)")
        ax.set_ylabel(f"distance from the {'centre' if name == 'sphere' else 'axis'} (units)")
        ax.set_title(f"inside {name}: tips (raw), first {WINDOW:g} s of {tr['time'][-1]:.0f}", fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
        axes[-1].plot(tr["time"], scale * tr["worst"], ".", ms=1.5, color=f"C{j}", label=name)
    ax = axes[-1]
    ax.axhline(scale * r.limit, color="C3", ls="--", label=f"limit {r.limit:g}")
    ax.set_ylim(-0.5 * scale * r.limit, 1.5 * scale * r.limit)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("largest distance beyond the wall (µunits; < 0: inside)")
    ax.set_title("per frame, raw and read back, every particle", fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    return fig, (f"inside colliders: hitches, gravity and gusty wind, particles held inside a sphere and a "
                 f"capsule (worst {r.figure:.2g} units beyond)")


def _excess_panel(ax, r, what):
    """The largest angle outside the limit per frame, µrad, with the check's bound."""
    scale = 1e6
    ax.plot(r.traces["time"], scale * r.traces["excess"], ".", ms=2, color="C0", label="largest, every segment")
    ax.axhline(scale * r.limit, color="C3", ls="--", label=f"limit {r.limit:g} rad")
    ax.set_ylim(-0.5 * scale * r.limit, 1.5 * scale * r.limit)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"angle outside the {what} (µrad; negative: inside)")
    ax.set_title("per frame, raw and read back", fontsize=9)
    ax.legend(fontsize=7, loc="upper right")


def _plot_hinge_limit(r):
    """Each chain tip's angle about its hinge axis (read back) with its range; the largest
    angle outside any hinge per frame."""
    tr = r.traces
    fig = Figure(figsize=(15, 4.8), layout="constrained")
    ax, excess_ax = fig.subplots(1, 2, width_ratios=(2, 1))
    for j, ((lo, hi), n) in enumerate(zip(tr["bounds"], tr["counts"])):
        ax.plot(tr["time"], tr["theta"][:, j], "-", color=f"C{j}", lw=1, label=f"range [{lo:.2g}, {hi:.2g}]: tip of {n}")
        for bound in (lo, hi):
            ax.axhline(bound, color=f"C{j}", ls="--", lw=0.8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("angle about the hinge axis from the target direction (rad)")
    ax.set_title(f"spun at 2 turns/s with a wobbling joint twist (largest off the plane "
                 f"{np.arcsin(tr['off'].max()):.2g} rad)", fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    _excess_panel(excess_ax, r, "hinge")
    return fig, f"hinge limit: segments held in their plane and range (worst {r.figure:.2g} rad outside)"


def _plot_spherical_limit(r):
    """Each chain tip's swing vector (pitch, yaw) over the run with its ellipse; the largest
    angle outside any ellipse per frame."""
    tr = r.traces
    fig = Figure(figsize=(15, 4.8), layout="constrained")
    ax, excess_ax = fig.subplots(1, 2, width_ratios=(1, 1))
    psi = np.linspace(0.0, 2 * np.pi, 200)
    for j, ((pitch, yaw), n) in enumerate(zip(tr["limits"], tr["counts"])):
        ax.plot(tr["swing"][:, j, 0], tr["swing"][:, j, 1], ".", ms=1.5, color=f"C{j}",
                label=f"({pitch:.2g}, {yaw:.2g}) rad: tip of {n}")
        ax.plot(pitch * np.cos(psi), yaw * np.sin(psi), "--", color=f"C{j}", lw=0.8)
    ax.set_aspect("equal")
    ax.set_xlabel("pitch: swing about the limit axis (rad)")
    ax.set_ylabel("yaw (rad)")
    ax.set_title("tips' swing vectors, read back, and their ellipses", fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    _excess_panel(excess_ax, r, "ellipse")
    return fig, f"spherical limit: swings held in their ellipses (worst {r.figure:.2g} rad outside)"


#: The painter of each check of :mod:`gpu_jiggle.verify.limits` and
#: :mod:`gpu_jiggle.verify.joint_limits`, by :attr:`CheckResult.name`.
LIMIT_PAINTERS = {"cone_limit": _plot_cone_limit, "inside_colliders": _plot_inside_colliders,
                  "hinge_limit": _plot_hinge_limit, "spherical_limit": _plot_spherical_limit}

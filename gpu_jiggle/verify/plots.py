"""The PNG plots of the SPEC section 8 checks: one painter per check, ``painter(result) ->
(figure, title)``, by check name in :data:`PAINTERS` (:func:`gpu_jiggle.verify.write_plots`
saves them). Each draws a :class:`~gpu_jiggle.verify.result.CheckResult`'s traces.

Only this module and :mod:`~gpu_jiggle.verify.limits_plot` (whose painters it takes in) import
matplotlib, and nothing imports them until plots are written. Figures use the object API on the
Agg canvas (no pyplot state), so drawing needs no display and leaves the caller's backend alone.
"""
from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from .cross import CROSS_FIRST_FRAME_TOLERANCE, POINT_CROSS_FIRST_FRAME_TOLERANCE
from .limits_plot import LIMIT_PAINTERS
from .measure import wrap
from .scenarios import SUBSTEP, TWO_PI


def _figure(figsize):
    """An empty figure of ``figsize`` (width, height) inches on the Agg canvas."""
    return Figure(figsize=figsize, layout="constrained")


def _label_decay_panel(ax, log_ax, tr, k: int, bottom: bool, ylabel: str) -> None:
    """Title and axis labels of chain ``k``'s panel in a free-decay plot (``bottom``: the
    panel is in the bottom row, where the time axis is labelled)."""
    log_ax.set_ylabel("|peak| (rad, log)", fontsize=8)
    ax.set_title(f"chain {k}: segment {tr['depth'][k] + 1} of {tr['segment_counts'][k]}, "
                 f"f={tr['frequency'][k]:g} Hz, ζ={tr['damping_ratio'][k]:g}", fontsize=9)
    ax.set_ylabel(ylabel)
    if bottom:
        ax.set_xlabel("time (s)")


def _plot_decay(r):
    tr = r.traces
    n = len(tr["segment"])
    fig = _figure((15, 7))
    axes = fig.subplots(2, (n + 1) // 2, sharex=True)
    for k, ax in enumerate(axes.flat[:n]):
        dev = tr["deviation"][:, k]
        idx = tr["peak_index"][k]
        line, = ax.plot(tr["time"], dev, lw=1.0, label="angle - target (left)")
        dots, = ax.plot(tr["time"][idx], dev[idx], "o", ms=3.5, color="C3", label="half-cycle peaks (left)")
        mark = ax.axvline(600 * SUBSTEP, color="0.5", ls=":", lw=1, label="600 substeps")
        log_ax = ax.twinx()
        logs, = log_ax.semilogy(tr["time"][idx], tr["peak_value"][k], ".-", color="C2", lw=0.8, ms=3,
                                label="|peak| (right, log)")
        _label_decay_panel(ax, log_ax, tr, k, k >= n - axes.shape[1], "deviation from target (rad)")
        ax.legend(handles=[line, dots, logs, mark], fontsize=7, loc="upper right")
    return fig, (f"1 free decay: one displaced segment per chain, targets pinned "
                 f"(largest peak ratio {r.figure:.3f})")


def _plot_rest(r):
    tr = r.traces
    fig = _figure((10, 5))
    ax = fig.subplots()
    per_chain = np.stack([tr["movement"][:, tr["chain_of_segment"] == k].max(axis=1)
                          for k in range(len(tr["per_chain"]))], axis=1)
    floor = 1e-12
    for k in range(per_chain.shape[1]):
        ax.semilogy(tr["time"], np.maximum(per_chain[:, k], floor), lw=1, label=f"chain {k}")
    ax.axhline(r.limit, color="C3", ls="--", label=f"limit {r.limit:g}")
    ax.axvspan(tr["duration"] - 1.0, tr["duration"], color="0.85", label="last second")
    ax.set_xlabel("sim time (s)")
    ax.set_ylabel("largest tip movement between frames / chain length")
    ax.legend(fontsize=8, ncol=2)
    return fig, f"2 rest with gravity: tip movement per frame (last second: {r.figure:.2g}; zero drawn at {floor:g})"


def _plot_tip_paths(axes, chains, tr, paths, compared, before: str, after: str) -> None:
    """One panel per chain of ``chains``: its tip's path (x, y) at each frame rate, with
    crosses at the shared times; titles read ``before`` + "tip of chain …" + ``after``."""
    fps_list = sorted(paths)
    for ax, chain in zip(axes, chains):
        tip = tr["first_segment"][chain] + tr["segment_counts"][chain] - 1
        for i, fps in enumerate(fps_list):
            path = paths[fps][:, tip]
            ax.plot(path[:, 0], path[:, 1], lw=1.0 + 1.2 * (len(fps_list) - 1 - i), label=f"{fps} fps", alpha=0.8)
            cmp = compared[fps][:, tip]
            ax.plot(cmp[:, 0], cmp[:, 1], "x", ms=5, color=f"C{i}")
        n = tr["segment_counts"][chain]
        ax.set_title(f"{before}tip of chain {chain} ({n} segment{'s' if n > 1 else ''}){after}", fontsize=9)
        ax.set_xlabel("x (units)")
        ax.set_ylabel("y (units)")
        ax.set_aspect("equal", "datalim")
        ax.legend(fontsize=7)


def _label_difference_panel(ax, limit: float, ylabel: str) -> None:
    """The limit line and the labels of a frame-rate plot's last panel: the difference
    between frame rates (in % of the motion's amplitude) at the shared times."""
    ax.axhline(100 * limit, color="C3", ls="--", label=f"limit {100 * limit:g} %")
    ax.set_xlabel("time (s), multiples of 1/6")
    ax.set_ylabel(ylabel)
    ax.set_title("difference at the shared times", fontsize=9)
    ax.legend(fontsize=7)


def _plot_frame_rates(r):
    tr = r.traces
    fps_list = sorted(tr["paths"])
    shown = [1, 3, 4, 5]  # chains: 1-segment, 4-segment, and both 12-segment chains
    fig = _figure((19, 4.8))
    axes = fig.subplots(1, len(shown) + 1)
    _plot_tip_paths(axes, shown, tr, tr["paths"], tr["compared"], "", "")
    ax = axes[-1]
    ax.plot(tr["times"], 100 * tr["difference"], "o-", ms=3, label="largest tip distance vs 144 fps")
    _label_difference_panel(ax, r.limit, "distance / motion amplitude (%)")
    return fig, (f"3 frame rates: tip paths at {', '.join(map(str, fps_list))} fps (x: shared times), "
                 f"worst {100 * r.figure:.2f} % of the amplitude")


def _plot_wraparound(r):
    tr = r.traces
    cps = len(tr["segment_counts"]) // 2
    fig = _figure((15, 8))
    axes = fig.subplots(2, 2, sharex=True)
    for row, (name, offset) in enumerate((("counter-clockwise", 0), ("clockwise", cps))):
        ax = axes[row, 0]
        for i, chain in enumerate((offset + 1, offset + 4)):
            seg = tr["first_segment"][chain] + tr["segment_counts"][chain] - 1
            n = tr["segment_counts"][chain]
            ax.plot(tr["time"], tr["tau"][:, seg] / TWO_PI, color=f"C{2 * i}", lw=3, alpha=0.4,
                    label=f"target τ, tip of a {n}-segment chain")
            ax.plot(tr["time"], tr["phi"][:, seg] / TWO_PI, color=f"C{2 * i + 1}", lw=1,
                    label=f"angle φ, tip of a {n}-segment chain")
        ax.plot(tr["time"], tr["heading"][:, offset] / TWO_PI, "k:", lw=1, label="root heading Θ")
        ax.set_ylabel("unwrapped angle (turns)")
        ax.set_title(f"{name}: root turns 5×, then λ0 turns once and the tip's λ crosses ±π", fontsize=9)
        ax.legend(fontsize=7)
        ax = axes[row, 1]
        in_copy = (tr["chain_of_segment"] >= offset) & (tr["chain_of_segment"] < offset + cps)
        err = tr["error"][:, in_copy]
        ax.plot(tr["time"], err, lw=0.6, alpha=0.6)
        ax.plot([], [], lw=0.6, color="C0", label="wrap(φ - τ), every segment")
        ax.axhline(r.limit, color="C3", ls="--", label="±π (the long way round)")
        ax.axhline(-r.limit, color="C3", ls="--")
        ax.set_ylim(-math.pi, math.pi)
        ax.set_ylabel("angle - target (rad)")
        ax.set_title(f"{name}: tracking error (a long way round would reach ±π)", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    for ax in axes[1]:
        ax.set_xlabel("time (s)")
    return fig, f"4 wraparound: largest |wrap(φ - τ)| = {r.figure:.3f} rad"


def _plot_teleport(r):
    tr = r.traces
    jump = tr["jump"]
    time = tr["time"]
    fig = _figure((14, 4.8))
    axes = fig.subplots(1, 2)
    chain = 4
    tip = tr["first_segment"][chain] + tr["segment_counts"][chain] + chain  # joint index of its tip
    root = tr["first_segment"][chain] + chain
    rel_a = tr["a_pos"][:, tip] - tr["a_pos"][:, root]
    rel_b = tr["b_pos"][:, tip] - tr["b_pos"][:, root]
    ax = axes[0]
    for axis, name in enumerate("xy"):
        ax.plot(time, rel_a[:, axis], lw=2.5, alpha=0.5, label=f"teleported, tip {name} - root {name}")
        ax.plot(time[jump:], rel_b[:, axis], lw=1, ls="--", label=f"made at destination, tip {name} - root {name}")
    ax.axvline(time[jump], color="0.4", ls=":", label="jump of 2000 units")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("tip relative to root (units)")
    ax.set_title("12-segment chain, with gravity", fontsize=9)
    ax.legend(fontsize=7)
    ax = axes[1]
    diff = np.abs(wrap(tr["a_angle"][jump:] - tr["b_angle"])).max(axis=1)
    ax.semilogy(time[jump:], np.maximum(diff, 1e-12), "o-", ms=2, label="largest angle difference")
    ax.axhline(r.limit, color="C3", ls="--", label=f"limit {r.limit:g} rad")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("angle difference (rad), zero drawn at 1e-12")
    ax.set_title("teleported vs made at the destination, all chains", fontsize=9)
    ax.legend(fontsize=7)
    return fig, "5 teleport: after the jump the chain moves as if it had always been there"


def _cross_check_axes(r, figsize, first_frame_limit):
    """A cross-check's figure and axes: the largest difference per frame (log), with the
    limit and the first frame's limit."""
    fig = _figure(figsize)
    ax = fig.subplots()
    per_frame = r.traces["per_frame"]
    ax.semilogy(np.arange(len(per_frame)), np.maximum(per_frame, 1e-12), lw=1, label="largest difference gpu vs cpu")
    ax.axhline(r.limit, color="C3", ls="--", label=f"limit {r.limit:g}")
    ax.axhline(first_frame_limit, color="C1", ls=":", label=f"first-frame limit {first_frame_limit:g}")
    return fig, ax


def _plot_cross_check(r):
    fig, ax = _cross_check_axes(r, (10, 4.8), CROSS_FIRST_FRAME_TOLERANCE)
    ax.set_xlabel("frame")
    ax.set_ylabel("difference (rad, or / chain length), zero drawn at 1e-12")
    ax.legend(fontsize=8)
    return fig, "6 cross-check: compute shaders vs numpy reference on random ragged chains"


_VARIANT_COLOURS = {"none": "C0", "gravity": "C1", "wind": "C2", "gravity + wind": "C3"}


def _plot_point_decay(r):
    tr = r.traces
    runs = tr["runs"]
    shown = list(runs)[-1]          # the trace drawn in full; the peaks of every variant
    run = runs[shown]
    n = len(tr["depth"])
    fig = _figure((16, 7.5))
    axes = fig.subplots(2, (n + 1) // 2, sharex=True)
    time = tr["time"]
    for k, ax in enumerate(axes.flat[:n]):
        dev = run["deviation"][:, k]
        idx = run["peak_index"][k]
        line, = ax.plot(time, dev, lw=0.9, color="0.35", label=f"angle from equilibrium, {shown} (left)")
        dots, = ax.plot(time[idx], dev[idx], "o", ms=3, color="k", label="its half-cycle peaks (left)")
        mark = ax.axvline(600 * SUBSTEP, color="0.5", ls=":", lw=1, label="600 substeps")
        log_ax = ax.twinx()
        handles = [line, dots, mark]
        for variant, other in runs.items():
            h, = log_ax.semilogy(time[other["peak_index"][k]], other["peak_value"][k], ".-", ms=2.5, lw=0.8,
                                 color=_VARIANT_COLOURS.get(variant, "C4"), label=f"|peak|, {variant} (right, log)")
            handles.append(h)
        _label_decay_panel(ax, log_ax, tr, k, k >= n - axes.shape[1], "angle from equilibrium (rad)")
        if k == 0:
            ax.legend(handles=handles, fontsize=6.5, loc="upper right")
    return fig, (f"point 1 free decay: one segment per chain displaced {tr['turn']:g} rad, its target pinned "
                 f"(largest peak ratio {r.figure:.3f})")


def _plot_point_rest(r):
    tr = r.traces
    runs = tr["runs"]
    fig = _figure((14, 4.2 * ((len(runs) + 1) // 2)))
    axes = np.atleast_1d(fig.subplots((len(runs) + 1) // 2, min(len(runs), 2), sharex=True, squeeze=False)).ravel()
    floor = 1e-12
    for ax, (variant, run) in zip(axes, runs.items()):
        chains = run["chain_of_segment"]
        for k in range(int(chains.max()) + 1):
            ax.semilogy(run["time"], np.maximum(run["movement"][:, chains == k].max(axis=1), floor), lw=0.9,
                        label=f"chain {k}")
        ax.axhline(r.limit, color="C3", ls="--", label=f"limit {r.limit:g}")
        ax.axvspan(tr["duration"] - 1.0, tr["duration"], color="0.85", label="last second")
        ax.axvline(run["fine_from"], color="0.5", ls=":", label="1/15 s frames | 1/60 s frames")
        ax.set_title(f"{variant}: last second {r.details[f'{variant}: last second']:.2g}", fontsize=9)
        ax.set_xlabel("sim time (s)")
        ax.set_ylabel("tip movement per frame / chain length")
        ax.legend(fontsize=7, ncol=3)
    return fig, f"point 2 rest: every chain's pose turned once, then held (zero drawn at {floor:g})"


def _plot_point_frame_rates(r):
    tr = r.traces
    runs = tr["runs"]
    shown = list(runs)[-1]
    run = runs[shown]
    fps_list = sorted(run["paths"])
    chains = [1, 3, 4, 5]
    fig = _figure((19, 4.8))
    axes = fig.subplots(1, len(chains) + 1)
    _plot_tip_paths(axes, chains, tr, run["paths"], run["compared"], f"{shown}: ", ", front view")
    ax = axes[-1]
    for variant, other in runs.items():
        ax.plot(tr["times"], 100 * other["difference"], "o-", ms=3, lw=1, color=_VARIANT_COLOURS.get(variant, "C4"),
                label=variant)
    _label_difference_panel(ax, r.limit, "largest tip distance vs 144 fps / amplitude (%)")
    return fig, (f"point 3 frame rates: tip paths at {', '.join(map(str, fps_list))} fps (x: shared times), "
                 f"worst {100 * r.figure:.2f} % of the amplitude")


def _plot_point_teleport(r):
    tr = r.traces
    runs = tr["runs"]
    shown = list(runs)[-1]
    run = runs[shown]
    jump = run["jump"]
    time = np.arange(len(run["positions"]["rebased"])) / tr["fps"]
    fig = _figure((15, 5.6))
    axes = fig.subplots(1, 2)
    chain = 4
    pivot = run["pivots"][chain]
    tip = run["last_joints"][chain]
    ax = axes[0]
    a = run["positions"]["rebased"]
    b = run["positions"]["made there"]
    for axis, name in enumerate("xyz"):
        ax.plot(time, a[:, tip, axis] - a[:, pivot, axis], lw=2.5, alpha=0.45, color=f"C{axis}",
                label=f"teleported: tip {name} - pivot {name}")
        ax.plot(time[jump:], b[:, tip, axis] - b[:, pivot, axis], lw=1, ls="--", color=f"C{axis}",
                label=f"made at the destination: tip {name} - pivot {name}")
    ax.axvline(time[jump], color="0.4", ls=":", label="jump of 2000 units")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("tip relative to pivot (units)")
    ax.set_title(f"chain {chain} (12 segments), {shown}", fontsize=9)
    ax.legend(fontsize=6.5, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.13))
    ax = axes[1]
    floor = 1e-12
    for variant, other in runs.items():
        pos = other["positions"]
        n = len(pos["made there"])
        colour = _VARIANT_COLOURS.get(variant, "C4")
        kept = np.abs(pos["kept origin"][-n:] - pos["made there"]).max(axis=(1, 2))
        rebased = np.abs(pos["rebased"][-n:] - pos["made there"]).max(axis=(1, 2))
        ax.semilogy(time[jump:], np.maximum(kept, floor), "-", lw=1, color=colour, label=f"kept origin, {variant}")
        ax.semilogy(time[jump:], np.maximum(rebased, floor), "o", ms=2, color=colour, label=f"rebased, {variant}")
    kept_limit = [v for k, v in r.details.items() if k.startswith("A' limit")][0]
    ax.axhline(kept_limit, color="C3", ls="--", label=f"kept-origin limit {kept_limit:.2g} units")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("largest position difference (units)")
    ax.set_title(f"teleported solvers vs one made at the destination, all joints (zero drawn at {floor:g})",
                 fontsize=9)
    ax.legend(fontsize=6.5, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.13))
    return fig, "point 5 teleport: after the jump the chains move as if they had always been there"


def _plot_point_cross_check(r):
    tr = r.traces
    fig, ax = _cross_check_axes(r, (11, 4.8), POINT_CROSS_FIRST_FRAME_TOLERANCE)
    phase = tr["phase"]
    for i, name in enumerate(tr["phase_names"]):
        where = np.flatnonzero(phase == i)
        if where.size:
            ax.axvline(where[0], color="0.6", lw=0.8)
            ax.text(where[0] + 1, r.limit * 1.3, name, fontsize=8, va="bottom")
    for label, frame in tr["events"].items():
        ax.annotate(label, (frame, tr["per_frame"][frame]), xytext=(0, 18), textcoords="offset points", fontsize=7,
                    ha="center", arrowprops={"arrowstyle": "->", "lw": 0.6})
    ax.set_ylim(1e-9, r.limit * 10)
    ax.set_xlabel("frame")
    ax.set_ylabel("difference (/ chain length, relative, quaternion)")
    ax.legend(fontsize=8, loc="lower right")
    return fig, "point 6 cross-check: compute shaders vs numpy reference, random chains, colliders, wind phases"


def _plot_ear_frame_rates(r):
    """The ear's tip angle at 30 fps on the linear path and on the monotone path (v2's default;
    v2's spring both), over the 1200 fps run; and the peak errors per frame rate, v1 beside v2."""
    tr = r.traces
    fig = _figure((15, 4.8))
    path_ax, zoom_ax, error_ax = fig.subplots(1, 3)
    for ax in (path_ax, zoom_ax):
        t, tip = tr["v2 dense"]
        ax.plot(t, np.degrees(tip - math.pi / 2), "-", color="0.5", lw=1, label="1200 fps")
        t, tip = tr["linear path 30"]
        ax.plot(t, np.degrees(tip - math.pi / 2), "x", color="C1", ms=5, label="30 fps, linear path (v1's)")
        t, tip = tr["v2 30"]
        ax.plot(t, np.degrees(tip - math.pi / 2), "o", color="C0", ms=3, label="30 fps, monotone path (v2)")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("tip angle off upright (degrees)")
    path_ax.legend(fontsize=7)
    path_ax.set_title("ear tip after a 10 cm move in 0.3 s (v2 spring)", fontsize=9)
    zoom_ax.set_xlim(0.3, 0.65)
    zoom_ax.set_title("around the largest swing", fontsize=9)
    keys = [k for k in r.details if "fps peak error (limit" in k]
    fps = [int(k.split()[0]) for k in keys]
    v2 = [100 * r.details[k] for k in keys]
    v1 = [100 * r.details[f"v1 {f} fps peak error (not held)"] for f in fps]
    x = np.arange(len(fps))
    error_ax.bar(x - 0.2, v1, 0.4, color="C1", label="v1 (linear path, world damping)")
    error_ax.bar(x + 0.2, v2, 0.4, color="C0", label="v2 (defaults)")
    error_ax.hlines([3 if f == 30 else 1 for f in fps], x - 0.45, x + 0.45, colors="k", label="limit")
    error_ax.set_xticks(x, [f"{f} fps" for f in fps])
    error_ax.set_ylabel("peak tip angle error vs 1200 fps (%)")
    error_ax.set_ylim(0, 3.6)
    error_ax.legend(fontsize=7, loc="upper right")
    return fig, f"v2 frame rates: ears at 30-165 fps against 1200 fps, worst {r.figure:.2f} of its limit"


def _plot_exact_integrator(r):
    """The step response at h = 1/30 s, one panel per traced ζ: analytic, exact, semi-implicit;
    and |φ - analytic| of both steps per substep (log)."""
    tr = r.traces
    zetas = tr["zetas"]
    fig = _figure((16, 4.6))
    axes = fig.subplots(1, len(zetas) + 1)
    h = f"h = 1/{round(1 / tr['substep'])} s"
    for j, (ax, zeta) in enumerate(zip(axes, zetas)):
        ax.plot(tr["dense time"], tr["dense analytic"][:, j], "-", color="0.4", lw=1.2, label="analytic")
        ax.plot(tr["time"], tr["exact"][:, j], "o", ms=3, color="C0", label=f"exact, {h}")
        ax.plot(tr["time"], tr["semi-implicit"][:, j], "x", ms=4, color="C1", label=f"semi-implicit, {h}")
        ax.set_title(f"target 0 → 1 rad over the first substep, f = {tr['frequency']:g} Hz, ζ = {zeta:g}",
                     fontsize=9)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("angle φ (rad)")
        ax.legend(fontsize=7, loc="lower right" if zeta >= 0.5 else "upper right")
    ax = axes[-1]
    floor = 1e-9
    for j, zeta in enumerate(zetas):
        for name, colour in (("exact", "C0"), ("semi-implicit", "C1")):
            err = np.maximum(np.abs(tr[name][:, j] - tr["analytic"][:, j]), floor)
            ax.semilogy(tr["time"], err, "-" if j == 0 else "--", color=colour, lw=1, label=f"{name}, ζ = {zeta:g}")
    ax.axhline(r.limit, color="C3", ls=":", label=f"limit {r.limit:g} rad")
    ax.set_ylim(floor, 1e3)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"|φ - analytic| (rad), zero drawn at {floor:g}")
    ax.set_title(f"error per substep, {h}", fontsize=9)
    ax.legend(fontsize=7, ncol=2, loc="upper right")
    return fig, f"exact integrator: step response against the analytic one (worst {r.figure:.2g} rad, ζ 0.05-2)"


#: The painter of each check, by :attr:`CheckResult.name`.
PAINTERS = {"decay": _plot_decay, "rest": _plot_rest, "frame_rates": _plot_frame_rates,
            "wraparound": _plot_wraparound, "teleport": _plot_teleport, "cross_check": _plot_cross_check,
            "point_decay": _plot_point_decay, "point_rest": _plot_point_rest,
            "point_frame_rates": _plot_point_frame_rates, "point_teleport": _plot_point_teleport,
            "point_cross_check": _plot_point_cross_check, "ear_frame_rates": _plot_ear_frame_rates,
            "exact_integrator": _plot_exact_integrator, **LIMIT_PAINTERS}

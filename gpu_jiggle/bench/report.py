"""The benchmark's report as text (the table ``gpu-jiggle bench`` prints) and as a plot
(segment-substeps per second against segments, log-log, both paths and the peers).
"""
from __future__ import annotations

import io

from .. import extras

#: The table's columns: heading, width.
COLUMNS = (("case", 58), ("gpu dispatch/s", 14), ("gpu frame/s", 12), ("+read-back", 11), ("numpy frame/s", 13),
           ("gpu÷numpy", 9), ("B/seg", 6), ("frame B/seg", 11), ("up B/joint", 10), ("of copy BW", 10))

#: What the columns hold, printed under the table (docs/PERFORMANCE.md, "Benchmarks", says more).
LEGEND = ("columns: segment-substeps per second of the GPU path's dispatch alone, of its whole frame (set_pose "
          "and advance, finished) and with positions() read back, and of the numpy path's whole frame; gpu÷numpy: "
          "how many times faster the GPU path's whole frame is than the numpy path's (their rates' ratio); B/seg: "
          "the GPU buffers' bytes per segment; frame B/seg: the bytes a frame's dispatch must move per segment, the "
          "state counted twice (read and written), rig, inputs and outputs once, so it can pass B/seg; up B/joint: "
          "bytes uploaded per frame and joint; of copy BW: the bytes a dispatch must move per second, as a share of "
          "what a copy shader moves on the same context")


def rate_text(value) -> str:
    """A rate in segment-substeps per second, as ``3.2e+07``; ``-`` when missing."""
    return "-" if value is None else f"{value:.2e}"


def table(report: dict) -> str:
    """The report's cases as a fixed-width table, then the skipped paths, the peers and the
    fitted exponents."""
    lines = ["  ".join(f"{name:>{width}}" if i else f"{name:<{width}}" for i, (name, width) in enumerate(COLUMNS))]
    notes, peers = [], []
    peer_skips = {}  # reason → {library: [case labels]}: one line per reason
    for row in report["cases"]:
        gpu, cpu = row["gpu"], row["numpy"]
        cells = [row["case"]["label"], rate_text(gpu.get("dispatch_rate")), rate_text(gpu.get("frame_rate")),
                 rate_text(gpu.get("frame_readback_rate")), rate_text(cpu.get("frame_rate")),
                 f"{row['gpu_over_numpy']:.1f}×" if "gpu_over_numpy" in row else "-",
                 f"{gpu['memory_per_segment']:.0f}" if "memory_per_segment" in gpu else "-",
                 f"{gpu['frame_bytes_per_segment']:.0f}" if "frame_bytes_per_segment" in gpu else "-",
                 f"{gpu['upload_per_joint']:.1f}" if "upload_per_joint" in gpu else "-",
                 f"{row['bandwidth_fraction']:.1%}" if "bandwidth_fraction" in row else "-"]
        lines.append("  ".join(f"{cell:>{width}}" if i else f"{cell:<{width}}"
                               for i, (cell, (_, width)) in enumerate(zip(cells, COLUMNS))))
        for path in ("gpu", "numpy"):
            if "skipped" in row[path]:
                notes.append(f"  {row['case']['label']}: {path} skipped: {row[path]['skipped']}")
        for library, peer in row.get("peers", {}).items():
            if "skipped" in peer:
                peer_skips.setdefault(peer["skipped"], {}).setdefault(library, []).append(row["case"]["label"])
            else:
                ours = gpu.get("frame_rate")
                versus = f" (our gpu frame: {ours / peer['frame_rate']:.2f}× that)" if ours else ""
                peers.append(f"  {row['case']['label']}: {peer['name']}: {rate_text(peer['frame_rate'])}/s whole "
                             f"frame{versus}")
    lines += ["", LEGEND]
    if peers:
        lines += ["", "peers (the same step written with numba and Warp; what each writes: bench/peers.py):"] + peers
    near = [row for row in report["cases"] if row["case"].get("near_fraction") is not None]
    if near:
        lines += ["", "chains near a collider: within reach, those a collider could reach in the first pose (a "
                  "loose bound: the ball about the pivot that holds the chain); run as near on the GPU, those the "
                  "timed frames ran as near chains (the median; strands pushed clear of a collider stop being "
                  "near, SPEC 9):"]
        lines += [f"  {row['case']['label']}: within reach {row['case']['near_fraction']:.1%}"
                  + (f"; run as near on the GPU {row['gpu']['near_chains']:.1%}" if "near_chains" in row.get("gpu", {})
                     else "")
                  for row in near]
    counted = [row for row in report["cases"] if "callgrind" in row]
    if counted:
        lines += ["", "GPU path, instructions per segment-substep (callgrind, one frame at 1,000 and 5,000 chains):"]
        lines += [f"  {row['case']['label']}: " + (f"{row['callgrind']['instructions_per_segment_substep']:,.0f}"
                                                   if "skipped" not in row["callgrind"]
                                                   else f"skipped: {row['callgrind']['skipped']}") for row in counted]
    sweeps = [row for row in report["cases"] if row.get("work_groups")]
    if sweeps:
        lines += ["", "work-group size (chains per group): GPU dispatch segment-substeps/s"]
        lines += [f"  {row['case']['label']}: {work_group_text(row['work_groups'])}" for row in sweeps]
    for reason, by_library in peer_skips.items():
        labels = sorted({label for cases in by_library.values() for label in cases})
        which = labels[0] if len(labels) == 1 else f"{len(labels)} cases"
        notes.append(f"  {which}: {', '.join(by_library)} skipped: {reason}")
    if notes:
        lines += ["", "skipped:"] + notes
    if report["fits"]:
        lines += ["", "cost exponent (time ∝ segments^b, sizes 100k-4M):"]
        for fit in report["fits"]:
            lines.append(f"  {fit['path']:>5} {fit['kind']:>5} chains of {fit['chain_length']}, {fit['substeps']} "
                         f"substeps, {fit['features']}"
                         + (f", {fit['colliders']} colliders" if fit.get("colliders") else "")
                         + f": b = {fit['exponent']:.3f} over {len(fit['sizes'])} sizes")
    copies = [row["copy"] for row in report["cases"] if "copy" in row]
    if copies:
        best = max(copy["bytes_per_second"] for copy in copies)
        lines += ["", f"copy shader: up to {best / 1e9:.2f} GB/s moved ({copies[0]['how']})"]
    machine = report["machine"]
    version = f" ({machine['gl_version']})" if machine.get("gl_version") else ""
    lines += ["", f"renderer: {machine.get('renderer', 'none')}{version}; numpy {machine['numpy']}; "
                  f"dispatch timed by {next((r['gpu']['how'] for r in report['cases'] if 'how' in r['gpu']), '-')}"]
    return "\n".join(lines)


def work_group_text(sweep: list) -> str:
    """``32: 1.1e+06  64: 2.1e+06 … best 64`` for a case's work-group sweep."""
    timed = [entry for entry in sweep if "dispatch_rate" in entry]
    cells = [f"{entry['work_group_size']}: {rate_text(entry.get('dispatch_rate'))}" for entry in sweep]
    best = max(timed, key=lambda entry: entry["dispatch_rate"])["work_group_size"] if timed else "-"
    return "  ".join(cells) + f"  best {best}"


def plot(report: dict, image_format: str = "png") -> bytes:
    """The log-log plot of segment-substeps per second against segments, as the bytes of an
    image (``image_format``: png, svg, pdf or another that matplotlib writes): one line per
    path at each configuration (GPU dispatch, GPU whole frame, numpy whole frame), the
    peers' whole frames beside them.

    Raises: MissingExtra without matplotlib (``[app]``); ValueError for a format matplotlib
    does not write."""
    matplotlib = extras.require("matplotlib", "the benchmark's plot")
    matplotlib.use("Agg")
    pyplot = extras.require("matplotlib.pyplot", "the benchmark's plot")
    series = {}
    for row in report["cases"]:
        case = row["case"]
        config = f"{case['kind']}, ×{case['chain_length']}, {case['substeps']} substeps, {case['features']}"
        for path, key in (("gpu dispatch", "dispatch_rate"), ("gpu frame", "frame_rate"), ("numpy", "frame_rate")):
            value = row["gpu" if path.startswith("gpu") else "numpy"].get(key)
            if value:
                series.setdefault((path, config), []).append((case["segment_count"], value))
        for library, peer in row.get("peers", {}).items():
            if "frame_rate" in peer:
                series.setdefault((peer["name"], config), []).append((case["segment_count"], peer["frame_rate"]))
    figure, axes = pyplot.subplots(figsize=(12, 6.5))
    configs = sorted({config for _, config in series})
    colours = {config: pyplot.cm.tab20(i % 20) for i, config in enumerate(configs)}
    styles = {"gpu dispatch": ("-", "o"), "gpu frame": ("--", "s"), "numpy": (":", "^")}
    for (path, config), points in sorted(series.items()):
        points.sort()
        line, marker = styles.setdefault(path, ("-.", "x") if path.startswith("numba") else ((0, (5, 1, 1, 1)), "+"))
        axes.plot([p[0] for p in points], [p[1] for p in points], linestyle=line, marker=marker,
                  color=colours[config], markersize=4, linewidth=1)
    lines = extras.require("matplotlib.lines", "the benchmark's plot")
    handles = [lines.Line2D([], [], color=colours[config], linewidth=2, label=config) for config in configs]
    handles += [lines.Line2D([], [], color="black", linestyle=line, marker=marker, label=path)
                for path, (line, marker) in styles.items() if any(p == path for p, _ in series)]
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("segments")
    axes.set_ylabel("segment-substeps per second")
    renderer = report["machine"].get("renderer", "no GPU context")
    axes.set_title(f"gpu-jiggle bench on {renderer}")
    axes.grid(True, which="both", alpha=0.3)
    if handles:
        axes.legend(handles=handles, fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    image = io.BytesIO()
    try:
        figure.savefig(image, format=image_format, dpi=110, bbox_inches="tight")  # the legend beside
    finally:
        pyplot.close(figure)
    return image.getvalue()

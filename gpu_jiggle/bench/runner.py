"""Running the benchmark's grid: every case on the GPU path, the numpy path and (when asked)
the peers, in one run, with the copy-shader yardstick; the summary figures (ratios, the
fraction of the bandwidth bound, the fitted cost exponent) are computed here, printed by
``gpu-jiggle bench`` and written to its JSON.
"""
from __future__ import annotations

import math
import platform
from dataclasses import asdict, dataclass, replace

import numpy as np

from ..gl.context import describe
from . import callgrind
from .bandwidth import copy_bandwidth
from .measure import time_peer, time_solver

#: The segment range over which the cost exponent is fitted (the issue's 100k to 4M).
FIT_RANGE = (100_000, 4_000_000)
#: The feature sets (:data:`~.cases.FEATURES`) each peer writes, per chain kind: both peers'
#: point chains also have the cone angle limit and max distance (:mod:`.peers`).
PEER_FEATURES = {"numba": {"angle": ("v2",), "point": ("v2", "limits", "all")},
                 "warp": {"angle": ("v2",), "point": ("v2", "limits", "all")}}


@dataclass
class BenchOptions:
    """budget_seconds: timed frames per case and path stop after this much time (at least one
    frame). max_frames: and after this many. numpy_max_segments: the numpy path runs cases up
    to this size. peers: libraries of :mod:`gpu_jiggle.bench.peers` to time beside ours
    (``"numba"``, ``"warp"``). peer_device: the Warp device (None: CUDA when present, else
    the CPU). work_group_sizes: chains per work group at which the GPU dispatch is also timed
    (:func:`work_group_sweep`; the GPU figures of a case are at the solver's default).
    callgrind: also count the GPU path's instructions per segment-substep
    (:mod:`~gpu_jiggle.bench.callgrind`). seed: of the random rig values and poses."""

    budget_seconds: float = 1.0
    max_frames: int = 10
    numpy_max_segments: int = 1_000_000
    peers: tuple = ()
    peer_device: str | None = None
    work_group_sizes: tuple = ()
    callgrind: bool = False
    seed: int = 0


def run(cases, options: BenchOptions, ctx, progress=None, gpu_off: str | None = None) -> dict:
    """Measure every case; returns the report (a JSON-ready dict: ``machine``, ``options``,
    ``cases`` (one dict per case, see :func:`measure_case`) and ``fits``).

    ``ctx``: the OpenGL context of the GPU path (None: the numpy path and the peers only).
    ``progress(case, what)``: called before each measurement (``what``: "gpu", "numpy", a
    peer's library, "copy", "work groups", "callgrind"), e.g. to move a progress bar. ``gpu_off``: why there is no
    context when it was left out on purpose (the GPU path's skip says so)."""
    rows = [measure_case(case, options, ctx, progress, gpu_off) for case in cases]
    return {"machine": machine(ctx), "options": asdict(options), "cases": rows, "fits": fits(rows)}


def machine(ctx) -> dict:
    """What the figures were measured on."""
    info = {"python": platform.python_version(), "processor": platform.processor() or platform.machine(),
            "numpy": np.__version__}
    if ctx is not None:
        gl = describe(ctx)
        info.update(renderer=gl.get("GL_RENDERER"), gl_version=gl.get("GL_VERSION"), vendor=gl.get("GL_VENDOR"))
    return info


def measure_case(case, options: BenchOptions, ctx, progress=None, gpu_off: str | None = None) -> dict:
    """One case: ``case`` (its fields), ``gpu`` and ``numpy`` (:func:`~.measure.time_solver`'s
    dicts, or ``{"skipped": why}``), ``copy`` (:func:`~.bandwidth.copy_bandwidth` over the GPU
    path's compulsory bytes), ``peers`` ({library: dict or skipped}) and the summary:
    ``gpu_over_numpy`` (whole frames), ``bandwidth_fraction`` (the dispatch's compulsory
    bytes per second over the copy's)."""
    def step(what):
        if progress is not None:
            progress(case, what)

    rng_seed = options.seed
    row = {"case": {**asdict(case), "colliders": case.collider_count, "chains": case.chains,
                    "segment_count": case.segment_count, "label": case.label,
                    "near_fraction": case.near_fraction(np.random.default_rng(rng_seed))}}
    step("gpu")
    if ctx is None:
        row["gpu"] = {"skipped": gpu_off or "no OpenGL 4.3 context"}
    else:
        row["gpu"] = guarded(lambda: time_solver(case, "gpu", np.random.default_rng(rng_seed), options.budget_seconds,
                                                 options.max_frames, ctx))
    step("numpy")
    if case.segment_count > options.numpy_max_segments:
        row["numpy"] = {"skipped": f"over --numpy-max-segments {options.numpy_max_segments:,}"}
    else:
        row["numpy"] = guarded(lambda: time_solver(case, "cpu", np.random.default_rng(rng_seed),
                                                   options.budget_seconds, options.max_frames))
    row["peers"] = {}
    for library in options.peers:
        step(library)
        features = PEER_FEATURES[library][case.kind]
        if case.features not in features:
            row["peers"][library] = {"skipped": f"the {library} peer writes the {' and '.join(features)} step of "
                                                f"{case.kind} chains"}
            continue
        row["peers"][library] = guarded(lambda: time_peer(case, library, np.random.default_rng(rng_seed),
                                                          options.budget_seconds, options.max_frames,
                                                          options.peer_device))
    gpu, cpu = row["gpu"], row["numpy"]
    if options.work_group_sizes and "dispatch_s" in gpu:
        step("work groups")
        row["work_groups"] = work_group_sweep(case, options, ctx)
    if options.callgrind and "dispatch_s" in gpu:
        step("callgrind")
        try:
            row["callgrind"] = callgrind.count(case)
        except RuntimeError as exc:
            row["callgrind"] = {"skipped": " ".join(str(exc).split())}
    if "compulsory_bytes" in gpu:
        step("copy")
        row["copy"] = copy_bandwidth(ctx, max(16, gpu["compulsory_bytes"] // 2))
        row["bandwidth_fraction"] = gpu["compulsory_bytes"] / gpu["dispatch_s"] / row["copy"]["bytes_per_second"]
    if "frame_s" in gpu and "frame_s" in cpu:
        row["gpu_over_numpy"] = cpu["frame_s"] / gpu["frame_s"]
    return row


def work_group_sweep(case, options: BenchOptions, ctx) -> list:
    """The GPU path of ``case`` at each of ``options.work_group_sizes`` chains per work group:
    one dict per size with ``work_group_size`` and :func:`~.measure.time_solver`'s figures
    (or ``skipped``: a size the context cannot run)."""
    return [{"work_group_size": size, **guarded(lambda: time_solver(replace(case, work_group_size=size), "gpu",
                                                                    np.random.default_rng(options.seed),
                                                                    options.budget_seconds, options.max_frames, ctx))}
            for size in options.work_group_sizes]


def guarded(measure) -> dict:
    """``measure()``, or ``{"skipped": what was refused}`` for a case this path cannot hold
    (ValueError: a buffer over the storage-block size, a chain over llvmpipe's loop budget;
    MemoryError)."""
    try:
        return measure()
    except (ValueError, MemoryError) as exc:
        return {"skipped": f"{type(exc).__name__}: {' '.join(str(exc).split())}"}


def fits(rows) -> list:
    """The exponent b of dispatch time ∝ segments^b, per path and configuration, fitted by
    least squares in log-log over the sizes in :data:`FIT_RANGE` (where two or more were
    measured): a cost linear in segments has b = 1."""
    groups = {}
    for row in rows:
        case = row["case"]
        if not FIT_RANGE[0] <= case["segment_count"] <= FIT_RANGE[1]:
            continue
        key = (case["kind"], case["chain_length"], case["substeps"], case["features"], case["colliders"])
        for path, seconds_key in (("gpu", "dispatch_s"), ("numpy", "frame_s")):
            seconds = row[path].get(seconds_key)
            if seconds:
                groups.setdefault(key + (path,), []).append((case["segment_count"], seconds))
    out = []
    for (kind, length, substeps, features, colliders, path), points in sorted(groups.items()):
        if len({size for size, _ in points}) < 2:
            continue
        x = np.log([p[0] for p in points])
        y = np.log([p[1] for p in points])
        exponent = float(np.polyfit(x, y, 1)[0])
        out.append({"kind": kind, "chain_length": length, "substeps": substeps, "features": features,
                    "colliders": colliders, "path": path, "sizes": [p[0] for p in points],
                    "exponent": exponent if math.isfinite(exponent) else None})
    return out

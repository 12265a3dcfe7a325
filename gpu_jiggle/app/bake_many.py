"""``gpu-jiggle bake-many MANIFEST --out DIR``: bake a library, many characters × clips, on a
Dask cluster (``dask.distributed``, the ``[batch]`` extra).

The manifest (:mod:`gpu_jiggle.character.baking.manifest`) is read and checked whole first;
a bad one stops the command before anything runs. Each output whose record says it was made
from the same inputs (:mod:`gpu_jiggle.character.baking.inputs`) is skipped ("up to date"), so
an interrupted run resumes. The other bakes go to the cluster, grouped by character, one Dask
task each (:func:`gpu_jiggle.app.bake_workers.run_bake`):

- without ``--scheduler``, a ``LocalCluster`` on this machine with ``--workers`` worker
  processes (default: one per NVIDIA GPU, worker k on EGL device k, for the GPU backend;
  else one per core), one thread each, a worker that dies restarted, and a
  bake whose worker died retried on another at most :data:`MAX_RETRIES` times (the
  scheduler's ``allowed-failures``);
- with ``--scheduler ADDRESS``, that cluster's workers (started with ``dask scheduler`` and
  ``dask worker``; docs/BATCH.md): the manifest's files and ``--out`` must be
  at the same paths on every worker, a shared file system.

A bake that raises something other than a bad input is retried by Dask (``retries``) at
most :data:`MAX_RETRIES` times. A failed bake is reported with its error and the others go
on. A progress bar counts the bakes (stderr); then a table (job, character, clip, frames,
seconds, status), each failure's error, a summary line, and a JSON report (:func:`report`),
written whole, at ``--report`` (default ``DIR/bake-many-report.json``).

Before anything runs, an output or the report that is an input of the run (or the same file
through a link) is refused (:func:`refuse_aliases`), and so is a character that is itself a
bake (its mark) unless ``--force``. The record beside each output holds the output's own
digest, so a truncated or replaced output is baked again. ``--scheduler`` is checked first
(:func:`check_scheduler`); the local cluster's dashboard listens on :data:`DEFAULT_DASHBOARD`.

Exit status: 0 when every output is done (baked or up to date), 1 when a bake failed, 2 with
a one-line message when the command could not run (a bad manifest, an output that is an
input, a baked character without ``--force``, a scheduler address that is not a Dask
scheduler's, a bad option; a missing dask names the extra to install).
"""
from __future__ import annotations

import json
import os
import secrets
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from ..character.baking.run import write_whole
from ..character.baking.inputs import Digests, bake_digest, up_to_date
from ..character.baking.manifest import ManifestError, is_vrma, read_manifest
from ..extras import require
from ..whole_files import same_file
from .scheduler_address import SCHEDULER_TIMEOUT, check_scheduler
from .shared import one_line

#: Retries of a bake whose worker died, or that raised something other than a bad input.
MAX_RETRIES = 2
REPORT_NAME = "bake-many-report.json"
#: Where the LocalCluster's dashboard listens: this machine only. It has no authentication and
#: shows the workers' addresses, their folders and their logs; ``0.0.0.0:8787`` exposes it.
DEFAULT_DASHBOARD = "127.0.0.1:8787"
#: The status words of the table and the report.
BAKED, UP_TO_DATE, FAILED = "baked", "up to date", "failed"


def add_command(sub) -> None:
    """Register ``bake-many`` on an argparse subparsers object (see :mod:`gpu_jiggle.app.cli`)."""
    p = sub.add_parser("bake-many", help="bake many characters x clips on a Dask cluster (a local one by default)",
                       description="Bake every character x clip a TOML manifest lists, as gpu-jiggle bake would one "
                                   "by one, on a Dask cluster: a LocalCluster of worker processes on this machine, or "
                                   "the cluster at --scheduler. Outputs made from the same inputs (their record "
                                   "beside them) are skipped, so an interrupted run resumes; a failed bake is "
                                   "reported and the others go on. Needs the [batch] extra (dask[distributed]).")
    p.add_argument("manifest", metavar="MANIFEST", help="the TOML manifest of jobs (docs/BATCH.md)")
    p.add_argument("--out", required=True, metavar="DIR", help="the folder the outputs go under")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="a running Dask scheduler (tcp://host:8786); default: a LocalCluster on this machine")
    p.add_argument("--workers", type=_count, default=None, metavar="N",
                   help="worker processes of the LocalCluster (default: one per NVIDIA GPU for the GPU backend, "
                        "else one per core); not with --scheduler")
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto",
                   help="spring solver on the workers: gpu (GLSL compute), cpu (numpy reference) or auto (default)")
    p.add_argument("--dashboard", default=DEFAULT_DASHBOARD, metavar="ADDRESS",
                   help=f"where the LocalCluster serves Dask's dashboard (default {DEFAULT_DASHBOARD}: this machine "
                        f"only; '127.0.0.1:0' any free port). The dashboard has no password and shows the workers' "
                        f"addresses, folders and logs: '0.0.0.0:8787' shows it to every host that can reach this one")
    p.add_argument("--report", default=None, metavar="FILE",
                   help=f"the JSON report (default DIR/{REPORT_NAME})")
    p.add_argument("--force", action="store_true",
                   help="bake characters that are themselves bakes (their asset.extras mark); refused without it")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=run_command)


def _count(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number >= 1")
    return value


def default_workers(backend: str = "auto") -> int:
    """Worker processes of the LocalCluster by default: one per GPU (NVIDIA, for the GPU
    backend: each worker's context then on its own device, :func:`local_devices`), else the
    cores this process may run on."""
    if local_devices(backend):
        return local_devices(backend)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def local_devices(backend: str) -> int:
    """The GPUs the local cluster's workers share out (one each, by worker number), 0 for the
    numpy backend or a machine without NVIDIA GPUs."""
    from ..gl.context import nvidia_gpu_count

    return 0 if backend == "cpu" else nvidia_gpu_count()


def run_command(args) -> int:
    """``gpu-jiggle bake-many``: 0 when every output is done, 1 when a bake failed, 2 when the
    command could not run (module docstring)."""
    require("distributed", "baking on a Dask cluster")
    started = time.perf_counter()
    if args.scheduler is not None and args.workers is not None:
        return _refuse("--workers sizes the local cluster; with --scheduler the cluster's own workers run the bakes")
    out = Path(os.path.abspath(args.out))
    report_path = Path(args.report) if args.report else out / REPORT_NAME
    try:
        jobs = read_manifest(args.manifest)
    except ManifestError as exc:
        return _refuse(str(exc))
    try:
        rows, tasks = plan(jobs, out, args.backend, devices=local_devices(args.backend) if args.scheduler is None
                           else 0, force=args.force, report_path=report_path, manifest=args.manifest)
    except ValueError as exc:
        return _refuse(str(exc))
    row_of = {row["output"]: row for row in rows if row["status"] is None}
    where = None
    if tasks:
        try:
            with connect(args.scheduler, args.workers or default_workers(args.backend), args.dashboard) as (client,
                                                                                                          where):
                _say_where(client, where, local=args.scheduler is None)
                for task, record in run_tasks(client, tasks, progress=not args.no_progress):
                    row_of[task.job.output].update(record)
        except (OSError, TimeoutError, ValueError) as exc:
            return _refuse(f"the Dask cluster could not run: {one_line(exc)}")
    wall = time.perf_counter() - started
    print(table(rows))
    for row in rows:
        if row["status"] == FAILED:
            print(f"failed: {row['job']} ({Path(row['character']).name}, {_clip_name(row['clip'])}): {row['error']}")
    data = report(rows, args, where, wall)
    try:
        write_whole(report_path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
    except OSError as exc:
        return _refuse(f"{report_path}: the report cannot be written: {one_line(exc)}")
    done = data["baked"] + data["up_to_date"]
    print(f"bake-many: {done} of {data['total']} outputs done ({data['baked']} baked, {data['up_to_date']} up to "
          f"date), {data['failed']} failed, in {wall:.1f} s{f' on {where}' if where else ''}; report: {report_path}")
    return 1 if data["failed"] else 0


def _refuse(message: str) -> int:
    print(f"gpu-jiggle bake-many: {message}", file=sys.stderr)
    return 2


def plan(jobs: list, out: Path, backend: str, devices: int = 0, force: bool = False, report_path=None,
         manifest=None):
    """``(rows, tasks)``: one report row per job, in the manifest's order (status set for those
    failed before running and those up to date), and the
    :class:`~gpu_jiggle.app.bake_workers.BakeTask` s to run, grouped by character in the
    order each character first appears; ``devices``: the GPUs a local cluster's workers share.

    Raises:
        ValueError, before anything runs: an output (or ``report_path``) that is, or links
        to, an input of the run (:func:`refuse_aliases`), or a character that is itself a bake
        (its mark) without ``force``.
    """
    from .bake_workers import BakeTask

    digests, rows, tasks, run = Digests(), [], [], secrets.token_hex(4)
    refuse_aliases(jobs, out, digests, report_path, manifest)
    for job in jobs:
        row = {"job": job.job, "character": str(job.character), "rig": None if job.rig is None else str(job.rig),
               "clip": job.clip, "output": job.output, "status": None, "frames": None, "seconds": None,
               "backend": None, "error": job.error, "worker": None, "pid": None, "loaded": None, "attempts": 0,
               "workers": [], "digest": None}
        rows.append(row)
        if job.error is not None:
            row["status"] = FAILED
            continue
        try:
            character = digests.character(job.character)
            digest = bake_digest(job, backend, character, None if job.rig is None else digests.file(job.rig),
                                 None if job.vrma is None else digests.character(job.vrma))
        except OSError as exc:
            row.update(status=FAILED, error=one_line(exc))
            continue
        mark = digests.mark(job.character)
        if mark is not None and not force:
            raise ValueError(f"{job.character} ([[job]] {job.index} ({job.job!r})) is already a bake (gpu_jiggle "
                             f"bake of clip {mark.get('clip')!r}): baking it again puts springs on springs; narrow "
                             f"the manifest's glob, put --out outside the library, or give --force")
        row["digest"] = digest
        record = up_to_date(out / job.output, digest)
        if record is not None:
            row.update(status=UP_TO_DATE, frames=record.get("frames"), backend=record.get("backend"))
            continue
        tasks.append(BakeTask(job, backend, digest, character, str(out), run, devices, force))
    first = {}
    for task in tasks:
        first.setdefault(str(task.job.character), len(first))
    tasks.sort(key=lambda t: first[str(t.job.character)])  # stable: the manifest's order within a character
    return rows, tasks


def refuse_aliases(jobs: list, out: Path, digests, report_path=None, manifest=None) -> None:
    """ValueError when an output of ``jobs`` under ``out``, or the report at ``report_path``,
    is an input of the run or the same file (a symlink, a hard link): a character or a file it
    refers to, a rig, a ``.vrma`` or its ``.bin``, the ``manifest``; or the report is an
    output."""
    inputs = [] if manifest is None else [Path(manifest)]
    for job in jobs:
        found = [job.character, *([job.rig] if job.rig is not None else [])]
        for path in [job.character] + ([job.vrma] if job.vrma is not None else []):
            try:
                found.extend(digests.files(path))
            except OSError:
                pass  # the job fails on its own
        inputs.extend(p for p in found if p not in inputs)
    outputs = [(f"the output of [[job]] {job.index} ({job.job!r})", out / job.output) for job in jobs
               if job.error is None]
    for what, path in outputs + ([("the report", Path(report_path))] if report_path is not None else []):
        for source in inputs:
            if same_file(path, source):
                raise ValueError(f"{path} ({what}) is {'' if str(path) == str(source) else 'the same file as '}"
                                 f"the input {source}: a bake never writes over what it reads; give --out (or the "
                                 f"manifest's output names, or --report) somewhere else")
    if report_path is not None:
        for what, path in outputs:
            if same_file(report_path, path):
                raise ValueError(f"{report_path} (the report) is {what}; give --report another name")


@contextmanager
def connect(scheduler: str | None, workers: int, dashboard: str = DEFAULT_DASHBOARD):
    """``(client, where)`` for the block: a Client of the scheduler at ``scheduler``, or of a
    new LocalCluster of ``workers`` processes (one thread each, :data:`MAX_RETRIES` retries of
    a bake whose worker died, the dashboard at ``dashboard``), closed after. ``where`` says
    which, for the summary. Dask's own log says only warnings meanwhile. Raises OSError or
    TimeoutError when the scheduler does not answer."""
    import logging
    import warnings

    import dask
    from distributed import Client, LocalCluster

    log = logging.getLogger("distributed")
    level = log.level
    log.setLevel(max(level, logging.WARNING))
    try:
        if scheduler is not None:
            scheduler = check_scheduler(scheduler)
            with Client(scheduler, set_as_default=False, timeout=SCHEDULER_TIMEOUT) as client:
                yield client, scheduler
            return
        with dask.config.set({"distributed.scheduler.allowed-failures": MAX_RETRIES}), warnings.catch_warnings():
            # a dashboard port in use: Dask takes another, and the dashboard line printed says which
            warnings.filterwarnings("ignore", message=r"\s*Port \d+ is already in use", category=UserWarning)
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=dashboard)
        try:
            with Client(cluster, set_as_default=False) as client:
                yield client, f"a local cluster of {workers} worker{'s' if workers != 1 else ''}"
        finally:
            cluster.close()
    finally:
        log.setLevel(level)


def _say_where(client, where: str, local: bool) -> None:
    import importlib.util

    info = client.scheduler_info()
    if "dashboard" in info.get("services", {}):
        bokeh = "" if not local or importlib.util.find_spec("bokeh") else " (its pages need bokeh: pip install bokeh)"
        print(f"dashboard: {client.dashboard_link}{bokeh}")
    if not info.get("workers"):
        print(f"{where} has no workers yet: the bakes wait for 'dask worker {where}'")


def run_tasks(client, tasks: list, progress: bool = True):
    """Submit ``tasks`` to ``client``'s cluster and yield ``(task, record)`` as each ends, in
    the order they end: the worker's record (:meth:`~gpu_jiggle.app.bake_workers.Workshop.bake`)
    with ``attempts`` and ``workers`` added (the starts announced on
    :data:`~gpu_jiggle.app.bake_workers.TOPIC`, known to the scheduler before the bake runs:
    :func:`~gpu_jiggle.app.bake_workers.announce`), or a failed record when the task raised even
    after its retries, or its workers died while it ran (Dask's KilledWorker). No more bakes
    are in flight than the cluster has threads (the others wait here), since Dask counts a
    worker's death against every task the worker holds, running or waiting; a bake that got
    a KilledWorker all the same without ever starting is submitted again (at most
    :data:`MAX_RETRIES` times): a crash is put down to the bake that was running."""
    from distributed import KilledWorker, as_completed

    from .bake_workers import TOPIC, run_bake

    tqdm = require("tqdm", "the progress bar").tqdm
    starts = {}
    run = tasks[0].run if tasks else ""

    def started(event):
        message = event[1]
        if isinstance(message, dict) and message.get("event") == "start" and message.get("run") == run:
            starts.setdefault(message.get("output"), []).append(message.get("worker"))

    client.subscribe_topic(TOPIC, started)
    try:
        waiting = [(f"gpu-jiggle-bake-{run}-{i}", task) for i, task in enumerate(tasks)][::-1]
        futures, again = {}, {}  # again: output -> times submitted again after deaths not its own

        def submit_more(pending=None):
            # no more bakes in flight than the cluster has threads: a bake waits here, not on a
            # worker, so a worker that dies was running the one bake it held
            room = max(1, sum(client.nthreads().values())) - len(futures)
            while waiting and room > 0:
                key, task = waiting.pop()
                future = client.submit(run_bake, task, key=key, retries=MAX_RETRIES, pure=False)
                futures[future] = task
                room -= 1
                if pending is not None:
                    pending.add(future)

        submit_more()
        failed = 0
        with tqdm(total=len(tasks), unit="bake", desc="bake-many", file=sys.stderr, disable=not progress) as bar:
            pending = as_completed(list(futures), loop=client.loop)
            for future in pending:
                task = futures.pop(future)
                ran = starts.get(task.job.output, [])
                try:
                    record = future.result()
                except KilledWorker as exc:
                    if not ran and again.get(task.job.output, 0) < MAX_RETRIES:
                        # its worker died while it waited there (a worker placed two bakes at once);
                        # it never started, so the deaths were another bake's: submit it again
                        future.release()
                        again[task.job.output] = again.get(task.job.output, 0) + 1
                        waiting.append((f"{future.key}-again-{again[task.job.output]}", task))
                        submit_more(pending)
                        continue
                    record = _failed(task, f"the worker process died each time it ran this bake "
                                           f"({f'{len(ran)} times' if ran else _times(exc)}; Dask's KilledWorker): "
                                           f"a crash, or out of memory?")
                except Exception as exc:  # raised on the worker, retried MAX_RETRIES times
                    record = _failed(task, f"{type(exc).__name__}: {one_line(exc)}")
                future.release()
                submit_more(pending)
                record.update(attempts=len(ran), workers=list(ran))
                failed += record["status"] == FAILED
                bar.update(1)
                if failed:
                    bar.set_postfix_str(f"{failed} failed")
                yield task, record
    finally:
        client.unsubscribe_topic(TOPIC)


def _times(killed) -> str:
    """How many workers died running a task, from a KilledWorker: ``"3 times"``."""
    try:
        return f"{int(killed.allowed_failures) + 1} times"
    except (AttributeError, IndexError, TypeError, ValueError):  # another version's exception
        return "every time"


def _failed(task, error: str) -> dict:
    return {"output": task.job.output, "status": FAILED, "error": error}


def table(rows: list) -> str:
    """The summary table: job, character, clip, frames, seconds, status; one row per output."""
    head = ("job", "character", "clip", "frames", "seconds", "status")
    lines = [(r["job"], Path(r["character"]).name, _clip_name(r["clip"]),
              "-" if r["frames"] is None else str(r["frames"]),
              "-" if r["seconds"] is None else f"{r['seconds']:.2f}", r["status"]) for r in rows]
    widths = [max(len(str(v)) for v in column) for column in zip(head, *lines)]
    numeric = (False, False, False, True, True, False)

    def line(values):
        return "  ".join(str(v).rjust(w) if n else str(v).ljust(w) for v, w, n in zip(values, widths, numeric)).rstrip()

    return "\n".join([line(head), *(line(v) for v in lines)])


def _clip_name(clip: str) -> str:
    """A clip as the table shows it: its name, or a .vrma's file name."""
    return Path(clip).name if is_vrma(clip) else clip


def report(rows: list, args, where: str | None, wall_seconds: float) -> dict:
    """The JSON report: the manifest, ``out``, ``backend``, ``cluster`` (None when nothing ran),
    ``wall_seconds``, the counts ``total``, ``baked``, ``up_to_date``, ``failed``, and
    ``bakes``: per output its job, character, rig, clip, output, status, frames, seconds,
    backend (the solver's), error, worker (the one that baked it) and its pid, loaded (the
    character loaded for this bake, not found loaded), attempts and workers (every start
    seen) and the inputs' digest."""
    counts = {status: sum(r["status"] == status for r in rows) for status in (BAKED, UP_TO_DATE, FAILED)}
    return {"manifest": os.path.abspath(args.manifest), "out": os.path.abspath(args.out), "backend": args.backend,
            "cluster": where, "wall_seconds": wall_seconds, "total": len(rows), "baked": counts[BAKED],
            "up_to_date": counts[UP_TO_DATE], "failed": counts[FAILED],
            "bakes": rows}

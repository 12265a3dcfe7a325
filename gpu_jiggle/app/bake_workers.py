"""The worker side of ``gpu-jiggle bake-many`` (:mod:`gpu_jiggle.app.bake_many`): one bake
of one :class:`BakeTask`, run as a Dask task by :func:`run_bake`.

Each worker process keeps one :class:`Workshop` (:func:`workshop`) for as long as it lives:
one thread where every bake of the process runs, so the process's headless OpenGL context
(EGL; llvmpipe without a GPU), made there by the first GPU bake, stays current in that thread
and serves every later job, whichever of Dask's threads ran the task; and the characters it
loaded last (:data:`CACHED_CHARACTERS`, keyed by path and content digest), so the jobs of one
character, submitted together, load it once per worker. Rigs are read for each bake (a TOML
file, or the character's VRM spring bones).

A bake writes its output whole (:func:`gpu_jiggle.character.baking.run.bake`), then its record
(:func:`gpu_jiggle.character.baking.inputs.write_record`); the record of earlier inputs is
removed first. The result is the same :func:`~gpu_jiggle.character.baking.run.bake` call that
``gpu-jiggle bake`` makes, so the file is the same bytes on the same backend.
"""
from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..character.baking.run import bake
from ..character.baking.inputs import forget, write_record
from ..character.baking.manifest import BakeJob
from ..character.motion import with_motion
from ..character.gltf.vrma import vrma_clip
from ..gl.context import choose_device
from .shared import one_line, open_character

#: The Dask event topic on which each bake says that it starts (:func:`run_bake`).
TOPIC = "gpu-jiggle-bake"
#: Characters a worker keeps loaded, the most recently used.
CACHED_CHARACTERS = 3


@dataclass(frozen=True)
class BakeTask:
    """What a worker needs for one bake.

    Attributes:
        job: the :class:`~gpu_jiggle.character.baking.manifest.BakeJob`. backend: ``"auto"``,
        ``"gpu"`` or ``"cpu"``. digest: the inputs' digest recorded beside the output.
        character_digest: the character's content digest (the cache key with its path).
        out_dir: the output folder, absolute, as the worker sees it. run: the run's id, in
        the start events. devices: the GPUs a local cluster's workers share out, one each by
        worker number (:func:`device_of`), or 0 (a worker keeps the default device). force:
        bake a character that is itself a bake (``bake-many --force``).
    """

    job: BakeJob
    backend: str
    digest: str
    character_digest: str
    out_dir: str
    run: str = ""
    devices: int = 0
    force: bool = False

    @property
    def output(self) -> Path:
        return Path(self.out_dir) / self.job.output


def run_bake(task: BakeTask) -> dict:
    """The Dask task: announce the start on :data:`TOPIC` (``{"event": "start", "run",
    "output", "worker", "pid"}``, :func:`announce`), then bake in this process's :class:`Workshop`; returns
    :meth:`Workshop.bake`'s record. Needs a Dask worker (``distributed.get_worker``)."""
    from distributed import get_worker

    worker = get_worker()
    announce(worker, {"event": "start", "run": task.run, "output": task.job.output, "worker": worker.address,
                      "pid": os.getpid()})
    device = device_of(worker.name, task.devices)
    if device is not None:  # before this process's first context: the local cluster's worker k on GPU k
        choose_device(device)
    return workshop().bake(task, worker.address)


def announce(worker, message: dict) -> None:
    """Log ``message`` on :data:`TOPIC` and wait until the scheduler has it (a call to it, not
    the worker's batched stream), so that a bake that kills its worker is known to have
    started: a death is then put down to the bake that was running, not to those waiting on
    the same worker. Falls back to the batched stream when the call fails."""
    from distributed.utils import sync

    try:
        sync(worker.loop, worker.scheduler.log_event, topic=TOPIC, msg=message)
    except Exception:  # an older scheduler without the call: the batched stream, no wait
        worker.log_event(TOPIC, message)


def device_of(worker_name, devices: int):
    """The GPU of the local cluster's worker ``worker_name`` (LocalCluster numbers them 0, 1,
    ...) when ``devices`` GPUs are shared out: its number modulo ``devices``; None for no
    devices or a worker not named by a number."""
    if devices < 1:
        return None
    try:
        return int(worker_name) % devices
    except (TypeError, ValueError):
        return None


class Workshop:
    """A process's bakes: one thread that runs them all (and so owns the GL context), and the
    characters loaded last. Use :func:`workshop`."""

    def __init__(self, cached: int = CACHED_CHARACTERS):
        self.cached = cached
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="gpu-jiggle-bake")
        self._characters = OrderedDict()

    def bake(self, task: BakeTask, worker: str = "") -> dict:
        """Bake ``task`` on the workshop's thread. Returns the record: ``output``, ``status``
        (``"baked"`` or ``"failed"``), ``frames`` (keys written, or None), ``seconds`` (the
        job's wall time here, loading included), ``backend`` (the solver's, or None),
        ``error`` (one line, or None), ``worker``, ``pid``, ``loaded`` (whether the character
        was loaded for this job rather than found loaded).

        A bad input (a file that is not a character, an unknown clip, an unstable rig, no
        springs, an output that cannot be written) is a failed record; anything else (out of
        memory, a bug) raises, for Dask to retry."""
        return self._thread.submit(self._bake, task, worker).result()

    def _bake(self, task: BakeTask, worker: str) -> dict:
        started = time.perf_counter()
        job = task.job
        record = {"output": job.output, "status": "failed", "frames": None, "seconds": None, "backend": None,
                  "error": None, "worker": worker, "pid": os.getpid(), "loaded": False}
        try:
            character, record["loaded"] = self.character(job.character, task.character_digest)
            character, rig = open_character(character, job.rig)
            if rig is None:
                raise ValueError(f"{job.character}: no rig given and the model has no VRM spring bones")
            clip = job.clip
            if job.vrma is not None:  # as gpu-jiggle bake --animation clip.vrma: one more animation in the copy
                animation = vrma_clip(character, job.vrma)
                character, clip = with_motion(character, animation), animation.name
            forget(task.output)
            result = bake(character, rig, clip, job.fps, task.output, preroll=job.preroll, backend=task.backend,
                          look_at=job.look_at, strands=job.strands, force=task.force,
                          inputs=[p for p in (job.rig, job.vrma) if p is not None])
            write_record(task.output, task.digest, {
                "job": job.job, "character": str(job.character), "rig": None if job.rig is None else str(job.rig),
                **job.settings, "backend_asked": task.backend, "backend": result.backend,
                "frames": len(result.times), "gpu_jiggle": __version__})
            record.update(status="baked", frames=len(result.times), backend=result.backend)
        except (FileNotFoundError, ValueError, RuntimeError, OSError) as exc:
            record["error"] = one_line(exc)
        record["seconds"] = time.perf_counter() - started
        return record

    def character(self, path: Path, digest: str):
        """``(character, loaded)``: the character at ``path`` with content ``digest``, from
        the cache or loaded now (``loaded`` True). Raises what
        :meth:`~gpu_jiggle.character.gltf.loader.Character.load` raises."""
        from ..character.gltf.loader import Character

        key = (str(path), digest)
        if key in self._characters:
            self._characters.move_to_end(key)
            return self._characters[key], False
        character = Character.load(path)
        self._characters[key] = character
        while len(self._characters) > self.cached:
            self._characters.popitem(last=False)
        return character, True


_workshop = None
_workshop_lock = threading.Lock()


def workshop() -> Workshop:
    """This process's :class:`Workshop`, made on first use."""
    global _workshop
    with _workshop_lock:
        if _workshop is None:
            _workshop = Workshop()
        return _workshop

"""gpu-jiggle bake-many: a manifest's bakes on a Dask cluster are the bytes serial
``gpu-jiggle bake`` runs write; a failed bake is reported and the others go on; an
interrupted run resumes with only what is missing; a worker killed in the middle of a bake has
it retried on another; a bad manifest is refused, naming the manifest, the job and the key,
before anything runs."""
from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path

import dask
import pytest
from demo_support import FOX, FOX_RIG
from distributed import Client, LocalCluster, WorkerPlugin

from gpu_jiggle.app import cli

#: The topic on which the held bake of the fault test says which process to kill.
HOLD_TOPIC = "gpu-jiggle-bake-test-hold"


# -- helpers and fixtures ------------------------------------------------------------------------------
def write_manifest(folder: Path, text: str) -> Path:
    """``folder/manifest.toml`` with ``{FOX}`` and ``{RIG}`` replaced by the Fox's files."""
    path = folder / "manifest.toml"
    path.write_text(text.replace("{FOX}", json.dumps(str(FOX))).replace("{RIG}", json.dumps(str(FOX_RIG))))
    return path


def bake_many(*args) -> int:
    return cli.main(["bake-many", *map(str, args), "--no-progress", "--dashboard", "127.0.0.1:0"])


def read_report(out: Path) -> dict:
    return json.loads((out / "bake-many-report.json").read_text())


def stiff_rig_text() -> str:
    """rigs/fox.toml with a stiffer tail: the second rig of the manifests."""
    text = FOX_RIG.read_text()
    assert "frequency = [3.0, 2.5, 2.0]" in text
    return text.replace("frequency = [3.0, 2.5, 2.0]", "frequency = [4.5, 4.0, 3.5]")


@pytest.fixture(scope="module")
def serial_bake(gl_context, tmp_path_factory):
    """``serial_bake(rig, clip) -> bytes``: what ``gpu-jiggle bake`` of the Fox's clip with that
    rig writes on the GPU backend (each made once per module)."""
    folder = tmp_path_factory.mktemp("serial")
    made = {}

    def bake(rig, clip: str) -> bytes:
        key = (str(rig), clip)
        if key not in made:
            out = folder / f"{len(made)}.glb"
            assert cli.main(["bake", str(FOX), "--rig", str(rig), "--animation", clip, "--backend", "gpu",
                             "--out", str(out)]) == 0
            made[key] = out.read_bytes()
        return made[key]

    return bake


def local_cluster():
    """A LocalCluster of 2 worker processes of one thread each, a bake retried twice when its
    worker dies (as ``bake-many`` makes its own), its dashboard on any free port."""
    with dask.config.set({"distributed.scheduler.allowed-failures": 2}):
        return LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0")


@pytest.fixture(scope="module")
def cluster():
    cluster = local_cluster()
    try:
        yield cluster
    finally:
        cluster.close()


def temporary_files(folder: Path) -> list:
    return [p for p in folder.rglob(".*.tmp")]


# -- the library bake ----------------------------------------------------------------------------------
def test_six_bakes_on_two_local_workers_are_the_serial_bakes_bytes_and_one_failure_is_reported(
        tmp_path, serial_bake, capsys):
    (tmp_path / "stiff.toml").write_text(stiff_rig_text())
    (tmp_path / "broken.glb").write_bytes(b"not a model at all")
    manifest = write_manifest(tmp_path, """
[[job]]
name = "fox"
character = {FOX}
rig = {RIG}
clips = "all"

[[job]]
name = "fox-stiff"
character = {FOX}
rig = "stiff.toml"
clips = ["Walk", "Run"]

[[job]]
name = "broken"
character = "broken.glb"
rig = {RIG}
clips = ["Run"]
""")
    out = tmp_path / "out"
    status = bake_many(manifest, "--out", out, "--workers", 2)
    printed = capsys.readouterr().out
    assert status == 1
    assert "bake-many: 5 of 6 outputs done (5 baked, 0 up to date), 1 failed" in printed
    assert "failed: broken (broken.glb, Run): " in printed and "not a glTF file" in printed
    assert "a local cluster of 2 workers" in printed
    report = read_report(out)
    assert (report["total"], report["baked"], report["failed"]) == (6, 5, 1)
    rows = {(r["job"], r["clip"]): r for r in report["bakes"]}
    assert list(rows) == [("fox", "Survey"), ("fox", "Walk"), ("fox", "Run"), ("fox-stiff", "Walk"),
                          ("fox-stiff", "Run"), ("broken", "Run")]
    assert rows["broken", "Run"]["status"] == "failed" and "not a glTF file" in rows["broken", "Run"]["error"]
    table_rows = [line.split() for line in printed.splitlines()]
    head = table_rows.index(["job", "character", "clip", "frames", "seconds", "status"])
    assert table_rows[head + 6][:4] == ["broken", "broken.glb", "Run", "-"] and table_rows[head + 6][-1] == "failed"
    rigs = {"fox": FOX_RIG, "fox-stiff": tmp_path / "stiff.toml"}
    for (job, clip), row in rows.items():
        if job == "broken":
            continue
        assert row["status"] == "baked" and row["backend"] == "gpu" and row["attempts"] == 1, row
        output = out / row["output"]
        assert output.read_bytes() == serial_bake(rigs[job], clip), f"{job} {clip}: not the bytes of gpu-jiggle bake"
        assert json.loads((out / (row["output"] + ".bake.json")).read_text())["digest"] == row["digest"]
        assert [job, "Fox.gltf", clip, str(row["frames"]), f"{row['seconds']:.2f}", "baked"] in table_rows
    assert serial_bake(FOX_RIG, "Run") != serial_bake(tmp_path / "stiff.toml", "Run")  # the two rigs differ
    # The Fox is loaded at most once by each worker process, for all five bakes.
    loads = {}
    for row in report["bakes"][:5]:
        loads[row["pid"]] = loads.get(row["pid"], 0) + row["loaded"]
    assert set(loads.values()) <= {0, 1} and sum(loads.values()) == len(loads)
    assert temporary_files(out) == []


def test_a_run_after_an_interruption_bakes_only_what_is_missing_or_changed(tmp_path, cluster, capsys):
    manifest_text = """
[defaults]
preroll = PREROLL

[[job]]
name = "fox"
character = {FOX}
rig = {RIG}
clips = ["Walk", "Run"]
"""
    manifest = write_manifest(tmp_path, manifest_text.replace("PREROLL", "1.0"))
    out = tmp_path / "out"
    address = ["--scheduler", cluster.scheduler_address]
    assert bake_many(manifest, "--out", out, *address) == 0
    walk, run = out / "fox" / "Fox_Walk.glb", out / "fox" / "Fox_Run.glb"
    walk_stat, run_bytes = walk.stat(), run.read_bytes()
    assert [r["status"] for r in read_report(out)["bakes"]] == ["baked", "baked"]

    run.unlink()  # as if the run had stopped before it
    assert bake_many(manifest, "--out", out, *address) == 0
    report = read_report(out)
    assert [(r["clip"], r["status"], r["attempts"]) for r in report["bakes"]] == [("Walk", "up to date", 0),
                                                                                ("Run", "baked", 1)]
    assert walk.stat().st_mtime_ns == walk_stat.st_mtime_ns and run.read_bytes() == run_bytes
    assert "2 of 2 outputs done (1 baked, 1 up to date), 0 failed" in capsys.readouterr().out

    assert bake_many(manifest, "--out", out, *address) == 0  # nothing to do: no cluster needed
    assert read_report(out)["cluster"] is None and read_report(out)["up_to_date"] == 2

    write_manifest(tmp_path, manifest_text.replace("PREROLL", "2.0"))  # other inputs: both again
    assert bake_many(manifest, "--out", out, *address) == 0
    assert [r["status"] for r in read_report(out)["bakes"]] == ["baked", "baked"]
    assert run.read_bytes() != run_bytes


class HoldFirstBake(WorkerPlugin):
    """On every worker: the first bake that starts in the cluster (the one that creates
    ``marker``) says on :data:`HOLD_TOPIC` which process it runs in, then waits to be killed;
    every other bake runs as usual."""

    name = "gpu-jiggle-test-hold-first-bake"

    def __init__(self, marker):
        self.marker = str(marker)

    def setup(self, worker):
        from gpu_jiggle.app import bake_workers

        bake, marker = bake_workers.Workshop.bake, self.marker

        def held(shop, task, address=""):
            try:
                fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            except FileExistsError:
                return bake(shop, task, address)
            os.close(fd)
            worker.log_event(HOLD_TOPIC, {"pid": os.getpid(), "worker": worker.address, "output": task.job.output})
            threading.Event().wait(120)  # killed meanwhile; the limit only ends a broken test
            raise RuntimeError("the held bake's worker was not killed")

        bake_workers.Workshop.bake = held


def test_a_worker_killed_during_a_bake_has_it_retried_on_another_and_every_output_completes(
        tmp_path, serial_bake):
    manifest = write_manifest(tmp_path, """
[[job]]
name = "fox"
character = {FOX}
rig = {RIG}
clips = ["Survey", "Walk", "Run"]
""")
    out = tmp_path / "out"
    killed = []

    def kill(event):
        message = event[1]
        killed.append(message)
        os.kill(message["pid"], signal.SIGKILL)

    cluster = local_cluster()
    try:
        with Client(cluster, set_as_default=False) as client:
            client.register_plugin(HoldFirstBake(tmp_path / "held"))
            client.subscribe_topic(HOLD_TOPIC, kill)
            status = bake_many(manifest, "--out", out, "--scheduler", cluster.scheduler_address)
    finally:
        cluster.close()
    assert status == 0
    assert len(killed) == 1
    report = read_report(out)
    assert report["baked"] == 3
    held = next(r for r in report["bakes"] if r["output"] == killed[0]["output"])
    assert held["attempts"] == 2 and held["workers"][0] == killed[0]["worker"]
    assert held["pid"] != killed[0]["pid"]  # baked by another process
    for row in report["bakes"]:
        assert (out / row["output"]).read_bytes() == serial_bake(FOX_RIG, row["clip"])
    assert temporary_files(out) == []


class KillEveryWalk(WorkerPlugin):
    """On every worker: a bake of the Fox's Walk kills its own worker process, each time."""

    name = "gpu-jiggle-test-kill-every-walk"

    def setup(self, worker):
        from gpu_jiggle.app import bake_workers

        bake = bake_workers.Workshop.bake

        def deadly(shop, task, address=""):
            if task.job.clip == "Walk":
                os.kill(os.getpid(), signal.SIGKILL)
            return bake(shop, task, address)

        bake_workers.Workshop.bake = deadly


def test_a_bake_that_kills_its_worker_every_time_is_reported_after_two_retries_and_the_others_complete(
        tmp_path, serial_bake, capsys):
    manifest = write_manifest(tmp_path, """
[[job]]
name = "fox"
character = {FOX}
rig = {RIG}
clips = ["Walk", "Run"]
""")
    out = tmp_path / "out"
    cluster = local_cluster()
    try:
        with Client(cluster, set_as_default=False) as client:
            client.register_plugin(KillEveryWalk())
            status = bake_many(manifest, "--out", out, "--scheduler", cluster.scheduler_address)
    finally:
        cluster.close()
    assert status == 1
    walk, run = read_report(out)["bakes"]
    assert walk["status"] == "failed"
    assert "the worker process died each time it ran this bake (3 times" in walk["error"]  # the run and 2 retries
    assert not (out / walk["output"]).exists() and temporary_files(out) == []
    assert run["status"] == "baked" and (out / run["output"]).read_bytes() == serial_bake(FOX_RIG, "Run")
    assert "1 of 2 outputs done (1 baked, 0 up to date), 1 failed" in capsys.readouterr().out


def test_without_dask_the_command_names_the_extra_to_install(tmp_path, monkeypatch, capsys):
    manifest = write_manifest(tmp_path, '[[job]]\ncharacter = {FOX}\nrig = {RIG}\n')
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    assert cli.main(["bake-many", str(manifest), "--out", str(tmp_path / "out")]) == 2
    assert ("gpu-jiggle bake-many: baking on a Dask cluster needs dask[distributed], which is not installed: "
            "pip install 'gpu-jiggle[batch]'") in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_bad_manifest_stops_the_command_before_anything_runs(tmp_path, capsys):
    manifest = write_manifest(tmp_path, '[[job]]\nname = "fox"\ncharacter = {FOX}\nrig = {RIG}\nclip = "Run"\n')
    assert bake_many(manifest, "--out", tmp_path / "out") == 2
    assert (f"gpu-jiggle bake-many: {manifest}: [[job]] 1 ('fox'), key 'clip': unknown key 'clip'; did you mean "
            f"'clips'?") in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    assert bake_many(manifest, "--out", tmp_path / "out", "--scheduler", "tcp://127.0.0.1:1", "--workers", 2) == 2
    assert "--workers sizes the local cluster" in capsys.readouterr().err


def test_the_local_cluster_gives_each_gpu_a_worker_and_each_worker_its_gpu(tmp_path, monkeypatch):
    from gpu_jiggle.app import bake_many
    from gpu_jiggle.app.bake_workers import device_of
    from gpu_jiggle.gl import context

    gpus = tmp_path / "gpus"
    assert context.nvidia_gpu_count(str(gpus)) == 0  # no driver: no GPUs
    for bus in ("0000:17:00.0", "0000:65:00.0", "0000:ca:00.0"):
        (gpus / bus).mkdir(parents=True)
    assert context.nvidia_gpu_count(str(gpus)) == 3
    monkeypatch.setattr(context, "NVIDIA_GPU_FOLDER", str(gpus))
    monkeypatch.setattr(context.nvidia_gpu_count, "__defaults__", (str(gpus),))
    assert bake_many.default_workers("auto") == 3 and bake_many.local_devices("gpu") == 3
    assert bake_many.local_devices("cpu") == 0 and bake_many.default_workers("cpu") == len(os.sched_getaffinity(0))
    assert [device_of(name, 3) for name in (0, 1, 2, 3, "4")] == [0, 1, 2, 0, 1]
    assert device_of("tcp://10.0.0.1:4001", 3) is None and device_of(0, 0) is None
    monkeypatch.setenv(context.DEVICE_VARIABLE, "2")   # the user's choice stands
    assert not context.choose_device(1) and os.environ[context.DEVICE_VARIABLE] == "2"
    monkeypatch.delenv(context.DEVICE_VARIABLE)
    monkeypatch.setattr(context, "_context", None)
    assert context.choose_device(1) and os.environ[context.DEVICE_VARIABLE] == "1"
    monkeypatch.delenv(context.DEVICE_VARIABLE)


def test_the_local_cluster_serves_its_dashboard_on_this_machine_only(capsys):
    """With the [batch] extra (dask's diagnostics: bokeh) the dashboard bake-many prints answers,
    and by default it listens on the loopback address alone (read from ``ss -ltn``: nothing is
    sent to another address)."""
    import shutil
    import subprocess
    from urllib.parse import urlparse
    from urllib.request import urlopen

    from gpu_jiggle.app.bake_many import _say_where, connect

    with connect(None, 1) as (client, where):  # the default dashboard address
        _say_where(client, where, local=True)
        printed = capsys.readouterr().out
        assert f"dashboard: {client.dashboard_link}\n" in printed, printed
        port = urlparse(client.dashboard_link).port
        if shutil.which("ss") is None:
            pytest.skip("no ss here to read the listening addresses")
        listening = [line.split()[3] for line in subprocess.run(["ss", "-ltnH"], capture_output=True, text=True,
                                                                 check=True).stdout.splitlines()]
        on_port = [address for address in listening if address.rsplit(":", 1)[-1] == str(port)]
        assert on_port == ["127.0.0.1:" + str(port)], on_port
        with urlopen(client.dashboard_link, timeout=30) as page:
            assert page.status == 200 and b"Dask" in page.read()


# -- outputs never overwrite inputs; the up-to-date check covers the output itself --------------------------
def test_an_output_or_report_that_is_an_input_is_refused_before_anything_runs(tmp_path, capsys):
    import shutil

    library = tmp_path / "library"
    library.mkdir()
    shutil.copy(FOX, library / "Fox.gltf")
    source = (library / "Fox.gltf").read_bytes()
    manifest = library / "manifest.toml"
    cases = [  # (output pattern, --out, extra options, what the message says)
        ('"{character}.gltf"', library, [], "is the input"),
        ('"{job}_{clip}.glb"', tmp_path / "out", ["--report", manifest], "(the report) is the input"),
        ('"{job}_{clip}.glb"', tmp_path / "out", ["--report", tmp_path / "out" / "fox_Run.glb"], "(the report) is "
                                                                                               "the output"),
        ('"link_{clip}.glb"', library, [], "is the same file as the input"),
    ]
    (library / "link_Run.glb").symlink_to(library / "Fox.gltf")
    for pattern, out, extra, said in cases:
        manifest.write_text(f'[[job]]\nname = "fox"\ncharacter = "Fox.gltf"\nrig = {json.dumps(str(FOX_RIG))}\n'
                            f'clips = ["Run"]\noutput = {pattern}\n')
        text = manifest.read_text()
        assert bake_many(manifest, "--out", out, *extra) == 2
        err = capsys.readouterr().err
        assert said in err and "a bake never writes over what it reads" in err or "give --report" in err, err
        assert (library / "Fox.gltf").read_bytes() == source and manifest.read_text() == text
    assert not (tmp_path / "out").exists()


def test_a_glob_that_matches_an_earlier_runs_baked_output_is_refused_without_force(tmp_path, capsys):
    from gpu_jiggle.character.baking.gltf import mark_baked

    library = tmp_path / "library"
    (library / "out").mkdir(parents=True)
    doc = json.loads(FOX.read_text())
    (library / "Fox.gltf").write_text(json.dumps(doc))
    mark_baked(doc, "Run")  # what an earlier run left inside the library
    (library / "out" / "Fox_Run.gltf").write_text(json.dumps(doc))
    manifest = library / "manifest.toml"
    manifest.write_text(f'[[job]]\nname = "fox"\ncharacter = "**/*.gltf"\nrig = {json.dumps(str(FOX_RIG))}\n'
                        f'clips = ["Run"]\noutput = "{{character}}_{{clip}}_again.glb"\n')
    assert bake_many(manifest, "--out", library / "out") == 2
    err = capsys.readouterr().err
    assert "Fox_Run.gltf" in err and "is already a bake" in err and "--force" in err, err
    assert sorted(p.name for p in (library / "out").iterdir()) == ["Fox_Run.gltf"]


def test_the_record_covers_the_output_itself_and_a_vrmas_external_buffer(tmp_path):
    from gpu_jiggle.character.baking.inputs import Digests, up_to_date, write_record

    output = tmp_path / "a.glb"
    output.write_bytes(b"glTF" + bytes(range(200)))
    write_record(output, "d1", {"frames": 3})
    assert up_to_date(output, "d1") is not None
    output.write_bytes(output.read_bytes()[:100])  # truncated
    assert up_to_date(output, "d1") is None
    output.write_bytes(b"glTF" + bytes(reversed(range(200))))  # replaced, same size
    assert up_to_date(output, "d1") is None

    (tmp_path / "wave.bin").write_bytes(bytes(16))
    (tmp_path / "wave.vrma").write_text(json.dumps({"asset": {"version": "2.0"},
                                                    "buffers": [{"uri": "wave.bin", "byteLength": 16}]}))
    before = Digests().character(tmp_path / "wave.vrma")
    (tmp_path / "wave.bin").write_bytes(bytes([1]) * 16)  # the keys change; the .vrma's bytes do not
    assert Digests().character(tmp_path / "wave.vrma") != before


# -- a scheduler address that is not a Dask scheduler's is refused quickly ----------------------------------
def _serve(answer: bytes | None):
    """A local TCP server on a free port that accepts and sends ``answer`` (None: says nothing);
    returns (address, close)."""
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    held = []

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            if answer is not None:
                conn.sendall(answer)

    threading.Thread(target=serve, daemon=True).start()

    def close():
        server.close()
        for conn in held:
            conn.close()

    return f"tcp://127.0.0.1:{server.getsockname()[1]}", close


@pytest.mark.parametrize("address, said", [
    ("garbage", "not a scheduler address"),
    ("tcp://10.0.0.5", "not a scheduler address"),
    ("http://127.0.0.1:8787", "the scheme 'http' is not one a Dask scheduler speaks"),
    ("tcp://127.0.0.1:99999", "port 99999 is not in 1..65535"),
])
def test_a_malformed_scheduler_address_is_refused_naming_it(address, said):
    from gpu_jiggle.app.scheduler_address import check_scheduler

    with pytest.raises(ValueError, match=f"--scheduler {address!r}: .*{said}"):
        check_scheduler(address)


def test_a_server_that_is_not_a_dask_scheduler_is_refused_within_the_timeout(tmp_path, capsys, monkeypatch):
    import socket

    from gpu_jiggle.app import scheduler_address as module
    from gpu_jiggle.app.scheduler_address import check_scheduler

    silent, close_silent = _serve(None)
    web, close_web = _serve(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    closed = f"tcp://127.0.0.1:{probe.getsockname()[1]}"  # bound, not listening: refused
    try:
        with pytest.raises(OSError, match="accepted the connection but sent nothing within 0.3 s"):
            check_scheduler(silent, timeout=0.3)
        with pytest.raises(OSError, match=r"answered b'HTTP/1.1', which is not Dask's protocol"):
            check_scheduler(web, timeout=5)
        with pytest.raises(OSError, match="the connection was refused"):
            check_scheduler(closed, timeout=5)
        manifest = write_manifest(tmp_path, '[[job]]\nname = "fox"\ncharacter = {FOX}\nrig = {RIG}\n'
                                            'clips = ["Run"]\n')
        monkeypatch.setattr(module, "SCHEDULER_TIMEOUT", 0.3)
        for address, said in ((silent, "sent nothing within 0.3 s"), (web, "not Dask's protocol")):
            assert bake_many(manifest, "--out", tmp_path / "out", "--scheduler", address) == 2
            err = capsys.readouterr().err
            assert f"--scheduler {address!r}" in err and said in err and "Traceback" not in err, err
    finally:
        close_silent()
        close_web()
        probe.close()


def test_a_bake_that_kills_its_only_worker_does_not_fail_the_bakes_waiting_behind_it(tmp_path, capsys):
    manifest = write_manifest(tmp_path, """
[[job]]
name = "fox"
character = {FOX}
rig = {RIG}
clips = ["Walk", "Run"]
preroll = 0.0
fps = 10
""")
    out = tmp_path / "out"
    with dask.config.set({"distributed.scheduler.allowed-failures": 2}):
        cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0")
    try:
        with Client(cluster, set_as_default=False) as client:
            client.register_plugin(KillEveryWalk())
            status = bake_many(manifest, "--out", out, "--scheduler", cluster.scheduler_address, "--backend", "cpu")
    finally:
        cluster.close()
    assert status == 1
    walk, run = read_report(out)["bakes"]
    assert walk["status"] == "failed" and "died each time it ran this bake (3 times" in walk["error"], walk
    assert walk["attempts"] == 3, "each start is known to the scheduler before the bake runs"
    assert run["status"] == "baked", run  # it waited on the same worker through the three deaths
    assert (out / run["output"]).is_file()

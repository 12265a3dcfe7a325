"""Whole writes (:mod:`gpu_jiggle.whole_files`): the target keeps its mode and owner or the
write is refused, a hard-linked or unwritable target is refused, and the temporary of a writer
killed mid-write is removed by the next writer, only when that writer is provably gone."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_jiggle.whole_files import WholeWriteError, remove_stale, temporary_name, write_whole

NOBODY = 65534


def test_the_new_file_keeps_the_old_ones_mode(tmp_path):
    target = tmp_path / "rig.toml"
    target.write_bytes(b"old")
    target.chmod(0o600)
    write_whole(target, b"new")
    assert target.read_bytes() == b"new" and target.stat().st_mode & 0o7777 == 0o600


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_the_new_file_keeps_the_old_ones_owner(tmp_path):
    target = tmp_path / "rig.toml"
    target.write_bytes(b"old")
    os.chown(target, NOBODY, NOBODY)
    target.chmod(0o640)
    write_whole(target, b"new")
    st = target.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (NOBODY, NOBODY, 0o640)


def test_a_target_with_several_hard_links_is_refused_and_left_as_it_was(tmp_path):
    target = tmp_path / "rig.toml"
    target.write_bytes(b"old")
    os.link(target, tmp_path / "other.toml")
    with pytest.raises(WholeWriteError, match=r"rig\.toml: has 2 hard links"):
        write_whole(target, b"new")
    assert target.read_bytes() == b"old" and (tmp_path / "other.toml").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.toml", "rig.toml"]


@pytest.mark.skipif(os.geteuid() != 0, reason="running as another user needs root")
def test_a_file_the_user_may_not_write_is_refused_though_the_folder_allows_a_rename():
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="gpu-jiggle-shared-"))  # under /tmp: reachable by every user
    folder.chmod(0o777)  # anyone may rename in it
    try:
        _refused_for_another_user(folder)
    finally:
        shutil.rmtree(folder)


def _refused_for_another_user(folder: Path) -> None:
    target = folder / "rig.toml"
    target.write_bytes(b"root's")
    target.chmod(0o644)
    script = (f"import os; from gpu_jiggle.whole_files import write_whole; os.setgid({NOBODY}); "
              f"os.setuid({NOBODY}); write_whole({str(target)!r}, b'mine')")  # another user from here on
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert run.returncode != 0 and "this user may not write the file" in run.stderr, run.stderr
    assert target.read_bytes() == b"root's" and target.stat().st_uid == 0
    assert sorted(p.name for p in folder.iterdir()) == ["rig.toml"]


def test_a_link_is_replaced_by_the_file_and_its_target_kept(tmp_path):
    (tmp_path / "real.toml").write_bytes(b"real")
    (tmp_path / "link.toml").symlink_to("real.toml")
    write_whole(tmp_path / "link.toml", b"new")
    assert not (tmp_path / "link.toml").is_symlink() and (tmp_path / "real.toml").read_bytes() == b"real"


def _killed_mid_write(target: Path) -> Path:
    """A process that opens its temporary for ``target``, writes half, says where, and is
    killed with SIGKILL there; returns the temporary it left."""
    script = ("import sys; from pathlib import Path; from gpu_jiggle.whole_files import temporary_name; "
              "t = temporary_name(Path(sys.argv[1])); f = open(t, 'wb'); f.write(b'half'); f.flush(); "
              "print(t, flush=True); sys.stdin.read()")
    child = subprocess.Popen([sys.executable, "-c", script, str(target)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    try:
        left = Path(child.stdout.readline().strip())
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate()
    assert child.returncode == -signal.SIGKILL and left.read_bytes() == b"half"
    return left


def test_the_temporary_of_a_killed_writer_is_removed_by_the_next_write(tmp_path):
    target = tmp_path / "a.glb"
    left = _killed_mid_write(target)
    running = temporary_name(target)  # this process's own, as if writing now: kept
    running.write_bytes(b"busy")
    elsewhere = left.with_name(left.name.replace(left.name.split(".")[3].rsplit("-", 2)[0], "otherhost", 1))
    elsewhere.write_bytes(b"another host's, maybe still writing")
    write_whole(target, b"whole")
    assert target.read_bytes() == b"whole"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["a.glb", running.name, elsewhere.name])
    assert remove_stale(target) == []

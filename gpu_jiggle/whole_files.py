"""Files written whole or not at all, and the temporaries that make them so (stdlib only).

Every file the project writes (a bake, its record, a report, a rig, a video, an image) is
written into a temporary beside its target and renamed over it once complete
(:func:`write_whole`). What that means for the target:

- **Mode and owner.** An existing target's permission bits, owner and group are given to the
  new file before the rename; when they cannot be (another user's file, a group this user is
  not in) the write is refused, the target as it was. A target this user may not write
  (``os.access``) is refused the same way, though its folder would allow the rename.
- **Hard links.** A target with more than one link is refused (:class:`WholeWriteError`): a
  rename gives the name a new file and leaves the other names with the old contents.
- **Symlinks.** The name given is replaced; to write through a link, resolve it first.

**Temporaries** are named ``.<target name>.<host>-<pid>-<random>.tmp`` (:func:`temporary_name`,
with a suffix after ``.tmp`` where the encoder needs one). A writer killed outright (SIGKILL,
power loss) cannot remove its own; the next writer of the same target removes those whose
writer is provably gone (:func:`remove_stale`): written on this host (the name's host is this
one's) by a process id that no longer runs. A temporary of another host, of a process that
runs, or named otherwise is left alone, since on a shared file system it may belong to a
worker still writing it.
"""
from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import socket
import stat as _stat
from pathlib import Path

__all__ = ["WholeWriteError", "write_whole", "temporary_name", "remove_stale", "writer_alive", "check_target",
           "same_file", "writer_gone", "TEMPORARY_MARK"]

#: What every temporary's name carries before its optional suffix.
TEMPORARY_MARK = ".tmp"
_TAG = re.compile(r"^(?P<host>[A-Za-z0-9_.]+(?:-[A-Za-z0-9_.]+)*)-(?P<pid>\d+)-(?P<token>[0-9a-f]{12})$")


class WholeWriteError(OSError):
    """A target that cannot be replaced as the caller expects (several hard links, a mode or
    owner that cannot be kept, not writable by this user); nothing was written."""


def _host() -> str:
    """This host's name as temporaries carry it: characters other than letters, digits, ``_``
    and ``.`` become ``_`` (so ``-`` separates the name's parts)."""
    return re.sub(r"[^A-Za-z0-9_.]", "_", socket.gethostname()) or "host"


def temporary_name(target, suffix: str = "") -> Path:
    """A new temporary's path beside ``target``: ``.<name>.<host>-<pid>-<12 hex>.tmp<suffix>``."""
    target = Path(target)
    return target.with_name(f".{target.name}.{_host()}-{os.getpid()}-{secrets.token_hex(6)}{TEMPORARY_MARK}{suffix}")


def writer_alive(pid: int) -> bool:
    """Whether process ``pid`` of this host runs (another user's process counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stale_pattern(target: Path) -> re.Pattern:
    return re.compile(rf"^\.{re.escape(target.name)}\.(?P<tag>[^/]+){re.escape(TEMPORARY_MARK)}[^/]*$")


def writer_gone(target, name: str) -> bool:
    """Whether the temporary ``name`` of ``target`` was made by a writer provably gone: this
    host's, with a process id that no longer runs and is not this process's."""
    found = _stale_pattern(Path(target)).match(name)
    tag = _TAG.match(found.group("tag")) if found else None
    if tag is None or tag.group("host") != _host():
        return False
    pid = int(tag.group("pid"))
    return pid != os.getpid() and not writer_alive(pid)


def remove_stale(target) -> list:
    """Remove the temporaries of ``target`` (:func:`temporary_name`) whose writer is provably
    gone: this host's name and a process id that no longer runs (nor is this process). A
    temporary folder is removed with what it holds. Returns the paths removed."""
    target = Path(target)
    folder = target.parent
    removed = []
    if not folder.is_dir():
        return removed
    for entry in os.scandir(folder):
        if not writer_gone(target, entry.name):
            continue
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        removed.append(path)
    return removed


def check_target(out) -> os.stat_result | None:
    """The ``os.stat`` of an existing target that a whole write may replace, or None when
    there is none. Raises :class:`WholeWriteError` for one with several hard links, one this
    user may not write, or one that is not a regular file."""
    out = Path(out)
    try:
        st = os.stat(out, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if _stat.S_ISLNK(st.st_mode):
        return None  # the link is replaced by the file, as documented
    if not _stat.S_ISREG(st.st_mode):
        raise WholeWriteError(f"{out}: exists and is not a regular file; not replaced")
    if st.st_nlink > 1:
        raise WholeWriteError(f"{out}: has {st.st_nlink} hard links; a whole write replaces the name with a new "
                              f"file and the other links would keep the old contents, so it is refused (write to "
                              f"a new name, or remove the other links)")
    if not os.access(out, os.W_OK):
        raise WholeWriteError(f"{out}: this user may not write the file (mode {st.st_mode & 0o7777:o}, owner uid "
                              f"{st.st_uid}); not replaced")
    return st


def _keep_mode_and_owner(fd: int, out: Path, st: os.stat_result) -> None:
    os.fchmod(fd, st.st_mode & 0o7777)
    now = os.fstat(fd)
    if (now.st_uid, now.st_gid) != (st.st_uid, st.st_gid):
        try:
            os.fchown(fd, st.st_uid if now.st_uid != st.st_uid else -1, st.st_gid if now.st_gid != st.st_gid else -1)
        except PermissionError:
            raise WholeWriteError(f"{out}: the new file could not keep the owner (uid {st.st_uid}, gid {st.st_gid}) "
                                  f"of the old one; not replaced") from None
        os.fchmod(fd, st.st_mode & 0o7777)  # a chown clears set-id bits


def write_whole(out, data: bytes) -> None:
    """Write ``data`` to ``out`` whole or not at all: a new temporary beside ``out``
    (:func:`temporary_name`; mode 0o666 less the umask, or an existing target's mode and
    owner), flushed to disk, then ``os.replace`` d onto ``out`` (atomic within one file
    system). Temporaries of ``out`` left by killed writers are removed first
    (:func:`remove_stale`); on any error the new one is removed.

    Raises:
        WholeWriteError: see :func:`check_target`, or a mode/owner that cannot be kept.
        OSError: the folder or the file cannot be written (``out`` is then as it was).
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    st = check_target(out)
    remove_stale(out)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = temporary_name(out)
        try:
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"{out}: no free temporary name in {out.parent}")
    try:
        with os.fdopen(fd, "wb") as f:
            if st is not None:
                _keep_mode_and_owner(f.fileno(), out, st)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def same_file(a, b) -> bool:
    """Whether paths ``a`` and ``b`` name one file: the same path once links are resolved, or
    one inode (``os.path.samefile``: a hard link, a link to it). False when either is
    missing and the resolved paths differ."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False

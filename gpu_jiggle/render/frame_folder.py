"""A folder of numbered PNG frames replaced whole, for
:class:`gpu_jiggle.render.video.FrameWriter`: the new frames, written to a hidden temporary
folder beside it, are exchanged with the old folder in one step (Linux ``renameat2``), the
old folder's other files carried over; where no atomic exchange exists, the old folder goes
aside first and is put back by the next writer should the process die between the renames.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import shutil
from pathlib import Path

from ..whole_files import TEMPORARY_MARK, temporary_name, writer_gone

PNG_FRAME_NAME = "frame_{:04d}.png"
PNG_FRAME_GLOB = "frame_*.png"
#: The suffix of an old PNG folder renamed aside where an atomic exchange is not available.
ASIDE_MARK = ".old"
RENAME_EXCHANGE = 2                 # renameat2's flag (Linux >= 3.15)
AT_FDCWD = -100


def is_frame(name: str) -> bool:
    """Whether a folder entry named ``name`` is one of the frames (:data:`PNG_FRAME_GLOB`)."""
    return Path(name).match(PNG_FRAME_GLOB)


def check_frame_folder(folder: Path) -> None:
    """ValueError for a folder a whole set of frames cannot replace: one holding a folder or
    anything else that is not a regular file (a folder named ``frame_0005.png`` included)."""
    for entry in os.scandir(folder):
        if entry.is_symlink() and not is_frame(entry.name):
            continue  # carried over as it is
        if not entry.is_file(follow_symlinks=False):
            raise ValueError(f"{folder}: holds {entry.name!r}, which is not a file; the PNG frames replace a "
                             f"folder of files whole, so give a new folder or move it out")


def exchange(a: Path, b: Path) -> bool:
    """Swap the names ``a`` and ``b`` in one step (Linux ``renameat2``); False where the
    system or the file system cannot (nothing changed then)."""
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    renameat2.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    if renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def restore_aside(folder: Path) -> None:
    """Put back a PNG folder renamed aside (:data:`ASIDE_MARK`) by a writer killed before it
    renamed the new frames in, when ``folder`` is missing."""
    if folder.exists() or not folder.parent.is_dir():
        return
    for entry in os.scandir(folder.parent):
        if entry.name.startswith(f".{folder.name}.") and entry.name.endswith(TEMPORARY_MARK + ASIDE_MARK) \
                and entry.is_dir(follow_symlinks=False) and writer_gone(folder, entry.name):
            os.rename(entry.path, folder)
            return


def replace_frames(temporary: Path, folder: Path) -> None:
    """The folder of frames ``temporary`` becomes ``folder`` in one step: renamed to it when
    there is none; else given the old folder's other files (hard links) and mode, then
    exchanged with it atomically (``renameat2(RENAME_EXCHANGE)``), the old frames left under
    the temporary name for the caller to remove. Where the exchange is not available, the old
    folder is renamed aside first (``.tmp.old``) and put back by the next writer
    (:func:`restore_aside`) should this process be killed between the two renames.

    Raises: ValueError for a folder holding something other than files
    (:func:`check_frame_folder`); OSError from the renames."""
    if not folder.exists():
        os.rename(temporary, folder)
        return
    check_frame_folder(folder)
    for entry in os.scandir(folder):
        if not is_frame(entry.name):
            try:
                os.link(entry.path, temporary / entry.name, follow_symlinks=False)
            except OSError:
                shutil.copy2(entry.path, temporary / entry.name, follow_symlinks=False)
    os.chmod(temporary, os.stat(folder).st_mode & 0o7777)
    if exchange(temporary, folder):
        return  # the temporary name now holds the old frames: the caller removes them
    aside = temporary_name(folder, ASIDE_MARK)
    os.rename(folder, aside)
    try:
        os.rename(temporary, folder)
    except BaseException:
        os.rename(aside, folder)
        raise
    shutil.rmtree(aside, ignore_errors=True)

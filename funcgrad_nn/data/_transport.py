"""How a DataLoader worker hands a batch to the main process: a pickle whose large array
buffers travel through shared memory instead of the result pipe.

PyTorch moves worker batches through shared memory for the same reason: pushing a batch of
images (tens of MB) through a pipe costs several copies and thousands of system calls, which
on a busy machine makes the workers slower than loading in the main process. Here each array
buffer of at least ``_MIN_SHARED`` bytes is pickled out of band (pickle protocol 5), written
to a file in ``/dev/shm`` (memory, not disk) named after the worker's pid, and the main
process maps it and removes the name at once: the batch's arrays are backed by that mapping,
which the OS frees with the last array. Without ``/dev/shm`` (not Linux) every buffer stays in
the pickle, as before.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import pickle
import tempfile
from typing import Any

__all__ = ["pack", "unpack", "discard", "remove_orphans"]

_MIN_SHARED = 1 << 16  # smaller buffers ride in the pickle: a file per buffer costs more
_SHM_DIR = "/dev/shm"


def _prefix(pid: int) -> str:
    return f"funcgrad-dl-{pid}-"


def _shared_dir() -> str | None:
    if os.path.isdir(_SHM_DIR) and os.access(_SHM_DIR, os.W_OK | os.X_OK):
        return _SHM_DIR
    return None


def pack(obj: Any) -> tuple[bytes, list[tuple[str, int]]]:
    """``obj`` as ``(pickle, [(shared-memory file, size), ...])``; the files are the
    receiver's to map and remove (:func:`unpack`, or :func:`discard` unread)."""
    directory = _shared_dir()
    if directory is None:
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), []
    buffers: list[pickle.PickleBuffer] = []

    def out_of_band(buf: pickle.PickleBuffer) -> bool:
        if buf.raw().nbytes < _MIN_SHARED:
            return True  # in band
        buffers.append(buf)
        return False

    payload = pickle.dumps(obj, protocol=5, buffer_callback=out_of_band)
    files: list[tuple[str, int]] = []
    try:
        for buf in buffers:
            raw = buf.raw()
            fd, path = tempfile.mkstemp(dir=directory, prefix=_prefix(os.getpid()))
            files.append((path, raw.nbytes))
            try:
                # Reserved up front: a full /dev/shm (Docker gives 64 MB) then fails here,
                # and the batch goes through the pipe, instead of a SIGBUS killing the
                # worker when writing into a sparse file finds no memory.
                _reserve(fd, raw.nbytes)
                with mmap.mmap(fd, raw.nbytes) as mm:
                    mm[:] = raw
            finally:
                os.close(fd)
    except OSError:
        discard(files)
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), []
    except BaseException:
        discard(files)
        raise
    return payload, files


def _reserve(fd: int, size: int) -> None:
    if hasattr(os, "posix_fallocate"):
        os.posix_fallocate(fd, 0, size)
    else:
        os.ftruncate(fd, size)


def _attach(path: str, size: int) -> mmap.mmap:
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        raise RuntimeError(f"DataLoader: the shared memory of a batch ({path}) is gone; was "
                           f"{_SHM_DIR} cleaned while the loader ran?") from None
    try:
        return mmap.mmap(fd, size)
    finally:
        os.close(fd)
        os.unlink(path)  # the mapping lives on, with the arrays that use it


def unpack(message: tuple[bytes, list[tuple[str, int]]]) -> Any:
    """The object :func:`pack` sent, its large arrays backed by the shared memory."""
    payload, files = message
    buffers = []
    try:
        for path, size in files:
            buffers.append(_attach(path, size))
    except BaseException:
        discard(files[len(buffers):])
        raise
    return pickle.loads(payload, buffers=buffers)


def discard(files: list[tuple[str, int]]) -> None:
    """Remove the shared memory of a message that will not be read."""
    for path, _ in files:
        with contextlib.suppress(OSError):
            os.unlink(path)


def remove_orphans(pid: int) -> None:
    """Remove what worker ``pid`` left in shared memory (killed while writing a batch)."""
    directory = _shared_dir()
    if directory is None or pid is None:
        return
    prefix = _prefix(pid)
    with contextlib.suppress(OSError):
        for name in os.listdir(directory):
            if name.startswith(prefix):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(directory, name))

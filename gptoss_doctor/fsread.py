"""Reading a local file that someone else may control: only regular files (a FIFO or a device is refused without
blocking on it), never more than a cap (a huge file is refused after one bounded read, not loaded whole)."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class Unreadable(Exception):
    """A file that is not read, with the reason as message."""


def read_capped(path: Path | str, cap: int, *, follow_symlinks: bool = True) -> bytes:
    """The whole content of the regular file ``path`` if it is at most ``cap`` bytes; else Unreadable (why)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)  # O_NONBLOCK: opening a FIFO with no writer returns at once
    except PermissionError:
        raise Unreadable("no permission to read it") from None
    except FileNotFoundError:
        raise Unreadable("it vanished while being read") from None
    except OSError as exc:
        raise Unreadable(f"cannot read it: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Unreadable("not a regular file (a FIFO, device or socket): not read")
        if st.st_size > cap:
            raise Unreadable(f"larger than {_size(cap)}: not read")
        chunks, total = [], 0
        while total <= cap:
            try:
                chunk = os.read(fd, min(1 << 20, cap + 1 - total))
            except OSError as exc:
                raise Unreadable(f"cannot read it: {exc.strerror or exc}") from None
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > cap:  # it grew while being read
            raise Unreadable(f"larger than {_size(cap)}: not read")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and not n % (1 << 20) else f"{n >> 10} KiB" if n >= 1024 else f"{n} bytes"

"""fix-config: durable writes (write to a temporary file, fsync, rename, fsync the folder), ownership of what is
written, and Ctrl-C deferred while a decided change runs."""

from __future__ import annotations

import os
import signal
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional



_crash_counts: dict[str, int] = {}

def _crash_point(name: str) -> None:
    spec = os.environ.get("GPTOSS_DOCTOR_TEST_CRASH")
    if not spec:
        return
    point, _, rest = spec.partition(":")
    if point != name:
        return
    nth, _, how = rest.partition(":")
    _crash_counts[name] = _crash_counts.get(name, 0) + 1
    if _crash_counts[name] == int(nth or 1):
        os.kill(os.getpid(), signal.SIGINT if how == "int" else signal.SIGKILL)

def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(str(path), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)

# When run as root on a copy owned by someone else (sudo), everything created inside it is given to
# the copy's owner, so that user can still update or delete it later. Set per model by ``owned_by``.
_OWNER: Optional[tuple[int, int]] = None

# The copy being written (set by ``owned_by``): no folder under it is created or written through a symlink.
_ROOT: Optional[Path] = None

@contextmanager
def owned_by(root: Path) -> Iterator[None]:
    global _OWNER, _ROOT
    prev, prev_root = _OWNER, _ROOT
    try:
        st = root.stat()
        _OWNER = (st.st_uid, st.st_gid) if os.geteuid() == 0 and (st.st_uid, st.st_gid) != (0, 0) else None
    except (OSError, AttributeError):
        _OWNER = None
    _ROOT = root
    try:
        yield
    finally:
        _OWNER, _ROOT = prev, prev_root

def _refuse_links(path: Path) -> None:
    """Inside the copy being written, no folder on the way to ``path`` (``path`` included) may be a symlink."""
    if _ROOT is None:
        return
    try:
        rel = path.relative_to(_ROOT)
    except ValueError:
        return
    cur = _ROOT
    for part in rel.parts:
        cur = cur / part
        if cur.is_symlink():
            from gptoss_doctor.errors import UsageError

            raise UsageError(f"refusing to write through a symlinked folder: {cur}", hint="nothing was changed")

def _adopt(path: Path) -> None:
    if _OWNER is not None:
        try:
            os.lchown(path, *_OWNER)
        except OSError:
            pass

def mkdirs(path: Path) -> None:
    """``mkdir -p`` that hands each new folder to the copy's owner (never through a symlink inside the copy)."""
    _refuse_links(path)
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir()
        except FileExistsError:
            continue
        _adopt(d)

def write_durable(path: Path, data: bytes, mode: Optional[int] = None) -> None:
    """Write ``path`` via a temp file in the same folder + fsync + os.replace."""
    mkdirs(path.parent)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        _adopt(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(path.parent)

def _default_mode() -> int:
    um = os.umask(0)
    os.umask(um)
    return 0o666 & ~um

@contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold Ctrl-C / SIGTERM until the block is done (then raise KeyboardInterrupt)."""
    received: list[int] = []
    old = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            old[sig] = signal.signal(sig, lambda s, f: received.append(s))
    except ValueError:  # not the main thread
        old = {}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        if received:
            raise KeyboardInterrupt

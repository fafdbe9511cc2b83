"""Regexes compiled once per machine, not once per run, and the small user-cache tables that make it so.

``re.compile`` parses a pattern and turns it into the code of Python's regex engine (``_sre``). For the ~150
patterns a typical ``explain`` run needs (facets, the triage classes, the parser's) that costs about a fifth of the
whole run, every run, although the code of a pattern never changes for a given Python. ``compile`` keeps that code in
the user cache (``~/.cache/gptoss-doctor``) and hands it straight to ``_sre.compile`` the next time, the way
``re._compiler.compile`` does after parsing (CPython's ``Lib/re/_compiler.py``). ``_sre`` validates the code it is
given, and a refused row is compiled the ordinary way; any other Python (PyPy), a debug flag,
a bytes pattern or a missing private module also falls back to ``re.compile``. The file name carries the Python
version and ``_sre.MAGIC``: code from another interpreter is never read. Each row carries a CRC of its pattern and
code, so a damaged row is compiled anew rather than trusted; the file has the same standing as the knowledge base's
compiled cache beside it (whoever can write the user's cache can change what the doctor says).

``Memo`` is the cache file itself: plain data in one marshal file, loaded on first use, written back atomically when
the process ends if something was added, ignored when damaged. ``explain.literals`` keeps its pre-tests in one too.
"""

from __future__ import annotations

import re
import sys
from array import array
from typing import Any, Callable

VERSION = 1  # bump when the cached code's layout changes
LIMIT = 4096  # newest rows kept in a file
READ_CAP = 64 << 20  # a cache file larger than this is not read (4096 rows of code are a few MiB)
_MISSING = object()
# the engine's code words, kept as bytes: marshal reads a bytes object with one copy, a list of ints one int at a time
_TYPECODE = "I" if array("I").itemsize == 4 else "L"


class Memo:
    """``key -> value`` plain data kept across runs in ``~/.cache/gptoss-doctor/<name>.bin`` (the folder as it was
    when first used: written back there even if the environment changed since). ``valid(key, value)`` vets the rows
    read back: all of them on loading (one it refuses and the file is damaged, ignored whole), or with ``lazy``, each
    row when it is first asked for (a big file then costs one ``marshal.loads``, not a walk over every row). An
    unreadable file is ignored, and a read-only home only means nothing is kept."""

    def __init__(self, name: str, valid: Callable[[Any, Any], bool], lazy: bool = False):
        self.name, self.valid, self.lazy = name, valid, lazy
        self.rows: dict = {}
        self.checked: set = set()
        self.loaded = self.dirty = False
        self._path = None

    def path(self):
        if self._path is None:
            from gptoss_doctor import settings

            self._path = settings.user_cache_dir() / f"{self.name}.bin"
        return self._path

    def get(self, key, default=None):
        if not self.loaded:
            self._load()
        value = self.rows.get(key, _MISSING)
        if value is _MISSING:
            return default
        if self.lazy and key not in self.checked:
            if not self._vet(key, value):
                del self.rows[key]
                return default
            self.checked.add(key)
        return value

    def put(self, key, value) -> None:
        self.rows[key] = value
        self.checked.add(key)
        if not self.dirty:
            self.dirty = True
            self.path()
            import atexit

            atexit.register(self.flush)

    def _vet(self, key, value) -> bool:
        try:
            return bool(self.valid(key, value))
        except Exception:  # noqa: BLE001 - a row valid() could not even read
            return False

    def _load(self) -> None:
        import marshal

        from gptoss_doctor.fsread import Unreadable, read_capped

        self.loaded = True
        try:  # a regular file of at most READ_CAP: a FIFO or device put in its place never blocks the run
            data = marshal.loads(read_capped(self.path(), READ_CAP))
        except (Unreadable, ValueError, EOFError, TypeError):
            return
        if not isinstance(data, dict):
            return
        if not self.lazy and not all(self._vet(k, v) for k, v in data.items()):
            return  # one row of the wrong shape and the file is damaged: none of it is trusted
        for k, v in data.items():
            self.rows.setdefault(k, v)

    def flush(self) -> None:
        import marshal
        import os

        path = self.path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(marshal.dumps(dict(list(self.rows.items())[-LIMIT:])))
            os.replace(tmp, path)
            self.dirty = False
        except (OSError, ValueError):
            pass


def internals():
    """(parser, compiler, constants) modules of this Python's regex package (``re._parser`` … from 3.11,
    ``sre_parse`` … on 3.10), or None when they cannot be imported."""
    try:
        if sys.version_info >= (3, 11):
            from re import _compiler, _constants, _parser
        else:  # 3.10 names the same modules sre_parse, sre_compile and sre_constants
            import sre_compile as _compiler
            import sre_constants as _constants
            import sre_parse as _parser
    except ImportError:
        return None
    return _parser, _compiler, _constants


def _private():
    """(parser, compiler, _sre) of this CPython's regex package, or None where the shortcut is not taken."""
    parts = internals()
    if sys.implementation.name != "cpython" or parts is None:
        return None
    parser, compiler, _constants = parts
    try:
        import _sre

        compiler._code, parser.parse, _sre.compile, _sre.MAGIC  # noqa: B018 - the parts used, or no shortcut
        if _sre.CODESIZE != array(_TYPECODE).itemsize:  # code words that would not fit the bytes kept
            return None
    except (ImportError, AttributeError):
        return None
    return parser, compiler, _sre


_PARTS: list = []


def _parts():
    if not _PARTS:
        _PARTS.append(_private())
    return _PARTS[0]


def _crc(pattern: str, code: bytes) -> int:
    import zlib

    return zlib.crc32(code, zlib.crc32(pattern.encode("utf-8", "surrogatepass")))


def _valid_code(key, value) -> bool:
    pattern, flags = key
    rflags, code, groups, groupindex, indexgroup, crc = value
    return (type(pattern) is str and type(code) is bytes and crc == _crc(pattern, code) and type(flags) is int and type(rflags) is int and type(code) is bytes
            and len(code) % 4 == 0 and type(groups) is int and type(groupindex) is dict
            and all(type(k) is str and type(v) is int for k, v in groupindex.items())
            and type(indexgroup) is tuple and all(x is None or type(x) is str for x in indexgroup))


def _words(code: bytes) -> list[int]:
    return array(_TYPECODE, code).tolist()


_CODE: list = []  # the Memo of compiled code, made on first use (its name needs the private modules)
_UNCACHED = re.DEBUG | getattr(re, "TEMPLATE", 0)


def _code_memo(sre) -> Memo:
    if not _CODE:
        v = sys.version_info
        _CODE.append(Memo(f"rx-v{VERSION}-cpython{v[0]}.{v[1]}.{v[2]}-{sre.MAGIC}-{sre.CODESIZE}", _valid_code,
                          lazy=True))
    return _CODE[0]


def compile(pattern: Any, flags: int = 0) -> re.Pattern:  # noqa: A001 - the name re users expect
    """``re.compile(pattern, flags)``, from the cached engine code when an earlier run compiled it."""
    parts = _parts()
    flags = int(flags)
    if parts is None or type(pattern) is not str or flags & _UNCACHED:
        return re.compile(pattern, flags)
    parser, compiler, sre = parts
    memo = _code_memo(sre)
    key = (pattern, flags)
    row = memo.get(key)
    if row is not None:
        try:
            return sre.compile(pattern, row[0], _words(row[1]), row[2], row[3], row[4])
        except Exception:  # noqa: BLE001 - code _sre refuses: compiled anew below
            pass
    try:
        p = parser.parse(pattern, flags)
        code = compiler._code(p, flags)
        state = p.state
        indexgroup = [None] * state.groups
        for name, i in state.groupdict.items():
            indexgroup[i] = name
        words = array(_TYPECODE, code).tobytes()
        row = (int(flags | state.flags), words, state.groups - 1, dict(state.groupdict), tuple(indexgroup),
               _crc(pattern, words))
        compiled = sre.compile(pattern, row[0], _words(row[1]), row[2], row[3], row[4])
    except re.error:
        raise
    except Exception:  # noqa: BLE001 - private parts that moved in a newer Python: the ordinary way
        return re.compile(pattern, flags)
    memo.put(key, row)
    return compiled

"""Regexes from cached engine code (gptoss_doctor/rx.py) behave exactly as ``re.compile``'s.

Every pattern of the knowledge base, the triage classes and explain's module-level tables is compiled twice, the
ordinary way and from code read back from the cache file, and both are run on the benchmark cases' real texts; random
patterns against random texts too. A damaged cache file, code ``_sre`` refuses and the Python 3.10 module names
fall back without a wrong answer."""

from __future__ import annotations

import marshal
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gptoss_doctor import kb, rx
from gptoss_doctor.explain import facets, literals, parse
from gptoss_doctor.explain.parse import _Lazy

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))


@pytest.fixture()
def fresh(tmp_path, monkeypatch):
    """An empty cache in a temporary home; returns a function that starts a new 'process' reading it back."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(rx, "_CODE", [])

    def restart() -> rx.Memo:
        if rx._CODE:
            rx._CODE[0].flush()
        monkeypatch.setattr(rx, "_CODE", [])
        return rx._code_memo(rx._parts()[2])

    return restart


def _same(a: re.Pattern, b: re.Pattern, text: str) -> None:
    assert (a.pattern, a.flags, a.groups, a.groupindex) == (b.pattern, b.flags, b.groups, b.groupindex)
    ma, mb = a.search(text), b.search(text)
    assert (ma and (ma.span(), ma.groups())) == (mb and (mb.span(), mb.groups())), (a.pattern, text[:200])


def _all_patterns() -> list[tuple[str, int]]:
    pats = [(p, int(re.I)) for e in kb.load() for p in e.patterns + e.context]
    pats += [(p, int(re.I)) for c in kb.load_classes() for key in kb.PATTERN_KEYS for p in c.select.get(key, [])]
    for mod in (facets, parse):
        for value in vars(mod).values():
            for row in value if isinstance(value, list) else [value]:
                lz = row[1] if isinstance(row, tuple) and len(row) == 2 else row
                if isinstance(lz, _Lazy) and isinstance(lz._args[0], str):
                    pats.append((lz._args[0], int(lz._args[1])))
    return list(dict.fromkeys(pats))


def test_every_pattern_read_back_from_the_cache_matches_as_re_compile_does(fresh):
    if rx._parts() is None:
        pytest.skip("not CPython: rx.compile is re.compile")
    import bench_accuracy

    pats = _all_patterns()
    assert len(pats) > 700
    for p, flags in pats:
        rx.compile(p, flags)
    memo = fresh()  # a new run: the code is read from the file
    assert all(memo.get(p) is not None for p in pats)
    assert memo.path().name.startswith(f"rx-v{rx.VERSION}-cpython{sys.version_info[0]}.{sys.version_info[1]}.")
    texts = [c.text[:20000] for c in bench_accuracy.load_cases()][::3]
    hits = 0
    for p, flags in pats:
        cached, plain = rx.compile(p, flags), re.compile(p, flags)
        for t in texts:
            _same(cached, plain, t)
        hits += sum(1 for t in texts if plain.search(t))
    assert hits > 1000  # the texts do exercise the patterns


@settings(max_examples=400, deadline=None)
@given(st.from_regex(r"(?:[a-c]|\\d|\\w|\[a-c\]|\(\?:a\|b\)|\(\?P<n>x\)|\(a\)|\.|\*|\+|\?|\^|\$){1,12}", fullmatch=True),
       st.sampled_from([0, int(re.I), int(re.M), int(re.S | re.I)]), st.text(alphabet="abcxyz0123 \n_\u0130", max_size=20))
def test_random_patterns_compile_and_match_the_same(pattern, flags, text):
    try:
        plain = re.compile(pattern, flags)
    except re.error:
        with pytest.raises(re.error):
            rx.compile(pattern, flags)
        return
    _same(rx.compile(pattern, flags), plain, text)


def test_damaged_or_refused_code_falls_back_to_compiling(fresh):
    if rx._parts() is None:
        pytest.skip("not CPython: rx.compile is re.compile")
    memo = fresh()
    path = memo.path()
    path.parent.mkdir(parents=True, exist_ok=True)
    # a row damaged after it was written (its CRC no longer fits): "SUCCESS SUCCESS SUCCESS" is code _sre accepts
    # and would match the empty string everywhere
    path.write_bytes(marshal.dumps({("zebra (\\d+)", int(re.I)): (int(re.I | re.U), b"\x01\x00\x00\x00" * 3, 1, {},
                                                                  (None, None), 12345)}))
    rx._CODE.clear()
    assert rx.compile("zebra (\\d+)", re.I).search("a ZEBRA 12").group(1) == "12"
    # a row whose CRC fits but whose code _sre refuses
    bad = b"\xff\xff\x00\x00" * 3
    path.write_bytes(marshal.dumps({("zebra (\\d+)", int(re.I)): (int(re.I | re.U), bad, 1, {}, (None, None),
                                                                  rx._crc("zebra (\\d+)", bad))}))
    rx._CODE.clear()
    assert rx.compile("zebra (\\d+)", re.I).search("a ZEBRA 13").group(1) == "13"
    # rows of the wrong shape are not used
    rx._CODE.clear()
    path.write_bytes(marshal.dumps({("zebra (\\d+)", int(re.I)): "not code", ("x", 0): (0, [], 0, {}, ())}))
    assert rx.compile("zebra (\\d+)", re.I).search("zebra 7").group(1) == "7"
    assert rx._CODE[0].get(("x", 0)) is None
    rx._CODE.clear()
    path.write_bytes(b"\x00garbage")
    assert rx.compile("zebra (\\d+)", re.I).search("zebra 8").group(1) == "8"


def test_debug_flags_bytes_and_bad_patterns_take_the_ordinary_way(fresh):
    assert rx.compile(rb"ab+", 0).search(b"xabb").group(0) == b"abb"
    with pytest.raises(re.error):
        rx.compile("(unclosed", re.I)
    memo = fresh()
    assert memo.get((rb"ab+", 0)) is None


def test_the_python_3_10_module_names_serve_literals_and_the_cache(monkeypatch, fresh):
    """On 3.10 the regex package's parts are sre_parse, sre_compile and sre_constants (later Pythons keep them
    as deprecated aliases): explain's pre-tests once imported re._parser and failed on 3.10 with ImportError."""
    import warnings

    monkeypatch.setattr(sys, "version_info", (3, 10, 13, "final", 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        parts = rx.internals()
        assert parts is not None and parts[0].__name__ in ("sre_parse", "re._parser")
        assert literals.needed(r"max_model_len \(\d+\) is greater") == ["max_model_len ("]
        monkeypatch.setattr(rx, "_PARTS", [])
        assert rx.compile(r"zebra (\d+)", re.I).search("ZEBRA 9").group(1) == "9"


def test_a_fifo_in_place_of_a_cache_file_never_blocks_a_run(tmp_path):
    """Every cache file explain reads (the regex code, the literal pre-tests, the knowledge base's JSON and its
    compiled index) replaced by a FIFO nobody writes to: the run reads none of them and answers as usual."""
    import os
    import subprocess

    cache = tmp_path / "gptoss-doctor"
    cache.mkdir()
    files = kb._files(kb.knowledge_dir())
    kb_json = kb._cache_path(files).name
    v = sys.version_info
    names = [kb_json, kb_json.replace(".json", f".bm25-v5-py{v[0]}{v[1]}.bin"),
             kb_json.replace(".json", f".literals-v{literals.VERSION}-py{v[0]}{v[1]}.bin"),
             f"literals-v{literals.VERSION}-py{v[0]}{v[1]}.bin"]
    if rx._parts() is not None:
        names.append(rx._code_memo(rx._parts()[2]).name + ".bin")
    for name in names:
        os.mkfifo(cache / name)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path), GPTOSS_DOCTOR_OFFLINE="1",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "gptoss_doctor", "explain", "--json",
                           "openai_harmony.HarmonyError: Unexpected token 200012 while expecting start token 200006"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "stale-generation-config-call-token" in proc.stdout
    # the caches written back replaced the FIFOs (os.replace: nothing was written into one), and the next run reads them
    assert not any((cache / name).is_fifo() for name in names if name != names[1])
    if rx._parts() is not None:
        assert (cache / names[-1]).is_file()
    again = subprocess.run(proc.args, capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == proc.returncode and "stale-generation-config-call-token" in again.stdout

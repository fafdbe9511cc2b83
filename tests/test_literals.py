"""The literal pre-test of explain's regexes (gptoss_doctor/explain/literals.py): a pattern it skips can never match.

Every pattern of the knowledge base, the triage classes and the parser / facet tables is checked against the real
texts of the benchmark cases and the entries' own examples, and generated patterns against generated texts that
carry the characters re.IGNORECASE folds onto ASCII letters (U+0130, U+0131, U+017F, U+212A)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from gptoss_doctor import kb, rx
from gptoss_doctor.explain import facets, literals, parse
from gptoss_doctor.explain.parse import _Lazy

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))


def _module_patterns() -> list[tuple[str, int]]:
    out = []
    for mod in (facets, parse):
        for value in vars(mod).values():
            rows = value if isinstance(value, list) else [value]
            for row in rows:
                lz = row[1] if isinstance(row, tuple) and len(row) == 2 else row
                if isinstance(lz, _Lazy) and isinstance(lz._args[0], str):
                    out.append(lz._args)
    return out


def test_no_pattern_that_matches_a_real_text_is_skipped():
    import bench_accuracy

    pats = [(p, re.I) for e in kb.load() for p in e.patterns]
    pats += [(p, re.I) for c in kb.load_classes() for key in kb.PATTERN_KEYS for p in c.select.get(key, [])]
    pats += _module_patterns()
    assert len(pats) > 600
    texts = [c.text for c in bench_accuracy.load_cases()] + [x for e in kb.load() for x in e.examples]
    reduced = skipped = 0
    for p, flags in dict.fromkeys(pats):
        lits = literals.needed(p, flags)
        if lits is None:
            continue
        reduced += 1
        rx = re.compile(p, flags)
        for t in texts:
            if not literals.may_match(lits, literals.fold(t)):
                skipped += 1
                assert rx.search(t) is None, (p, lits)
    assert reduced > 500 and skipped > 100000  # the pre-test does work: most pairs are never run


def test_needed_literals():
    assert literals.needed(r"max_model_len \(\d+\) is greater") == ["max_model_len ("]
    assert literals.needed(r"cuda (?:error|failure)") == ["cuda "]
    assert literals.needed(r"(?:out of memory|\boom\b)") == ["oom", "out of memory"]  # either path's literal
    assert literals.needed(r"(?:out of memory|\bom\b)") is None  # "om" is too short to be worth a test
    assert literals.needed(r"(?:out of memory|cannot allocate)") == ["cannot allocate", "out of memory"]
    assert literals.needed(r"\d+ tokens?") == [" token"]
    assert literals.needed(r"x{0,3}abc?") is None  # "ab" is too short to be worth a test
    assert literals.needed(r"(?-i:Error)foo bar") is None  # a local case flag: never skipped
    assert literals.needed(r"Error", 0) is None  # case-sensitive: never skipped
    assert literals.needed(r"(unclosed") is None  # not a regex: never skipped


def test_a_skipped_lazy_regex_is_never_compiled():
    lz = _Lazy(r"zebra crossing \d+", re.I)
    assert lz.search("nothing here") is None
    assert "search" not in vars(lz)  # still not compiled
    assert lz.search("A ZEBRA CROSSING 12").group(0) == "ZEBRA CROSSING 12"


ATOMS = ["a", "b", "s", "i", "k", "x", "y", " ", ".", "-", "_", "ab", "sik", "xyz"]
SPECIAL = ["\u0130", "\u0131", "\u017f", "\u212a", "S", "I", "K", "A", "B", "X", "\u00e9"]


@st.composite
def regexes(draw, depth=0):
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["lit", "lit", "lit", "class", "group", "alt", "rep", "anchor"] if depth < 2
                                    else ["lit", "class", "anchor"]))
        if kind == "lit":
            parts.append(re.escape(draw(st.sampled_from(ATOMS))))
        elif kind == "class":
            parts.append(draw(st.sampled_from([r"\d", r"\w", r"\s", "[a-c]", ".", "[^x]"])))
        elif kind == "anchor":
            parts.append(draw(st.sampled_from([r"\b", "^", "$", "(?=a)", "(?!b)"])))
        elif kind == "group":
            parts.append("(?:" + draw(regexes(depth + 1)) + ")")
        elif kind == "alt":
            parts.append("(?:" + draw(regexes(depth + 1)) + "|" + draw(regexes(depth + 1)) + ")")
        else:
            parts.append("(?:" + draw(regexes(depth + 1)) + ")" + draw(st.sampled_from(["?", "*", "+", "{2}", "{1,3}", "{0,2}"])))
    return "".join(parts)


texts = st.lists(st.sampled_from(ATOMS + SPECIAL + ["0", "7", "\n"]), max_size=12).map("".join)


@settings(max_examples=1500, deadline=None)
@given(regexes(), texts)
def test_a_pattern_is_skipped_only_where_it_cannot_match(pattern, text):
    lits = literals.needed(pattern)
    if re.search(pattern, text, re.I):
        assert literals.may_match(lits, literals.fold(text)), (pattern, lits, text)


def test_characters_re_folds_onto_ascii_letters_are_folded_too():
    import itertools

    variants = {"s": "sS\u017f", "i": "iI\u0130\u0131", "k": "kK\u212a"}
    for word in ("sik", "kiss", "skiing"):
        for chars in itertools.product(*(variants.get(ch, ch) for ch in word)):
            text = "<" + "".join(chars) + ">"
            if re.search(word, text, re.I):
                assert literals.may_match(literals.needed(word), literals.fold(text)), text


def test_a_damaged_cache_file_is_ignored(tmp_path, monkeypatch):
    import marshal

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(literals, "_MEMO", rx.Memo(literals._MEMO.name, literals._valid))
    monkeypatch.setattr(literals._MEMO, "dirty", True)  # nothing written back at exit
    path = literals.cache_file()
    path.parent.mkdir(parents=True)
    # a file that claims the pattern needs a literal it does not: trusting it would skip a real match
    path.write_bytes(marshal.dumps({("zebra \\d+", int(re.I)): ["nowhere"], ("x", 2): 5}))
    assert not literals.cannot_match("zebra \\d+", re.I, "a zebra 12")
    path.write_bytes(b"\x00garbage")
    monkeypatch.setattr(literals, "_MEMO", rx.Memo(literals._MEMO.name, literals._valid))
    monkeypatch.setattr(literals._MEMO, "dirty", True)
    assert not literals.cannot_match("zebra \\d+", re.I, "a zebra 12")
    assert literals.cannot_match("zebra \\d+", re.I, "a horse 12")

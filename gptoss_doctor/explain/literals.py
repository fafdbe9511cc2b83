"""Cheap pre-tests for regexes: the literal text every match of a pattern must contain.

``explain`` holds about a thousand regexes (the entries' signature patterns, the triage classes' patterns) and a
text meets a handful of them. Compiling them all costs most of its start-up, so each pattern is first reduced to
the literal strings one of which any match contains (``needed``: ``r"max_model_len \\(\\d+\\) is greater"`` needs
``"max_model_len ("``; ``r"(?:out of memory|\\boom\\b)"`` needs ``"out of memory"`` or ``"oom"``), and only a pattern
whose literal is in the text is compiled and run (``compiled``). The reduction is conservative: a pattern it cannot reduce (a case-sensitive
pattern, a local case flag, no literal in every path) is always compiled. Reducing needs Python's regex parser,
which costs about half as much as compiling, so the literals of a knowledge base are computed once and cached with
it (``table``), and those of explain's module-level regexes in the user cache (``lookup``).

The test is exact for ASCII literals under ``re.IGNORECASE``: the text is lowered after the few characters whose
simple lower case is an ASCII letter but whose full lower case is not (U+0130), and the ones ``re`` folds onto
ASCII letters by its own table (``re._casefix``: U+0131 dotless i, U+017F long s, U+212A Kelvin sign), are mapped
to those letters.
"""

from __future__ import annotations

import re
import sys

from gptoss_doctor import rx

VERSION = 1  # bump when the reduction changes: cached tables are keyed by it
MIN_LEN = 3  # a shorter literal ("of", "an") is in almost every text: no test at all
_MISSING = object()
# characters re.IGNORECASE matches against an ASCII letter that str.lower() does not turn into that letter
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def fold(text: str) -> str:
    """The text as the literals are compared with it (lower case, with re's extra ASCII case pairs folded)."""
    return text.translate(_FOLD).lower() if not text.isascii() else text.lower()


def needed(pattern: str, flags: int = re.I) -> list[str] | None:
    """Lower-case literal strings of which every match of ``pattern`` (compiled with ``flags``, which must include
    re.IGNORECASE) contains at least one; None when no such set was found (the pattern must always be run)."""
    if not flags & re.I:
        return None
    parts = rx.internals()
    if parts is None:
        return None
    try:
        parsed = parts[0].parse(pattern, flags)
    except (re.error, RecursionError, OverflowError):
        return None
    best = _required(parsed.data)
    if not best or min(len(x) for x in best) < MIN_LEN:
        return None
    return sorted(set(best))


def _required(seq) -> list[str] | None:
    """The most selective any-of set of literals this sequence's matches must contain (None: none found)."""
    C = rx.internals()[2]

    candidates: list[list[str]] = []
    run: list[str] = []

    def end_run() -> None:
        if run:
            candidates.append(["".join(run)])
            run.clear()

    for op, av in seq:
        if op is C.LITERAL:
            ch = chr(av)
            if ch.isascii() and ch.isprintable():
                run.append(ch.lower())
            else:
                end_run()
        elif op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            continue  # zero-width: the characters on either side are still next to each other
        elif op is C.SUBPATTERN:
            _group, add, dele, sub = av
            if (add | dele) & re.I:
                return None  # a local case flag: this module's lower-case test would not hold inside it
            end_run()
            inner = _required(sub.data)
            if inner:
                candidates.append(inner)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
            lo, _hi, sub = av
            end_run()
            if lo >= 1:
                inner = _required(sub.data)
                if inner:
                    candidates.append(inner)
        elif op is getattr(C, "ATOMIC_GROUP", None):
            end_run()
            inner = _required(av.data)
            if inner:
                candidates.append(inner)
        elif op is C.BRANCH:
            end_run()
            alts = [_required(alt.data) for alt in av[1]]
            if alts and all(alts):
                candidates.append([x for alt in alts for x in alt])
        else:  # a character class, any character, a back-reference, a conditional: the run ends here
            end_run()
    end_run()
    if not candidates:
        return None
    # the most selective: the set whose shortest literal is longest, then the one with fewest literals
    return max(candidates, key=lambda alts: (min(len(x) for x in alts), -len(alts)))


def table(patterns: list[str], flags: int = re.I) -> dict[str, list[str] | None]:
    """``needed`` of each pattern (what a knowledge base caches beside its entries)."""
    return {p: needed(p, flags) for p in dict.fromkeys(patterns)}


def may_match(lits: list[str] | None, folded: str) -> bool:
    """False only when the pattern cannot match a text whose ``fold`` is ``folded``."""
    return lits is None or any(x in folded for x in lits)


_COMPILED: dict[str, re.Pattern] = {}  # pattern -> compiled with re.IGNORECASE (entries' and classes' patterns)


def compiled(patterns: list[str], table: dict[str, list[str] | None], folded: str | None) -> list[re.Pattern]:
    """``patterns`` compiled (re.IGNORECASE, once per process); with ``folded`` (``fold`` of every string they will
    search), only those whose pre-test in ``table`` it passes: the rest cannot match and are never compiled."""
    out = []
    for p in patterns:
        if folded is None or may_match(table.get(p), folded):
            rx_ = _COMPILED.get(p)
            if rx_ is None:
                rx_ = _COMPILED[p] = rx.compile(p, re.I)
            out.append(rx_)
    return out


# -- the module-level regexes of explain (parse.py's _Lazy): their pre-tests, cached across runs ---------------------

def _valid(key, value) -> bool:
    return (type(key) is tuple and len(key) == 2 and type(key[0]) is str and type(key[1]) is int
            and (value is None or type(value) is list and all(type(x) is str for x in value)))


_MEMO = rx.Memo(f"literals-v{VERSION}-py{sys.version_info[0]}{sys.version_info[1]}", _valid)  # (pattern, flags) -> needed()
# the last string folded and its fold, as one tuple (swapped whole, so a thread never pairs one text with another's
# fold): ~100 facet regexes read the same text
_LAST_FOLD: list = [(None, "")]


def cache_file():
    return _MEMO.path()


def lookup(pattern, flags: int) -> list[str] | None:
    """``needed`` of a module-level regex, from the cache file when an earlier run computed it (a new or changed
    pattern is computed here and written back when the process ends)."""
    key = (pattern, int(flags))  # an int, not a re.RegexFlag: marshal holds plain data only
    lits = _MEMO.get(key, _MISSING)
    if lits is _MISSING:
        if not isinstance(pattern, str):
            return None
        lits = needed(pattern, flags)
        _MEMO.put(key, lits)
    return lits


def cannot_match(pattern, flags: int, string) -> bool:
    """True when the regex (``pattern``, ``flags``, IGNORECASE) cannot match ``string``: none of its needed
    literals is in it. False whenever unsure (not a str, not case-insensitive, no literal found)."""
    if type(string) is not str or not flags & re.I:
        return False
    lits = lookup(pattern, flags)
    if lits is None:
        return False
    last = _LAST_FOLD[0]
    if last[0] is string:
        folded = last[1]
    else:
        folded = fold(string)
        _LAST_FOLD[0] = (string, folded)
    return not any(x in folded for x in lits)

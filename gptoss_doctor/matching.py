"""Rank knowledge-base entries by the evidence an error text offers.

Signals, strongest first: a known message quoted verbatim, a signature pattern, the token IDs
named, the engine seen in the log, and (for plain-language symptoms) word overlap with an
entry's symptom phrases, weighted by how rare each word is across the knowledge base.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from gptoss_doctor import kb
from gptoss_doctor.parsing import Parsed, parse_text

HIGH, MEDIUM, LOW = 0.75, 0.45, 0.15
NON_ENGINE_HINTS = {"openai-sdk", "client", "any", "harmony"}

STOPWORDS = set("""
a an and are as at be been but by can could did do does for from get gets got had has have how i if in into is it its
just me my no not of on or our so some than that the their them then there these they this to too up use used using was
we were what when where which while who why will with without you your after before again also any back both each even
ever every here more most much need only other out over same should since such very via would into onto about all
error errors issue problem bug server model models gpt oss gpt-oss openai run running works work working
""".split())


def _stem(w: str) -> str:
    for suf in ("ing", "ed", "es", "s"):
        if len(w) > len(suf) + 3 and w.endswith(suf):
            return w[: -len(suf)]
    return w


def words(text: str) -> set[str]:
    return {_stem(w) for w in re.findall(r"[a-z0-9_]+", text.lower().replace("<|", " ").replace("|>", " "))
            if len(w) >= 3 and w not in STOPWORDS}


def _originals(text: str) -> dict[str, str]:
    """stem -> the word as the user wrote it (for readable evidence)."""
    out: dict[str, str] = {}
    for w in re.findall(r"[a-z0-9_]+", text.lower()):
        out.setdefault(_stem(w), w)
    return out


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


@dataclass
class Match:
    entry: kb.Entry
    score: float
    confidence: str
    evidence: list[str]

    def to_json(self) -> dict:
        e = self.entry
        return {
            "id": e.id, "title": e.title, "confidence": self.confidence, "score": round(self.score, 2),
            "evidence": self.evidence, "references": e.urls, "fixes": e.fix_lines(),
            "origin": e.origin, "engines": e.engines, "summary": e.summary, "causes": e.causes,
        }


def confidence_of(score: float) -> str:
    return "high" if score >= HIGH else "medium" if score >= MEDIUM else "low"


class Index:
    """Per-entry data for matching. Word sets and IDF are built on first use: a structured error
    (the common case) only needs the normalised messages and patterns, which keeps start-up fast."""

    def __init__(self, entries: list[kb.Entry]):
        self.entries = entries
        self.messages = [[_norm(m) for m in e.messages] for e in entries]
        self._patterns: dict[int, list[re.Pattern]] = {}
        self._words: tuple | None = None

    def patterns(self, i: int) -> list[re.Pattern]:
        if i not in self._patterns:
            self._patterns[i] = [re.compile(p, re.I) for p in self.entries[i].patterns]
        return self._patterns[i]

    def _build_words(self) -> tuple:
        if self._words is None:
            symptoms = [[words(s) for s in e.symptoms] for e in self.entries]
            about = [words(e.title + " " + e.summary) for e in self.entries]
            vocab = [about[i].union(*symptoms[i]) for i in range(len(self.entries))]
            df: dict[str, int] = {}
            for v in vocab:
                for w in v:
                    df[w] = df.get(w, 0) + 1
            n = max(len(self.entries), 1)
            idf = {w: math.log(1 + n / c) for w, c in df.items()}
            self._words = (symptoms, vocab, idf, math.log(1 + n))
        return self._words

    def symptoms(self, i: int) -> list[set[str]]:
        return self._build_words()[0][i]

    def vocab(self, i: int) -> set[str]:
        return self._build_words()[1][i]

    def overlap(self, phrase: set[str], text: set[str]) -> tuple[float, list[str]]:
        if not phrase:
            return 0.0, []
        _, _, idf, default = self._build_words()
        total = sum(idf.get(w, default) for w in phrase)
        shared = phrase & text
        got = sum(idf.get(w, default) for w in shared)
        return (got / total if total else 0.0), sorted(shared)


_LAST: list[Index] = []


def index(entries: list[kb.Entry] | None = None) -> Index:
    """The Index of ``entries`` (the loaded KB by default), rebuilt only when the list changes."""
    entries = entries if entries is not None else kb.load()
    if not _LAST or _LAST[0].entries is not entries:
        _LAST[:] = [Index(entries)]
    return _LAST[0]


def _score_entry(ix: Index, i: int, messages: list[str], norm_msgs: list[str], tokens: set[int],
                 engines: dict[str, str], text_words: set[str], free_text: bool,
                 shown: dict[str, str] | None = None) -> tuple[float, list[str]]:
    e = ix.entries[i]
    evidence: list[str] = []
    strong = 0.0
    for known, raw in zip(ix.messages[i], e.messages):
        if len(known) >= 8 and any(known in m for m in norm_msgs):
            s = 0.8 + min(0.1, len(known) / 500)
            if s > strong:
                strong = s
                evidence = [f'the error quotes the known message "{raw}"']
            break
    if strong < 0.7:
        for rx in ix.patterns(i):
            hit = next((m for m in messages if rx.search(m)), None)
            if hit is not None:
                strong = 0.7
                found = rx.search(hit)
                evidence = [f'the error matches this issue\'s pattern: "{found.group(0)[:160]}"']
                break
    score = strong
    shared_tokens = sorted(tokens & set(e.token_ids))
    if shared_tokens:
        bonus = (0.08 if strong else 0.15) * min(len(shared_tokens), 2)
        score += bonus
        evidence.append("token ID(s) " + ", ".join(map(str, shared_tokens)) + " are signs of this issue")
    real_engines = {k: v for k, v in engines.items() if k not in NON_ENGINE_HINTS}
    if real_engines and score > 0:
        same = [k for k in real_engines if k in e.engines]
        if same:
            score += 0.07
            evidence.append(f'engine {same[0]} (seen as "{real_engines[same[0]][:60]}") is affected')
        elif "any" not in e.engines and "client" not in e.engines and "openai-sdk" not in e.engines:
            score -= 0.15
            evidence.append(f"but the log is from {', '.join(real_engines)}, which this issue does not name")
    # plain-language symptoms: strong for free text, a tie-breaker next to real error messages
    if not free_text and not strong:
        return max(score, 0.0), evidence
    best, best_words, best_phrase = 0.0, [], ""
    for phrase_words, phrase in zip(ix.symptoms(i), e.symptoms):
        s, shared = ix.overlap(phrase_words, text_words)
        if s > best:
            best, best_words, best_phrase = s, shared, phrase
    if free_text:
        # how much of the user's description this entry explains, and how well one symptom fits it
        covered, covered_words = ix.overlap(text_words, ix.vocab(i))
        sym = 0.6 * best ** 2 + 0.45 * covered ** 2 if len(text_words) >= 2 else 0.0
        if sym >= 0.1:
            score += sym
            show = shown or {}
            if best_words and best >= 0.3:
                evidence.append(f'your words match the symptom "{best_phrase}" '
                                f'({", ".join(show.get(w, w) for w in best_words)})')
            elif covered_words:
                evidence.append("the entry covers your words: " + ", ".join(show.get(w, w) for w in covered_words[:8]))
    elif strong and best >= 0.5:
        score += 0.05
    return min(score, 0.99), evidence


def match_parsed(parsed: Parsed, *, entries: list[kb.Entry] | None = None, engine: str | None = None,
                 limit: int = 5, min_score: float = LOW) -> list[Match]:
    ix = index(entries)
    messages = [e.message for e in parsed.errors][:200]
    if not messages:
        messages = [parsed.sample]
    norm_msgs = [_norm(m) for m in messages]
    engines = dict(parsed.engines)
    if engine:
        engines.setdefault(engine, f"--engine {engine}")
    # free text: no structured error found, or a short input that reads like a sentence
    free_text = not parsed.errors or all(e.kind == "log-error" for e in parsed.errors)
    source = parsed.sample if free_text else " ".join(messages)
    text_words = words(source) if free_text or len(messages) < 50 else set()
    shown = _originals(source) if free_text else {}
    tokens = set(parsed.token_ids)
    found: list[Match] = []
    for i in range(len(ix.entries)):
        score, ev = _score_entry(ix, i, messages, norm_msgs, tokens, engines, text_words, free_text, shown)
        if score >= min_score:
            found.append(Match(ix.entries[i], score, confidence_of(score), ev))
    found.sort(key=lambda m: (-m.score, m.entry.id))
    return found[:limit]


def match_text(text: str, *, engine: str | None = None, limit: int = 5,
               entries: list[kb.Entry] | None = None, min_score: float = LOW) -> list[Match]:
    """Parse ``text`` and rank entries (used by ``check`` for server error bodies)."""
    return match_parsed(parse_text(text), entries=entries, engine=engine, limit=limit, min_score=min_score)

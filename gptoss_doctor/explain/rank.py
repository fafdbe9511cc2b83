"""Lexical ranking of knowledge-base entries: BM25 over everything an entry says, with a tokeniser for errors.

The tokeniser keeps what matters in error text whole (``tool_calls``, ``--tool-call-parser``,
``openai_harmony.HarmonyError``, ``<|channel|>``, token IDs such as ``200012``) and also yields the parts of
compound identifiers, so "tool call parser" in a sentence meets ``--tool-call-parser`` in an entry. Numbers that
are not token IDs (ports, pids, timestamps, line numbers) are dropped: they must not make or break a match.

The index is plain data (lists and dicts of str/int/float) so it is cached as JSON with the knowledge base and
loading it costs no more than reading that file.
"""

from __future__ import annotations

import math

from gptoss_doctor import rx as _rx

TOKEN_RE = _rx.compile(r"<\|[a-z]+\|>|-{1,2}[a-z][a-z0-9_]*(?:-[a-z0-9_]+)*|[a-z0-9_]+(?:[.\-/][a-z0-9_]+)*")
PART_RE = _rx.compile(r"[a-z][a-z0-9]*|\d+")
STOPWORDS = frozenset("""
a an and are as at be been but by can could did do does for from get gets got had has have how i if in into is it its
just me my no not of on or our so some than that the their them then there these they this to too up use used using
was we were what when where which while who why will with without you your after before again also any back both each
even ever every here more most much need only other out over same should since such very via would onto about all
am im ive dont doesnt cant isnt wasnt didnt won wont one two let lets like seems seem still yet now new try tried
thank thanks please hi hello hey sure okay ok want wanted see saw way thing things
""".split())
# words every gpt-oss report says: they carry no information about *which* problem it is
COMMON = frozenset("gpt oss gpt-oss openai model models 20b 120b gpt-oss-20b gpt-oss-120b openai/gpt-oss-20b "
                   "openai/gpt-oss-120b issue bug error problem".split())
FIELD_WEIGHTS = {"title": 3.0, "messages": 3.0, "symptoms": 2.0, "summary": 1.0, "causes": 1.0, "variants": 1.0,
                 "fixes": 0.5, "engines": 1.0}
K1, B = 1.2, 0.5
# fields whose adjacent words also make phrase terms ("parallel tool", "tool call"): what an entry says a problem
# looks like; causes and fixes are left out (their phrases describe the remedy, not what a user sees, and would triple
# the index). Measured on the dev, tune and held-back splits (with WORDS_LEAD 0.23 in match.py): top-1 353 -> 353,
# 32 -> 33, 78 -> 80; top-3 372 -> 369, 38 -> 41, 88 -> 88; dev leave-one-out confident wrong 26 -> 23. Joining the
# parts of one identifier too ("finish_reason" -> "finish reason") ranked a little better on dev (354, top-3 370) but
# counted every identifier twice: 27 confident wrong, and a LangChain repr of leaked Harmony lost its confident answer
PHRASE_FIELDS = frozenset(("title", "messages", "symptoms", "variants", "summary"))
VERSION = 5  # bump when the tokeniser or the index layout changes: cached indexes are keyed by it


def _stem(w: str) -> str:
    if not w.isalpha():
        return w
    for suf in ("ing", "ed", "es", "s"):
        if len(w) > len(suf) + 3 and w.endswith(suf):
            return w[: -len(suf)]
    return w


# words users and maintainers use for the same thing: each also yields its concept term, so a report saying
# "gibberish" meets an entry saying "garbage", "thinking" meets "reasoning", "blank" meets "empty"
CONCEPTS = {
    **dict.fromkeys(("garbage", "gibberish", "garbl", "nonsense", "junk", "corrupt", "corrupted"), "~garbage"),
    **dict.fromkeys(("think", "thinking", "thought", "reason", "analysi"), "~reason"),
    **dict.fromkeys(("empty", "blank", "nothing"), "~empty"),
    **dict.fromkeys(("hang", "stuck", "freez", "froze", "frozen"), "~hang"),
    **dict.fromkeys(("crash", "segfault", "abort", "core dump"), "~crash"),
    **dict.fromkeys(("loop", "repeat", "repetit", "repetition"), "~repeat"),
}


# names of the setting (engines, runners, hosted providers, proxies): they say where a problem happened, not which
# problem it is. The facets weigh the setting (an entry naming the text's engine gains, one about another engine
# drops); in the words that rank entries they count half, so that an entry about one provider's own quirk does not
# outrank the cause the text describes merely because both say "Groq" (the eighteenth and nineteenth independent sets:
# empty answers from gpt-oss on Groq ranked Groq's reasoning-field and tool-argument issues above the empty-answer
# issue). A client's or agent's name (Codex, Cline, LangChain …) keeps its weight: a client's bug is that client's
# code, so its name does say which problem it is. Measured on every tuned split (dev, tune, held back, independent-2
# … -19) with clients' names halved too: top-1 outside dev 422 -> 426 of 554, right & confident 230 -> 231, confident
# wrong and triage fits unchanged; dev top-1 355, right & confident 275 -> 273 (a Codex text's and an OpenRouter
# text's lead was the name). Leaving the clients' names whole then gave back the Codex answer's and a Cline answer's
# confidence (dev 274, independent-3 6) and changed no top-1. Weighed 0.4: top-1 428 but one more confident wrong
# answer; 0.25: 428 and two more
SETTING_WEIGHT = 0.5
_SETTING_NAMES = """groq ollama vllm sglang openrouter litellm lmstudio llama.cpp llamacpp llama-server bedrock vertex
vertex_ai azure cerebras together fireworks databricks huggingface cloudflare nebius baseten deepinfra tensorrt
tensorrt-llm trtllm lmdeploy tgi mlx modal""".split()
SETTING = frozenset(n for name in _SETTING_NAMES for n in (name, _stem(name)))


def damp_setting(q: dict[str, float], weight: float = SETTING_WEIGHT) -> dict[str, float]:
    """``q`` (query terms and weights, as :meth:`Ranker.query_terms` gives them) with the terms that name the setting
    (or a phrase with such a name in it) weighed ``weight``: in place, and returned."""
    for t in q:
        if t and any(p in SETTING for p in t.split(" ")):
            q[t] *= weight
    return q


def _keep_number(w: str) -> bool:
    return len(w) >= 5 and int(w) < 201088  # a token ID (o200k_harmony has 201088), not a port or a pid


def tokens(text: str, phrases: bool = True) -> list[str]:
    """Terms of ``text``: whole identifiers and their parts, stemmed, without stopwords and stray numbers; with
    ``phrases``, also each pair of content words that follow each other in running text ("parallel tool",
    "tool call"). A pair never spans punctuation (``'finish_reason': 'stop'`` is no phrase) and never joins the parts
    of one identifier (``finish_reason`` is a term of its own already)."""
    out: list[str] = []
    low = text.lower()
    prev, end = "", 0  # the last content word (a phrase's first half) and where the last match ended
    for m in TOKEN_RE.finditer(low):
        raw = m.group(0)
        if low[end:m.start()].strip():
            prev = ""
        end = m.end()
        if raw.startswith("<|"):
            out.append(raw)
            prev = ""
            continue
        word = raw.lstrip("-")
        parts = PART_RE.findall(word)
        compound = len(parts) > 1 or raw.startswith("-")
        if compound and len(word) <= 60:
            out.append(raw if raw.startswith("--") else word)
        first = True
        for p in parts:
            if p.isdigit():
                if _keep_number(p):
                    out.append(p)
            elif len(p) >= 2 and p not in STOPWORDS:
                st = _stem(p)
                out.append(st)
                concept = CONCEPTS.get(st)
                if concept:
                    out.append(concept)
                if phrases and first and prev and st.isalpha() and st not in COMMON and prev not in COMMON:
                    out.append(prev + " " + st)
                first = False
                prev = st if st.isalpha() else ""
    return out


def entry_fields(entry) -> dict[str, str]:
    fixes = " ".join(fx.get("step", "") + " " + " ".join(fx.get("flags", []) or []) for fx in entry.fixes)
    return {"title": entry.title, "messages": " ".join(entry.messages), "symptoms": " ".join(entry.symptoms),
            "summary": entry.summary, "causes": " ".join(entry.causes), "variants": " ".join(entry.variants),
            "fixes": fixes, "engines": " ".join(entry.engines)}


def build(entries) -> dict:
    """The BM25 index of ``entries`` as plain data."""
    docs: list[dict[str, float]] = []
    for e in entries:
        tf: dict[str, float] = {}
        for name, text in entry_fields(e).items():
            w = FIELD_WEIGHTS[name]
            for t in tokens(text, phrases=name in PHRASE_FIELDS):
                tf[t] = tf.get(t, 0.0) + w
        docs.append(tf)
    n = max(len(docs), 1)
    df: dict[str, int] = {}
    for tf in docs:
        for t in tf:
            df[t] = df.get(t, 0) + 1
    idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
    lengths = [sum(tf.values()) for tf in docs]
    avg = sum(lengths) / n if lengths else 1.0
    return {"idf": idf, "docs": docs, "norm": [K1 * (1 - B + B * ln / avg) for ln in lengths]}


class Ranker:
    def __init__(self, data: dict):
        self.idf: dict[str, float] = data["idf"]
        self.docs: list[dict[str, float]] = data["docs"]
        self.norm: list[float] = data["norm"]

    def query_terms(self, text: str) -> dict[str, float]:
        """Query terms with their weights (repeats count, but saturate: a long log must not shout).

        Words no entry uses are kept under the key "" as one total weight: they are information the
        knowledge base does not explain ("Frobnicator overflow"), so they lower every entry's coverage."""
        counts: dict[str, int] = {}
        unknown: set[str] = set()
        for t in tokens(text):
            if t in COMMON:
                continue
            if t in self.idf:
                counts[t] = counts.get(t, 0) + 1
            elif t.isalpha() and len(t) >= 4:
                unknown.add(t)
        q = {t: 1.0 + math.log(c) for t, c in counts.items()}
        if unknown:
            q[""] = min(len(unknown), 12) * 0.5 * self.unknown_idf
        return q

    @property
    def unknown_idf(self) -> float:
        return math.log(1 + (len(self.docs) + 0.5) / 0.5)

    def scores(self, q: dict[str, float]) -> list[tuple[float, float, list[str]]]:
        """Per entry: (BM25 score, share of the query's information the entry covers, shared terms)."""
        total = (sum(self.idf[t] * w for t, w in q.items() if t) + q.get("", 0.0)) or 1.0
        out = []
        for tf, norm in zip(self.docs, self.norm):
            s, cov, shared = 0.0, 0.0, []
            for t, w in q.items():
                f = tf.get(t) if t else None
                if f:
                    idf = self.idf[t]
                    s += idf * w * f * (K1 + 1) / (f + norm)
                    cov += idf * w
                    shared.append(t)
            out.append((s, cov / total, shared))
        return out

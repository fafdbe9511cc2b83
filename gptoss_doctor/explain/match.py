"""Rank knowledge-base entries by the evidence a text offers.

Exact signals first: a known message quoted anywhere in the text (also with its numbers, names and paths
changed), a signature pattern, the token IDs named, an artifact of a broken server (leaked Harmony, flattened
channels, duplicated streamed fragments, a tool call as text) that an entry's findings name, a launch command in
the text that the scan's own rules find lacking what an entry is about (the tool-call flags), and — as a lead, never
a diagnosis — a GitHub thread the text links that an entry cites. Then a BM25 ranking
over everything each entry says (title, messages, symptoms, summary, causes, variants, fixes), which is what finds
the entry for a paraphrase, a symptom description or a message nobody has quoted yet. Engine hints from the text
break ties; a text about another model family gets no confident lexical match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gptoss_doctor import rx as _rx
from gptoss_doctor import kb
from gptoss_doctor.explain import literals
from gptoss_doctor.explain.parse import Parsed, gloss, parse_text

if TYPE_CHECKING:
    from gptoss_doctor.explain.facets import Facets

HIGH, MEDIUM, LOW = 0.75, 0.45, 0.15
TIE_MARGIN = 0.05  # a medium match must lead the next one by this much to stay medium
ARTIFACT_MARGIN = 0.12  # ... and one that rests on an artifact of the text alone (raw Harmony, a tool call as text)
WORDS_MARGIN = 0.03  # a match on words alone must lead the next one by this much to stay confident
WORDS_LEAD = 0.23  # ... and a description matched by shared words alone (engine or client agreeing or not) by this
# (0.15 -> 0.2, measured by leave-one-out on dev: confident wrong 38 -> 26 of 383, right & confident 285 -> 274;
# on the fresh tune split its 2 confident wrong answers on uncovered problems became leads, no right one was lost;
# 0.2 -> 0.23 with the phrase terms of rank.py, which lengthen the leads: dev leave-one-out confident wrong 26 -> 25,
# right & confident dev 274 -> 277, held back 59 -> 61, tune's uncovered problems 1 confident wrong as before)
NON_ENGINE_HINTS = {"openai-sdk", "client", "any", "harmony"}
# clients and hosted APIs seen in a text favour entries that name them; they never count against the rest (the
# fault is often in the server behind them)
CLIENT_HINTS = {"codex", "openai-agents", "langchain", "llamaindex", "open-webui", "continue", "cline", "roo-code",
                "anythingllm", "aider", "pydantic-ai", "vercel-ai", "hosted"}
# a proxy in the text is a hop, not the engine the model ran on: a backend's message it passes on is the backend's
HOPS = {"litellm"}
# runners that embed another engine print its messages as their own (Ollama's and LM Studio's runners are llama.cpp)
EMBEDDED = {"ollama": {"llama.cpp"}, "lmstudio": {"llama.cpp", "mlx"}}
GENERIC_FINDINGS = {"probe.tools.no_parser"}  # artifacts any model family can show
GENERIC_ENGINES = {"any", "client", "openai-sdk", "harmony"}
# a reporter's own sentences beside the error messages of a structured text: lines this long at least, this much in
# all (measured on the dev and tuned splits: dev top-1 353 -> 354, right & confident 273 -> 274, confident wrong 3 -> 2;
# independent-7 top-1 4 -> 5; no row fell; 30-character lines also added a confident wrong answer on independent-4)
PROSE_LINE, PROSE_CAP = 40, 1000
MAX_SCAN = 1 << 20  # how much of a pasted text is searched for known messages

# a text about gpt-oss: the model, its format, its tokens or its reasoning settings
GPTOSS_RE = _rx.compile(
    r"gpt[-_ ]?oss|harmony|o200k|<\|(?:channel|message|start|call|return|constrain)\|>|\b(?:199998|199999|"
    r"20000[0-9]|2000[1-9]\d)\b|assistantfinal", re.I)
# hints that point to gpt-oss only when no other model is named: MXFP4 quants and 20b/120b sizes exist for others
WEAK_GPTOSS_RE = _rx.compile(r"mxfp4|\b(?:20|120)b\b", re.I)
# gpt-oss by name: Harmony-like markup alone is no sign of it where another family is named (Gemma 4 writes
# "<|channel>thought <channel|>", and a report quotes such markup under a "<|channel|>" heading)
GPTOSS_NAME_RE = _rx.compile(r"gpt[-_ ]?oss|o200k|assistantfinal", re.I)
# another model family named, without gpt-oss: a lexical resemblance is not a diagnosis
OTHER_MODEL_RE = _rx.compile(
    r"\b(?:qwen\d*|llama[- ]?[234]|llama3|mistral|mixtral|deepseek|gemma\d*|glm-?\d|kimi|phi-?\d|granite|"
    r"command-?[ar]|internlm|minimax|nemotron|seed[-_]oss|falcon|hermes-?\d|claude|gemini|devstral|magistral|"
    r"qwq|mimo|hunyuan|exaone|olmo-?\d*|smollm\d*|minicpm\w*|internvl\w*|llava|codestral|ministral|pixtral|jamba|"
    r"dbrx|starcoder\d*|cogito|chatglm\d*|skywork|apertus|lfm-?\d[\w.]*|"
    r"o[134](?:-mini|-pro|-preview)?|gpt-?(?:3\.5|4|4o|4\.1|5)(?:[.-][\w.]+)?|grok|ernie|baichuan|yi-\d)\b", re.I)


# a public thread the text links or names ("github.com/vllm-project/vllm/issues/22525", "vllm-project/vllm#22525"):
# when a known issue cites that very thread, the user has pointed at it (issues, pulls and discussions share numbers)
THREAD_RE = _rx.compile(r"github\.com/([\w.-]+/[\w.-]+)/(?:issues|pull|discussions)/(\d+)|"
                       r"(?<![\w/.-])([\w.-]+/[\w.-]+)#(\d+)\b", re.I)


def threads(text: str) -> set[str]:
    """The GitHub threads a text links or names, as 'owner/repo#N' in lower case."""
    return {f"{(m.group(1) or m.group(3)).lower()}#{m.group(2) or m.group(4)}" for m in THREAD_RE.finditer(text)}


# the scan's rules on a launch command pasted in the text (gptoss_doctor/scan/rules.py): a rule about the tool-call
# flags is evidence for its entry when the text is about tools or an agent (the launch line says how the server runs,
# the rest of the text what failed)
TOOL_RULES = {"vllm.tool_flags_missing", "vllm.tool_parser_missing", "vllm.wrong_tool_parser",
              "vllm.auto_tool_choice_missing", "sglang.tool_parser_missing", "sglang.wrong_tool_parser"}
ABOUT_TOOLS_RE = _rx.compile(r"\btool[_ -]?(?:calls?|calling|choice|use|parser)\b|\bfunction[_ ]call\w*|\btools\b|"
                            r"\bagents?\b|\bagentic\b|\bclaude[- ]code\b|\bcodex\b|\bcline\b|\bmcp\b", re.I)
# the legacy field every chat completion still carries, empty ('"function_call": null', 'function_call=None'): no
# sign that a text is about tools (the facets keep it: beside 'tool_calls=None' and reasoning that meant to call a
# tool, a client's repr of the message is a tool-call failure)
EMPTY_FUNCTION_CALL_RE = _rx.compile(r"[\"']?\bfunction_call[\"']?\s*[:=]\s*(?:null|None)\b")
LAUNCH_HINT_RE = _rx.compile(r"\bvllm serve\b|vllm\.entrypoints|vllm-openai|sglang\.launch_server|\bpython3? -m sglang\b",
                            re.I)


def launch_evidence(text: str) -> dict[str, str]:
    """{entry id: why} from the scan's tool-flag rules on the launch commands the text shows, when the text is about
    tools or an agent; empty otherwise (no launch command, or one that is not about gpt-oss). The empty fields every
    chat completion carries ('"tool_calls": []', '"function_call": null') do not make a text about tools
    (vllm-project/vllm#25687: a token count question with a pasted answer)."""
    head = text[:65536]
    if not LAUNCH_HINT_RE.search(head):
        return {}
    from gptoss_doctor.explain.facets import without_routine

    if not ABOUT_TOOLS_RE.search(EMPTY_FUNCTION_CALL_RE.sub(" ", without_routine(head))):
        return {}
    from pathlib import Path

    from gptoss_doctor.scan.launches import from_shell
    from gptoss_doctor.scan.rules import judge_launch

    out: dict[str, str] = {}
    try:
        launches = from_shell(Path("the text"), head)
    except Exception:  # noqa: BLE001 - a paste is no shell script: what does not parse shows no launch
        return {}
    for la in launches[:20]:
        for f in judge_launch(la):
            if f.id in TOOL_RULES and f.kb:
                out.setdefault(f.kb[0], f"the launch command in the text: {f.title} ({f.id})")
    return out


PATH_RE = _rx.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.\-@]+){2,}|\[[\w.]+\.py:\d+\]|\b\w+\.py\b")


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


SQUEEZED_MIN = 24  # a message this long without its spaces is still specific


# the level a message is printed with ("Error: ", "ERROR:"): a report quotes the message with or without it (an
# exception's class stays: "litellm.APIConnectionError: Expecting value" is not any "Expecting value")
_MESSAGE_PREFIX = _rx.compile(r"^\s*(?:error|fatal|panic)\s*:\s*", re.I)


def _squeeze(text: str) -> str:
    """A known message without its level prefix and without any space."""
    return "".join(_MESSAGE_PREFIX.sub("", text, count=1).lower().split())


_SHAPE_SUBS = [
    # quoted names and values (not quoted Harmony markup: "but got \"Search <|co\"" and "but got \"to=function\"" are
    # different faults of one parser)
    (_rx.compile(r"(['\"`])(?:(?!\1|<\|).){1,200}\1"), "Q"),
    (_rx.compile(r"(?:[a-z]:)?(?:[\\/][\w.\-@]+){2,}"), "P"),    # paths
    (_rx.compile(r"\b[0-9a-f]{8,}\b|\b\w+-[0-9a-f]{8,}\b"), "H"),  # ids and hashes
    (_rx.compile(r"(?<![\d.])(?!(?:199998|199999|20[01]\d{3})(?![\d.]))\d+(?:\.\d+)*"), "N"),  # numbers, versions
    # (Harmony special token IDs stay: "Unexpected token 200012" and "Unexpected token 12606" are different faults)
    (_rx.compile(r"some\(q\)|\[q\]", re.I), "[Q]"),                 # Rust's Some("x") and Python's ["x"]
]


# the fixed words of Python's own exception templates ("ImportError: cannot import name 'X' from 'Y'", "No module
# named 'X'", "'X' object has no attribute 'Y'"): a message whose fixed part is only these says nothing specific
# once its names are replaced
_TEMPLATE_WORDS = frozenset(
    "cannot import name from no module named object has attribute is not the of to for in on at an and or got "
    "unexpected keyword argument expected but found invalid failed error exception key value type with".split())


def _names_provider(e: kb.Entry, provider: str) -> bool:
    word = provider.lower().split()[0] if provider.strip() else ""
    return bool(word) and word in f"{e.id} {e.title} {e.summary}".lower()


def _literal_words(shaped: str) -> int:
    return sum(1 for w in re.findall(r"[a-z]{2,}", shaped))


def _specific_words(shaped: str) -> int:
    return sum(1 for w in re.findall(r"[a-z]{2,}", shaped)
               if w not in _TEMPLATE_WORDS and not w.endswith(("error", "exception")))


def shape(text: str) -> str:
    """A message with its variable parts (quoted names, paths, ids, numbers) replaced by placeholders."""
    s = _norm(text)
    for rx, rep in _SHAPE_SUBS:
        if rep == "[Q]":
            s = s.replace("some(Q)", "[Q]")
            continue
        s = rx.sub(rep, s)
    return s


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
            "fixes_by_layer": {layer: [ln for lay, ln in e.fix_items() if lay == layer]
                               for layer in dict.fromkeys(lay for lay, _ in e.fix_items() if lay)},
            "origin": e.origin, "engines": e.engines, "summary": e.summary, "causes": e.causes,
        }


def confidence_of(score: float) -> str:
    return "high" if score >= HIGH else "medium" if score >= MEDIUM else "low"


class Index:
    """Per-entry data for matching, built once per knowledge base (the BM25 part comes from the compiled cache)."""

    def __init__(self, entries: list[kb.Entry]):
        self.entries = entries
        self.messages = [[_norm(m) for m in e.messages] for e in entries]
        # the same without any space: a message pasted from a terminal or a rendered page is spaced differently
        # ("template::3: function" for "template: :3: function")
        self.squeezed = [[_squeeze(m) for m in e.messages] for e in entries]
        self._shapes: list[list[str]] | None = None
        self._literals: dict[str, list[str] | None] | None = None
        self._ranker = None

    def context_seen(self, i: int, haystack: str) -> bool:
        """Whether the text (its normalised ``haystack``) shows entry ``i``'s own setting (``signatures.context``);
        True for an entry that names none."""
        pats = self.entries[i].context
        if not pats:
            return True
        if not hasattr(self, "_context"):
            self._context: dict[int, list[re.Pattern]] = {}
        if i not in self._context:
            self._context[i] = [_rx.compile(p, re.I) for p in pats]
        return any(c.search(haystack) for c in self._context[i])

    def finding_count(self, finding: str) -> int:
        if not hasattr(self, "_finding_counts"):
            counts: dict[str, int] = {}
            for e in self.entries:
                for f in e.findings:
                    counts[f] = counts.get(f, 0) + 1
            self._finding_counts = counts
        return max(self._finding_counts.get(finding, 1), 1)

    def cited(self) -> dict[str, list[int]]:
        """'owner/repo#N' -> the entries that cite that thread."""
        if not hasattr(self, "_cited"):
            cited: dict[str, list[int]] = {}
            for i, e in enumerate(self.entries):
                for t in threads(" ".join(e.urls)):
                    cited.setdefault(t, []).append(i)
            self._cited = cited
        return self._cited

    def vendors(self, i: int) -> set[str]:
        """The GPU vendors an entry is about (ROCm, Metal, XPU …), from what it says of itself."""
        if not hasattr(self, "_vendors"):
            self._vendors: dict[int, set[str]] = {}
        if i not in self._vendors:
            from gptoss_doctor.explain.facets import VENDORS

            e = self.entries[i]
            # a vendor its id names comes first: a ROCm issue whose summary mentions "CUDA-graph capture" is still
            # about AMD hardware, not NVIDIA's (the fourteenth set's V100 log got it, high)
            named = {name for name, rx in VENDORS if name != "cpu" and rx.search(e.id.replace("-", " "))}
            if not named & RARE_VENDORS:
                named = {name for name, rx in VENDORS if name != "cpu" and rx.search(e.id + " " + e.title)}
                if not named:
                    # what its summary and messages mention is what reporters ran, not what the issue needs: they
                    # place it only on NVIDIA hardware, and only when they name no other vendor
                    about = " ".join([e.summary, *e.messages])
                    named = {name for name, rx in VENDORS if name != "cpu" and rx.search(about)}
                    named = named if named == {"nvidia"} else set()
                elif len(named) > 1:
                    named = set()  # a title that names two vendors' hardware is about neither alone
            self._vendors[i] = named
        return self._vendors[i]

    def shapes(self, i: int) -> list[str]:
        if self._shapes is None:
            self._shapes = [[shape(m) for m in e.messages] for e in self.entries]
        return self._shapes[i]

    def shared_shapes(self) -> set[str]:
        """Message shapes that are in (or contain) another entry's: with its names and numbers replaced, such a
        message is a kind of error several known issues print, so a match of its shape tells them not apart."""
        if not hasattr(self, "_shared"):
            items = [(s, i) for i in range(len(self.entries)) for s in self.shapes(i) if len(s) >= 16]
            self._shared = {s for s, i in items for t, j in items if i != j and (s in t or t in s)}
        return self._shared

    def patterns(self, i: int, folded: str | None = None) -> list[re.Pattern]:
        """Entry ``i``'s signature patterns, compiled; with ``folded`` (``literals.fold`` of every string they
        will search), only those whose literal pre-test it passes: a pattern is compiled when a text may match it."""
        if self._literals is None:
            self._literals = kb.literals(self.entries, [p for e in self.entries for p in e.patterns])
        return literals.compiled(self.entries[i].patterns, self._literals, folded)

    @property
    def ranker(self):
        if self._ranker is None:
            self._ranker = kb.ranker(self.entries)
        return self._ranker


_LAST: list[Index] = []


def index(entries: list[kb.Entry] | None = None) -> Index:
    """The Index of ``entries`` (the loaded KB by default), rebuilt only when the list changes."""
    entries = entries if entries is not None else kb.load()
    if not _LAST or _LAST[0].entries is not entries:
        _LAST[:] = [Index(entries)]
    return _LAST[0]


@dataclass
class _Query:
    messages: list[str]      # the error messages found (or the text itself)
    haystack: str            # normalised text searched for known messages
    shaped: str              # the same with variable parts replaced
    tokens: set[int]
    engines: dict[str, str]
    findings: dict[str, str]  # finding id -> the artifact's evidence
    lexical: dict[str, float]
    gptoss: bool
    other_model: bool
    prose: bool  # a description in words, not an error message
    structured: bool = False  # the text has error messages (exceptions, tracebacks, error bodies)
    vendor: str | None = None  # the GPU vendor the text shows (facets)
    provider: str | None = None  # a hosted provider the text shows, when no engine log is in it (facets)
    folded: str = ""  # literals.fold of the messages and the haystack: what the patterns' pre-test reads
    threads: set[str] = field(default_factory=set)  # the GitHub threads the text links ('owner/repo#N')
    squeezed: str = ""  # the haystack without spaces
    launch: dict[str, str] = field(default_factory=dict)  # entry id -> what a launch command in the text shows


def _exact(ix: Index, i: int, q: _Query) -> tuple[float, str]:
    e = ix.entries[i]
    for known, raw in zip(ix.messages[i], e.messages):
        if len(known) >= 8 and known in q.haystack:
            return 0.8 + min(0.1, len(known) / 500), f'the text quotes the known message "{raw}"'
    for known, raw in zip(ix.squeezed[i], e.messages):
        if len(known) >= SQUEEZED_MIN and q.gptoss and known in q.squeezed:
            return 0.78, f'the text quotes the known message "{raw}" (spaced differently)'
    for shp, raw in zip(ix.shapes(i), e.messages):
        # only messages with enough fixed wording: "no module named Q" would match every missing module; and a
        # message whose variable part names gpt-oss ("unknown model architecture: 'gpt-oss'") is this issue only
        # when the text is about gpt-oss too ('seed_oss' in the same slot is another model's problem)
        if len(shp) >= 16 and _literal_words(shp) >= 5 and _specific_words(shp) >= 2 and shp in q.shaped \
                and shp not in ix.shared_shapes() \
                and (q.gptoss or not GPTOSS_RE.search(raw)):
            return 0.74, f'the text has the known message "{raw}" (with other names or numbers)'
    for rx in ix.patterns(i, q.folded):
        for m in q.messages:
            hit = rx.search(m)
            if hit:
                return 0.72, f'{PATTERN_EVIDENCE}"{hit.group(0)[:160]}"'
        hit = rx.search(q.haystack) if len(q.haystack) < MAX_SCAN else None
        if hit:
            return 0.7, f'{PATTERN_EVIDENCE}"{hit.group(0)[:160]}"'
    return 0.0, ""


PATTERN_EVIDENCE = "the text matches this issue's pattern: "
# a pattern's match that is nothing but Harmony markup and the names it carries: what every leak of raw Harmony shows
# (markup that opens a reply's content field, "content": "<|channel|>…", is more: the server returned it as the answer)
MARKUP_ONLY_RE = _rx.compile(r"(?:<\|[a-z]+\|>|\s|\bto=[\w.-]*|\b(?:analysis|commentary|final|assistant|json|"
                             r"assistantfinal|assistantcommentary|assistantanalysis)\b)+")


def _lexical_score(cov: float, rel: float, s: float, q: _Query) -> float:
    """Confidence-scaled score of a lexical match: how much of the text's information the entry covers,
    how it compares with the best entry, and how much information there was at all."""
    if s <= 0:
        return 0.0
    info = min(1.0, s / 12.0)  # a handful of rare shared terms is enough; one common word is not
    score = (0.25 + 0.55 * cov) * (0.35 + 0.65 * info) * (0.55 + 0.45 * rel)
    if not q.gptoss:
        score *= 0.8
    if q.other_model and not q.gptoss:
        score = min(score, 0.3)
    return score


def _score_all(ix: Index, q: _Query) -> list[tuple[float, list[str], bool, bool, bool, tuple[float, float]]]:
    """Per entry: (score, capped at 0.99; evidence; a lead only; words alone; lexical only; what orders entries the
    cap made equal: the quote's own score (a longer known message is more specific) and then the words)."""
    lex = ix.ranker.scores(q.lexical) if q.lexical else [(0.0, 0.0, [])] * len(ix.entries)
    best_s = max((s for s, _, _ in lex), default=0.0) or 1.0
    real_engines = {k: v for k, v in q.engines.items() if k not in NON_ENGINE_HINTS and k not in CLIENT_HINTS}
    clients = {k: v for k, v in q.engines.items() if k in CLIENT_HINTS}
    out = []
    for i, e in enumerate(ix.entries):
        evidence: list[str] = []
        strong, why = _exact(ix, i, q)
        quoted = bool(why)
        if why:
            evidence.append(why)
        linked = sorted(t for t in q.threads if i in ix.cited().get(t, ()))
        if linked and not strong:
            # the text links a thread this issue cites: the user points at it, which ranks it (less when several
            # issues cite that thread) but is a lead, not a diagnosis: a report links a related thread as often as
            # its own cause (on the tune split one text linking a thread of another cause became confident wrong)
            strong = 0.5 + 0.15 / len(ix.cited()[linked[0]])
            evidence.append(f"the text links {linked[0]}, a thread this issue cites")
        if e.id in q.launch and not strong:
            # the server as the text launches it lacks what this issue is about: evidence of the cause, as strong as
            # an artifact of it (a medium match), not a quote of its message
            strong = 0.6
            why = q.launch[e.id]
            evidence.append(why)
        s, cov, shared = lex[i]
        lexical = _lexical_score(cov, s / best_s, s, q)
        found = [f for f in e.findings if f in q.findings]
        # the text shows the kind of fault and none of this entry's own signs: no message, launch command or thread;
        # a pattern that matched only Harmony markup ("commentary to=functions.x", "<|channel|>analysis<|message|>")
        # is the same artifact written as a pattern (on the tuned splits the generic raw-Harmony issue's patterns gave
        # 19 right confident answers and 30 wrong ones, 12 of them on problems no entry describes; with the lead
        # ARTIFACT_MARGIN asks, 4 wrong ones and 1 right one of every entry's markup patterns became leads, once a
        # client the text names counts as evidence of its own, below)
        artifact_only = bool(found) and (not strong or (why.startswith(PATTERN_EVIDENCE) and bool(
            MARKUP_ONLY_RE.fullmatch(why[len(PATTERN_EVIDENCE):].strip('"')))))
        if found:
            # an artifact this entry's findings name: evidence of the kind of fault, not of this entry alone
            evidence.append(q.findings[found[0]])
            # the fewer entries name the finding, the more it says about each of them
            strong = strong + 0.05 if strong else 0.25 + 0.3 / ix.finding_count(found[0]) + 0.6 * lexical
        score = max(strong, lexical) + (0.1 * lexical if strong else 0.0)
        if lexical >= 0.2 and shared and not strong:
            evidence.append("the entry shares these terms with the text: " + ", ".join(shared[:8]))
        shared_tokens = sorted(q.tokens & set(e.token_ids))
        if shared_tokens and score > 0:
            score += (0.06 if strong else 0.1) * min(len(shared_tokens), 2)
            evidence.append("token ID(s) " + ", ".join(map(str, shared_tokens)) + " are signs of this issue")
        agrees = False  # a facet of the text (its engine, its client) that this entry names
        if real_engines and score > 0:
            same = [k for k in real_engines if k in e.engines]
            if same:
                score += 0.06
                # a proxy in the text is a hop: it names no engine the model ran on, so it confirms nothing alone
                agrees = any(k not in HOPS for k in same)
                evidence.append(f'engine {same[0]} (seen as "{real_engines[same[0]][:60]}") is affected')
            elif not GENERIC_ENGINES & set(e.engines):
                score -= 0.12
                evidence.append(f"but the text is from {', '.join(real_engines)}, which this issue does not name")
        named = []
        if clients and score > 0:
            # "hosted" covers many providers: an entry about Groq is not favoured by a text about Bedrock
            named = [k for k in clients if k in e.engines and (k != "hosted" or _names_provider(e, clients[k]))]
            agrees = agrees or bool(named)
            if named:
                score += 0.06
                what = clients[named[0]][:60] if named[0] == "hosted" else f'{named[0]} ("{clients[named[0]][:60]}")'
                evidence.append(f"the text is about {what}, which this issue names")
        if found and not q.gptoss and set(found) <= GENERIC_FINDINGS and not why:
            # a tool call written as JSON text is what any model without a parser produces: without a sign of
            # gpt-oss it is a lead, not a diagnosis
            score = min(score, MEDIUM - 0.03)
        if strong and strong < 0.8 and not q.gptoss and _about_layer(e):
            # a hosted provider's, a proxy's or a client's own error is the same for every model behind it: matched
            # by a pattern or a message's shape (not quoted word for word) in a text that shows no sign of gpt-oss,
            # it is a lead (dev: 1 of 274 right answers becomes low, a Bedrock error that names no model; it made the
            # one confident look-alike of independent-4, a Groq tool error of another model, a lead)
            score = min(score, MEDIUM - 0.03)
        if not strong and not q.gptoss and not q.prose:
            # an error message that resembles a known one but is neither quoted by it nor about gpt-oss: a lead
            score = min(score, MEDIUM - 0.03)
        elif not strong and not q.gptoss:
            # a description that never names gpt-oss, its format or its tokens: the shared words are a lead,
            # scaled (not capped) so the order of the leads is kept
            score *= 0.68
        if q.other_model and not q.gptoss and score > 0.4:
            # the text is about another model: the same words (even the same message) are no diagnosis
            score = 0.4
            evidence.append("but the text names another model, not gpt-oss")
        contra = _contradiction(ix, i, q, real_engines) if score > 0 else None
        lead = bool(linked) and not why  # the score still ranks it, but the evidence is no diagnosis: low confidence
        words_only = not strong and not shared_tokens and not agrees
        if words_only and q.structured and score >= MEDIUM:
            # an error message that no known message, pattern or token confirms: sharing words with an entry is a
            # lead (measured on the dev split: 1 of 167 right confident answers on error messages rests on words)
            lead = True
            evidence.append("only the words resemble this issue: none of its messages, patterns or token IDs is "
                            "in the text")
        other_engine = contra is not None and contra[0] == "engine" and bool(set(real_engines) - HOPS) \
            and not _embeds(e, real_engines)
        if contra and (strong < 0.8 or other_engine):
            # the entry is about other hardware, another engine or a self-hosted engine where the text shows a
            # hosted provider: it drops. A quote of its own message still counts against hardware or a provider (it
            # names them itself), not against an engine the text shows: an old engine's "Unknown quantization
            # method: mxfp4" is printed by vLLM as well as by SGLang (the tenth independent set's vLLM log got the
            # SGLang issue, high)
            score *= DROP
            lead = True
            evidence.append("but " + contra[1])
        if quoted and score >= MEDIUM and not ix.context_seen(i, q.haystack):
            # its message is printed by other causes too (a Harmony parser error follows a tool call, a fine-tuned
            # model's stray token, ignore_eos, speculative decoding, concurrency): without a sign of this issue's own
            # setting the quote is a lead (on the tuned sets, 8 right answers on such quotes all showed it; 6 of 7
            # wrong ones did not)
            score = min(score, CONTEXT_CAP)
            lead = True
            evidence.append(CONTEXT_LEAD)
        out.append((min(max(score, 0.0), 0.99), evidence, lead, words_only, not strong and not shared_tokens,
                    (strong, lexical,
                     # (a client the text names and this entry is about is evidence of its own: Cline's tool calls
                     # written as Harmony text in a Cline report)
                     artifact_only and not shared_tokens and not named)))
    return out




def _embeds(e: kb.Entry, real_engines: dict[str, str]) -> bool:
    """Whether an engine the entry names runs an engine the text shows inside it."""
    return any(set(real_engines) & EMBEDDED.get(k, set()) for k in e.engines)


def _about_layer(e: kb.Entry) -> bool:
    """An entry about a hosted provider, a proxy or a client library (not an engine): its messages are that
    layer's, the same whatever model is behind it."""
    return bool(e.engines) and set(e.engines) <= (CLIENT_HINTS | GENERIC_ENGINES | HOPS)


# a quote without its entry's own setting (signatures.context) is a lead, scored as one: below a medium match (at
# 0.6, above shared words, the tuned sets lost a held-back answer and gained an uncovered confident wrong one)
CONTEXT_CAP = MEDIUM - 0.03
CONTEXT_LEAD = "but other causes print this message too, and the text shows nothing of this issue's own setting"
DROP = 0.6  # the score of an entry that contradicts a facet of the text is scaled by this (and its confidence is low)
RARE_VENDORS = {"amd", "apple", "intel"}


def _contradiction(ix: Index, i: int, q: _Query, real_engines: dict[str, str]) -> tuple[str, str] | None:
    """What an entry contradicts in the text ("hardware", "engine" or "provider") and why, else None."""
    e = ix.entries[i]
    if q.vendor and q.vendor != "cpu":
        ev = ix.vendors(i)
        if (ev & RARE_VENDORS and q.vendor not in ev) or (q.vendor in RARE_VENDORS and ev == {"nvidia"}):
            return "hardware", f"this issue is about {'/'.join(sorted(ev))} hardware and the text shows {q.vendor}"
    specific = set(e.engines) - GENERIC_ENGINES - CLIENT_HINTS
    if real_engines and not q.prose and specific == set(e.engines) and not specific & set(real_engines):
        return "engine", f"this issue is about {', '.join(e.engines)} and the text is from {', '.join(real_engines)}"
    if q.provider and not real_engines and specific and specific == set(e.engines) - CLIENT_HINTS \
            and "hosted" not in e.engines and not _names_provider(e, q.provider):
        return "provider", (f"the text is about the hosted provider {q.provider}, where no "
                            f"{', '.join(sorted(specific))} setting is yours to change")
    return None


def build_query(ix: Index, parsed: Parsed, *, engine: str | None = None, text: str | None = None,
                findings: dict[str, str] | None = None, facets: "Facets | None" = None) -> _Query:
    from gptoss_doctor.explain import rank

    messages = [e.message for e in parsed.errors][:200]
    body = text if text is not None else "\n".join([parsed.sample, *messages])
    body = body[:MAX_SCAN]
    if not messages:
        messages = [parsed.sample]
    engines = dict(parsed.engines)
    if engine:
        engines.setdefault(engine, f"--engine {engine}")
    # the lexical query: the error messages when there are structured ones (a long log's other lines are noise),
    # the whole text when it is a description, a short paste or an artifact
    structured = [e.message for e in parsed.errors if e.kind not in ("log-error", "harmony-leak", "flattened")]
    lex_text = "\n".join(structured[:50]) if structured else body[:8000]
    if structured:
        # ... and the sentences the reporter wrote around them: an app's exception is often a consequence ("No content
        # to map due to end-of-input"), its report's words say what went wrong ("returns an empty string when
        # structured output is requested"); log lines and the messages themselves read as no prose and stay out
        said = [ln for ln in body[:8000].splitlines() if len(ln) >= PROSE_LINE and _is_prose(ln)
                and not any(ln.strip() in m or m in ln for m in structured[:50])]
        lex_text += "\n" + "\n".join(said)[:PROSE_CAP]
    lex_text = PATH_RE.sub(" ", lex_text)
    english = gloss(body)  # the English for its Chinese failure words: words to rank by, never a quote or a pattern
    if english:
        lex_text += "\n" + english
    head = body[:65536]
    other_model = bool(OTHER_MODEL_RE.search(head))
    gptoss = bool(GPTOSS_NAME_RE.search(head)) or (not other_model and (
        bool(GPTOSS_RE.search(head)) or bool(parsed.token_ids) or bool(WEAK_GPTOSS_RE.search(head))))
    haystack = _norm(body)
    return _Query(
        messages=messages, haystack=haystack, squeezed=haystack.replace(" ", ""), shaped=shape(body),
        tokens=set(parsed.token_ids), engines=engines,
        findings=dict(findings or {}), lexical=rank.damp_setting(ix.ranker.query_terms(lex_text)) if ix.entries else {},
        gptoss=gptoss, other_model=other_model, prose=not structured and _is_prose(lex_text), structured=bool(structured),
        vendor=facets.hardware["vendor"] if facets and facets.hardware else None,
        provider=facets.provider["name"] if facets and facets.provider else None,
        folded=literals.fold("\n".join([*messages, haystack])), threads=threads(head), launch=launch_evidence(body))


_PROSE_WORDS = frozenset("""i my we our it is are was the a an and but when with not does doesn't don't can't cannot
after before then this that to of in on for but why how what seems get gets got using use used me you""".split())


def _is_prose(text: str) -> bool:
    words = re.findall(r"[a-z']+", text[:4000].lower())
    return len(words) >= 4 and sum(w in _PROSE_WORDS for w in words) / len(words) >= 0.2


def match_parsed(parsed: Parsed, *, entries: list[kb.Entry] | None = None, engine: str | None = None,
                 limit: int = 5, min_score: float = LOW, text: str | None = None,
                 findings: dict[str, str] | None = None, facets: "Facets | None" = None,
                 classes: dict[str, str] | None = None) -> list[Match]:
    """Entries that explain ``parsed`` (and the raw ``text`` when there is one), best first. ``classes``: the
    triage classes the text shows by an HTTP status, an error kind or an artifact (id -> title)."""
    ix = index(entries)
    q = build_query(ix, parsed, engine=engine, text=text, findings=findings, facets=facets)
    scored = [(Match(ix.entries[i], s, "low" if lead else confidence_of(s), ev), words, lexical, raw)
              for i, (s, ev, lead, words, lexical, raw) in enumerate(_score_all(ix, q)) if s >= min_score]
    scored.sort(key=lambda mw: (-mw[0].score, -mw[3][0], -mw[3][1], mw[0].entry.id))
    found = [m for m, _, _, _ in scored]
    if len(found) > 1 and found[0].confidence == "medium" and found[0].score - found[1].score < TIE_MARGIN:
        # two entries fit about equally well: neither is a diagnosis, both are leads (measured on the dev split:
        # this removes 5 of 13 confident wrong answers for 8 of 166 confident right ones)
        for m in found:
            if m.confidence == "medium":
                m.confidence = "low"
                m.evidence.append("another known issue fits about as well: compare them")
    if scored and scored[0][3][2] and found[0].confidence != "low" and \
            found[0].score - (found[1].score if len(found) > 1 else 0.0) < ARTIFACT_MARGIN:
        # an artifact (raw Harmony in the answer, a tool call written as text) shows the kind of fault, which several
        # issues share: resting on it alone, an answer is a diagnosis only with a clear lead (measured on the tuned
        # splits: of the answers resting on an artifact alone, 9 were right and confident, 4 confident and wrong on
        # problems no entry describes and 14 on covered problems matched without their own entry; with this lead 7, 0
        # and 2)
        for m, _, _, raw in scored:
            if m.confidence != "low" and raw[2]:  # every answer resting on that artifact alone: it says no more
                m.confidence = "low"
                m.evidence.append("the text shows this kind of fault, and another known issue explains it about as "
                                  "well: compare them")
    if scored and scored[0][1] and found[0].confidence != "low" and \
            found[0].score - (found[1].score if len(found) > 1 else 0.0) < WORDS_MARGIN:
        # resemblance of words alone (no message, pattern, token, artifact or facet of the text confirms it) is a
        # diagnosis only with a clear lead; a close call is a lead (measured on the dev split: this keeps 52 of 54
        # right answers confident and makes 4 of 5 wrong ones low)
        for m in found:
            if m.confidence != "low" and found[0].score - m.score < WORDS_MARGIN:
                m.confidence = "low"
                m.evidence.append("only the words resemble this issue, and another one resembles it about as much")
    if scored and scored[0][2] and found[0].confidence != "low":
        # shared words (even with the engine or client the text names) are no diagnosis of an error text, and of a
        # description only with a clear lead: measured on the dev split by leave-one-out (bench/bench_calibration.py:
        # each case matched without its own entries, so every confident answer is wrong), words-based answers were
        # 83 of its 105 confident wrong ones; on error texts they were 32 wrong to 9 right, on descriptions the lead
        # below keeps 61 of 84 right answers confident and 12 of 51 wrong ones
        gap = found[0].score - (found[1].score if len(found) > 1 else 0.0)
        if q.structured or gap < WORDS_LEAD:
            for m, _, lexical, _ in scored:
                if m.confidence != "low" and lexical:
                    m.confidence = "low"
                    m.evidence.append("only shared words point here (no message, pattern, token or artifact of this "
                                      "issue is in the text): a lead to compare, not a diagnosis")
    if found and any("a thread this issue cites" in ev for ev in found[0].evidence):
        # the user points at a known issue's thread: other issues that only share words with the text are leads
        # beside it, not a diagnosis
        for m, _, lexical, _ in scored[1:]:
            if m.confidence != "low" and lexical:
                m.confidence = "low"
                m.evidence.append("only shared words point here, and the text links another issue's thread")
    if classes:
        from gptoss_doctor.explain.triage import entry_classes

        for m in found[:limit]:
            if m.confidence != "low" and not any("quotes the known message" in ev for ev in m.evidence) \
                    and not set(classes) & entry_classes(m.entry):
                # the text shows a kind of problem (a 401, a HarmonyError, garbage) this issue is not about
                m.confidence = "low"
                m.evidence.append("but the text shows " + "; ".join(classes.values()).lower()
                                  + ", which this issue does not describe")
    _quote_over_words(scored)  # last: the confidence rules above read the order the scores give
    return [m for m, _, _, _ in scored][:limit]


def _quote_over_words(scored: list) -> None:
    """A known message quoted word for word outranks entries that only share words with the text.

    The quote stays a lead when its entry's own setting is not in the text (the context cap): other causes print the
    message too. But the entries the cap let past it match nothing of the text but words (the eighteenth independent
    set's eval note quoted "HarmonyError: unexpected tokens remaining in message header" and got two entries that merely
    mention a HarmonyError ranked above the one about that message)."""
    for j, (m, _, lexical, raw) in enumerate(scored):
        if raw[0] >= 0.8 and CONTEXT_LEAD in m.evidence:
            if all(above.confidence == "low" for above, _, _, _ in scored[:j]):
                scored.insert(0, scored.pop(j))
            return
        if not lexical:
            return  # an entry above the quote has evidence of its own


def match_text(text: str, *, engine: str | None = None, limit: int = 5,
               entries: list[kb.Entry] | None = None, min_score: float = LOW) -> list[Match]:
    """Parse ``text`` and rank entries (used by ``check`` for server error bodies and by ``kb search``)."""
    from gptoss_doctor.explain.artifacts import recognise

    from gptoss_doctor.explain.facets import extract

    parsed = parse_text(text)
    arts, _ = recognise(text, proxy_seen="litellm" in parsed.engines)
    from gptoss_doctor.explain.triage import select

    kinds = {a.kind for a in arts}
    facets = extract(parsed, text, garbage="garbage-output" in kinds, artifact_kinds=kinds)
    strong = {h.cls.id: h.cls.title for h in select(facets, text, kinds={e.kind for e in parsed.errors},
                                                    errors=[e.message for e in parsed.errors][:50],
                                                    artifacts=kinds) if h.strong}
    return match_parsed(parsed, entries=entries, engine=engine, limit=limit, min_score=min_score, text=text,
                        findings={a.finding: "the text shows " + a.evidence for a in arts if a.finding},
                        facets=facets, classes=strong)

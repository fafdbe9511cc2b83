"""``explain``: parse an error text, decode its token IDs, tell where it was raised, rank known issues."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import BinaryIO

from gptoss_doctor import rx as _rx
from gptoss_doctor import engines
from gptoss_doctor.explain import artifacts as artifacts_mod
from gptoss_doctor.explain import facets as facets_mod
from gptoss_doctor.explain import match as matching
from gptoss_doctor.explain import parse as parsing
from gptoss_doctor.explain.parse import Parsed, _Lazy, gloss, space_cjk
from gptoss_doctor.harmony.tokens import TokenInfo, decode_ids
from gptoss_doctor.redact import redact
from gptoss_doctor.results import CommandResult

ORIGINS = ("server", "client", "proxy", "provider", "model-files", "hardware", "unknown")
SERVER_PATH_RE = _Lazy(r"vllm/|sglang/|lmdeploy/|tensorrt_llm/|text_generation_server/|transformers/commands/|mlx_lm/")
HARDWARE_RE = _Lazy(
    r"CUDA error|CUDA out of memory|no kernel image is available|compute capability|Minimum capability|"
    r"Sinks are only supported|FlashInfer requires sm|FlashAttention|not supported for the current GPU|"
    r"sink setting not supported|out of memory|NCCL error|cudaErrorNoKernelImageForDevice", re.I)
# LiteLLM's wrapping of what its backend said: "OpenAIException - …", "Hosted_vllmException - …"
BACKEND_WRAPPED_RE = _Lazy(r"\b[A-Z]\w*Exception - ")
UNREACHABLE_RE = _Lazy(r"APIConnectionError|APITimeoutError|Connection refused|ConnectError|Connection error\.")
MODEL_FILES_RE = _Lazy(r"generation_config\.json|chat_template|tokenizer_config\.json|\.gguf\b|template: :\d+:\d+", re.I)


@dataclass
class Explanation:
    origin: str
    origin_detail: str
    parsed: Parsed
    tokens: list[TokenInfo] = field(default_factory=list)
    token_notes: list[str] = field(default_factory=list)
    matches: list[matching.Match] = field(default_factory=list)
    artifacts: list[artifacts_mod.Artifact] = field(default_factory=list)
    harmony_messages: list[artifacts_mod.HarmonyMessage] = field(default_factory=list)
    facets: facets_mod.Facets = field(default_factory=facets_mod.Facets)
    triage: list = field(default_factory=list)  # triage.TriageHit, best first
    words: str | None = None  # a description's most telling words, to search for when it quotes no message

    @property
    def confident(self) -> bool:
        return bool(self.matches) and self.matches[0].confidence in ("high", "medium")

    @property
    def hosted_provider(self) -> str | None:
        """The hosted provider serving the model, when the text shows one and no engine log of the user's own."""
        f = self.facets
        return f.provider["name"] if f.provider and not f.engine else None

    def fix_items(self, m: matching.Match) -> list[tuple[str | None, str]]:
        """A match's fixes for this text: at a hosted provider, no engine flag or upgrade is the user's to apply,
        so those give way to the proxy's route, the client's recovery and a report to the provider."""
        items = m.entry.fix_items()
        prov = self.hosted_provider
        if not prov:
            return items
        kept = [(lay, ln) for lay, ln in items
                if lay not in ("server", "hardware") and not (lay is None and ENGINE_FIX_RE.search(ln))]
        return kept + [("provider", f"report it to {prov} with the request and the raw reply: the model runs on "
                                    "their servers, so no engine flag or upgrade of yours applies there")]

    def ask(self) -> list[str]:
        """What to add to the text to tell its causes apart (triage.ask); nothing when a known issue is confident."""
        from gptoss_doctor.explain import triage

        return [] if self.confident else triage.ask(self.facets, len(self.parsed.errors), self.triage)

    def search_hint(self) -> dict | None:
        """When nothing matches confidently: the normalised message and where to search for it."""
        if self.confident:
            return None
        phase = self.facets.phase
        return search_hint(self.parsed, phase) or words_hint(self.words, self.parsed, phase)

    def to_json(self) -> dict:
        p = self.parsed
        return {
            "origin": self.origin,
            "origin_detail": self.origin_detail,
            "cause_origin": self.matches[0].entry.origin if self.matches and self.matches[0].confidence != "low" else "unknown",
            "tokens": [t.to_json() for t in self.tokens],
            "token_notes": self.token_notes,
            "errors": [e.to_json() for e in p.errors],
            "errors_dropped": p.dropped_errors,
            "engines": p.engines,
            "tool_names": p.tool_names,
            "artifacts": [a.to_json() for a in self.artifacts],
            "harmony_messages": [m.to_json() for m in self.harmony_messages],
            "input": {"lines": p.lines, "bytes": p.bytes},
            "matches": [self._match_json(m) for m in self.matches],
            "search": self.search_hint(),
            "facets": self.facets.to_json(),
            "triage": {"known": self.confident, "classes": [h.to_json() for h in self.triage],
                       "ask": self.ask()},
        }

    def _match_json(self, m: matching.Match) -> dict:
        doc = _match_json(m)
        if self.hosted_provider:
            items = self.fix_items(m)
            doc["fixes"] = [ln for _, ln in items]
            doc["fixes_by_layer"] = {lay: [ln for la, ln in items if la == lay]
                                     for lay in dict.fromkeys(la for la, _ in items if la)}
        return doc


# an engine-side fix: a start-up flag, an engine upgrade or install (no use at a hosted provider)
ENGINE_FIX_RE = _Lazy(r"(?:^|\s)--[a-z]|\b(?:pip install|upgrade|launch|start (?:it|the server|vllm|sglang))\b|"
                      r"\b(?:vLLM|SGLang|lmdeploy|llama\.cpp|llama-server|Ollama|TensorRT-LLM)\b", re.I)

def _match_json(m: matching.Match) -> dict:
    """A match as JSON; an entry that merged several causes' forms also says how to tell which one the text shows."""
    doc = m.to_json()
    if m.entry.distinguish:
        doc["distinguish"] = list(m.entry.distinguish)
    return doc


# where each engine's (and the format's) problems are reported; searched first when nothing matches
TRACKERS = {
    **{p.name: p.tracker for p in engines.PROFILES if p.tracker},
    "codex": "openai/codex", "openai-agents": "openai/openai-agents-python", "langchain": "langchain-ai/langchain",
    "llamaindex": "run-llama/llama_index", "open-webui": "open-webui/open-webui", "continue": "continuedev/continue",
    "cline": "cline/cline", "roo-code": "RooCodeInc/Roo-Code", "anythingllm": "Mintplex-Labs/anything-llm",
    "aider": "Aider-AI/aider", "pydantic-ai": "pydantic/pydantic-ai", "vercel-ai": "vercel/ai",
}
DEFAULT_TRACKERS = ("openai/harmony", "vllm-project/vllm", "ollama/ollama", "ggml-org/llama.cpp")
# where a fine-tuning run's problems are reported, when the text names no engine (the facets' "training" phase)
TRAINING_TRACKERS = ("huggingface/transformers", "unslothai/unsloth", "huggingface/trl")


def default_trackers(phase: str | None) -> list[str]:
    """The trackers to search when the text names no engine or client whose tracker is known."""
    return list(TRAINING_TRACKERS if phase == "training" else DEFAULT_TRACKERS)


_VARIABLE = [
    (_rx.compile(r"^.*?\b(?=[A-Za-z_][\w.]*(?:Error|Exception)\b)"), ""),  # log prefixes before the exception name
    (_rx.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.\-@]+){2,}"), " "),            # paths
    (_rx.compile(r"\b(?:chatcmpl|resp|req|cmpl|call)[-_][\w-]+|\b[0-9a-f]{12,}\b"), " "),  # request ids, hashes
    (_rx.compile(r"\b\d{4}-\d\d-\d\d[T ][\d:.,]+Z?|\b\d\d:\d\d:\d\d(?:[.,]\d+)?"), " "),  # timestamps
    (_rx.compile(r"\s+"), " "),
]


def normalised_message(message: str) -> str:
    """The message without what differs between users (paths, ids, timestamps), for an issue search."""
    msg = message
    for rx, rep in _VARIABLE:
        msg = rx.sub(rep, msg)
    return msg.strip()[:200]


def search_hint(parsed: Parsed, phase: str | None = None) -> dict | None:
    from urllib.parse import quote_plus

    err = next((e for e in parsed.errors if e.kind not in ("log-error",)), None) or (parsed.errors[0] if parsed.errors else None)
    if err is None:
        return None
    from gptoss_doctor.redact import redact

    query = redact(normalised_message(err.message))  # it leaves as links and, with --online, as a request
    query = query.replace('"', "'")  # it is searched as one quoted phrase: a quote inside would end it early
    if len(query) < 8:
        return None
    repos = [TRACKERS[e] for e in parsed.engines if e in TRACKERS] or default_trackers(phase)
    if "openai/harmony" not in repos and err.kind == "harmony":
        repos.append("openai/harmony")
    q = f'"{query[:120]}"'
    return {"query": query, "phrase": True, "trackers": [
        {"repo": r, "url": f"https://github.com/{r}/issues?q={quote_plus(q)}"} for r in dict.fromkeys(repos)]}


def words_hint(words: str | None, parsed: Parsed, phase: str | None = None) -> dict | None:
    """For a description that quotes no message: its most telling words (``telling_words``), searched as words."""
    from urllib.parse import quote_plus

    if not words:
        return None
    repos = [TRACKERS[e] for e in parsed.engines if e in TRACKERS] or default_trackers(phase)
    return {"query": words, "phrase": False, "trackers": [
        {"repo": r, "url": f"https://github.com/{r}/issues?q={quote_plus(words)}"} for r in dict.fromkeys(repos)]}


WORD_RE = _rx.compile(r"(?<![A-Za-z0-9_])[A-Za-z][A-Za-z0-9_.+-]*[A-Za-z0-9]")
MAX_WORDS = 5


URL_RE = _rx.compile(r"\b(?:https?://|www\.)\S+|(?<![\w.-])[\w-]+(?:\.[\w-]+)*\.(?:com|org|io|ai|dev|net)/\S*", re.I)


def telling_words(text: str, ranker) -> str | None:
    """The words of a description an issue search would find its thread by: its rarest words (by their IDF over
    the knowledge base; a word no entry uses — a product, a model, a library — counts as rarest), at most
    ``MAX_WORDS``, in the order the text says them, after "gpt-oss". None when fewer than two are telling."""
    from gptoss_doctor.explain import rank

    seen: dict[str, float] = {}
    order: list[str] = []
    # a link is an address, not words of the problem ("github.com vllm-project issues" finds nothing)
    text = URL_RE.sub(" ", text[:4000])
    for m in WORD_RE.finditer(text):
        w = m.group(0).lower()
        if len(w) < 4 or w in seen or w in rank.STOPWORDS or w in rank.COMMON or "gpt" in w or "oss" in w:
            continue
        stem = rank._stem(w) if w.isalpha() else w
        if stem in rank.STOPWORDS or stem in rank.COMMON:
            continue
        seen[w] = ranker.idf.get(stem, ranker.unknown_idf)
        order.append(w)
    if len(order) < 2:
        return None
    keep = set(sorted(order, key=lambda w: -seen[w])[:MAX_WORDS])
    from gptoss_doctor.redact import redact

    return redact("gpt-oss " + " ".join(w for w in order if w in keep))


def _engine_label(parsed: Parsed) -> str | None:
    for key in parsed.engines:
        if engines.known(key) and key != "litellm":  # the proxy is a hop, not the engine that ran the model
            return engines.label(key)
    return None


def where_raised(parsed: Parsed, matches: list[matching.Match],
                 arts: list[artifacts_mod.Artifact] | None = None,
                 facets: facets_mod.Facets | None = None) -> tuple[str, str]:
    """(origin, one sentence) for where the error was raised."""
    kinds = {e.kind for e in parsed.errors}
    art_kinds = {a.kind for a in arts or []}
    engine = _engine_label(parsed)
    via_proxy = any(e.via == "litellm" or e.kind == "proxy" for e in parsed.errors) or "litellm" in parsed.engines
    provider = facets.provider["name"] if facets and facets.provider and not engine else None
    in_engine = (f" inside {engine}" if engine else f" at the hosted provider {provider}" if provider
                 else " inside the backend engine behind the proxy" if via_proxy else " inside the serving engine")
    text = "\n".join(e.message for e in parsed.errors)
    frames = parsed.frames
    if "garbage-output" in art_kinds:
        return "model-files", ("the model's output is not language: its weights, their conversion or quantisation, "
                               f"or the GPU kernels{in_engine} computing it are broken (no parser writes this)")
    if HARDWARE_RE.search(text):
        return "hardware", f"the GPU / driver{in_engine} rejected the model at start-up or while running it"
    if "harmony" in kinds:
        # a client library (openai, litellm, langchain …) or an HTTP status in the text: the error came back over
        # HTTP from the server, it was not raised by the user's own call into openai-harmony
        over_http = bool(facets and (facets.client or facets.http_status)) or any(
            e.via or e.status for e in parsed.errors)
        client_side = frames and not any(SERVER_PATH_RE.search(f) for f in frames) and not engine and not over_http
        if client_side:
            return "client", "your own code's call into openai-harmony raised it (no serving-engine frames in the traceback)"
        hop = "; the litellm proxy passed it on (re-wrapped in its own exception, and may have retried it)" if via_proxy else ""
        sdk = any(e.via == "openai-sdk" for e in parsed.errors)
        seen = "; your OpenAI client only received it as an HTTP error" if sdk else ""
        origin = "provider" if provider else "server"
        who = "the backend server's" if via_proxy or provider else "the server's"
        return origin, f"{who} Harmony parser (openai-harmony{in_engine}) raised it while reading the model's output{hop}{seen}"
    if "vocab" in kinds:
        return "server", f"openai-harmony{in_engine} could not load the o200k vocabulary at start-up (no network or a blocked download)"
    if via_proxy and (kinds & {"harmony-leak", "flattened"} or art_kinds):
        return "server", ("the model's raw output was not parsed by the server behind the litellm proxy, and the "
                          "proxy passed it on (see the fixes for each layer)")
    if provider and (kinds & {"harmony-leak", "flattened"} or art_kinds):
        return "provider", (f"the hosted provider {provider} returned the model's raw output unparsed: no engine flag "
                            "of yours changes that (fix the proxy's route, recover in the client, or report it to "
                            "the provider)")
    if via_proxy and BACKEND_WRAPPED_RE.search(text):
        return "proxy", ("the backend behind the litellm proxy answered with it and the proxy re-wrapped it: the "
                         "message after '…Exception -' is the backend's own")
    if via_proxy:
        return "proxy", "the litellm proxy raised or relayed it"
    if provider:
        return "provider", f"the hosted provider {provider} (or the route to it) answered with it"
    if kinds & {"harmony-leak", "flattened"} or art_kinds & {"harmony-leak", "flattened-channels"}:
        return "server", f"the server{(' (' + engine + ')') if engine else ''} returned the model's raw Harmony output instead of parsing it into content / reasoning / tool calls"
    if "duplicated-fragments" in art_kinds:
        return "server", f"the server's streaming tool-call parser{in_engine} sent each fragment more than once"
    if "tool-call-as-text" in art_kinds:
        return "server", f"the server{in_engine} returned the tool call as text: no tool-call parser turned it into tool_calls"
    if MODEL_FILES_RE.search(text):
        return "model-files", "the model's files (template or configuration) are involved"
    client = facets.client["name"] if facets and facets.client else None
    if client and facets.http_status and not engine:
        return "server", (f"the server (or a proxy in front of it) answered HTTP {facets.http_status}; {client} "
                          "raised it as an exception")
    if client and not engine and UNREACHABLE_RE.search(text):
        return "client", f"{client} got no HTTP answer at all (no server listening, a wrong URL, or the network)"
    if matches and matches[0].confidence in ("high", "medium"):
        origin = matches[0].entry.origin
        return origin, f"the best-matching known issue lies in the {origin.replace('-', ' ')}"
    if engine and parsed.errors and all(e.via == "http-body" for e in parsed.errors):
        status = next((e.status for e in parsed.errors if e.status), None)
        return "server", f"{engine} answered the request with this error" + (f" (HTTP {status})" if status else "")
    if engine and parsed.errors:
        return "server", f"{engine} logged it"
    if engine:  # a description that names the engine: no line of the text was logged or raised by anything
        return "unknown", (f"the text names {engine} but shows no error line or exception, so nothing says which "
                           "component failed")
    if "openai-sdk" in kinds:
        return "client", "your OpenAI client raised it"
    return "unknown", "nothing in the text says which component raised it"


def explain_parsed(parsed: Parsed, *, vocab: str | None = None, url: str | None = None, model: str | None = None,
                   allow_download: bool = True, engine: str | None = None, limit: int = 5,
                   api_key: str | None = None, text: str | None = None,
                   entries: list | None = None) -> Explanation:
    """The whole pipeline after parsing: recognise artifacts, match, decode token IDs, say where it was raised.
    ``entries`` replaces the loaded knowledge base (the benchmark's leave-one-out runs)."""
    parsed, text = without_secrets(parsed), None if text is None else redact(text)
    from gptoss_doctor.explain import triage

    source = text if text is not None else parsed.sample
    arts, messages = artifacts_mod.recognise(source, proxy_seen="litellm" in parsed.engines)
    raw_generation = artifacts_mod.raw_generation(source)
    if raw_generation:  # the transcript a local generate() prints is no leak (artifacts.raw_generation)
        parsed.errors = [e for e in parsed.errors if e.kind != "harmony-leak"]
    art_kinds = {a.kind for a in arts}
    # what the facets and the triage read (its start: none of them reads further): the text with its Latin words
    # set apart from Chinese characters (parse.space_cjk), and the English of its Chinese failure words (parse.gloss)
    head = source[:facets_mod.MAX_READ]
    english, spaced = gloss(head), space_cjk(head)
    read = f"{spaced}\n({english})" if english else spaced
    facets = facets_mod.extract(parsed, read if english or spaced != head or text is not None else None,
                                garbage="garbage-output" in art_kinds, artifact_kinds=art_kinds)
    findings = {a.finding: "the text shows " + a.evidence for a in arts if a.finding}
    hint = search_hint(parsed)
    if raw_generation:  # ... so its special tokens say nothing of the problem either
        read = parsing.HARMONY_TOKENS_RE.sub(" ", read)
    votes = triage.neighbour_votes(read, entries)
    hits = triage.select(facets, read, kinds={e.kind for e in parsed.errors}, artifacts=art_kinds,
                         # the glossary's English names failures: it states the failure like an error message
                         errors=[e.message for e in parsed.errors][:50] + ([english] if english else []), votes=votes,
                         message=hint["query"] if hint else None)
    matches = matching.match_parsed(parsed, entries=entries, engine=engine, limit=limit, text=text, findings=findings,
                                    facets=facets,
                                    classes={h.cls.id: h.cls.title for h in hits if h.strong})
    tokens, notes = decode_ids(parsed.token_ids, vocab_path=vocab, url=url, model=model,
                               allow_download=allow_download, api_key=api_key) if parsed.token_ids else ([], [])
    if not hits:
        hits = triage.from_neighbours(votes, facets, hint["query"] if hint else None)
    origin, detail = where_raised(parsed, matches, arts, facets)
    # a description that quotes no message: its own telling words are the search (words, not a phrase)
    # (only for a text about gpt-oss or its stack, or one that says something went wrong: a sentence about the
    # weather is nothing to search for)
    ex = Explanation(origin, detail, parsed, tokens, notes, matches, arts, messages, facets, hits)
    about = (facets.engine or facets.client or facets.proxy or facets.provider or facets.model or facets.failure
             or triage.FAILURE_LINE.search(read) or matching.GPTOSS_RE.search(read))
    if hint is None and about and not ex.confident:  # (a confident answer shows no search at all)
        ex.words = telling_words(read, matching.index(entries).ranker)
    return ex


def without_secrets(parsed: Parsed) -> Parsed:
    """What explain read, through the one redactor (keys, tokens, Bearer values, URL credentials), before anything
    matches, prints or sends it: a pasted log often carries the key it was run with."""
    parsed.sample = redact(parsed.sample)
    parsed.frames = redact(parsed.frames)
    parsed.engines = redact(parsed.engines)
    parsed.tool_names = redact(parsed.tool_names)
    for err in parsed.errors:
        err.message, err.frames = redact(err.message), redact(err.frames)
    return parsed


def well_formed(text: str) -> str:
    """``text`` without lone surrogates: the bytes of a non-UTF-8 argument (``\\udce9``) are decoded with U+FFFD,
    and any other lone surrogate (``\\ud800``, from a library caller) becomes U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:
            text = re.sub("[\ud800-\udfff]", "\ufffd", text)
    return text


def explain_text(text: str, **kw) -> Explanation:
    text = redact(parsing.unescape_markdown(well_formed(text)))
    return explain_parsed(parsing.parse_text(text), text=text, **kw)


def explain_stream(fh: BinaryIO, **kw) -> Explanation:
    # a file or a pipe is scanned as bytes, line by line: what it read is unescaped like a text argument
    parsed = parsing.parse_stream(fh)
    parsed.sample = parsing.unescape_markdown(parsed.sample)
    for err in parsed.errors:
        err.message = parsing.unescape_markdown(err.message)
    return explain_parsed(parsed, **kw)


@dataclass
class ExplainResult(CommandResult):
    """``explain``'s outcome: the explanation, GitHub leads when --online asked for them, and how much to show."""

    command = "explain"
    explanation: Explanation
    leads: dict | None = None
    verbose: bool = False

    @property
    def exit_code(self) -> int:
        return 0  # an explanation, confident or not, is a successful run (documented)

    def to_json(self) -> dict:
        doc = {"ok": True, **self.explanation.to_json()}
        if self.leads is not None:
            doc["online"] = self.leads
        return doc

"""Structure from real-world error text: HarmonyError messages (every wording), token IDs,
tool names, engine hints from log prefixes, Python tracebacks, JSON error bodies, openai-SDK
exceptions, and raw or flattened Harmony inside answers.

Long logs are scanned in binary chunks: a C-speed regex finds candidate lines, and only those
lines (plus traceback bodies) are decoded and parsed, so memory stays flat and throughput high.
"""

from __future__ import annotations

import ast
import functools
import heapq
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any, BinaryIO

from gptoss_doctor import engines
from gptoss_doctor import rx as _rx
from gptoss_doctor.explain import literals


class _Lazy:
    """A regex compiled on first use: start-up only pays for the patterns a given input needs. Until then,
    ``search`` first runs the pattern's literal pre-test (``literals.cannot_match``): most of the ~140 facet and
    parser regexes never meet a text that could match them, and are never compiled."""

    def __init__(self, pattern: Any, flags: int = 0):
        self._args = (pattern, flags)

    def search(self, string: Any, *args: Any) -> Any:
        if not args and literals.cannot_match(self._args[0], self._args[1], string):
            return None
        return self.__getattr__("search")(string, *args)

    def __getattr__(self, name: str) -> Any:  # only called until the method is cached on the instance
        attr = getattr(_rx.compile(*self._args), name)
        setattr(self, name, attr)
        return attr

# --- HarmonyError wordings (openai/harmony src/encoding.rs, v0.0.1 .. v0.0.8) -------------------
HARMONY_PATTERNS: list[tuple[str, re.Pattern]] = [(name, _Lazy(p, re.I)) for name, p in [
    ("unexpected-token", r"Unexpected token (-?\d+) while expecting start token (-?\d+)"),
    ("eos-in-header", r"Unexpected EOS while waiting for message header to complete"),
    ("header-remaining", r"unexpected tokens remaining in message header:\s*(Some\(.*\)|\[.*\]|None)?"),
    ("header-too-many", r"Could not parse header: too many tokens remaining after extracting content-type and recipient"),
    ("channel-no-value", r"channel marker present but no channel value found in header"),
    ("unknown-role", r"Unknown role: ?(.*)"),
    ("no-role", r"message header did not contain a role"),
    ("decode-header", r"could not decode header"),
    ("decode-content", r"could not decode message content"),
    ("stop-not-mapped", r"token (-?\d+) was specified as a stop token, but is not mapped"),
    ("render-stop", r"could not render stop token"),
    ("encoding-name", r"Invalid HarmonyEncodingName: ?(\S*)"),
    ("disallowed-special", r"Encountered text corresponding to disallowed special token (.*)"),
]]
VOCAB_PATTERNS: list[tuple[str, re.Pattern]] = [(name, _Lazy(p, re.I)) for name, p in [
    ("vocab-download", r"error downloading or loading vocab file"),
    ("vocab-download", r"failed to download or load vocab file"),
    ("vocab-hash", r"hash mismatch for remote file"),
    ("vocab-env", r"the env var TIKTOKEN_ENCODINGS_BASE is not set, or invalid"),
    ("vocab-invalid", r"invalid tiktoken vocab file"),
    ("vocab-encoding", r"unknown encoding name"),
]]

HARMONY_TOKENS_RE = _Lazy(r"<\|(?:start|end|message|channel|call|return|constrain|startoftext|endoftext)\|>")
FLATTENED_RE = _Lazy(r"assistant(?:final|commentary)\b|^\s*analysis[A-Z]", re.M)

# --- engine hints from log prefixes and paths ---------------------------------------------------
# engines first (their profiles hold the patterns), then clients and hosted services: a client hint favours the
# entries naming it, never one that rules others out
ENGINE_HINTS: list[tuple[str, re.Pattern]] = [(e, _Lazy(p)) for e, p in engines.log_hints()] + [
    # clients and hosted services are named in any case by the people who paste ("LangChain", "Open WebUI", "Bedrock")
    (e, _Lazy(p, re.I)) for e, p in [
    ("codex", r"\bcodex\b|\bCodex CLI\b"),
    ("openai-agents", r"\bopenai[-_]agents\b|\bAgents SDK\b|\bRunner\.run\b"),
    ("langchain", r"\blang(?:chain|graph)\b|\bChatOpenAI\b|\bAIMessage\b|\bChatOllama\b"),
    ("llamaindex", r"\bllama[-_ ]?index\b|\bFunctionAgent\b"),
    ("open-webui", r"\bopen[- ]?webui\b"),
    ("continue", r"\bcontinue\.dev\b|\bContinue (?:extension|config)\b|\bcontinuedev\b"),
    ("cline", r"\bcline\b"),
    ("roo-code", r"\broo[- ]?code\b|\bkilo ?code\b"),
    ("anythingllm", r"\banything ?llm\b"),
    ("aider", r"\baider\b"),
    ("pydantic-ai", r"\bpydantic[-_ ]ai\b"),
    ("vercel-ai", r"\bvercel/ai\b|\bai-sdk\b|\bAI SDK\b"),
    ("hosted", r"\b(?:bedrock|groq|cerebras|openrouter|vertex ?ai|databricks|azure ai foundry|fireworks)\b"),
    ("openai-sdk", r"\bopenai\.(?:APIError|APIStatusError|InternalServerError|BadRequestError|APIConnectionError|"
                   r"AuthenticationError|NotFoundError|RateLimitError|UnprocessableEntityError|APITimeoutError)|openai/_base_client\.py"),
]]

# --- line prefixes stripped before reading a message --------------------------------------------
PREFIX_RES = [_Lazy(p) for p in [
    r"^\s*\((?:APIServer|EngineCore(?:_\d+)?|VllmWorker[^ )]*) pid=\d+\)\s*",             # vLLM process tag
    r"^\s*(?:INFO|WARNING|ERROR|DEBUG|CRITICAL)\s+\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+\[[\w./-]+:\d+\]\s?",  # vLLM level
    r"^\s*\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[,.]\d+ - [\w.]+ - [A-Z]+ - [\w./-]+:\d+ - ",  # lmdeploy
    r"^\s*\[\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d\] \[TRT-LLM\] \[[A-Z]\] ",                     # TensorRT-LLM
    r"^\s*\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?: [A-Z]+\d*)*\] ",                            # SGLang
    r"^\s*\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?Z?\s+(?:\[?(?:INFO|WARN|WARNING|ERROR|DEBUG)\]?)\s*(?:[:|-]\s*)?",
    r"^\s*(?:INFO|ERROR|WARNING|DEBUG):\s+",
    r"^\s*data:\s*",                                                                       # an SSE frame
]]
OLLAMA_RE = _Lazy(r'level=(\w+) source=([\w./-]+:\d+) msg="((?:[^"\\]|\\.)*)"(?: .*?error="((?:[^"\\]|\\.)*)")?')

# a WARNING/INFO line that only mentions errors as something that could happen ("This can cause fd limit errors
# like …", "failed to automatically increase …") is start-up advice, not an error report
ADVICE_RE = _Lazy(r"\bcan cause\b|\bmay cause\b|\bConsider (?:increasing|setting|using)\b", re.I)
# lines that name Harmony tokens without carrying model output: llama.cpp's vocabulary set-up at load ("setting
# token '<|channel|>' (200005) attribute to USER_DEFINED", "special_eog_ids contains both '<|return|>' and
# '<|call|>'") and chat-template source printed at start-up ({{- "<|start|>…" }}, {% … %})
TOKEN_SETUP_RE = _Lazy(r"\bsetting token '<\|[^']*\|>' \(\d+\) attribute\b|\bspecial_eog_ids\b|\bcontrol token:|\{\{-?|\{%-?")
# a parser's own error that quotes the Harmony text it could not read ("Failed to parse tool call: Expected
# "<|message|>", but got "to=function"", "Failed to parse input at pos 0: <|channel|>"): a failure to parse, not
# markup leaked into an answer
HARMONY_PARSE_FAILURE_RE = _Lazy(r"(?:\bfail\w*|\berror\b|\bunable\b|\bcould ?n[o']t\b)[^\n]{0,40}\bpars(?:e|ing)\b|"
                                 r"\bexpect(?:ed|ing)\b[^\n]{0,80}\bbut (?:got|found|received|saw)\b|"
                                 r"\bexpect(?:ed|ing) (?:special |start )?token\b", re.I)
# what leaked Harmony looks like on a line: two special tokens close together, or one followed by what the format
# writes after it (a channel name, a role, a recipient, a constraint, a message body); a token named once in a
# sentence ("the text after <|end|> is not shown") is a user writing about the format
HARMONY_LEAK_SHAPE_RE = _Lazy(r"<\|\w+\|>\S{0,40}<\|\w+\|>|<\|(?:channel|start)\|>\s*(?:analysis|commentary|final|"
                              r"assistant|user|system|developer|functions\.)|<\|constrain\|>\s*json|<\|message\|>\s*[{\w]")
# a local generate() call (transformers, mlx-lm) in a text: see artifacts.raw_generation
RAW_GENERATION_RE = _Lazy(r"\bmodel\.generate\(|\bTextStreamer\b|\bmlx_lm(?:\.| )generate\b|\btokenizer\.decode\(|"
                          r"\bbatch_decode\(")
QUIET_LEVEL_RE = _Lazy(r"^\s*(?:\((?:APIServer|EngineCore(?:_\d+)?|VllmWorker[^ )]*) pid=\d+\)\s*)?(?:WARNING|WARN|INFO|DEBUG)\b"
                       r"|^\s*\d{4}-\d\d-\d\d[ T][\d:.,]+\s*(?:-\s*[\w.]+\s*-\s*)?(?:WARNING|WARN|INFO|DEBUG)\b|.*\blevel=(?:WARN|INFO|DEBUG)\b")
# the line that ends a traceback may name an exception whose class does not end in Error/Exception
# (huggingface_hub.errors.CacheNotFound, StopIteration): a dotted or CamelCase name, a colon, the message
DIGITS_RE = _Lazy(r"\d+")
TB_EXC_RE = _Lazy(r"^((?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*|[A-Z][a-z]\w*)(?::\s?(.*))?$")
EXC_LINE_RE = _Lazy(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Warning))(?::\s?(.*))?$")
EXC_INLINE_RE = _Lazy(r"\b([A-Za-z_][\w.]*(?:Error|Exception))(?::\s?(.+))")
# openai-node's APIError message (`${status} ${message}`, src/core/error.ts): a 4xx/5xx status, then a message that
# starts like a sentence or a quote, or says something failed ("404 model 'x' not found"; "500 tokens generated" is
# no error)
STATUS_LINE_RE = _Lazy(r"^\s*([45]\d\d) ((?:[A-Z\"'`]|(?=[^\n]*\b(?:error|fail\w*|not|invalid|cannot|unable|"
                       r"unsupported|denied|refused|missing|unknown|exceed\w*|too)\b)[a-z])[^\n]{7,1999})$")
SDK_RE = _Lazy(r"\b(openai\.[A-Za-z]+Error|litellm\.[A-Za-z]+Error)\b:?\s*(?:Error code: (\d{3}) - )?(.*)")
FRAME_RE = _Lazy(r'^\s*File "([^"]+)", line (\d+), in (\S+)')
LEVEL_ERROR_RE = _Lazy(r"(?-i:\bERROR\b)|hit an exception|exception caught|log_server_r: .* 5\d\d\s*$|level=ERROR|\[E\]| - ERROR - |^\s*error[:\s]|(?-i:\bFATAL\b)|\bpanic:|HTTP/1\.[01]\" 5\d\d|\"status\":\s*5\d\d", re.I)

# tool names in Harmony headers, Rust debug output, Ollama fields, and leaked recipients
# (any namespace: "to=functions.x", "to=browser.search", "to=sql_db_list_tables"; never a role such as "assistant")
TOOL_RES = [_Lazy(p) for p in [
    r"(?:^|[\s>|\"'(\[])to=(?:functions\.)?([A-Za-z_][\w.\-]*)",
    r"harmonyFunctionName=([A-Za-z0-9_.\-]+)",
    r'"name":\s*"([A-Za-z0-9_.\-]+)<\|',
    r"(?<![\w|>])(?!(?:assistant|user|system|developer|tool)<)([A-Za-z_][A-Za-z0-9_\-]*)<\|channel\|>commentary",
]]

# token IDs: explicit phrasing, lists after token-ish keys, lists with a Harmony ID, bare Harmony IDs
TOKEN_PHRASE_RE = _Lazy(r"\btoken(?:[ _]id)?\s*[=:#]?\s*(-?\d{1,30})\b", re.I)
TOKEN_LIST_RE = _Lazy(r"\b(?:token_ids?|tokens|stop_token_ids|eos_token_ids?|prompt_token_ids?|stop)\"?'?\s*[=:]\s*\[([-\d,\s]{1,2000})\]?", re.I)
INT_LIST_RE = _Lazy(r"\[\s*(-?\d{1,30}(?:\s*,\s*-?\d{1,30}){1,200})\s*,?\s*\]")
HARMONY_RANGE_RE = _Lazy(r"(?<![\w.:/=-])(199998|199999|20[01]\d{3})(?![\w.:/-])")

# Byte strings that make a log line worth parsing. bytes.find per literal runs at memchr speed,
# several times faster than one regex alternation over the same data.
TRIGGERS = (
    b"rror", b"RROR", b"xception", b"Traceback", b"nexpected", b"Unknown role", b"FATAL", b"panic:",
    b"<|channel|>", b"to=functions.", b"assistantfinal", b"level=WARN",
)  # Error/error/ERROR, HarmonyError, uvicorn "500 Internal Server Error", TRT-LLM "[E] Error …" are all "rror"

MAX_ERRORS = 500
MAX_TOKENS = 64
MAX_TRACEBACK_LINES = 400


@dataclass
class ParsedError:
    kind: str  # harmony | vocab | traceback | openai-sdk | proxy | json-body | exception | log-error | harmony-leak | flattened
    message: str
    code: str | None = None  # e.g. the HarmonyError variant ("unexpected-token")
    exception: str | None = None
    status: int | None = None
    line: int | None = None
    count: int = 1
    engine: str | None = None
    frames: list[str] = field(default_factory=list)
    via: str | None = None  # how it reached the user: "openai-sdk", "litellm", "sse", "http-body"

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v not in (None, [])}


@dataclass
class Parsed:
    errors: list[ParsedError] = field(default_factory=list)
    token_ids: list[int] = field(default_factory=list)
    engines: dict[str, str] = field(default_factory=dict)  # engine -> the text that showed it
    tool_names: list[str] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)
    lines: int = 0
    bytes: int = 0
    dropped_errors: int = 0
    sample: str = ""  # the start of the input, for free-text matching


def strip_prefixes(line: str) -> str:
    for _ in range(3):
        before = line
        for rx in PREFIX_RES:
            line = rx.sub("", line, count=1)
        if line == before:
            break
    return line.strip()


# a lower-case phrase each pattern needs: a cheap test before the regex runs (or is even compiled)
KEYS = {
    "unexpected-token": "while expecting start token", "eos-in-header": "unexpected eos",
    "header-remaining": "remaining in message header", "header-too-many": "could not parse header",
    "channel-no-value": "channel marker present", "unknown-role": "unknown role", "no-role": "did not contain a role",
    "decode-header": "could not decode header", "decode-content": "could not decode message content",
    "stop-not-mapped": "specified as a stop token", "render-stop": "could not render stop token",
    "encoding-name": "invalid harmonyencodingname", "disallowed-special": "disallowed special token",
    "vocab-download": "vocab file", "vocab-hash": "hash mismatch for remote file",
    "vocab-env": "tiktoken_encodings_base", "vocab-invalid": "invalid tiktoken vocab file",
    "vocab-encoding": "unknown encoding name",
}


def classify_message(msg: str) -> tuple[str, str | None]:
    """(kind, code) of one message by its content."""
    low = msg.lower()
    for code, rx in HARMONY_PATTERNS:
        if KEYS[code] in low and rx.search(msg):
            return "harmony", code
    for code, rx in VOCAB_PATTERNS:
        if KEYS[code] in low and rx.search(msg):
            return "vocab", code
    if ("assistant" in low or "analysis" in low) and FLATTENED_RE.search(msg):
        return "flattened", None
    return "", None


def _ints(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d{1,30}", text)]


def token_ids_in(text: str) -> list[int]:
    """Token IDs a message names, in order, without pids, ports or line numbers."""
    found: list[int] = []
    for m in TOKEN_PHRASE_RE.finditer(text):
        found.append(int(m.group(1)))
    for m in re.finditer(r"expecting start token (-?\d{1,30})", text):
        found.append(int(m.group(1)))
    for m in TOKEN_LIST_RE.finditer(text):
        found.extend(_ints(m.group(1)))
    for m in INT_LIST_RE.finditer(text):
        vals = _ints(m.group(1))
        if any(199998 <= v < 201088 for v in vals):
            found.extend(vals)
    hm = re.search(r"remaining in message header:\s*(.{1,2000})", text)
    if hm and "token" in hm.group(1):
        found.extend(int(x) for x in re.findall(r"(?<=[\[\",\s])(\d{1,7})(?=,|\]|\")", hm.group(1)))
    for m in HARMONY_RANGE_RE.finditer(text):
        v = int(m.group(1))
        if 199998 <= v < 201088:
            found.append(v)
    seen, out = set(), []
    for v in found:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out


def _json_error(line: str) -> tuple[str, int | None] | None:
    """The message of a JSON (or Python-dict) error body inside a line."""
    start = line.find("{")
    end = line.rfind("}")
    if start < 0 or end <= start:
        return None
    blob = line[start:end + 1]
    data = None
    try:
        data = json.loads(blob)
    except RecursionError:  # a body nested a thousand deep is hostile, not an error message
        return None
    except ValueError:
        try:
            if len(blob) < 20000:
                data = ast.literal_eval(blob)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            data = None
    if not isinstance(data, dict):
        return None
    err = data.get("error", data)
    status = None
    if isinstance(err, dict):
        msg = err.get("message") or err.get("msg") or err.get("detail") or err.get("error")
        code = err.get("code") or data.get("code")
        if isinstance(code, int) and 100 <= code < 600:
            status = code
    elif isinstance(err, str):
        msg = err
    else:
        msg = None
    if msg is None and "detail" in data:
        msg = data["detail"]
    if msg is None or data is err and "message" not in data and "detail" not in data and "error" not in data:
        return None
    if not isinstance(msg, str):
        msg = json.dumps(msg, ensure_ascii=False)[:2000]
    return msg, status


class Scanner:
    """Incremental parser: feed lines (or bytes chunks) and read ``result``."""

    def __init__(self) -> None:
        self.result = Parsed()
        self._index: dict[str, ParsedError] = {}
        self._tokens: set[int] = set()
        self._tools: set[str] = set()
        self._tb: list[str] | None = None
        self._tb_start = 0
        self._example = 0  # lines left of llama-server's example_format quote (see feed_line)

    # -- recording -------------------------------------------------------------------------
    def _hint(self, text: str) -> str | None:
        hit = None
        for engine, rx in ENGINE_HINTS:
            m = rx.search(text)
            if m:
                self.result.engines.setdefault(engine, m.group(0).strip())
                hit = hit or engine
        return hit

    def _note_tokens(self, text: str) -> None:
        for v in token_ids_in(text):
            if v not in self._tokens and len(self._tokens) < MAX_TOKENS:
                self._tokens.add(v)
                self.result.token_ids.append(v)

    def _note_tools(self, text: str) -> None:
        if "functions." not in text and "<|channel|>" not in text and "FunctionName" not in text and not (
                "to=" in text and ("<|" in text or "commentary" in text)):
            return
        for rx in TOOL_RES:
            for m in rx.finditer(text):
                name = m.group(1)
                if name not in self._tools and len(self._tools) < 32:
                    self._tools.add(name)
                    self.result.tool_names.append(name)

    def _add(self, err: ParsedError, raw: str | None = None) -> None:
        msg = err.message[:500]
        if err.kind == "log-error":  # access-log lines differ only in client ports, ids and times
            msg = DIGITS_RE.sub("N", msg)
        key = f"{err.kind}\0{msg}"
        prev = self._index.get(key)
        if prev is not None:
            prev.count += 1
            return
        if len(self._index) >= MAX_ERRORS:
            self.result.dropped_errors += 1
            return
        if raw is not None and err.engine is None:  # engine hints are read for new errors only
            err.engine = self._hint(raw)
        self._index[key] = err
        self.result.errors.append(err)
        self._note_tokens(err.message)
        self._note_tools(err.message)

    # -- one line ------------------------------------------------------------------------------
    def feed_line(self, raw: str, lineno: int) -> None:
        engine = None
        if self._tb is None and ("prompt" in raw and "rror" not in raw and "RROR" not in raw):
            return  # a request log that echoes the rendered Harmony prompt: not an error, not a leak
        if self._tb is None and (self._example or "example_format: '" in raw):
            # llama-server's start-up line showing its chat template on an example conversation ("chat template,
            # chat_template: …, example_format: '<|start|>system<|message|>…'", tools/server/server.cpp), and the
            # lines it goes on over until its closing quote (at most 30): the model's input, no output, no error
            tail = raw if self._example else raw.split("example_format: '", 1)[1]
            self._example = 0 if "'" in tail else (self._example or 31) - 1
            return
        line = strip_prefixes(raw)
        if self._tb is not None:
            self._traceback_line(line, lineno, engine)
            return
        if line.startswith("Traceback (most recent call last)"):
            self._tb, self._tb_start = [], lineno
            return
        self._note_tools(line)
        om = OLLAMA_RE.search(line)
        if om:
            level, source, msg, error = om.groups()
            text = msg + (": " + error if error else "")
            text = text.replace('\\"', '"')
            kind, code = classify_message(text)
            if kind or level.upper() in ("ERROR", "WARN", "WARNING"):
                self._add(ParsedError(kind or "log-error", text, code=code, line=lineno, engine="ollama"), raw)
            return
        kind, code = classify_message(line)
        sdk = SDK_RE.search(line)
        if sdk:
            name, status, rest = sdk.groups()
            inner = _json_error(rest) if "{" in rest else None
            msg = inner[0] if inner else rest.strip() or name
            ikind, icode = classify_message(msg)
            via = "litellm" if name.startswith("litellm") else "openai-sdk"
            self._add(ParsedError(
                ikind or ("proxy" if via == "litellm" else "openai-sdk"), msg if ikind else f"{name}: {msg}",
                code=icode, exception=name, status=int(status) if status else None, line=lineno,
                engine="litellm" if via == "litellm" else engine, via=via), raw)
            return
        st = STATUS_LINE_RE.match(line)
        if st and not LEVEL_ERROR_RE.search(raw):
            # an HTTP error as a client prints it: openai-node's "400 Failed to load model …" (status, then the
            # body's message), as apps built on it (Continue, LM Studio's clients) show it
            ikind, icode = classify_message(st.group(2))
            self._add(ParsedError(ikind or "json-body", st.group(2)[:2000], code=icode, status=int(st.group(1)),
                                  line=lineno, engine=engine, via="http-body"), raw)
            return
        if "{" in line and ('"error"' in line or "'error'" in line or '"object": "error"' in line or '"detail"' in line):
            got = _json_error(line)
            if got:
                msg, status = got
                ikind, icode = classify_message(msg)
                via = "sse" if raw.lstrip().startswith("data:") else "http-body"
                self._add(ParsedError(ikind or "json-body", msg, code=icode, status=status, line=lineno, engine=engine, via=via), raw)
                return
        # an exception named in passing by a WARNING/INFO line ("… errors like `OSError: [Errno 24] …`") is advice,
        # not an error: only a line that starts with the exception counts there
        quiet = bool(QUIET_LEVEL_RE.match(raw))
        exc = EXC_LINE_RE.match(line) or (None if quiet else EXC_INLINE_RE.search(line))
        if kind in ("harmony", "vocab", "flattened"):
            self._add(ParsedError(kind, line[:2000], code=code, exception=exc.group(1) if exc else None, line=lineno, engine=engine), raw)
            return
        if exc:
            self._add(ParsedError("exception", line[:2000], exception=exc.group(1), line=lineno, engine=engine), raw)
            return
        if HARMONY_TOKENS_RE.search(line) and HARMONY_PARSE_FAILURE_RE.search(line):
            self._add(ParsedError("log-error", line[:2000], line=lineno, engine=engine), raw)
            return
        if HARMONY_TOKENS_RE.search(line) and HARMONY_LEAK_SHAPE_RE.search(line) and not LEVEL_ERROR_RE.search(raw) \
                and "prompt" not in line.lower() and not TOKEN_SETUP_RE.search(line):
            self._add(ParsedError("harmony-leak", line[:500], line=lineno, engine=engine), raw)
            return
        if LEVEL_ERROR_RE.search(raw) and not (quiet and ADVICE_RE.search(line)):
            self._add(ParsedError("log-error", line[:2000], line=lineno, engine=engine), raw)

    def _traceback_line(self, line: str, lineno: int, engine: str | None) -> None:
        assert self._tb is not None
        fm = FRAME_RE.match(line)
        if fm:
            frame = f"{fm.group(1)}:{fm.group(2)} in {fm.group(3)}"
            self._tb.append(frame)
            self._hint(fm.group(1))
            return
        exc = EXC_LINE_RE.match(line) or TB_EXC_RE.match(line)
        if exc and not line.startswith(" "):
            kind, code = classify_message(line)
            frames = self._tb[-12:]
            self._tb = None
            for f in frames:
                if f not in self.result.frames and len(self.result.frames) < 40:
                    self.result.frames.append(f)
            err = ParsedError(kind or "traceback", line[:2000], code=code, exception=exc.group(1),
                              line=self._tb_start, engine=engine or self._engine_from_frames(frames), frames=frames)
            self._add(err)
            return
        if len(self._tb) > MAX_TRACEBACK_LINES or line.startswith("During handling") or line.startswith("The above exception"):
            if not (line.startswith("During handling") or line.startswith("The above exception")):
                self._tb = None
            return

    def _engine_from_frames(self, frames: list[str]) -> str | None:
        for f in frames:
            e = self._hint(f)
            if e:
                return e
        return None

    # -- whole inputs ----------------------------------------------------------------------------
    def feed_text(self, text: str) -> Parsed:
        self.result.sample = text[:4000]
        self.result.bytes += len(text.encode("utf-8", "replace"))
        n = 0
        for n, line in enumerate(text.splitlines(), 1):
            self.feed_line(line, n)
        self.result.lines += n
        self._hint(text[:65536])
        self._note_tokens_in_sample()
        return self.result

    def _note_tokens_in_sample(self) -> None:
        if not self.result.errors:
            self._note_tokens(self.result.sample)

    def feed_stream(self, fh: BinaryIO, chunk_size: int = 1 << 20) -> Parsed:
        """Scan a binary stream chunk by chunk; only candidate lines are decoded."""
        carry = b""
        lineno = 0
        first = True
        skipping = False
        while True:
            chunk = fh.read(chunk_size)
            if not chunk:
                break
            if first and b"\0" in chunk[:8192]:
                raise BinaryInputError("the input looks binary (it contains NUL bytes); give a text log or error message")
            data = carry + chunk
            cut = data.rfind(b"\n")
            if cut < 0:
                if len(data) > 4 * chunk_size:  # an endless line: parse its start once, skip the rest
                    if not skipping:
                        lineno = self._scan_block(data[:chunk_size] + b"\n", lineno)
                    skipping = True
                    self.result.bytes += len(data)
                    carry = b""
                else:
                    carry = data
                continue
            block, carry = data[:cut + 1], data[cut + 1:]
            if skipping:  # the end of an over-long line already counted
                nl = block.find(b"\n") + 1
                self.result.bytes += nl
                block, skipping = block[nl:], False
            if first:
                self.result.sample = block[:4000].decode("utf-8", "replace")
                self._hint(block[:65536].decode("utf-8", "replace"))
                first = False
            self.result.bytes += len(block)
            lineno = self._scan_block(block, lineno)
        if carry:
            if first:
                self.result.sample = carry[:4000].decode("utf-8", "replace")
                self._hint(self.result.sample)
            self.result.bytes += len(carry)
            lineno = self._scan_block(carry + b"\n", lineno)
        self.result.lines = lineno
        self._note_tokens_in_sample()
        return self.result

    def _scan_block(self, block: bytes, lineno: int) -> int:
        pos = 0
        end = len(block)
        # next occurrence of each trigger, in a heap: only the triggers a hit passes get searched again
        heap = [(p, k) for k, lit in enumerate(TRIGGERS) if (p := block.find(lit)) >= 0]
        heapq.heapify(heap)
        while pos < end:
            if self._tb is None:
                while heap and heap[0][0] < pos:
                    _, k = heapq.heappop(heap)
                    p = block.find(TRIGGERS[k], pos)
                    if p >= 0:
                        heapq.heappush(heap, (p, k))
                if not heap:
                    return lineno + block.count(b"\n", pos, end)
                hit = heap[0][0]
                start = block.rfind(b"\n", pos, hit) + 1
                if start < pos:
                    start = pos
                lineno += block.count(b"\n", pos, start)
                pos = start
            nl = block.find(b"\n", pos)
            if nl < 0:
                nl = end
            lineno += 1
            line = block[pos:nl][:20000].decode("utf-8", "replace").rstrip("\r")
            self.feed_line(line, lineno)
            pos = nl + 1
        return lineno


class BinaryInputError(ValueError):
    """Raised for input that is not text."""


def parse_text(text: str) -> Parsed:
    if "\0" in text[:8192]:
        raise BinaryInputError("the input looks binary (it contains NUL bytes); give a text log or error message")
    return Scanner().feed_text(text)


def parse_stream(fh: BinaryIO) -> Parsed:
    return Scanner().feed_stream(fh)


# Chinese words for failures, as reports on Chinese-language trackers write them (LLaMA-Factory, ms-swift, lmdeploy,
# Xinference, Cherry Studio), the Japanese and Korean ones, and those of the other languages reports come in (Russian,
# Vietnamese, Spanish, Portuguese, German, French): the knowledge base and the triage classes are in English, so a
# report that says 显存不足 ("not enough VRAM") or "не хватает памяти" says "out of memory" to them. Only words that name a
# failure or a feature: the rest of such a text stays unread, as before. The words search reads the English too.
GLOSSARY = {
    "显存不足": "out of memory", "显存溢出": "out of memory", "爆显存": "out of memory", "内存不足": "out of memory",
    "内存溢出": "out of memory", "乱码": "garbage gibberish output", "死循环": "endless loop", "无限循环": "endless loop",
    "重复输出": "repeating output", "一直重复": "keeps repeating", "思考过程": "thinking reasoning",
    "思考内容": "thinking reasoning", "推理过程": "reasoning", "思维链": "reasoning", "没有解析": "not parsed",
    "未解析": "not parsed", "解析失败": "failed to parse", "工具调用": "tool call", "函数调用": "function call",
    "非法内存访问": "illegal memory access", "超时": "timed out", "加载失败": "failed to load",
    "无法加载": "failed to load", "不支持": "not supported", "崩溃": "crash", "闪退": "crash",
    "上下文长度": "context length", "超出上下文": "context length exceeded", "超过token": "exceeds max tokens",
    "速度慢": "slow", "很慢": "slow", "空回复": "empty response", "返回为空": "empty response",
    "输出为空": "empty output", "内容为空": "empty content", "空回答": "empty answer", "截断": "truncated",
    "安装失败": "install failed", "编译失败": "build failed",
    "连接失败": "connection error", "连接被拒绝": "connection refused", "微调": "fine-tuning", "量化": "quantization",
    "服务器重启": "server restarts", "服务重启": "server restarts", "卡住": "stuck hang", "卡死": "stuck hang",
    # the reasoning a client does not show, or that never ends (Cherry Studio's "一直显示思考中": it keeps thinking)
    "思考": "thinking reasoning", "推理内容": "reasoning", "思考中": "thinking reasoning", "无法显示": "not shown",
    "无法正常显示": "not shown", "没有显示": "not shown", "不显示": "not shown", "无法停止": "never stops",
    "停不下来": "never stops", "无法调用": "cannot call", "无法正常调用": "cannot call", "调用失败": "call failed",
    "胡言乱语": "gibberish output", "答非所问": "irrelevant answers", "段错误": "segmentation fault",
    "无响应": "stops responding hang", "没有响应": "stops responding hang", "启动失败": "failed to start",
    "无法启动": "failed to start", "结构化输出": "structured output", "显存": "vram gpu memory",
    # a gateway in front of the providers (new-api and one-api call each upstream provider a 渠道, "channel")
    "代理": "proxy", "渠道": "upstream provider", "无法正常输出": "no output returned", "没有输出": "no output returned",
    # Traditional Chinese
    "顯存不足": "out of memory", "記憶體不足": "out of memory", "亂碼": "garbage gibberish output",
    "崩潰": "crash", "閃退": "crash", "工具調用": "tool call", "超時": "timed out", "載入失敗": "failed to load",
    # Japanese
    "文字化け": "garbage gibberish output", "メモリ不足": "out of memory", "クラッシュ": "crash",
    "フリーズ": "stuck hang", "無限ループ": "endless loop", "繰り返し": "repeating output",
    "タイムアウト": "timed out", "ツール呼び出し": "tool call", "関数呼び出し": "function call", "推論": "reasoning",
    "思考プロセス": "thinking reasoning", "表示されない": "not shown", "空の応答": "empty response",
    "回答が空": "empty answer", "途中で切れ": "truncated",
    "ロードに失敗": "failed to load", "読み込みに失敗": "failed to load", "起動しない": "failed to start",
    "接続できない": "connection error",
    # slow, never finishing, ignored (the eighteenth independent set's Japanese notes: "思考時間が非常にかかる",
    # "思考開始（完了しない）", "bool Falseはgpt-oss側で無視され")
    "時間がかかる": "slow", "遅い": "slow", "完了しない": "never finishes", "終わらない": "never finishes",
    "応答しない": "stops responding hang", "無視され": "ignored",
    # Korean
    "메모리 부족": "out of memory", "메모리가 부족": "out of memory", "도구 호출": "tool call",
    "함수 호출": "function call", "추론": "reasoning", "무한 반복": "endless loop", "반복 출력": "repeating output",
    "빈 응답": "empty response", "시간 초과": "timed out", "로드 실패": "failed to load", "크래시": "crash",
    "글자 깨짐": "garbage gibberish output", "연결 실패": "connection error",
    # Russian (stems: the word's endings change with its case, so these match at a word's start)
    "пустой ответ": "empty answer", "пустые ответ": "empty answer", "пустого ответ": "empty answer",
    "пустым ответ": "empty answer", "ответ пустой": "empty answer", "пустой результат": "empty output",
    "пустой контент": "empty content", "пустой content": "empty content", "нет ответа": "no output returned",
    "не отвечает": "stops responding hang",
    "не хватает памяти": "out of memory", "нехватка памяти": "out of memory", "нехватки памяти": "out of memory",
    "недостаточно памяти": "out of memory", "зависает": "stuck hang", "зависани": "stuck hang",
    "вылетает": "crash", "вылетел": "crash", "падает": "crash", "ошибка сегментации": "segmentation fault",
    "мусор": "garbage gibberish output", "бессмыслиц": "gibberish output", "абракадабр": "gibberish output",
    "кракозябр": "garbage gibberish output", "бесконечный цикл": "endless loop", "зацикл": "endless loop",
    "повторяет одно": "repeating output", "вызов инструмент": "tool call", "вызовы инструмент": "tool call",
    "вызова инструмент": "tool call", "вызов функци": "function call", "вызова функци": "function call",
    "рассуждени": "reasoning", "размышлени": "thinking reasoning", "таймаут": "timed out", "тайм-аут": "timed out",
    "превышено время ожидания": "timed out", "не загружается": "failed to load",
    "не удалось загрузить": "failed to load", "ошибка загрузки": "failed to load", "обрезает": "truncated",
    "обрезан": "truncated", "обрывается": "truncated", "медленн": "slow", "длина контекста": "context length",
    "длины контекста": "context length", "контекстное окно": "context length", "квантизаци": "quantization",
    "квантовани": "quantization", "дообучени": "fine-tuning", "файнтюн": "fine-tuning",
    "структурированный вывод": "structured output",
    # Vietnamese
    "phản hồi trống": "empty response", "câu trả lời trống": "empty answer", "trả lời trống": "empty answer",
    "rỗng": "empty", "không có phản hồi": "no output returned", "không phản hồi": "stops responding hang",
    "hết bộ nhớ": "out of memory", "thiếu bộ nhớ": "out of memory", "tràn bộ nhớ": "out of memory",
    "bị treo": "stuck hang", "treo máy": "stuck hang", "rất chậm": "slow", "chạy chậm": "slow",
    "gọi công cụ": "tool call", "gọi hàm": "function call", "suy luận": "reasoning", "lặp lại": "repeating output",
    "vòng lặp vô hạn": "endless loop", "hết thời gian chờ": "timed out", "bị cắt": "truncated",
    "không tải được": "failed to load", "tải thất bại": "failed to load", "ký tự lạ": "garbage gibberish output",
    "ký tự rác": "garbage gibberish output", "bị sập": "crash",
    # Spanish and Portuguese
    "respuesta vacía": "empty response", "respuestas vacías": "empty response", "contenido vacío": "empty content",
    "resposta vazia": "empty response", "respostas vazias": "empty response", "conteúdo vazio": "empty content",
    "sin respuesta": "no output returned", "sem resposta": "no output returned",
    "memoria insuficiente": "out of memory", "sin memoria": "out of memory", "memória insuficiente": "out of memory",
    "se cuelga": "stuck hang", "se queda colgado": "stuck hang", "travou": "stuck hang", "travando": "stuck hang",
    "bucle infinito": "endless loop", "llamada a herramienta": "tool call", "llamadas a herramientas": "tool call",
    "llamada de herramienta": "tool call", "llamada a función": "function call",
    "llamadas a funciones": "function call", "chamada de ferramenta": "tool call",
    "chamadas de ferramentas": "tool call", "chamada de função": "function call", "razonamiento": "reasoning",
    "raciocínio": "reasoning", "tiempo de espera agotado": "timed out", "tempo esgotado": "timed out",
    "truncada": "truncated", "truncado": "truncated", "muy lento": "slow", "muito lento": "slow",
    "error al cargar": "failed to load", "falha ao carregar": "failed to load",
    "caracteres extraños": "garbage gibberish output", "caracteres estranhos": "garbage gibberish output",
    "texto sin sentido": "gibberish output",
    # German
    "leere antwort": "empty answer", "leeren antwort": "empty answer", "leere antworten": "empty answer",
    "keine antwort": "no output returned", "zu wenig speicher": "out of memory",
    "nicht genug speicher": "out of memory", "speicher reicht nicht": "out of memory",
    "speichermangel": "out of memory", "hängt sich auf": "stuck hang", "endlosschleife": "endless loop",
    "werkzeugaufruf": "tool call", "werkzeugaufrufe": "tool call", "tool-aufruf": "tool call",
    "tool-aufrufe": "tool call", "funktionsaufruf": "function call", "funktionsaufrufe": "function call",
    "abgeschnitten": "truncated", "sehr langsam": "slow", "stürzt ab": "crash", "absturz": "crash",
    "kauderwelsch": "gibberish output", "zeichensalat": "garbage gibberish output",
    "zeitüberschreitung": "timed out", "lädt nicht": "failed to load", "denkprozess": "thinking reasoning",
    # French
    "réponse vide": "empty response", "réponses vides": "empty response", "contenu vide": "empty content",
    "aucune réponse": "no output returned", "pas de réponse": "no output returned",
    "mémoire insuffisante": "out of memory", "manque de mémoire": "out of memory", "boucle infinie": "endless loop",
    "appel d'outil": "tool call", "appels d'outils": "tool call", "appel de fonction": "function call",
    "appels de fonction": "function call", "raisonnement": "reasoning", "délai d'attente dépassé": "timed out",
    "tronqué": "truncated", "tronquée": "truncated", "très lent": "slow", "charabia": "gibberish output",
    "caractères bizarres": "garbage gibberish output", "échec du chargement": "failed to load",
}
# Chinese, Japanese and Korean write their failure words into longer words (Korean adds particles): those match
# anywhere. Words in other scripts must start a word (Russian ones are stems, so they may end inside one), and Latin
# ones must also end one: "lento" is not "violento", "rỗng" is a word of its own.
def _gloss_alternative(word: str) -> str:
    if any("\u3040" <= ch <= "\u30ff" or "\u3400" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af" for ch in word):
        return re.escape(word)
    cyrillic = any("\u0400" <= ch <= "\u04ff" for ch in word)
    return rf"(?<!\w){re.escape(word)}" + ("" if cyrillic else r"(?!\w)")


@functools.cache
def _glossary_re() -> re.Pattern:
    """The glossary's words as one pattern, built on first use (a command that reads no text never builds it)."""
    return _rx.compile("|".join(map(_gloss_alternative, sorted(GLOSSARY, key=len, reverse=True))), re.I)


def gloss(text: str) -> str:
    """English words for the failure words of other languages in ``text`` (GLOSSARY), each once, in order; "" when
    none."""
    seen: dict[str, None] = {}
    for m in _glossary_re().finditer(text[:65536]):
        seen.setdefault(GLOSSARY[m.group(0).lower()], None)
    return "; ".join(seen)


# Chinese and Japanese write no space between words, and reports mix in Latin ones ("4*3090 会oom", "用vllm跑"):
# to a pattern with a word boundary, "会oom" is one word. A space at each border between the two scripts lets
# \boom\b, \bvllm\b read them; nothing else changes.
_CJK_BORDER_RE = _Lazy(r"(?<=[\u3040-\u30ff\u3400-\u9fff\uff01-\uff5e])(?=[A-Za-z0-9])|"
                       r"(?<=[A-Za-z0-9])(?=[\u3040-\u30ff\u3400-\u9fff\uff01-\uff5e])")


def space_cjk(text: str) -> str:
    """``text`` with a space at every border between CJK characters and Latin letters or digits."""
    return _CJK_BORDER_RE.sub(" ", text)


# GitHub's editor escapes Markdown in pasted text ("reasoning\_content", "\<reasoning\>"): a report copied from an
# issue carries the escapes, and to the matcher "reasoning\_content" is two words. They are read without them.
_MD_ESCAPE_RE = _Lazy(r"\\([<>_*\[\]#`|~])")


def unescape_markdown(text: str) -> str:
    """``text`` without the backslashes Markdown puts before <, >, _, *, [, ], #, `, | and ~."""
    return _MD_ESCAPE_RE.sub(r"\1", text) if "\\" in text else text

"""Recognise what broken gpt-oss servers actually print, not only their error messages.

- leaked Harmony (``<|start|>assistant<|channel|>commentary to=functions.x<|message|>{…}<|call|>``), parsed with
  the Harmony grammar into messages (role, channel, recipient, content type, content) so a client can recover a
  tool call (vLLM #22519/#22515, TensorRT-LLM #9256, hindsight #2222);
- flattened channels, the same output with the special tokens stripped (``analysis…assistantfinal…``);
- duplicated streamed fragments, each delta sent twice (``"locationlocation"``, ``ParisParis``; lmdeploy #4014);
- a tool call written as JSON text in ``content`` (no tool parser on the server).

Each artifact names the ``check`` finding it corresponds to, so the knowledge-base entries that list that finding
are the candidates, and says which layer most likely produced it with a fix for each layer in the path.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from gptoss_doctor import rx as _rx

SPECIAL_RE = _rx.compile(r"<\|(start|end|message|channel|constrain|return|call|startoftext|endoftext)\|>")
TERMINATORS = {"end", "call", "return"}
ROLES = {"assistant", "user", "system", "developer", "tool"}
TO_RE = _rx.compile(r"(?:^|\s)to=([A-Za-z_][\w.\-]*)")
MAX_TEXT = 1 << 20
MAX_MESSAGES = 64


@dataclass
class HarmonyMessage:
    role: str
    channel: str | None = None
    recipient: str | None = None
    content_type: str | None = None
    content: str = ""
    end: str | None = None  # the token that closed it: end / call / return, or None when cut off
    inferred_role: bool = False  # the text started mid-message, without <|start|>role

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None and k != "inferred_role"} | (
            {"inferred_role": True} if self.inferred_role else {})

    @property
    def tool_name(self) -> str | None:
        """The function a tool call addresses (``functions.get_weather`` -> ``get_weather``), else None."""
        r = self.recipient
        if not r or r in ROLES:
            return None
        return r[len("functions."):] if r.startswith("functions.") else r


def _header(msg: HarmonyMessage, text: str, part: str) -> None:
    """Fill a message header from the text that followed <|start|> (part='role'), <|channel|> or <|constrain|>."""
    text = text.strip()
    m = TO_RE.search(" " + text)
    if m:
        msg.recipient = m.group(1)
        text = (" " + text)[: m.start()].strip() + " " + (" " + text)[m.end():].strip()
        text = text.strip()
    words = text.split()
    if part == "role":
        if words:
            msg.role = words[0]
            msg.inferred_role = False
    elif part == "channel":
        if words:
            msg.channel = words[0]
            if len(words) > 1:
                msg.content_type = words[-1]
    elif part == "constrain":
        if words:
            msg.content_type = words[0]


def parse_harmony(text: str) -> list[HarmonyMessage]:
    """Messages of raw Harmony text. Tolerant: output may start mid-message or stop before its end token."""
    text = text[:MAX_TEXT]
    pieces = SPECIAL_RE.split(text)  # [text, name, text, name, text, ...]
    if len(pieces) < 3:
        return []
    out: list[HarmonyMessage] = []
    cur: HarmonyMessage | None = None
    in_content = False
    i = 1
    while i < len(pieces) and len(out) < MAX_MESSAGES:
        name, after = pieces[i], pieces[i + 1] if i + 1 < len(pieces) else ""
        i += 2
        if name == "start":
            if cur is not None and (in_content or cur.channel):
                out.append(cur)
            cur, in_content = HarmonyMessage(role="assistant", inferred_role=True), False
            _header(cur, after, "role")
            continue
        if name in ("startoftext", "endoftext"):
            continue
        if cur is None:
            cur = HarmonyMessage(role="assistant", inferred_role=True)
        if name == "channel" and not in_content:
            _header(cur, after, "channel")
        elif name == "constrain" and not in_content:
            _header(cur, after, "constrain")
        elif name == "message":
            if in_content:  # a second <|message|> without an end: keep it as content
                cur.content += "<|message|>" + after
            else:
                cur.content, in_content = after, True
        elif name in TERMINATORS:
            if in_content or cur.channel:
                cur.end = name
                out.append(cur)
            cur, in_content = None, False
            words = after.split()
            if words and words[0] in ROLES:  # "<|end|>assistant<|channel|>…": only <|start|> was lost
                cur = HarmonyMessage(role=words[0])
                _header(cur, after, "role")
        elif in_content:
            cur.content += f"<|{name}|>" + after
    if cur is not None and (in_content or cur.channel) and len(out) < MAX_MESSAGES:
        out.append(cur)
    for m in out:
        m.content = m.content.strip()
    return out


# --- flattened channels: the special tokens were stripped (skip_special_tokens) -------------------------------
FLAT_SPLIT_RE = _rx.compile(r"(?:^|(?<=[^A-Za-z])|assistant)(analysis|commentary|final)(?=[A-Z\"{\[<*#0-9]|\s+to=|\s*json)")
FLAT_MARK_RE = _rx.compile(r"assistant(?:final|commentary|analysis)|^\s*(?:analysis|final)[A-Z]", re.M)


def parse_flattened(text: str) -> list[HarmonyMessage]:
    """Messages of output whose special tokens were stripped: ``analysisThe user…assistantfinalHello``."""
    text = text[:MAX_TEXT]
    if not FLAT_MARK_RE.search(text):
        return []
    marks = list(FLAT_SPLIT_RE.finditer(text))
    out: list[HarmonyMessage] = []
    for n, m in enumerate(marks[:MAX_MESSAGES]):
        end = marks[n + 1].start() if n + 1 < len(marks) else len(text)
        body = text[m.end():end]
        msg = HarmonyMessage(role="assistant", channel=m.group(1), inferred_role=True)
        to = re.match(r"\s+to=([A-Za-z_][\w.\-]*)\s*(?:(json|code)\b)?", body)
        if to:
            msg.recipient, msg.content_type = to.group(1), to.group(2)
            body = body[to.end():]
        elif re.match(r"\s*json\b", body) and m.group(1) == "commentary":
            msg.content_type = "json"
            body = re.sub(r"^\s*json", "", body)
        msg.content = body.strip()
        out.append(msg)
    return out


# --- duplicated streamed fragments -------------------------------------------------------------------------------
DOUBLED_WORD_RE = _rx.compile(r"(?<![A-Za-z])([A-Za-z]{3,})\1(?![a-z])")
DOUBLED_PUNCT_RE = _rx.compile(r",,|::|\{\s*\\?n?\s*\{|\"\s\"|\\\"\s\\\"")
# JSON arguments whose streamed pieces were each sent twice: '{"{"city"city": ": "PariParis"}s"}'
DOUBLED_JSON_RE = _rx.compile(r'\{\\?"\{\\?"|\\?":\s?\\?":\s?\\?"')
NATURAL_DOUBLES = {"bon", "cous", "mur", "tar", "bye", "pom", "tom", "yo-", "cha", "hub", "pap", "ma", "xox", "lol",
                   "ha", "boo", "can", "dum", "tut", "bar", "nana", "hot"}


def doubled_fragments(text: str) -> list[str]:
    """Words written twice in a row without a separator, as when each streamed delta is repeated."""
    seen: list[str] = []
    for m in DOUBLED_WORD_RE.finditer(text[:MAX_TEXT]):
        w = m.group(1)
        if w.lower() in NATURAL_DOUBLES or m.group(0).lower() in ("beriberi", "tsetse") or len(set(w.lower())) == 1:
            continue  # natural doubles, and one letter over and over: a redacted key ('sk-xxxxxxxxxxxx') or a scream
        if m.group(0) not in seen:
            seen.append(m.group(0))
        if len(seen) >= 8:
            break
    return seen


# one writing of one language: Japanese is written in kanji, hiragana and katakana at once (and full-width Latin
# letters sit among them), so a Japanese sentence is one system, not four
CJK_SCRIPTS = {name: "CJK" for name in ("CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HALFWIDTH", "FULLWIDTH",
                                        "IDEOGRAPHIC")}


def garbled(text: str, *, runs: int = 2) -> str | None:
    """Why ``text`` is not language a healthy model writes (random or broken weights, a bad quantisation or
    kernel), else None: words run into themselves ("ultimaultimaultima"), or many writing systems mixed."""
    import unicodedata

    t = text[:4000]
    doubled = doubled_fragments(t)
    if runs > 2:  # a pasted text may show a stream's doubled fragments ("ParisParis"): only longer runs count
        doubled = [d for d in doubled if re.search(re.escape(d) + re.escape(d[: len(d) // 2]), t)]
    if len(doubled) >= 3 or (runs > 2 and doubled and len(doubled[0]) >= 9 and t.count(doubled[0]) >= 2):
        return "words run into themselves (" + ", ".join(doubled[:3]) + ")"
    scripts = set()
    for ch in t:
        if ch.isalpha():
            try:
                name = unicodedata.name(ch).split(" ")[0]
            except ValueError:
                continue
            scripts.add(CJK_SCRIPTS.get(name, name))
    scripts -= {"LATIN"}
    if len(scripts) >= 3:
        return f"it mixes {len(scripts) + 1} writing systems"
    return None


# --- a tool call written as JSON text ------------------------------------------------------------------------------
JSON_CALL_RE = _rx.compile(
    r"""\{\s*(?:\\?["'])name(?:\\?["'])\s*:\s*(?:\\?["'])([\w.\-]+)(?:\\?["'])\s*,\s*"""
    r"""(?:\\?["'])(?:arguments|parameters)(?:\\?["'])\s*:""")


@dataclass
class Artifact:
    kind: str  # harmony-leak | flattened-channels | duplicated-fragments | tool-call-as-text | garbage-output
    finding: str  # the check finding it corresponds to (entries list it in signatures.findings)
    evidence: str
    layer: str  # where it most likely came from
    fixes: dict[str, str] = field(default_factory=dict)  # layer -> what to do there
    tool_names: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)


LAYER_FIXES = {
    "garbage-output": {
        "model-files": "check the weights: re-download or re-convert the checkpoint (a GGUF or quantisation made "
                       "from the wrong files, or with an old converter, writes this), and compare with the original "
                       "MXFP4 checkpoint",
        "hardware": "check the kernels: the attention / MoE kernels for your GPU and data type (try another "
                    "attention backend, or the engine's default dtype) — 'gptoss-doctor check URL' shows it again",
    },
    "harmony-leak": {
        "server": "make the server parse Harmony into content / reasoning / tool_calls: the engine's tool-call and "
                  "reasoning parsers for gpt-oss (see the matched issue for the flag your engine and version need)",
        "proxy": "if the backend returns parsed tool_calls when called directly, the proxy in between is passing "
                 "raw text: compare with 'gptoss-doctor check BACKEND_URL' and fix the proxy's route for this model",
        "client": "until the server is fixed, recover the messages from content: gptoss_doctor.recover."
                  "recover_completion() turns them into tool_calls and reasoning in your app ('gptoss-doctor explain "
                  "--json' lists them under harmony_messages)",
    },
    "flattened-channels": {
        "server": "the server decodes with special tokens stripped and no reasoning parser: enable the engine's "
                  "gpt-oss reasoning parser (see the matched issue), or use the chat endpoint instead of /v1/completions",
        "client": "recover: split the text at 'assistantfinal' / 'assistantcommentary' (the parsed messages are in "
                  "explain --json under harmony_messages)",
    },
    "duplicated-fragments": {
        "server": "the server's streaming tool parser re-sends text it already sent: upgrade the engine (see the "
                  "matched issue for the fixed version)",
        "client": "until then, call tools with stream=false, or undo the doubling in your app: "
                  "gptoss_doctor.recover.recover_fragments() / recover_arguments() (only when the result is valid JSON)",
    },
    "tool-call-as-text": {
        "server": "the server has no tool-call parser for gpt-oss, so the call stays in content: enable it (see the "
                  "matched issue for your engine's flag)",
        "client": "until then, parse the JSON from content yourself, or use the Responses API where the engine offers it",
    },
}


def _layer(proxy_seen: bool) -> str:
    return "proxy" if proxy_seen else "server"


def raw_generation(text: str) -> bool:
    """The text shows a local generate() call (transformers, mlx-lm): the Harmony transcript it prints is what the
    model writes by design, with no server and no parser on the path, so it is no leak."""
    from gptoss_doctor.explain.parse import RAW_GENERATION_RE

    return "<|" in text and bool(RAW_GENERATION_RE.search(text[:65536]))


def recognise(text: str, *, proxy_seen: bool = False) -> tuple[list[Artifact], list[HarmonyMessage]]:
    """Artifacts in ``text`` and the Harmony messages recovered from it."""
    arts: list[Artifact] = []
    if "<|" in text and ("{{" in text or "{%" in text or "attribute to" in text or "special_eog_ids" in text):
        from gptoss_doctor.explain.parse import TOKEN_SETUP_RE

        # a server log also prints its chat template and vocabulary set-up: those name Harmony tokens, not output
        text = "\n".join(line for line in text.splitlines() if not TOKEN_SETUP_RE.search(line))
    if "<|" in text:
        from gptoss_doctor.explain.facets import without_routine
        from gptoss_doctor.explain.parse import HARMONY_PARSE_FAILURE_RE

        # a parser's error quoting the Harmony it could not read is a parse failure, not leaked output; a routine log
        # line (one printing the rendered prompt: the model's input) is none either
        text = "\n".join(line for line in without_routine(text).splitlines()
                          if not HARMONY_PARSE_FAILURE_RE.search(line))
    messages = parse_harmony(text) if "<|" in text else []
    if messages and not raw_generation(text):
        tools = [m.tool_name for m in messages if m.tool_name]
        calls = [m for m in messages if m.end == "call" or m.tool_name]
        what = (f"{len(messages)} raw Harmony message(s) in the text"
                + (f", including a tool call to {', '.join(dict.fromkeys(tools))}" if calls and tools else ""))
        arts.append(Artifact("harmony-leak", "probe.harmony_leak", what, _layer(proxy_seen),
                             dict(LAYER_FIXES["harmony-leak"]), list(dict.fromkeys(tools))))
    else:
        flat = parse_flattened(text)
        if flat:
            messages = flat
            tools = [m.tool_name for m in flat if m.tool_name]
            chans = ", ".join(dict.fromkeys(m.channel or "" for m in flat))
            arts.append(Artifact("flattened-channels", "probe.flattened_channels",
                                 f"Harmony channel names run into the text without their markers ({chans})",
                                 _layer(proxy_seen), dict(LAYER_FIXES["flattened-channels"]),
                                 list(dict.fromkeys(tools))))
    why = garbled(text, runs=3)
    if why:
        # non-language output: broken weights, conversion, quantisation or kernels; never a tool parser's doubling
        arts.append(Artifact("garbage-output", "", f"the output is not language ({why})", "model-files",
                             dict(LAYER_FIXES["garbage-output"])))
    doubled = [] if why else doubled_fragments(text)
    punct = DOUBLED_PUNCT_RE.findall(text[:MAX_TEXT])
    json_doubles = set() if why else {m.replace("\\", "").replace(" ", "")[:2] for m in DOUBLED_JSON_RE.findall(text[:MAX_TEXT])}
    if len(doubled) >= 2 or (doubled and punct) or len(json_doubles) >= 2:
        doubled = doubled or sorted(DOUBLED_JSON_RE.findall(text[:MAX_TEXT]))[:2]
        arts.append(Artifact("duplicated-fragments", "probe.tools.stream_duplicated",
                             "streamed fragments appear twice in a row: " + ", ".join(doubled[:5]),
                             _layer(proxy_seen), dict(LAYER_FIXES["duplicated-fragments"])))
    jm = JSON_CALL_RE.search(text[:MAX_TEXT])
    if jm and re.search(r"[\"']function[\"']\s*:\s*$|tool_calls", text[max(0, jm.start() - 200):jm.start()]):
        jm = None  # the function object of a real tool_calls entry, not a call written as text
    if jm and not messages:
        arts.append(Artifact("tool-call-as-text", "probe.tools.no_parser",
                             f'a tool call to "{jm.group(1)}" written as JSON text instead of tool_calls',
                             _layer(proxy_seen), dict(LAYER_FIXES["tool-call-as-text"]), [jm.group(1)]))
    return arts, messages

"""check, probes: what every probe shares — the requests it sends, the observation type, the checks of an answer's
content (Harmony markup, flattened channels, garbled text) and of an HTTP failure."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from gptoss_doctor import rx as _rx
from gptoss_doctor import engines
from gptoss_doctor.explain.artifacts import garbled  # noqa: F401 - shared with explain (one detector)
from gptoss_doctor.net.http import Client, Response


TOOL_NAME = "get_weather"

TOOL_PARAMS = {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}},
               "required": ["city"]}

CHAT_TOOLS = [{"type": "function", "function": {"name": TOOL_NAME, "description": "Get the current weather for a city.",
                                                 "parameters": TOOL_PARAMS}}]

RESPONSES_TOOLS = [{"type": "function", "name": TOOL_NAME, "description": "Get the current weather for a city.",
                    "parameters": TOOL_PARAMS}]

CHAT_PROMPT = "Say hello in one short sentence."

TOOL_PROMPT = "What is the weather in Paris right now? Use the get_weather tool."

TOOL_RESULT = '{"city": "Paris", "temperature_c": 21, "condition": "sunny", "report_id": "wx-7319"}'

TOOL_RESULT_MARKERS = ("wx-7319", "21", "sunny")

CHAT_MAX_TOKENS = 256

TOOL_MAX_TOKENS = 512

HARMONY_MARKUP_RE = _rx.compile(r"<\|(?:start|channel|message|end|call|return|constrain)\|>|\bto=functions\.")

FLATTENED_RE = _rx.compile(r"(?:^|\W)analysis.{0,4000}?assistant(?:final|commentary|analysis)|assistantfinal", re.S)

HARMONY_ERROR_RE = _rx.compile(
    r"HarmonyError|openai_harmony|expecting start token|unexpected tokens remaining in message header|"
    r"Unknown role|Unexpected token \d+|Failed to parse input at pos|error parsing tool call", re.I)

HARMONY_TOKEN_LEAK_RE = _rx.compile(r"<\||\|>|\bto=|\bfunctions\.|\bcommentary\b|\s")

UNEXPECTED_TOKEN_RE = _rx.compile(r"Unexpected token (\d+) while expecting start token 200006")

@dataclass
class Obs:
    id: str
    status: str
    detail: str = ""
    evidence: list[str] = field(default_factory=list)
    error_text: str = ""  # server error text to run through the matcher
    fix: str = ""
    http_status: Optional[int] = None  # set when the observation is just "the request failed with this status"
    kb: tuple[str, ...] = ()  # knowledge-base entries the probe knows explain it (when no error text names them)

@dataclass
class Ctx:
    client: Client
    model: str
    engine: str
    gpt_oss: bool = True
    version: Optional[str] = None  # the engine's version, where discovery found it
    override_model: bool = False  # --model given: it replaces the model of a replayed request

def _short(s: Any, n: int = 160) -> str:
    t = " ".join(str(s).split())
    return t[:n] + ("…" if len(t) > n else "")

def error_message(obj: Any, raw: str = "") -> str:
    """The human message inside an engine's error body (nested, flat, string, detail ...)."""
    if isinstance(obj, dict):
        err = obj.get("error")
        if isinstance(err, dict):
            return str(err.get("message") or err.get("msg") or json.dumps(err)[:500])
        if isinstance(err, str):
            return err
        for key in ("message", "detail", "msg"):
            if isinstance(obj.get(key), str):
                return obj[key]
    return raw[:2000]

def _reasoning_of(msg: dict) -> tuple[Optional[str], Optional[str]]:
    for key in ("reasoning", "reasoning_content", "thinking"):
        v = msg.get(key)
        if isinstance(v, str) and v.strip():
            return key, v
    return None, None

def _body_payload(body: dict, ctx: Ctx, **extra: Any) -> dict:
    out = {"model": ctx.model, **body}
    out.update(extra)
    return out

def http_failure(probe_id: str, what: str, r: Response) -> list[Obs]:
    """Observations for a failed (non-2xx / network) answer."""
    if r.error:
        return [Obs(probe_id, "error", f"{what}: {r.error_message or r.error}")]
    msg = error_message(r.json(), r.text)
    obs = [Obs(probe_id, "fail", f"{what}: HTTP {r.status}: {_short(msg, 200)}", [f"HTTP {r.status} {_short(r.text, 300)}"],
               error_text=msg, http_status=r.status)]
    if HARMONY_ERROR_RE.search(msg):
        obs.append(Obs("probe.harmony_error", "fail", f"{what}: the server's Harmony parser failed (HTTP {r.status})",
                       [_short(msg, 300)], error_text=msg))
    return obs

RAN_PAST_CALL = ("generation ran on after the tool call instead of stopping at <|call|> 200012: the server's stop "
                 "tokens lack <|call|> (a stale generation_config.json)")

def ran_past_call(seen: str, evidence: list[str]) -> Obs:
    """A tool call after which generation went on (``seen``: where and how it showed): the server's stop tokens lack
    <|call|> 200012. vLLM 0.32 shows a stale generation_config.json this way instead of a HarmonyError: its Harmony
    parser skips the tokens it cannot place (vllm/parser/harmony.py, ``except HarmonyError: continue``). The judge
    joins these into one observation (one cause, several probes that saw it)."""
    return Obs("eos.call_token", "fail", f"{RAN_PAST_CALL} (seen in {seen})", evidence,
               kb=("stale-generation-config-call-token",))

def content_checks(content: str, where: str) -> list[Obs]:
    from gptoss_doctor.explain.artifacts import parse_flattened, parse_harmony

    obs = []
    m = HARMONY_MARKUP_RE.search(content)
    if m:
        i = max(0, m.start() - 40)
        calls = [x.tool_name for x in parse_harmony(content) if x.tool_name]
        what = f"a tool call to {calls[0]} leaked as raw Harmony" if calls else f"raw Harmony markup {m.group(0)!r}"
        obs.append(Obs("probe.harmony_leak", "fail", f"{what} in {where}",
                       [f"{where}: {_short(content[i:], 200)}"]))
    else:
        obs.append(Obs("probe.harmony_leak", "pass", f"no Harmony markup in {where}"))
    # with or without the analysis part: "analysis…assistantfinal…", "assistantfinalHello", "finalHello"
    flat = parse_flattened(content) if not m else []
    f = FLATTENED_RE.search(content) if not m else None
    if f or flat:
        chans = "…".join(x.channel or "" for x in flat[:3]) or "analysis…assistantfinal"
        obs.append(Obs("probe.flattened_channels", "fail", f"flattened channels ({chans}…) in {where}",
                       [f"{where}: {_short(content, 200)}"]))
    else:
        obs.append(Obs("probe.flattened_channels", "pass", f"no flattened channel names in {where}"))
    return obs

def reasoning_obs(field_name: Optional[str], content: str, where: str, ctx: Ctx) -> Obs:
    if field_name:
        return Obs("probe.reasoning", "pass", f"reasoning returned in '{field_name}' ({where})")
    from gptoss_doctor.explain.artifacts import parse_flattened, parse_harmony

    msgs = parse_harmony(content) if HARMONY_MARKUP_RE.search(content) else parse_flattened(content)
    leaked = bool(msgs or FLATTENED_RE.search(content))
    status = "fail" if (ctx.gpt_oss and engines.get(ctx.engine).reasoning_field) or leaked else "warn"
    detail = f"no reasoning / reasoning_content field ({where})"
    if any(x.channel == "analysis" for x in msgs) or (leaked and not msgs):
        detail += "; the reasoning is mixed into content"
    elif msgs:
        detail += "; the content holds raw Harmony messages (" + ", ".join(
            dict.fromkeys(f"{x.channel or '?'}" + (f" to {x.recipient}" if x.recipient else "") for x in msgs[:3])) + ")"
    return Obs("probe.reasoning", status, detail)

def _message(obj: Optional[dict]) -> Optional[dict]:
    if not obj:
        return None
    ch = obj.get("choices")
    if isinstance(ch, list) and ch and isinstance(ch[0], dict):
        msg = ch[0].get("message")
        return msg if isinstance(msg, dict) else None
    return None

# the fix of a probe whose answer is not language: the model (weights, quantisation, kernels), no flag or upgrade
MODEL_FIRST_FIX = "fix the model first (checkpoint, quantisation, kernels); no server flag helps here"

GREETING_RE = _rx.compile(r"\b(?:hello|hi|hey|greetings|good (?:morning|afternoon|evening|day)|welcome|howdy)\b|"
                         r"bonjour|hola|hallo|ciao|salut|olá|привет|你好|こんにちは|안녕", re.I)


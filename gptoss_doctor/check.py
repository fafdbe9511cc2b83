"""``check``: probe running servers; one typed result per target, findings linked to the knowledge base.

Per target: phase 1 discovery GETs run concurrently; then the engine-specific
details, the tokenizer check and every behavioural probe run concurrently; a
two-turn probe (``--deep``) adds one dependent round. Targets are checked
concurrently too, bounded by ``concurrency``.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional
from urllib.parse import urlsplit, urlunsplit

from gptoss_doctor.errors import EXIT_AUTH, EXIT_OK, EXIT_PROBLEMS, EXIT_UNREACHABLE, UsageError
from gptoss_doctor.finding_ids import FINDING_IDS
from gptoss_doctor.results import Finding, summarize

SEVERITY = {"skip": 0, "pass": 1, "warn": 2, "error": 3, "fail": 4}
ORDER = {fid: i for i, fid in enumerate(FINDING_IDS)}

TITLES = {
    "reach.dns": "Host name", "reach.refused": "Connection", "reach.reset": "Connection", "reach.tls": "TLS", "reach.timeout": "Response time",
    "reach.not_llm": "OpenAI-compatible API", "reach.redirect": "Redirect", "auth.required": "Authentication",
    "health": "Health endpoint", "engine.identified": "Engine", "engine.version": "Engine version",
    "models.listed": "Model list", "models.gpt_oss": "gpt-oss model", "models.context": "Context length",
    "tokenizer.special_tokens": "Tokenizer special tokens", "eos.call_token": "<|call|> stop token",
    "eos.return_token": "<|return|> stop token", "eos.end_token": "<|end|> not a stop token",
    "eos.local_generation_config": "Local generation_config.json", "probe.chat": "Plain chat",
    "probe.harmony_error": "Harmony parser errors", "probe.harmony_leak": "Raw Harmony markup",
    "probe.flattened_channels": "Flattened channels", "probe.reasoning": "Reasoning field",
    "probe.tools.call": "Tool call", "probe.tools.no_parser": "Tool parser", "probe.tools.name_leak": "Tool name",
    "probe.tools.invalid_json": "Tool arguments JSON", "probe.tools.stream": "Streamed tool call",
    "probe.tools.stream_duplicated": "Streamed argument fragments", "probe.stream.error_chunk": "Mid-stream errors",
    "probe.stream.framing": "SSE framing", "probe.responses": "Responses API",
    "probe.responses.function_call": "Responses function call", "probe.responses.reasoning": "Responses reasoning events",
    "probe.responses.tool_output": "Tool output in a second turn",
    "probe.structured_output": "Structured output", "metrics.saturation": "Saturation (/metrics)",
    "metrics.ttft": "Time to first token",
}

PORT_HINT = "vLLM 8000, SGLang 30000, llama.cpp 8080, Ollama 11434, LMDeploy 23333, LM Studio 1234, LiteLLM 4000"


def builtin_fix(fid: str, engine: str, target: "TargetResult") -> str:
    e = engine
    if fid == "reach.refused":
        return f"start the server or fix host/port (defaults: {PORT_HINT})"
    if fid == "reach.reset":
        return "check the port speaks HTTP (not a database, SSH, or a TLS-only port) and the server log for crashes"
    if fid == "reach.dns":
        return "check the host name (try the IP address)"
    if fid == "reach.tls":
        return "use http:// for a plain-HTTP server, or fix the server's certificate"
    if fid == "reach.timeout":
        return "check that the server is up and not overloaded; raise --timeout for slow hardware"
    if fid == "reach.not_llm":
        return "point at the base URL of the OpenAI-compatible server (it answers GET /v1/models)"
    if fid == "reach.redirect":
        return "check the redirect target and run the check against it directly (the API key is not sent to another host)"
    if fid == "auth.required":
        return "pass the server's key with --api-key or OPENAI_API_KEY"
    if fid == "health":
        if e == "litellm":
            return "the proxy is up; fix the backend it routes this model to (check it directly with gptoss-doctor check)"
        return "the engine reports unhealthy: read its log, then restart it"
    if fid == "engine.version":
        return {"vllm": "upgrade vLLM (>= 0.10.2 for gpt-oss tool calls) and start it with "
                        "--enable-auto-tool-choice --tool-call-parser openai",
                "ollama": "upgrade Ollama and re-pull the model (ollama pull gpt-oss:20b)",
                "lmstudio": "upgrade LM Studio (>= 0.3.23)",
                "tgi": "serve gpt-oss with vLLM, SGLang, llama.cpp or Ollama"}.get(e, "upgrade the engine")
    if fid == "models.gpt_oss":
        return "serve openai/gpt-oss-20b or -120b, or choose the model with --model"
    if fid == "models.context":
        return {"vllm": "start vLLM with --max-model-len 131072 (or what fits in memory)",
                "sglang": "start SGLang with --context-length 131072", "llama.cpp": "start llama-server with -c 131072",
                "ollama": "set OLLAMA_CONTEXT_LENGTH or num_ctx (e.g. 32768+)"}.get(e, "serve gpt-oss with a context of 32k tokens or more")
    if fid in ("probe.tools.no_parser", "probe.tools.call"):
        return {"vllm": "use vLLM >= 0.10.2 and start it with --enable-auto-tool-choice --tool-call-parser openai",
                "sglang": "start SGLang with --tool-call-parser gpt-oss",
                "llama.cpp": "use a current llama-server build with the model's chat template (--jinja, the default "
                             "in current builds; never --no-jinja)",
                "lmdeploy": "start LMDeploy with --tool-call-parser gpt-oss (openai_harmony installed)"}.get(
            e, "enable the engine's gpt-oss tool-call parser")
    if fid in ("probe.reasoning", "probe.harmony_leak", "probe.flattened_channels"):
        if e == "vllm" and _vtuple(target.version) >= (0, 10, 1):
            # vLLM picks the gpt-oss reasoning parser itself since 0.10.1 (vllm-project/vllm#23430)
            return (f"vLLM {target.version} parses gpt-oss reasoning by itself: raw or missing reasoning here means "
                    "the output was not valid Harmony (check the model files, weights and kernels) or something "
                    "between client and server rewrites the answer; /v1/completions strips special tokens by design")
        return {"vllm": "start vLLM with --reasoning-parser openai_gptoss (and a current release)",
                "sglang": "start SGLang with --reasoning-parser gpt-oss (and keep separate_reasoning on)",
                "llama.cpp": "do not set --reasoning-format none (the default splits reasoning into "
                             "reasoning_content); keep the model's chat template (--jinja)",
                "lmdeploy": "install openai_harmony next to LMDeploy so it uses the Harmony parser"}.get(
            e, "enable the engine's gpt-oss reasoning parser; clients must not send raw Harmony back")
    if fid == "probe.tools.stream_duplicated":
        return "upgrade the engine (LMDeploy: PR #4023); meanwhile use non-streamed tool calls"
    if fid == "probe.tools.name_leak":
        return "upgrade the engine; clients can cut tool names at the first '<|'"
    if fid.startswith("eos."):
        return "refresh generation_config.json so eos_token_id is [200002, 199999, 200012] (gptoss-doctor fix-config), then restart"
    if fid == "probe.responses" and not target.health_failed:
        return "read the error text and the server log for this request (see the references)"
    if fid in ("probe.chat", "probe.stream.framing", "probe.tools.stream", "probe.responses.tool_output", "probe.responses"):
        if target.health_failed:
            return "the engine is unhealthy (see the health check): read its log and restart it"
    return DEFAULT_FIXES.get(fid, "")


DEFAULT_FIXES = {
    "probe.responses.tool_output": "upgrade the engine; send tool results as function_call_output items (Responses) "
                                   "or role=tool messages with tool_call_id (Chat Completions)",
    "probe.responses.function_call": "upgrade the engine; until then use function tools through /v1/chat/completions",
    "probe.responses.reasoning": "upgrade the engine or enable its reasoning parser; reasoning events are optional for clients",
    "probe.stream.framing": "read the server log for this request; upgrade the engine",
    "probe.stream.error_chunk": "read the error text: it names the failing component (see the references)",
    "probe.harmony_error": "read the error text: it names the failing token or header (see the references)",
    "probe.chat": "read the server log for this request; check the model loaded fully",
    "probe.tools.invalid_json": "upgrade the engine's gpt-oss tool parser; clients should validate arguments before use",
    "probe.tools.stream": "use non-streamed tool calls until the engine is upgraded",
    "probe.tools.call": "enable the engine's gpt-oss tool-call parser",
    "tokenizer.special_tokens": "serve the official openai/gpt-oss tokenizer files (tokenizer.json, tokenizer_config.json)",
    "models.listed": "check --served-model-name and that the model finished loading",
    "engine.identified": "nothing to fix; the checks still run with generic expectations",
    "probe.structured_output": "upgrade the engine's structured-output (guided decoding) support for gpt-oss; until "
                               "then validate JSON on the client or ask for JSON in the prompt without response_format",
}


@dataclass
class CheckOptions:
    api_key: Optional[str] = None
    timeout: float = 30.0
    model: Optional[str] = None
    model_dir: Optional[str] = None
    quick: bool = False
    deep: bool = False
    concurrency: int = 4


@dataclass
class TargetResult:
    url: str
    reachable: bool = False
    llm_server: bool = False
    engine: str = "unknown"
    version: Optional[str] = None
    engine_evidence: list[str] = field(default_factory=list)
    models: list = field(default_factory=list)  # engines.ModelInfo
    model: Optional[str] = None  # the model probed
    checks: list[Finding] = field(default_factory=list)
    auth_problem: bool = False
    health_failed: bool = False
    requests: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return self.code(strict=False)

    def code(self, strict: bool) -> int:
        if self.auth_problem:
            return EXIT_AUTH
        if not self.llm_server:
            return EXIT_UNREACHABLE
        counts = summarize(self.checks)
        if counts["fail"] or counts["error"] or (strict and counts["warn"]):
            return EXIT_PROBLEMS
        return EXIT_OK

    def to_json(self) -> dict:
        return {
            "url": self.url, "reachable": self.reachable, "llm_server": self.llm_server,
            "engine": {"name": self.engine, "version": self.version, "evidence": self.engine_evidence},
            "models": [m.to_json() for m in self.models], "model": self.model,
            "checks": [f.to_json() for f in self.checks], "summary": summarize(self.checks),
            "requests": self.requests, "seconds": round(self.seconds, 3), "notes": self.notes,
        }


def exit_code(results: list[TargetResult], strict: bool = False) -> int:
    """Precedence across targets: 4 (auth) > 3 (unreachable) > 1 (problems) > 0."""
    codes = {r.code(strict) for r in results}
    for c in (EXIT_AUTH, EXIT_UNREACHABLE, EXIT_PROBLEMS):
        if c in codes:
            return c
    return EXIT_OK


# -- URLs ---------------------------------------------------------------------------------------------

def normalize_url(raw: str) -> tuple[str, list[str]]:
    """A base URL from user input; notes say what was assumed. Malformed -> UsageError."""
    notes: list[str] = []
    s = raw.strip()
    raw = re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://)?[^/@\s]*@", r"\1***@", s)  # what messages may show
    if not s or any(c.isspace() for c in s):
        raise UsageError(f"malformed URL {raw!r}", hint="use http://HOST:PORT")
    if "://" not in s:
        s = "http://" + s
        notes.append(f"no scheme in {raw!r}: assuming http://")
    try:
        parts = urlsplit(s)
    except ValueError as exc:  # e.g. "Invalid IPv6 URL" for http://[bad
        raise UsageError(f"malformed URL {raw!r}: {exc}", hint="use http://HOST:PORT") from None
    if parts.scheme not in ("http", "https"):
        raise UsageError(f"unsupported URL scheme in {raw!r}", hint="use http:// or https://")
    try:
        port = parts.port
    except ValueError:
        raise UsageError(f"malformed URL {raw!r}: bad port", hint="use http://HOST:PORT") from None
    if not parts.hostname:
        raise UsageError(f"malformed URL {raw!r}: no host", hint="use http://HOST:PORT")
    try:  # a host name must be encodable: bytes that are not UTF-8, or an invalid IDN, are a usage error
        parts.hostname.encode("idna")
        s.encode("utf-8")
    except (UnicodeError, ValueError):
        shown = raw.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        raise UsageError(f"malformed URL {shown!r}: the host name is not valid", hint="use http://HOST:PORT") from None
    del port
    path = parts.path.rstrip("/")
    for suffix in ("/chat/completions", "/models", "/responses", "/completions"):
        if path.endswith("/v1" + suffix):
            path = path[: -len(suffix)]
    if path.endswith("/v1"):
        path = path[:-3]
        notes.append("dropped the trailing /v1 (the doctor adds the paths itself)")
    return urlunsplit((parts.scheme, parts.netloc, path, "", "")), notes


def public_url(url: str) -> str:
    """The URL without user:password."""
    parts = urlsplit(url)
    if parts.username or parts.password:
        netloc = parts.hostname or ""
        if parts.port:
            netloc += f":{parts.port}"
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return url


# -- findings -------------------------------------------------------------------------------------------

class Collector:
    def __init__(self) -> None:
        self.obs: dict[str, list] = {}
        self.health_failed = False

    def add(self, fid: str, status: str, detail: str = "", evidence: Optional[list] = None,
            error_text: str = "", fix: str = "") -> None:
        if fid not in FINDING_IDS:
            raise ValueError(f"unknown finding id {fid}")
        from gptoss_doctor.probes import Obs

        self.obs.setdefault(fid, []).append(Obs(fid, status, detail, list(evidence or []), error_text, fix))

    def extend(self, observations: list) -> None:
        for o in observations:
            if o.id not in FINDING_IDS:
                raise ValueError(f"unknown finding id {o.id}")
            self.obs.setdefault(o.id, []).append(o)

    def merged(self) -> list[tuple[str, str, str, list[str], list[str], str]]:
        out = []
        for fid in sorted(self.obs, key=lambda f: ORDER.get(f, 999)):
            group = self.obs[fid]
            worst = max(SEVERITY[o.status] for o in group)
            top = [o for o in group if SEVERITY[o.status] == worst]
            status = top[0].status
            details = list(dict.fromkeys(o.detail for o in top if o.detail))
            if status in ("pass", "skip") and len(details) > 1:  # one line is enough when all is well
                details = [f"{details[0]} (+{len(details) - 1} more)"]
            evidence = list(dict.fromkeys(e for o in top for e in o.evidence))
            errors = list(dict.fromkeys(o.error_text for o in top if o.error_text))
            fix = next((o.fix for o in top if o.fix), "")
            out.append((fid, status, "; ".join(details), evidence, errors, fix))
        return out


_KB_CACHE: dict[str, Any] = {}


def _kb_entries() -> list:
    if "entries" not in _KB_CACHE:
        try:
            from gptoss_doctor import kb

            _KB_CACHE["entries"] = kb.load()
        except Exception as exc:  # noqa: BLE001 - a broken KB must not break the check
            _KB_CACHE["entries"] = []
            _KB_CACHE["error"] = str(exc)
    return _KB_CACHE["entries"]


HARMONY_USERS = ("vllm", "sglang", "lmdeploy", "trtllm")
# symptoms whose engine-specific KB entry carries a better fix than the generic built-in one
KB_FIX_FIRST = {"probe.tools.stream_duplicated", "probe.flattened_channels", "probe.tools.no_parser"}
# ... unless the built-in fix names the engine's own flag
OWN_FIX = {"probe.tools.no_parser": ("vllm", "sglang", "llama.cpp", "lmdeploy"),
           "probe.flattened_channels": ("vllm", "sglang", "llama.cpp", "lmdeploy")}
SYMPTOM_IDS = {"probe.tools.stream_duplicated", "probe.tools.name_leak", "probe.flattened_channels", "probe.harmony_leak",
               "probe.tools.no_parser", "probe.tools.invalid_json", "eos.local_generation_config", "eos.call_token",
               "eos.end_token", "eos.return_token", "probe.harmony_error", "probe.stream.error_chunk"}


def _engine_ok(entry: Any, engine: str) -> bool:
    """Does a KB entry apply to this engine? ('harmony' entries apply to engines that embed openai-harmony.)"""
    if engine in ("unknown", ""):
        return True
    return engine in entry.engines or "any" in entry.engines or ("harmony" in entry.engines and engine in HARMONY_USERS)


def match_errors(texts: list[str], engine: str) -> list:
    """Matcher results (best first) for server error texts; [] when the matcher is unavailable."""
    out, seen = [], set()
    try:
        from gptoss_doctor.matching import match_text
    except Exception:  # noqa: BLE001
        return []
    for t in texts[:3]:
        try:
            ms = match_text(t[:4000], engine=None if engine == "unknown" else engine, limit=5)
        except Exception:  # noqa: BLE001
            continue
        for m in ms:
            if m.entry.id not in seen and getattr(m, "confidence", "low") in ("high", "medium"):
                seen.add(m.entry.id)
                out.append(m)
    return out


def build_finding(fid: str, status: str, detail: str, evidence: list[str], errors: list[str], fix: str,
                  engine: str, target: TargetResult) -> Finding:
    f = Finding(id=fid, status=status, title=TITLES.get(fid, FINDING_IDS[fid]), detail=detail,
                evidence=evidence[:6])
    if status in ("pass", "skip"):
        return f
    if status == "error":  # the doctor could not finish this check: no KB guess, only our own hint
        f.fix = fix or ""
        return f
    entries = _kb_entries()
    matches = match_errors(errors, engine) if errors else []
    named = [e for e in entries if fid in e.findings]
    version = target.version or ""
    vshort = ".".join(str(x) for x in _vtuple(version)[:3])

    def version_hit(e: Any) -> bool:
        return bool(vshort) and vshort in str((e.versions or {}).get("affected", ""))

    named_engine = [e for e in named if _engine_ok(e, engine)]
    if fid == "engine.version":  # only entries that name this very version as affected
        named_engine = [e for e in named_engine if engine in e.engines and version_hit(e)]
    # the engine's own entries first (those naming this version first of all), then 'any' / 'harmony' ones
    named_engine.sort(key=lambda e: (not version_hit(e), engine not in e.engines))
    chosen, ids = [], set()
    ordered = [m.entry for m in matches if fid in m.entry.findings or m.confidence == "high"] + named_engine
    if fid in SYMPTOM_IDS:  # the same symptom on another engine is still a useful reference
        ordered += named
    for e in ordered:
        if e.id not in ids:
            ids.add(e.id)
            chosen.append(e)
    f.kb = [e.id for e in chosen]
    f.references = list(dict.fromkeys(u for e in chosen for u in e.urls))
    if matches:
        f.evidence.append("matched: " + ", ".join(f"{m.entry.id} ({m.confidence})" for m in matches[:3]))
    high = next((m.entry for m in matches if m.confidence == "high"), None)
    kb_fix = lambda e: e.fix_lines()[0] if e.fix_lines() else ""  # noqa: E731
    applicable = [e for e in chosen if _engine_ok(e, engine)]
    exact = [e for e in named_engine if engine in e.engines] \
        if fid in KB_FIX_FIRST and engine not in OWN_FIX.get(fid, ()) else []
    f.fix = (kb_fix(high) if high else "") or (kb_fix(exact[0]) if exact else "") or fix or \
        builtin_fix(fid, engine, target) or (kb_fix(applicable[0]) if applicable else "")
    return f


# -- one target ------------------------------------------------------------------------------------------

def _vtuple(v: Optional[str]) -> tuple:
    nums = re.findall(r"\d+", (v or "").split("+")[0])
    return tuple(int(n) for n in nums[:4])


def version_obs(engine: str, version: Optional[str]) -> tuple[str, str]:
    vt = _vtuple(version)
    if not version or not vt:
        return "skip", "the engine does not expose its version" if engine != "unknown" else "engine unknown"
    if engine == "vllm" and vt < (0, 10, 2):
        return "warn", f"vLLM {version} has no gpt-oss tool parser for Chat Completions (added in 0.10.2) and early Harmony parsing bugs"
    if engine == "ollama" and vt < (0, 11, 4):
        return "warn", f"Ollama {version} predates the gpt-oss tool-template fixes of 0.11.4"
    if engine == "tgi":
        return "warn", f"TGI {version} has no gpt-oss model code (maintenance mode); serve gpt-oss with another engine"
    if engine == "lmstudio" and vt < (0, 3, 23):
        return "warn", f"LM Studio {version} returns gpt-oss reasoning inside content (fixed in 0.3.23)"
    return "pass", f"no known gpt-oss problem listed for {version}"


async def check_target(url: str, opts: CheckOptions, notes: Optional[list[str]] = None,
                       progress: Optional[Callable[[str], None]] = None) -> TargetResult:
    from gptoss_doctor import engines as E
    from gptoss_doctor import probes as P
    from gptoss_doctor.http import Client

    t0 = time.monotonic()
    res = TargetResult(url=public_url(url), notes=list(notes or []))
    col = Collector()
    parts = urlsplit(url)
    client = Client(url, api_key=opts.api_key, timeout=opts.timeout)
    if parts.username and not opts.api_key:
        client.api_key = None
    try:
        await _check(client, res, col, opts, E, P, progress or (lambda text: None))
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - one odd server must not take the other targets down
        if _debug():
            raise
        col.add("engine.identified", "error", f"internal error while checking this server: {type(exc).__name__}: "
                f"{str(exc)[:200]} (a bug in gptoss-doctor: run with --debug and report it)")
    finally:
        await client.aclose()
    res.requests = client.requests
    res.health_failed = col.health_failed
    for fid, status, detail, evidence, errors, fix in col.merged():
        res.checks.append(build_finding(fid, status, detail, evidence, errors, fix, res.engine, res))
    res.seconds = time.monotonic() - t0
    return res


async def _check(client, res: TargetResult, col: Collector, opts: CheckOptions, E, P,
                 progress: Callable[[str], None]) -> None:
    where = public_url(client.base_url)
    progress(f"{where}: discovering the engine …")
    d = await E.discover(client)
    res.reachable, res.llm_server = d.reachable, d.llm_server
    res.engine, res.version, res.engine_evidence = d.engine, d.version, d.engine_evidence
    res.models = d.models
    if not d.reachable:
        r = d.network_error
        kind = r.error if r is not None else "other"
        banner = await _banner(client.base_url) if kind == "timeout" else None
        if banner:
            # silence after a banner of another protocol is not an overloaded HTTP server
            col.add("reach.not_llm", "fail", f"the port speaks another protocol, not HTTP (it greets with "
                    f"{banner!r})", [f"first bytes from {where}: {banner!r}"],
                    fix="point the doctor at the HTTP port of the OpenAI-compatible server")
            res.reachable, res.llm_server = True, False
            return
        fid = {"dns": "reach.dns", "refused": "reach.refused", "tls": "reach.tls", "timeout": "reach.timeout",
               "reset": "reach.reset"}.get(kind, "reach.refused" if kind == "connect" else "reach.reset")
        col.add(fid, "fail", r.error_message if r is not None else "no answer", [f"GET {where}/v1/models"])
        res.llm_server = False
        return
    if d.redirect_to:
        col.add("reach.redirect", "fail", f"the server redirects to another host, port or scheme: {d.redirect_to} "
                "(not followed; the API key was not sent there)", [f"Location: {d.redirect_to}"])
        return
    if not d.llm_server and "redirects" in (d.responses["/v1/models"].error_message or ""):
        col.add("reach.redirect", "fail", "the server redirects in a loop (" + d.responses["/v1/models"].error_message
                + " on the same host)", [f"GET /v1/models -> {d.responses['/v1/models'].describe()}"[:200]],
                fix="fix the redirect configuration of the server or the proxy in front of it")
        return
    if not d.llm_server:
        m = d.responses["/v1/models"]
        root = d.responses["/"]
        ev = [f"GET /v1/models -> {m.describe()}"[:200]]
        if root.answered:
            ev.append(f"GET / -> HTTP {root.status} {root.content_type or ''} {root.snippet(80)}"[:200])
        server = next((x.headers.get("server") for x in d.responses.values() if x.headers.get("server")), None)
        if server:
            ev.append(f"Server: {server[:80]}")
        col.add("reach.not_llm", "fail", "the URL answers HTTP but not as an OpenAI-compatible LLM server "
                "(no JSON model list at /v1/models)", ev)
        return
    # authentication
    if d.auth_status:
        res.auth_problem = True
        where = d.auth_path
        if opts.api_key:
            fix = ("use the proxy's master key (LITELLM_MASTER_KEY) or one of its virtual keys: without a database "
                   "LiteLLM answers any other key with 'No connected db.'") if d.engine == "litellm" else \
                "check the key the server was started with (--api-key)"
            col.add("auth.required", "fail", f"the API key was rejected (HTTP {d.auth_status} on {where})",
                    [d.responses[where].snippet(160)], fix=fix)
        else:
            col.add("auth.required", "fail", f"the server requires an API key (HTTP {d.auth_status} on {where})",
                    [d.responses[where].snippet(160)])
    else:
        col.add("auth.required", "pass", "API key accepted" if opts.api_key else "no API key needed")
    _health(d, col)
    _engine(d, col)
    if d.auth_status:
        return
    model = _models(d, col, opts)
    res.model = model
    gpt = bool(model and d.model(model) and d.model(model).gpt_oss)
    jobs: list = [P.guard(E.enrich(client, d, model), "models.context"),
                  _tokenizer_guarded(E, client, d, model)]
    ctx = P.Ctx(client=client, model=model or "", engine=d.engine, gpt_oss=gpt)
    if model and not opts.quick:
        jobs.append(P.run_all(ctx, opts.deep))
    from gptoss_doctor.engines import ENGINE_LABELS

    progress(f"{where}: {ENGINE_LABELS.get(d.engine, d.engine)} {d.version or ''} — "
             + ("tokenizer and stop tokens …" if opts.quick or not model else f"probing {model} …"))
    out = await asyncio.gather(*jobs)
    late = client.seen_headers.get("x-litellm-version")
    if d.engine == "litellm" and not d.version and late:
        # LiteLLM puts its version on every completion (x-litellm-version), not on its discovery endpoints
        d.version = res.version = late
        d.engine_evidence.append(f"x-litellm-version: {late} (on a completion)")
        col.obs.pop("engine.identified", None)
        col.obs.pop("engine.version", None)
        _engine(d, col)
    if isinstance(out[0], list):  # enrich() failed inside: its error observation
        col.extend(out[0])
    if len(out) > 2:
        obs = out[2]
        col.extend(obs)
        proxy_fault = _proxy_backend_fault(d, obs)
        if proxy_fault:
            detail, fix, text = proxy_fault
            col.health_failed = True
            col.add("health", "fail", detail, [text[:200]], error_text=text[:2000], fix=fix)
        elif any(o.evidence and any("HTTP 401" in e or "HTTP 403" in e for e in o.evidence) for o in obs):
            res.auth_problem = True
            col.add("auth.required", "fail", "a probe was refused with HTTP 401/403")
        chat_down = [o for o in obs if o.id == "probe.chat" and o.status == "fail" and not P.HARMONY_ERROR_RE.search(
            o.error_text) and re.search(r"HTTP 5\d\d|no models? (?:are )?loaded|model is not loaded|loading model",
                                         o.detail, re.I)]
        if chat_down and not col.health_failed:
            col.health_failed = True
            col.add("health", "fail", "the health endpoint is OK but a plain chat fails: " + chat_down[0].detail,
                    error_text=chat_down[0].error_text)
    if col.health_failed:
        # one root cause, one failure: requests refused by a dead engine are not judged separately
        for fid, group in col.obs.items():
            for o in group:
                if fid.startswith("probe.") and fid != "probe.harmony_error" and o.status in ("fail", "error") \
                        and o.http_status is not None and (o.http_status >= 500 or o.http_status == 404):
                    o.status, o.detail = "skip", f"not judged, the engine is unhealthy ({o.detail})"
                    o.evidence, o.error_text = [], ""
    tok = out[1]
    if tok.status == "error" and col.health_failed:
        tok.status, tok.detail = "skip", f"not judged, the engine is unhealthy ({tok.detail})"
    if tok.status == "pass" and not gpt and model and d.model(model):
        # the name does not say gpt-oss, but the tokenizer is Harmony's: it is a gpt-oss checkpoint
        d.model(model).gpt_oss = True
        col.obs.pop("models.gpt_oss", None)
        col.add("models.gpt_oss", "pass", f"{model} has the Harmony tokenizer (gpt-oss under another name)")
        gpt = True
    if gpt or tok.status == "pass":
        col.add("tokenizer.special_tokens", tok.status, tok.detail, tok.evidence)
    if d.backends:
        res.engine_evidence.append("backend: " + "; ".join(d.backends[:3]))
        for o in col.obs.get("engine.identified", []):
            o.detail += " in front of " + "; ".join(d.backends[:3]) + " (check that backend directly too)"
    _models_context(d, col, model)
    _eos(d, col, opts, model, gpt, E)
    for fid, keys in (("probe.reasoning", ("reasoning_parser",)), ("probe.harmony_leak", ("reasoning_parser",)),
                      ("probe.flattened_channels", ("reasoning_parser",)),
                      ("probe.tools.no_parser", ("tool_call_parser",)), ("probe.tools.call", ("tool_call_parser",)),
                      ("models.context", ("context_length",))):
        for o in col.obs.get(fid, []):
            if o.status in ("fail", "warn"):
                o.evidence.extend(d.config_evidence[k] for k in keys if k in d.config_evidence)
    if opts.quick:
        col.add("probe.chat", "skip", "--quick: behavioural probes skipped")


def _proxy_backend_fault(d, obs: list) -> Optional[tuple[str, str, str]]:
    """(detail, fix, error text) when a LiteLLM proxy's failures come from its backend, not from the proxy or a flag:
    the backend rejected the proxy's key, or every deployment is in cooldown after earlier failures."""
    if d.engine != "litellm":
        return None
    texts = [o.error_text or o.detail for o in obs if o.status in ("fail", "error")]
    auth = next((t for t in texts if "AuthenticationError" in t and ("model group" in t or "Exception -" in t)), None)
    if auth:
        return ("the backend behind the LiteLLM proxy rejected the proxy's API key (the proxy accepted yours)",
                "fix api_key in the proxy's model config (litellm_params.api_key, often os.environ/…) for this model",
                auth)
    cool = next((t for t in texts if "all_deployments_in_cooldown" in t or "No deployments available" in t), None)
    if cool:
        return ("every backend deployment of this model is in cooldown at the LiteLLM proxy (it failed before)",
                "fix the backend's failure first (check it directly), then retry after the cooldown", cool)
    return None


async def _banner(base_url: str, wait: float = 1.5) -> str | None:
    """The first bytes a port sends unasked (SSH, SMTP, FTP, Redis greet first; HTTP servers never do)."""
    from urllib.parse import urlsplit

    parts = urlsplit(base_url)
    if parts.scheme != "http" or not parts.hostname:
        return None
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(parts.hostname, parts.port or 80), wait)
    except (OSError, asyncio.TimeoutError):
        return None
    try:
        data = await asyncio.wait_for(reader.read(64), wait)
    except (OSError, asyncio.TimeoutError):
        data = b""
    finally:
        writer.close()
    text = data.decode("latin-1").split("\r")[0].split("\n")[0].strip()
    return text[:60] if text and not text.startswith("HTTP/") else None


async def _tokenizer_guarded(E, client, d, model):
    try:
        return await E.tokenizer_check(client, d, model)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001
        if _debug():
            raise
        return E.TokenizerCheck("error", f"internal error: {type(exc).__name__}: {exc} (a bug in gptoss-doctor)")


def _debug() -> bool:
    import os

    return os.environ.get("GPTOSS_DOCTOR_DEBUG", "") not in ("", "0", "false", "no")


def _health(d, col: Collector) -> None:
    r = d.responses
    h = r["/health"]
    if d.engine == "ollama" and r["/"].ok:
        col.add("health", "pass", "GET / answers 'Ollama is running'")
        return
    if d.engine == "litellm" and r["/health/liveliness"].answered:
        lv, rd = r["/health/liveliness"], r["/health/readiness"]
        hobj = h.json_object() if h.ok else None
        bad = [e for e in (hobj or {}).get("unhealthy_endpoints") or [] if isinstance(e, dict)]
        if lv.ok and bad:
            # the proxy is up; what is down is the backend it routes to
            where = ", ".join(str(e.get("api_base") or e.get("model") or "?") for e in bad[:3])
            col.health_failed = True
            col.add("health", "fail", f"the LiteLLM proxy is up, but its backend is unhealthy: {where}",
                    [str(bad[0].get("error") or "")[:200]], error_text=str(bad[0].get("error") or "")[:2000],
                    fix=f"start or fix the backend behind the proxy, then check it directly: gptoss-doctor check "
                        f"{str(bad[0].get('api_base') or 'BACKEND_URL').removesuffix('/v1')}")
        elif lv.ok and (rd.ok or not rd.answered):
            col.add("health", "pass", "GET /health/liveliness and /health/readiness answer OK")
        else:
            col.add("health", "fail", f"LiteLLM health: liveliness {lv.describe()}, readiness {rd.describe()}")
        return
    if h.ok and isinstance(h.json_object(), dict) and "error" in h.json_object():
        # LM Studio answers unknown routes with HTTP 200 {"error": "Unexpected endpoint or method. (GET /health)"}
        col.add("health", "skip", f"no health endpoint (GET /health -> {h.snippet(100)})")
    elif h.ok:
        obj = h.json_object()
        status = obj.get("status") if obj else None
        if isinstance(status, str) and status.lower() not in ("ok", "healthy", "sleeping", "ready", "alive"):
            col.add("health", "warn", f"GET /health -> 200 with status {status!r}")
        else:
            col.add("health", "pass", f"GET /health -> {h.status}" + (f" {status}" if status else ""))
    elif h.status is not None and (h.status >= 500 or h.status == 429):
        col.health_failed = True
        col.add("health", "fail", f"GET /health -> {h.describe()}", [h.snippet(200)] if h.body else [],
                error_text=h.text[:2000])
    elif h.error:  # e.g. SGLang's /health runs a generation and may be slow under load
        col.add("health", "warn", f"GET /health: {h.error_message}")
    else:
        col.add("health", "skip", f"no health endpoint (GET /health -> HTTP {h.status})")


def _engine(d, col: Collector) -> None:
    from gptoss_doctor.engines import ENGINE_LABELS

    if d.engine == "unknown":
        col.add("engine.identified", "warn", "engine not recognised (an OpenAI-compatible server of unknown make)")
    else:
        label = ENGINE_LABELS.get(d.engine, d.engine)
        hidden = "(version behind the API key)" if d.auth_status else "(version not exposed)"
        col.add("engine.identified", "pass", f"{label} {d.version or hidden}", d.engine_evidence[:2])
    status, detail = version_obs(d.engine, d.version)
    if status == "skip" and d.auth_status and d.engine != "unknown":
        detail = "the version endpoint needs the API key"
    col.add("engine.version", status, detail)


def _models(d, col: Collector, opts: CheckOptions) -> Optional[str]:
    if not d.models:
        col.add("models.listed", "fail", f"GET /v1/models: {d.models_error or 'no models listed'}")
        return opts.model
    ids = [m.id for m in d.models]
    if opts.model and opts.model not in ids:
        col.add("models.listed", "fail", f"--model {opts.model!r} is not served (served: {', '.join(ids[:5])})")
        return None
    col.add("models.listed", "pass", f"{len(ids)} model(s): {', '.join(ids[:5])}")
    chosen = opts.model or next((m.id for m in d.models if m.gpt_oss), ids[0])
    gpt = [m.id for m in d.models if m.gpt_oss]
    m = d.model(chosen)
    if m is not None and m.gpt_oss:
        col.add("models.gpt_oss", "pass", f"{chosen} is gpt-oss")
    elif gpt:
        col.add("models.gpt_oss", "warn", f"{chosen} is not gpt-oss (gpt-oss served: {', '.join(gpt)})")
    else:
        col.add("models.gpt_oss", "warn", f"no served model looks like gpt-oss ({', '.join(ids[:5])}); probing {chosen}")
    return chosen


def _models_context(d, col: Collector, model: Optional[str]) -> None:
    m = d.model(model) if model else None
    if m is None:
        return
    n = m.max_model_len
    if n is None:
        col.add("models.context", "skip", "the engine does not report the context length")
    elif n > 10 ** 12:
        col.add("models.context", "warn", f"context length {n} is the tokenizer's 'unset' sentinel, not the served context")
    elif n < 8192:
        col.add("models.context", "warn", f"context length {n} is small for gpt-oss (reasoning + tools need 8k+; trained 131072)",
                [m.context_source])
    elif m.gpt_oss and n > 131072:
        col.add("models.context", "warn", f"context length {n} exceeds gpt-oss's trained 131072", [m.context_source])
    else:
        col.add("models.context", "pass", f"{n} tokens ({m.context_source})")


def _eos(d, col: Collector, opts: CheckOptions, model: Optional[str], gpt: bool, E) -> None:
    for kind, source, ids in d.stop_sources:
        ev = [f"{source}: {ids}"]
        if kind == "eos_list":
            if E.CALL_ID in ids:
                col.add("eos.call_token", "pass", f"{source} includes 200012")
            else:
                col.add("eos.call_token", "fail", f"{source} lacks <|call|> 200012: {ids}", ev)
            if E.RETURN_ID in ids:
                col.add("eos.return_token", "pass", f"{source} includes 200002")
            else:
                col.add("eos.return_token", "fail", f"{source} lacks <|return|> 200002: {ids}", ev)
            if E.END_ID in ids:
                col.add("eos.end_token", "fail", f"{source} makes <|end|> 200007 a stop token: {ids}", ev)
            else:
                col.add("eos.end_token", "pass", f"{source} does not stop at <|end|>")
        elif kind == "eos_token":
            if ids == [E.RETURN_ID]:
                col.add("eos.return_token", "pass", f"{source} is <|return|> 200002")
            elif ids == [E.END_ID]:
                col.add("eos.end_token", "fail", f"{source} is <|end|> 200007: generation would stop after the "
                        "first message", ev)
        elif kind == "stop_strings" and E.END_ID in ids:
            col.add("eos.end_token", "warn", f"{source} includes <|end|>: answers can stop after the analysis message", ev)
    m = d.model(model) if model else None
    path = E.find_generation_config(model, opts.model_dir, m.root if m else None)
    if path is None:
        if opts.model_dir:
            col.add("eos.local_generation_config", "error", f"no generation_config.json in {opts.model_dir}")
        elif gpt and "eos.call_token" not in col.obs:
            col.add("eos.call_token", "skip", "no endpoint exposes the stop-token list and no local "
                    "generation_config.json was found (give --model-dir)")
        return
    ids, problem = E.read_eos(path)
    if ids is None:
        col.add("eos.local_generation_config", "fail" if opts.model_dir else "warn", f"{path}: {problem}")
        return
    ev = [f"{path}: eos_token_id {ids}"]
    missing = [t for t in E.EXPECTED_EOS if t not in ids]
    # what the server did in this very run outweighs a file it may not be reading
    observed_call_stop = any(o.status == "pass" and "stopped at <|call|>" in o.detail
                             for o in col.obs.get("eos.call_token", []))
    if missing == [E.CALL_ID] and observed_call_stop and E.END_ID not in ids:
        col.add("eos.local_generation_config", "warn", f"{path} is stale (eos_token_id {ids} lacks <|call|> 200012), "
                "but the running server is not using it: generation stopped at <|call|> in this run", ev,
                fix="refresh the file anyway (gptoss-doctor fix-config) so a restart from it stays right")
        return
    if not missing and E.END_ID not in ids:
        col.add("eos.local_generation_config", "pass", f"eos_token_id {ids} ({path})")
    else:
        bits = []
        if missing:
            bits.append("missing " + ", ".join(str(t) for t in missing))
        if E.END_ID in ids:
            bits.append("includes <|end|> 200007")
        col.add("eos.local_generation_config", "fail", f"eos_token_id {ids}: {'; '.join(bits)} ({path})", ev)
    reads_it = d.engine in ("vllm", "sglang", "lmdeploy", "trtllm", "unknown")
    if reads_it:
        if E.CALL_ID not in ids:
            col.add("eos.call_token", "fail", f"the local generation_config.json that {d.engine} reads lacks <|call|> 200012", ev)
        else:
            col.add("eos.call_token", "pass", "the local generation_config.json includes <|call|> 200012")
        if E.END_ID in ids:
            col.add("eos.end_token", "fail", "the local generation_config.json makes <|end|> 200007 a stop token", ev)


# -- several targets -----------------------------------------------------------------------------------

async def run_targets(urls: list[tuple[str, list[str]]], opts: CheckOptions,
                      progress: Optional[Callable[[str], None]] = None) -> list[TargetResult]:
    sem = asyncio.Semaphore(max(1, opts.concurrency))
    done = 0

    async def one(url: str, notes: list[str]) -> TargetResult:
        nonlocal done
        async with sem:
            r = await check_target(url, opts, notes, progress)
            done += 1
            if progress and len(urls) > 1:
                progress(f"{done}/{len(urls)} targets checked")
            return r

    return list(await asyncio.gather(*(one(u, n) for u, n in urls)))


def run(urls: list[tuple[str, list[str]]], opts: CheckOptions,
        progress: Optional[Callable[[str], None]] = None) -> list[TargetResult]:
    return asyncio.run(run_targets(urls, opts, progress))


# -- output ------------------------------------------------------------------------------------------------

def redact(obj: Any, secrets: list[str]) -> Any:
    """``obj`` without the given secrets nor any other known one (gptoss_doctor.redact is the one redactor)."""
    from gptoss_doctor.redact import redact as _redact

    return _redact(obj, secrets)


def payload(results: list[TargetResult], strict: bool) -> dict:
    allf = [f for r in results for f in r.checks]
    code = exit_code(results, strict)
    return {"ok": code == 0, "targets": [r.to_json() for r in results], "summary": summarize(allf), "exit_code": code}


def heading(r: TargetResult) -> str:
    from gptoss_doctor.engines import ENGINE_LABELS

    bits = [r.url]
    if r.llm_server:
        eng = ENGINE_LABELS.get(r.engine, r.engine)
        bits.append(eng + (f" {r.version}" if r.version else ""))
        if r.model:
            bits.append(r.model)
    elif r.reachable:
        bits.append("no LLM server")
    else:
        bits.append("unreachable")
    return " · ".join(bits)


def render_markdown(results: list[TargetResult], argv_line: str) -> str:
    """A report to paste into an issue. Everything a server said goes through the one Markdown escaper."""
    from gptoss_doctor import __version__
    from gptoss_doctor.output import markdown_code as code
    from gptoss_doctor.output import markdown_text as md

    marks = {"pass": "✅", "warn": "⚠️", "fail": "❌", "error": "❌", "skip": "➖"}
    lines = ["### gptoss-doctor check report", "", f"gptoss-doctor {__version__} · {code(argv_line)}", ""]
    for r in results:
        lines.append(f"#### {md(heading(r))}")
        lines.append("")
        if r.models:
            lines.append("Models: " + ", ".join(f"{code(m.id)} (context {m.max_model_len or '?'}"
                                                 f"{', gpt-oss' if m.gpt_oss else ''})" for m in r.models[:5]))
            lines.append("")
        lines.append("| | check | result |")
        lines.append("|---|---|---|")
        for f in r.checks:
            lines.append(f"| {marks.get(f.status, '?')} | `{f.id}` | {md(f.detail or '')} |")
        problems = [f for f in r.checks if f.status in ("fail", "error", "warn")]
        if problems:
            lines.append("")
            lines.append("<details><summary>Evidence, fixes and references</summary>")
            lines.append("")
            for f in problems:
                lines.append(f"- **{f.id}** ({f.status}): {md(f.detail)}")
                for ev in f.evidence[:4]:
                    lines.append(f"  - evidence: {code(ev)}")
                if f.fix:
                    lines.append(f"  - fix: {md(f.fix)}")
                for ref in f.references[:5]:
                    lines.append(f"  - see: {ref if ref.startswith('https://') else md(ref)}")
            lines.append("")
            lines.append("</details>")
        lines.append("")
    from gptoss_doctor.results import summary_line

    lines.append("**Summary:** " + summary_line(summarize([f for r in results for f in r.checks])))
    return "\n".join(lines) + "\n"

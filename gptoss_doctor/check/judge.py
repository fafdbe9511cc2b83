"""check, stage 3 (judge): observations become findings: one status per finding id, the engine's version rules,
health, models, context and stop tokens, and the doctor's own fix when no knowledge-base entry gives a better one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from gptoss_doctor import rx as _rx
from gptoss_doctor import engines
from gptoss_doctor.check.finding_ids import FINDING_IDS
from gptoss_doctor.check.localfiles import find_generation_config, local_model_type, read_eos
from gptoss_doctor.net.http import is_loopback
from gptoss_doctor.check.result import CheckOptions
from gptoss_doctor.engines.profile import vtuple
from gptoss_doctor.harmony.tokens import CALL_ID, END_ID, EXPECTED_EOS, RETURN_ID

if TYPE_CHECKING:
    from gptoss_doctor.check.result import TargetResult

SEVERITY = {"skip": 0, "pass": 1, "warn": 2, "error": 3, "fail": 4}

ORDER = {fid: i for i, fid in enumerate(FINDING_IDS)}


REASONING_FIX = "enable the engine's gpt-oss reasoning parser; clients must not send raw Harmony back"
EOS_FIX = "refresh generation_config.json so eos_token_id is [200002, 199999, 200012] (gptoss-doctor fix-config), then restart"


def builtin_fix(fid: str, engine: str, target: "TargetResult") -> str:
    """The doctor's own fix for a finding: the engine's wording (its profile) first, then the generic one."""
    if fid == "reach.refused":
        return f"start the server or fix host/port (defaults: {engines.port_hint()})"
    own = engines.get(engine).fix(fid, target)
    if own:
        return own
    if fid == "health":
        return "the engine reports unhealthy: read its log, then restart it"
    if fid == "probe.responses" and not target.health_failed:
        return "read the error text and the server log for this request (see the references)"
    if fid in ("probe.chat", "probe.stream.framing", "probe.tools.stream", "probe.responses.tool_output", "probe.responses"):
        if target.health_failed:
            return "the engine is unhealthy (see the health check): read its log and restart it"
    return GENERIC_FIXES.get(fid, "")


GENERIC_FIXES = {
    "reach.reset": "check the port speaks HTTP (not a database, SSH, or a TLS-only port) and the server log for crashes",
    "reach.dns": "check the host name (try the IP address)",
    "reach.tls": "use http:// for a plain-HTTP server, or fix the server's certificate",
    "reach.timeout": "check that the server is up and not overloaded; raise --timeout for slow hardware",
    "reach.not_llm": "point at the base URL of the OpenAI-compatible server (it answers GET /v1/models)",
    "reach.redirect": "check the redirect target and run the check against it directly (the API key is not sent to "
                      "another host)",
    "auth.required": "pass the server's key with --api-key or OPENAI_API_KEY",
    "engine.version": "upgrade the engine",
    "models.gpt_oss": "serve openai/gpt-oss-20b or -120b, or choose the model with --model",
    "models.context": "serve gpt-oss with a context of 32k tokens or more",
    "probe.tools.no_parser": "enable the engine's gpt-oss tool-call parser",
    "probe.reasoning": REASONING_FIX, "probe.harmony_leak": REASONING_FIX, "probe.flattened_channels": REASONING_FIX,
    "probe.tools.stream_duplicated": "upgrade the engine (LMDeploy: PR #4023); meanwhile use non-streamed tool calls",
    "probe.tools.name_leak": "upgrade the engine; clients can cut tool names at the first '<|'",
    **{fid: EOS_FIX for fid in ("eos.call_token", "eos.return_token", "eos.end_token", "eos.local_generation_config")},
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


class Collector:
    def __init__(self) -> None:
        self.obs: dict[str, list] = {}
        self.health_failed = False

    def add(self, fid: str, status: str, detail: str = "", evidence: Optional[list] = None,
            error_text: str = "", fix: str = "") -> None:
        if fid not in FINDING_IDS:
            raise ValueError(f"unknown finding id {fid}")
        from gptoss_doctor.check.probes import Obs

        self.obs.setdefault(fid, []).append(Obs(fid, status, detail, list(evidence or []), error_text, fix))

    def extend(self, observations: list) -> None:
        for o in observations:
            if o.id not in FINDING_IDS:
                raise ValueError(f"unknown finding id {o.id}")
            self.obs.setdefault(o.id, []).append(o)

    def merged(self) -> list[tuple[str, str, str, list[str], list[str], str, list[str]]]:
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
            kb_ids = list(dict.fromkeys(k for o in top for k in o.kb))
            out.append((fid, status, "; ".join(details), evidence, errors, fix, kb_ids))
        return out


def version_obs(engine: str, version: Optional[str]) -> tuple[str, str]:
    """(status, detail) of the engine version: a known gpt-oss gap of this version (the profile's rule) or none."""
    vt = vtuple(version)
    if not version or not vt:
        return "skip", "the engine does not expose its version" if engine != "unknown" else "engine unknown"
    rule = engines.get(engine).version_rule
    found = rule(version, vt) if rule else None
    return found or ("pass", f"no known gpt-oss problem listed for {version}")


def proxy_backend_fault(d, obs: list) -> Optional[tuple[str, str, str]]:
    """(detail, fix, error text) when a LiteLLM proxy's failures come from its backend, not from the proxy or a flag:
    the backend rejected the proxy's key, or every deployment is in cooldown after earlier failures."""
    if not engines.get(d.engine).is_proxy:
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


def judge_health(d, col: Collector) -> None:
    r = d.responses
    h = r["/health"]
    judge = engines.get(d.engine).judge_health
    if judge is not None and judge(d, col):  # the engine's own health rules (Ollama's root, LiteLLM's backends)
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


def judge_engine(d, col: Collector) -> None:
    if d.engine == "unknown":
        col.add("engine.identified", "warn", "engine not recognised (an OpenAI-compatible server of unknown make)")
    else:
        label = engines.label(d.engine)
        hint = engines.get(d.engine).version_hint
        hidden = "(version behind the API key)" if d.auth_status else f"(version not exposed{': ' + hint if hint else ''})"
        col.add("engine.identified", "pass", f"{label} {d.version or hidden}", d.engine_evidence[:2])
    status, detail = version_obs(d.engine, d.version)
    if status == "skip" and d.auth_status and d.engine != "unknown":
        detail = "the version endpoint needs the API key"
    col.add("engine.version", status, detail)


def judge_models(d, col: Collector, opts: CheckOptions) -> Optional[str]:
    if not d.models:
        col.add("models.listed", "fail", f"GET /v1/models: {d.models_error or 'no models listed'}")
        return opts.model
    ids = [m.id for m in d.models]
    if opts.model and opts.model not in ids:
        col.add("models.listed", "fail", f"--model {opts.model!r} is not served (served: {', '.join(ids[:5])})")
        return None
    only = engines.get(d.engine).only_responses
    if d.models_error and only:  # no model list to judge: the engine's own way named the model
        col.add("models.listed", "skip", f"no GET /v1/models: {only}; the served model: {', '.join(ids[:5])}",
                [m.context_source for m in d.models if m.context_source][:2])
    elif d.models_error:  # the list failed, but the engine's own way found the served model
        col.add("models.listed", "warn", f"GET /v1/models: {d.models_error}; the served model was found another "
                f"way: {', '.join(ids[:5])}", [m.context_source for m in d.models if m.context_source][:2])
    else:
        col.add("models.listed", "pass", f"{len(ids)} model(s): {', '.join(ids[:5])}")
    local_ev: dict[str, str] = {}
    for info in d.models:
        if not info.gpt_oss and is_loopback(d.url):  # a served path names this machine's folder only on loopback
            found = local_model_type(info.root, info.id)
            if found and found[0] == "gpt_oss":
                info.gpt_oss = True
                local_ev[info.id] = f"{found[1]}: model_type gpt_oss"
    chosen = opts.model or next((m.id for m in d.models if m.gpt_oss), ids[0])
    gpt = [m.id for m in d.models if m.gpt_oss]
    m = d.model(chosen)
    if m is not None and m.gpt_oss:
        col.add("models.gpt_oss", "pass", f"{chosen} is gpt-oss", [local_ev[chosen]] if chosen in local_ev else [])
    elif gpt:
        col.add("models.gpt_oss", "warn", f"{chosen} is not gpt-oss (gpt-oss served: {', '.join(gpt)})")
    else:
        col.add("models.gpt_oss", "warn", f"no served model looks like gpt-oss ({', '.join(ids[:5])}); probing {chosen}")
    return chosen


def judge_context(d, col: Collector, model: Optional[str]) -> None:
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


def judge_eos(d, col: Collector, opts: CheckOptions, model: Optional[str], gpt: bool) -> None:
    for kind, source, ids in d.stop_sources:
        ev = [f"{source}: {ids}"]
        if kind == "eos_list":
            if CALL_ID in ids:
                col.add("eos.call_token", "pass", f"{source} includes 200012")
            else:
                col.add("eos.call_token", "fail", f"{source} lacks <|call|> 200012: {ids}", ev)
            if RETURN_ID in ids:
                col.add("eos.return_token", "pass", f"{source} includes 200002")
            else:
                col.add("eos.return_token", "fail", f"{source} lacks <|return|> 200002: {ids}", ev)
            if END_ID in ids:
                col.add("eos.end_token", "fail", f"{source} makes <|end|> 200007 a stop token: {ids}", ev)
            else:
                col.add("eos.end_token", "pass", f"{source} does not stop at <|end|>")
        elif kind == "eos_token":
            if ids == [RETURN_ID]:
                col.add("eos.return_token", "pass", f"{source} is <|return|> 200002")
            elif ids == [END_ID]:
                col.add("eos.end_token", "fail", f"{source} is <|end|> 200007: generation would stop after the "
                        "first message", ev)
        elif kind == "stop_strings" and END_ID in ids:
            col.add("eos.end_token", "warn", f"{source} includes <|end|>: answers can stop after the analysis message", ev)
    m = d.model(model) if model else None
    # files on this machine are the server's only when the server runs here (or --model-dir names its folder):
    # a stale copy in this laptop's Hugging Face cache says nothing about a server on another host
    local = opts.model_dir or is_loopback(d.url)
    path = find_generation_config(model, opts.model_dir, m.root if m else None) if local else None
    if path is None:
        if opts.model_dir:
            col.add("eos.local_generation_config", "error", f"no generation_config.json in {opts.model_dir}")
        elif gpt and "eos.call_token" not in col.obs:
            col.add("eos.call_token", "skip", "no endpoint exposes the stop-token list and " + (
                "no local generation_config.json was found (give --model-dir)" if local else
                "the server is not on this machine, so its generation_config.json was not read (local copies "
                "are not the server's; give --model-dir with a copy of the server's model folder)"))
        return
    ids, problem = read_eos(path)
    if ids is None:
        col.add("eos.local_generation_config", "fail" if opts.model_dir else "warn", f"{path}: {problem}")
        return
    ev = [f"{path}: eos_token_id {ids}"]
    missing = [t for t in EXPECTED_EOS if t not in ids]
    # what the server did in this very run outweighs a file it may not be reading
    observed_call_stop = any(o.status == "pass" and "stopped at <|call|>" in o.detail
                             for o in col.obs.get("eos.call_token", []))
    if missing == [CALL_ID] and observed_call_stop and END_ID not in ids:
        col.add("eos.local_generation_config", "warn", f"{path} is stale (eos_token_id {ids} lacks <|call|> 200012), "
                "but the running server is not using it: generation stopped at <|call|> in this run", ev,
                fix="refresh the file anyway (gptoss-doctor fix-config) so a restart from it stays right")
        return
    if not missing and END_ID not in ids:
        col.add("eos.local_generation_config", "pass", f"eos_token_id {ids} ({path})")
    else:
        bits = []
        if missing:
            bits.append("missing " + ", ".join(str(t) for t in missing))
        if END_ID in ids:
            bits.append("includes <|end|> 200007")
        col.add("eos.local_generation_config", "fail", f"eos_token_id {ids}: {'; '.join(bits)} ({path})", ev)
    reads_it = engines.get(d.engine).reads_generation_config
    if reads_it:
        if CALL_ID not in ids:
            col.add("eos.call_token", "fail", f"the local generation_config.json that {d.engine} reads lacks <|call|> 200012", ev)
        else:
            col.add("eos.call_token", "pass", "the local generation_config.json includes <|call|> 200012")
        if END_ID in ids:
            col.add("eos.end_token", "fail", "the local generation_config.json makes <|end|> 200007 a stop token", ev)


def judge_structured_leak(col: Collector, engine: str) -> None:
    """Harmony markup (or flattened channel names) in the structured-output answer is a grammar problem only when
    the plain answers were clean; when they show the same, the server does not parse Harmony at all and one cause
    explains both."""
    if any(o.status == "fail" and "is not language" in o.detail for o in col.obs.get("probe.chat", [])):
        # broken weights or kernels: what the model wrote says nothing about parsers, grammars or reasoning fields
        for fid in ("probe.structured_output", "probe.reasoning"):  # (see the Responses probes below)
            for o in col.obs.get(fid, []):
                if o.status in ("fail", "warn", "error"):
                    o.status, o.evidence, o.error_text, o.fix = "skip", [], "", ""
                    o.detail = "not judged: the model's output is not language (see Plain chat)"
        # the Responses API has its own gpt-oss support, but no upgrade makes these weights call a tool or reason
        from gptoss_doctor.check.probes.common import MODEL_FIRST_FIX

        for o in col.obs.get("probe.responses.function_call", []):
            if o.status in ("fail", "warn"):
                o.detail += " — the model's output is not language (see Plain chat)"
                o.fix = MODEL_FIRST_FIX
        for o in col.obs.get("probe.responses.reasoning", []):
            if o.status in ("fail", "warn"):
                o.status, o.evidence, o.fix = "skip", [], ""
                o.detail = "not judged: the model's output is not language (see Plain chat)"
        return
    leak = any(o.status == "fail" for o in col.obs.get("probe.harmony_leak", []))
    flat = any(o.status == "fail" for o in col.obs.get("probe.flattened_channels", []))
    if not (leak or flat):
        return
    for o in col.obs.get("probe.structured_output", []):
        if o.status != "fail":
            continue
        answer = o.evidence[0] if o.evidence else ""
        if leak and "Harmony markup in the JSON answer" in o.detail:
            what, see = "Harmony markup in the JSON answer", "Raw Harmony markup"
        elif flat and "the answer is not JSON" in o.detail and FLAT_START_RE.match(answer):
            what, see = f"not JSON but flattened Harmony ({answer[:40]!r})", "Flattened channels"
        else:
            continue
        o.detail = f"{o.detail.split(':', 1)[0]}: {what}, as in the plain answers (see {see}): the server returned " \
            "the model's Harmony text unparsed"
        o.error_text = ""
        o.fix = engines.get(engine).fixes.get("probe.harmony_leak", "")


def judge_hidden_parser(col: Collector) -> None:
    """Whether the server extracts tool calls is judged only from an answer that shows it. When the tool probes
    ran and none could (a Harmony error ended the request, no answer came within the deadline, or the model
    answered without calling the tool), say so as a skip with the reason, instead of leaving the question out of
    the report. A request refused with an HTTP error is its own finding."""
    if "probe.tools.no_parser" in col.obs or "probe.tools.call" not in col.obs:
        return
    calls = col.obs["probe.tools.call"]
    failed = next((o for o in calls if o.status == "error"), None)
    if any(o.status == "fail" for o in col.obs.get("probe.harmony_error", [])) and \
            any(o.status == "fail" and "HarmonyError" in o.detail for o in calls):
        why = "the Harmony error ended the tool request before any tool parser ran; run the check again after " \
            "fixing it to see whether the tool parser is enabled"
    elif failed is not None:
        why = f"the tool request got no answer ({failed.detail.split(': ', 1)[-1]})"
    elif any(o.http_status for o in calls):
        return  # refused with an HTTP error: that finding is the answer (a dead engine refuses everything)
    elif any(o.detail.startswith("no tool call in tool_calls") for o in calls):
        why = "the model did not call the tool, so no answer showed whether tool calls are extracted"
    else:
        why = "the answer to the tool request could not be read (see Tool call)"
    col.add("probe.tools.no_parser", "skip", f"not judged: {why}")


def judge_ran_past_call(col: Collector) -> None:
    """Each probe that saw generation run on past a tool call said so; it is one cause: one observation that lists
    where it was seen."""
    from gptoss_doctor.check.probes.common import RAN_PAST_CALL

    group = col.obs.get("eos.call_token", [])
    seen = [o for o in group if o.status == "fail" and o.detail.startswith(RAN_PAST_CALL + " (seen in ")]
    if len(seen) < 2:
        return
    where = "; ".join(o.detail[len(RAN_PAST_CALL) + len(" (seen in "):-1] for o in seen)
    first = seen[0]
    first.detail = f"{RAN_PAST_CALL} (seen in {where})"
    first.evidence = list(dict.fromkeys(e for o in seen for e in o.evidence))
    col.obs["eos.call_token"] = [o for o in group if o is first or o not in seen]


def judge_same_refusal(col: Collector, engine: str) -> None:
    """A streamed tool call refused with the same HTTP error as the non-streamed one has the same cause and fix
    (llama.cpp --no-jinja: "tools param requires --jinja flag" both ways), not a streaming bug."""
    calls = [o for o in col.obs.get("probe.tools.call", []) if o.status == "fail" and o.http_status]
    for o in col.obs.get("probe.tools.stream", []):
        same = next((c for c in calls if c.http_status == o.http_status and c.error_text
                     and c.error_text[:200] in o.detail), None)
        if o.status == "fail" and same is not None:
            o.detail += " (the same refusal as the non-streamed call)"
            o.fix = engines.get(engine).fixes.get("probe.tools.call") or GENERIC_FIXES["probe.tools.call"]


# what a proxy passes on unchanged from its backend: the backend's parsers (or their absence) produced it, or the
# backend's engine release has the bug (the generic fix would say "upgrade the engine": the proxy's, wrongly)
BACKEND_FINDINGS = ("probe.harmony_leak", "probe.flattened_channels", "probe.reasoning", "probe.tools.call",
                    "probe.tools.no_parser", "probe.structured_output", "probe.tools.stream_duplicated",
                    "probe.tools.name_leak", "probe.tools.invalid_json", "probe.tools.stream")
# the proxy may answer /v1/responses itself, bridging it to the backend's chat completions (LiteLLM does for some
# providers): the backend or the proxy's bridge
VIA_PROXY_FINDINGS = ("probe.responses.function_call", "probe.responses.reasoning", "probe.responses.tool_output")


def judge_proxy_backend(col: Collector, d, model: Optional[str] = None) -> None:
    """Behind a proxy, what the model's answers show comes from the backend: name it (its model route and URL from
    the proxy's model info) and send the user to check it directly, instead of a flag or an upgrade for the proxy. A
    stale stop-token list (the backend's HarmonyError passed on, or a call that ran on) is fixed in the backend's
    model files."""
    if not engines.get(d.engine).is_proxy or not d.backends:
        return
    from gptoss_doctor.check.probes.common import UNEXPECTED_TOKEN_RE

    backend = next((b for b in d.backends if model and b.startswith(f"{model} -> ")), d.backends[0])
    base = backend.rsplit(" at ", 1)[1].removesuffix("/").removesuffix("/v1") if " at " in backend else "BACKEND_URL"
    check = f"gptoss-doctor check {base}"
    for fid, group in col.obs.items():
        for o in group:
            if o.status not in ("fail", "warn") or not fid.startswith(("probe.", "eos.")):
                continue
            if fid.startswith("eos.") or UNEXPECTED_TOKEN_RE.search(o.error_text or ""):
                o.fix = (f"the backend's model files are stale: on the backend ({backend}) {EOS_FIX} (run it where "
                         f"that server's model folder is); then check the backend directly: {check}")
            elif fid in BACKEND_FINDINGS and o.http_status is None:  # an answer, not the proxy's own refusal
                o.fix = (f"the backend behind the proxy ({backend}) answered this and the proxy passed it on: check "
                         f"the backend directly ({check}) for its own fix")
            elif fid in VIA_PROXY_FINDINGS and o.http_status is None:
                o.fix = (f"check the backend ({backend}) directly: {check}; if it passes there, the proxy's own "
                         f"Responses API support is at fault: upgrade {engines.label(d.engine)}")


UNOFFERED_FIX = ("nothing to fix on the server: the model called a tool the request did not offer, and servers "
                 "return such a call as text; offer the tool, or find what in the prompt or fine-tune asks for it")


def judge_unoffered_tool_call(col: Collector) -> None:
    """A tool call in a plain chat (no tools offered) that the server left as text is not a missing parser when the
    same server parsed the call once the tool was offered (llama.cpp, as recorded with a scripted model): the model
    is calling tools it was not given."""
    if not any(o.status == "pass" for o in col.obs.get("probe.tools.call", [])):
        return
    leaks = [o for o in col.obs.get("probe.harmony_leak", []) if o.status == "fail"]
    if not leaks or not all(o.detail.startswith("a tool call to ") and o.detail.endswith(("in chat content",
                                                                                        "in streamed chat content"))
                            for o in leaks):
        return
    for o in leaks:
        o.status, o.fix = "warn", UNOFFERED_FIX
        o.detail += ", although the plain chat offered no tools; with the tool offered the server parsed the " \
            "same call (see Tool call)"
    for o in col.obs.get("probe.reasoning", []):  # the unoffered call was all the model wrote
        if o.status == "fail":
            o.status, o.fix = "warn", UNOFFERED_FIX
            o.detail += " — the model's only output was the tool call it was not offered"


# an answer that begins with a Harmony channel name glued to its text (analysisThe…, assistantfinal{…, finalHello)
FLAT_START_RE = _rx.compile(r"(?:assistant)?(?:analysis|final|commentary)(?=[A-Z{\[\"]|\s*to=)")

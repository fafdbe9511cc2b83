"""check, stage 1 (discover): reachability, engine, version, models, context, stop tokens, tokenizer sanity.

All discovery requests of one phase run concurrently, each with its own deadline (see ``net.http.Client``). What
each answer means for which engine is not decided here: the engine profiles in ``gptoss_doctor.engines`` say it.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from gptoss_doctor import rx as _rx
from gptoss_doctor import engines
from gptoss_doctor.engines.profile import Signals, as_int
from gptoss_doctor.harmony.tokens import SPECIAL_IDS
from gptoss_doctor.net.http import Client, Response

TOKENIZE_PROBE = ["<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|call|>"]

GPT_OSS_RE = _rx.compile(r"gpt[-_ .]?oss", re.I)

DISCOVERY_TIMEOUT = 10.0
# Phase-1 GETs: (path, send the API key?)
DISCOVERY = [
    ("/", False), ("/health", False), ("/v1/models", True), ("/version", True), ("/props", True),
    ("/api/version", True), ("/info", True), ("/server_info", True), ("/get_server_info", True),
    ("/health/readiness", False), ("/health/liveliness", False),
    ("/openapi.json", False),  # FastAPI's: the gpt-oss reference server is known by its one path, /v1/responses
]


@dataclass
class ModelInfo:
    id: str
    max_model_len: Optional[int] = None
    gpt_oss: bool = False
    root: Optional[str] = None
    context_source: str = ""

    def to_json(self) -> dict:
        return {"id": self.id, "max_model_len": self.max_model_len, "gpt_oss": self.gpt_oss}


@dataclass
class Discovery:
    """Everything learned about one server before the behavioural probes."""

    url: str
    responses: dict[str, Response] = field(default_factory=dict)
    reachable: bool = False  # an HTTP server answered
    llm_server: bool = False  # it looks like an OpenAI-compatible server
    network_error: Optional[Response] = None  # the representative failure when nothing answered
    redirect_to: Optional[str] = None
    auth_status: Optional[int] = None  # 401/403 on the model list (or another guarded path)
    auth_path: str = "/v1/models"
    engine: str = "unknown"
    version: Optional[str] = None
    engine_evidence: list[str] = field(default_factory=list)
    models: list[ModelInfo] = field(default_factory=list)
    models_error: str = ""
    server_info: dict = field(default_factory=dict)  # sglang /server_info, llama.cpp /props, tgi /info ...
    # (kind, source, ids) of engine-reported stops; kind: "eos_list" (the complete EOS set), "eos_token" (the
    # tokenizer's single EOS), "stop_strings" (configured stop strings: extra, not the EOS set)
    stop_sources: list[tuple[str, str, list[int]]] = field(default_factory=list)
    config_evidence: dict[str, str] = field(default_factory=dict)  # engine settings relevant to findings
    backends: list[str] = field(default_factory=list)  # a proxy's upstream servers (LiteLLM)
    eos_notes: list[str] = field(default_factory=list)
    signals: Optional[Signals] = None  # the phase-1 answers as the engine profiles read them

    def model(self, mid: str) -> Optional[ModelInfo]:
        return next((m for m in self.models if m.id == mid), None)


def is_gpt_oss(*names: Any) -> bool:
    return any(isinstance(n, str) and GPT_OSS_RE.search(n) for n in names)


async def discover(client: Client) -> Discovery:
    d = Discovery(url=client.base_url)
    # discovery endpoints are cheap: a healthy server answers in milliseconds
    dt = min(client.timeout, DISCOVERY_TIMEOUT)
    results = await asyncio.gather(*(client.get(p, auth=a, timeout=dt) for p, a in DISCOVERY))
    d.responses = dict(zip([p for p, _ in DISCOVERY], results))
    # a server that sends headers and then stalls or drops the connection did not really answer
    answered = [r for r in results if r.answered and r.error not in ("timeout", "reset")]
    d.reachable = bool(answered)
    if not answered:
        # the most telling failure: prefer a classified one over "other"
        order = ["dns", "refused", "tls", "timeout", "reset", "connect", "too_large", "other", "invalid_url"]
        d.network_error = sorted(results, key=lambda r: order.index(r.error) if r.error in order else 99)[0]
        return d
    redirects = [r.redirect_to for r in results if r.redirect_to]
    models_resp = d.responses["/v1/models"]
    if models_resp.status in (401, 403):
        d.auth_status = models_resp.status
    elif models_resp.status == 400 and "No connected db" in models_resp.text:
        # LiteLLM 1.109 (recorded) answers a key it cannot look up, with no database configured, with 400
        d.auth_status = 400
    elif models_resp.ok:
        # some engines keep the model list public and guard the rest (llama.cpp: /props)
        guarded = [d.responses[p] for p, auth in DISCOVERY if auth and p != "/v1/models"
                   and d.responses[p].status in (401, 403)]
        if guarded and not client.api_key:
            d.auth_status = guarded[0].status
            d.auth_path = next(p for p, a in DISCOVERY if d.responses[p] is guarded[0])
        elif guarded and client.api_key and len(guarded) >= 1 and d.responses.get("/props") in guarded:
            d.auth_status = guarded[0].status
            d.auth_path = "/props"
    fingerprint(d)
    parse_models(d)
    profile = engines.get(d.engine)
    if not d.models and profile.find_models is not None:
        await profile.find_models(client, d)
    if not d.version and profile.find_version is not None:
        await profile.find_version(client, d)
    if not d.llm_server and redirects:
        d.redirect_to = redirects[0]
    return d


def fingerprint(d: Discovery) -> None:
    """Decide the engine from the phase-1 answers: the registry's rules, lowest priority first."""
    sig = Signals.read(d.responses, d.auth_status)
    d.llm_server = bool(sig.cards) or isinstance(_models_data(d), list) or d.auth_status is not None
    found = engines.identify(sig)
    if found:
        d.engine = found[0]
        d.engine_evidence.append(found[1])
        d.llm_server = True
    profile = engines.get(d.engine)
    d.version = profile.read_version(sig) if profile.read_version else None
    d.server_info = sig.server_info or sig.props or sig.info or {}
    if profile.read_config:
        profile.read_config(d, sig)
    d.signals = sig


def _models_data(d: Discovery) -> Any:
    r = d.responses["/v1/models"]
    obj = r.json_object() if r.ok else None
    return obj.get("data") if isinstance(obj, dict) else None


def parse_models(d: Discovery) -> None:
    resp = d.responses["/v1/models"]
    obj = resp.json_object() if resp.ok else None
    if obj is None:
        d.models_error = resp.describe() if resp.answered or resp.error else "no answer"
        if resp.ok:
            d.models_error = "the model list is not a JSON object: " + resp.snippet(120)
        return
    data = obj.get("data")
    if not isinstance(data, list):
        d.models_error = "the model list has no 'data' array"
        return
    for card in data:
        if not isinstance(card, dict) or not isinstance(card.get("id"), str):
            continue
        mid = card["id"]
        root = card.get("root") if isinstance(card.get("root"), str) else None
        m = ModelInfo(id=mid, root=root, gpt_oss=is_gpt_oss(mid, root))
        for key in ("max_model_len", "context_length", "max_context_length", "max_input_tokens"):
            n = as_int(card.get(key))
            if n:
                m.max_model_len, m.context_source = n, f"/v1/models {key}"
                break
        meta = card.get("meta")
        if m.max_model_len is None and isinstance(meta, dict) and as_int(meta.get("n_ctx_train")):
            m.max_model_len, m.context_source = as_int(meta.get("n_ctx_train")), "/v1/models meta.n_ctx_train"
        d.models.append(m)
    profile = engines.get(d.engine)
    if profile.read_context and d.signals is not None:
        profile.read_context(d, d.signals)


# -- phase 2: engine-specific details ---------------------------------------------------------------

async def enrich(client: Client, d: Discovery, model: Optional[str]) -> None:
    """The engine's own extra facts (context length, stop tokens, backends)."""
    profile = engines.get(d.engine)
    if profile.enrich is not None:
        await profile.enrich(client, d, model)


# -- tokenizer sanity ----------------------------------------------------------------------------------

@dataclass
class TokenizerCheck:
    status: str  # pass / fail / skip / error
    detail: str
    evidence: list[str] = field(default_factory=list)


def _ids_from(obj: Any) -> Optional[list[int]]:
    if isinstance(obj, dict):
        for key in ("tokens", "input_ids", "ids"):
            if key in obj:
                return _ids_from(obj[key])
        return None
    if isinstance(obj, list):
        out = []
        for t in obj:
            if isinstance(t, dict):
                t = t.get("id")
            t = as_int(t)
            if t is None:
                return None
            out.append(t)
        if out and isinstance(out[0], list):  # batch form
            return None
        return out
    return None


async def tokenizer_check(client: Client, d: Discovery, model: Optional[str]) -> TokenizerCheck:
    text = "".join(TOKENIZE_PROBE)
    want = [SPECIAL_IDS[t] for t in TOKENIZE_PROBE]
    profile = engines.get(d.engine)
    spec = profile.tokenizer
    if spec is None:
        return TokenizerCheck("skip", profile.only_responses or f"{profile.label} offers no tokenize endpoint")
    tok = (spec.path, spec.body(text, model))
    detok = (spec.detok_path, spec.detok_body(want, model), spec.detok_keys) if spec.detok_path and spec.detok_body \
        else None
    # tokenize and detokenize are independent: ask both at once
    if detok is not None:
        r, r2 = await asyncio.gather(client.post(tok[0], tok[1]), client.post(detok[0], detok[1]))
    else:
        r, r2 = await client.post(tok[0], tok[1]), None
    if r.status in (404, 405):
        return TokenizerCheck("skip", f"POST {tok[0]} is not offered by this server")
    if not r.ok:
        return TokenizerCheck("error", f"POST {tok[0]} failed: {r.describe()}")
    got = _ids_from(r.json())
    if got is None:
        return TokenizerCheck("error", f"POST {tok[0]} answered without a token list: {r.snippet(120)}")
    evidence = [f"POST {tok[0]} {text!r} -> {got[:12]}"]
    if got != want:
        return TokenizerCheck("fail", f"Harmony special tokens do not map to their IDs (expected {want}, got {got[:12]})",
                              evidence)
    if r2 is not None:
        obj = r2.json_object() if r2.ok else None
        back = None
        if obj is not None:
            back = next((obj[k] for k in detok[2] if isinstance(obj.get(k), str)), None)
        if back is not None:
            evidence.append(f"POST {detok[0]} {want} -> {back!r}")
            if back and back != text:
                return TokenizerCheck("fail", f"detokenize does not give the Harmony tokens back (got {back[:80]!r})",
                                      evidence)
    return TokenizerCheck("pass", f"{len(want)} Harmony special tokens map to the right IDs via POST {tok[0]}", evidence)

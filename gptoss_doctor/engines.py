"""Engine discovery: reachability, fingerprint, version, models, tokenizer sanity, stop tokens.

All discovery requests of one phase run concurrently, each with its own deadline
(see ``http.Client``). The signals and their sources are in
``shared/research/server_apis.md`` (section 12 is the decision list used here).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from gptoss_doctor.http import Client, Response

ENGINES = ("vllm", "sglang", "lmdeploy", "llama.cpp", "ollama", "tgi", "lmstudio", "litellm", "trtllm", "unknown")
ENGINE_LABELS = {"vllm": "vLLM", "sglang": "SGLang", "lmdeploy": "LMDeploy", "llama.cpp": "llama.cpp",
                 "ollama": "Ollama", "tgi": "TGI", "lmstudio": "LM Studio", "litellm": "LiteLLM proxy",
                 "trtllm": "TensorRT-LLM", "unknown": "unknown engine"}

# Harmony special tokens (o200k_harmony); tokens.py holds the same table.
HARMONY = {"<|startoftext|>": 199998, "<|endoftext|>": 199999, "<|return|>": 200002, "<|constrain|>": 200003,
           "<|channel|>": 200005, "<|start|>": 200006, "<|end|>": 200007, "<|message|>": 200008, "<|call|>": 200012}
try:  # prefer the lead's table when present
    from gptoss_doctor.tokens import special_id as _special_id

    for _name in list(HARMONY):
        _tid = _special_id(_name)
        if isinstance(_tid, int):
            HARMONY[_name] = _tid
except Exception:  # noqa: BLE001 - the fallback table above is authoritative enough
    pass
RETURN_ID, CALL_ID, END_ID, ENDOFTEXT_ID = HARMONY["<|return|>"], HARMONY["<|call|>"], HARMONY["<|end|>"], HARMONY["<|endoftext|>"]
EXPECTED_EOS = [RETURN_ID, ENDOFTEXT_ID, CALL_ID]
TOKENIZE_PROBE = ["<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|call|>"]

GPT_OSS_RE = re.compile(r"gpt[-_ .]?oss", re.I)
TRAINED_CONTEXT = 131072

DISCOVERY_TIMEOUT = 10.0
# Phase-1 GETs: (path, send the API key?)
DISCOVERY = [
    ("/", False), ("/health", False), ("/v1/models", True), ("/version", True), ("/props", True),
    ("/api/version", True), ("/info", True), ("/server_info", True), ("/get_server_info", True),
    ("/health/readiness", False), ("/health/liveliness", False),
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

    def model(self, mid: str) -> Optional[ModelInfo]:
        return next((m for m in self.models if m.id == mid), None)


def _obj(resp: Optional[Response]) -> Optional[dict]:
    return resp.json_object() if resp is not None and resp.ok else None


def _str(v: Any) -> Optional[str]:
    return v.strip() if isinstance(v, str) and v.strip() else None


def is_gpt_oss(*names: Any) -> bool:
    return any(isinstance(n, str) and GPT_OSS_RE.search(n) for n in names)


def _int(v: Any) -> Optional[int]:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e18:
        return int(v)
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return None


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
    if not d.llm_server and redirects:
        d.redirect_to = redirects[0]
    return d


def _headers(d: Discovery) -> dict[str, str]:
    h: dict[str, str] = {}
    for r in d.responses.values():
        for k, v in r.headers.items():
            h.setdefault(k, v)
    return h


def fingerprint(d: Discovery) -> None:
    """Decide the engine from phase-1 answers (server_apis.md section 12)."""
    r = d.responses
    ev = d.engine_evidence
    headers = _headers(d)
    server = headers.get("server", "").lower()
    root_text = r["/"].text if r["/"].answered else ""
    models = r["/v1/models"].json_object() if r["/v1/models"].ok else None
    data = models.get("data") if isinstance(models, dict) else None
    cards = [c for c in data if isinstance(c, dict)] if isinstance(data, list) else []
    owned = {str(c.get("owned_by")) for c in cards}
    ver = _obj(r["/version"])
    props = _obj(r["/props"])
    apiver = _obj(r["/api/version"])
    info = _obj(r["/info"])
    sinfo = _obj(r["/server_info"]) or _obj(r["/get_server_info"])
    ready = _obj(r["/health/readiness"])
    alive = r["/health/liveliness"]
    health = r["/health"]
    health_obj = health.json_object() if health.answered else None
    unexpected = any("Unexpected endpoint or method" in x.text for x in r.values() if x.answered)
    d.llm_server = bool(cards) or isinstance(data, list) or d.auth_status is not None
    engine: Optional[str] = None

    def pick(name: str, why: str) -> None:
        nonlocal engine
        if engine is None:
            engine = name
            ev.append(why)

    if any(k.startswith("x-litellm") for k in headers) or (ready and "litellm_version" in ready) or (
            alive.ok and "I'm alive" in alive.text):
        pick("litellm", "LiteLLM health/readiness endpoints or x-litellm-* headers")
    if "Ollama is running" in root_text:
        pick("ollama", "GET / answers 'Ollama is running'")
    if "llama.cpp" in server:
        pick("llama.cpp", "Server: llama.cpp header")
    if info and info.get("router") == "text-generation-router":
        pick("tgi", "/info router is text-generation-router")
    if unexpected:
        pick("lmstudio", "unknown routes answer 'Unexpected endpoint or method'")
    for name, value in (("vllm", "vllm"), ("sglang", "sglang"), ("lmdeploy", "lmdeploy"), ("llama.cpp", "llamacpp"),
                        ("trtllm", "tensorrt_llm"), ("lmstudio", "organization_owner"), ("ollama", "library")):
        if value in owned:
            pick(name, f"/v1/models owned_by is '{value}'")
    if cards and all(c.get("created") == 1677610602 for c in cards) and owned == {"openai"}:
        pick("litellm", "/v1/models created=1677610602, owned_by=openai (LiteLLM constants)")
    if cards and all(c.get("owned_by") == c.get("id") and c.get("created") == 0 for c in cards):
        pick("tgi", "/v1/models owned_by equals the model id and created is 0")
    if sinfo and ("tp_size" in sinfo or "model_path" in sinfo) and "version" in sinfo:
        pick("sglang", "/server_info lists SGLang server arguments")
    if props and "build_info" in props:
        pick("llama.cpp", "/props has build_info")
    if apiver and "version" in apiver and "uvicorn" not in server:
        pick("ollama", "/api/version answers")
    if isinstance(health_obj, dict) and health_obj.get("status") in ("healthy", "sleeping", "initializing", "unhealthy") \
            and "uvicorn" in server:
        pick("lmdeploy", "/health answers JSON {status: ...} from uvicorn")
    if ver and "version" in ver:
        pick("vllm", "/version answers (vLLM-style)")
    if engine is None and d.auth_status:
        # auth-protected: SGLang guards every path except /health*; vLLM only /v1/*
        other_401 = [p for p in ("/props", "/info", "/api/version") if r[p].status in (401, 403)]
        body = r["/v1/models"].text.replace(" ", "")
        if '{"error":"Unauthorized"}' in body:
            pick("sglang" if other_401 else "vllm", "401 body {\"error\": \"Unauthorized\"}" +
                 (" on every path" if other_401 else " only on /v1/*"))
        elif '"authentication_error"' in body and '"object":"error"' in body:
            pick("lmdeploy", "401 body in LMDeploy's error shape")
        elif "auth_error" in body:
            pick("litellm", "401 body in LiteLLM's error shape")
        elif "no_db_connection" in body or "Noconnecteddb" in body:
            pick("litellm", "400 'No connected db.' (LiteLLM's answer to a key it cannot look up)")
        elif "Provide a valid API token" in r["/v1/models"].text:
            pick("lmstudio", "401 body in LM Studio's wording")
    d.engine = engine or "unknown"
    if d.engine != "unknown":
        d.llm_server = True
    # version
    v: Optional[str] = None
    if d.engine in ("vllm", "trtllm") and ver:
        v = _str(ver.get("version"))
    elif d.engine == "sglang" and sinfo:
        v = _str(sinfo.get("version"))
    elif d.engine == "llama.cpp" and props:
        v = _str(props.get("build_info"))
    elif d.engine == "ollama" and apiver:
        v = _str(apiver.get("version"))
    elif d.engine == "tgi" and info:
        v = _str(info.get("version"))
    elif d.engine == "litellm":
        v = _str((ready or {}).get("litellm_version")) or _str(headers.get("x-litellm-version"))
    d.version = v
    d.server_info = sinfo or props or info or {}
    if d.engine == "sglang" and sinfo:
        for key in ("reasoning_parser", "tool_call_parser", "context_length", "sampling_defaults"):
            if key in sinfo:
                d.config_evidence[key] = f"/server_info {key} = {sinfo[key]!r}"


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
    props = _obj(d.responses["/props"]) or {}
    info = _obj(d.responses["/info"]) or {}
    for card in data:
        if not isinstance(card, dict) or not isinstance(card.get("id"), str):
            continue
        mid = card["id"]
        root = card.get("root") if isinstance(card.get("root"), str) else None
        m = ModelInfo(id=mid, root=root, gpt_oss=is_gpt_oss(mid, root))
        for key in ("max_model_len", "context_length", "max_context_length", "max_input_tokens"):
            n = _int(card.get(key))
            if n:
                m.max_model_len, m.context_source = n, f"/v1/models {key}"
                break
        meta = card.get("meta")
        if m.max_model_len is None and isinstance(meta, dict) and _int(meta.get("n_ctx_train")):
            m.max_model_len, m.context_source = _int(meta.get("n_ctx_train")), "/v1/models meta.n_ctx_train"
        d.models.append(m)
    # engine-specific context sources from phase 1
    if d.engine == "llama.cpp":
        n_ctx = _int(((props.get("default_generation_settings") or {}) if isinstance(props.get("default_generation_settings"), dict) else {}).get("n_ctx"))
        if n_ctx:
            for m in d.models:
                m.max_model_len, m.context_source = n_ctx, "/props default_generation_settings.n_ctx"
        if isinstance(props.get("chat_template"), str) and "<|channel|>" in props["chat_template"]:
            for m in d.models:
                m.gpt_oss = True
    if d.engine == "tgi":
        n = _int(info.get("max_total_tokens"))
        for m in d.models:
            if n and not m.max_model_len:
                m.max_model_len, m.context_source = n, "/info max_total_tokens"


# -- phase 2: engine-specific details ---------------------------------------------------------------

async def enrich(client: Client, d: Discovery, model: Optional[str]) -> None:
    """Engine-specific extra facts (context length, stop tokens), concurrently."""
    jobs = []
    if d.engine == "ollama" and model:
        jobs.append(_ollama_show(client, d, model))
    if d.engine == "lmstudio":
        jobs.append(_lmstudio_models(client, d))
    if d.engine == "sglang":
        jobs.append(_sglang_model_info(client, d))
    if d.engine == "vllm":
        jobs.append(_vllm_tokenizer_info(client, d))
    if d.engine == "litellm":
        jobs.append(_litellm_backends(client, d))
    if d.engine == "llama.cpp":
        props = _obj(d.responses.get("/props")) or {}
        eos = props.get("eos_token")
        if isinstance(eos, str) and eos in HARMONY:
            d.stop_sources.append(("eos_token", "/props eos_token", [HARMONY[eos]]))
    if jobs:
        await asyncio.gather(*jobs)


async def _ollama_show(client: Client, d: Discovery, model: str) -> None:
    r = await client.post("/api/show", {"model": model})
    obj = _obj(r)
    if not obj:
        return
    mi = obj.get("model_info") if isinstance(obj.get("model_info"), dict) else {}
    arch = mi.get("general.architecture")
    m = d.model(model)
    if m is not None:
        if is_gpt_oss(arch, (obj.get("details") or {}).get("family") if isinstance(obj.get("details"), dict) else None):
            m.gpt_oss = True
        for k, v in mi.items():
            if isinstance(k, str) and k.endswith(".context_length") and _int(v):
                m.max_model_len, m.context_source = _int(v), f"/api/show {k}"
                break
    eos = mi.get("tokenizer.ggml.eos_token_ids")
    if isinstance(eos, list) and all(_int(x) is not None for x in eos):
        d.stop_sources.append(("eos_list", "/api/show tokenizer.ggml.eos_token_ids", [_int(x) for x in eos]))
    params = obj.get("parameters")
    if isinstance(params, str):
        stops = re.findall(r'^\s*stop\s+"?([^"\n]+)"?\s*$', params, re.M)
        ids = [HARMONY[s.strip()] for s in stops if s.strip() in HARMONY]
        if stops:
            d.stop_sources.append(("stop_strings", "/api/show parameters stop", ids))


async def _lmstudio_models(client: Client, d: Discovery) -> None:
    r = await client.get("/api/v0/models")
    obj = _obj(r)
    data = obj.get("data") if obj else None
    if not isinstance(data, list):
        return
    for card in data:
        if isinstance(card, dict) and isinstance(card.get("id"), str):
            m = d.model(card["id"])
            if m is None:
                continue
            n = _int(card.get("loaded_context_length")) or _int(card.get("max_context_length"))
            if n:
                m.max_model_len, m.context_source = n, "/api/v0/models"
            if is_gpt_oss(card.get("arch")):
                m.gpt_oss = True


async def _sglang_model_info(client: Client, d: Discovery) -> None:
    r = await client.get("/model_info")
    obj = _obj(r)
    if obj is None:
        obj = _obj(await client.get("/get_model_info"))
    if not obj:
        return
    if obj.get("model_type") == "gpt_oss" or is_gpt_oss(obj.get("model_path")):
        for m in d.models:
            if is_gpt_oss(m.id, m.root) or len(d.models) == 1:
                m.gpt_oss = True


async def _litellm_backends(client: Client, d: Discovery) -> None:
    """LiteLLM re-serialises its backend's answers; name the backend so the user can check it directly."""
    obj = _obj(await client.get("/v1/model/info"))
    data = obj.get("data") if obj else None
    if not isinstance(data, list):
        return
    for item in data[:5]:
        params = item.get("litellm_params") if isinstance(item, dict) else None
        if not isinstance(params, dict):
            continue
        model, base = _str(params.get("model")), _str(params.get("api_base"))
        info = item.get("model_info") if isinstance(item.get("model_info"), dict) else {}
        name = _str(item.get("model_name"))
        m = d.model(name) if name else None
        n = _int(info.get("max_input_tokens"))
        if m is not None and n and not m.max_model_len:
            m.max_model_len, m.context_source = n, "/v1/model/info max_input_tokens (LiteLLM's table, not the backend)"
        if model or base:
            d.backends.append(f"{name or '?'} -> {model or '?'}" + (f" at {base}" if base else ""))


async def _vllm_tokenizer_info(client: Client, d: Discovery) -> None:
    obj = _obj(await client.get("/tokenizer_info"))
    if not obj:
        return
    eos = obj.get("eos_token")
    if isinstance(eos, dict):
        eos = eos.get("content")
    if isinstance(eos, str) and eos in HARMONY:
        d.eos_notes.append(f"/tokenizer_info eos_token is {eos}")
        d.stop_sources.append(("eos_token", "/tokenizer_info eos_token", [HARMONY[eos]]))


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
            t = _int(t)
            if t is None:
                return None
            out.append(t)
        if out and isinstance(out[0], list):  # batch form
            return None
        return out
    return None


async def tokenizer_check(client: Client, d: Discovery, model: Optional[str]) -> TokenizerCheck:
    text = "".join(TOKENIZE_PROBE)
    want = [HARMONY[t] for t in TOKENIZE_PROBE]
    e = d.engine
    if e in ("vllm", "sglang"):
        tok = ("/tokenize", {"model": model, "prompt": text, "add_special_tokens": False})
        detok = ("/detokenize", {"model": model, "tokens": want, "skip_special_tokens": False}, ("prompt", "text"))
    elif e == "llama.cpp":
        tok = ("/tokenize", {"content": text, "add_special": False, "parse_special": True})
        detok = ("/detokenize", {"tokens": want}, ("content",))
    elif e == "lmdeploy":
        tok = ("/v1/encode", {"input": text, "do_preprocess": False, "add_bos": False})
        detok = None
    elif e == "tgi":
        tok = ("/tokenize", {"inputs": text})
        detok = None
    else:
        return TokenizerCheck("skip", f"{ENGINE_LABELS.get(e, e)} offers no tokenize endpoint")
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


# -- local generation_config.json ------------------------------------------------------------------

def hf_hub_cache() -> Path:
    env = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
    if env:
        return Path(env).expanduser()
    home = os.environ.get("HF_HOME")
    if home:
        return Path(home).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "huggingface" / "hub"


def _repo_candidates(model_id: str) -> list[str]:
    mid = model_id.strip()
    cands = []
    if "/" in mid and not mid.startswith("/"):
        cands.append(mid)
    name = mid.rsplit("/", 1)[-1].replace(":", "-").lower()
    m = re.search(r"gpt-oss-(20b|120b)", name)
    if m:
        cands.append(f"openai/gpt-oss-{m.group(1)}")
    return list(dict.fromkeys(cands))


def find_generation_config(model_id: Optional[str], model_dir: Optional[str], root: Optional[str] = None) -> Optional[Path]:
    """The generation_config.json a local server would read: --model-dir, a local root path, or the HF cache."""
    if model_dir:
        p = Path(model_dir).expanduser()
        return p / "generation_config.json" if p.is_dir() else p
    for cand in (root, model_id):
        if cand and cand.startswith(("/", "~", ".")):
            p = Path(cand).expanduser() / "generation_config.json"
            if p.is_file():
                return p
    cache = hf_hub_cache()
    for repo in _repo_candidates(model_id or "") + _repo_candidates(root or ""):
        rdir = cache / ("models--" + repo.replace("/", "--"))
        if not rdir.is_dir():
            continue
        snap = None
        try:
            ref = (rdir / "refs" / "main").read_text(encoding="utf-8").strip()
            if ref and (rdir / "snapshots" / ref).is_dir():
                snap = rdir / "snapshots" / ref
        except OSError:
            pass
        if snap is None:
            snaps = [s for s in (rdir / "snapshots").glob("*") if (s / "generation_config.json").exists()]
            if snaps:
                snap = max(snaps, key=lambda s: s.stat().st_mtime)
        if snap is not None and (snap / "generation_config.json").exists():
            return snap / "generation_config.json"
    return None


def read_eos(path: Path) -> tuple[Optional[list[int]], str]:
    """(eos ids, problem) of a generation_config.json; never raises."""
    try:
        if path.stat().st_size > 1 << 20:
            return None, "the file is larger than 1 MiB"
        raw = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except FileNotFoundError:
        return None, "file not found"
    except (OSError, ValueError, RecursionError) as exc:
        return None, f"cannot read it: {type(exc).__name__}"
    if not isinstance(raw, dict):
        return None, "not a JSON object"
    eos = raw.get("eos_token_id")
    if isinstance(eos, int) and not isinstance(eos, bool):
        return [eos], ""
    if isinstance(eos, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in eos):
        return list(eos), ""
    return None, "no eos_token_id"

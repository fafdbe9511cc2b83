"""SGLang (https://docs.sglang.ai). Fingerprint: owned_by 'sglang', /server_info lists the server arguments (and
its version); an API key guards every path but /health*. Flags: --reasoning-parser gpt-oss, --tool-call-parser
gpt-oss (sgl-project/sglang#8833)."""

from __future__ import annotations

from gptoss_doctor.engines.profile import EngineProfile, Metrics, Rule, Tokenizer, as_str, json_obj


def _version(s):
    return as_str(s.server_info.get("version")) if s.server_info else None


def _config(d, s) -> None:
    if s.server_info:
        for key in ("reasoning_parser", "tool_call_parser", "context_length", "sampling_defaults"):
            if key in s.server_info:
                d.config_evidence[key] = f"/server_info {key} = {s.server_info[key]!r}"


async def _model_info(client, d, model) -> None:
    from gptoss_doctor.check.discover import is_gpt_oss

    obj = json_obj(await client.get("/model_info"))
    if obj is None:
        obj = json_obj(await client.get("/get_model_info"))
    if not obj:
        return
    if obj.get("model_type") == "gpt_oss" or is_gpt_oss(obj.get("model_path")):
        for m in d.models:
            if is_gpt_oss(m.id, m.root) or len(d.models) == 1:
                m.gpt_oss = True


REASONING_FIX = "start SGLang with --reasoning-parser gpt-oss (and keep separate_reasoning on)"
TOOLS_FIX = "start SGLang with --tool-call-parser gpt-oss"

PROFILE = EngineProfile(
    name="sglang", label="SGLang", default_port=30000, tracker="sgl-project/sglang",
    log_hints=(r"\bsglang\b|\bSGLang\b|TokenizerManager|sglang\.launch_server|\bsgl-",),
    rules=(
        Rule(61, "/v1/models owned_by is 'sglang'", lambda s: "sglang" in s.owned),
        Rule(90, "/server_info lists SGLang server arguments",
             lambda s: bool(s.server_info and ("tp_size" in s.server_info or "model_path" in s.server_info)
                            and "version" in s.server_info)),
        Rule(200, "401 body {\"error\": \"Unauthorized\"} on every path", auth=True,
             test=lambda s: '{"error":"Unauthorized"}' in s.text("/v1/models").replace(" ", "")
             and any(s.status(p) in (401, 403) for p in ("/props", "/info", "/api/version"))),
    ),
    read_version=_version, read_config=_config, enrich=_model_info,
    tokenizer=Tokenizer("/tokenize", lambda text, model: {"model": model, "prompt": text, "add_special_tokens": False},
                        "/detokenize", lambda ids, model: {"model": model, "tokens": ids, "skip_special_tokens": False},
                        ("prompt", "text")),
    metrics=Metrics(
        prefix="sglang:", kv_cache_usage=("sglang:token_usage",), waiting="sglang:num_queue_reqs",
        running="sglang:num_running_reqs", aborted=("sglang:num_aborted_requests_total", {}),
        prefix_hit_rate="sglang:cache_hit_rate",
        fixes={"kv": "raise --mem-fraction-static or lower --max-running-requests",
               "queue": "requests queue up: add replicas or raise --max-running-requests if memory allows"},
        enable_hint="start SGLang with --enable-metrics"),
    embeds_harmony=True, reads_generation_config=True,
    fixes={
        "models.context": "start SGLang with --context-length 131072",
        "probe.tools.no_parser": TOOLS_FIX, "probe.tools.call": TOOLS_FIX,
        "probe.reasoning": REASONING_FIX, "probe.harmony_leak": REASONING_FIX, "probe.flattened_channels": REASONING_FIX,
    },
    own_fix_first=frozenset({"probe.tools.no_parser", "probe.flattened_channels"}),
)

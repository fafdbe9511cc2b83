"""SGLang (https://docs.sglang.ai). Fingerprint: owned_by 'sglang', /server_info lists the server arguments (and
its version); an API key guards every path but /health*. Flags: --reasoning-parser gpt-oss, --tool-call-parser
gpt-oss (sgl-project/sglang#8833)."""

from __future__ import annotations

from gptoss_doctor.engines.profile import (
    PARSER_FINDINGS, EngineProfile, Metrics, Rule, json_obj, owned_by, parser_fixes, signal_field,
)
from gptoss_doctor.engines.vllm import VLLM_TOKENIZER


# how this engine is recognised from the discovery answers (lowest priority first, across all engines)
RULES = (
    owned_by(61, "sglang"),
    Rule(90, "/server_info lists SGLang server arguments",
         lambda s: bool(s.server_info and ("tp_size" in s.server_info or "model_path" in s.server_info)
                        and "version" in s.server_info)),
    Rule(200, "401 body {\"error\": \"Unauthorized\"} on every path", auth=True,
         test=lambda s: '{"error":"Unauthorized"}' in s.text("/v1/models").replace(" ", "")
         and any(s.status(p) in (401, 403) for p in ("/props", "/info", "/api/version"))),
)


METRICS = Metrics(
    prefix="sglang:", kv_cache_usage=("sglang:token_usage",), waiting="sglang:num_queue_reqs",
    running="sglang:num_running_reqs", aborted=("sglang:num_aborted_requests_total", {}),
    prefix_hit_rate="sglang:cache_hit_rate",
    fixes={"kv": "raise --mem-fraction-static or lower --max-running-requests",
           "queue": "requests queue up: add replicas or raise --max-running-requests if memory allows"},
    enable_hint="start SGLang with --enable-metrics")


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


PROFILE = EngineProfile(
    name="sglang", label="SGLang", default_port=30000, tracker="sgl-project/sglang",
    # and its log lines: "[2025-11-03 18:48:34 TP7] Scheduler hit an exception" (a rank prefix after the time),
    # "[2025-11-11 15:55:06] WARNING server_args.py:949: …" (as pasted in sgl-project/sglang issues)
    log_hints=(r"\bsglang\b|\bSGLang\b|TokenizerManager|sglang\.launch_server|\bsgl-",
               r"(?m)^\s*\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?: (?:DP|TP|EP|PP)\d+)+\] "
               r"|^\s*\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] (?:INFO|WARNING|ERROR) \w+\.py:\d+: "),
    rules=RULES,
    read_version=signal_field("server_info", "version"), read_config=_config, enrich=_model_info,
    tokenizer=VLLM_TOKENIZER,  # SGLang answers vLLM's /tokenize and /detokenize shapes
    metrics=METRICS,
    embeds_harmony=True, reads_generation_config=True,
    fixes={
        "models.context": "start SGLang with --context-length 131072",
        **parser_fixes(
        tools="start SGLang with --tool-call-parser gpt-oss",
        reasoning="start SGLang with --reasoning-parser gpt-oss (and keep separate_reasoning on)"),
    },
    own_fix_first=PARSER_FINDINGS,
)

"""vLLM (https://docs.vllm.ai). Fingerprint: /v1/models owned_by 'vllm', GET /version; stop tokens come from the
model's generation_config.json only (vLLM 0.26 SamplingParams.update_from_generation_config); since 0.10.1 it picks
the gpt-oss reasoning parser itself (vllm-project/vllm#23430); Chat Completions tool calls need 0.10.2
(vllm-project/vllm#22386) and --tool-call-parser openai."""

from __future__ import annotations

from gptoss_doctor.engines.profile import (
    PARSER_FINDINGS, EngineProfile, Metrics, Rule, Tokenizer, json_obj, older_than, owned_by, parser_fixes, signal_field, vtuple,
)
from gptoss_doctor.harmony.tokens import SPECIAL_IDS


# how this engine is recognised from the discovery answers (lowest priority first, across all engines)
RULES = (
    owned_by(60, "vllm"),
    Rule(130, "/version answers (vLLM-style)", lambda s: bool(s.version and "version" in s.version)),
    # vLLM guards only /v1/*; SGLang answers the same body on every path (see sglang.py)
    Rule(200, "401 body {\"error\": \"Unauthorized\"} only on /v1/*", auth=True,
         test=lambda s: '{"error":"Unauthorized"}' in s.text("/v1/models").replace(" ", "")
         and not any(s.status(p) in (401, 403) for p in ("/props", "/info", "/api/version"))),
)


# POST /tokenize and /detokenize (SGLang answers the same shapes)
VLLM_TOKENIZER = Tokenizer(
    "/tokenize", lambda text, model: {"model": model, "prompt": text, "add_special_tokens": False},
    "/detokenize", lambda ids, model: {"model": model, "tokens": ids, "skip_special_tokens": False}, ("prompt", "text"))


METRICS = Metrics(
    prefix="vllm:", kv_cache_usage=("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
    waiting="vllm:num_requests_waiting", running="vllm:num_requests_running",
    preemptions="vllm:num_preemptions_total", aborted=("vllm:request_success_total", {"finished_reason": "abort"}),
    prefix_counters=("vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total"),
    fixes={"kv": "give the KV cache more room: raise --gpu-memory-utilization, lower --max-num-seqs, or lower "
                 "--max-model-len", "queue": "requests queue up: lower per-request max_tokens, add replicas, or "
                 "raise --max-num-seqs if the KV cache has room", "preempt": "the KV cache ran out and requests "
                 "were preempted: raise --gpu-memory-utilization or lower --max-num-seqs"})


async def _tokenizer_info(client, d, model) -> None:
    obj = json_obj(await client.get("/tokenizer_info"))
    if not obj:
        return
    eos = obj.get("eos_token")
    if isinstance(eos, dict):
        eos = eos.get("content")
    if isinstance(eos, str) and eos in SPECIAL_IDS:
        d.eos_notes.append(f"/tokenizer_info eos_token is {eos}")
        d.stop_sources.append(("eos_token", "/tokenizer_info eos_token", [SPECIAL_IDS[eos]]))


def _fix_hook(fid: str, target):
    if fid in ("probe.reasoning", "probe.harmony_leak", "probe.flattened_channels") and target is not None \
            and vtuple(target.version) >= (0, 10, 1):
        # vLLM picks the gpt-oss reasoning parser itself since 0.10.1 (vllm-project/vllm#23430)
        return (f"vLLM {target.version} parses gpt-oss reasoning by itself: raw or missing reasoning here means "
                "the output was not valid Harmony (check the model files, weights and kernels) or something "
                "between client and server rewrites the answer; /v1/completions strips special tokens by design")
    return None


PROFILE = EngineProfile(
    name="vllm", label="vLLM", default_port=8000, tracker="vllm-project/vllm",
    log_hints=(r"\((?:APIServer|EngineCore(?:_\d+)?|VllmWorker[^ )]*) pid=\d+\)",
               r"\[(?:serving_chat|serving_responses|serving_completion|harmony_utils|api_server|launcher|core)\.py:\d+\]",
               r"vllm/(?:entrypoints|v1|model_executor)|\bvllm serve\b|\bvLLM\b|\bvllm\.(?:entrypoints|engine|v1)",
               r"(?i:\bvllm\b)"),
    rules=RULES,
    read_version=signal_field("version", "version"), enrich=_tokenizer_info,
    tokenizer=VLLM_TOKENIZER,
    metrics=METRICS,
    embeds_harmony=True, reads_generation_config=True,
    # every chat choice carries stop_reason: 200012 after a call with a current config, null when generation ended at
    # <|return|> instead (recorded on 0.26.0 and 0.32.0)
    stop_reason_key="stop_reason",
    # recorded on 0.26.0 with a stale config: with the tool flags the call's deltas, then the error chunk; without
    # them, reasoning deltas, then the error
    tool_deltas_before_harmony_error=True,
    version_rule=older_than((0, 10, 2), "vLLM {version} has no gpt-oss tool parser for Chat Completions "
                                                 "(added in 0.10.2) and early Harmony parsing bugs"),
    fixes={
        "engine.version": "upgrade vLLM (>= 0.10.2 for gpt-oss tool calls) and start it with "
                          "--enable-auto-tool-choice --tool-call-parser openai",
        "models.context": "start vLLM with --max-model-len 131072 (or what fits in memory)",
        **parser_fixes(
        # both flags: for gpt-oss, vLLM extracts tool calls only when both are set and skips its '"auto" tool choice
        # requires ...' 400, so one alone answers exactly like neither; --enable-auto-tool-choice alone does not start
        tools="use vLLM >= 0.10.2 and start it with both --enable-auto-tool-choice and --tool-call-parser openai "
              "(either alone gives the same answer as neither)",
        reasoning="start vLLM with --reasoning-parser openai_gptoss (and a current release)"),
    },
    fix_hook=_fix_hook,
    own_fix_first=PARSER_FINDINGS,
)

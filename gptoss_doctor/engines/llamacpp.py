"""llama.cpp's llama-server (https://github.com/ggml-org/llama.cpp/tree/master/tools/server). Fingerprint:
'Server: llama.cpp' header, owned_by 'llamacpp', /props build_info (also its version); context from /props
default_generation_settings.n_ctx; the chat template in /props shows a gpt-oss model under any name. Recorded:
build b1-0c1e570 (--jinja is the default)."""

from __future__ import annotations

from gptoss_doctor.engines.profile import (
    PARSER_FINDINGS, EngineProfile, Metrics, Rule, Tokenizer, as_int, json_obj, owned_by, parser_fixes, signal_field,
)
from gptoss_doctor.harmony.tokens import SPECIAL_IDS


# how this engine is recognised from the discovery answers (lowest priority first, across all engines)
RULES = (
    Rule(30, "Server: llama.cpp header", lambda s: "llama.cpp" in s.server),
    owned_by(63, "llamacpp"),
    Rule(100, "/props has build_info", lambda s: bool(s.props and "build_info" in s.props)),
)


METRICS = Metrics(
    prefix="llamacpp:", kv_cache_usage=("llamacpp:kv_cache_usage_ratio",), waiting="llamacpp:requests_deferred",
    running="llamacpp:requests_processing",
    fixes={"kv": "the context cache is nearly full: raise --ctx-size or lower --parallel",
           "queue": "requests wait for a free slot: raise --parallel (with a larger --ctx-size)"},
    enable_hint="start llama-server with --metrics")


def _context(d, s) -> None:
    props = s.props or {}
    settings = props.get("default_generation_settings")
    n_ctx = as_int(settings.get("n_ctx")) if isinstance(settings, dict) else None
    if n_ctx:
        for m in d.models:
            m.max_model_len, m.context_source = n_ctx, "/props default_generation_settings.n_ctx"
    if isinstance(props.get("chat_template"), str) and "<|channel|>" in props["chat_template"]:
        for m in d.models:
            m.gpt_oss = True


async def _eos_token(client, d, model) -> None:
    props = json_obj(d.responses.get("/props")) or {}
    eos = props.get("eos_token")
    if isinstance(eos, str) and eos in SPECIAL_IDS:
        d.stop_sources.append(("eos_token", "/props eos_token", [SPECIAL_IDS[eos]]))


PROFILE = EngineProfile(
    name="llama.cpp", label="llama.cpp", default_port=8080, tracker="ggml-org/llama.cpp",
    log_hints=(r"\bllama-(?:server|cli|bench)\b|\bsrv\s+\w+: |\bslot\s+\w+: |llama_model_load|common_chat_|\bggml_\w+|(?i:llama\.cpp)",),
    rules=RULES,
    responses_added=(None, "llama-server builds from before late January 2026 have no /v1/responses "
                           "(https://github.com/ggml-org/llama.cpp/issues/19138; "
                           "https://github.com/lemonade-sdk/lemonade/pull/945 waited for the build with it): "
                           "upgrade llama.cpp to use the Responses API"),
    read_version=signal_field("props", "build_info"), read_context=_context, enrich=_eos_token,
    tokenizer=Tokenizer("/tokenize", lambda text, model: {"content": text, "add_special": False, "parse_special": True},
                        "/detokenize", lambda ids, model: {"tokens": ids}, ("content",)),
    metrics=METRICS,
    fixes={"models.context": "start llama-server with -c 131072",
           **parser_fixes(
               tools="use a current llama-server build with the model's chat template (--jinja, the default in "
                     "current builds; never --no-jinja)",
               reasoning="remove --reasoning-format none if it is set (the default splits reasoning into "
                         "reasoning_content) and --no-jinja (the model's chat template is needed)")},
    own_fix_first=PARSER_FINDINGS,
)

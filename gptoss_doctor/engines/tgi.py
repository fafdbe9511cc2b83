"""Hugging Face Text Generation Inference (https://huggingface.co/docs/text-generation-inference). Fingerprint:
/info router 'text-generation-router', cards with owned_by equal to the id and created 0; no gpt-oss model code
(the project is in maintenance mode), no Responses API, no reasoning field."""

from __future__ import annotations

from gptoss_doctor.engines.profile import EngineProfile, Metrics, Rule, Tokenizer, as_int, signal_field


# how this engine is recognised from the discovery answers (lowest priority first, across all engines)
RULES = (
    Rule(40, "/info router is text-generation-router",
         lambda s: bool(s.info and s.info.get("router") == "text-generation-router")),
    Rule(80, "/v1/models owned_by equals the model id and created is 0",
         lambda s: bool(s.cards) and all(c.get("owned_by") == c.get("id") and c.get("created") == 0 for c in s.cards)),
)


METRICS = Metrics(prefix="tgi_", waiting="tgi_queue_size", running="tgi_batch_current_size",
                fixes={"queue": "requests queue up: raise --max-concurrent-requests / --max-batch-total-tokens "
                                "if memory allows, or add replicas"})


def _context(d, s) -> None:
    n = as_int((s.info or {}).get("max_total_tokens"))
    for m in d.models:
        if n and not m.max_model_len:
            m.max_model_len, m.context_source = n, "/info max_total_tokens"


def _version_rule(version: str, vt: tuple):
    return "warn", f"TGI {version} has no gpt-oss model code (maintenance mode); serve gpt-oss with another engine"


PROFILE = EngineProfile(
    name="tgi", label="TGI", tracker="huggingface/text-generation-inference",
    log_hints=(r"text-generation-launcher|text_generation_(?:router|server)",),
    rules=RULES,
    read_version=signal_field("info", "version"), read_context=_context,
    tokenizer=Tokenizer("/tokenize", lambda text, model: {"inputs": text}),
    metrics=METRICS,
    responses_api=False, reasoning_field=False,
    version_rule=_version_rule,
    fixes={"engine.version": "serve gpt-oss with vLLM, SGLang, llama.cpp or Ollama"},
)

"""Hugging Face ``transformers serve`` (https://huggingface.co/docs/transformers/main/serving).

Read from transformers serve 5.23.0 (recorded with a tiny gpt-oss model): FastAPI behind uvicorn, an x-request-id
UUID on every answer, GET /health {"status": "ok"}, /v1/models cards with owned_by "openai" and a fractional
``created`` (a float timestamp, which no other engine here sends), every other discovery path 404
{"detail": "Not Found"}; no version, tokenizer or metrics endpoint, no API key. gpt-oss output is decoded without
special tokens and without a Harmony parser, so channels come back flattened in content ("finalHello",
"commentary to=functions.get_weather json{…}"), with no reasoning field and no tool_calls; chat streams end after the
finish_reason chunk without ``data: [DONE]``; /v1/responses always answers a stream.
"""

from __future__ import annotations


from gptoss_doctor import rx as _rx
from gptoss_doctor.engines.profile import PARSER_FINDINGS, EngineProfile, Rule


def _fractional_created(s) -> bool:
    return bool(s.cards) and all(isinstance(c.get("created"), float) and not c["created"].is_integer()
                                 for c in s.cards) and s.owned == {"openai"}


PINNED_RE = _rx.compile(r"Server is pinned to '([^']{1,300})'")


async def _pinned_model(client, d) -> None:
    """When /v1/models fails (it answers 500 without a Hugging Face cache folder), ask for a model that does not
    exist: a server started for one model answers 400 "Server is pinned to '<model>'" (recorded)."""
    from gptoss_doctor.check.discover import ModelInfo, is_gpt_oss

    r = await client.post("/v1/chat/completions", {"model": "gptoss-doctor-no-such-model", "max_tokens": 1,
                                                   "messages": [{"role": "user", "content": "hi"}]})
    detail = (r.json_object() or {}).get("detail") if r.status == 400 else None
    m = PINNED_RE.search(detail) if isinstance(detail, str) else None
    if m:
        mid = m.group(1)
        d.models.append(ModelInfo(id=mid, gpt_oss=is_gpt_oss(mid),
                                  context_source="the 400 answer to an unknown model names the pinned one"))


NO_PARSER = ("transformers serve decodes gpt-oss output without a Harmony parser (reasoning, answer and tool calls "
             "arrive as one text): use it for quick tests only; serve gpt-oss with vLLM, SGLang, llama.cpp or "
             "Ollama when clients need the reasoning field or tool calls")

PROFILE = EngineProfile(
    name="transformers", label="transformers", default_port=8000, tracker="huggingface/transformers",
    version_hint="transformers serve has no version route; run 'pip show transformers' on the server",
    log_hints=(r"transformers/(?:generation|commands|models)|transformers serve",),
    rules=(
        Rule(75, "/v1/models created is a fractional timestamp, owned_by=openai (transformers serve)",
             _fractional_created),
        Rule(125, "FastAPI 404 {\"detail\": \"Not Found\"} everywhere but /health and /v1/models, with x-request-id",
             lambda s: "uvicorn" in s.server and "x-request-id" in s.headers and isinstance(s.health, dict)
             and s.health == {"status": "ok"} and s.status("/version") == 404 and s.status("/info") == 404),
    ),
    find_models=_pinned_model,
    reasoning_field=False, reasoning_events=False, done_sentinel=False,
    fixes={
        "probe.reasoning": NO_PARSER, "probe.harmony_leak": NO_PARSER, "probe.flattened_channels": NO_PARSER,
        "probe.tools.no_parser": NO_PARSER, "probe.tools.call": NO_PARSER,
        "probe.responses.function_call": NO_PARSER,
        "models.listed": "transformers serve answers GET /v1/models with HTTP 500 when the Hugging Face cache folder "
                         "does not exist (it lists the cached models): create it (HF_HOME/hub or HF_HUB_CACHE) if "
                         "clients need the list; chat works without it",
        "probe.stream.framing": "nothing to fix on the server: the OpenAI SDKs end the stream at the connection "
                                "close; a client that waits for data: [DONE] needs a read timeout",
    },
    own_fix_first=PARSER_FINDINGS,
)

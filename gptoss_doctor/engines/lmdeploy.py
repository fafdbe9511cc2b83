"""LMDeploy (https://lmdeploy.readthedocs.io). Fingerprint: owned_by 'lmdeploy', /health JSON {status} from uvicorn,
its own 401 error shape; no version over HTTP; /v1/encode tokenizes; its Responses stream has no reasoning events.
gpt-oss needs openai_harmony installed and --tool-call-parser gpt-oss; duplicated streamed tool arguments were fixed
by InternLM/lmdeploy#4023."""

from __future__ import annotations

from gptoss_doctor.engines.profile import PARSER_FINDINGS, EngineProfile, Rule, Tokenizer, owned_by, parser_fixes


# how this engine is recognised from the discovery answers (lowest priority first, across all engines)
RULES = (
    owned_by(62, "lmdeploy"),
    Rule(120, "/health answers JSON {status: ...} from uvicorn",
         lambda s: isinstance(s.health, dict) and s.health.get("status") in (
             "healthy", "sleeping", "initializing", "unhealthy") and "uvicorn" in s.server),
    Rule(210, "401 body in LMDeploy's error shape", auth=True,
         test=lambda s: '"authentication_error"' in s.text("/v1/models").replace(" ", "")
         and '"object":"error"' in s.text("/v1/models").replace(" ", "")),
)


PROFILE = EngineProfile(
    name="lmdeploy", label="LMDeploy", default_port=23333, tracker="InternLM/lmdeploy",
    port_flags=("--server-port",), host_flags=("--server-name",),
    # api_server.py builds FastAPI(docs_url='/', lifespan=...) with no version: /openapi.json says FastAPI's 0.1.0
    version_hint="LMDeploy has no version route and its OpenAPI document carries FastAPI's default 0.1.0; run "
                 "'pip show lmdeploy' on the server",
    log_hints=(r" - lmdeploy - |(?i:\blmdeploy\b)",),
    rules=RULES,
    tokenizer=Tokenizer("/v1/encode", lambda text, model: {"input": text, "do_preprocess": False, "add_bos": False}),
    reasoning_events=False, embeds_harmony=True, reads_generation_config=True,
    fixes=parser_fixes(
        tools="start LMDeploy with --tool-call-parser gpt-oss (openai_harmony installed)",
        reasoning="install openai_harmony next to LMDeploy so it uses the Harmony parser"),
    own_fix_first=PARSER_FINDINGS,
)

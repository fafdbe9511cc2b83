"""Ollama (https://github.com/ollama/ollama/blob/main/docs/api.md). Fingerprint: GET / answers 'Ollama is running',
owned_by 'library', /api/version; /api/show gives the architecture, context length, EOS list and stop parameters.
gpt-oss tool-template fixes landed in 0.11.4."""

from __future__ import annotations

import re

from gptoss_doctor.engines.profile import EngineProfile, Rule, as_int, json_obj, older_than, owned_by, signal_field
from gptoss_doctor.harmony.tokens import SPECIAL_IDS


# how this engine is recognised from the discovery answers (lowest priority first, across all engines)
RULES = (
    Rule(20, "GET / answers 'Ollama is running'", lambda s: "Ollama is running" in s.root_text),
    owned_by(66, "library"),
    Rule(110, "/api/version answers",
         lambda s: bool(s.api_version and "version" in s.api_version and "uvicorn" not in s.server)),
)


async def _show(client, d, model) -> None:
    from gptoss_doctor.check.discover import is_gpt_oss

    if not model:
        return
    obj = json_obj(await client.post("/api/show", {"model": model}))
    if not obj:
        return
    mi = obj.get("model_info") if isinstance(obj.get("model_info"), dict) else {}
    m = d.model(model)
    if m is not None:
        family = (obj.get("details") or {}).get("family") if isinstance(obj.get("details"), dict) else None
        if is_gpt_oss(mi.get("general.architecture"), family):
            m.gpt_oss = True
        for k, v in mi.items():
            if isinstance(k, str) and k.endswith(".context_length") and as_int(v):
                m.max_model_len, m.context_source = as_int(v), f"/api/show {k}"
                break
    eos = mi.get("tokenizer.ggml.eos_token_ids")
    if isinstance(eos, list) and all(as_int(x) is not None for x in eos):
        d.stop_sources.append(("eos_list", "/api/show tokenizer.ggml.eos_token_ids", [as_int(x) for x in eos]))
    params = obj.get("parameters")
    if isinstance(params, str):
        stops = re.findall(r'^\s*stop\s+"?([^"\n]+)"?\s*$', params, re.M)
        ids = [SPECIAL_IDS[s.strip()] for s in stops if s.strip() in SPECIAL_IDS]
        if stops:
            d.stop_sources.append(("stop_strings", "/api/show parameters stop", ids))


def _health(d, col) -> bool:
    if d.responses["/"].ok:
        col.add("health", "pass", "GET / answers 'Ollama is running'")
        return True
    return False


PROFILE = EngineProfile(
    name="ollama", label="Ollama", default_port=11434, tracker="ollama/ollama", port_flags=(), host_flags=(),
    host_env="OLLAMA_HOST",
    log_hints=(r"source=\w+\.go:\d+|harmonyparser\.go|\bollama\b|\bOllama\b|\bgpt-oss:(?:20b|120b|latest)\b",),
    rules=RULES,
    read_version=signal_field("api_version", "version"), enrich=_show, judge_health=_health,
    responses_added=((0, 13, 3), "Ollama added /v1/responses in 0.13.3 (ollama/ollama PR #13351; "
                     "https://github.com/ollama/ollama/issues/13595): upgrade Ollama to use the Responses API"),
    version_rule=older_than((0, 11, 4), "Ollama {version} predates the gpt-oss tool-template fixes of 0.11.4"),
    fixes={"engine.version": "upgrade Ollama and re-pull the model (ollama pull gpt-oss:20b)",
           "models.context": "set OLLAMA_CONTEXT_LENGTH or num_ctx (e.g. 32768+)"},
)

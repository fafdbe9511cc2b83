"""LM Studio (https://lmstudio.ai/docs/app/api). Fingerprint: unknown routes answer HTTP 200 'Unexpected endpoint or
method', owned_by 'organization_owner', its own 401 wording; /api/v0/models gives the loaded context length and
architecture. Before 0.3.23 gpt-oss reasoning came back inside content."""

from __future__ import annotations

from gptoss_doctor.engines.profile import EngineProfile, Rule, as_int, json_obj, older_than, owned_by


# how this engine is recognised from the discovery answers (lowest priority first, across all engines)
RULES = (
    Rule(50, "unknown routes answer 'Unexpected endpoint or method'", lambda s: s.unexpected_route),
    owned_by(65, "organization_owner"),
    Rule(240, "401 body in LM Studio's wording", auth=True,
         test=lambda s: "Provide a valid API token" in s.text("/v1/models")),
)


async def _models(client, d, model) -> None:
    from gptoss_doctor.check.discover import is_gpt_oss

    obj = json_obj(await client.get("/api/v0/models"))
    data = obj.get("data") if obj else None
    if not isinstance(data, list):
        return
    for card in data:
        if isinstance(card, dict) and isinstance(card.get("id"), str):
            m = d.model(card["id"])
            if m is None:
                continue
            n = as_int(card.get("loaded_context_length")) or as_int(card.get("max_context_length"))
            if n:
                m.max_model_len, m.context_source = n, "/api/v0/models"
            if is_gpt_oss(card.get("arch")):
                m.gpt_oss = True


PROFILE = EngineProfile(
    name="lmstudio", label="LM Studio", default_port=1234, tracker="lmstudio-ai/lmstudio-bug-tracker",
    log_hints=(r"(?i:\bLM ?Studio\b)|\blmstudio\b|\[LM STUDIO SERVER\]|\blms\b",),
    rules=RULES,
    enrich=_models,
    version_rule=older_than((0, 3, 23), "LM Studio {version} returns gpt-oss reasoning inside content (fixed in 0.3.23)"),
    fixes={"engine.version": "upgrade LM Studio (>= 0.3.23)"},
)

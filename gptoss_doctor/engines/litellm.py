"""LiteLLM proxy (https://docs.litellm.ai/docs/simple_proxy). A proxy: it re-serialises its backend's answers, so
the fix is often in the backend. Fingerprint: x-litellm-* headers, /health/readiness litellm_version,
/health/liveliness "I'm alive!", model cards with its constant created=1677610602; recorded 1.109.1 answers a key it
cannot look up without a database with HTTP 400 'No connected db.'."""

from __future__ import annotations

import re

from gptoss_doctor import rx as _rx

from gptoss_doctor.engines.profile import EngineProfile, Rule, as_int, as_str, json_obj


# how this engine is recognised from the discovery answers (lowest priority first, across all engines)
RULES = (
    Rule(10, "LiteLLM health/readiness endpoints or x-litellm-* headers",
         lambda s: any(k.startswith("x-litellm") for k in s.headers)
         or bool(s.readiness and "litellm_version" in s.readiness)
         or (s.ok("/health/liveliness") and "I'm alive" in s.text("/health/liveliness"))),
    Rule(70, "/v1/models created=1677610602, owned_by=openai (LiteLLM constants)",
         lambda s: bool(s.cards) and all(c.get("created") == 1677610602 for c in s.cards) and s.owned == {"openai"}),
    Rule(220, "401 body in LiteLLM's error shape", auth=True,
         test=lambda s: "auth_error" in s.text("/v1/models").replace(" ", "")),
    Rule(230, "400 'No connected db.' (LiteLLM's answer to a key it cannot look up)", auth=True,
         test=lambda s: "no_db_connection" in s.text("/v1/models").replace(" ", "")
         or "Noconnecteddb" in s.text("/v1/models").replace(" ", "")),
)


def _version(s):
    return as_str((s.readiness or {}).get("litellm_version")) or as_str(s.headers.get("x-litellm-version"))


_OPENAPI_VERSION = _rx.compile(r'^\s*\{\s*"openapi"\s*:\s*"[^"]*"\s*,\s*"info"\s*:\s*\{.*?"version"\s*:\s*"([0-9][\w.+-]{0,39})"',
                              re.S)


async def _openapi_version(client, d) -> None:
    """LiteLLM 1.109.1 names its version in no discovery answer, but its FastAPI OpenAPI document does
    (info.version, in the first kilobytes of a ~2 MB document: only the first 16 KiB are read). The proxy builds
    that document on the first request (7 s on a busy 2-core machine), so this read gets the full --timeout."""
    r = d.responses.get("/openapi.json")  # discovery read it already (capped: its head is enough)
    if r is None or r.status != 200 or not r.body:
        r = await client.get("/openapi.json", limit=16384)
    m = _OPENAPI_VERSION.match(r.text) if r.status == 200 and r.body else None
    if m:
        d.version = m.group(1)
        d.engine_evidence.append(f"GET /openapi.json info.version: {d.version}")


async def _backends(client, d, model) -> None:
    """Name the backend of each model so the user can check it directly."""
    obj = json_obj(await client.get("/v1/model/info"))
    data = obj.get("data") if obj else None
    if not isinstance(data, list):
        return
    for item in data[:5]:
        params = item.get("litellm_params") if isinstance(item, dict) else None
        if not isinstance(params, dict):
            continue
        target, base = as_str(params.get("model")), as_str(params.get("api_base"))
        info = item.get("model_info") if isinstance(item.get("model_info"), dict) else {}
        name = as_str(item.get("model_name"))
        m = d.model(name) if name else None
        n = as_int(info.get("max_input_tokens"))
        if m is not None and n and not m.max_model_len:
            m.max_model_len, m.context_source = n, "/v1/model/info max_input_tokens (LiteLLM's table, not the backend)"
        if target or base:
            d.backends.append(f"{name or '?'} -> {target or '?'}" + (f" at {base}" if base else ""))


def _health(d, col) -> bool:
    r = d.responses
    if not r["/health/liveliness"].answered:
        return False
    h, lv, rd = r["/health"], r["/health/liveliness"], r["/health/readiness"]
    hobj = h.json_object() if h.ok else None
    bad = [e for e in (hobj or {}).get("unhealthy_endpoints") or [] if isinstance(e, dict)]
    if lv.ok and bad:
        # the proxy is up; what is down is the backend it routes to
        where = ", ".join(str(e.get("api_base") or e.get("model") or "?") for e in bad[:3])
        col.health_failed = True
        col.add("health", "fail", f"the LiteLLM proxy is up, but its backend is unhealthy: {where}",
                [str(bad[0].get("error") or "")[:200]], error_text=str(bad[0].get("error") or "")[:2000],
                fix=f"start or fix the backend behind the proxy, then check it directly: gptoss-doctor check "
                    f"{str(bad[0].get('api_base') or 'BACKEND_URL').removesuffix('/v1')}")
    elif lv.ok and (rd.ok or not rd.answered):
        col.add("health", "pass", "GET /health/liveliness and /health/readiness answer OK")
    else:
        col.add("health", "fail", f"LiteLLM health: liveliness {lv.describe()}, readiness {rd.describe()}")
    return True


PROFILE = EngineProfile(
    name="litellm", label="LiteLLM proxy", default_port=4000, tracker="BerriAI/litellm",
    log_hints=(r"\blitellm\b|\bLiteLLM\b",),
    rules=RULES,
    read_version=_version, find_version=_openapi_version, enrich=_backends, judge_health=_health, is_proxy=True,
    fixes={"health": "the proxy is up; fix the backend it routes this model to (check it directly with gptoss-doctor "
                     "check)",
           "auth.rejected": "use the proxy's master key (LITELLM_MASTER_KEY) or one of its virtual keys: without a "
                            "database LiteLLM answers any other key with 'No connected db.'"},
)

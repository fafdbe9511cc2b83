"""OpenAI's reference Responses API server from the ``gpt-oss`` package
(``python -m gpt_oss.responses_api.serve``; https://github.com/openai/gpt-oss, section "Responses API" of its
README: "an example Responses API server. This server does not implement every feature and event of the Responses
API but should be compatible with most of the basic use cases").

Read from PyPI gpt-oss 0.0.9 (its ``gpt_oss/responses_api/api_server.py``, ``types.py``, ``serve.py``; recorded on
CPU with the transformers backend and tiny models): FastAPI behind uvicorn serving only ``POST /v1/responses`` plus
FastAPI's own ``/openapi.json``, ``/docs`` and ``/redoc``. No /v1/models, /health, chat completions, tokenizer,
metrics, version or API key; every other path is 404 {"detail": "Not Found"}. The OpenAPI document has the title
"FastAPI", the one path /v1/responses and the request schema ``ResponsesRequest`` whose ``model`` defaults to
"gpt-oss-120b" (``types.MODEL_IDENTIFIER``): every answer names that model, whatever the request asked for and
whatever checkpoint was loaded. Streams: ``event:`` + ``data:`` lines, no ``data: [DONE]``; the events that stream
the first output item carry ``output_index`` -1 (the counter is raised only when a message ends; the item's done
events carry 0); function calls arrive as one ``response.output_item.done``. A reply cut by max_output_tokens still
says status "completed". The built-in python tool (``code_interpreter``) runs through ``PYTHON_EXECUTION_BACKEND``
(``docker`` by default, ``dangerously_use_uv``, ``dangerously_use_local_jupyter``; gpt_oss/tools/python_docker/
docker_tool.py): without a reachable Docker daemon the request fails with HTTP 500 (streamed: the stream is cut after
``response.code_interpreter_call.interpreting``).
"""

from __future__ import annotations

from typing import Optional

from gptoss_doctor.engines.profile import EngineProfile, Rule, Signals, as_str, json_obj

ONLY_RESPONSES = "the reference server serves only /v1/responses"


def _openapi(s: Signals) -> Optional[dict]:
    r = s.responses.get("/openapi.json")
    return json_obj(r) if r is not None else None


def _is_reference(s: Signals) -> bool:
    """Its OpenAPI document: the one path /v1/responses and the ResponsesRequest schema (a /v1/models added in
    front of it, by a proxy or a patched app, does not change what it serves)."""
    doc = _openapi(s)
    paths = doc.get("paths") if doc else None
    comps = doc.get("components") if doc else None
    schemas = comps.get("schemas") if isinstance(comps, dict) else None
    return (isinstance(paths, dict) and set(paths) == {"/v1/responses"} and isinstance(schemas, dict)
            and "ResponsesRequest" in schemas)


def default_model(s: Optional[Signals]) -> Optional[str]:
    """The model name its request schema defaults to (and every answer names): ResponsesRequest.model.default."""
    doc = _openapi(s) if s is not None else None
    try:
        return as_str(doc["components"]["schemas"]["ResponsesRequest"]["properties"]["model"]["default"])
    except (KeyError, TypeError):
        return None


async def _model_from_openapi(client, d) -> None:
    """No /v1/models: the served model is the one the OpenAPI request schema names (the server ignores the
    request's model and answers with this one)."""
    from gptoss_doctor.check.discover import ModelInfo, is_gpt_oss

    mid = default_model(d.signals)
    if mid:
        d.models.append(ModelInfo(id=mid, gpt_oss=is_gpt_oss(mid), context_source=(
            "/openapi.json: ResponsesRequest.model default (every answer names it, whatever checkpoint is loaded)")))


def _health(d, col) -> bool:
    col.add("health", "skip", f"no health endpoint: {ONLY_RESPONSES} (GET /health -> {d.responses['/health'].describe()})")
    return True


PYTHON_BACKEND = ("the server's python tool runs through PYTHON_EXECUTION_BACKEND (docker by default): start the "
                  "Docker daemon and give the server's user access to it (the docker socket), or restart the server "
                  "with PYTHON_EXECUTION_BACKEND=dangerously_use_uv (runs the model's code unsandboxed on the host: "
                  "only on a machine you can lose); the server log has the traceback")

CONFORMANCE = ("the reference server's own shapes (gpt_oss/responses_api/api_server.py): the events of the first "
               "output item carry output_index -1 (its done events 0), so a client must key items by item_id, not "
               "by output_index; every answer names model 'gpt-oss-120b' whatever checkpoint is loaded; a reply cut "
               "by max_output_tokens still says status 'completed' (compare usage.output_tokens with "
               "max_output_tokens); streams end without data: [DONE]. Nothing to change on the server (an example "
               "implementation): serve the model with vLLM, SGLang or Ollama for clients that need the full "
               "Responses API")

PROFILE = EngineProfile(
    name="gptoss-reference", label="gpt-oss reference server", default_port=8000, tracker="openai/gpt-oss",
    log_hints=(r"gpt_oss/responses_api|gpt_oss\.responses_api",),
    rules=(Rule(70, "/openapi.json lists only POST /v1/responses (ResponsesRequest): OpenAI's gpt-oss reference "
                    "Responses API server", _is_reference),),
    find_models=_model_from_openapi, judge_health=_health,
    chat_api=False, only_responses=ONLY_RESPONSES, builtin_python=True,
    # it parses with openai-harmony, but the knowledge-base entries tagged 'harmony' describe vLLM's Responses layer,
    # and its own Harmony errors reach clients as a bare "Internal Server Error" (recorded): nothing to match
    done_sentinel=False, embeds_harmony=False,
    fixes={
        "probe.responses.builtin_tools": PYTHON_BACKEND,
        "probe.responses.conformance": CONFORMANCE,
        "probe.responses": "the reference server answered without output text: it drops a python call when the "
                           "request declares no code_interpreter tool, and cuts replies that end inside a Harmony "
                           "header (HTTP 500); nothing to set on the server: check the checkpoint given to "
                           "--checkpoint and read the server log for this request",
        "probe.responses.function_call": "the reference server puts the function tools into the Harmony prompt and "
                                         "parses the call itself: there is no parser flag to set, so the model did "
                                         "not call the function (check the checkpoint given to --checkpoint)",
        "probe.responses.tool_output": "the reference server hands function_call_output items to the model as "
                                       "tool messages itself: nothing to set on the server, so the model ignored "
                                       "the result (check the checkpoint given to --checkpoint)",
        "probe.responses.reasoning": "the reference server has no reasoning parser to turn on: it streams "
                                     "response.reasoning_text events whenever the model writes an analysis message, "
                                     "so this model answered without one (check the checkpoint given to "
                                     "--checkpoint)",
    },
)

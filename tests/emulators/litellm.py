"""LiteLLM proxy (FastAPI + uvicorn) in front of a vLLM backend – server_apis.md §8, §10.2.

The proxy is emulated in-process (no real backend server); backend faults pass through
as LiteLLM re-serialises them (reasoning normalised to `reasoning_content`, errors wrapped).
"""
from __future__ import annotations

import time
import uuid
from typing import Any, Optional

from ._base import Engine
from ._http import Request, Response, json_response, text_response
from . import _model as M

PUBLIC_ROUTES = ("/routes", "/", "/health/liveliness", "/health/liveness", "/health/readiness", "/test",
                 "/config/yaml", "/metrics", "/litellm/.well-known/litellm-ui-config",
                 "/.well-known/litellm-ui-config", "/public/model_hub", "/openapi.json")
BACKEND_BASE = "http://127.0.0.1:8000/v1"


class LiteLLM(Engine):
    name = "litellm"
    default_version = "1.78.5"
    default_model = "gpt-oss-20b"  # model_name alias from config.yaml
    backend_model = "hosted_vllm/openai/gpt-oss-20b"
    health_paths = ("/health/liveliness", "/health/liveness", "/health/readiness")
    reasoning_keys = ("reasoning_content",)
    responses_reasoning_style = "plain"
    inference_prefixes = ("/v1/chat/completions", "/chat/completions", "/v1/completions", "/completions",
                          "/v1/responses", "/responses")

    def setup_routes(self) -> None:
        if self.vt >= (1, 109):
            self.server_header = None  # recorded 1.109.1 sends no Server header
        r = self.route
        r("GET", "/", self.index)
        r("GET", "/openapi.json", self.openapi)
        r("GET", "/health/liveliness", lambda req: json_response("I'm alive!"))
        r("GET", "/health/liveness", lambda req: json_response("I'm alive!"))
        r("GET", "/health/readiness", self.readiness)
        r("GET", "/health", self.health)
        r("GET", "/routes", self.routes_list)
        r("GET", "/v1/models", self.models)
        r("GET", "/models", self.models)
        r("GET", "/model/info", self.model_info)
        r("GET", "/v1/model/info", self.model_info)
        r("POST", "/v1/chat/completions", self.chat_completions)
        r("POST", "/chat/completions", self.chat_completions)
        r("POST", "/v1/completions", self.completions)
        r("POST", "/completions", self.completions)
        r("POST", "/v1/responses", self.responses)
        r("POST", "/responses", self.responses)
        r("POST", "/utils/token_counter", self.token_counter)

    # -- auth (§8): master key on everything but public routes -----------------------------------
    def is_public(self, req: Request) -> bool:
        return req.path in PUBLIC_ROUTES

    def authorized(self, req: Request) -> bool:
        return req.bearer() == self.api_key or req.headers.get("x-litellm-api-key") == self.api_key

    def unauthorized(self, req: Request) -> Response:
        if req.bearer() is None and "x-litellm-api-key" not in req.headers:
            msg = "Authentication Error, No api key passed in."
        elif self.vt >= (1, 100):
            # recorded on 1.109.1 with a master key and no database: an unknown key is a 400
            return json_response({"error": {"message": "No connected db.", "type": "no_db_connection", "param": None,
                                            "code": "400"}}, status=400)
        else:
            msg = "Authentication Error, Invalid proxy server token passed. Unable to find token in cache or `LiteLLM_VerificationTokenTable`"
        return json_response({"error": {"message": msg, "type": "auth_error", "param": "None", "code": "401"}},
                             status=401)

    # -- errors (§8): code/param as strings ---------------------------------------------------------
    def error(self, status: int, message: str, type_: Optional[str] = None, param: Any = None,
              code: Any = None) -> Response:
        return json_response({"error": {"message": message, "type": type_, "param": str(param),
                                        "code": str(status if code is None else code)}}, status=status)

    def responses_error(self, status: int, message: str, type_: str = "invalid_request_error",
                        param: Any = None) -> Response:
        return self.error(status, f"litellm.BadRequestError: {message}", type_, param)

    def responses_not_found(self, req: Request) -> Response:
        return self.error(404, "litellm.NotFoundError: NotFoundError: Hosted_vllmException - Not Found. "
                               f"Received Model Group={self.model}\nAvailable Model Group Fallbacks=None",
                          None, None)

    def model_not_found(self, name: str) -> Response:
        return self.error(400, f"/chat/completions: Invalid model name passed in model={name}. Call `/v1/models` "
                               "to view available models for your key.", "None", None)

    def dead_response(self, req: Request) -> Response:
        if req.path in self.health_paths:  # the proxy itself is fine; only the backend is down
            return self.dispatch_health(req)
        return self.error(503, "litellm.ServiceUnavailableError: ServiceUnavailableError: Hosted_vllmException - "
                               "Service Unavailable. Received Model Group=" + self.model, None, None)

    def dispatch_health(self, req: Request) -> Response:
        if req.path == "/health/readiness":
            return self.readiness(req)
        return json_response("I'm alive!")

    def harmony_error_response(self, message: str, turn: Optional[M.Turn] = None) -> Response:
        return self.error(500, f"litellm.InternalServerError: InternalServerError: Hosted_vllmException - {message}. "
                               f"Received Model Group={self.model}\nAvailable Model Group Fallbacks=None", None, None)

    def stale_error_text(self, turn: M.Turn) -> str:
        return f"litellm.InternalServerError: InternalServerError: Hosted_vllmException - {turn.harmony_error}"

    def stream_error_obj(self, message: str) -> dict:
        return {"error": {"message": f"litellm.InternalServerError: InternalServerError: Hosted_vllmException - "
                                     f"{message}", "type": None, "param": None, "code": "500"}}

    def chat_precheck(self, body: dict):
        # recorded on 1.109.1 (no-master-key-backend-llama-key-wrong): the backend's 401, then a cooldown 429
        if self.has("backend_key_wrong"):
            return json_response({"error": {"message": "litellm.AuthenticationError: AuthenticationError: "
                                  "OpenAIException - Invalid API Key\n\nLiteLLM: model group 'gpt-oss-20b' failed with "
                                  "the error above. No fallback was attempted.", "type": "authentication_error",
                                  "param": None, "code": "401"}}, status=401)
        if self.has("backend_cooldown"):
            return json_response({"error": {"message": "No deployments available for selected model, Try again in 5 "
                                  "seconds. All deployments for selected model are in cooldown. Passed model="
                                  f"{self.model}. pre-call-checks=False, cooldown_list=['e18ed91d60940c98']",
                                  "type": "all_deployments_in_cooldown", "param": None, "code": "429"}},
                                 status=429, headers=[("retry-after", "5")])
        return None

    # -- headers (§8) --------------------------------------------------------------------------------
    def completion_headers(self) -> list:
        return [("x-litellm-call-id", str(uuid.uuid4())), ("x-litellm-model-id", "e4d5a3f0b1c2"),
                ("x-litellm-model-api-base", BACKEND_BASE), ("x-litellm-version", self.version),
                ("x-litellm-model-group", self.model), ("x-litellm-response-cost", "0.0"),
                ("x-litellm-key-spend", "0.0"), ("x-litellm-response-duration-ms", "412.5"),
                ("x-litellm-overhead-duration-ms", "3.1"), ("x-litellm-attempted-retries", "0"),
                ("x-litellm-attempted-fallbacks", "0"), ("x-litellm-max-fallbacks", "0"),
                ("llm_provider-server", "uvicorn"), ("llm_provider-content-type", "application/json")]

    # -- routes ------------------------------------------------------------------------------------
    def index(self, req: Request) -> Response:
        return text_response("<!DOCTYPE html><html><head><title>LiteLLM API - Swagger UI</title></head>"
                             "<body><div id=\"swagger-ui\"></div></body></html>",
                             content_type="text/html; charset=utf-8")

    def openapi(self, req: Request) -> Response:
        # real 1.109.1 (run here): public, ~2 MB, `{"openapi":"3.1.0","info":{"title":"LiteLLM API","description":
        # "Proxy Server to call 100+ LLMs in the OpenAI format. …","version":"1.109.1"},"paths":{…}}`, info first
        paths = {f"/route/{i}": {"get": {"summary": "x" * 200}} for i in range(4000)}  # keeps it over 1 MiB
        return json_response({"openapi": "3.1.0", "info": {
            "title": "LiteLLM API", "description": "Proxy Server to call 100+ LLMs in the OpenAI format. "
            "[**Customize Swagger Docs**](https://docs.litellm.ai/docs/enterprise#operations--branding)",
            "version": self.version}, "paths": paths})

    def readiness(self, req: Request) -> Response:
        if self.vt >= (1, 100):
            # recorded on 1.109.1 (../shared/real/litellm-1.109.1): no version here, only on completions
            return json_response({"status": "healthy", "db": "Not connected"})
        return json_response({"status": "healthy", "db": "Not connected", "cache": None,
                              "litellm_version": self.version, "success_callbacks": ["sync_deployment_callback_on_success"],
                              "use_aiohttp_transport": True})

    def health(self, req: Request) -> Response:
        ep = {"model": self.backend_model, "api_base": BACKEND_BASE}
        if self.has("dead"):
            return json_response({"healthy_endpoints": [], "unhealthy_endpoints": [
                dict(ep, error="litellm.ServiceUnavailableError: Hosted_vllmException - Service Unavailable")],
                "healthy_count": 0, "unhealthy_count": 1})
        return json_response({"healthy_endpoints": [ep], "unhealthy_endpoints": [], "healthy_count": 1,
                              "unhealthy_count": 0})

    def routes_list(self, req: Request) -> Response:
        return json_response({"routes": [{"path": p, "methods": sorted(m), "name": p.strip("/").replace("/", "_"),
                                          "endpoint": p.strip("/").replace("/", "_")}
                                         for m, rx, _ in self._routes for p in [rx.pattern.strip("^$")]]})

    def models(self, req: Request) -> Response:
        return json_response({"data": [{"id": self.model, "object": "model", "created": 1677610602,
                                        "owned_by": "openai"}], "object": "list"})

    def model_info(self, req: Request) -> Response:
        return json_response({"data": [{"model_name": self.model,
                                        "litellm_params": {"model": self.backend_model, "api_base": BACKEND_BASE},
                                        "model_info": {"id": "e4d5a3f0b1c2", "db_model": False,
                                                       "key": self.backend_model, "max_tokens": None,
                                                       "max_input_tokens": None, "max_output_tokens": None,
                                                       "litellm_provider": "hosted_vllm", "mode": "chat"}}]})

    def token_counter(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return err
        text = M.render_harmony_prompt(body.get("messages") or []) if body.get("messages") else M.text_of(body.get("prompt"))
        return json_response({"total_tokens": M.count_tokens(text), "request_model": body.get("model"),
                              "model_used": self.backend_model, "tokenizer_type": "openai_tokenizer"})

    # -- chat (§8: re-serialised by LiteLLM) ------------------------------------------------------
    def chat_message(self, turn: M.Turn) -> dict:
        msg: dict = {"content": turn.content, "role": "assistant",
                     "tool_calls": [self.tool_call_obj(i, tc) for i, tc in enumerate(turn.tool_calls)] or None,
                     "function_call": None}
        if turn.reasoning is not None:
            msg["reasoning_content"] = turn.reasoning
        msg["provider_specific_fields"] = {"refusal": None}
        return msg

    def usage(self, turn: M.Turn) -> dict:
        return {"completion_tokens": turn.completion_tokens, "prompt_tokens": turn.prompt_tokens,
                "total_tokens": turn.prompt_tokens + turn.completion_tokens,
                "completion_tokens_details": {"reasoning_tokens": M.count_tokens(turn.reasoning or "")},
                "prompt_tokens_details": None}

    def responses_stream(self, body: dict, rid: str, items: list, turn: M.Turn, final_obj: dict):
        yield from super().responses_stream(body, rid, items, turn, final_obj)
        if self.vt >= (1, 109):
            yield b"data: [DONE]\n\n"  # recorded 1.109.1: the Responses stream ends with [DONE] too

    def chat_json(self, body: dict, turn: M.Turn) -> dict:
        return {"id": self.chat_id(), "created": int(time.time()), "model": self.model, "object": "chat.completion",
                "system_fingerprint": None,
                "choices": [{"finish_reason": turn.finish_reason, "index": 0, "message": self.chat_message(turn)}],
                "usage": self.usage(turn), "service_tier": None}

    def chunk_extras(self, final: bool, turn: M.Turn) -> dict:
        return {"system_fingerprint": None}

    def first_delta(self) -> dict:
        return {"role": "assistant", "content": ""}


ENGINE_CLASSES = {"litellm": LiteLLM}

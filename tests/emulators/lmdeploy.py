"""LMDeploy api_server (FastAPI + uvicorn) – server_apis.md §6, §10.2, §11.2."""
from __future__ import annotations

import itertools
import random
import string
from typing import Any, Optional

from ._base import Engine
from ._http import Request, Response, json_response
from . import _model as M

_SHORT = string.ascii_letters + string.digits


def _shortuuid(n: int = 22) -> str:
    return "".join(random.choice(_SHORT) for _ in range(n))


class LMDeploy(Engine):
    name = "lmdeploy"
    default_version = "0.10.2"  # not exposed over HTTP (§6)
    default_model = "openai/gpt-oss-20b"
    health_paths = ("/health",)
    reasoning_keys = ("reasoning_content",)
    responses_reasoning_style = "none"  # LMDeploy emits no reasoning events (§6)
    inference_prefixes = ("/v1/chat/completions", "/v1/completions", "/v1/responses", "/generate")

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self._ids = itertools.count(1)

    def setup_routes(self) -> None:
        r = self.route
        r("GET", "/health", self.health)
        r("GET", "/v1/models", self.models)
        r("POST", "/v1/chat/completions", self.chat_completions)
        r("POST", "/v1/completions", self.completions)
        r("POST", "/v1/responses", self.responses)
        r("POST", "/v1/encode", self.encode)
        r("POST", "/v1/embeddings", lambda req: self.error(400, "Unsupported by turbomind.", "invalid_request_error"))
        r("GET", "/is_sleeping", lambda req: json_response({"is_sleeping": False}))
        r("GET", "/openapi.json", lambda req: json_response({"openapi": "3.1.0",
                                                             "info": {"title": "FastAPI", "version": "0.1.0"},
                                                             "paths": {}}))

    # -- auth (§6): everything except /health, /docs, /redoc, /nodes --------------------------
    def is_public(self, req: Request) -> bool:
        return req.path.startswith(("/health", "/docs", "/redoc", "/nodes"))

    def unauthorized(self, req: Request) -> Response:
        return self.error(401, "Unauthorized.", "authentication_error")

    # -- errors (§6): flat legacy envelope ------------------------------------------------------
    def error(self, status: int, message: str, type_: Optional[str] = None, param: Any = None,
              code: Any = None) -> Response:
        return json_response({"object": "error", "message": message, "type": type_ or "invalid_request_error",
                              "param": None, "code": status if code is None else code}, status=status)

    def responses_error(self, status: int, message: str, type_: str = "invalid_request_error",
                        param: Any = None) -> Response:
        return json_response({"error": {"message": message, "type": type_, "param": param, "code": status}},
                             status=status)

    def model_not_found(self, name: str) -> Response:
        return self.error(404, f"The model {name!r} does not exist.", "not_found_error")

    def dead_response(self, req: Request) -> Response:
        if req.path == "/health":
            return json_response({"status": "unhealthy", "message": "engine is not responding"}, status=503)
        return self.error(503, "The engine is unhealthy.", "server_error")

    def harmony_error_response(self, message: str, turn: Optional[M.Turn] = None) -> Response:
        return self.error(500, message, "server_error")

    def stream_error_obj(self, message: str) -> dict:
        return {"object": "error", "message": message, "type": "server_error", "param": None, "code": 500}

    # -- routes -----------------------------------------------------------------------------------
    def health(self, req: Request) -> Response:
        return json_response({"status": "healthy", "message": None})

    def models(self, req: Request) -> Response:
        created = self.started
        return json_response({"object": "list", "data": [{
            "id": self.model, "object": "model", "created": created, "owned_by": "lmdeploy", "root": self.model,
            "parent": None,
            "permission": [{"id": "modelperm-" + _shortuuid(), "object": "model_permission", "created": created,
                            "allow_create_engine": False, "allow_sampling": True, "allow_logprobs": True,
                            "allow_search_indices": True, "allow_view": True, "allow_fine_tuning": False,
                            "organization": "*", "group": None, "is_blocking": False}]}]})

    def encode(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return err
        inp = body.get("input")
        add_bos = body.get("add_bos", True)

        def enc(s: str) -> list:
            ids = [t for t, _ in M.tokenize(M.text_of(s))]
            return ([M.BOS_ID] if add_bos else []) + ids
        if isinstance(inp, list):
            ids = [enc(s) for s in inp]
            return json_response({"input_ids": ids, "length": [len(i) for i in ids]})
        ids = enc(inp or "")
        return json_response({"input_ids": ids, "length": len(ids)})

    # -- chat (§6, §10.2) ---------------------------------------------------------------------------
    def chat_id(self) -> str:
        return str(next(self._ids))

    def tool_call_id(self) -> str:
        return "chatcmpl-tool-" + _shortuuid()

    def chat_message(self, turn: M.Turn) -> dict:
        return {"role": "assistant", "content": turn.content, "gen_tokens": None,
                "reasoning_content": turn.reasoning,
                "tool_calls": [self.tool_call_obj(i, tc) for i, tc in enumerate(turn.tool_calls)] or None}

    def usage(self, turn: M.Turn) -> dict:
        return {"prompt_tokens": turn.prompt_tokens, "total_tokens": turn.prompt_tokens + turn.completion_tokens,
                "completion_tokens": turn.completion_tokens}

    def first_delta(self) -> dict:
        return {"role": "assistant", "content": ""}


ENGINE_CLASSES = {"lmdeploy": LMDeploy}

"""LM Studio server (closed source; documented surface only) – server_apis.md §7, §10.2, §11.2."""
from __future__ import annotations

import time
import uuid
from typing import Any, Optional

from ._base import Engine
from ._http import Request, Response, json_response
from . import _model as M

RUNTIME = {"name": "llama.cpp-linux-x86_64-nvidia-cuda-avx2", "version": "1.56.0", "supported_formats": ["gguf"]}


class LMStudio(Engine):
    name = "lmstudio"
    default_version = "0.3.31"  # app version: not exposed over HTTP
    default_model = "openai/gpt-oss-20b"
    default_max_model_len = 131072  # loaded context (model max 131072); pass max_model_len=4096 for LM Studio's small default
    server_header = None
    health_paths = ()
    reasoning_keys = ("reasoning",)
    responses_reasoning_style = "plain"
    empty_tool_calls_list = False
    inference_prefixes = ("/v1/chat/completions", "/v1/completions", "/v1/responses", "/api/v0/chat/completions",
                          "/api/v0/completions", "/api/v1/chat")

    @property
    def has_v1_rest(self) -> bool:  # native /api/v1 REST API from 0.4.0
        return self.vt >= (0, 4)

    def setup_routes(self) -> None:
        r = self.route
        r("GET", "/v1/models", self.models)
        r("POST", "/v1/chat/completions", self.chat_completions)
        r("POST", "/v1/completions", self.completions)
        if self.vt >= (0, 3, 29):
            r("POST", "/v1/responses", self.responses)
        r("GET", "/api/v0/models", self.v0_models)
        r("GET", "/api/v0/models/(?P<name>.+)", self.v0_model)
        r("POST", "/api/v0/chat/completions", self.v0_chat)
        if self.has_v1_rest:
            r("GET", "/api/v1/models", self.v1_models)

    # -- unknown routes: {"error": "Unexpected endpoint or method. (GET /x)"} with HTTP 200 (§7) --
    def not_found(self, req: Request) -> Response:
        return json_response({"error": f"Unexpected endpoint or method. ({req.method} {req.path})"}, status=200)

    method_not_allowed = not_found

    def responses_not_found(self, req: Request) -> Response:
        return self.not_found(req)

    def unauthorized(self, req: Request) -> Response:
        # emulator choice (shape not documented): LM Studio-style string error
        return json_response({"error": "Unauthorized. Provide a valid API token in the Authorization header."},
                             status=401)

    def error(self, status: int, message: str, type_: Optional[str] = None, param: Any = None,
              code: Any = None) -> Response:
        return json_response({"error": {"message": message, "type": type_ or "invalid_request_error",
                                        "param": param, "code": code}}, status=status)

    def model_not_found(self, name: str) -> Response:
        return self.error(404, f'Model "{name}" not found. Please check the model identifier.',
                          "invalid_request_error", "model", "model_not_found")

    def dead_response(self, req: Request) -> Response:
        return self.error(404, "No models loaded. Please load a model in the developer page or use the "
                               "`lms load` command.", "invalid_request_error", "model", "model_not_found")

    def harmony_error_response(self, message: str, turn: Optional[M.Turn] = None) -> Response:
        return self.error(500, f"Error parsing model output: {message}", "server_error")

    def stale_error_text(self, turn: M.Turn) -> str:
        return f"Error parsing model output: {turn.harmony_error}"

    def stream_error_obj(self, message: str) -> dict:
        return {"error": {"message": f"Error parsing model output: {message}", "type": "server_error",
                          "param": None, "code": None}}

    # -- routes ----------------------------------------------------------------------------------
    def models(self, req: Request) -> Response:
        return json_response({"data": [{"id": self.model, "object": "model", "owned_by": "organization_owner"},
                                       {"id": "text-embedding-nomic-embed-text-v1.5", "object": "model",
                                        "owned_by": "organization_owner"}], "object": "list"})

    def _v0_card(self) -> dict:
        return {"id": self.model, "object": "model", "type": "llm", "publisher": "openai", "arch": "gpt-oss",
                "compatibility_type": "gguf", "quantization": "MXFP4",
                "state": "not-loaded" if self.has("dead") else "loaded",
                "max_context_length": 131072, "loaded_context_length": self.max_model_len,
                "capabilities": ["tool_use"]}

    def v0_models(self, req: Request) -> Response:
        return json_response({"object": "list", "data": [self._v0_card()]})

    def v0_model(self, req: Request, name: str) -> Response:
        if name != self.model:
            return json_response({"error": f"Model {name} not found"}, status=404)
        return json_response(self._v0_card())

    def v1_models(self, req: Request) -> Response:
        return json_response({"models": [{
            "type": "llm", "publisher": "openai", "key": self.model, "display_name": "gpt-oss 20B",
            "architecture": "gpt-oss", "quantization": {"name": "MXFP4", "bits_per_weight": 4},
            "size_bytes": 12109565952, "params_string": "20B",
            "loaded_instances": [] if self.has("dead") else
            [{"id": self.model, "config": {"context_length": self.max_model_len}}],
            "max_context_length": 131072, "format": "gguf",
            "capabilities": {"vision": False, "trained_for_tool_use": True}, "description": None}]})

    def v0_chat(self, req: Request) -> Response:
        resp = self.chat_completions(req)
        if resp.status != 200 or resp.stream is not None:
            return resp
        import json
        obj = json.loads(resp.body)
        obj["stats"] = {"tokens_per_second": 51.43, "time_to_first_token": 0.111, "generation_time": 0.954,
                        "stop_reason": "eosFound"}
        obj["model_info"] = {"arch": "gpt-oss", "quant": "MXFP4", "format": "gguf",
                             "context_length": self.max_model_len}
        obj["runtime"] = RUNTIME
        return json_response(obj)

    # -- chat ------------------------------------------------------------------------------------
    def tool_call_id(self) -> str:
        return str(uuid.uuid4().int)[:9]

    def chat_id(self) -> str:
        return "chatcmpl-" + uuid.uuid4().hex[:22]

    def chat_message(self, turn: M.Turn) -> dict:
        msg: dict = {"role": "assistant", "content": turn.content or ""}
        if turn.reasoning:
            msg["reasoning"] = turn.reasoning
        msg["tool_calls"] = [self.tool_call_obj(i, tc) for i, tc in enumerate(turn.tool_calls)]
        return msg

    def usage(self, turn: M.Turn) -> dict:
        return {"prompt_tokens": turn.prompt_tokens, "completion_tokens": turn.completion_tokens,
                "total_tokens": turn.prompt_tokens + turn.completion_tokens}

    def chat_json(self, body: dict, turn: M.Turn) -> dict:
        return {"id": self.chat_id(), "object": "chat.completion", "created": int(time.time()), "model": self.model,
                "choices": [{"index": 0, "logprobs": None, "finish_reason": turn.finish_reason,
                             "message": self.chat_message(turn)}],
                "usage": self.usage(turn), "stats": {}, "system_fingerprint": self.model}

    def chunk_extras(self, final: bool, turn: M.Turn) -> dict:
        return {"system_fingerprint": self.model}

    def first_delta(self) -> dict:
        return {"role": "assistant", "content": ""}


ENGINE_CLASSES = {"lmstudio": LMStudio}

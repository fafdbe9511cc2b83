"""TensorRT-LLM trtllm-serve (FastAPI + uvicorn, harmony adapter for gpt-oss) – server_apis.md §9, §10.2."""
from __future__ import annotations

import time
import uuid
from typing import Any, Optional

from ._base import Engine
from ._http import Request, Response, empty_response, json_response, text_response
from . import _model as M


class TRTLLM(Engine):
    name = "trtllm"
    default_version = "1.1.0"
    default_model = "openai/gpt-oss-20b"
    health_paths = ("/health",)
    reasoning_keys = ("reasoning",)
    responses_reasoning_style = "plain"
    responses_uses_chat_parsers = False

    def setup_routes(self) -> None:
        r = self.route
        r("GET", "/health", lambda req: empty_response(200))
        r("GET", "/health_generate", lambda req: text_response("Generation health check OK"))
        r("GET", "/version", lambda req: json_response({"version": self.version}))
        r("GET", "/v1/models", self.models)
        r("GET", "/metrics", lambda req: json_response([{
            "gpuMemUsage": 61234567168, "iter": 42, "iterLatencyMS": 7.1, "numActiveRequests": 0,
            "maxNumActiveRequests": 2048, "kvCacheStats": {"freeNumBlocks": 4096, "maxNumBlocks": 4096,
                                                           "usedNumBlocks": 0, "tokensPerBlock": 32}}]))
        r("GET", "/server_info", lambda req: json_response({"disaggregated_params": None}))
        r("POST", "/v1/chat/completions", self.chat_completions)
        r("POST", "/v1/completions", self.completions)
        r("POST", "/v1/responses", self.responses)
        r("GET", "/v1/responses/(?P<rid>[^/]+)", self.get_response)

    # trtllm-serve has no API-key middleware (§9); with the api_key fault we emulate a gateway in front.
    def unauthorized(self, req: Request) -> Response:
        return self.error(401, "Unauthorized", "AuthenticationError")

    def error(self, status: int, message: str, type_: Optional[str] = None, param: Any = None,
              code: Any = None) -> Response:
        return json_response({"object": "error", "message": message, "type": type_ or "BadRequestError",
                              "param": None, "code": status if code is None else code}, status=status)

    responses_error = lambda self, status, message, type_="invalid_request_error", param=None: \
        self.error(status, message, "InvalidRequestError" if status == 400 else "NotFoundError")

    def bad_json(self) -> Response:
        return json_response({"error": "JSON decode error"}, status=400)

    def model_not_found(self, name: str) -> Response:
        return self.error(404, f"The model `{name}` does not exist.", "NotFoundError")

    def check_model(self, name: Any) -> Optional[Response]:
        return None  # trtllm-serve serves exactly one model and does not validate the name

    def dead_response(self, req: Request) -> Response:
        if req.path == "/health":
            return text_response("LLM is unavailable. Please check the server logs for more details.", status=503)
        return self.error(503, "LLM is unavailable. Please check the server logs for more details.",
                          "ServiceUnavailableError")

    def harmony_error_response(self, message: str, turn: Optional[M.Turn] = None) -> Response:
        return self.error(500, message, "internal_error")

    def stream_error_obj(self, message: str) -> dict:
        return {"object": "error", "message": message, "type": "internal_error", "param": None, "code": 500}

    def models(self, req: Request) -> Response:
        return json_response({"object": "list", "data": [{"id": self.model, "object": "model",
                                                          "created": int(time.time()), "owned_by": "tensorrt_llm"}]})

    # -- chat (§9) -------------------------------------------------------------------------------
    def tool_call_id(self) -> str:
        return "call_" + uuid.uuid4().hex[:8]

    def chat_id(self) -> str:
        return "chatcmpl-" + uuid.uuid4().hex

    def chat_message(self, turn: M.Turn) -> dict:
        msg = {"role": "assistant", "content": turn.content, "reasoning_content": None, "reasoning": turn.reasoning,
               "tool_calls": [self.tool_call_obj(i, tc) for i, tc in enumerate(turn.tool_calls)]}
        return msg

    def choice_extras(self, turn: M.Turn) -> dict:
        return {"stop_reason": turn.stop_token, "mm_embedding_handle": None, "disaggregated_params": None,
                "avg_decoded_tokens_per_iter": 1.0}

    def usage(self, turn: M.Turn) -> dict:
        return {"prompt_tokens": turn.prompt_tokens, "total_tokens": turn.prompt_tokens + turn.completion_tokens,
                "completion_tokens": turn.completion_tokens}

    def completion_extras(self, turn: M.Turn) -> dict:
        return {"prompt_token_ids": None}

    def stream_choice_extras(self, final: bool, turn: M.Turn) -> dict:
        return {"stop_reason": turn.stop_token if final else None, "avg_decoded_tokens_per_iter": 1.0}

    def tool_call_deltas(self, i: int, tc: M.ToolCall) -> list:
        # id created once, name repeated in every delta (§9)
        frags = M.arg_fragments(tc.arguments)
        if self.has("dup_stream_args"):
            frags = [f for f in frags for _ in (0, 1)]
        return [{"id": tc.call_id, "type": "function", "function": {"name": tc.name, "arguments": f}, "index": i}
                for f in frags]


ENGINE_CLASSES = {"trtllm": TRTLLM}

"""Hugging Face TGI router (Rust/axum) – server_apis.md §5.

TGI 3.3.7 has no gpt-oss model code; the emulator pretends a gpt-oss model is served so the
surface (/info, headers, error shapes) can be fingerprinted. No reasoning field, no Responses API.
"""
from __future__ import annotations

import time
from typing import Any, Optional

from ._base import Engine
from ._http import Request, Response, empty_response, json_response, text_response
from . import _model as M


class TGI(Engine):
    name = "tgi"
    default_version = "3.3.7"
    default_model = "openai/gpt-oss-20b"
    server_header = None
    health_paths = ("/health", "/ping")
    reasoning_keys = ()
    inference_prefixes = ("/v1/chat/completions", "/v1/completions", "/generate", "/generate_stream", "/invocations")

    def setup_routes(self) -> None:
        r = self.route
        r("GET", "/", lambda req: empty_response(200))
        r("POST", "/", self.generate)
        r("GET", "/health", lambda req: empty_response(200))
        r("GET", "/ping", lambda req: empty_response(200))
        r("GET", "/info", self.info)
        r("GET", "/metrics", lambda req: text_response(
            "# TYPE tgi_request_count counter\ntgi_request_count 0\n# TYPE tgi_queue_size gauge\ntgi_queue_size 0\n"))
        r("GET", "/v1/models", lambda req: json_response({"object": "list", "data": [
            {"id": self.model, "object": "model", "created": 0, "owned_by": self.model}]}))
        r("POST", "/tokenize", self.tokenize)
        r("POST", "/chat_tokenize", self.chat_tokenize)
        r("POST", "/generate", self.generate)
        r("POST", "/v1/chat/completions", self.chat_completions)
        r("POST", "/v1/completions", self.completions)

    def is_public(self, req: Request) -> bool:
        return req.path in ("/health", "/ping", "/info", "/metrics", "/v1/models", "/chat_tokenize") or \
            (req.path == "/" and req.method == "GET")

    def unauthorized(self, req: Request) -> Response:
        return empty_response(401)

    def error(self, status: int, message: str, type_: Optional[str] = None, param: Any = None,
              code: Any = None) -> Response:
        return json_response({"error": message, "error_type": type_ or "validation"}, status=status)

    def not_found(self, req: Request) -> Response:
        return empty_response(404)

    def method_not_allowed(self, req: Request) -> Response:
        return empty_response(405)

    def bad_json(self) -> Response:
        return text_response("Failed to parse the request body as JSON: expected value at line 1 column 1",
                             status=422)

    def check_model(self, name: Any) -> Optional[Response]:
        return None

    def dead_response(self, req: Request) -> Response:
        if req.path in self.health_paths:
            return json_response({"error": "unhealthy", "error_type": "healthcheck"}, status=503)
        return self.error(503, "Request failed during generation: Server error: transport error", "generation")

    def harmony_error_response(self, message: str, turn: Optional[M.Turn] = None) -> Response:
        return self.error(422, "Request failed during generation: Server error: "
                               "Unexpected token 12606 while expecting start token 200006", "generation")

    def stream_error_obj(self, message: str) -> dict:
        return {"error": "Request failed during generation: Server error: Unexpected token 12606 while "
                         "expecting start token 200006", "error_type": "generation"}

    def completion_headers(self) -> list:
        return [("x-compute-type", "1-nvidia-a100-sxm4-80gb"), ("x-compute-time", "0.41"),
                ("x-compute-characters", "32"), ("x-total-time", "412"), ("x-validation-time", "1"),
                ("x-queue-time", "0"), ("x-inference-time", "411"), ("x-time-per-token", "13"),
                ("x-prompt-tokens", "26"), ("x-generated-tokens", "29")]

    @property
    def fingerprint(self) -> str:
        return f"{self.version}-native"

    def info(self, req: Request) -> Response:
        return json_response({"model_id": self.model, "model_sha": "d666cf3b67006cf8227666739edf25164aaffdeb",
                              "model_pipeline_tag": "text-generation", "max_concurrent_requests": 128,
                              "max_best_of": 2, "max_stop_sequences": 4, "max_input_tokens": self.max_model_len - 1,
                              "max_total_tokens": self.max_model_len, "validation_workers": 2,
                              "max_client_batch_size": 4, "router": "text-generation-router",
                              "version": self.version, "sha": None, "docker_label": None})

    def tokenize(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return err
        out, pos = [], 0
        for tid, piece in M.tokenize(M.text_of(body.get("inputs"))):
            out.append({"id": tid, "text": piece, "start": pos, "stop": pos + len(piece)})
            pos += len(piece)
        return json_response(out)

    def chat_tokenize(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return err
        text = M.render_harmony_prompt(body.get("messages") or [])
        toks, pos = [], 0
        for tid, piece in M.tokenize(text):
            toks.append({"id": tid, "text": piece, "start": pos, "stop": pos + len(piece)})
            pos += len(piece)
        return json_response({"tokenize_response": toks, "templated_text": text})

    def generate(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return err
        return json_response([{"generated_text": "Hello! How can I help you today?"}]
                             if req.path == "/" else {"generated_text": "Hello! How can I help you today?"},
                             headers=self.completion_headers())

    # -- chat ------------------------------------------------------------------------------------
    def chat_id(self) -> str:
        return ""

    def tool_call_id(self) -> str:
        return "0"

    def chat_message(self, turn: M.Turn) -> dict:
        msg: dict = {"role": "assistant", "content": turn.content}
        if turn.tool_calls:
            msg["tool_calls"] = [{"id": tc.call_id, "type": "function",
                                  "function": {"description": None, "name": tc.name, "arguments": tc.arguments}}
                                 for tc in turn.tool_calls]
        return msg

    def usage(self, turn: M.Turn) -> dict:
        return {"prompt_tokens": turn.prompt_tokens, "completion_tokens": turn.completion_tokens,
                "total_tokens": turn.prompt_tokens + turn.completion_tokens}

    def chat_json(self, body: dict, turn: M.Turn) -> dict:
        return {"object": "chat.completion", "id": "", "created": int(time.time()), "model": self.model,
                "system_fingerprint": self.fingerprint,
                "choices": [{"index": 0, "message": self.chat_message(turn), "logprobs": None,
                             "finish_reason": turn.finish_reason}], "usage": self.usage(turn)}

    def chunk_extras(self, final: bool, turn: M.Turn) -> dict:
        return {"system_fingerprint": self.fingerprint, "usage": None}

    def first_delta(self) -> dict:
        return {"role": "assistant", "content": ""}

    def reasoning_delta(self, piece: str) -> dict:
        return {}

    def chat_stream(self, body: dict, turn: M.Turn):
        for item in super().chat_stream(body, turn):
            if b'"delta":{}' in item and b'"finish_reason":null' in item:
                continue  # no reasoning field: skip empty reasoning deltas
            yield item

    def put_reasoning(self, d: dict, text: Optional[str], final: bool = False) -> None:
        pass


ENGINE_CLASSES = {"tgi": TGI}

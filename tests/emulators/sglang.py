"""SGLang server (FastAPI + uvicorn) – server_apis.md §2, §10.2, §11.2."""
from __future__ import annotations

import uuid
from typing import Any, Optional

from ._base import Engine
from ._http import Request, Response, empty_response, json_response, text_response
from . import _model as M

TOKENIZER_MODEL_MAX_LENGTH = 1000000000000000019884624838656  # gpt-oss tokenizer_config "unset" sentinel (§0)


class SGLang(Engine):
    name = "sglang"
    default_version = "0.5.5"
    default_model = "openai/gpt-oss-20b"
    health_paths = ("/health", "/health_generate")
    reasoning_keys = ("reasoning_content",)
    responses_reasoning_style = "sglang"
    responses_uses_chat_parsers = False
    inference_prefixes = ("/v1/chat/completions", "/v1/completions", "/v1/responses", "/generate")

    @property
    def new_info_routes(self) -> bool:  # /server_info, /model_info next to the deprecated /get_* (§2.1)
        return self.vt >= (0, 5, 5)

    def setup_routes(self) -> None:
        r = self.route
        r("GET", "/health", self.health)
        r("GET", "/health_generate", self.health)
        r("GET", "/get_model_info", self.model_info)
        r("GET", "/get_server_info", self.server_info)
        if self.new_info_routes:
            r("GET", "/model_info", self.model_info)
            r("GET", "/server_info", self.server_info)
        r("GET", "/get_load", lambda req: json_response([{"dp_rank": 0, "num_reqs": 0, "num_waiting_reqs": 0,
                                                           "num_tokens": 0}]))
        r("GET", "/get_weight_version", lambda req: json_response({"weight_version": "default"}))
        r("GET", "/v1/models", self.models)
        r("GET", "/v1/models/(?P<name>.+)", self.model_card)
        r("POST", "/tokenize", self.tokenize)
        r("POST", "/v1/tokenize", self.tokenize)
        r("POST", "/detokenize", self.detokenize)
        r("POST", "/v1/detokenize", self.detokenize)
        r("POST,PUT", "/generate", self.generate)
        r("POST", "/v1/chat/completions", self.chat_completions)
        r("POST", "/v1/completions", self.completions)
        r("POST", "/v1/responses", self.responses)
        r("GET", "/v1/responses/(?P<rid>[^/]+)", self.get_response)
        r("GET,POST", "/flush_cache", lambda req: text_response(
            "Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting "
            "requests, the operation will not be performed.)\n"))
        r("GET", "/ping", lambda req: empty_response(200))
        r("GET", "/openapi.json", lambda req: json_response({"openapi": "3.1.0",
                                                             "info": {"title": "FastAPI", "version": "0.1.0"},
                                                             "paths": {}}))

    # -- auth: everything except /health* and /metrics (§2.1) ------------------------
    def is_public(self, req: Request) -> bool:
        return req.path.startswith("/health") or req.path == "/metrics"

    def unauthorized(self, req: Request) -> Response:
        return json_response({"error": "Unauthorized"}, status=401)

    # -- errors (§2.5): flat legacy envelope, nested for /v1/responses -----------------
    def error(self, status: int, message: str, type_: Optional[str] = None, param: Any = None,
              code: Any = None) -> Response:
        return json_response({"object": "error", "message": message, "type": type_ or "BadRequestError",
                              "param": param, "code": status if code is None else code}, status=status)

    def responses_error(self, status: int, message: str, type_: str = "invalid_request_error",
                        param: Any = None) -> Response:
        return json_response({"error": {"message": message, "type": type_, "param": param, "code": status}},
                             status=status)

    def not_found(self, req: Request) -> Response:
        return self.error(404, "Not Found", "404")

    def method_not_allowed(self, req: Request) -> Response:
        return self.error(405, "Method Not Allowed", "405")

    def bad_json(self) -> Response:
        return self.error(400, "JSON decode error", "Bad Request")

    def parse_body(self, req: Request) -> tuple:
        ct = req.headers.get("content-type", "")
        if req.path.startswith("/v1/") and not ct.startswith("application/json"):
            return None, self.error(400, "Unsupported Media Type: Only 'application/json' is allowed",
                                    "Bad Request")
        return super().parse_body(req)

    def model_not_found(self, name: str) -> Response:
        return self.error(400, f"The model '{name}' does not exist", "BadRequestError", param="model")

    def dead_response(self, req: Request) -> Response:
        if req.path in self.health_paths:
            return empty_response(503)
        return self.error(503, "The server is not ready: the scheduler/detokenizer is not responding.",
                          "ServiceUnavailableError")

    def harmony_error_response(self, message: str, turn: Optional[M.Turn] = None) -> Response:
        return self.error(500, message, "InternalServerError")

    def stream_error_obj(self, message: str) -> dict:
        return {"error": {"message": message, "type": "BadRequestError", "param": None, "code": 400}}

    # -- info routes ---------------------------------------------------------------------
    def health(self, req: Request) -> Response:
        return empty_response(200)

    def model_info(self, req: Request) -> Response:
        return json_response({"model_path": self.model, "tokenizer_path": self.model, "is_generation": True,
                              "preferred_sampling_params": None, "weight_version": "default",
                              "has_image_understanding": False, "has_audio_understanding": False,
                              "model_type": "gpt_oss", "architectures": ["GptOssForCausalLM"]})

    def server_info(self, req: Request) -> Response:
        info = {
            "model_path": self.model, "tokenizer_path": self.model, "tokenizer_mode": "auto",
            "skip_tokenizer_init": False, "load_format": "auto", "trust_remote_code": False,
            "context_length": self.max_model_len if self.max_model_len != self.default_max_model_len else None,
            "is_embedding": False, "revision": None, "host": "127.0.0.1", "port": 30000,
            "dtype": "auto", "quantization": None, "served_model_name": self.model, "chat_template": None,
            "mem_fraction_static": 0.85, "max_running_requests": None, "tp_size": 1, "dp_size": 1,
            "api_key": None, "admin_api_key": None, "weight_version": "default",
            "attention_backend": "triton", "sampling_backend": "flashinfer",
            "reasoning_parser": None if self.has("no_reasoning_parser") or self.has("raw_harmony")
            or self.has("flattened") else "gpt-oss",
            "tool_call_parser": None if self.has("no_tool_parser") else "gpt-oss",
            "tool_server": None, "sampling_defaults": "model", "preferred_sampling_params": None,
            "enable_metrics": False, "status": "ready" if not self.has("dead") else "starting",
            "max_total_num_tokens": 1048576, "max_req_input_len": self.max_model_len - 6,
            "internal_states": [{"last_gen_throughput": 0.0, "memory_usage": {"weight": 12.8, "kvcache": 50.1,
                                                                               "token_capacity": 1048576}}],
            "version": self.version,
        }
        return json_response(info)

    def models(self, req: Request) -> Response:
        return json_response({"object": "list", "data": [self._card()]})

    def _card(self) -> dict:
        return {"id": self.model, "object": "model", "created": self.started, "owned_by": "sglang",
                "root": self.model, "max_model_len": self.max_model_len}

    def model_card(self, req: Request, name: str) -> Response:
        if name != self.model:
            return json_response({"error": {"message": f"The model '{name}' does not exist",
                                            "type": "invalid_request_error", "param": "model",
                                            "code": "model_not_found"}}, status=404)
        return json_response(self._card())

    def tokenize(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return err
        prompt = body.get("prompt")
        if isinstance(prompt, list):
            toks = [[t for t, _ in M.tokenize(M.text_of(p))] for p in prompt]
            count = [len(t) for t in toks]
        else:
            toks = [t for t, _ in M.tokenize(M.text_of(prompt))]
            count = len(toks)
        return json_response({"tokens": toks, "count": count, "max_model_len": TOKENIZER_MODEL_MAX_LENGTH})

    def detokenize(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return err
        toks = body.get("tokens") or []
        skip = bool(body.get("skip_special_tokens", True))
        if toks and isinstance(toks[0], list):
            return json_response({"text": [M.detokenize(t, skip_special=skip) for t in toks]})
        return json_response({"text": M.detokenize(toks, skip_special=skip)})

    def generate(self, req: Request) -> Response:
        body, err = super().parse_body(req)
        if err:
            return err
        text = "Hello! How can I help you today?"
        ids = [t for t, _ in M.tokenize(text)]
        rid = uuid.uuid4().hex
        ptoks = M.count_tokens(M.text_of(body.get("text")))
        meta = {"id": rid, "finish_reason": {"type": "stop", "matched": M.RETURN_ID}, "prompt_tokens": ptoks,
                "weight_version": "default", "completion_tokens": len(ids), "cached_tokens": 0, "e2e_latency": 0.05}
        if body.get("stream"):
            def gen():
                acc = ""
                pieces = M.text_pieces(text)
                for i, p in enumerate(pieces):
                    acc += p
                    m = dict(meta, finish_reason=None if i < len(pieces) - 1 else meta["finish_reason"])
                    yield self.sse({"text": acc, "output_ids": ids, "meta_info": m})
                yield self.sse_done()
            return Response(status=200, headers=[("content-type", "text/event-stream; charset=utf-8")],
                            stream=gen())
        return json_response({"text": text, "output_ids": ids, "meta_info": meta})

    # -- chat specifics (§2.6) ---------------------------------------------------------------
    def chat_id(self) -> str:
        return uuid.uuid4().hex

    def tool_call_id(self) -> str:
        return "call_" + uuid.uuid4().hex[:24]

    def matched_stop(self, turn: M.Turn) -> Any:
        if turn.finish_reason == "length":
            return None
        return turn.stop_token or M.RETURN_ID

    def chat_message(self, turn: M.Turn) -> dict:
        return {"role": "assistant", "content": turn.content, "reasoning_content": turn.reasoning,
                "tool_calls": [dict(self.tool_call_obj(i, tc), index=i) for i, tc in enumerate(turn.tool_calls)]
                or None}

    def choice_extras(self, turn: M.Turn) -> dict:
        return {"matched_stop": self.matched_stop(turn)}

    def completion_extras(self, turn: M.Turn) -> dict:
        return {"metadata": {"weight_version": "default"}}

    def stream_choice_extras(self, final: bool, turn: M.Turn) -> dict:
        return {"matched_stop": self.matched_stop(turn) if final else None}

    def tool_call_deltas(self, i: int, tc: M.ToolCall) -> list:
        frags = M.arg_fragments(tc.arguments)
        if self.has("dup_stream_args"):
            frags = [f for f in frags for _ in (0, 1)]
        out = [{"id": tc.call_id, "index": i, "type": "function", "function": {"name": tc.name, "arguments": ""}}]
        for f in frags:
            out.append({"id": None, "index": i, "type": "function", "function": {"name": None, "arguments": f}})
        return out

    def item_id(self, kind: str) -> str:
        prefix = {"reasoning": "rs_", "message": "item_", "function_call": "fc_"}[kind]
        return prefix + uuid.uuid4().hex

    def responses_stream_headers(self) -> list:
        return [("content-type", "text/event-stream; charset=utf-8"), ("cache-control", "no-cache"),
                ("connection", "keep-alive")]


ENGINE_CLASSES = {"sglang": SGLang}

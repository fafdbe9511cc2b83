"""llama.cpp llama-server (C++, cpp-httplib) – server_apis.md §3, §10.2."""
from __future__ import annotations

import random
import string
import time
from typing import Any, Optional

from ._base import Engine
from ._http import Request, Response, dumps, json_response, text_response
from . import _model as M

HARMONY_TEMPLATE = ("{#- gpt-oss harmony chat template (abridged) #}"
                    "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n"
                    "Knowledge cutoff: 2024-06\nReasoning: {{ reasoning_effort }}<|end|>"
                    "{%- for message in messages -%}<|start|>{{ message.role }}<|message|>{{ message.content }}<|end|>"
                    "{%- endfor -%}<|start|>assistant")


def _alnum(n: int) -> str:
    return "".join(random.choice(string.ascii_letters + string.digits) for _ in range(n))


PEG_ERROR = "The model produced output that does not match the expected peg-native format"


class LlamaCpp(Engine):
    name = "llama.cpp"
    default_version = "b7900"
    default_model = "gpt-oss-20b-mxfp4.gguf"
    server_header = "llama.cpp"
    lowercase_headers = False
    send_date = False
    health_paths = ("/health", "/v1/health")
    reasoning_keys = ("reasoning_content",)
    responses_reasoning_style = "plain"
    empty_tool_calls_list = False
    inference_prefixes = ("/v1/chat/completions", "/chat/completions", "/v1/completions", "/completions",
                          "/completion", "/v1/responses", "/api/chat")
    sse_content_type = "text/event-stream"

    @property
    def build_number(self) -> int:
        # the recorded source build (b1-<commit>, Oct 2026) is newer than every numbered release emulated here
        return 10 ** 6 if self.source_build else self.vt[0]

    @property
    def build_info(self) -> str:
        if self.source_build:
            return self.version  # recorded: /props build_info and system_fingerprint are "b1-0c1e570"
        return f"{self.version}-1c0d9081" if self.version.startswith("b") else self.version

    @property
    def has_responses(self) -> bool:  # PR #18486 (NOT VERIFIED which build); older builds 404 (issue #14702)
        return self.build_number >= 7600

    def setup_routes(self) -> None:
        r = self.route
        r("GET", "/", self.index)
        r("GET", "/health", self.health)
        r("GET", "/v1/health", self.health)
        r("GET", "/metrics", lambda req: self.error(501, "This server does not support metrics endpoint. "
                                                         "Start it with `--metrics`", "not_supported_error"))
        r("GET,POST", "/props", self.props)
        r("POST", "/api/show", self.api_show)
        r("GET", "/models", self.models)
        r("GET", "/v1/models", self.models)
        r("GET", "/api/tags", self.models)
        r("GET", "/slots", self.slots)
        r("POST", "/completion", self.native_completion)
        r("POST", "/completions", self.completions)
        r("POST", "/v1/completions", self.completions)
        r("POST", "/chat/completions", self.chat_completions)
        r("POST", "/v1/chat/completions", self.chat_completions)
        r("POST", "/api/chat", self.chat_completions)
        r("POST", "/tokenize", self.tokenize)
        r("POST", "/detokenize", self.detokenize)
        r("POST", "/apply-template", self.apply_template)
        if self.has_responses:
            r("POST", "/v1/responses", self.responses)

    # -- headers / CORS (§3.2) ------------------------------------------------------------
    def extra_headers(self, resp: Response) -> list:
        return [("Access-Control-Allow-Origin", "*"), ("Keep-Alive", "timeout=5, max=100")]

    # -- auth / errors (§3.2) --------------------------------------------------------------
    def is_public(self, req: Request) -> bool:
        return req.path in ("/", "/health", "/v1/health", "/models", "/v1/models", "/api/tags")

    def authorized(self, req: Request) -> bool:
        return req.bearer() == self.api_key or req.headers.get("x-api-key") == self.api_key

    def unauthorized(self, req: Request) -> Response:
        return self.error(401, "Invalid API Key", "authentication_error")

    def error(self, status: int, message: str, type_: Optional[str] = None, param: Any = None,
              code: Any = None) -> Response:
        return json_response({"error": {"code": status, "message": message, "type": type_ or "invalid_request_error"}},
                             status=status, content_type="application/json; charset=utf-8")

    responses_error = lambda self, status, message, type_="invalid_request_error", param=None: \
        self.error(status, message, "invalid_request_error" if status == 400 else "not_found_error")

    def not_found(self, req: Request) -> Response:
        return self.error(404, "File Not Found", "not_found_error")

    def method_not_allowed(self, req: Request) -> Response:
        return self.not_found(req)

    def bad_json(self) -> Response:
        return self.error(500, "[json.exception.parse_error.101] parse error at line 1, column 1: syntax error "
                               "while parsing value - invalid literal; last read: '<'", "server_error")

    def check_model(self, name: Any) -> Optional[Response]:
        return None  # llama-server serves one model and ignores "model"

    def is_dead_path(self, req: Request) -> bool:
        return req.path not in ("/models", "/v1/models", "/api/tags")

    def dead_response(self, req: Request) -> Response:
        return self.error(503, "Loading model", "unavailable_error")

    def harmony_error_response(self, message: str, turn: Optional[M.Turn] = None) -> Response:
        return self.error(500, self.parse_error_message(turn), "server_error")

    def stale_error_text(self, turn: M.Turn) -> str:
        return self.parse_error_message(turn)

    @property
    def source_build(self) -> bool:
        """The recorded build from the llama.cpp source vendored in llama-cpp-python (version b1-<commit>)."""
        return self.version.startswith("b1-")

    @property
    def peg(self) -> bool:
        """Builds with the PEG-based gpt-oss parser (2026; the recorded b1-0c1e570, release builds from b10488)."""
        return self.build_number >= 10488

    def plan_chat(self, body: dict) -> M.Turn:
        turn = super().plan_chat(body)
        if self.peg and self.has("garbage"):
            turn.harmony_error = PEG_ERROR  # recorded: random weights never produce valid Harmony
        return turn

    def responses(self, req: Request) -> Response:
        if self.peg and self.has("garbage"):
            body, err = self.parse_body(req)
            if err:
                return err
            if not body.get("stream"):
                return self.error(500, PEG_ERROR, "server_error")
        return super().responses(req)

    def response_object(self, body: dict, rid: str, items: list, turn: M.Turn, status: str) -> dict:
        obj = super().response_object(body, rid, items, turn, status)
        if self.source_build:  # recorded b1-0c1e570: a compact object
            u = obj["usage"]
            return {"completed_at": obj["created_at"], "created_at": obj["created_at"], "id": obj["id"],
                    "model": obj["model"], "object": "response", "output": obj["output"], "status": obj["status"],
                    "usage": {"input_tokens": u["input_tokens"], "output_tokens": u["output_tokens"],
                              "total_tokens": u["total_tokens"], "input_tokens_details": {"cached_tokens": 0}}}
        return obj

    def parse_error_message(self, turn: Optional[M.Turn]) -> str:
        if self.peg and self.has("garbage"):
            return PEG_ERROR
        tc = turn.wanted_tool if turn is not None and turn.wanted_tool else M.ToolCall("get_weather", "{}")
        return (f"Failed to parse input at pos 71: <|start|>assistant<|channel|>commentary to=functions.{tc.name}"
                f" <|constrain|>json<|message|>{tc.arguments}<|call|>functions")

    def stream_error_tail(self, message: str, turn: Optional[M.Turn] = None):
        err = {"code": 500, "message": self.parse_error_message(turn), "type": "server_error"}
        if self.peg:  # recorded b1-0c1e570: a data: line with the error object, then the connection closes
            yield b"data: " + dumps({"error": err}) + b"\n\n"
            return
        # older builds write errors mid-stream as an `error: {...}` line (no `data:` prefix, no [DONE])
        yield b"error: " + dumps(err) + b"\n\n"

    # -- info routes (§3.3, §3.4) -------------------------------------------------------------
    def index(self, req: Request) -> Response:
        if self.source_build:  # recorded: the source build serves no web UI
            return json_response({"error": {"message": "File Not Found", "type": "not_found_error", "code": 404}},
                                 status=404, content_type="application/json; charset=utf-8")
        html = ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>llama.cpp - chat</title>"
                "</head><body><div id=\"app\"></div></body></html>")
        return text_response(html, content_type="text/html; charset=utf-8")

    def health(self, req: Request) -> Response:
        return json_response({"status": "ok"}, content_type="application/json; charset=utf-8")

    def _meta(self) -> Optional[dict]:
        if self.has("dead"):
            return None
        return {"vocab_type": 2, "n_vocab": 201088, "n_ctx_train": 131072, "n_embd": 2880,
                "n_params": 20914757184, "size": 12109565952}

    def models(self, req: Request) -> Response:
        return json_response({
            "models": [{"name": self.model, "model": self.model, "modified_at": "", "size": "", "digest": "",
                        "type": "model", "description": "", "tags": [""], "capabilities": ["completion"],
                        "parameters": "",
                        "details": {"parent_model": "", "format": "gguf", "family": "", "families": [""],
                                    "parameter_size": "", "quantization_level": ""}}],
            "object": "list",
            "data": [{"id": self.model, "object": "model", "created": self.started, "owned_by": "llamacpp",
                      "meta": self._meta()}]}, content_type="application/json; charset=utf-8")

    def _params(self) -> dict:
        return {"n_predict": -1, "seed": 4294967295, "temperature": 0.8, "dynatemp_range": 0.0, "top_k": 40,
                "top_p": 0.95, "min_p": 0.05, "typical_p": 1.0, "repeat_last_n": 64, "repeat_penalty": 1.0,
                "stop": [], "ignore_eos": False, "n_probs": 0, "stream": True, "grammar": "",
                "samplers": ["penalties", "dry", "top_k", "typ_p", "top_p", "min_p", "xtc", "temperature"],
                "chat_format": "GPT-OSS",
                "reasoning_format": "none" if (self.has("raw_harmony") or self.has("no_reasoning_parser"))
                else "auto"}

    def props(self, req: Request) -> Response:
        return json_response({
            "default_generation_settings": {"id": 0, "id_task": -1, "n_ctx": self.max_model_len,
                                            "speculative": False, "is_processing": False,
                                            "params": self._params()},
            "total_slots": 1, "model_alias": self.model, "model_path": f"/models/{self.model}",
            "modalities": {"vision": False, "audio": False}, "endpoint_slots": True, "endpoint_props": False,
            "endpoint_metrics": False, "webui": True, "chat_template": HARMONY_TEMPLATE,
            "chat_template_caps": {}, "bos_token": "<|startoftext|>", "eos_token": "<|return|>",
            "build_info": self.build_info, "is_sleeping": False,
        }, content_type="application/json; charset=utf-8")

    def slots(self, req: Request) -> Response:
        return json_response([{"id": 0, "id_task": -1, "n_ctx": self.max_model_len, "speculative": False,
                               "is_processing": False, "params": self._params(),
                               "next_token": {"has_next_token": True, "has_new_line": False, "n_remain": -1,
                                              "n_decoded": 0, "stopping_word": ""}}],
                             content_type="application/json; charset=utf-8")

    def api_show(self, req: Request) -> Response:
        return json_response({"template": HARMONY_TEMPLATE, "model_info": {"llama.context_length": self.max_model_len},
                              "modelfile": "", "parameters": "",
                              "details": {"parent_model": "", "format": "gguf", "family": "", "families": [""],
                                          "parameter_size": "", "quantization_level": ""},
                              "capabilities": ["completion"]}, content_type="application/json; charset=utf-8")

    # -- tokenizer (§3.5) ---------------------------------------------------------------------
    def tokenize(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return err
        toks = M.tokenize(M.text_of(body.get("content")), parse_special=bool(body.get("parse_special", True)))
        if body.get("with_pieces"):
            return json_response({"tokens": [{"id": t, "piece": p} for t, p in toks]})
        return json_response({"tokens": [t for t, _ in toks]})

    def detokenize(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return err
        return json_response({"content": M.detokenize(body.get("tokens") or [])})

    def apply_template(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return err
        return json_response({"prompt": M.render_harmony_prompt(body.get("messages") or [],
                                                                body.get("reasoning_effort") or "medium")})

    def native_completion(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return err
        text = "Hello! How can I help you today?"
        base = {"index": 0, "id_slot": 0, "model": self.model, "tokens": []}
        final = dict(base, content="" if body.get("stream") else text, stop=True, tokens_predicted=9,
                     tokens_evaluated=M.count_tokens(M.text_of(body.get("prompt"))), truncated=False,
                     stop_type="eos", stopping_word="", tokens_cached=0, timings=self._timings())
        if body.get("stream"):
            def gen():
                for p in M.text_pieces(text):
                    yield self.sse(dict(base, content=p, stop=False))
                yield self.sse(final)
            return Response(200, headers=[("Content-Type", "text/event-stream")], stream=gen())
        return json_response(final)

    # -- chat specifics (§3.6, §10.2) ---------------------------------------------------------
    def _timings(self) -> dict:
        return {"prompt_n": 12, "prompt_ms": 35.1, "prompt_per_token_ms": 2.9, "prompt_per_second": 341.9,
                "predicted_n": 30, "predicted_ms": 210.4, "predicted_per_token_ms": 7.0,
                "predicted_per_second": 142.6}

    def chat_id(self) -> str:
        return "chatcmpl-" + _alnum(32)

    def tool_call_id(self) -> str:
        return _alnum(32)

    def first_delta(self) -> dict:
        return {"role": "assistant", "content": None}

    def chat_message(self, turn: M.Turn) -> dict:
        msg: dict = {"role": "assistant", "content": turn.content}
        if turn.reasoning is not None:
            msg["reasoning_content"] = turn.reasoning
        if turn.tool_calls:
            msg["tool_calls"] = [self.tool_call_obj(i, tc) for i, tc in enumerate(turn.tool_calls)]
        return msg

    def usage(self, turn: M.Turn) -> dict:
        return {"completion_tokens": turn.completion_tokens, "prompt_tokens": turn.prompt_tokens,
                "total_tokens": turn.prompt_tokens + turn.completion_tokens}

    def chat_json(self, body: dict, turn: M.Turn) -> dict:
        return {"choices": [{"finish_reason": turn.finish_reason, "index": 0, "message": self.chat_message(turn)}],
                "created": int(time.time()), "model": self.model, "system_fingerprint": self.build_info,
                "object": "chat.completion", "usage": self.usage(turn), "id": self.chat_id(),
                "timings": self._timings()}

    def chunk_extras(self, final: bool, turn: M.Turn) -> dict:
        out: dict = {"system_fingerprint": self.build_info}
        if final:
            out["usage"] = self.usage(turn)
            out["timings"] = self._timings()
        return out

    def tool_call_deltas(self, i: int, tc: M.ToolCall) -> list:
        frags = M.arg_fragments(tc.arguments)
        if self.has("dup_stream_args"):
            frags = [f for f in frags for _ in (0, 1)]
        out = [{"index": i, "id": tc.call_id, "type": "function", "function": {"name": tc.name, "arguments": frags[0]}}]
        out += [{"index": i, "function": {"arguments": f}} for f in frags[1:]]
        return out


ENGINE_CLASSES = {"llama.cpp": LlamaCpp}

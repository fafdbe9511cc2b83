"""Ollama (Go/gin): native /api/* (NDJSON) plus OpenAI-compatible /v1/* – server_apis.md §4, §10.2, §11.2."""
from __future__ import annotations

import random
import string
import time
from datetime import datetime, timezone
from typing import Any, Optional

from ._base import Engine
from ._http import Request, Response, dumps, json_response, text_response
from . import _model as M

TEMPLATE = ("{{- /* gpt-oss harmony template (abridged) */ -}}<|start|>system<|message|>You are ChatGPT, a large "
            "language model trained by OpenAI.\nKnowledge cutoff: 2024-06\nReasoning: {{ .ThinkLevel }}<|end|>"
            "{{- range .Messages }}<|start|>{{ .Role }}<|message|>{{ .Content }}<|end|>{{- end }}<|start|>assistant")
DIGEST = "aa4295ac10c3afb60e6d711289fc6896f5aef82258997b9efdaed6d0cc4cd8b8"
MODIFIED = "2025-08-05T16:34:40.123456789Z"
JSON_CT = "application/json; charset=utf-8"


class Ollama(Engine):
    name = "ollama"
    default_version = "0.13.5"  # the first releases with /v1/responses are 0.13.3+ (ollama/ollama#13595)
    default_model = "gpt-oss:20b"
    default_max_model_len = 8192  # allocated context (/api/ps); trained context is 131072 (§4.2)
    server_header = None  # gin sets no Server header (§4.4)
    lowercase_headers = False
    health_paths = ("/",)
    reasoning_keys = ("reasoning",)
    responses_reasoning_style = "ollama"
    empty_tool_calls_list = False
    inference_prefixes = ("/v1/chat/completions", "/v1/completions", "/v1/responses", "/api/chat", "/api/generate")
    sse_content_type = "text/event-stream"

    def setup_routes(self) -> None:
        r = self.route
        r("GET,HEAD", "/", lambda req: text_response("Ollama is running"))
        r("GET,HEAD", "/api/version", lambda req: json_response({"version": self.version}, content_type=JSON_CT))
        r("GET,HEAD", "/api/tags", self.tags)
        r("POST", "/api/show", self.show)
        r("GET", "/api/ps", self.ps)
        r("POST", "/api/chat", self.native_chat)
        r("POST", "/api/generate", self.native_generate)
        r("GET", "/v1/models", self.models)
        r("GET", "/v1/models/(?P<name>.+)", self.model_card)
        r("POST", "/v1/chat/completions", self.chat_completions)
        r("POST", "/v1/completions", self.completions)
        r("POST", "/v1/responses", self.responses)

    def responses(self, req: Request) -> Response:
        # /v1/responses came with 0.13.3 (PR #13351, ollama/ollama#13595): older releases answer gin's 404
        if self.vt < (0, 13, 3):
            return self.not_found(req)
        return super().responses(req)

    # -- auth: Ollama has no API key; emulate an auth proxy in front (only GET / open) -------
    def is_public(self, req: Request) -> bool:
        return req.path == "/"

    def unauthorized(self, req: Request) -> Response:
        return json_response({"error": "unauthorized"}, status=401, content_type=JSON_CT)

    # -- errors (§4.4) ---------------------------------------------------------------------
    def is_v1(self) -> bool:
        return getattr(self, "_v1", True)

    def error(self, status: int, message: str, type_: Optional[str] = None, param: Any = None,
              code: Any = None) -> Response:
        return json_response({"error": {"message": message, "type": type_ or "invalid_request_error",
                                        "param": None, "code": None}}, status=status, content_type=JSON_CT)

    def native_error(self, status: int, message: str) -> Response:
        return json_response({"error": message}, status=status, content_type=JSON_CT)

    def responses_error(self, status: int, message: str, type_: str = "invalid_request_error",
                        param: Any = None) -> Response:
        return self.error(status, message, type_)

    def not_found(self, req: Request) -> Response:
        return text_response("404 page not found", status=404, content_type="text/plain")

    def method_not_allowed(self, req: Request) -> Response:
        return text_response("404 page not found", status=404, content_type="text/plain")

    def bad_json(self) -> Response:
        return self.error(400, "invalid character 'x' looking for beginning of value", "invalid_request_error")

    def model_names(self) -> list:
        return [self.model, self.model.replace(":latest", "")]

    def model_not_found(self, name: str) -> Response:
        return self.error(404, f'model "{name}" not found, try pulling it first', "not_found_error")

    def check_model(self, name: Any) -> Optional[Response]:
        if name in self.model_names():
            return None
        return self.model_not_found(str(name or ""))

    def runner_error(self) -> str:
        return "llama runner process has terminated: exit status 2"

    def is_dead_path(self, req: Request) -> bool:
        return req.path.startswith(self.inference_prefixes)

    def dead_response(self, req: Request) -> Response:
        # the HTTP server stays up ("Ollama is running"); the model runner is gone (§4 – emulator choice)
        if req.path.startswith("/api/"):
            return self.native_error(500, self.runner_error())
        return self.error(500, self.runner_error(), "api_error")

    def stale_error_text(self, turn: M.Turn) -> str:
        return self.tool_parse_error(turn)

    def tool_parse_error(self, turn: Optional[M.Turn]) -> str:
        tc = turn.wanted_tool if turn is not None and turn.wanted_tool else M.ToolCall("get_weather", "{}")
        return (f"error parsing tool call: raw='{tc.arguments}<|start|>assistant<|channel|>commentary', "
                f"err=invalid character '<' after top-level value")

    def harmony_error_response(self, message: str, turn: Optional[M.Turn] = None) -> Response:
        return self.error(500, self.tool_parse_error(turn), "api_error")

    def stream_error_tail(self, message: str, turn: Optional[M.Turn] = None):
        yield self.sse({"error": {"message": self.tool_parse_error(turn), "type": "api_error", "param": None,
                                  "code": None}})
        yield self.sse_done()

    # -- info routes (§4.1-4.3) -------------------------------------------------------------
    def _details(self) -> dict:
        return {"parent_model": "", "format": "gguf", "family": "gptoss", "families": ["gptoss"],
                "parameter_size": "20.9B", "quantization_level": "MXFP4"}

    def tags(self, req: Request) -> Response:
        return json_response({"models": [{"name": self.model, "model": self.model, "modified_at": MODIFIED,
                                          "size": 13780173839, "digest": DIGEST, "details": self._details()}]},
                             content_type=JSON_CT)

    def show(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return self.native_error(400, "invalid request body")
        name = body.get("model") or body.get("name")
        if name not in self.model_names():
            return self.native_error(404, f"model '{name}' not found")
        eos_ids = M.STALE_EOS_IDS if self.has("stale_eos") else M.EOS_IDS
        eos_ids = sorted(eos_ids)  # Ollama's converter order: [199999, 200002, 200012]
        params = "temperature                    1"
        if self.has("stale_eos"):
            params += '\nstop                           "<|endoftext|>"\nstop                           "<|return|>"'
        modelfile = (f"# Modelfile generated by \"ollama show\"\n# To build a new Modelfile based on this, replace "
                     f"FROM with:\n# FROM {self.model}\n\nFROM /root/.ollama/models/blobs/sha256-{DIGEST}\n"
                     f"TEMPLATE \"\"\"{TEMPLATE}\"\"\"\nPARAMETER temperature 1\n")
        if self.has("stale_eos"):
            modelfile += 'PARAMETER stop <|endoftext|>\nPARAMETER stop <|return|>\n'
        return json_response({
            "license": "Apache License\nVersion 2.0, January 2004\n...", "modelfile": modelfile,
            "parameters": params, "template": TEMPLATE, "details": self._details(),
            "model_info": {"general.architecture": "gpt-oss", "general.file_type": 4,
                           "general.parameter_count": 20914757184, "gpt-oss.context_length": 131072,
                           "gpt-oss.embedding_length": 2880, "gpt-oss.block_count": 24,
                           "tokenizer.ggml.bos_token_id": M.BOS_ID, "tokenizer.ggml.eos_token_id": 199999,
                           "tokenizer.ggml.eos_token_ids": eos_ids, "tokenizer.ggml.add_bos_token": False,
                           "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "gpt-4o",
                           "tokenizer.ggml.tokens": [], "tokenizer.ggml.token_type": [], "tokenizer.ggml.merges": []},
            "renderer": "harmony", "parser": "harmony",
            "capabilities": ["completion", "tools", "thinking"], "modified_at": MODIFIED,
        }, content_type=JSON_CT)

    def ps(self, req: Request) -> Response:
        return json_response({"models": [{"name": self.model, "model": self.model, "size": 14919565312,
                                          "digest": DIGEST, "details": self._details(),
                                          "expires_at": "2099-01-01T00:00:00Z", "size_vram": 14919565312,
                                          "context_length": self.max_model_len}]}, content_type=JSON_CT)

    def models(self, req: Request) -> Response:
        return json_response({"object": "list", "data": [self._card()]}, content_type=JSON_CT)

    def _card(self) -> dict:
        return {"id": self.model, "object": "model", "created": 1754411680, "owned_by": "library"}

    def model_card(self, req: Request, name: str) -> Response:
        if name not in self.model_names():
            return self.model_not_found(name)
        return json_response(self._card(), content_type=JSON_CT)

    # -- OpenAI compat chat (§4.5) -------------------------------------------------------------
    def chat_id(self) -> str:
        return f"chatcmpl-{random.randint(1, 999)}"

    def tool_call_id(self) -> str:
        return "call_" + "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(8))

    def completion_headers(self) -> list:
        return []

    def chat_message(self, turn: M.Turn) -> dict:
        msg: dict = {"role": "assistant", "content": turn.content or ""}
        if turn.reasoning:
            msg["reasoning"] = turn.reasoning
        if turn.tool_calls:
            msg["tool_calls"] = [self.tool_call_obj(i, tc) for i, tc in enumerate(turn.tool_calls)]
        return msg

    def tool_call_obj(self, i: int, tc: M.ToolCall) -> dict:
        return {"id": tc.call_id, "index": i, "type": "function",
                "function": {"name": tc.name, "arguments": tc.arguments}}

    def usage(self, turn: M.Turn) -> dict:
        return {"prompt_tokens": turn.prompt_tokens, "completion_tokens": turn.completion_tokens,
                "total_tokens": turn.prompt_tokens + turn.completion_tokens}

    def chat_json(self, body: dict, turn: M.Turn) -> dict:
        return {"id": self.chat_id(), "object": "chat.completion", "created": int(time.time()),
                "model": self.model, "system_fingerprint": "fp_ollama",
                "choices": [{"index": 0, "message": self.chat_message(turn), "finish_reason": turn.finish_reason}],
                "usage": self.usage(turn)}

    def chat_stream(self, body: dict, turn: M.Turn):
        cid, created = self.chat_id(), int(time.time())
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))

        def chunk(delta: dict, finish: Optional[str] = None) -> bytes:
            d = {"role": "assistant", "content": ""}
            d.update(delta)
            return self.sse({"id": cid, "object": "chat.completion.chunk", "created": created, "model": self.model,
                             "system_fingerprint": "fp_ollama",
                             "choices": [{"index": 0, "delta": d, "finish_reason": finish}]})

        for p in M.text_pieces(turn.reasoning or ""):
            yield chunk({"reasoning": p})
        if turn.harmony_error:
            yield from self.stream_error_tail(turn.harmony_error, turn)
            return
        for p in M.text_pieces(turn.content or ""):
            yield chunk({"content": p})
        for i, tc in enumerate(turn.tool_calls):  # complete call in one chunk (§4.5)
            reps = 2 if self.has("dup_stream_args") else 1
            for _ in range(reps):
                yield chunk({"tool_calls": [self.tool_call_obj(i, tc)]})
        yield chunk({}, finish=turn.finish_reason)
        if include_usage:
            yield self.sse({"id": cid, "object": "chat.completion.chunk", "created": created, "model": self.model,
                            "system_fingerprint": "fp_ollama", "choices": [], "usage": self.usage(turn)})
        yield self.sse_done()

    def response_id(self) -> str:
        return "resp_" + str(random.randint(100000, 999999))

    # -- native API (NDJSON) ---------------------------------------------------------------------
    def _now(self) -> str:
        return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def native_chat(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return self.native_error(400, "invalid character looking for beginning of value")
        name = body.get("model")
        if not name:
            return self.native_error(400, "model is required")
        if name not in self.model_names():
            return self.native_error(404, f'model "{name}" not found, try pulling it first')
        msgs = body.get("messages") or []
        turn = M.plan(msgs, tools=body.get("tools"), tool_choice="auto",
                      max_tokens=(body.get("options") or {}).get("num_predict"), faults=self.faults)
        think = body.get("think", True) is not False
        stream = body.get("stream", True)  # Ollama streams by default
        stats = {"total_duration": 512345678, "load_duration": 12345678, "prompt_eval_count": turn.prompt_tokens,
                 "prompt_eval_duration": 23456789, "eval_count": turn.completion_tokens,
                 "eval_duration": 456789012}

        def tool_calls():
            return [{"function": {"index": i, "name": tc.name, "arguments": _loads(tc.arguments)}}
                    for i, tc in enumerate(turn.tool_calls)]

        if not stream:
            if turn.harmony_error:
                return self.native_error(500, self.tool_parse_error(turn))
            msg: dict = {"role": "assistant", "content": turn.content or ""}
            if think and turn.reasoning:
                msg["thinking"] = turn.reasoning
            if turn.tool_calls:
                msg["tool_calls"] = tool_calls()
            return json_response(dict({"model": self.model, "created_at": self._now(), "message": msg,
                                       "done_reason": "stop" if turn.finish_reason != "length" else "length",
                                       "done": True}, **stats), content_type=JSON_CT)

        def line(obj: dict) -> bytes:
            return dumps(obj) + b"\n"

        def gen():
            base = {"model": self.model}
            if think:
                for p in M.text_pieces(turn.reasoning or ""):
                    yield line(dict(base, created_at=self._now(),
                                    message={"role": "assistant", "content": "", "thinking": p}, done=False))
            if turn.harmony_error:
                yield line({"error": self.tool_parse_error(turn)})
                return
            for p in M.text_pieces(turn.content or ""):
                yield line(dict(base, created_at=self._now(), message={"role": "assistant", "content": p},
                                done=False))
            if turn.tool_calls:
                for _ in range(2 if self.has("dup_stream_args") else 1):
                    yield line(dict(base, created_at=self._now(),
                                    message={"role": "assistant", "content": "", "tool_calls": tool_calls()},
                                    done=False))
            yield line(dict(base, created_at=self._now(), message={"role": "assistant", "content": ""},
                            done_reason="stop" if turn.finish_reason != "length" else "length", done=True, **stats))
        return Response(200, headers=[("Content-Type", "application/x-ndjson")], stream=gen())

    def native_generate(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return self.native_error(400, "invalid request")
        name = body.get("model")
        if name not in self.model_names():
            return self.native_error(404, f'model "{name}" not found, try pulling it first')
        text = "Hello! How can I help you today?"
        final = {"model": self.model, "created_at": self._now(), "response": "" if body.get("stream", True) else text,
                 "done": True, "done_reason": "stop", "context": [t for t, _ in M.tokenize(text)],
                 "total_duration": 312345678, "eval_count": 9}
        if body.get("stream", True):
            def gen():
                for p in M.text_pieces(text):
                    yield dumps({"model": self.model, "created_at": self._now(), "response": p, "done": False}) + b"\n"
                yield dumps(final) + b"\n"
            return Response(200, headers=[("Content-Type", "application/x-ndjson")], stream=gen())
        return json_response(final, content_type=JSON_CT)


def _loads(s: str) -> Any:
    import json
    try:
        return json.loads(s)
    except ValueError:
        return s


ENGINE_CLASSES = {"ollama": Ollama}

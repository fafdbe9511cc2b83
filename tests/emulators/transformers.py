"""``transformers serve`` 5.23.0 (FastAPI/uvicorn), as recorded in ../shared/real/transformers-serve-5.23.0.

What the recordings show: ``server: uvicorn`` and an ``x-request-id`` UUID on every answer; GET /health is
{"status":"ok"}; /v1/models lists the model with owned_by "openai" and a fractional ``created``; every other route
(/, /version, /props, /info, /tokenize, /metrics …) is 404 {"detail":"Not Found"}; the answer's model is
"<id>@main"; a model the server is not pinned to is 400 {"detail":"Server is pinned to '…'; requested '…'."};
malformed JSON is FastAPI's 422. gpt-oss output is decoded without special tokens and without a Harmony parser:
channels are flattened into content ("finalHello", "commentary to=functions.get_weather json{…}"), no reasoning
field, no tool_calls; chat streams end without ``data: [DONE]``; /v1/responses always answers an SSE stream without
``event:`` lines. No API key, no version endpoint, no tokenizer endpoint.
"""
from __future__ import annotations

import time
import uuid
from typing import Any, Optional

from . import _model as M
from ._base import Engine
from ._http import Request, Response, dumps, json_response


class TransformersServe(Engine):
    name = "transformers"
    default_version = "5.23.0"
    reasoning_keys = ()
    responses_reasoning_style = "none"

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.faults = tuple(dict.fromkeys(self.faults + ("flattened",)))  # it has no Harmony parser at all
        self.auth_enabled = False  # transformers serve takes no API key

    def setup_routes(self) -> None:
        r = self.route
        r("GET", "/health", lambda req: json_response({"status": "ok"}, headers=self.common_headers()))
        r("GET", "/v1/models", self.models)
        r("POST", "/v1/chat/completions", self.chat_completions)
        r("POST", "/v1/responses", self.responses)

    def models(self, req: Request) -> Response:
        if self.has("no_hf_cache"):  # recorded: plain-text 500 from Starlette, no x-request-id
            return Response(status=500, headers=[("content-type", "text/plain; charset=utf-8"), ("server", "uvicorn")],
                            body=b"Internal Server Error")
        return json_response({"object": "list", "data": [
            {"owned_by": "openai", "id": self.model, "object": "model", "created": self.started + 0.9299474}]},
            headers=self.common_headers())

    def common_headers(self) -> list:
        return [("server", "uvicorn"), ("x-request-id", str(uuid.uuid4()))]

    def not_found(self, req: Request) -> Response:
        return json_response({"detail": "Not Found"}, status=404, headers=self.common_headers())

    def method_not_allowed(self, req: Request) -> Response:
        return json_response({"detail": "Method Not Allowed"}, status=405, headers=self.common_headers())

    def bad_json(self) -> Response:
        return json_response({"detail": [{"type": "json_invalid", "loc": ["body", 28], "msg": "JSON decode error",
                                          "input": {}, "ctx": {"error": "Expecting value"}}]}, status=422,
                             headers=self.common_headers())

    def error(self, status: int, message: str, type_: Optional[str] = None, param: Any = None,
              code: Any = None) -> Response:
        return json_response({"detail": message}, status=status, headers=self.common_headers())

    def dead_response(self, req: Request) -> Response:
        return json_response({"detail": "Internal Server Error"}, status=500, headers=self.common_headers())

    def check_model(self, name: Any) -> Optional[Response]:
        if name not in (None, self.model):
            return self.error(400, f"Server is pinned to '{self.model}'; requested '{name}'.")
        return None

    def response_model(self, body: dict) -> str:
        return f"{self.model}@main"

    def chat_id(self) -> str:
        return str(uuid.uuid4())

    def completion_headers(self) -> list:
        return self.common_headers()

    def chat_json(self, body: dict, turn: M.Turn) -> dict:
        return {"id": self.chat_id(), "choices": [{"finish_reason": turn.finish_reason, "index": 0,
                                                   "message": {"content": turn.content, "role": "assistant"}}],
                "created": int(time.time()), "model": self.response_model(body), "object": "chat.completion",
                "usage": self.usage(turn)}

    def usage(self, turn: M.Turn) -> dict:
        return {"completion_tokens": turn.completion_tokens, "prompt_tokens": turn.prompt_tokens,
                "total_tokens": turn.prompt_tokens + turn.completion_tokens}

    def chat_stream(self, body: dict, turn: M.Turn):
        cid, model = self.chat_id(), self.response_model(body)

        def chunk(delta: dict, **extra: Any) -> bytes:
            choice = {"delta": delta, "index": 0, **({"finish_reason": extra.pop("finish")} if "finish" in extra else {})}
            obj = {"id": cid, "choices": [choice], "created": int(time.time()), "model": model,
                   "object": "chat.completion.chunk", "system_fingerprint": "", **extra}
            return self.sse(obj)

        yield chunk({"role": "assistant"})
        for p in M.text_pieces(turn.content or ""):
            yield chunk({"content": p})
        yield chunk({}, finish=turn.finish_reason, usage=self.usage(turn))
        # no "data: [DONE]" (recorded)

    def responses(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return err
        err = self.check_model(body.get("model"))
        if err:
            return err
        messages = self._responses_messages(body)
        turn = M.plan(messages, tools=body.get("tools"), tool_choice=body.get("tool_choice", "auto"),
                      max_tokens=body.get("max_output_tokens"), faults=self.faults)
        return Response(status=200, headers=[("content-type", "text/event-stream; charset=utf-8")]
                        + self.common_headers(), stream=self._responses_events(body, turn))

    def _responses_events(self, body: dict, turn: M.Turn):
        """Always a stream, whatever 'stream' says (recorded); only 'data:' lines."""
        base = str(uuid.uuid4())
        rid, mid, created = "resp_" + base, "msg_" + base, time.time()
        resp = {"id": rid, "created_at": created, "model": self.response_model(body), "object": "response",
                "output": [], "parallel_tool_calls": False, "tool_choice": body.get("tool_choice", "auto"),
                "tools": body.get("tools") or [], "status": "queued"}
        seq = [0]

        def ev(typ: str, **fields: Any) -> bytes:
            obj = dict(fields, sequence_number=seq[0], type=typ)
            seq[0] += 1
            return b"data: " + dumps(obj) + b"\n\n"

        text = turn.content or ""
        yield ev("response.created", response=resp)
        yield ev("response.in_progress", response=dict(resp, status="in_progress"))
        item = {"id": mid, "content": [], "role": "assistant", "status": "in_progress", "type": "message"}
        yield ev("response.output_item.added", item=item, output_index=0)
        part = {"annotations": [], "text": "", "type": "output_text"}
        yield ev("response.content_part.added", content_index=0, item_id=mid, output_index=0, part=part)
        for p in M.text_pieces(text):
            yield ev("response.output_text.delta", content_index=0, delta=p, item_id=mid, logprobs=[], output_index=0)
        yield ev("response.output_text.done", content_index=0, item_id=mid, logprobs=[], output_index=0, text=text)
        yield ev("response.content_part.done", content_index=0, item_id=mid, output_index=0, part=dict(part, text=text))
        done = dict(item, content=[dict(part, text=text)], status="completed", annotations=[])
        yield ev("response.output_item.done", item=done, output_index=0)
        usage = {"input_tokens": turn.prompt_tokens, "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0},
                 "output_tokens": turn.completion_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": turn.prompt_tokens + turn.completion_tokens}
        yield ev("response.completed", response=dict(resp, output=[done], status="completed", usage=usage))


ENGINE_CLASSES = {"transformers": TransformersServe}

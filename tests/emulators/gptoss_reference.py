"""OpenAI's reference Responses API server (PyPI gpt-oss 0.0.9, ``python -m gpt_oss.responses_api.serve``), as
recorded in ../shared/real/gpt-oss-reference-0.0.9.

What the recordings show: FastAPI behind uvicorn (``server: uvicorn``, no x-request-id); only POST /v1/responses,
/openapi.json, /docs and /redoc; every other path 404 {"detail":"Not Found"}; GET and OPTIONS /v1/responses 405 with
``allow: POST``; FastAPI's 422 for malformed JSON, a missing ``input`` and an effort other than low/medium/high. The
request's model is ignored: every answer names "gpt-oss-120b". Streams have ``event:`` and ``data:`` lines and no
``data: [DONE]``; the streaming events of an item carry the output_index of the item before it (the first item -1),
its done events its own; function calls stream only ``response.output_item.done``; a reply cut by
max_output_tokens still says "completed". The python tool (code_interpreter) runs the doctor's one line of python;
with the ``python_backend_down`` fault (PYTHON_EXECUTION_BACKEND=docker without a Docker daemon, recorded) the
non-streamed request is a plain-text 500 and the stream is cut after ``response.code_interpreter_call.interpreting``.
The emulated model does not reason, like the recorded scripted models (no reasoning items or events).
"""
from __future__ import annotations

import hashlib
import time
import uuid
from typing import Any, Optional

from . import _model as M
from ._base import BUILTIN_CODE_RE, Engine
from ._http import Cut, Request, Response, dumps, json_response, text_response

MODEL = "gpt-oss-120b"  # gpt_oss/responses_api/types.py MODEL_IDENTIFIER

_SCHEMAS = ("BrowserToolConfig", "CodeInterpreterCallItem", "CodeInterpreterOutputImage", "CodeInterpreterOutputLogs",
            "CodeInterpreterToolConfig", "Error", "FunctionCallItem", "FunctionCallOutputItem",
            "FunctionToolDefinition", "HTTPValidationError", "IncompleteDetails", "Item", "ReasoningConfig",
            "ReasoningItem", "ReasoningTextContentItem", "ResponseObject", "SummaryTextContentItem",
            "TextContentItem", "UrlCitation", "Usage", "ValidationError", "WebSearchActionFind",
            "WebSearchActionOpenPage", "WebSearchActionSearch", "WebSearchCallItem")


def _opt(t: str, **extra: Any) -> dict:
    return {"anyOf": [{"type": t}, {"type": "null"}], **extra}


OPENAPI = {
    "openapi": "3.1.0", "info": {"title": "FastAPI", "version": "0.1.0"},
    "paths": {"/v1/responses": {"post": {
        "summary": "Generate", "operationId": "generate_v1_responses_post",
        "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ResponsesRequest"}}},
                        "required": True},
        "responses": {"200": {"description": "Successful Response", "content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/ResponseObject"}}}},
            "422": {"description": "Validation Error", "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/HTTPValidationError"}}}}}}}},
    "components": {"schemas": {**{n: {"properties": {}, "type": "object", "title": n} for n in _SCHEMAS},
                               "ResponsesRequest": {"properties": {
                                   "instructions": _opt("string", title="Instructions"),
                                   "max_output_tokens": _opt("integer", title="Max Output Tokens", default=131072),
                                   "input": {"title": "Input"},
                                   "model": _opt("string", title="Model", default=MODEL),
                                   "stream": _opt("boolean", title="Stream", default=False),
                                   "tools": {"title": "Tools", "default": []},
                                   "reasoning": {"default": {"effort": "Low"}},
                                   "metadata": {"title": "Metadata", "default": {}},
                                   "tool_choice": {"title": "Tool Choice", "default": "auto"},
                                   "parallel_tool_calls": _opt("boolean", title="Parallel Tool Calls", default=False),
                                   "store": _opt("boolean", title="Store", default=False),
                                   "previous_response_id": _opt("string", title="Previous Response Id"),
                                   "temperature": _opt("number", title="Temperature", default=0.0),
                                   "include": {"title": "Include"}},
                                   "type": "object", "required": ["input"], "title": "ResponsesRequest"}}},
}

DOCS = ("<!DOCTYPE html>\n<html>\n<head>\n<title>FastAPI - Swagger UI</title>\n</head>\n<body>\n"
        "<div id=\"swagger-ui\">\n</div>\n<script>\nconst ui = SwaggerUIBundle({ url: '/openapi.json' })\n</script>\n"
        "</body>\n</html>\n")


def _unprocessable(detail: list) -> Response:
    return json_response({"detail": detail}, status=422)


class GptOssReference(Engine):
    name = "gptoss-reference"
    default_version = "0.0.9"
    default_model = MODEL
    health_paths = ()
    inference_prefixes = ("/v1/responses",)

    def setup_routes(self) -> None:
        self.route("POST", "/v1/responses", self.responses)
        self.route("GET", "/openapi.json", lambda req: json_response(OPENAPI))
        self.route("GET", "/docs", lambda req: text_response(DOCS, content_type="text/html; charset=utf-8"))
        self.route("GET", "/redoc", lambda req: text_response(DOCS, content_type="text/html; charset=utf-8"))
        if self.has("models_route"):
            self.route("GET", "/v1/models", lambda req: json_response({"object": "list", "data": [
                {"id": MODEL, "object": "model", "created": self.started, "owned_by": "openai"}]}))

    def method_not_allowed(self, req: Request) -> Response:
        return json_response({"detail": "Method Not Allowed"}, status=405, headers=[("allow", "POST")])

    def options_response(self, req: Request) -> Response:
        return self.method_not_allowed(req) if req.path == "/v1/responses" else self.not_found(req)

    def dead_response(self, req: Request) -> Response:
        return self.internal_error()

    @staticmethod
    def internal_error() -> Response:
        return text_response("Internal Server Error", status=500)

    # ------------------------------------------------------------------ POST /v1/responses
    def responses(self, req: Request) -> Response:
        try:
            body = req.json()
        except (ValueError, UnicodeDecodeError):
            return _unprocessable([{"type": "json_invalid", "loc": ["body", len(req.body or b"")],
                                    "msg": "JSON decode error", "input": {},
                                    "ctx": {"error": "Expecting property name enclosed in double quotes"}}])
        if not isinstance(body, dict):
            return _unprocessable([{"type": "model_attributes_type", "loc": ["body"],
                                    "msg": "Input should be a valid dictionary or object to extract fields from",
                                    "input": body}])
        if "input" not in body:
            return _unprocessable([{"type": "missing", "loc": ["body", "input"], "msg": "Field required",
                                    "input": body}])
        effort = (body.get("reasoning") or {}).get("effort", "low") if isinstance(body.get("reasoning"), dict) else "low"
        if effort not in ("low", "medium", "high"):
            return _unprocessable([{"type": "literal_error", "loc": ["body", "reasoning", "effort"],
                                    "msg": "Input should be 'low', 'medium' or 'high'", "input": effort,
                                    "ctx": {"expected": "'low', 'medium' or 'high'"}}])
        if body.get("tool_choice", "auto") not in ("auto", "none", None):
            return _unprocessable([{"type": "literal_error", "loc": ["body", "tool_choice"],
                                    "msg": "Input should be 'auto' or 'none'", "input": body["tool_choice"],
                                    "ctx": {"expected": "'auto' or 'none'"}}])
        for n, t in enumerate(body.get("tools") or []):
            if isinstance(t, dict) and t.get("type") == "function" and not (t.get("name") and "parameters" in t):
                # a Chat-shaped tool ({"type": "function", "function": {...}}): pydantic's union errors (abridged)
                return _unprocessable([{"type": "missing", "loc": ["body", "tools", n, "FunctionToolDefinition", k],
                                        "msg": "Field required", "input": t} for k in ("name", "parameters")
                                       if k not in t])
        inp = body.get("input")
        calls = {i.get("call_id") for i in inp if isinstance(i, dict) and i.get("type") == "function_call"} \
            if isinstance(inp, list) else set()
        if isinstance(inp, list) and any(isinstance(i, dict) and i.get("type") == "function_call_output"
                                         and i.get("call_id") not in calls for i in inp) \
                and not body.get("previous_response_id"):
            return self.internal_error()  # api_server.py: ValueError "Function call <id> not found"
        messages = self._responses_messages(body)
        max_out = body.get("max_output_tokens") or 131072
        python = any(isinstance(t, dict) and t.get("type") == "code_interpreter" for t in body.get("tools") or [])
        if python:
            items = self._python_items(messages)
            turn = M.Turn(reasoning=None, content=None, prompt_tokens=M.count_tokens(str(messages)),
                          completion_tokens=24)
        else:
            turn = M.plan(messages, tools=body.get("tools"), tool_choice=body.get("tool_choice", "auto"),
                          faults=self.faults, reasoning_effort=effort)
            turn.completion_tokens = min(turn.completion_tokens, max_out)  # cut, and still "completed"
            items = self._items(turn)
        final = self._response_object(body, items, turn, max_out)
        if body.get("stream"):
            return Response(status=200, headers=[("content-type", "text/event-stream; charset=utf-8")],
                            stream=self._stream(final, items))
        if python and self.has("python_backend_down"):
            return self.internal_error()
        return json_response(final)

    def _python_items(self, messages: list) -> list:
        """The doctor's one line of python through the code_interpreter tool, then the answer with what it printed."""
        text = " ".join(str(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") == "user")
        m = BUILTIN_CODE_RE.search(text)
        code = m.group(0) if m else "print(7*6)"
        printed = hashlib.sha256(m.group(1).encode()).hexdigest()[:12] if m else "42"
        call = {"type": "code_interpreter_call", "id": "ci_" + uuid.uuid4().hex, "status": "completed",
                "code": code, "container_id": None, "outputs": [{"type": "logs", "logs": printed + "\n"}]}
        return [call, self._message(printed)]

    def _message(self, text: str) -> dict:
        return {"id": "item_" + uuid.uuid4().hex, "type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": text, "status": "completed", "annotations": []}],
                "status": "completed"}

    def _items(self, turn: M.Turn) -> list:
        items: list = []  # no reasoning item: the emulated model answers like the recorded scripted ones
        for tc in turn.tool_calls:
            items.append({"type": "function_call", "name": tc.name, "arguments": tc.arguments, "status": "completed",
                          "id": "fc_" + uuid.uuid4().hex, "call_id": "call_" + uuid.uuid4().hex})
        if turn.content is not None and not turn.tool_calls:
            items.append(self._message(turn.content))
        return items

    def _response_object(self, body: dict, items: list, turn: M.Turn, max_out: int) -> dict:
        out_tokens = turn.completion_tokens
        # cut by max_output_tokens: still "completed" with no incomplete_details (recorded)
        return {"output": items, "created_at": int(time.time()),
                "usage": {"input_tokens": turn.prompt_tokens, "output_tokens": out_tokens,
                          "total_tokens": turn.prompt_tokens + out_tokens},
                "status": "completed", "background": None, "error": None, "incomplete_details": None,
                "instructions": None, "max_output_tokens": max_out, "max_tool_calls": None,
                "metadata": body.get("metadata") or {}, "model": MODEL, "parallel_tool_calls": False,
                "previous_response_id": body.get("previous_response_id"), "id": "resp_" + uuid.uuid4().hex,
                "object": "response", "text": {"format": {"type": "text"}}, "tool_choice": "auto", "top_p": 1}

    def _stream(self, final: dict, items: list):
        seq = [0]

        def ev(typ: str, **fields: Any) -> bytes:
            obj = {"sequence_number": seq[0], "type": typ, **fields}
            seq[0] += 1
            return b"event: " + typ.encode() + b"\ndata: " + dumps(obj) + b"\n\n"

        start = dict(final, output=[], usage=None, status="in_progress")
        yield ev("response.created", response=start)
        yield ev("response.in_progress", response=start)
        for k, it in enumerate(items):
            if it["type"] == "function_call":
                yield ev("response.output_item.done", output_index=k, item=it)
            elif it["type"] == "code_interpreter_call":
                iid = it["id"]
                yield ev("response.output_item.added", output_index=k,
                         item=dict(it, status="in_progress", outputs=None))
                yield ev("response.code_interpreter_call.in_progress", output_index=k, item_id=iid)
                yield ev("response.code_interpreter_call_code.delta", output_index=k, item_id=iid, delta=it["code"],
                         code_output=None)
                yield ev("response.code_interpreter_call_code.done", output_index=k, item_id=iid, code=it["code"],
                         outputs=None)
                yield ev("response.code_interpreter_call.interpreting", output_index=k, item_id=iid)
                if self.has("python_backend_down"):
                    yield Cut()  # the tool raised: the server drops the connection without ending the chunked body
                    return
                yield ev("response.code_interpreter_call.completed", output_index=k, item_id=iid)
                yield ev("response.output_item.done", output_index=k, item=it)
            else:
                yield from self._text_events(ev, k, it)
        yield ev("response.completed", response=final)

    @staticmethod
    def _text_events(ev, k: int, it: dict):
        """A message item: its streaming events carry k - 1 (the counter moves when a message ends), its done
        events k."""
        iid, text = it["id"], it["content"][0]["text"]
        yield ev("response.output_item.added", output_index=k - 1, item=dict(it, content=[], status=None))
        part = {"type": "output_text", "text": "", "status": "completed", "annotations": None}
        yield ev("response.content_part.added", item_id=iid, output_index=k - 1, content_index=0, part=part)
        for p in M.text_pieces(text):
            yield ev("response.output_text.delta", item_id=iid, output_index=k - 1, content_index=0, delta=p,
                     logprobs=[])
        yield ev("response.output_text.done", item_id=iid, output_index=k, content_index=0, text=text, logprobs=[])
        yield ev("response.content_part.done", item_id=iid, output_index=k, content_index=0,
                 part=it["content"][0])
        yield ev("response.output_item.done", output_index=k, item=dict(it, status=None))


ENGINE_CLASSES = {"gptoss-reference": GptOssReference}

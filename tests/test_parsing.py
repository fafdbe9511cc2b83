"""Error parsing: every HarmonyError wording, engine log prefixes, tracebacks, JSON bodies, SDK text, leaks, long logs."""

from __future__ import annotations

import io

import pytest

from gptoss_doctor.explain.parse import BinaryInputError, parse_stream, parse_text, strip_prefixes, token_ids_in

# Every HarmonyError message of openai/harmony (src/encoding.rs) in its old and new wordings.
HARMONY_FORMS = [
    ("Unexpected token 12606 while expecting start token 200006", "unexpected-token", [12606, 200006]),
    ("Unexpected EOS while waiting for message header to complete", "eos-in-header", []),
    ('unexpected tokens remaining in message header: Some("to=functions.web-browsing")', "header-remaining", []),
    ('unexpected tokens remaining in message header: ["to=functions.get_weather", "<|constrain|>json"]', "header-remaining", []),
    ("Could not parse header: too many tokens remaining after extracting content-type and recipient", "header-too-many", []),
    ("channel marker present but no channel value found in header", "channel-no-value", []),
    ("Unknown role: assistant<|channel|>analysis", "unknown-role", []),
    ("message header did not contain a role", "no-role", []),
    ("could not decode header", "decode-header", []),
    ("could not decode message content", "decode-content", []),
    ("token 200012 was specified as a stop token, but is not mapped", "stop-not-mapped", [200012]),
    ("could not render stop token", "render-stop", []),
    ("Invalid HarmonyEncodingName: HarmonyGptOss2", "encoding-name", []),
    ("Encountered text corresponding to disallowed special token '<|channel|>'.", "disallowed-special", []),
]
VOCAB_FORMS = [
    "error downloading or loading vocab file: failed to download or load vocab file",
    "hash mismatch for remote file https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "the env var TIKTOKEN_ENCODINGS_BASE is not set, or invalid",
    "invalid tiktoken vocab file: bad line",
    "unknown encoding name: o200k_harmony2",
]
WRAPPERS = [
    "openai_harmony.HarmonyError: {m}",
    "HarmonyError: {m}",
    "(APIServer pid=1) ERROR 06-23 08:11:44 [serving.py:932] openai_harmony.HarmonyError: {m}",
    "ERROR 08-07 12:00:01 [serving_chat.py:1001] openai_harmony.HarmonyError: {m}",
    "2025-09-15 11:29:27,572 - lmdeploy - ERROR - async_engine.py:657 - [safe_run] exception caught: HarmonyError {m}",
    "[11/02/2025-22:00:50] [TRT-LLM] [E] Error in harmony chat completion: %s {m}",
    "openai.InternalServerError: Error code: 500 - {{'error': {{'message': '{m}', 'type': 'InternalServerError', 'code': 500}}}}",
    'data: {{"error": {{"message": "openai_harmony.HarmonyError: {m}", "type": "InternalServerError", "code": 500}}}}',
]


@pytest.mark.parametrize("wrapper", WRAPPERS)
@pytest.mark.parametrize("message,code,toks", HARMONY_FORMS)
def test_every_harmony_error_form_in_every_wrapper(message, code, toks, wrapper):
    if "'" in message and "{'error'" in wrapper:
        message = message.replace("'", "")  # a Python dict repr would escape it differently
    text = wrapper.format(m=message.replace('"', '\\"') if wrapper.startswith("data:") else message)
    p = parse_text(text)
    harmony = [e for e in p.errors if e.kind == "harmony"]
    assert len(harmony) == 1, p.errors
    assert harmony[0].code == code
    for t in toks:
        assert t in p.token_ids


@pytest.mark.parametrize("message", VOCAB_FORMS)
def test_vocab_errors(message):
    p = parse_text(f"Failed to load Harmony encoding: {message}")
    assert [e.kind for e in p.errors] == ["vocab"]


@pytest.mark.parametrize("line,engine", [
    ("(APIServer pid=295) ERROR 09-16 10:18:38 [serving.py:906] Error in chat completion stream generator.", "vllm"),
    ("ERROR 08-07 12:00:01 [serving_chat.py:1001] boom", "vllm"),
    ('time=2025-08-10T10:00:00Z level=WARN source=harmonyparser.go:415 msg="harmony parser: no reverse mapping found for function name" harmonyFunctionName=ask_followup_question', "ollama"),
    ("2025-09-15 11:29:27,572 - lmdeploy - ERROR - async_engine.py:657 - [safe_run] exception caught", "lmdeploy"),
    ("srv  log_server_r: request: POST /v1/chat/completions 127.0.0.1 500", "llama.cpp"),
    ("[11/02/2025-22:00:50] [TRT-LLM] [E] Error in harmony chat completion", "trtllm"),
    ("litellm.InternalServerError: InternalServerError: Hosted_vllmException - Connection error.", "litellm"),
    ("[2025-08-07 12:00:00 TP0] Scheduler hit an exception: sglang boom", "sglang"),
    ("2025-08-07T12:00:00.123Z [ERROR] [LM STUDIO SERVER] Error rendering prompt with jinja template", "lmstudio"),
])
def test_engine_hints_from_log_prefixes(line, engine):
    p = parse_text(line)
    assert engine in p.engines, p.engines
    assert p.errors, "the error line itself is found"


def test_python_traceback_with_vllm_prefixes_is_one_error_with_frames():
    log = "\n".join([
        "(APIServer pid=1) ERROR 06-23 08:11:44 [serving.py:932] Error in chat completion stream generator.",
        "(APIServer pid=1) ERROR 06-23 08:11:44 [serving.py:932] Traceback (most recent call last):",
        '(APIServer pid=1) ERROR 06-23 08:11:44 [serving.py:932]   File "/usr/lib/python3.12/dist-packages/vllm/entrypoints/openai/serving_chat.py", line 629, in chat_completion_stream_generator',
        "(APIServer pid=1) ERROR 06-23 08:11:44 [serving.py:932]     harmony_parser.process(token_id)",
        "(APIServer pid=1) ERROR 06-23 08:11:44 [serving.py:932] openai_harmony.HarmonyError: Unexpected token 200002 while expecting start token 200006",
    ])
    p = parse_text(log)
    harmony = [e for e in p.errors if e.kind == "harmony"]
    assert len(harmony) == 1
    assert harmony[0].frames and "serving_chat.py:629" in harmony[0].frames[0]
    assert harmony[0].line == 2 and harmony[0].engine == "vllm"
    assert p.token_ids == [200002, 200006]


def test_plain_traceback_and_chained_exceptions():
    tb = """Traceback (most recent call last):
  File "/app/main.py", line 3, in <module>
    import pandas
ModuleNotFoundError: No module named 'pandas'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/app/main.py", line 5, in <module>
    raise RuntimeError("x")
RuntimeError: x
"""
    p = parse_text(tb)
    assert [e.exception for e in p.errors] == ["ModuleNotFoundError", "RuntimeError"]
    assert p.token_ids == []


def test_json_error_bodies():
    p = parse_text('{"object": "error", "message": "\\"auto\\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set", "type": "BadRequestError", "param": null, "code": 400}')
    assert p.errors[0].kind == "json-body" and p.errors[0].status == 400
    assert "enable-auto-tool-choice" in p.errors[0].message
    p = parse_text('{"detail": "Not Found"}')
    assert p.errors[0].message == "Not Found"


def test_openai_sdk_exception_with_python_dict():
    p = parse_text("openai.BadRequestError: Error code: 400 - {'error': {'message': 'Unknown role: <|start|>assistant', 'type': 'BadRequestError', 'code': 400}}")
    (e,) = p.errors
    assert e.kind == "harmony" and e.code == "unknown-role" and e.status == 400 and e.via == "openai-sdk"


def test_tool_names_from_headers_and_leaks():
    p = parse_text('unexpected tokens remaining in message header: Some("to=functions.web-browsing")')
    assert p.tool_names == ["web-browsing"]
    p = parse_text('{"tool_calls": [{"function": {"name": "query_dataset<|channel|>commentary", "arguments": "{}"}}]}')
    assert "query_dataset" in p.tool_names


def test_raw_harmony_and_flattened_answers():
    p = parse_text("<|channel|>analysis<|message|>User greets.<|end|><|start|>assistant<|channel|>final<|message|>Hello!")
    assert [e.kind for e in p.errors] == ["harmony-leak"]
    p = parse_text("analysisThe user says hi. We should greet back.assistantfinalHello! How can I help?")
    assert [e.kind for e in p.errors] == ["flattened"]


@pytest.mark.parametrize("text,expected", [
    ("Unexpected token 12606 while expecting start token 200006", [12606, 200006]),
    ("lmdeploy: stop_token_ids=[200002, 200012, 199999]", [200002, 200012, 199999]),
    ("reasoning_end_token_ids [200006, 173781, 200005, 17196, 200008]", [200006, 173781, 200005, 17196, 200008]),
    ('"eos_token_id": [200002, 199999]', [200002, 199999]),
    ("(APIServer pid=200123) INFO 127.0.0.1:8000 max_tokens: 512", []),
    ("Unexpected token 99999999999999999999 while expecting start token 200006", [99999999999999999999, 200006]),
])
def test_token_ids_are_found_without_pids_or_ports(text, expected):
    assert token_ids_in(text) == expected


def test_prefix_stripping():
    assert strip_prefixes("(APIServer pid=1) ERROR 06-23 08:11:44 [serving.py:932] hello") == "hello"


def test_unrelated_errors_parse_as_plain_exceptions():
    p = parse_text("OSError: [Errno 28] No space left on device: '/tmp/x'")
    assert p.errors[0].kind == "exception" and p.token_ids == []


def test_long_log_finds_every_error_with_line_numbers_across_chunk_boundaries():
    filler = "(APIServer pid=1) INFO 08-07 12:00:00 [loggers.py:123] Avg prompt throughput: 1.0 tokens/s\n"
    parts, expected = [], []
    line = 0
    for k in range(30):
        parts.append(filler * 997)
        line += 997
        msg = f"(APIServer pid=1) ERROR 08-07 12:00:00 [serving_chat.py:1001] openai_harmony.HarmonyError: Unexpected token {1000 + k} while expecting start token 200006\n"
        parts.append(msg)
        line += 1
        expected.append(line)
    data = "".join(parts).encode()
    p = parse_stream(io.BytesIO(data))  # default 1 MiB chunks: errors straddle boundaries
    assert [e.line for e in p.errors] == expected
    assert p.lines == line and p.bytes == len(data)
    small = parse_stream(_Dribble(data, 4093))  # odd-sized reads split lines and UTF-8 anywhere
    assert [e.line for e in small.errors] == expected
    assert "vllm" in p.engines


class _Dribble(io.RawIOBase):
    def __init__(self, data: bytes, n: int):
        self.data, self.n, self.pos = data, n, 0

    def read(self, size=-1):
        out = self.data[self.pos:self.pos + min(self.n, size if size and size > 0 else self.n)]
        self.pos += len(out)
        return out


def test_repeated_errors_are_counted_once():
    line = "ERROR 08-07 12:00:01 [serving_chat.py:1001] openai_harmony.HarmonyError: Unexpected token 13 while expecting start token 200006\n"
    p = parse_stream(io.BytesIO(line.encode() * 5000))
    assert len(p.errors) == 1 and p.errors[0].count == 5000


def test_binary_input_is_refused():
    with pytest.raises(BinaryInputError):
        parse_stream(io.BytesIO(b"\x7fELF\x00\x00\x01" * 100))
    with pytest.raises(BinaryInputError):
        parse_text("abc\x00def")


def test_endless_line_does_not_blow_up_memory():
    data = b"x" * (9 << 20) + b" HarmonyError: Unexpected token 5 while expecting start token 200006\n"
    p = parse_stream(io.BytesIO(data), )
    assert p.bytes >= len(data) - 1


def test_a_startup_warning_that_only_mentions_errors_is_not_an_error():
    """Recorded vLLM 0.26.0 start-up line (../shared/real): advice about fd limits, not an error report."""
    line = ("(APIServer pid=591) WARNING 11-23 00:11:56 [system_utils.py:299] Found ulimit of 20000 and failed to "
            "automatically increase with error current limit exceeds maximum limit. This can cause fd limit errors "
            "like `OSError: [Errno 24] Too many open files`. Consider increasing with ulimit -n")
    p = parse_text(line + "\n(APIServer pid=591) ERROR 11-23 00:12:00 [serving_chat.py:1145] "
                   "openai_harmony.HarmonyError: Unexpected token 12606 while expecting start token 200006\n")
    assert [e.kind for e in p.errors] == ["harmony"]


def test_llama_server_vocabulary_setup_and_template_dump_are_not_leaked_output():
    """Recorded llama-server b1-0c1e570 start-up lines (../shared/real): the loader names Harmony tokens while setting
    them up, and the server prints its chat template source; neither is model output."""
    from gptoss_doctor.explain.artifacts import recognise

    text = ("0.03.257.939 W load: setting token '<|channel|>' (200005) attribute to USER_DEFINED (16), old attributes: 8\n"
            "0.03.257.990 W load: special_eog_ids contains both '<|return|>' and '<|call|>', or '<|calls|>' and "
            "'<|flush|>' tokens, removing '<|end|>' and '<|flush|>' tokens from EOG list\n"
            '            {{- "<|start|>assistant<|channel|>final<|message|>" + message.content + "<|end|>" }}\n'
            '        {{- "<|start|>user<|message|>" + message.content + "<|end|>" }}\n')
    assert [e.kind for e in parse_text(text).errors] == []
    assert recognise(text) == ([], [])
    # the same tokens in real output are still recognised
    arts, messages = recognise("<|channel|>final<|message|>Hello<|return|>")
    assert arts and messages


def test_a_traceback_ending_in_an_exception_not_named_error_is_read(cli):
    """Recorded transformers serve 5.23.0 log (../shared/real): the traceback ends in huggingface_hub's
    CacheNotFound (no Error suffix); it must be read as the error, not swallow the lines after it, and the 500 access
    lines that differ only in client ports count as one."""
    from tests.conftest import RECORDED

    log = RECORDED / "transformers-serve-5.23.0" / "server-logs" / "no-hf-cache-dir.log"
    r = cli("explain", "--json", "-f", str(log))
    doc = r.json()
    tb = [e for e in doc["errors"] if e["kind"] == "traceback"]
    assert tb and tb[0]["message"].startswith("huggingface_hub.errors.CacheNotFound: Cache directory not found")
    access = [e for e in doc["errors"] if "GET /v1/models" in e["message"]]
    assert len(access) == 1 and access[0]["count"] > 1, access
    assert doc["matches"][0]["id"] == "transformers-serve-models-500-hf-cache-missing"

"""explain against hostile input: a fuzz test (bounded), non-UTF-8 arguments, JSON nested a thousand deep,
and `--url` against servers that send gigabytes or drip a byte at a time (real sockets on 127.0.0.1)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT, run_cli
from gptoss_doctor.explain import match as matching
from gptoss_doctor.explain import explain_text
from hostile import hostile

PIECES = st.sampled_from([
    "openai_harmony.HarmonyError: ", "Unexpected token ", "while expecting start token 200006", "<|start|>",
    "<|channel|>", "<|message|>", "<|call|>", "<|end|>", "assistant", "commentary to=functions.x", "analysis",
    "assistantfinal", '{"error":', '{"error": {"message": "', "}", "]", "[", "Traceback (most recent call last):\n",
    '  File "/x/vllm/entrypoints/openai/serving_chat.py", line 1, in f\n', "(APIServer pid=1) ERROR 08-07 ",
    "level=ERROR source=server.go:1 msg=\"", "data: ", "\n", " ", "\x1b[2J", "\r", "\udce9", "200012", "-5",
    "token_ids=[200006, 1, 2]", "openai.InternalServerError: Error code: 500 - ", "litellm.BadRequestError: ",
])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(PIECES, st.text(max_size=40)), max_size=40))
def test_fuzzed_text_never_crashes_explain(parts):
    text = "".join(parts)
    if not text.strip() or "\0" in text:
        return
    ex = explain_text(text, allow_download=False)
    json.dumps(ex.to_json())  # the JSON document can always be built


def test_non_utf8_argument_is_read_not_a_crash():
    r = subprocess.run([sys.executable, "-m", "gptoss_doctor", "explain", "--offline", b"caf\xe9 crashed"],
                       capture_output=True, env={"PYTHONPATH": str(ROOT), "GPTOSS_DOCTOR_OFFLINE": "1",
                                                 "PATH": "/usr/bin:/bin"}, timeout=60)
    assert r.returncode == 0, r.stderr
    assert b"internal error" not in r.stderr


def test_json_nested_a_thousand_deep_is_no_crash():
    deep = '{"error":' * 1500 + "1" + "}" * 1500
    r = run_cli("explain", "--offline", "--json", deep)
    assert r.returncode == 0 and json.loads(r.stdout)["ok"] is True
    assert matching.match_text(deep) is not None


def test_url_detokenize_gigabyte_body_is_capped():
    with hostile("gigabyte") as srv:
        t = time.monotonic()
        r = run_cli("explain", "--offline", "--json", "--url", srv.url, "Unexpected token 12606 while expecting start token 200006",
                    timeout=60)
        assert time.monotonic() - t < 20
    doc = json.loads(r.stdout)
    assert r.returncode == 0
    assert next(t for t in doc["tokens"] if t["id"] == 12606)["text"] is None


def test_url_detokenize_drip_is_bounded_by_one_deadline():
    ids = " ".join(str(i) for i in range(1000, 1064))  # 64 regular IDs, each asked of a server that drips
    with hostile("slow_drip") as srv:
        t = time.monotonic()
        r = run_cli("explain", "--offline", "--json", "--url", srv.url, f"token_ids=[{ids.replace(' ', ', ')}]",
                    timeout=90)
        took = time.monotonic() - t
    assert r.returncode == 0, r.stderr
    assert took < 20, took  # was 208 s per ID, one ID after another

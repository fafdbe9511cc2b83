"""explain as a diagnostician (issue 17): facets, triage classes, calibrated confidence, garbage.

The client texts are what the real openai library prints: each test runs ``openai`` in a subprocess against an
emulated faulty server (tests/emulators) on 127.0.0.1 and feeds its exact stderr/stdout to ``explain --json``.
User texts are real thread texts, quoted where they come from.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.emulators import serve

# the real openai client: the pinned client venv the real-client tests use (tests/real/setup_clients.sh), else the
# one installed here
import os

CLIENT_PY = os.environ.get("GPTOSS_DOCTOR_CLIENTS_PY", "")
if not CLIENT_PY:
    pytest.importorskip("openai", reason="the real openai client is needed: set GPTOSS_DOCTOR_CLIENTS_PY "
                                         "(tests/real/setup_clients.sh) or pip install openai")
    CLIENT_PY = sys.executable

CLIENT = textwrap.dedent("""
    import sys
    import openai
    base, model, tools, stream = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4] == "1"
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-wrong-key", max_retries=0, timeout=10)
    kw = {}
    if tools:
        kw["tools"] = [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
                        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                       "required": ["city"]}}}]
    msg = "What is the weather in Paris?" if tools else "Say hello"
    r = client.chat.completions.create(model=model, messages=[{"role": "user", "content": msg}], stream=stream, **kw)
    if stream:
        print("".join((c.choices[0].delta.content or "") for c in r if c.choices))
    else:
        print(r.choices[0].message.content)
""")


def run_openai(base: str, model: str = "openai/gpt-oss-20b", tools: bool = False, stream: bool = False) -> str:
    """What the real openai client prints for this request (the traceback on failure, else the answer)."""
    proc = subprocess.run([CLIENT_PY, "-c", CLIENT, base, model, "1" if tools else "0", "1" if stream else "0"],
                          capture_output=True, text=True, timeout=60)
    return proc.stdout + proc.stderr


def explain_json(cli, text: str, tmp_path: Path) -> dict:
    f = tmp_path / "paste.txt"
    f.write_text(text, encoding="utf-8")
    res = cli("explain", "--offline", "--json", "--file", str(f))
    assert res.code == 0, res.stderr
    return res.json()


def classes(doc: dict) -> list[str]:
    return [c["id"] for c in doc["triage"]["classes"]]


def confident(doc: dict) -> list[str]:
    return [m["id"] for m in doc["matches"] if m["confidence"] in ("high", "medium")]


def test_openai_401_is_understood_as_auth_from_openai_python(cli, tmp_path):
    with serve("vllm", faults=("api_key",)) as srv:
        text = run_openai(srv.url)
    assert "openai.AuthenticationError: Error code: 401" in text
    doc = explain_json(cli, text, tmp_path)
    f = doc["facets"]
    assert f["client"]["name"] == "openai-python"
    assert f["http_status"] == 401 and "http-status" in f["failure"]
    assert doc["triage"]["known"] is False
    assert classes(doc)[0] == "auth"
    top = doc["triage"]["classes"][0]
    assert any("check URL" in c for c in top["checks"]) and all(fx["references"] for fx in top["fixes"])
    assert any("github.com/openai/openai-python/issues?q=" in s["url"] for s in top["searches"])


def test_connection_refused_is_unreachable(cli, tmp_path):
    with socket.socket() as s:  # a port nothing listens on: bound, never listening
        s.bind(("127.0.0.1", 0))
        text = run_openai(f"http://127.0.0.1:{s.getsockname()[1]}")
    assert "openai.APIConnectionError: Connection error." in text
    doc = explain_json(cli, text, tmp_path)
    assert classes(doc)[0] == "unreachable"
    assert not confident(doc)


def test_a_dead_engine_is_engine_not_ready(cli, tmp_path):
    with serve("vllm", faults=("dead",)) as srv:
        text = run_openai(srv.url)
    assert "openai.InternalServerError" in text
    doc = explain_json(cli, text, tmp_path)
    assert classes(doc)[0] == "engine-not-ready"


def test_a_proxy_backend_key_error_is_auth_behind_the_proxy_not_a_confident_entry(cli, tmp_path):
    with serve("litellm", faults=("backend_key_wrong",)) as srv:
        text = run_openai(srv.url, model=srv.model)
    assert "litellm.AuthenticationError" in text
    doc = explain_json(cli, text, tmp_path)
    f = doc["facets"]
    assert f["client"]["name"] == "openai-python" and f["proxy"]["name"] == "litellm"
    assert classes(doc)[:2] == ["auth", "proxy-wrapped"]
    # words shared with an entry about Ollama Cloud keys are no diagnosis of a LiteLLM backend key
    assert not confident(doc), doc["matches"][:2]


def test_a_litellm_wrapped_harmony_error_is_the_backend_s(cli, tmp_path):
    with serve("litellm", faults=("stale_eos",)) as srv:
        text = run_openai(srv.url, model=srv.model, tools=True)
    assert "litellm.InternalServerError" in text and "Unexpected token" in text
    doc = explain_json(cli, text, tmp_path)
    assert doc["origin"] == "server"
    assert "backend" in doc["origin_detail"] and "inside the LiteLLM proxy" not in doc["origin_detail"]
    assert doc["facets"]["proxy"]["name"] == "litellm"
    assert "harmony-parse" in classes(doc)


def test_random_weight_garbage_points_at_weights_not_a_tool_parser(cli, tmp_path):
    with serve("vllm", faults=("garbage",)) as srv:
        text = run_openai(srv.url)
    doc = explain_json(cli, text, tmp_path)
    kinds = [a["kind"] for a in doc["artifacts"]]
    assert "garbage-output" in kinds and "duplicated-fragments" not in kinds
    assert "garbage" in doc["facets"]["failure"]
    assert doc["origin"] == "model-files"
    assert classes(doc)[0] == "garbage-output"
    assert not confident(doc)


def test_streamed_arguments_sent_twice_are_a_tool_call_fault(cli, tmp_path):
    with serve("lmdeploy", faults=("dup_stream_args",)) as srv:
        client = subprocess.run([CLIENT_PY, "-c", textwrap.dedent("""
            import sys, openai
            c = openai.OpenAI(base_url=sys.argv[1] + "/v1", api_key="x", max_retries=0, timeout=10)
            tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
                      "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
            args, name = "", ""
            for ch in c.chat.completions.create(model="openai/gpt-oss-20b", stream=True, tools=tools,
                    messages=[{"role": "user", "content": "What is the weather in Paris?"}]):
                for tc in (ch.choices[0].delta.tool_calls or []) if ch.choices else []:
                    name += tc.function.name or ""
                    args += tc.function.arguments or ""
            print(f"tool call: {name}({args})")
        """), srv.url], capture_output=True, text=True, timeout=60)
    text = client.stdout + client.stderr
    doc = explain_json(cli, text, tmp_path)
    assert "duplicated-fragments" in [a["kind"] for a in doc["artifacts"]], text
    assert classes(doc)[0] == "tool-calls"


def test_a_hosted_provider_route_is_its_own_layer(cli, tmp_path):
    # https://github.com/truefoundry/models/pull/946 (a thread text, cut where the thread's excerpt ends): the
    # openai client calling gpt-oss on Vertex through a gateway
    text = textwrap.dedent("""\
        Traceback (most recent call last):
          File "/tmp/tmp4ul067nf/snippet.py", line 5, in <module>
            response = client.chat.completions.create(
                       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
          File "/usr/local/lib/python3.11/site-packages/openai/_utils/_utils.py", line 286, in wrapper
            return func(*args, **kwargs)
                   ^^^^^^^^^^^^^^^^^^^^^
          File "/usr/local/lib/python3.11/site-packages/openai/resources/chat/completions/completions.py", line 1147, in create
            return self._post(
                   ^^^^^^^^^^^
          File "/usr/local/lib/python3.11/site-packages/openai/_base_client.py", line 1259, in post
            return cast(ResponseT, self.request(cast_to, opts, stream=stream, stream_cls=stream_cls))
                                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
          File "/usr/local/lib/python3.11/site-packages/openai/_base_client.py", line 1047, in request
            raise self._make_status_error_from_response(err.response) from None
        openai.NotFoundError: Error code: 404 - {'status': 'failure', 'message': 'vertex error: Publisher Model `projects/248190060486/locations/global/publishers/openai/models/gpt-oss` was not found or your project does not have access to it. Please ensure you are using a valid model version. For more information, see: https://cloud.google.com/vertex-ai/generative-ai/docs/learn/model-versions', 'error'
        """)
    doc = explain_json(cli, text, tmp_path)
    f = doc["facets"]
    assert f["provider"]["name"] == "vertex_ai" and f["http_status"] == 404 and f["engine"] is None
    assert doc["origin"] == "provider"
    assert classes(doc)[0] == "route-missing" and "proxy-wrapped" in classes(doc)
    for m in doc["matches"]:  # no engine flag is a fix at a hosted provider
        assert "server" not in m["fixes_by_layer"] and "provider" in m["fixes_by_layer"]


def test_human_output_says_what_it_understood_and_what_to_check(cli, tmp_path):
    with serve("vllm", faults=("api_key",)) as srv:
        text = run_openai(srv.url)
    f = tmp_path / "paste.txt"
    f.write_text(text, encoding="utf-8")
    res = cli("explain", "--offline", "--file", str(f))
    out = res.stdout
    assert out.index("What I understood") < out.index("Not a known issue — check these next")
    assert "HTTP status: 401" in out and "client: openai-python" in out


def test_kb_validate_checks_the_triage_classes(tmp_path):
    import shutil

    from gptoss_doctor import kb

    root = Path(kb.knowledge_dir())
    copy = tmp_path / "knowledge"
    shutil.copytree(root, copy)
    entries, errs = kb.validate_dir(copy)
    assert not errs and len(kb.validate_classes(copy)[0]) == len(kb.CLASS_IDS)
    bad = (copy / "classes" / "auth.yaml")
    bad.write_text(bad.read_text().replace("references:\n  - https://github.com/BerriAI/litellm/issues/13154",
                                           "references:\n  - not-a-url"), encoding="utf-8")
    (copy / "classes" / "made-up.yaml").write_text((copy / "classes" / "oom.yaml").read_text().replace(
        "id: oom", "id: made-up"), encoding="utf-8")
    _, errs = kb.validate_dir(copy)
    assert any("auth.yaml" in e and "https references" in e for e in errs), errs
    assert any("made-up.yaml" in e and "agreed ids" in e for e in errs), errs


def _case(case_id: str) -> str:
    """A benchmark case's text (real thread text, bench/cases; dev split)."""
    import bench_accuracy as B

    return next(c.text for c in B.load_cases() if c.id == case_id)


def test_an_entry_for_other_hardware_drops(cli, tmp_path):
    # vLLM on an MI355X (HIP errors): an entry about NVIDIA's DGX Spark is a lead at most, and says why
    from gptoss_doctor.explain.match import match_text

    text = _case("gpu-kernels-vllm-32895-mi355x-hip")
    doc = explain_json(cli, text, tmp_path)
    assert doc["facets"]["hardware"]["vendor"] == "amd"
    # the first five shown: if the Spark entry is among them, it is a lead
    for m in doc["matches"]:
        if m["id"] == "vllm-spark-gptoss-illegal-memory-cuda-graphs":
            assert m["confidence"] == "low"
    # and wherever it ranks
    spark = [m for m in match_text(text, limit=300, min_score=0.0)
             if m.entry.id == "vllm-spark-gptoss-illegal-memory-cuda-graphs"]
    assert spark and spark[0].confidence == "low"
    assert any("nvidia hardware and the text shows amd" in ev for ev in spark[0].evidence)


def test_engine_entries_drop_for_a_hosted_provider_text(cli, tmp_path):
    # pydantic-ai #3333: gpt-oss-120b-maas on Vertex through a Gemini client
    doc = explain_json(cli, _case("proxies-sdks-pydanticai-3333-vertex-maas-invalid-argument"), tmp_path)
    assert doc["facets"]["provider"]["name"] == "vertex_ai"
    from gptoss_doctor import kb

    # no entry about a self-hosted engine only is a confident answer for a hosted provider's text
    for m in doc["matches"]:
        if not {"hosted", "client", "any", "pydantic-ai", "langchain"} & set(kb.get(m["id"]).engines):
            assert m["confidence"] == "low", m
    assert doc["matches"][0]["id"] == "hosted-vertex-gpt-oss-maas-gemini-client"


def test_json_carries_no_raw_bidi_or_c1_from_the_text(cli, tmp_path):
    # hostile input: a bidi override and a C1 control inside a model name the triage quotes back
    text = "openai.NotFoundError: Error code: 404 - The model `gpt-oss\u202e\u0085x` does not exist\n"
    f = tmp_path / "paste.txt"
    f.write_text(text, encoding="utf-8")
    res = cli("explain", "--offline", "--json", "--file", str(f))
    assert "\u202e" not in res.stdout and "\u0085" not in res.stdout
    doc = res.json()  # still valid JSON, the same strings once parsed
    assert "\u202e" in doc["errors"][0]["message"]
    assert classes(doc)[0] == "route-missing"



def test_a_status_shown_by_the_text_is_no_guess_and_asks_nothing(cli, tmp_path):
    with serve("vllm", faults=("api_key",)) as srv:
        text = run_openai(srv.url)
    doc = explain_json(cli, text, tmp_path)
    top = doc["triage"]["classes"][0]
    assert top["id"] == "auth" and top["basis"] == "shown"
    assert doc["triage"]["ask"] == []

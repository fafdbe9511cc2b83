"""check --request (issue 19 item 1): the user's own request — a JSON body, a curl command line, a HAR entry —
sent as given, non-streamed and streamed, judged by every detector, reported as causes with the knowledge base's
entries; what will be sent is said first; the key is never printed and a header from the file never carries one."""

from __future__ import annotations

import json

from conftest import run_cli
from tests.emulators import serve

TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
CHAT = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [TOOL], "tool_choice": "auto"}


def _checks(r) -> dict:
    return {c["id"]: c for c in json.loads(r.stdout)["targets"][0]["checks"]}


def test_a_replayed_json_body_against_lmdeploy_names_4014(tmp_path):
    req = tmp_path / "req.json"
    req.write_text(json.dumps(CHAT))
    with serve("lmdeploy", faults=("dup_stream_args",)) as srv:
        r = run_cli("check", srv.url, "--request", str(req), "--json")
        human = run_cli("check", srv.url, "--request", str(req))
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    causes = doc["targets"][0]["causes"]
    assert len(causes) == 1 and "https://github.com/InternLM/lmdeploy/issues/4014" in causes[0]["references"]
    assert "probe.tools.stream_duplicated" in causes[0]["checks"]
    err = human.stderr.decode()
    assert "will send (req.json): POST /v1/chat/completions" in err and "1 tool(s)" in err


def test_a_curl_command_line_is_replayed_without_its_authorization_header(tmp_path):
    curl = tmp_path / "failing.sh"
    curl.write_text("curl http://gpu-box:8000/v1/chat/completions \\\n"
                    "  -H 'Content-Type: application/json' \\\n"
                    "  -H 'Authorization: Bearer sk-from-the-curl-line-0123456789' \\\n"
                    "  -H 'X-Request-Tag: replay' \\\n"
                    f"  -d '{json.dumps(CHAT)}'\n")
    with serve("vllm", faults=("stale_eos",)) as srv:
        r = run_cli("check", srv.url, "--request", str(curl), "--json")
        human = run_cli("check", srv.url, "--request", str(curl))
    c = _checks(r)
    assert r.returncode == 1 and c["probe.harmony_error"]["status"] == "fail"
    assert "stale-generation-config-call-token" in c["probe.harmony_error"]["kb"]
    err = human.stderr.decode()
    assert "not sent: Authorization" in err and "headers X-Request-Tag" in err and "not to gpu-box" in err
    assert b"sk-from-the-curl-line" not in r.stdout + r.stderr + human.stdout + human.stderr


def test_the_servers_own_key_is_needed_not_the_one_in_the_file(tmp_path):
    curl = tmp_path / "c.txt"
    curl.write_text(f"curl http://x/v1/chat/completions -H 'Authorization: Bearer sk-in-file-000000000000' "
                    f"-d '{json.dumps(CHAT)}'")
    with serve("vllm", api_key="sk-server-key-1234567890") as srv:
        denied = run_cli("check", srv.url, "--request", str(curl), "--json")
        allowed = run_cli("check", srv.url, "--request", str(curl), "--json", "--api-key", "sk-server-key-1234567890")
    assert denied.returncode == 4
    assert allowed.returncode == 0, _checks(allowed)
    for r in (denied, allowed):
        assert b"sk-in-file" not in r.stdout + r.stderr and b"sk-server-key-1234567890" not in r.stdout + r.stderr


def test_a_har_entry_and_a_responses_request(tmp_path):
    body = {"model": "openai/gpt-oss-20b", "input": "Weather in Paris?",
            "tools": [{"type": "function", "name": "get_weather", "parameters": TOOL["function"]["parameters"]}]}
    har = {"log": {"entries": [
        {"request": {"method": "GET", "url": "http://h/v1/models", "headers": []}},
        {"request": {"method": "POST", "url": "http://h/v1/responses", "headers": [{"name": "Cookie", "value": "s=1"}],
                     "postData": {"mimeType": "application/json", "text": json.dumps(body)}}}]}}
    f = tmp_path / "session.har"
    f.write_text(json.dumps(har))
    with serve("vllm") as srv:
        r = run_cli("check", srv.url, "--request", str(f), "--json")
        human = run_cli("check", srv.url, "--request", str(f))
    c = _checks(r)
    assert r.returncode == 0 and c["probe.responses"]["status"] == "pass", c
    assert "HAR entry 2 of 2" in human.stderr.decode() and "not sent: Cookie" in human.stderr.decode()


def test_required_tool_missing_and_off_schema_arguments(tmp_path):
    req = tmp_path / "r.json"
    req.write_text(json.dumps({**CHAT, "tool_choice": "required"}))
    with serve("vllm", faults=("no_tool_parser",)) as srv:
        r = run_cli("check", srv.url, "--request", str(req), "--json")
    c = _checks(r)
    assert r.returncode == 1 and c["probe.tools.call"]["status"] == "fail"
    assert "tool_choice requires" in c["probe.tools.call"]["detail"]
    # the emulated model fills the properties it is shown and leaves out a required one it is not
    strict = dict(TOOL, function=dict(TOOL["function"], parameters={
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city", "country"]}))
    req.write_text(json.dumps({**CHAT, "tools": [strict]}))
    with serve("vllm") as srv:
        r2 = run_cli("check", srv.url, "--request", str(req), "--json")
    schema = _checks(r2)["probe.tools.schema"]
    assert schema["status"] == "fail" and "lacks the required property 'country'" in schema["detail"]


def test_schema_rules():
    from gptoss_doctor.check.probes.replay import _schema_problems

    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "unit": {"enum": ["c", "f"]},
                                               "tags": {"type": "array", "items": {"type": "string"}}},
              "required": ["n"], "additionalProperties": False}
    assert _schema_problems({"n": 3, "unit": "c", "tags": ["a"]}, schema) == []
    assert _schema_problems({"n": 1.5, "unit": "k", "tags": [1], "x": 0}, schema) == [
        "arguments has 'x', which the schema does not allow", "arguments.n is float, the schema says integer",
        "arguments.unit is \"k\", not one of the enum values", "arguments.tags[0] is int, the schema says string"]
    assert _schema_problems({"n": True}, schema) == ["arguments.n is bool, the schema says integer"]


def test_bad_request_files_are_usage_errors(tmp_path):
    cases = {"a.json": "[1, 2]", "b.json": '{"prompt": "hi"}', "c.sh": "curl http://x/v1/chat/completions",
             "d.sh": "curl http://x -d @body.json", "e.har": '{"log": {"entries": []}}'}
    with serve("vllm") as srv:
        for name, text in cases.items():
            p = tmp_path / name
            p.write_text(text)
            r = run_cli("check", srv.url, "--request", str(p), "--json")
            assert r.returncode == 2 and json.loads(r.stdout)["error"]["kind"] == "usage", (name, r.stdout)
        q = run_cli("check", srv.url, "--request", str(tmp_path / "a.json"), "--quick")
    assert q.returncode == 2 and b"Traceback" not in q.stderr

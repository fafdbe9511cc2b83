"""``check`` against OpenAI's reference Responses API server (PyPI gpt-oss 0.0.9) as emulated from the recordings in
../shared/real/gpt-oss-reference-0.0.9: recognised from its /openapi.json, its Responses API probed, everything it
does not serve a skip that says why, and the python tool's backend failure named (a Docker daemon it cannot reach)."""

from __future__ import annotations

import json

from gptoss_doctor.check import run as pipeline
from gptoss_doctor.check.result import CheckOptions, TargetResult
from tests.emulators import serve

WHY = "the reference server serves only /v1/responses"
LACKS = ("probe.chat", "probe.tools.call", "probe.stream.framing", "probe.structured_output", "metrics.saturation",
         "tokenizer.special_tokens", "health", "models.listed")


def run_check(url: str, **kw) -> TargetResult:
    return pipeline.run([(url, [])], CheckOptions(timeout=kw.pop("timeout", 5), **kw))[0]


def by_id(r: TargetResult) -> dict:
    return {f.id: f for f in r.checks}


def test_reference_server_is_checked_not_refused():
    with serve("gptoss-reference") as srv:
        r = run_check(srv.url)
        sent = [(q["method"], q["path"]) for q in srv.requests]
    f = by_id(r)
    assert r.llm_server and r.engine == "gptoss-reference", r.engine_evidence
    assert "reach.not_llm" not in f
    assert "/openapi.json" in r.engine_evidence[0]
    assert r.model == "gpt-oss-120b" and r.models[0].gpt_oss
    for fid in LACKS:
        assert f[fid].status == "skip" and WHY in f[fid].detail, (fid, f[fid].detail)
    # without --deep the Responses probes still run: they are all this server has
    assert f["probe.responses"].status == "pass"
    assert f["probe.responses.function_call"].status == "pass"
    assert f["probe.responses.tool_output"].status == "pass"
    assert ("POST", "/v1/responses") in sent and ("POST", "/v1/chat/completions") not in sent
    assert not [(x.id, x.detail) for x in r.checks if x.status in ("fail", "error")]
    assert r.code(strict=False) == 0


def test_first_item_output_index_minus_one_is_a_conformance_warning():
    with serve("gptoss-reference") as srv:
        r = run_check(srv.url)
    c = by_id(r)["probe.responses.conformance"]
    assert c.status == "warn" and "negative output_index" in c.detail
    assert "item_id" in c.fix and "gpt-oss-120b" in c.fix and "completed" in c.fix


def test_deep_runs_the_python_tool():
    with serve("gptoss-reference") as srv:
        r = run_check(srv.url, deep=True)
    f = by_id(r)["probe.responses.builtin_tools"]
    assert f.status == "pass", f.detail
    assert r.code(strict=False) == 0


def test_python_tool_without_docker_daemon_is_named():
    with serve("gptoss-reference", faults=("python_backend_down",)) as srv:
        r = run_check(srv.url, deep=True)
    f = by_id(r)["probe.responses.builtin_tools"]
    assert f.status == "fail"
    assert "HTTP 500" in f.detail and "backend failed" in f.detail
    assert "PYTHON_EXECUTION_BACKEND" in f.fix and "Docker daemon" in f.fix
    # the streamed request was cut after response.code_interpreter_call.interpreting: that is evidence too
    assert any("interpreting" in e for e in f.evidence), f.evidence
    assert by_id(r)["probe.responses"].status == "pass"  # the rest of the server works
    assert r.code(strict=False) == 1


def test_a_model_list_in_front_does_not_blame_a_tool_parser():
    with serve("gptoss-reference", faults=("models_route",)) as srv:
        r = run_check(srv.url)
    f = by_id(r)
    assert r.engine == "gptoss-reference"
    assert f["models.listed"].status == "pass"
    assert f["probe.chat"].status == "skip" and WHY in f["probe.chat"].detail
    assert f["probe.tools.call"].status == "skip"
    said = " ".join((x.fix or "") + x.detail for x in r.checks if x.status in ("fail", "warn", "error"))
    assert "tool-call parser" not in said and "--tool-call-parser" not in said and "tool_call_parser" not in said
    assert r.code(strict=False) == 0


def test_cli_json_exit_0(cli):
    with serve("gptoss-reference") as srv:
        res = cli("check", "--json", srv.url)
    assert res.code == 0, res.stderr
    t = res.json()["targets"][0]
    assert t["engine"]["name"] == "gptoss-reference" and t["llm_server"] is not False
    checks = {c["id"]: c for c in t["checks"]}
    assert checks["probe.chat"]["status"] == "skip" and WHY in checks["probe.chat"]["detail"]


# -- scan ------------------------------------------------------------------------------------------------------------

def test_scan_finds_a_launch_of_the_reference_server(tmp_path):
    """PyPI gpt-oss 0.0.9 has no console script (no entry_points.txt in its wheel): `python -m` is its launch."""
    from gptoss_doctor.scan import scan

    (tmp_path / "serve.sh").write_text(
        "#!/bin/sh\nexport PYTHON_EXECUTION_BACKEND=dangerously_use_uv\n"
        "python -m gpt_oss.responses_api.serve --checkpoint /models/gpt-oss-20b/original --port 8000 "
        "--inference-backend triton\n")
    res = scan([tmp_path], host=False)
    assert [(la.engine, la.model, la.where) for la in res.launches] == [
        ("gptoss-reference", "/models/gpt-oss-20b/original", f"{tmp_path / 'serve.sh'}:3")]
    assert res.launches[0].gpt_oss
    assert res.exit_code == 0 and not res.problems

"""``check`` against the engine emulators: engine and version, every fault fails the right check with the
right references, healthy servers pass, authentication and unreachable targets give their exit codes."""

from __future__ import annotations

import json
import re
import time
from dataclasses import astuple

import pytest

from gptoss_doctor.check import run as pipeline
from gptoss_doctor.check.link import engine_ok
from gptoss_doctor.check.result import CheckOptions, TargetResult
from gptoss_doctor.check.targets import normalize_url
from gptoss_doctor import kb
from tests.emulators import ENGINES, serve
from tests.hostile import closed_port

NO_VERSION = {"lmdeploy", "lmstudio"}  # these expose no version over HTTP (server_apis.md sections 6, 7)

# fault -> finding that must fail
FAULT_FINDING = {
    "stale_eos": "probe.harmony_error",
    "dup_stream_args": "probe.tools.stream_duplicated",
    "raw_harmony": "probe.harmony_leak",
    "flattened": "probe.flattened_channels",
    "no_reasoning_parser": "probe.reasoning",
    "no_tool_parser": "probe.tools.no_parser",
    "tool_name_leak": "probe.tools.name_leak",
    "dead": "health",
    "no_responses_api": "probe.responses",
    "responses_tool_output_lost": "probe.responses.tool_output",
}
DEEP_FAULTS = {"no_responses_api", "responses_tool_output_lost"}
# faults an engine cannot show: TGI has no Responses API and no reasoning field at all
NOT_APPLICABLE = {("tgi", "no_responses_api"), ("tgi", "responses_tool_output_lost"), ("tgi", "no_reasoning_parser"),
                  # every llama-server build since the Responses API was merged (Jan 2026) serves /v1/responses: a 404
                  # there is an older build, a version gap reported as a skip (tests/test_check_versions.py)
                  ("llama.cpp", "no_responses_api")}


def run_check(url: str, **kw) -> TargetResult:
    opts = CheckOptions(timeout=kw.pop("timeout", 5), **kw)
    return pipeline.run([(url, [])], opts)[0]


def by_id(r: TargetResult) -> dict:
    return {f.id: f for f in r.checks}


def expected_refs(fid: str, engine: str) -> list[str]:
    """URLs of the KB entries that name the finding and apply to the engine."""
    return [u for e in kb.by_finding(fid) if engine_ok(e, engine) for u in e.urls]


@pytest.mark.parametrize("engine", ENGINES)
def test_healthy_engine_is_identified_and_passes(engine):
    with serve(engine) as srv:
        r = run_check(srv.url, deep=True)
    assert r.engine == engine, r.engine_evidence
    if engine in NO_VERSION:
        assert r.version is None
    else:
        assert r.version and srv.version in r.version
    assert r.models and r.models[0].id == srv.model and any(m.gpt_oss for m in r.models)
    fails = [(f.id, f.detail) for f in r.checks if f.status in ("fail", "error")]
    assert not fails
    assert r.code(strict=False) == 0
    assert by_id(r)["probe.chat"].status == "pass"


def test_vllm_0_10_1_is_reported_with_its_tool_parser_gap():
    with serve("vllm", version="0.10.1") as srv:
        r = run_check(srv.url)
    f = by_id(r)
    assert r.version == "0.10.1"
    assert f["engine.version"].status == "warn" and "0.10.2" in f["engine.version"].detail
    assert f["probe.tools.no_parser"].status == "fail"
    assert "--tool-call-parser" in f["probe.tools.no_parser"].fix
    assert any("vllm" in u for u in f["engine.version"].references)


@pytest.mark.parametrize("fault", sorted(FAULT_FINDING))
@pytest.mark.parametrize("engine", ENGINES)
def test_fault_fails_the_right_check_with_references(engine, fault):
    if (engine, fault) in NOT_APPLICABLE:
        pytest.skip(f"{engine} cannot show {fault}")
    fid = FAULT_FINDING[fault]
    with serve(engine, faults=(fault,)) as srv:
        r = run_check(srv.url, deep=fault in DEEP_FAULTS)
    f = by_id(r)
    assert fid in f, [c.id for c in r.checks]
    assert f[fid].status == "fail", (f[fid].status, f[fid].detail)
    assert r.code(strict=False) == 1
    for url in expected_refs(fid, engine):
        assert url in f[fid].references, (fid, url)
    assert f[fid].fix, fid


def test_stale_eos_points_at_the_generation_config_entry():
    entry = kb.get("stale-generation-config-call-token")
    with serve("vllm", faults=("stale_eos",)) as srv:
        r = run_check(srv.url)
    f = by_id(r)
    for fid in ("probe.harmony_error", "probe.stream.error_chunk", "eos.call_token"):
        assert f[fid].status == "fail"
        assert f[fid].kb[0] == entry.id
        assert f[fid].references[0] == entry.urls[0]
        assert "fix-config" in f[fid].fix
    assert any("12606" in e for e in f["probe.harmony_error"].evidence)


def test_llama_cpp_error_line_mid_stream_is_an_error_chunk():
    with serve("llama.cpp", faults=("stale_eos",)) as srv:
        r = run_check(srv.url)
    f = by_id(r)
    assert f["probe.stream.error_chunk"].status == "fail"
    assert "Failed to parse input" in f["probe.stream.error_chunk"].detail


@pytest.mark.parametrize("engine", ENGINES)
def test_api_key_required_exit_4_and_accepted_with_key(engine, cli):
    with serve(engine, faults=("api_key",)) as srv:
        code, out, _ = astuple(cli("check", srv.url, "--json", "--timeout", "5"))
        assert code == 4
        doc = json.loads(out)
        checks = {c["id"]: c for c in doc["targets"][0]["checks"]}
        assert checks["auth.required"]["status"] == "fail"
        if engine != "trtllm":  # trtllm-serve has no API key of its own: its 401 cannot be fingerprinted
            assert doc["targets"][0]["engine"]["name"] == engine
        code, out, _ = astuple(cli("check", srv.url, "--json", "--quick", "--api-key", srv.api_key))
        assert code == 0, out
        assert srv.api_key not in out
        checks = {c["id"]: c for c in json.loads(out)["targets"][0]["checks"]}
        assert checks["auth.required"]["status"] == "pass"


def test_wrong_api_key_is_rejected_exit_4(cli):
    with serve("vllm", faults=("api_key",)) as srv:
        code, out, err = astuple(cli("check", srv.url, "--api-key", "sk-wrong-key"))
    assert code == 4
    assert "rejected" in out
    assert "sk-wrong-key" not in out + err


def test_api_key_from_environment(cli, monkeypatch):
    with serve("sglang", faults=("api_key",)) as srv:
        monkeypatch.setenv("OPENAI_API_KEY", srv.api_key)
        code, out, _ = astuple(cli("check", srv.url, "--quick"))
        assert code == 0, out
        assert any(q["headers"].get("authorization") == f"Bearer {srv.api_key}" for q in srv.requests)


def test_unreachable_closed_port_exit_3(cli):
    code, out, _ = astuple(cli("check", f"http://127.0.0.1:{closed_port()}", "--json"))
    assert code == 3
    doc = json.loads(out)
    t = doc["targets"][0]
    assert t["reachable"] is False
    assert [c["id"] for c in t["checks"]] == ["reach.refused"]
    assert t["checks"][0]["status"] == "fail" and t["checks"][0]["fix"]


def test_not_llm_web_server(cli):
    with serve("not-llm") as srv:
        code, out, _ = astuple(cli("check", srv.url))
    assert code == 3
    assert "OpenAI-compatible API" in out and "not as an OpenAI-compatible LLM server" in out


def test_json_document_shape(cli):
    with serve("vllm") as srv:
        code, out, err = astuple(cli("check", srv.url, "--json"))
    assert code == 0
    doc = json.loads(out)  # exactly one document
    assert doc["schema_version"] == 1 and doc["command"] == "check"
    t = doc["targets"][0]
    assert t["url"] == srv.url and t["reachable"] is True
    assert t["engine"] == {"name": "vllm", "version": srv.version, "evidence": t["engine"]["evidence"]}
    assert t["models"] == [{"id": srv.model, "max_model_len": 131072, "gpt_oss": True}]
    for c in t["checks"]:
        assert set(c) >= {"id", "status", "title", "detail", "fix", "references"}
        assert c["status"] in ("pass", "warn", "fail", "skip", "error")
    assert set(doc["summary"]) == {"pass", "warn", "fail", "skip", "error", "causes"}
    assert doc["summary"]["causes"] == {"fail": 0, "error": 0, "warn": 0} and t["causes"] == []
    assert doc["summary"]["pass"] == sum(1 for c in t["checks"] if c["status"] == "pass")


def test_human_report(cli):
    with serve("vllm", faults=("dup_stream_args",)) as srv:
        code, out, _ = astuple(cli("check", srv.url))
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == f"{srv.url} · vLLM {srv.version} · {srv.model}"
    # one ✗ for the one cause, the checks that showed it as its evidence
    marks = [l for l in lines if l.startswith("  ✗ ")]
    assert len(marks) == 1, marks
    assert "seen by: " in out and "Streamed argument fragments" in out
    assert "see: https://github.com/InternLM/lmdeploy/issues/4014" in out
    assert lines[-1].startswith("✗ 1 problem (seen by ")


def test_markdown_report(cli):
    with serve("vllm", faults=("stale_eos", "api_key")) as srv:
        code, out, _ = astuple(cli("check", srv.url, "--markdown", "--api-key", srv.api_key))
    assert code == 1
    assert out.startswith("### gptoss-doctor check report")
    assert "| ❌ | `probe.harmony_error` |" in out
    assert "https://github.com/vllm-project/vllm/issues/22519" in out
    assert srv.api_key not in out


def test_several_targets_with_bounded_concurrency_and_exit_precedence(cli, tmp_path):
    with serve("vllm") as ok, serve("sglang", faults=("api_key",)) as auth:
        targets = tmp_path / "targets.txt"
        targets.write_text(f"# servers\n{ok.url}\n127.0.0.1:{closed_port()}\n", encoding="utf-8")
        code, out, err = astuple(cli("check", auth.url, "--targets", str(targets), "--concurrency", "2", "--quick",
                                     "--json"))
        assert code == 4  # 4 (auth) > 3 (unreachable) > 1 > 0
        doc = json.loads(out)
        assert [t["engine"]["name"] for t in doc["targets"]] == ["sglang", "vllm", "unknown"]
        code, out, err = astuple(cli("check", ok.url, f"127.0.0.1:{closed_port()}", "--quick"))
        assert code == 3
        assert "assuming http://" in err
        assert "2 targets" in out.splitlines()[-1]


def test_strict_makes_warnings_fail(cli):
    with serve("lmstudio", max_model_len=4096) as srv:  # LM Studio's small default loaded context
        code, out, _ = astuple(cli("check", srv.url, "--quick"))
        assert code == 0 and "! Context length" in out
        code, _, err = astuple(cli("check", srv.url, "--quick", "--strict"))
        assert code == 1


# (no URL at all is not a usage error any more: `check` then looks for this host's servers, tests/test_check_local.py)
@pytest.mark.parametrize("args", [["http://"], ["ftp://example.com"], ["http://host:notaport"], ["a b"],
                                  ["http://[bad"], ["http://[::1"], ["http://host:99999"]])
def test_malformed_urls_are_usage_errors(args, cli):
    code, out, err = astuple(cli("check", *args))
    assert code == 2
    assert err.strip() and "Traceback" not in err


def test_trailing_v1_is_dropped():
    assert normalize_url("http://h:8000/v1/")[0] == "http://h:8000"
    assert normalize_url("h:8000")[0] == "http://h:8000"
    assert normalize_url("https://h/proxy/v1/chat/completions")[0] == "https://h/proxy"


def test_quick_skips_probes():
    with serve("vllm") as srv:
        r = run_check(srv.url, quick=True)
        paths = [q["path"] for q in srv.requests]
    assert "/v1/chat/completions" not in paths and "/v1/responses" not in paths
    assert by_id(r)["probe.chat"].status == "skip"
    assert by_id(r)["tokenizer.special_tokens"].status == "pass"


def test_model_flag_and_unknown_model():
    with serve("vllm") as srv:
        r = run_check(srv.url, model="nope")
    f = by_id(r)
    assert f["models.listed"].status == "fail" and "nope" in f["models.listed"].detail


def _gen_config(folder, eos):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "generation_config.json").write_text(json.dumps(
        {"bos_token_id": 199998, "do_sample": True, "eos_token_id": eos, "pad_token_id": 199999}), encoding="utf-8")


def test_model_dir_stale_generation_config(tmp_path):
    _gen_config(tmp_path / "m", [200002, 199999])
    with serve("vllm") as srv:
        r = run_check(srv.url, quick=True, model_dir=str(tmp_path / "m"))
    f = by_id(r)
    assert f["eos.local_generation_config"].status == "fail"
    assert "missing 200012" in f["eos.local_generation_config"].detail
    assert f["eos.call_token"].status == "fail"
    assert "https://github.com/vllm-project/vllm/issues/22519" in f["eos.local_generation_config"].references


def test_hf_cache_generation_config_is_found(tmp_path, monkeypatch):
    hub = tmp_path / "hf" / "hub"
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    repo = hub / "models--openai--gpt-oss-20b"
    _gen_config(repo / "snapshots" / "old", [200002, 199999])
    _gen_config(repo / "snapshots" / "abc123", [200002, 199999, 200012])
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123", encoding="utf-8")
    with serve("vllm") as srv:
        r = run_check(srv.url, quick=True)
    f = by_id(r)
    assert f["eos.local_generation_config"].status == "pass"
    assert "abc123" in f["eos.local_generation_config"].detail
    assert f["eos.call_token"].status == "pass"


def test_ollama_exposes_the_eos_list():
    with serve("ollama") as srv:
        r = run_check(srv.url, quick=True)
    f = by_id(r)
    assert f["eos.call_token"].status == "pass" and f["eos.return_token"].status == "pass"


def test_probes_run_concurrently():
    """Requests overlap: with 0.3 s per answer a full check takes far less than requests x 0.3 s."""
    with serve("vllm", delay=0.3) as srv:
        t = time.monotonic()
        r = run_check(srv.url, deep=True)
        wall = time.monotonic() - t
        n = len(srv.requests)
    assert r.code(strict=False) == 0
    assert wall < n * 0.3 / 2, (wall, n)


@pytest.mark.parametrize("engine", ["vllm", "ollama", "llama.cpp"])
def test_dead_engine_is_one_failure_not_ten(engine):
    with serve(engine, faults=("dead",)) as srv:
        r = run_check(srv.url)
    failing = [f.id for f in r.checks if f.status in ("fail", "error")]
    assert failing == ["health"]
    assert by_id(r)["probe.chat"].status == "skip" and "unhealthy" in by_id(r)["probe.chat"].detail


def test_sglang_server_args_are_evidence():
    with serve("sglang", faults=("no_tool_parser",)) as srv:
        r = run_check(srv.url)
    f = by_id(r)["probe.tools.no_parser"]
    assert "/server_info tool_call_parser = None" in f.evidence
    assert "--tool-call-parser gpt-oss" in f.fix


def test_a_probe_bug_is_an_error_check_not_a_crash(monkeypatch):
    from gptoss_doctor.check import probes

    async def boom(ctx):
        raise KeyError("unforeseen")

    monkeypatch.setattr(probes, "chat", boom)
    with serve("vllm") as srv:
        r = run_check(srv.url)
    f = by_id(r)["probe.chat"]
    assert f.status == "error" and "KeyError" in f.detail
    assert by_id(r)["probe.tools.call"].status == "pass"  # the other probes still ran


def test_litellm_names_its_backend():
    with serve("litellm") as srv:
        r = run_check(srv.url, quick=True)
    f = by_id(r)["engine.identified"]
    assert "in front of" in f.detail and "hosted_vllm" in f.detail


def test_gpt_oss_under_another_name_is_recognised_by_its_tokenizer():
    with serve("vllm", model="my-company/assistant-v2") as srv:
        r = run_check(srv.url, quick=True)
    assert by_id(r)["models.gpt_oss"].status == "pass"
    assert r.models[0].gpt_oss is True


def test_saturation_from_metrics_is_reported_with_vllm_flags():
    with serve("vllm", faults=("saturated",)) as srv:
        r = run_check(srv.url)
    sat = [c for c in r.checks if c.id == "metrics.saturation"]
    assert sat and sat[0].status == "warn", [(c.id, c.status, c.detail) for c in r.checks if c.id.startswith("metrics")]
    text = " ".join([sat[0].detail, *sat[0].evidence, sat[0].fix])
    assert "KV cache 98% full" in text and "waiting" in text and "preemption" in text
    assert "--gpu-memory-utilization" in sat[0].fix
    assert r.code(strict=False) == 0 and r.code(strict=True) == 1  # a warning, not a failure
    assert any(c.id == "metrics.ttft" and c.status == "pass" for c in r.checks)


def test_structured_output_with_harmony_in_the_json_fails():
    with serve("vllm", faults=("structured_harmony",)) as srv:
        r = run_check(srv.url)
    f = by_id(r)
    assert f["probe.structured_output"].status == "fail" and "Harmony markup" in f["probe.structured_output"].detail
    with serve("vllm") as srv:
        assert by_id(run_check(srv.url))["probe.structured_output"].status == "pass"


def test_recent_vllm_gets_no_reasoning_parser_flag_advice():
    # vLLM selects the gpt-oss reasoning parser itself since 0.10.1 (vllm-project/vllm#23430)
    with serve("vllm", version="0.11.0", faults=("no_reasoning_parser",)) as srv:
        r = run_check(srv.url)
    bad = [c for c in r.checks if c.status in ("fail", "warn") and "--reasoning-parser" in (c.fix or "")]
    assert not bad, [(c.id, c.fix) for c in bad]
    f = by_id(r)
    assert f["probe.reasoning"].status == "fail" and "parses gpt-oss reasoning by itself" in f["probe.reasoning"].fix


def test_vllm_026_tool_call_parsed_and_dropped_names_the_missing_parser():
    # vLLM 0.26.0 without the tool flags: content null, stop_reason 200012, no tool_calls (recorded)
    with serve("vllm", version="0.26.0", faults=("no_tool_parser",)) as srv:
        r = run_check(srv.url)
    f = by_id(r)
    assert f["probe.tools.no_parser"].status == "fail"
    assert "stop_reason 200012" in f["probe.tools.no_parser"].detail
    assert "--tool-call-parser openai" in f["probe.tools.no_parser"].fix
    assert f["eos.call_token"].status == "pass"  # the stop token is fine: the flag is the one fault


def test_garbage_output_blames_the_model_not_a_flag():
    # what vLLM 0.26.0 answered with random weights (recorded e2_fresh_noparsers)
    with serve("vllm", version="0.26.0", faults=("garbage",)) as srv:
        r = run_check(srv.url)
    f = by_id(r)
    assert f["probe.chat"].status == "fail" and "not language" in f["probe.chat"].detail
    assert "checkpoint" in f["probe.chat"].fix
    flag_advice = [c for c in r.checks if c.status in ("fail", "warn") and re.search(r"--(tool-call|reasoning)-parser", c.fix or "")]
    assert not flag_advice, [(c.id, c.fix) for c in flag_advice]
    # its references are issues about garbage output, not the chat probe's other issues (an empty answer's threads)
    from gptoss_doctor import kb

    classes = {e.id: e.classes for e in kb.load()}
    assert all("garbage-output" in classes[k] for k in f["probe.chat"].kb), f["probe.chat"].kb
    assert "gptoss-empty-answer-budget-spent-in-reasoning" not in f["probe.chat"].kb


def test_stale_model_dir_copy_the_server_does_not_use_is_one_warning(tmp_path):
    (tmp_path / "generation_config.json").write_text('{"eos_token_id": [200002, 199999]}')
    with serve("vllm") as srv:
        r = run_check(srv.url, model_dir=str(tmp_path))
    f = by_id(r)
    assert f["eos.call_token"].status == "pass"
    assert f["eos.local_generation_config"].status == "warn"
    assert "not using it" in f["eos.local_generation_config"].detail
    assert not [c for c in r.checks if c.status == "fail"]


def test_a_stream_that_ended_in_a_harmony_error_gets_no_tick_for_its_partial_call():
    with serve("vllm", faults=("stale_eos",)) as srv:
        r = run_check(srv.url)
    f = by_id(r)
    for fid in ("probe.tools.invalid_json", "probe.tools.name_leak"):
        assert fid not in f or f[fid].status != "pass", (fid, f[fid].detail)


def test_sse_buffering_advice_only_with_evidence_of_buffering():
    with serve("vllm", faults=("stale_eos",)) as srv:  # the stream ends with an error event
        r = run_check(srv.url)
    framing = by_id(r).get("probe.stream.framing")
    assert framing is None or "buffer" not in (framing.fix or "")
    from hostile import hostile

    with hostile("reset_mid_stream") as srv:
        r = run_check(srv.url)
    framing = by_id(r)["probe.stream.framing"]
    assert framing.status == "fail" and "buffer" not in framing.fix and "cut" in framing.fix


def test_litellm_version_is_read_from_a_completion_header():
    # LiteLLM 1.109.1 (recorded) has no version on /health/readiness, only x-litellm-version on completions
    with serve("litellm", version="1.109.1") as srv:
        r = run_check(srv.url)
    assert r.version == "1.109.1"
    assert "1.109.1" in by_id(r)["engine.identified"].detail


def _fixes(r):
    return " ".join(c.fix or "" for c in r.checks if c.status in ("fail", "warn", "error"))


def test_litellm_wrong_proxy_key_is_an_auth_failure_with_a_proxy_fix():
    with serve("litellm", version="1.109.1", faults=("api_key",)) as srv:
        r = run_check(srv.url, api_key="wrong-key")
    f = by_id(r)
    assert f["auth.required"].status == "fail" and "HTTP 400" in f["auth.required"].detail
    assert "master key" in f["auth.required"].fix
    assert "--tool-call-parser" not in _fixes(r) and "--api-key" not in f["auth.required"].fix


@pytest.mark.parametrize("fault,words", [("backend_key_wrong", "rejected the proxy's API key"),
                                         ("backend_cooldown", "in cooldown")])
def test_litellm_backend_faults_name_the_backend_not_a_flag(fault, words):
    with serve("litellm", version="1.109.1", faults=(fault,)) as srv:
        r = run_check(srv.url)
    f = by_id(r)
    assert f["health"].status == "fail" and words in f["health"].detail
    fixes = _fixes(r)
    assert "--tool-call-parser" not in fixes and "buffer" not in fixes and "pass the server's key" not in fixes
    assert "auth.required" not in f or f["auth.required"].status == "pass"


def test_litellm_dead_backend_names_the_backend():
    with serve("litellm", version="1.109.1", faults=("dead",)) as srv:
        r = run_check(srv.url)
    f = by_id(r)
    assert f["health"].status == "fail" and "backend" in f["health"].detail
    assert "restart it" not in f["health"].fix and "backend" in f["health"].fix


def test_responses_stream_cut_after_the_call_points_at_the_stale_config_not_at_the_engine():
    with serve("vllm", version="0.26.0", faults=("stale_eos",)) as srv:
        r = run_check(srv.url, deep=True)
    f = by_id(r)
    assert f["probe.responses"].status == "fail"
    assert "right after the function call" in f["probe.responses"].detail
    assert "fix-config" in f["probe.responses"].fix and "upgrade" not in f["probe.responses"].fix.lower()


def test_transformers_serve_is_identified_and_its_missing_harmony_parser_reported():
    """transformers serve 5.23 (recorded in ../shared/real) has no Harmony parser: channels and tool calls come back
    as text; its streams end without [DONE], which is its normal framing (a warning, not a cut stream)."""
    with serve("transformers") as srv:
        r = run_check(srv.url, deep=True)
    assert r.engine == "transformers" and r.version is None, r.engine_evidence
    assert any("fractional" in e for e in r.engine_evidence)
    f = by_id(r)
    assert f["probe.flattened_channels"].status == "fail"
    assert "without a Harmony parser" in f["probe.flattened_channels"].fix
    assert f["probe.tools.no_parser"].status == "fail"
    assert f["probe.stream.framing"].status == "warn" and "never sends it" in f["probe.stream.framing"].detail
    assert f["probe.responses"].status == "pass"
    assert r.code(strict=False) == 1


def test_a_stream_without_done_is_still_a_cut_stream_on_engines_that_send_it():
    with serve("vllm", faults=("flattened",)) as srv:
        r = run_check(srv.url)
    assert by_id(r)["probe.stream.framing"].status == "pass"


def test_a_slow_server_that_answers_one_request_at_a_time_is_reported_as_slow_not_broken():
    """A server that queues requests (transformers serve on CPU took 7-30 s per request, recorded) must not have its
    queue counted as timeouts: the first chat is timed, then the probes go one at a time with the full deadline."""
    with serve("vllm", faults=("serial",), delay=1.0) as srv:
        t0 = time.monotonic()
        r = run_check(srv.url, timeout=2.5)
        took = time.monotonic() - t0
    f = by_id(r)
    assert f["probe.latency"].status == "warn" and "one at a time" in f["probe.latency"].detail
    bad = [(x.id, x.detail) for x in r.checks if x.status in ("fail", "error")]
    assert not bad, bad
    assert f["probe.chat"].status == "pass" and f["probe.tools.call"].status == "pass"
    assert r.code(strict=False) == 0 and took < 60


def test_a_tool_request_that_times_out_still_gets_a_tool_parser_verdict():
    """Recorded in CI: transformers serve on CPU with random weights, under load, answered chat but not the tool
    request within the deadline, and the report said nothing about the tool parser (the finding was missing, not
    skipped). Each question the check asks gets an answer in the report, here "not judged" with the reason."""
    for faults in (("garbage", "slow_tools"), ("slow_tools",)):
        with serve("vllm", faults=faults) as srv:
            r = run_check(srv.url, timeout=2)
        f = by_id(r)
        assert f["probe.tools.call"].status == "error", (faults, f["probe.tools.call"])
        assert f["probe.tools.no_parser"].status == "skip", (faults, f["probe.tools.no_parser"])
        assert "tool request got no answer" in f["probe.tools.no_parser"].detail
        assert "within 2 s" in f["probe.tools.no_parser"].detail, f["probe.tools.no_parser"].detail
        assert f["probe.tools.stream"].status == "skip" and "before the deadline" in f["probe.tools.stream"].detail
        if "garbage" in faults:
            assert f["probe.chat"].status == "fail" and "not language" in f["probe.chat"].detail


def test_a_fast_server_gets_no_latency_finding():
    with serve("vllm") as srv:
        r = run_check(srv.url)
    assert "probe.latency" not in by_id(r)


def test_transformers_serve_without_a_hub_cache_folder_is_still_checked():
    """Recorded: transformers serve 5.23 answers GET /v1/models with a plain-text 500 when the Hugging Face cache
    folder is missing, while chat works. The doctor names the engine, finds the pinned model from the 400 answer to an
    unknown model, says what the 500 means, and probes the model (not 'not an OpenAI-compatible server', exit 3)."""
    with serve("transformers", faults=("no_hf_cache",), model="openai/gpt-oss-20b") as srv:
        r = run_check(srv.url)
    assert r.engine == "transformers" and r.llm_server
    f = by_id(r)
    assert f["models.listed"].status == "warn" and "openai/gpt-oss-20b" in f["models.listed"].detail
    assert "Hugging Face cache folder" in f["models.listed"].fix
    assert r.model == "openai/gpt-oss-20b" and f["probe.chat"].status == "pass"
    assert r.code(strict=False) == 1  # the missing Harmony parser, not the model list


def test_llamacpp_source_build_with_weights_that_never_produce_harmony():
    """Recorded llama-server b1-0c1e570 with a random-weight gpt-oss: every request fails with the PEG parser's 500.
    The doctor names the engine build, reports the failure once (health), and its fix points at the model files."""
    with serve("llama.cpp", version="b1-0c1e570", faults=("garbage",)) as srv:
        r = run_check(srv.url)
    assert r.engine == "llama.cpp" and r.version == "b1-0c1e570"
    f = by_id(r)
    assert f["health"].status == "fail" and "peg-native" in f["health"].detail
    assert "llamacpp-peg-native-format-500" in f["health"].kb
    assert "weights" in f["health"].fix


def test_the_tool_parser_verdict_says_why_it_was_not_judged():
    """judge_hidden_parser: each way a tool request can end without showing whether tool calls are extracted gets
    its own reason; a refusal with an HTTP status is its own finding (a dead engine refuses everything)."""
    from gptoss_doctor.check.judge import Collector, judge_hidden_parser
    from gptoss_doctor.check.probes import Obs

    def verdict(*calls):
        col = Collector()
        col.extend(list(calls))
        judge_hidden_parser(col)
        return col.obs.get("probe.tools.no_parser")

    got = verdict(Obs("probe.tools.call", "fail", "no tool call in tool_calls; content: 'It is sunny.'"))
    assert got[0].status == "skip" and "did not call the tool" in got[0].detail
    got = verdict(Obs("probe.tools.call", "error", "tool call: no complete answer within 5 s"))
    assert got[0].status == "skip" and "no complete answer within 5 s" in got[0].detail
    got = verdict(Obs("probe.tools.call", "fail", "the answer is not a chat completion", ["<html>"]))
    assert got[0].status == "skip" and "could not be read" in got[0].detail
    assert verdict(Obs("probe.tools.call", "fail", "tool call: HTTP 503: down", http_status=503)) is None
    assert verdict(Obs("probe.tools.call", "pass", "get_weather({}) returned in tool_calls"),
                   Obs("probe.tools.no_parser", "pass", "tool call parsed into tool_calls"))[0].status == "pass"
    assert verdict() is None  # no tool probe ran: nothing to say

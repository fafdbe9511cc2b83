"""check reports causes, not symptoms (issue 18 item 1): one fault that fails several checks is one ✗ with those
checks as its evidence, and the summary counts causes."""

from __future__ import annotations

import json

from conftest import run_cli
from tests.emulators import serve


def test_lmdeploy_4014_is_one_problem_seen_by_three_checks():
    with serve("lmdeploy", faults=("dup_stream_args",)) as srv:
        human = run_cli("check", srv.url, env={"COLUMNS": "80"})
        doc = json.loads(run_cli("check", srv.url, "--json").stdout)
        md = run_cli("check", srv.url, "--markdown").stdout.decode()
    assert "**Summary:** 1 problem (seen by 3 checks)" in md
    out = human.stdout.decode()
    assert human.returncode == 1
    assert [l for l in out.splitlines() if l.startswith("  ✗ ")] == [
        "  ✗ lmdeploy: streamed gpt-oss tool-call arguments duplicated across chunks"]
    assert out.count("see: https://github.com/InternLM/lmdeploy/issues/4014") == 1
    assert out.splitlines()[-1].startswith("✗ 1 problem (seen by 3 checks)")
    t = doc["targets"][0]
    assert len(t["causes"]) == 1
    cause = t["causes"][0]
    assert cause["status"] == "fail" and "https://github.com/InternLM/lmdeploy/issues/4014" in cause["references"]
    assert set(cause["checks"]) == {"probe.tools.invalid_json", "probe.tools.stream", "probe.tools.stream_duplicated"}
    assert doc["summary"]["causes"]["fail"] == 1 and doc["summary"]["fail"] == 3  # checks still counted as checks


def test_two_causes_are_two_problems():
    with serve("vllm", faults=("dup_stream_args", "raw_harmony")) as srv:
        doc = json.loads(run_cli("check", srv.url, "--json").stdout)
    t = doc["targets"][0]
    fails = [c for c in t["causes"] if c["status"] == "fail"]
    assert len(fails) >= 2
    assert len({c["kb"][0] if c["kb"] else c["fix"] for c in fails}) == len(fails)

"""check on engine releases that predate an API (issue 18 item 6): a Responses API missing in that version is a
skip naming the release that added it, not a failure; a 404 from a release that has it is still a failure."""

from __future__ import annotations

import json

from conftest import run_cli
from tests.emulators import serve


def _deep(url: str) -> dict:
    r = run_cli("check", url, "--deep", "--json", "--timeout", "10")
    doc = json.loads(r.stdout)
    return {c["id"]: c for c in doc["targets"][0]["checks"]}, r.returncode


def test_ollama_before_0_13_3_skips_the_responses_api_with_the_release_that_added_it():
    with serve("ollama", version="0.12.6") as srv:
        checks, code = _deep(srv.url)
    resp = checks["probe.responses"]
    assert resp["status"] == "skip", resp
    assert "0.13.3" in resp["detail"] and "0.12.6" in resp["detail"]
    assert checks["probe.responses.function_call"]["status"] == "skip"
    assert code == 0


def test_ollama_with_the_responses_api_missing_still_fails():
    with serve("ollama", version="0.13.5", faults=("no_responses_api",)) as srv:
        checks, code = _deep(srv.url)
    assert checks["probe.responses"]["status"] == "fail" and code == 1


def test_llamacpp_build_without_responses_is_a_skip():
    with serve("llama.cpp", version="b6123", faults=("no_responses_api",)) as srv:
        checks, code = _deep(srv.url)
    resp = checks["probe.responses"]
    assert resp["status"] == "skip" and "upgrade llama.cpp" in resp["detail"], resp
    assert code == 0

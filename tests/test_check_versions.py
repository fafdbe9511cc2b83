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


def _quick(url: str) -> dict:
    r = run_cli("check", url, "--quick", "--json")
    return json.loads(r.stdout)["targets"][0]


def test_litellm_version_comes_from_its_openapi_document_without_deep():
    with serve("litellm", version="1.109.1", api_key="sk-master-0123456789") as srv:
        t = _quick(srv.url)  # no key: /openapi.json is public on LiteLLM, the model list is not
    assert t["engine"]["version"] == "1.109.1"
    ident = {c["id"]: c for c in t["checks"]}["engine.identified"]
    assert "1.109.1" in ident["detail"]


def test_engines_without_a_version_route_say_where_to_read_it():
    for engine, words in (("lmdeploy", "pip show lmdeploy"), ("transformers", "pip show transformers")):
        with serve(engine) as srv:
            t = _quick(srv.url)
        ident = {c["id"]: c for c in t["checks"]}["engine.identified"]
        assert t["engine"]["version"] is None and words in ident["detail"], ident

"""Hostile or broken servers never hang ``check`` or crash it: each gives a clear finding and the documented exit code."""

from __future__ import annotations

import json
import time

import pytest

from tests.conftest import run_cli
from tests.hostile import closed_port, hostile, recorder, redirecting

KEY = "sk-hostile-SECRET-4242"


def check_json(cli, *args: str) -> tuple[int, dict, str]:
    r = cli("check", "--json", "--timeout", "2", *args)
    return r.code, r.json(), r.stderr


def checks(doc: dict) -> dict:
    return {c["id"]: c for c in doc["targets"][0]["checks"]}


# behaviour -> (exit code, finding id that fails or errors, text in its detail)
CASES = {
    "endless_sse": (1, "probe.stream.framing", "no [DONE] after"),
    "endless_line": (1, "probe.stream.framing", "longer than"),
    "gigabyte": (3, "reach.not_llm", ""),
    "gigabyte_chat": (1, "probe.chat", "larger than 1024 KiB"),
    "not_object": (3, "reach.not_llm", ""),
    "html": (3, "reach.not_llm", ""),
    "slow_drip": (3, "reach.timeout", "within 2 s"),
    "blackhole": (3, "reach.timeout", "within 2 s"),
    "reset_mid_stream": (1, "probe.stream.framing", "closed mid-stream"),
    "reset_always": (3, "reach.reset", "closed by the server"),
}


@pytest.mark.parametrize("behaviour", sorted(CASES))
def test_hostile_server_gives_a_finding_and_exit_code(behaviour, cli):
    code_want, fid, text = CASES[behaviour]
    with hostile(behaviour) as srv:
        t = time.monotonic()
        code, doc, err = check_json(cli, srv.url)
        wall = time.monotonic() - t
    assert code == code_want, checks(doc)
    f = checks(doc)[fid]
    assert f["status"] in ("fail", "error")
    assert text in f["detail"]
    assert wall < 8, wall  # never hangs: bounded by --timeout and the stream limits
    assert "Traceback" not in err


def test_gigabyte_evidence_names_the_cap(cli):
    with hostile("gigabyte") as srv:
        _, doc, _ = check_json(cli, srv.url)
    assert any("larger than 1024 KiB" in e for e in checks(doc)["reach.not_llm"]["evidence"])


def test_invalid_utf8_is_tolerated(cli):
    with hostile("invalid_utf8") as srv:
        code, doc, err = check_json(cli, srv.url)
    t = doc["targets"][0]
    assert t["engine"]["name"] == "vllm" and t["models"][0]["id"] == "openai/gpt-oss-20b"
    assert checks(doc)["probe.chat"]["status"] == "pass"
    assert "\ufffd" in checks(doc)["probe.chat"]["detail"]
    assert code == 1  # no tool calls from this server
    assert "Traceback" not in err


def test_cross_host_redirect_is_reported_and_key_never_forwarded(cli):
    with recorder(host="localhost") as other:
        with redirecting(lambda: other.url) as srv:
            code, doc, err = check_json(cli, srv.url, "--api-key", KEY)
        assert code == 3
        f = checks(doc)["reach.redirect"]
        assert f["status"] == "fail" and other.url in f["detail"]
        assert all("authorization" not in q["headers"] for q in other.requests)
        assert KEY not in json.dumps(doc) + err


def test_same_origin_redirect_is_followed(cli):
    with redirecting(lambda: "", same_origin_path="/api") as srv:
        code, doc, _ = check_json(cli, srv.url, "--quick", "--api-key", KEY)
        assert doc["targets"][0]["engine"]["name"] == "vllm"
        models = [q for q in srv.requests if q["path"].endswith("/v1/models")]
        assert [q["path"] for q in models] == ["/v1/models", "/api/v1/models"]
        assert all(q["headers"].get("authorization") == f"Bearer {KEY}" for q in models)


@pytest.mark.parametrize("mode", ["--json", "--markdown", "--verbose"])
def test_api_key_echoed_by_the_server_is_redacted(mode):
    with hostile("echo_key") as srv:
        p = run_cli("check", srv.url, "--timeout", "2", mode, env={"OPENAI_API_KEY": KEY})
    out = p.stdout.decode() + p.stderr.decode()
    assert p.returncode == 1, out
    assert KEY not in out
    assert "***" in out  # the echoed key was replaced, not dropped silently


def test_refused_and_dns(cli):
    code, doc, _ = check_json(cli, f"http://127.0.0.1:{closed_port()}")
    assert code == 3 and list(checks(doc)) == ["reach.refused"]
    code, doc, _ = check_json(cli, "http://no-such-host.invalid:8000")
    assert code == 3 and list(checks(doc)) == ["reach.dns"]


def test_json_stdout_is_one_document_end_to_end():
    """A real subprocess, as a script would run it: stdout parses as exactly one JSON document."""
    with hostile("html") as srv:
        p = run_cli("check", srv.url, "--json", "--timeout", "2")
    assert p.returncode == 3
    doc = json.loads(p.stdout)
    assert doc["command"] == "check" and doc["targets"][0]["llm_server"] is False
    p = run_cli("check", "http://", "--json")
    assert p.returncode == 2
    assert json.loads(p.stdout)["error"]["kind"] == "usage"


def test_tokenizer_without_harmony_specials_fails(cli):
    with hostile("bad_tokenizer") as srv:
        code, doc, _ = check_json(cli, srv.url, "--quick")
    f = checks(doc)["tokenizer.special_tokens"]
    assert code == 1 and f["status"] == "fail"
    assert "200006" in f["detail"] and f["fix"]


def test_url_password_never_printed(cli):
    port = closed_port()
    r = cli("check", f"http://user:pw-SECRET-9@127.0.0.1:{port}")
    assert r.code == 3
    assert "pw-SECRET-9" not in r.stdout + r.stderr
    r = cli("check", "user:pw-SECRET-9@host:notaport")
    assert r.code == 2 and "pw-SECRET-9" not in r.stdout + r.stderr


def test_llama_cpp_without_jinja_is_a_missing_tool_parser(cli):
    with hostile("llama_no_jinja") as srv:
        code, doc, _ = check_json(cli, srv.url)
    assert doc["targets"][0]["engine"]["name"] == "llama.cpp"
    f = checks(doc)["probe.tools.no_parser"]
    assert code == 1 and f["status"] == "fail" and "--jinja" in f["fix"]


BOMB_CLIENT = """
import asyncio, sys
from gptoss_doctor.net.http import Client
async def main(url):
    async with Client(url) as c:
        r = await c.get("/v1/models")
        print(r.status, len(r.body), r.truncated)
asyncio.run(main(sys.argv[1]))
# VmHWM: this process's own peak since exec (ru_maxrss may include the parent's pages from before the exec)
print(next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) // 1024)
"""


def test_gzip_bomb_is_capped_while_decompressing():
    import os
    import subprocess
    import sys

    from conftest import ROOT

    from hostile import _bomb

    _bomb()  # compress it before the server runs, not while the client waits
    with hostile("gzip_bomb") as srv:
        p = subprocess.run([sys.executable, "-c", BOMB_CLIENT, srv.url], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=str(ROOT)))
    status, rss_mb = p.stdout.splitlines()[0], int(p.stdout.splitlines()[-1])
    assert status == "200 1048576 True", p.stdout + p.stderr  # read up to the 1 MiB cap, and no further
    assert rss_mb < 80, f"peak RSS {rss_mb} MB (httpx's own decoder inflated whole chunks: 157 MB)"


def test_a_fast_endless_stream_stops_at_its_deadline():
    import time

    with hostile("fast_endless_sse") as srv:
        t = time.monotonic()
        r = run_cli("check", "--json", "--timeout", "3", srv.url, timeout=120)
        took = time.monotonic() - t
    assert r.returncode == 1
    assert took < 40, took


@pytest.mark.parametrize("behaviour,fid,words", [
    ("ssh_banner", "reach.not_llm", "speaks another protocol"),
    ("huge_headers", "reach.reset", "headers are too large (the client refused"),
    ("redirect_loop", "reach.redirect", "redirects in a loop"),
])
def test_wording_points_the_right_way(behaviour, fid, words):
    with hostile(behaviour) as srv:
        r = run_cli("check", "--json", "--timeout", "3", srv.url, timeout=120)
    doc = json.loads(r.stdout)
    checks = {c["id"]: c for c in doc["targets"][0]["checks"]}
    assert fid in checks and words in checks[fid]["detail"], checks
    text = json.dumps(doc)
    assert "overloaded" not in text and "closed by the server" not in text
    assert "not an OpenAI-compatible" not in checks.get("reach.redirect", {}).get("detail", "")


def test_a_slow_stream_still_delivering_at_the_deadline_is_slowness_not_a_cut(cli):
    """Real transformers serve on a busy CPU streamed garbage at a few tokens a second past --timeout: that is a slow
    server (warn, raise --timeout), not a stream cut by a crash or a proxy."""
    with hostile("slow_stream") as srv:
        r = cli("check", "--json", "--timeout", "3", srv.url)
    f = {c["id"]: c for c in r.json()["targets"][0]["checks"]}
    framing = f["probe.stream.framing"]
    assert framing["status"] == "warn", framing
    assert "still streaming" in framing["detail"] and "--timeout" in framing["fix"]
    assert "cut" not in framing["fix"]

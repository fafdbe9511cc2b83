"""``report``: the bug-report bundle as a user runs it (subprocess), against planted secrets, a planted Hugging Face
cache, a planted launch script, a running launch, a server that echoes the key, and a real emulator."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.emulators import serve
from tests.hostile import hostile

STALE_REV = "0123456789abcdef0123456789abcdef01234567"


def _token(n: int = 24) -> str:
    return secrets.token_hex(n)


def _plant_cache(hf_home: Path) -> None:
    repo = hf_home / "hub" / "models--openai--gpt-oss-20b"
    snap = repo / "snapshots" / STALE_REV
    snap.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(STALE_REV)
    (snap / "generation_config.json").write_text(json.dumps({"eos_token_id": [200002, 199999]}))


@pytest.fixture
def planted(tmp_path):
    """Secrets in every place a report reads: the environment, a launch script, a running launch's argv and
    environment, a URL's user:password, a pasted error; and the values to look for."""
    s = {
        "hf": "hf_" + _token(16),
        "openai": "sk-proj-" + _token(20),
        "script_key": "scriptkey-" + _token(),
        "proc_key": "prockey-" + _token(),
        "proc_env": "procenv-" + _token(),
        "url_pass": "urlpass-" + _token(),
        "pasted_sk": "sk-proj-" + _token(20),
        "pasted_bearer": "bearertok" + _token(),
        "custom_env": "custom-" + _token(),
    }
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    (deploy / "serve.sh").write_text(
        "#!/bin/bash\n"
        f"export HF_TOKEN={s['hf']}\n"
        f"vllm serve openai/gpt-oss-20b --api-key {s['script_key']} --tool-call-parser openai "
        "--enable-auto-tool-choice\n")
    hf_home = tmp_path / "hf"
    _plant_cache(hf_home)
    env = {"HF_HOME": str(hf_home), "HF_TOKEN": s["hf"], "OPENAI_API_KEY": s["openai"],
           "MY_SERVICE_SECRET": s["custom_env"]}
    # a running launch with its key in argv and a token in its environment (scan reads /proc)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "vllm", "serve",
                             "openai/gpt-oss-20b", "--api-key", s["proc_key"]],
                            env={**os.environ, "HF_TOKEN": s["proc_env"]})
    try:
        yield s, deploy, env
    finally:
        proc.terminate()
        proc.wait(10)


def _error_text(s: dict) -> str:
    return (f"openai.APIError: Authorization: Bearer {s['pasted_bearer']} was sent with key {s['pasted_sk']}\n"
            "openai_harmony.HarmonyError: Unexpected token 12606 while expecting start token 200006")


def test_report_contains_no_planted_secret_in_any_format(planted):
    s, deploy, env = planted
    outs = {}
    with hostile("echo_key") as srv:
        host_port = srv.url.split("//", 1)[1]
        # with user:password in the URL the check sends them as Basic credentials; without, the key as Bearer
        for url_kind, url in (("creds", f"http://user:{s['url_pass']}@{host_port}"), ("key", srv.url)):
            for fmt in ("markdown", "json"):
                r = run_cli("report", str(deploy), "--url", url, "--timeout", "5", "--error", _error_text(s),
                            *(["--json"] if fmt == "json" else []), env=env, text=True, timeout=120)
                assert r.returncode == 0, r.stderr
                outs[url_kind, fmt] = (r.stdout, r.stderr)
        sent = [q["headers"].get("authorization", "") for q in srv.requests]
    # the server did receive both credentials and echoed them back: the redactor had something to do
    assert any(a == "Bearer " + s["openai"] for a in sent) and any(a.startswith("Basic ") for a in sent)
    basic = next(a for a in sent if a.startswith("Basic ")).split()[1]
    for (url_kind, fmt), (out, err) in outs.items():
        for name, value in {**s, "basic": basic}.items():
            assert value not in out + err, f"{name} leaked ({url_kind}, {fmt})"
    md, js = outs["key", "markdown"][0], outs["creds", "json"][0]
    doc = json.loads(js)
    assert doc["command"] == "report" and doc["report_schema"] == 1
    # the sections were collected, not left empty
    assert any(la["where"].endswith("serve.sh:3") for la in doc["launches"])
    assert any(la["source_kind"] == "process" and "openai/gpt-oss-20b" in la["argv"] for la in doc["launches"])
    assert doc["check"]["url"].startswith("http://") and doc["check"]["engine"]
    assert doc["explain"]["errors"] and doc["explain"]["matches"]
    assert "‹redacted›" in md.split("### Launches")[1]  # the flag is kept, its value hidden


def test_report_lists_copies_with_revision_and_stop_tokens(tmp_path):
    _plant_cache(tmp_path / "hf")
    r = run_cli("report", "--json", env={"HF_HOME": str(tmp_path / "hf")}, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    [copy] = doc["model_copies"]
    assert copy["repo"] == "openai/gpt-oss-20b" and copy["revision"] == STALE_REV
    assert copy["eos_token_id"] == [200002, 199999]
    assert copy["stop_tokens"] == ["<|return|>", "<|endoftext|>"] and copy["call_token_stops"] is False
    # every package of the stack is listed, installed or not (None), read from metadata
    for name in ("vllm", "sglang", "lmdeploy", "transformers", "torch", "triton", "openai-harmony", "tiktoken",
                 "litellm", "openai"):
        assert name in doc["packages"]
    assert doc["packages"]["openai-harmony"]  # a dependency of the doctor: installed
    for name in ("ollama", "llama-server"):
        b = doc["binaries"][name]
        assert b["version"] or b["reason"]
    g = doc["gpus"]
    assert g["nvidia"] or any("nvidia-smi" in n for n in g["notes"])
    md = run_cli("report", env={"HF_HOME": str(tmp_path / "hf")}, text=True, timeout=120).stdout
    flat = " ".join(md.split())  # lines are wrapped at 80 columns
    assert STALE_REV in flat and "no `<|call|>`: a stale generation" in flat


def test_report_markdown_lines_fit_80_columns_and_escape_server_text(tmp_path):
    with serve("vllm", version="0.11.0", faults=("stale_eos",)) as srv:
        r = run_cli("report", "--url", srv.url, "--error", "openai_harmony.HarmonyError: Unexpected token 12606 "
                    "while expecting start token 200006", text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "### Check of" in r.stdout and "stale-generation" not in r.stdout.split("### Check of")[0]
    assert "Stale generation\\_config.json" in r.stdout  # the cause, Markdown-escaped
    long = [ln for ln in lines if len(ln) > 80 and " " in ln.strip() and "://" not in ln]
    assert not long, long


def test_report_usage_errors(tmp_path):
    r = run_cli("report", "--error", "x", "--error-file", str(tmp_path / "log"), "--json", text=True)
    assert r.returncode == 2 and json.loads(r.stdout)["error"]["kind"] == "usage"
    r = run_cli("report", "--error-file", str(tmp_path / "missing.log"), text=True)
    assert r.returncode == 2 and "no such file" in r.stderr and "Traceback" not in r.stderr


def test_report_error_file_is_explained(tmp_path):
    log = tmp_path / "vllm.log"
    log.write_text("INFO started\nopenai_harmony.HarmonyError: Unexpected token 12606 while expecting start "
                   "token 200006\n")
    r = run_cli("report", "--json", "--error-file", str(log), text=True, timeout=120)
    doc = json.loads(r.stdout)
    assert doc["explain"]["input"]["lines"] == 2
    assert any("Unexpected token 12606" in e for e in doc["explain"]["errors"])

"""``scan`` on planted launch files, a running process, hostile files; as a user runs it (subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from conftest import run_cli
from gptoss_doctor.scan import scan

COMPOSE = """\
x-common: &common
  restart: unless-stopped
services:
  vllm:
    <<: *common
    image: vllm/vllm-openai:v0.11.0
    command: --model openai/gpt-oss-20b --port 8000
    environment:
      - HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123
  other:
    image: vllm/vllm-openai:v0.11.0
    command: --model Qwen/Qwen3-8B
"""
AIRGAP_SCRIPT = """\
#!/bin/bash
# air-gapped node: no internet
export HF_HUB_OFFLINE=1
vllm serve /models/gpt-oss-120b \\
  --tensor-parallel-size 2 \\
  --enable-auto-tool-choice --tool-call-parser openai
"""
LITELLM = """\
model_list:
  - model_name: gpt-oss-120b
    litellm_params:
      model: groq/openai/gpt-oss-120b
      api_key: os.environ/GROQ_API_KEY
litellm_settings:
  drop_params: true
"""
K8S = """\
apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
        - name: sglang
          image: lmsysorg/sglang:latest
          command: ["python3", "-m", "sglang.launch_server"]
          args: ["--model-path", "openai/gpt-oss-20b", "--tool-call-parser", "hermes"]
---
kind: Service
"""
BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{n}: &{n} [{', '.join(['*' + p] * 9)}]\n" for p, n in zip("abcdef", "bcdefg"))


@pytest.fixture
def planted(tmp_path):
    (tmp_path / "docker-compose.yml").write_text(COMPOSE)
    (tmp_path / "serve.sh").write_text(AIRGAP_SCRIPT)
    (tmp_path / "proxy").mkdir()
    (tmp_path / "proxy" / "litellm.yaml").write_text(LITELLM)
    (tmp_path / "k8s.yaml").write_text(K8S)
    model = tmp_path / "models" / "gpt-oss-20b"
    model.mkdir(parents=True)
    (model / "config.json").write_text('{"model_type": "gpt_oss"}')
    (model / "generation_config.json").write_text('{"eos_token_id": [200002, 199999]}')
    return tmp_path


def _by_id(res):
    return {f.id: f for f in res.findings}


def test_each_planted_problem_is_reported_with_file_line_and_corrected_line(planted):
    res = scan([planted], host=False)
    f = _by_id(res)
    tool = f["vllm.tool_flags_missing"]
    assert tool.where == f"{planted / 'docker-compose.yml'}:7"
    assert tool.corrected.endswith("--enable-auto-tool-choice --tool-call-parser openai")
    assert any("vllm-project/vllm" in u for u in tool.references)
    vocab = f["harmony.vocab_offline"]
    assert vocab.where == f"{planted / 'serve.sh'}:3" and vocab.status == "fail"
    assert vocab.corrected == "export TIKTOKEN_ENCODINGS_BASE=/etc/encodings"
    drop = f["litellm.drop_params_gptoss"]
    assert drop.where == f"{planted / 'proxy' / 'litellm.yaml'}:7" and "reasoning_effort" in drop.detail
    assert f["sglang.wrong_tool_parser"].corrected.endswith("--tool-call-parser gpt-oss")
    stale = f["model.stale_generation_config"]
    assert stale.where.endswith("gpt-oss-20b/generation_config.json")
    assert stale.corrected == '"eos_token_id": [200002, 199999, 200012]'
    # the Qwen service is recognised as a launch but judged only for secrets
    assert [la.model for la in res.launches if la.engine == "vllm" and not la.gpt_oss] == ["Qwen/Qwen3-8B"]


def test_secrets_are_reported_by_name_and_place_never_by_value(planted):
    res = scan([planted], host=False)
    secret = next(f for f in res.findings if f.id == "secret.in_file")
    assert secret.where == f"{planted / 'docker-compose.yml'}:9" and "HF_TOKEN" in secret.title
    doc = json.dumps(res.to_json())
    assert "hf_abcdefghijklmnopqrstuvwxyz0123" not in doc
    r = run_cli("scan", "--no-host", str(planted))
    assert b"hf_abcdefghijklmnopqrstuvwxyz0123" not in r.stdout + r.stderr


LEAKY_SCRIPT = """\
#!/bin/sh
vllm serve openai/gpt-oss-20b --admin-api-key S3cretAdmin01 --client-secret=S3cretClient02 --max-num-batched-tokens 8192
docker run -e hf_token=S3cretLowerHf03 -e "Authorization=Bearer S3cretBearer04" vllm/vllm-openai \\
  --model openai/gpt-oss-20b --download-dir https://user:S3cretUrlPass05@mirror.example/models
"""
LEAKY_COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.11.0
    command: --model openai/gpt-oss-20b --admin-api-key=S3cretAdmin06 --tokenizer https://bob:S3cretUrlPass07@h.example/t
    environment:
      - hf_token=S3cretLowerHf08
"""


def test_secrets_under_any_flag_name_url_credentials_and_lowercase_variables_are_never_printed(tmp_path):
    """Any *-api-key / *-token / *-secret flag (space or = form), user:password@ in URLs, lowercase -e hf_token=…
    and -e "Authorization=Bearer …": never printed (human, JSON, Markdown), and the flags are reported by name."""
    (tmp_path / "serve.sh").write_text(LEAKY_SCRIPT)
    (tmp_path / "docker-compose.yml").write_text(LEAKY_COMPOSE)
    outputs = [run_cli("scan", "--no-host", *fmt, str(tmp_path)) for fmt in ((), ("-v",), ("--json",), ("--markdown",))]
    for r in outputs:
        assert b"S3cret" not in r.stdout + r.stderr, (r.stdout + r.stderr).decode()
    doc = json.loads(outputs[2].stdout)
    lines = " ".join(la["line_text"] for la in doc["launches"])
    assert "--admin-api-key <redacted>" in lines and "--admin-api-key=<redacted>" in lines
    assert "hf_token=<redacted>" in lines and "https://***@mirror.example/models" in lines
    assert "--max-num-batched-tokens 8192" in lines  # a flag that merely contains "token" keeps its value
    argv = [a for la in doc["launches"] for a in la["argv"]]
    assert "8192" in argv and "--tokenizer" in argv
    named = {f["title"] for f in doc["findings"] if f["id"] == "secret.in_command_line"}
    assert {"a secret is passed with --admin-api-key", "a secret is passed with --client-secret"} <= named


def test_a_correct_launch_is_clean(tmp_path):
    (tmp_path / "run.sh").write_text("vllm serve openai/gpt-oss-20b --enable-auto-tool-choice --tool-call-parser openai\n")
    res = scan([tmp_path], host=False)
    assert res.launches and not res.problems and res.exit_code == 0
    r = run_cli("scan", "--no-host", str(tmp_path))
    assert r.returncode == 0 and "nothing to fix" in r.stdout.decode()


def test_only_the_missing_vllm_flag_is_named(tmp_path):
    (tmp_path / "a.sh").write_text("vllm serve openai/gpt-oss-20b --tool-call-parser openai\n")
    (tmp_path / "b.sh").write_text("python -m vllm.entrypoints.openai.api_server --model openai/gpt-oss-20b "
                                   "--enable-auto-tool-choice\n")
    ids = sorted(f.id for f in scan([tmp_path], host=False).findings)
    assert ids == ["vllm.auto_tool_choice_missing", "vllm.tool_parser_missing"]


def test_a_running_vllm_like_process_is_found_with_its_environment(tmp_path):
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    env.pop("TIKTOKEN_ENCODINGS_BASE", None)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "vllm", "serve",
                             "openai/gpt-oss-20b", "--api-key", "sk-live-secret-123456"], env=env)
    try:
        time.sleep(0.2)
        res = scan([], processes=True, host=False)
        mine = [la for la in res.launches if la.where == f"pid {proc.pid}"]
        assert mine and mine[0].engine == "vllm" and mine[0].model == "openai/gpt-oss-20b"
        ids = {f.id for f in res.findings if f.where == f"pid {proc.pid}"}
        assert {"vllm.tool_flags_missing", "harmony.vocab_offline", "secret.in_command_line"} <= ids
        assert "sk-live-secret-123456" not in json.dumps(res.to_json())
        assert res.processes_read > 1
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("name,content,reason", [
    ("bomb.yaml", BOMB, "alias bomb"),
    ("big.sh", "#" * (2 << 20), "larger than"),
    ("bin.sh", "vllm serve \0\1\2 gpt-oss", "binary"),
    ("broken.yaml", "a: [unclosed\n", "invalid YAML"),
])
def test_hostile_files_are_skipped_with_one_line(tmp_path, name, content, reason):
    (tmp_path / name).write_text(content)
    t = time.monotonic()
    res = scan([tmp_path], host=False)
    assert time.monotonic() - t < 10
    assert [s for s in res.skipped if s.where.endswith(name) and reason in s.reason], res.skipped


def test_host_checks_without_gpu_or_docker_are_skipped_not_failed(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi, no docker
    res = scan([], processes=True, host=True)
    assert any(s.where == "gpu" and "nvidia-smi" in s.reason for s in res.skipped)
    assert "packages" in res.host and "model_copies" in res.host


def test_stale_copy_in_the_hf_cache_is_found(tmp_path, monkeypatch):
    snap = tmp_path / "hub" / "models--openai--gpt-oss-20b" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "generation_config.json").write_text('{"eos_token_id": [200002, 199999]}')
    (tmp_path / "hub" / "models--openai--gpt-oss-20b" / "refs").mkdir()
    (tmp_path / "hub" / "models--openai--gpt-oss-20b" / "refs" / "main").write_text("abc123")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    res = scan([tmp_path / "nothing-here"], host=True)
    assert any(f.id == "model.stale_generation_config" and "abc123" in f.where for f in res.findings)
    assert res.host["model_copies"] == [{"repo": "openai/gpt-oss-20b", "snapshot": str(snap)}]


def test_cli_json_markdown_and_usage(planted):
    r = run_cli("scan", "--json", "--no-host", str(planted))
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and doc["command"] == "scan" and doc["ok"] is False
    assert doc["summary"]["fail"] >= 3
    md = run_cli("scan", "--markdown", "--no-host", str(planted)).stdout.decode()
    assert md.startswith("## gptoss-doctor scan") and "<img" not in md
    bad = run_cli("scan", "--json", str(planted / "nope"))
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"]["kind"] == "usage"


def test_markdown_escapes_what_files_say(tmp_path):
    (tmp_path / "x.sh").write_text('vllm serve "openai/gpt-oss-20b" --tool-call-parser "<img src=x onerror=alert(1)>"\n')
    md = run_cli("scan", "--markdown", "--no-host", str(tmp_path)).stdout.decode()
    assert "<img" not in md and "&lt;img" in md

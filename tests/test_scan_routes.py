"""scan: proxy model routes judged against the knowledge base (issue 18 item 7), and one finding per cause with
corrected lines that agree (item 8), on planted files as a user runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from conftest import run_cli
from gptoss_doctor.scan import scan

# the route of the hindsight #2222 report: gpt-oss on Vertex AI through LiteLLM
HINDSIGHT = """\
model_list:
  - model_name: gpt-oss-120b
    litellm_params:
      model: vertex_ai/openai/gpt-oss-120b-maas
      vertex_project: my-project
      vertex_location: us-central1
  - model_name: qwen-on-vertex
    litellm_params:
      model: vertex_ai/qwen/qwen3-235b-a22b-instruct-2507-maas
"""


def test_the_hindsight_route_is_flagged_with_file_line_and_the_proxy_fix(tmp_path):
    (tmp_path / "litellm.yaml").write_text(HINDSIGHT)
    res = scan([tmp_path], host=False)
    routes = [f for f in res.findings if f.id == "litellm.route_known_issue"]
    assert len(routes) == 1, res.findings
    f = routes[0]
    assert f.where == f"{tmp_path / 'litellm.yaml'}:4" and f.status == "warn"
    assert "vertex_ai/openai/gpt-oss-120b-maas" in f.title
    from gptoss_doctor import kb

    assert f.kb == [kb.get("raw-harmony-tool-call-in-content").id]  # the entry (merged ids resolve to it)
    assert "https://github.com/vectorize-io/hindsight/issues/2222" in f.references
    assert f.fix.startswith("Proxy:")  # the entry's fix for the proxy layer, not an engine flag
    assert "--tool-call-parser" not in f.fix
    r = run_cli("scan", "--no-host", str(tmp_path), env={"COLUMNS": "80"})
    out = r.stdout.decode()
    assert r.returncode == 1 and "litellm.yaml:4" in out
    # paths are never cut (a long temporary folder name is one word); every other line fits 80 columns
    assert max(len(line) for line in out.splitlines() if str(tmp_path) not in line) <= 80


@pytest.mark.parametrize("route,entry", [
    ("groq/openai/gpt-oss-120b", "litellm-groq-stream-tool-error-code-not-int"),
    ("ollama_chat/gpt-oss:20b", "litellm-ollama-native-api-tools"),
    ("ollama/gpt-oss:20b", "litellm-ollama-generate-thinking-chunk-unparsed"),
    ("bedrock/openai.gpt-oss-120b-1:0", "litellm-bedrock-reasoning-effort-thinking"),
])
def test_other_routes_named_by_entries(tmp_path, route, entry):
    (tmp_path / "config.yaml").write_text(f"model_list:\n  - model_name: m\n    litellm_params:\n      model: {route}\n")
    from gptoss_doctor import kb

    got = [f.kb for f in scan([tmp_path], host=False).findings if f.id == "litellm.route_known_issue"]
    assert got == [[kb.get(entry).id]]


def test_a_route_no_entry_names_gets_no_route_finding(tmp_path):
    (tmp_path / "config.yaml").write_text(
        "model_list:\n  - model_name: m\n    litellm_params:\n      model: hosted_vllm/openai/gpt-oss-20b\n"
        "      api_base: http://gpu-box:8000/v1\n")
    assert not [f for f in scan([tmp_path], host=False).findings if f.id == "litellm.route_known_issue"]


def test_a_wrong_parser_without_auto_tool_choice_gets_one_corrected_line(tmp_path):
    (tmp_path / "run.sh").write_text("vllm serve openai/gpt-oss-20b --tool-call-parser hermes\n")
    res = scan([tmp_path], host=False)
    tools = [f for f in res.findings if f.id.startswith("vllm.")]
    assert [f.id for f in tools] == ["vllm.wrong_tool_parser"]
    fixed = tools[0].corrected
    assert "hermes" not in fixed and fixed.endswith("--tool-call-parser openai --enable-auto-tool-choice")
    assert "--enable-auto-tool-choice" in tools[0].fix


def test_the_parser_value_is_replaced_not_every_word_like_it(tmp_path):
    (tmp_path / "run.sh").write_text("vllm serve /models/hermes-gpt-oss-20b --enable-auto-tool-choice "
                                     "--tool-call-parser=hermes\n")
    f = next(f for f in scan([tmp_path], host=False).findings if f.id == "vllm.wrong_tool_parser")
    assert f.corrected == ("vllm serve /models/hermes-gpt-oss-20b --enable-auto-tool-choice "
                           "--tool-call-parser=openai")


def test_a_key_exported_once_is_reported_once(tmp_path):
    (tmp_path / "serve.sh").write_text(
        "export HF_TOKEN=hf_abcdefghijklmnopqrstuvwx0123\n"
        "vllm serve openai/gpt-oss-20b --port 8000 --enable-auto-tool-choice --tool-call-parser openai\n"
        "vllm serve openai/gpt-oss-120b --port 8001 --enable-auto-tool-choice --tool-call-parser openai\n"
        "vllm serve openai/gpt-oss-120b --port 8002 --enable-auto-tool-choice --tool-call-parser openai\n")
    res = scan([tmp_path], host=False)
    assert len(res.launches) == 3
    assert [f.where for f in res.findings if f.id == "secret.in_file"] == [f"{tmp_path / 'serve.sh'}:1"]


def test_a_bare_docker_env_flag_does_not_depend_on_the_scanner_environment(tmp_path):
    (tmp_path / "run.sh").write_text(
        "docker run --gpus all -e HF_TOKEN vllm/vllm-openai:v0.11.0 --model openai/gpt-oss-20b "
        "--enable-auto-tool-choice --tool-call-parser openai\n")
    with_token = run_cli("scan", "--json", "--no-host", str(tmp_path),
                         env={"HF_TOKEN": "hf_scanners_own_token_0123456789"})
    without = run_cli("scan", "--json", "--no-host", str(tmp_path),
                      base_env={k: v for k, v in os.environ.items() if k != "HF_TOKEN"})
    a, b = json.loads(with_token.stdout), json.loads(without.stdout)
    assert a["findings"] == b["findings"] == []
    assert with_token.returncode == without.returncode == 0
    assert b"hf_scanners_own_token" not in with_token.stdout + with_token.stderr


COMPOSE_REPEATS = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.11.0
    command: vllm serve openai/gpt-oss-20b --port 8000
"""
K8S_COMMAND = """\
apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          command: ["vllm", "serve"]
          args: ["openai/gpt-oss-20b", "--enable-auto-tool-choice", "--tool-call-parser", "openai"]
"""


def test_compose_command_repeating_the_image_entrypoint_is_named_and_dropped(tmp_path):
    (tmp_path / "compose.yaml").write_text(COMPOSE_REPEATS)
    res = scan([tmp_path], host=False)
    f = {x.id: x for x in res.findings}
    rep = f["image.command_repeats_entrypoint"]
    assert rep.status == "fail" and rep.where == f"{tmp_path / 'compose.yaml'}:4"
    assert rep.corrected == "command: openai/gpt-oss-20b --port 8000"
    # every corrected line starts from the repaired command, never from one that keeps `vllm serve`
    assert f["vllm.tool_flags_missing"].corrected == (
        "command: openai/gpt-oss-20b --port 8000 --enable-auto-tool-choice --tool-call-parser openai")


def test_docker_run_repeating_the_entrypoint_is_named(tmp_path):
    (tmp_path / "run.sh").write_text("docker run --gpus all vllm/vllm-openai:latest vllm serve openai/gpt-oss-20b "
                                     "--enable-auto-tool-choice --tool-call-parser openai\n")
    ids = [x.id for x in scan([tmp_path], host=False).findings]
    assert ids == ["image.command_repeats_entrypoint"]


def test_kubernetes_command_replaces_the_entrypoint_so_it_is_right(tmp_path):
    (tmp_path / "deploy.yaml").write_text(K8S_COMMAND)
    res = scan([tmp_path], host=False)
    assert res.launches and res.findings == []


@pytest.mark.skipif(not shutil.which("setpriv"), reason="setpriv (util-linux) is needed to drop root's file access")
def test_an_unreadable_sub_folder_gets_a_skipped_line(tmp_path):
    (tmp_path / "ok.sh").write_text("vllm serve openai/gpt-oss-20b --enable-auto-tool-choice --tool-call-parser openai\n")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "run.sh").write_text("vllm serve openai/gpt-oss-20b\n")
    locked.chmod(0)
    try:
        cmd = ["python", "-m", "gptoss_doctor", "scan", "--json", "--no-host", str(tmp_path)]
        if os.geteuid() == 0:  # root reads everything: take away the capabilities that let it
            cmd = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *cmd]
        import sys
        cmd[cmd.index("python")] = sys.executable
        env = dict(os.environ, PYTHONPATH=str(__import__("conftest").ROOT))
        r = subprocess.run(cmd, capture_output=True, env=env, timeout=60)
        doc = json.loads(r.stdout)
        assert [s for s in doc["skipped"] if s["where"] == str(locked) and "Permission denied" in s["reason"]], doc
    finally:
        locked.chmod(0o755)


def test_a_symlinked_launch_file_is_skipped_with_a_line(tmp_path):
    real = tmp_path / "elsewhere"
    real.mkdir()
    (real / "run.sh").write_text("vllm serve openai/gpt-oss-20b\n")
    scanned = tmp_path / "scanned"
    scanned.mkdir()
    (scanned / "run.sh").symlink_to(real / "run.sh")
    res = scan([scanned], host=False)
    assert not res.launches
    assert [s for s in res.skipped if s.where == str(scanned / "run.sh") and "symbolic link" in s.reason]

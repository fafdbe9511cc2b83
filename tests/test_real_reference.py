"""``check`` against the real OpenAI reference Responses API server: PyPI gpt-oss 0.0.9,
``python -m gpt_oss.responses_api.serve --inference-backend transformers`` on CPU, serving tiny gpt-oss models built
at test time (../shared/real/build_tiny_gptoss.py, then make_scripted_gptoss.py for a fixed reply), launched the way
../shared/real/gpt-oss-reference-0.0.9/README.md records (serve.py has no --host: it binds 127.0.0.1).

Set up with ``eval "$(bash tests/real/setup_reference.sh DIR)"`` (exports GPTOSS_DOCTOR_REFERENCE_PY and the chat
template the model scripts need, GPTOSS_DOCTOR_REFERENCE_TEMPLATE); .ci/run does.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.realservers import (
    SHARED_REAL, TOOL_REPLY, _build, cache_dir, findings, flag_fixes, free_port, running, vocab_file,
)

PY = os.environ.get("GPTOSS_DOCTOR_REFERENCE_PY", "")
TEMPLATE = os.environ.get("GPTOSS_DOCTOR_REFERENCE_TEMPLATE", "")
pytestmark = pytest.mark.skipif(not (PY and TEMPLATE), reason="GPTOSS_DOCTOR_REFERENCE_PY / "
                                "GPTOSS_DOCTOR_REFERENCE_TEMPLATE are not set (tests/real/setup_reference.sh)")

PYTHON_REPLY = "<|channel|>analysis to=python<|message|>print(7*6)<|call|>"
WHY = "the reference server serves only /v1/responses"


@pytest.fixture(scope="module")
def models() -> dict[str, Path]:
    """A tiny random gpt-oss and scripted copies: "tool" (a get_weather call) and "python" (a python tool call)."""
    build, script = SHARED_REAL / "build_tiny_gptoss.py", SHARED_REAL / "make_scripted_gptoss.py"
    base = _build(PY, [str(build), "--vocab", str(vocab_file()), "--chat-template", TEMPLATE, "--out"],
                  cache_dir("gpt-oss-tiny-ref", build, Path(TEMPLATE), PY))
    out = {}
    for name, reply in (("tool", TOOL_REPLY), ("python", PYTHON_REPLY)):
        out[name] = _build(PY, [str(script), "--src", str(base), "--reply", reply, "--out"],
                           cache_dir(f"gpt-oss-tiny-ref-{name}", script, base.name, reply))
    return out


def serve(tmp_path: Path, model: Path):
    port = free_port()
    env = dict(os.environ, TIKTOKEN_ENCODINGS_BASE=str(vocab_file().parent), HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1")
    env.pop("PYTHON_EXECUTION_BACKEND", None)  # the default: docker
    return running([PY, "-m", "gpt_oss.responses_api.serve", "--checkpoint", str(model), "--port", str(port),
                    "--inference-backend", "transformers"], name="gpt_oss.responses_api.serve",
                   ready_path="/openapi.json", port=port, log=tmp_path / "server.log", env=env, cwd=tmp_path)


def check(cli, url: str) -> tuple[int, dict]:
    res = cli("check", "--deep", "--json", "--timeout", "120", url)
    return res.code, json.loads(res.stdout)


def test_reference_server_with_a_tool_model(tmp_path, cli, models):
    with serve(tmp_path, models["tool"]) as url:
        code, doc = check(cli, url)
    f = findings(doc)
    t = doc["targets"][0]
    assert t["engine"]["name"] == "gptoss-reference", t["engine"]
    assert "reach.not_llm" not in f
    assert [m["id"] for m in t["models"]] == ["gpt-oss-120b"]
    for fid in ("probe.chat", "probe.tools.call", "tokenizer.special_tokens", "health", "models.listed"):
        assert f[fid]["status"] == "skip" and WHY in f[fid]["detail"], (fid, f[fid])
    # the scripted model calls get_weather whatever it is asked: the function call probe passes, the plain prompt
    # gets a function call instead of text (the model's doing, said so), and no fix names a server flag
    assert f["probe.responses.function_call"]["status"] == "pass", f["probe.responses.function_call"]
    assert "output items: function_call" in f["probe.responses"]["detail"], f["probe.responses"]
    assert not flag_fixes(doc), flag_fixes(doc)
    assert "--checkpoint" in f["probe.responses"]["fix"]
    assert f["probe.responses.builtin_tools"]["status"] == "skip"
    assert "did not call the python tool" in f["probe.responses.builtin_tools"]["detail"]
    assert code == 1, doc


def test_python_tool_without_a_docker_daemon(tmp_path, cli, models):
    if Path("/var/run/docker.sock").exists():
        pytest.skip("a Docker socket exists here: the default python backend may work")
    with serve(tmp_path, models["python"]) as url:
        code, doc = check(cli, url)
        log = (tmp_path / "server.log").read_text(errors="replace")
    f = findings(doc)
    b = f["probe.responses.builtin_tools"]
    assert b["status"] == "fail", b
    assert "HTTP 500" in b["detail"] and "PYTHON_EXECUTION_BACKEND" in b["fix"]
    assert "docker" in log  # the server's own traceback: docker.from_env() found no daemon
    assert code == 1

"""``check`` against a real LiteLLM proxy (the PyPI release recorded in ../shared/real/litellm-1.109.1), in front of
the vLLM emulator. The proxy runs from its own virtual environment (its dependencies are not the doctor's):
.ci/run creates it and sets GPTOSS_DOCTOR_LITELLM to its ``litellm`` executable; locally,

    python -m venv /tmp/litellm && /tmp/litellm/bin/pip install 'litellm[proxy]==1.109.1'
    GPTOSS_DOCTOR_LITELLM=/tmp/litellm/bin/litellm python -m pytest tests/test_real_litellm.py

Without the variable the tests are skipped; with it set, a proxy that does not start is a failure."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import Iterator, Optional

import pytest

from tests.emulators import serve
from tests.realservers import findings, free_port, running

LITELLM = os.environ.get("GPTOSS_DOCTOR_LITELLM", "")
RECORDED_VERSION = "1.109.1"
pytestmark = pytest.mark.skipif(not LITELLM, reason="GPTOSS_DOCTOR_LITELLM is not set (see this module's docstring)")


@contextlib.contextmanager
def proxy(tmp_path: Path, backend_url: str, master_key: Optional[str] = None,
          model_name: str = "openai/gpt-oss-20b") -> Iterator[str]:
    """A real LiteLLM proxy on 127.0.0.1 routing gpt-oss-20b to ``backend_url`` (config as recorded)."""
    cfg = tmp_path / "litellm.yaml"
    text = ("model_list:\n  - model_name: gpt-oss-20b\n    litellm_params:\n"
            f"      model: openai/{model_name}\n"
            f"      api_base: {backend_url}/v1\n      api_key: \"sk-none\"\n")
    if master_key:
        text += f"general_settings:\n  master_key: {master_key}\n"
    cfg.write_text(text, encoding="utf-8")
    port = free_port()
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_TELEMETRY="False", NO_PROXY="*",
               HOME=str(tmp_path))
    env.pop("LITELLM_MASTER_KEY", None)
    if not master_key:  # 1.109.1 refuses to start without a master key unless told this is local development
        env["LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY"] = "true"
    with running([LITELLM, "--config", str(cfg), "--host", "127.0.0.1", "--port", str(port)], name="the LiteLLM proxy",
                 ready_path="/health/liveliness", port=port, log=tmp_path / "proxy.log", env=env, cwd=tmp_path,
                 timeout=120) as url:
        yield url


def test_real_proxy_is_identified_with_its_version_and_backend(tmp_path, cli):
    with serve("vllm", version="0.26.0") as backend, proxy(tmp_path, backend.url) as url:
        r = cli("check", "--json", "--timeout", "20", url)
    doc = r.json()
    t = doc["targets"][0]
    assert t["engine"]["name"] == "litellm", t["engine"]
    assert t["engine"]["version"] == RECORDED_VERSION
    assert any(backend.url in e for e in t["engine"]["evidence"]), t["engine"]["evidence"]
    f = findings(doc)
    assert f["health"]["status"] == "pass" and f["probe.chat"]["status"] == "pass", f["probe.chat"]
    assert not [c for c in f.values() if c["status"] == "error"], [c for c in f.values() if c["status"] == "error"]


def test_a_stale_backend_fails_through_the_real_proxy_with_the_backend_error(tmp_path, cli):
    with serve("vllm", version="0.26.0", faults=("stale_eos",)) as backend, proxy(tmp_path, backend.url) as url:
        r = cli("check", "--json", "--timeout", "20", url)
    assert r.code == 1
    f = findings(r.json())
    assert f["probe.harmony_error"]["status"] == "fail", f["probe.harmony_error"]
    assert "stale-generation-config-call-token" in f["probe.harmony_error"]["kb"]
    # the fix is the backend's: its route and URL from the proxy's model info, and the check to run next
    for fid in ("probe.harmony_error", "eos.call_token", "probe.tools.call"):
        fix = f[fid]["fix"]
        assert f"-> openai/openai/gpt-oss-20b at {backend.url}/v1" in fix and "fix-config" in fix, (fid, fix)
        assert f"gptoss-doctor check {backend.url}" in fix, (fid, fix)


def test_a_stale_vllm_0_32_backend_is_named_from_behaviour_through_the_real_proxy(tmp_path, cli):
    # vLLM 0.32 raises no HarmonyError for a stale config: the call ends with stop_reason null, which the proxy
    # passes on in provider_specific_fields
    with serve("vllm", version="0.32.0", faults=("stale_eos",)) as backend, proxy(tmp_path, backend.url) as url:
        r = cli("check", "--json", "--timeout", "20", url)
    assert r.code == 1
    eos = findings(r.json())["eos.call_token"]
    assert eos["status"] == "fail" and "stale generation_config.json" in eos["detail"], eos
    assert "stop_reason = null" in " ".join(eos["evidence"]), eos["evidence"]
    assert f"at {backend.url}/v1" in eos["fix"] and f"gptoss-doctor check {backend.url}" in eos["fix"], eos["fix"]


def test_the_real_proxy_master_key_is_required_and_accepted(tmp_path, cli):
    key = "sk-" + secrets.token_hex(32)  # the recorded proxy's key shape (a weak key is refused at start)
    with serve("vllm", version="0.26.0") as backend, proxy(tmp_path, backend.url, master_key=key) as url:
        denied = cli("check", "--json", "--quick", "--timeout", "20", url)
        allowed = cli("check", "--json", "--quick", "--timeout", "20", "--api-key", key, url)
    assert denied.code == 4 and findings(denied.json())["auth.required"]["status"] == "fail"
    assert allowed.code in (0, 1) and findings(allowed.json())["auth.required"]["status"] == "pass"
    # --quick sends no completion (no x-litellm-version header): the version comes from the public /openapi.json,
    # with and without the key
    for doc in (denied.json(), allowed.json()):
        assert doc["targets"][0]["engine"]["version"] == RECORDED_VERSION, doc["targets"][0]["engine"]
    assert key not in denied.stdout + allowed.stdout + denied.stderr + allowed.stderr


TF_PY = os.environ.get("GPTOSS_DOCTOR_TRANSFORMERS_PY", "")
TF_TEMPLATE = os.environ.get("GPTOSS_DOCTOR_GPTOSS_TEMPLATE", "")


@pytest.mark.skipif(not (TF_PY and TF_TEMPLATE), reason="no real transformers serve here (see test_real_transformers)")
def test_a_real_backend_without_a_harmony_parser_is_named_behind_the_real_proxy(tmp_path, cli):
    """The proxy in front of a real engine: transformers serve with the scripted tool-call model returns the call as
    text; LiteLLM passes it on. The fix names the backend to check, never a flag for the proxy."""
    from tests.realservers import flag_fixes, tiny_models

    model = tiny_models(TF_PY, TF_TEMPLATE)["tool"]
    port = free_port()
    env = dict(os.environ, HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1", NO_PROXY="*")
    exe = str(Path(TF_PY).with_name("transformers"))
    with running([exe, "serve", str(model), "--host", "127.0.0.1", "--port", str(port)], name="transformers serve",
                 ready_path="/health", port=port, log=tmp_path / "serve.log", env=env, timeout=240) as backend, \
            proxy(tmp_path, backend, model_name=str(model)) as url:
        r = cli("check", "--json", "--timeout", "60", url)
    doc = r.json()
    f = findings(doc)
    assert r.code == 1
    assert doc["targets"][0]["engine"]["name"] == "litellm"
    for fid in ("probe.harmony_leak", "probe.tools.call"):
        assert f[fid]["status"] == "fail", f[fid]
        assert f"gptoss-doctor check {backend}" in f[fid]["fix"], f[fid]["fix"]
    assert flag_fixes(doc) == [], flag_fixes(doc)

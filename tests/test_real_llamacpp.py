"""``check`` against a real llama-server built from the llama.cpp source (the build recorded in
../shared/real/llama.cpp-b1-0c1e570), serving the tiny gpt-oss of ../shared/real converted to GGUF with that source
tree's convert_hf_to_gguf.py: random weights (no valid Harmony: the PEG parser answers HTTP 500), and a scripted copy
that emits a valid tool call (parsed when tools are offered, left as text when they are not), run with the default
settings, with --no-jinja and with --api-key.

Building llama-server takes 15-30 minutes on 2 cores, so CI does not do it by default; the tests run where it is
built and are skipped, saying so, where it is not:

    eval "$(bash tests/real/setup_transformers.sh /tmp/tserve)"     # builds and converts the tiny models
    eval "$(bash tests/real/setup_llama_server.sh /tmp/llama)"      # GPTOSS_DOCTOR_LLAMA_SERVER, _LLAMA_CPP_SRC
    python -m pytest tests/test_real_llamacpp.py

(``GPTOSS_DOCTOR_BUILD_LLAMA=1 bash .ci/run`` builds it in CI too.)"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from tests.realservers import findings, flag_fixes, free_port, gguf, running, tiny_models

SERVER = os.environ.get("GPTOSS_DOCTOR_LLAMA_SERVER", "")
SRC = os.environ.get("GPTOSS_DOCTOR_LLAMA_CPP_SRC", "")
PY = os.environ.get("GPTOSS_DOCTOR_TRANSFORMERS_PY", "")
TEMPLATE = os.environ.get("GPTOSS_DOCTOR_GPTOSS_TEMPLATE", "")
pytestmark = pytest.mark.skipif(
    not (SERVER and SRC and PY and TEMPLATE),
    reason="llama-server is not built here: GPTOSS_DOCTOR_LLAMA_SERVER / GPTOSS_DOCTOR_LLAMA_CPP_SRC (and the "
           "transformers variables) are not set (see this module's docstring)")
RECORDED_BUILD = "b1-0c1e570"


@pytest.fixture(scope="module")
def ggufs() -> dict[str, Path]:
    models = tiny_models(PY, TEMPLATE)
    return {name: gguf(PY, SRC, models[name]) for name in ("random", "tool")}


def serve(tmp_path: Path, model: Path, *flags: str):
    port = free_port()
    return running([SERVER, "-m", str(model), "--host", "127.0.0.1", "--port", str(port), "-c", "4096", *flags],
                   name="llama-server", ready_path="/health", port=port, log=tmp_path / "llama-server.log",
                   env=dict(os.environ, NO_PROXY="*"), timeout=120)


def test_scripted_tool_call_is_parsed_and_the_unoffered_call_is_the_models(tmp_path, cli, ggufs):
    with serve(tmp_path, ggufs["tool"]) as url:
        r = cli("check", "--json", "--timeout", "30", url)
    doc = r.json()
    f = findings(doc)
    assert doc["targets"][0]["engine"]["name"] == "llama.cpp"
    assert doc["targets"][0]["engine"]["version"] == RECORDED_BUILD, doc["targets"][0]["engine"]
    assert f["probe.tools.call"]["status"] == "pass" and f["probe.tools.stream"]["status"] == "pass"
    # the plain chat offers no tools, so llama.cpp leaves the scripted call as text: the model's doing, no flag
    assert f["probe.harmony_leak"]["status"] == "warn", f["probe.harmony_leak"]
    assert "nothing to fix on the server" in f["probe.harmony_leak"]["fix"]
    assert flag_fixes(doc) == [], flag_fixes(doc)
    assert r.code == 0, [(c["id"], c["status"]) for c in doc["targets"][0]["checks"] if c["status"] == "fail"]


def test_random_weights_fail_the_peg_parser_and_the_weights_are_named(tmp_path, cli, ggufs):
    with serve(tmp_path, ggufs["random"]) as url:
        r = cli("check", "--json", "--timeout", "30", url)
    doc = r.json()
    f = findings(doc)
    assert r.code == 1
    assert f["health"]["status"] == "fail" and "peg-native" in f["health"]["detail"], f["health"]
    assert "llamacpp-peg-native-format-500" in f["health"]["kb"]
    assert "weights" in f["health"]["fix"]
    assert f["probe.structured_output"]["status"] == "skip", f["probe.structured_output"]
    assert flag_fixes(doc) == [], flag_fixes(doc)


def test_no_jinja_names_the_flag_for_tools_and_the_leak(tmp_path, cli, ggufs):
    with serve(tmp_path, ggufs["tool"], "--no-jinja") as url:
        r = cli("check", "--json", "--timeout", "30", url)
    f = findings(r.json())
    assert r.code == 1
    assert f["probe.tools.call"]["status"] == "fail" and "--jinja" in f["probe.tools.call"]["detail"]
    assert "--no-jinja" in f["probe.tools.call"]["fix"]
    assert "the same refusal" in f["probe.tools.stream"]["detail"]
    assert f["probe.tools.stream"]["fix"] == f["probe.tools.call"]["fix"]
    assert f["probe.harmony_leak"]["status"] == "fail" and "--no-jinja" in f["probe.harmony_leak"]["fix"]


def test_api_key_is_required_and_never_printed(tmp_path, cli, ggufs):
    key = secrets.token_hex(16)
    with serve(tmp_path, ggufs["tool"], "--api-key", key) as url:
        denied = cli("check", "--json", "--quick", "--timeout", "30", url)
        allowed = cli("check", "--json", "--quick", "--timeout", "30", "--api-key", key, url)
    assert denied.code == 4 and findings(denied.json())["auth.required"]["status"] == "fail"
    assert allowed.code in (0, 1) and findings(allowed.json())["auth.required"]["status"] == "pass"
    assert key not in denied.stdout + denied.stderr + allowed.stdout + allowed.stderr

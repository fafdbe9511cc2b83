"""``check`` against a real ``transformers serve`` (5.23.0, the release recorded in ../shared/real) serving a tiny
gpt-oss built at test time with ../shared/real/build_tiny_gptoss.py, and scripted copies of it whose greedy output
is a chosen Harmony reply (make_scripted_gptoss.py), so each fault is deterministic.

transformers serve decodes gpt-oss output with no Harmony parser: a tool call arrives as
``commentary to=functions.get_weather json{"city":"Paris"}`` in ``content``, a final answer as ``finalHello``. The
doctor must say so with the fix for this runtime (serve gpt-oss with an engine that parses Harmony), name the
missing Hugging Face cache folder behind the 500 from /v1/models, recognise broken weights as the model's fault,
and advise no server flag anywhere.

It needs a Python with torch (CPU), ``transformers[serving]``, tiktoken and safetensors, and the gpt-oss chat
template; ``tests/real/setup_transformers.sh`` makes both and prints the two variables to set:

    eval "$(bash tests/real/setup_transformers.sh /tmp/tserve)"
    python -m pytest tests/test_real_transformers.py

.ci/run does this. Without the variables the tests are skipped; with them, a model that cannot be built or a server
that does not start is a failure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.realservers import findings, flag_fixes, free_port, running, tiny_models

PY = os.environ.get("GPTOSS_DOCTOR_TRANSFORMERS_PY", "")
TEMPLATE = os.environ.get("GPTOSS_DOCTOR_GPTOSS_TEMPLATE", "")
pytestmark = pytest.mark.skipif(not (PY and TEMPLATE), reason="GPTOSS_DOCTOR_TRANSFORMERS_PY / "
                                "GPTOSS_DOCTOR_GPTOSS_TEMPLATE are not set (see this module's docstring)")


@pytest.fixture(scope="session")
def models() -> dict[str, Path]:
    return tiny_models(PY, TEMPLATE)


def serve(tmp_path: Path, model: Path, hf_cache: bool):
    """transformers serve pinned to ``model``, offline; with or without a Hugging Face cache folder."""
    home = tmp_path / "hf"
    if hf_cache:
        (home / "hub").mkdir(parents=True)
    port = free_port()
    env = dict(os.environ, HF_HOME=str(home), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", NO_PROXY="*",
               HF_HUB_DISABLE_TELEMETRY="1")
    env.pop("HF_HUB_CACHE", None)
    exe = str(Path(PY).with_name("transformers"))
    return running([exe, "serve", str(model), "--host", "127.0.0.1", "--port", str(port)], name="transformers serve",
                   ready_path="/health", port=port, log=tmp_path / "serve.log", env=env, timeout=240)


def _check(cli, url: str):
    r = cli("check", "--json", "--timeout", "60", url)
    doc = r.json()
    assert doc["targets"][0]["engine"]["name"] == "transformers", doc["targets"][0]["engine"]
    return r, doc, findings(doc)


def test_tool_call_as_text_and_no_cache_folder(tmp_path, cli, models):
    with serve(tmp_path, models["tool"], hf_cache=False) as url:
        r, doc, f = _check(cli, url)
    assert r.code == 1
    # /v1/models answers 500 without the cache folder; the pinned model is found from the 400 that names it
    assert f["models.listed"]["status"] == "warn" and "cache" in f["models.listed"]["fix"], f["models.listed"]
    assert f["models.gpt_oss"]["status"] == "pass", f["models.gpt_oss"]
    assert f["probe.harmony_leak"]["status"] == "fail", f["probe.harmony_leak"]
    assert f["probe.tools.call"]["status"] == "fail" and "Harmony parser" in f["probe.tools.call"]["fix"]
    assert f["probe.tools.no_parser"]["status"] == "fail"
    assert "unparsed" in f["probe.structured_output"]["detail"], f["probe.structured_output"]
    # no [DONE] after the last chunk is how this server ends streams, not buffering
    assert f["probe.stream.framing"]["status"] == "warn", f["probe.stream.framing"]
    assert "buffer" not in f["probe.stream.framing"].get("fix", "")
    assert flag_fixes(doc) == []
    assert not [c for c in f.values() if c["status"] == "error"]


def test_flattened_final_answer_with_cache_folder(tmp_path, cli, models):
    with serve(tmp_path, models["hello"], hf_cache=True) as url:
        r, doc, f = _check(cli, url)
    assert r.code == 1
    assert f["models.listed"]["status"] == "pass", f["models.listed"]
    assert f["probe.chat"]["status"] == "pass" and "finalHello" in f["probe.chat"]["detail"]
    assert f["probe.flattened_channels"]["status"] == "fail", f["probe.flattened_channels"]
    assert "Harmony parser" in f["probe.flattened_channels"]["fix"]
    assert "flattened Harmony" in f["probe.structured_output"]["detail"], f["probe.structured_output"]
    assert flag_fixes(doc) == []


def test_random_weights_are_the_models_fault(tmp_path, cli, models):
    with serve(tmp_path, models["random"], hf_cache=True) as url:
        r, doc, f = _check(cli, url)
    assert r.code == 1
    assert f["probe.chat"]["status"] == "fail" and "not language" in f["probe.chat"]["detail"], f["probe.chat"]
    assert "checkpoint" in f["probe.chat"]["fix"]
    assert f["probe.tools.no_parser"]["status"] == "skip"
    assert f["probe.structured_output"]["status"] == "skip"
    assert flag_fixes(doc) == []

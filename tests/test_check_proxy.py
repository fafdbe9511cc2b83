"""``check`` behind a LiteLLM proxy (the emulated proxy here; the real 1.109.1 proxy in tests/test_real_litellm.py):
a fault of the backend's engine gets a fix that names the backend (its model route and URL from the proxy's model
info) and the next step, ``gptoss-doctor check BACKEND_URL``, never "upgrade the engine" for the proxy."""

from __future__ import annotations

import pytest

from tests.emulators import serve
from tests.emulators.litellm import BACKEND_BASE
from tests.test_check import by_id, run_check

ROUTE = "gpt-oss-20b -> hosted_vllm/openai/gpt-oss-20b at " + BACKEND_BASE
NEXT = "gptoss-doctor check " + BACKEND_BASE.removesuffix("/v1")


@pytest.mark.parametrize("fault,fids", [
    ("dup_stream_args", ("probe.tools.stream_duplicated", "probe.tools.invalid_json", "probe.tools.stream")),
    ("tool_name_leak", ("probe.tools.name_leak",)),
])
def test_a_backend_engine_bug_names_the_backend_not_an_upgrade_of_the_proxy(fault, fids):
    with serve("litellm", version="1.109.1", faults=(fault,)) as srv:
        r = run_check(srv.url)
    f = by_id(r)
    for fid in fids:
        assert f[fid].status == "fail", (fid, f[fid].detail)
        assert ROUTE in f[fid].fix and NEXT in f[fid].fix, (fid, f[fid].fix)
    upgrades = [(c.id, c.fix) for c in r.checks if c.status in ("fail", "warn") and "upgrade the engine" in c.fix]
    assert not upgrades, upgrades


def test_a_stale_backend_behind_the_proxy_is_fixed_on_the_backend():
    with serve("litellm", version="1.109.1", faults=("stale_eos",)) as srv:
        r = run_check(srv.url)
    f = by_id(r)
    for fid in ("eos.call_token", "probe.harmony_error", "probe.tools.call"):
        assert f[fid].status == "fail", (fid, f[fid].detail)
        assert ROUTE in f[fid].fix and "fix-config" in f[fid].fix and NEXT in f[fid].fix, (fid, f[fid].fix)


def test_responses_faults_behind_the_proxy_name_the_backend_and_the_proxy_bridge():
    with serve("litellm", version="1.109.1", faults=("responses_tool_output_lost",)) as srv:
        r = run_check(srv.url, deep=True)
    fix = by_id(r)["probe.responses.tool_output"].fix
    assert ROUTE in fix and NEXT in fix and "upgrade LiteLLM" in fix, fix

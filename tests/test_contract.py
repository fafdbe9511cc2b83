"""The CLI's contract: JSON documents carry ok / error, bad values are usage errors that say what exists,
negative token IDs are read as IDs, help shows meaningful metavars and whole summaries."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT, run_cli


def test_decode_failure_has_an_error_object():
    r = run_cli("decode", "--json", "-5", "200006")
    doc = json.loads(r.stdout)
    assert r.returncode == 2 and doc["ok"] is False
    assert doc["error"]["kind"] == "usage" and "-5" in doc["error"]["message"]
    assert [t["valid"] for t in doc["tokens"]] == [False, True]


def test_negative_ids_are_arguments_not_options():
    r = run_cli("decode", "-5")
    assert r.returncode == 2 and b"No such option" not in r.stderr and b"-5 is not a token ID" in r.stderr


@pytest.mark.parametrize("args", [("kb", "list", "--engine", "nosuch"), ("explain", "--engine", "bogus", "x")])
def test_unknown_engine_names_are_usage_errors_listing_the_values(args):
    r = run_cli(*args)
    assert r.returncode == 2
    assert b"unknown engine" in r.stderr and b"vllm" in r.stderr


def test_engine_names_are_case_insensitive():
    r = run_cli("kb", "list", "--engine", "VLLM", "--json")
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["entries"] and all("vllm" in e["engines"] for e in doc["entries"])


def test_check_document_carries_ok():
    from hostile import closed_port

    r = run_cli("check", "--json", f"http://127.0.0.1:{closed_port()}")
    doc = json.loads(r.stdout)
    assert r.returncode == 3 and doc["ok"] is False


def test_non_utf8_url_is_a_usage_error():
    r = subprocess.run([sys.executable, "-m", "gptoss_doctor", "check", b"http://caf\xe9.local:8000"], capture_output=True,
                       env={"PYTHONPATH": str(ROOT), "GPTOSS_DOCTOR_OFFLINE": "1", "PATH": "/usr/bin:/bin"}, timeout=60)
    assert r.returncode == 2 and b"malformed URL" in r.stderr


def test_help_has_metavars_and_whole_summaries():
    top = run_cli("--help").stdout.decode()
    commands = top.split("Commands:")[1].split("Examples")[0]
    assert "..." not in commands, commands
    helps = run_cli("explain", "--help").stdout.decode() + run_cli("check", "--help").stdout.decode()
    assert "<str>" not in helps and "<int range>" not in helps and "<float range>" not in helps
    assert "--url URL" in helps and "--api-key KEY" in helps


def test_explain_search_field_is_what_the_readme_says():
    """README (JSON output): `search` is null for a confident match and for a text that neither quotes an error
    message nor is about gpt-oss, its stack or a failure; a phrase for an unmatched error message; the telling words
    of a description that quotes none."""
    readme = (ROOT / "README.md").read_text()
    para = readme[readme.index("`search` is `null`"):][:1200].replace("\n", " ")
    assert "neither quotes an error message nor is about gpt-oss" in para and '"phrase": false' in para
    described = json.loads(run_cli("explain", "--offline", "--json", "my frobnicator keeps humming at night").stdout)
    assert described["search"] is None and not [m for m in described["matches"] if m["confidence"] != "low"]
    unmatched = json.loads(run_cli("explain", "--offline", "--json", "ValueError: Frobnicator overflow").stdout)
    assert unmatched["search"]["query"] == "ValueError: Frobnicator overflow" and unmatched["search"]["phrase"] is True
    words = json.loads(run_cli("explain", "--offline", "--json", "my gpt-oss frobnicator keeps humming at night").stdout)
    assert words["search"]["phrase"] is False and "frobnicator" in words["search"]["query"]

"""check --save / --compare (issue 19 item 2): "did this upgrade break tool calling?" — a healthy vLLM saved, a
stale-config vLLM compared: exit 1 naming the new problem; the same server again: no change, exit 0."""

from __future__ import annotations

import json
import os

from conftest import run_cli
from tests.emulators import serve


def test_compare_names_a_new_problem_and_exits_1(tmp_path):
    base = tmp_path / "before.json"
    with serve("vllm", version="0.11.0") as healthy:
        saved = run_cli("check", healthy.url, "--save", str(base))
    assert saved.returncode == 0 and base.exists()
    doc = json.loads(base.read_text())
    assert doc["command"] == "check" and doc["saved_at"] and doc["targets"][0]["url"] == healthy.url
    with serve("vllm", version="0.11.1", faults=("stale_eos",)) as stale:
        r = run_cli("check", stale.url, "--compare", str(base), "--json")
        human = run_cli("check", stale.url, "--compare", str(base), env={"COLUMNS": "80"})
    assert r.returncode == 1 and human.returncode == 1
    comp = json.loads(r.stdout)["comparison"]
    assert comp["new_problems"] is True
    t = comp["targets"][0]
    assert t["engine"] == ["vLLM 0.11.0", "vLLM 0.11.1"]
    assert [c["kb"][0] for c in t["new"]] == ["stale-generation-config-call-token"] and t["gone"] == []
    out = human.stdout.decode()
    assert "✗ new: Stale generation_config.json" in out and "Engine: vLLM 0.11.0 -> vLLM 0.11.1" in out


def test_the_same_healthy_server_again_is_no_change(tmp_path):
    base = tmp_path / "b.json"
    with serve("vllm") as srv:
        run_cli("check", srv.url, "--save", str(base))
        r = run_cli("check", srv.url, "--compare", str(base))
    assert r.returncode == 0 and "no change" in r.stdout.decode()


def test_a_fixed_problem_is_gone(tmp_path):
    base = tmp_path / "b.json"
    with serve("lmdeploy", faults=("dup_stream_args",)) as bad:
        run_cli("check", bad.url, "--save", str(base))
    with serve("lmdeploy") as good:
        r = run_cli("check", good.url, "--compare", str(base), "--json")
    comp = json.loads(r.stdout)["comparison"]["targets"][0]
    assert r.returncode == 0 and comp["new"] == [] and len(comp["gone"]) == 1


def test_bad_baselines_are_refused_before_probing(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    with serve("vllm") as srv:
        r = run_cli("check", srv.url, "--compare", str(notes), "--json")
        over = run_cli("check", srv.url, "--save", str(notes))  # not a saved report: never overwritten
        missing = run_cli("check", srv.url, "--compare", str(tmp_path / "nope.json"))
    assert r.returncode == 2 and json.loads(r.stdout)["error"]["kind"] == "usage"
    assert over.returncode == 2 and notes.read_text() == "my notes"
    assert missing.returncode == 2 and b"Traceback" not in missing.stderr


def test_save_replaces_a_symlink_not_its_target(tmp_path):
    target = tmp_path / "elsewhere.json"
    link = tmp_path / "base.json"
    with serve("vllm") as srv:
        run_cli("check", srv.url, "--save", str(target))
        before = target.read_text()
        link.symlink_to(target)
        run_cli("check", srv.url, "--save", str(link))
    assert not link.is_symlink() and target.read_text() == before and os.path.getsize(link) > 0

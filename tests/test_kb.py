"""The knowledge base: schema, coverage, safe loading, and the JSON cache."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gptoss_doctor import kb
from gptoss_doctor.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent


def test_the_shipped_knowledge_base_is_valid_and_broad():
    entries, errs = kb.validate_dir(ROOT / "knowledge")
    assert errs == []
    assert len(entries) >= 45
    engines = {e for entry in entries for e in entry.engines}
    for needed in ("vllm", "sglang", "lmdeploy", "llama.cpp", "ollama", "lmstudio", "trtllm", "litellm", "harmony",
                   "client"):
        assert needed in engines, needed
    origins = {e.origin for e in entries}
    assert origins == {"server", "client", "proxy", "model-files", "hardware"}
    assert all(e.references and all(r["url"].startswith("https://") for r in e.references) for e in entries)
    assert any("vocab" in e.id for e in entries)


def test_every_finding_id_check_emits_is_known_to_some_entry():
    from gptoss_doctor.check.finding_ids import FINDING_IDS

    named = {f for e in kb.load() for f in e.findings}
    assert named <= set(FINDING_IDS)
    for fid in ("probe.harmony_error", "eos.call_token", "probe.tools.stream_duplicated", "probe.harmony_leak",
                "probe.tools.no_parser", "probe.reasoning", "probe.flattened_channels"):
        assert fid in named, fid


@pytest.mark.parametrize("mutate,needle", [
    (lambda d: d.pop("references"), "missing 'references'"),
    (lambda d: d.update(origin="gpu"), "origin must be one of"),
    (lambda d: d.update(engines=["vllm", "nginx"]), "unknown engine 'nginx'"),
    (lambda d: d["signatures"].update(patterns=["(unclosed"]), "bad pattern"),
    (lambda d: d["signatures"].update(context=["(unclosed"]), "bad pattern"),
    (lambda d: d["signatures"].update(context=[""]), "signatures.context must be a list of non-empty strings"),
    (lambda d: d.update(signatures={"symptoms": ["x"], "context": ["tool"]}), "signatures.context qualifies"),
    (lambda d: d["signatures"].update(token_ids=[300000]), "token_ids"),
    (lambda d: d["signatures"].update(findings=["probe.nonexistent"]), "unknown finding id"),
    (lambda d: d.update(references=[{"url": "http://insecure.example"}]), "https"),
    (lambda d: d.update(fixes=[{"command": "x"}]), "each fix needs 'step'"),
    (lambda d: d.update(extra="x"), "unknown key 'extra'"),
    # a leaked reply's markup quote-matches every leak, whatever its cause; a real error text stays allowed
    (lambda d: d["signatures"].update(messages=["<|channel|>analysis<|message|>"]), "only Harmony markup"),
])
def test_schema_problems_are_reported(mutate, needle):
    raw = kb.get("stale-generation-config-call-token").to_json()
    raw["signatures"] = {k: v for k, v in raw["signatures"].items() if v}
    mutate(raw)
    errs = kb.validate_raw(raw, "stale-generation-config-call-token.yaml")
    assert any(needle in e for e in errs), errs


def test_markup_with_a_name_or_error_text_is_a_valid_message():
    raw = kb.get("stale-generation-config-call-token").to_json()
    raw["signatures"] = {k: v for k, v in raw["signatures"].items() if v}
    raw["signatures"]["messages"] = ["query_dataset<|channel|>commentary", "Unexpected token 200012"]
    assert kb.validate_raw(raw, "stale-generation-config-call-token.yaml") == []


def test_unsafe_yaml_is_refused(tmp_path):
    (tmp_path / "x.yaml").write_text("!!python/object/apply:os.system ['touch /tmp/pwned-by-kb']\n")
    with pytest.raises(UsageError):
        kb.validate_dir(tmp_path)
    assert not os.path.exists("/tmp/pwned-by-kb")


def test_cache_is_used_and_refreshed_when_an_entry_changes(tmp_path, monkeypatch):
    folder = tmp_path / "knowledge"
    shutil.copytree(ROOT / "knowledge", folder)
    monkeypatch.setenv("GPTOSS_DOCTOR_KNOWLEDGE", str(folder))
    first = kb.load(folder)
    cache_files = list((Path(os.environ["XDG_CACHE_HOME"]) / "gptoss-doctor").glob("kb-*.json"))
    assert len(cache_files) == 1
    kb._LOADED.clear()
    assert [e.id for e in kb.load(folder)] == [e.id for e in first]
    path = folder / "stale-generation-config-call-token.yaml"
    path.write_text(path.read_text().replace('title: "Stale', 'title: "Edited stale'))
    kb._LOADED.clear()
    edited = kb.get("stale-generation-config-call-token", kb.load(folder))
    assert edited.title.startswith("Edited stale")


def test_unwritable_cache_still_loads(tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "gptoss-doctor").write_text("not a folder")  # mkdir of the cache folder fails
    monkeypatch.setenv("XDG_CACHE_HOME", str(ro))
    kb._LOADED.clear()
    assert len(kb.load(ROOT / "knowledge")) >= 45


# -- merged entries: 'replaces' (old ids resolve to the wider entry), 'distinguish', never a citation dropped ------

MERGED, OLD = "raw-harmony-in-content-no-parser", "lmstudio-outdated-raw-harmony"


def test_an_old_id_shows_the_entry_it_was_merged_into(cli):
    import json

    res = cli("kb", "show", "--json", OLD)
    doc = json.loads(res.stdout)
    assert res.code == 0 and doc["entry"]["id"] == MERGED
    assert doc["merged"] == {"id": OLD, "into": MERGED}
    assert OLD in doc["entry"]["replaces"] and doc["entry"]["distinguish"]
    human = cli("kb", "show", OLD).stdout
    assert f"{OLD} was merged into {MERGED}" in human and "How to tell which one you have" in human
    # the entry's own id says nothing about a merge
    assert "merged" not in json.loads(cli("kb", "show", "--json", MERGED).stdout)


def test_explain_names_the_merged_entry_for_an_old_entrys_message(cli):
    import json

    # the quoted message of the former trtllm-raw-harmony-in-content
    doc = json.loads(cli("explain", "--json", "[TRT-LLM] [W] Harmony parsing fell back to raw text decoding").stdout)
    assert doc["matches"][0]["id"] == MERGED and doc["matches"][0]["confidence"] == "high"
    assert kb.get("trtllm-raw-harmony-in-content").id == MERGED


def test_every_replaced_id_resolves_and_is_gone():
    entries = kb.load()
    ids = {e.id for e in entries}
    merged = kb.aliases(entries)
    assert OLD in merged and not set(merged) & ids
    assert all(kb.get(old, entries).id == new for old, new in merged.items())


def _two_entries(tmp_path: Path) -> Path:
    folder = tmp_path / "kb"
    folder.mkdir()
    for name in ("stale-generation-config-call-token", "ignore-eos-return-token-200002"):
        shutil.copy(ROOT / "knowledge" / f"{name}.yaml", folder)
    return folder


@pytest.mark.parametrize("replaces,needle", [
    (["ignore-eos-return-token-200002"], "still an entry (ignore-eos-return-token-200002.yaml)"),  # alias = entry id
    (["stale-generation-config-call-token"], "must not name the entry itself"),
    (["Not An Id"], "list of entry ids"),
])
def test_validate_checks_replaces(tmp_path, replaces, needle):
    import yaml

    folder = _two_entries(tmp_path)
    path = folder / "stale-generation-config-call-token.yaml"
    raw = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**raw, "replaces": replaces}))
    _, errs = kb.validate_dir(folder)
    assert any(needle in e for e in errs), errs


def test_validate_refuses_an_id_replaced_twice(tmp_path):
    import yaml

    folder = _two_entries(tmp_path)
    for name in ("stale-generation-config-call-token", "ignore-eos-return-token-200002"):
        path = folder / f"{name}.yaml"
        path.write_text(yaml.safe_dump({**yaml.safe_load(path.read_text()), "replaces": ["some-old-entry"],
                                        "distinguish": ["a check that tells the variants apart"]}))
    entries, errs = kb.validate_dir(folder)
    assert any("'some-old-entry' is already replaced by" in e for e in errs), errs
    assert entries[0].distinguish == ["a check that tells the variants apart"]


def test_merging_never_dropped_a_citation():
    # recorded from the 303-entry tree before any merge (tests/data): the whole base cites a superset of what it cited,
    # and every old id still resolves to an entry that cites each of that id's references
    import json

    recorded = json.loads((ROOT / "tests" / "data" / "kb-references-2026-11-25.json").read_text())["entries"]
    assert len(recorded) == 303
    before = {u for urls in recorded.values() for u in urls}
    entries = kb.load()
    after = {r["url"] for e in entries for r in e.references}
    assert not before - after, sorted(before - after)
    for old_id, urls in recorded.items():
        assert set(urls) <= set(kb.get(old_id, entries).urls), old_id


def test_explain_shows_how_to_tell_the_variants_apart_engine_first(cli):
    import json

    text = "[TRT-LLM] [W] Harmony parsing fell back to raw text decoding"
    doc = json.loads(cli("explain", "--json", text).stdout)
    assert doc["matches"][0]["distinguish"] == kb.get(MERGED).distinguish
    lines = cli("explain", text).stdout.splitlines()
    tell = [line.strip() for line in lines if line.strip().startswith("which one:")]
    fixes = [line.strip() for line in lines if line.strip().startswith("fix (server):")]
    # the merged entry covers eleven stacks: the lines about the engine the text names come first
    assert tell and tell[0].startswith("which one: TensorRT-LLM") and len(tell) <= 4
    assert fixes and fixes[0].startswith("fix (server): TensorRT-LLM")
    assert any(line.strip().startswith("cause: TensorRT-LLM") for line in lines)


def test_a_triage_class_ask_must_be_a_list_of_text():
    import yaml

    from gptoss_doctor import kb

    raw = yaml.safe_load((kb.knowledge_dir() / "classes" / "tool-calls.yaml").read_text(encoding="utf-8"))
    assert raw["ask"] and kb.validate_class(raw, "tool-calls.yaml") == []
    assert any("'ask'" in e for e in kb.validate_class({**raw, "ask": "the raw response"}, "tool-calls.yaml"))
    assert any("'ask'" in e for e in kb.validate_class({**raw, "ask": [""]}, "tool-calls.yaml"))

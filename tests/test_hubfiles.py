"""hubfiles / fixconfig units that need no server: hashing, finding copies, comparing, error mapping."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from gptoss_doctor import settings
from gptoss_doctor.redact import redact
from gptoss_doctor import fixconfig as fc
from gptoss_doctor.fixconfig import hub as hf
from gptoss_doctor.fixconfig import compare
from gptoss_doctor.fixconfig import locate
from gptoss_doctor.errors import AuthError, UnreachableError, UsageError


def test_git_blob_sha1_matches_git(tmp_path):
    p = tmp_path / "x.json"
    p.write_bytes(b'{"eos_token_id": [200002, 199999, 200012]}\n')
    want = subprocess.run(["git", "hash-object", str(p)], capture_output=True, text=True, check=True).stdout.strip()
    assert locate.git_blob_sha1(p.read_bytes()) == want


@pytest.mark.parametrize("path,weight", [
    ("model-00000-of-00002.safetensors", True), ("original/model.safetensors", True), ("metal/model.bin", True),
    ("x.gguf", True), ("generation_config.json", False), ("original/config.json", False), ("chat_template.jinja", False),
])
def test_is_weight(path, weight):
    assert locate.is_weight(path) is weight


def _cache(tmp_path: Path, repo_id: str, commit: str = "a" * 40, files: dict | None = None) -> Path:
    root = tmp_path / "hub" / settings.repo_folder_name(repo_id)
    snap = root / "snapshots" / commit
    snap.mkdir(parents=True)
    (root / "blobs").mkdir()
    (root / "refs").mkdir()
    (root / "refs" / "main").write_text(commit)
    for name, data in (files or {"generation_config.json": b'{"eos_token_id": [200002, 199999]}'}).items():
        sha = locate.git_blob_sha1(data)
        (root / "blobs" / sha).write_bytes(data)
        (snap / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.path.relpath(root / "blobs" / sha, (snap / name).parent), snap / name)
    return root


def test_find_models_in_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    _cache(tmp_path, "openai/gpt-oss-20b")
    _cache(tmp_path, "openai/gpt-oss-120b", "b" * 40)
    _cache(tmp_path, "Qwen/Qwen3-8B")
    found = locate.find_models(None)
    assert [m.repo_id for m in found] == ["openai/gpt-oss-120b", "openai/gpt-oss-20b"]
    assert all(m.kind == "cache" and m.ref == "main" for m in found)
    (m,) = locate.find_models("openai/gpt-oss-20b")
    assert m.commit == "a" * 40 and m.files_dir.name == "a" * 40
    (p,) = locate.find_models(str(m.root / "snapshots" / ("a" * 40)))
    assert p.pinned_snapshot and p.ref == "main"
    with pytest.raises(UsageError, match="not in the Hugging Face cache"):
        locate.find_models("openai/gpt-oss-999b")


def test_find_models_folder_guesses(tmp_path):
    d = tmp_path / "weights"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"model_type": "gpt_oss", "num_hidden_layers": 36, "num_local_experts": 128}))
    (m,) = locate.find_models(str(d))
    assert m.repo_id == "openai/gpt-oss-120b" and m.kind == "folder"
    named = tmp_path / "gpt-oss-20b"
    named.mkdir()
    assert locate.find_models(str(named))[0].repo_id == "openai/gpt-oss-20b"
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(UsageError):
        locate.find_models(str(other))
    assert locate.find_models(str(other), repo="me/my-gpt-oss")[0].repo_id == "me/my-gpt-oss"


def test_safe_target_refuses_escape(tmp_path):
    (tmp_path / "real").mkdir()
    root = tmp_path / "m"
    root.mkdir()
    os.symlink(tmp_path / "real", root / "link")
    for bad in ("../x", "/etc/passwd", "link/config.json"):
        with pytest.raises(UsageError):
            locate.safe_target(root, bad)
    assert locate.safe_target(root, "original/config.json") == root / "original" / "config.json"


def test_inventory_and_compare(tmp_path):
    old_gen = b'{"eos_token_id": [200002, 199999]}'
    root = _cache(tmp_path, "openai/gpt-oss-20b", files={
        "generation_config.json": old_gen, "config.json": b"{}", "model-00000-of-00001.safetensors": b"W" * 10,
        "extra.json": b"{}",
    })
    # a locally edited blob: content no longer matches its name
    blob = (root / "snapshots" / ("a" * 40) / "config.json").resolve()
    blob.write_bytes(b'{"edited": 1}')
    model = locate.find_models(str(root))[0]
    local = locate.inventory(model)
    assert local["model-00000-of-00001.safetensors"].sha1 is None  # weights are not read
    new_gen = b'{"eos_token_id": [200002, 199999, 200012]}'
    remote = hf.RemoteState("openai/gpt-oss-20b", "main", "c" * 40, {
        "generation_config.json": hf.RemoteFile("generation_config.json", len(new_gen), locate.git_blob_sha1(new_gen)),
        "config.json": hf.RemoteFile("config.json", 2, locate.git_blob_sha1(b"{}")),
        "chat_template.jinja": hf.RemoteFile("chat_template.jinja", 3, "d" * 40),
        "model-00000-of-00001.safetensors": hf.RemoteFile("model-00000-of-00001.safetensors", 10, "e" * 40,
                                                          lfs_sha256=local["model-00000-of-00001.safetensors"].blob_name),
    }, [])
    locate.read_compared(model, local, sorted(set(local) & set(remote.files)))  # only what the Hub also has is read
    assert local["extra.json"].sha1 is None
    st = {s.relpath: s.status for s in compare.compare(model, local, remote)}
    assert st == {"generation_config.json": compare.STALE, "config.json": compare.MODIFIED, "chat_template.jinja": compare.MISSING,
                  "model-00000-of-00001.safetensors": compare.WEIGHT, "extra.json": compare.ABSENT_UPSTREAM}


def test_lfs_file_matches_by_sha256():
    data = b"x" * 100
    import hashlib

    rf = hf.RemoteFile("tokenizer.json", 100, "f" * 40, lfs_sha256=hashlib.sha256(data).hexdigest())
    assert rf.matches(data) and rf.etag == rf.lfs_sha256
    assert not rf.matches(b"y" * 100)


def test_eos_change_names_tokens():
    ch = fc.eos_change(b'{"eos_token_id": [200002, 199999]}', b'{"eos_token_id": [200002, 199999, 200012]}')
    assert ch["text"] == "eos_token_id adds 200012 <|call|>" and ch["added"] == [200012]
    ch = fc.eos_change(b'{"eos_token_id": 200002}', b'{"eos_token_id": [200002, 199999]}')
    assert "adds 199999 <|endoftext|>" in ch["text"]
    ch = fc.eos_change(b'{"eos_token_id": [200002, 200007]}', b'{"eos_token_id": [200002]}')
    assert "removes 200007 <|end|>" in ch["text"]


class _Resp:
    def __init__(self, status, headers=None):
        self.status_code = status
        self.headers = headers or {}


def _exc(name, status=None, headers=None, msg="boom"):
    cls = type(name, (Exception,), {})
    e = cls(msg)
    e.response = _Resp(status, headers) if status else None
    return e


def test_hub_error_mapping(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    assert isinstance(hf.hub_error(_exc("GatedRepoError", 403), "r", "main"), AuthError)
    e = hf.hub_error(_exc("RepositoryNotFoundError", 401, {"X-Error-Code": "RepoNotFound"}), "r", "main")
    assert isinstance(e, AuthError) and "not found, or private" in e.message
    assert isinstance(hf.hub_error(_exc("RevisionNotFoundError", 404), "r", "x"), UsageError)
    assert isinstance(hf.hub_error(_exc("ConnectError"), "r", "main"), UnreachableError)
    assert isinstance(hf.hub_error(_exc("HfHubHTTPError", 502), "r", "main"), UnreachableError)
    monkeypatch.setenv("HF_TOKEN", "hf_abcdefSECRET")
    e = hf.hub_error(_exc("HfHubHTTPError", 401, msg="bad hf_abcdefSECRET Bearer hf_abcdefSECRET"), "r", "main")
    assert isinstance(e, AuthError) and "rejected" in e.message and "SECRET" not in e.message
    assert "SECRET" not in redact("token hf_abcdefSECRET / Authorization: Bearer hf_zzz")
    assert redact("http://user:pw@mirror/x") == "http://***@mirror/x"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert isinstance(hf.hub_error(_exc("OfflineModeIsEnabled"), "r", "main"), UnreachableError)


def test_write_durable_replaces_atomically(tmp_path):
    p = tmp_path / "f.json"
    p.write_text("old")
    fc.write_durable(p, b"new", 0o600)
    assert p.read_bytes() == b"new" and (p.stat().st_mode & 0o777) == 0o600
    assert [x.name for x in tmp_path.iterdir()] == ["f.json"]  # no temp file left


def test_deferred_signals_hold_ctrl_c():
    import signal

    done = []
    with pytest.raises(KeyboardInterrupt):
        with fc.deferred_signals():
            os.kill(os.getpid(), signal.SIGINT)
            done.append(1)  # still runs: the interrupt waits for the block's end
    assert done == [1]


def _cli(*args, env=None):
    import subprocess
    import sys

    e = dict(os.environ)
    e.update(env or {})
    e["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    return subprocess.run([sys.executable, "-m", "gptoss_doctor", "fix-config", *args], capture_output=True, text=True,
                          env=e, timeout=60, stdin=subprocess.DEVNULL)


def test_restore_usage(tmp_path):
    d = tmp_path / "gpt-oss-20b"
    d.mkdir()
    r = _cli(str(d), "--restore", "--yes")
    assert r.returncode == 2 and "nothing to restore" in r.stderr
    r = _cli(str(d), "--restore", "--dry-run", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["backups"] == []
    r = _cli(str(d), "--backup", "x")
    assert r.returncode == 2 and "--restore" in r.stderr
    r = _cli(str(d), "--yes", "--dry-run")
    assert r.returncode == 2

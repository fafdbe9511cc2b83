"""check judges a server by this machine's files only when the server runs here (a loopback URL) or --model-dir
names its folder (issue 18 item 4): a stale gpt-oss copy in a laptop's Hugging Face cache says nothing about a
healthy server on another host."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from gptoss_doctor.check import run as pipeline
from gptoss_doctor.check.result import CheckOptions
from tests.emulators import serve


def _stale_cache(root):
    snap = root / "hub" / "models--openai--gpt-oss-20b" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "generation_config.json").write_text('{"eos_token_id": [200002, 199999]}')
    (root / "hub" / "models--openai--gpt-oss-20b" / "refs").mkdir()
    (root / "hub" / "models--openai--gpt-oss-20b" / "refs" / "main").write_text("abc123")
    return snap / "generation_config.json"


def _other_name_for_this_host() -> str:
    """A host name that is not a loopback literal but reaches this machine (the doctor does not resolve names to
    decide whether a server is local, so to it this is a remote host)."""
    name = socket.gethostname()
    try:
        addr = socket.gethostbyname(name)
    except OSError:
        pytest.skip(f"this machine's host name {name!r} does not resolve")
    if name in ("localhost",) or not ipaddress.ip_address(addr).is_loopback:
        pytest.skip(f"this machine's host name {name!r} does not resolve to a loopback address the emulator listens on")
    return name


def _check(url, **kw):
    return {f.id: f for f in pipeline.run([(url, [])], CheckOptions(timeout=5, quick=True, **kw))[0].checks}


def test_a_local_stale_copy_is_not_blamed_on_a_remote_server(tmp_path, monkeypatch):
    stale = _stale_cache(tmp_path)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    name = _other_name_for_this_host()
    with serve("vllm") as srv:
        local = _check(srv.url)
        remote = _check(srv.url.replace("127.0.0.1", name))
    # the same server on loopback: the copy here is the one it reads, and the file is named
    assert local["eos.call_token"].status == "fail"
    assert str(stale) in local["eos.local_generation_config"].detail
    # reached by another name: this laptop's cache is not the server's
    assert "eos.local_generation_config" not in remote
    assert remote["eos.call_token"].status == "skip"
    assert "not on this machine" in remote["eos.call_token"].detail


def test_model_dir_is_read_for_a_remote_server(tmp_path):
    (tmp_path / "generation_config.json").write_text('{"eos_token_id": [200002, 199999]}')
    name = _other_name_for_this_host()
    with serve("vllm") as srv:
        f = _check(srv.url.replace("127.0.0.1", name), model_dir=str(tmp_path))
    assert f["eos.call_token"].status == "fail"
    assert str(tmp_path / "generation_config.json") in f["eos.local_generation_config"].detail

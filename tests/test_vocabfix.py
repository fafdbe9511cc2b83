"""fix-config --vocab DIR: install o200k_base.tiktoken from local sources, verified, without network."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parent.parent
SHA = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


def run(*args, env_extra=None, timeout=60):
    env = dict(os.environ)
    for v in ("TIKTOKEN_ENCODINGS_BASE", "TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR", "TIKTOKEN_RS_CACHE_DIR", "HF_HUB_CACHE"):
        env.pop(v, None)
    env.update({"PYTHONPATH": str(ROOT), "NO_COLOR": "1", "HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"})
    env.update(env_extra or {})
    return run_cli("fix-config", *args, base_env=env, timeout=timeout, text=True)


def _bytes_to_unicode() -> dict[int, str]:
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


@pytest.fixture(scope="module")
def tokenizer_json(vocab_dir, tmp_path_factory) -> Path:
    """A gpt-oss-style tokenizer.json (byte-level BPE vocab) built from the real vocabulary."""
    m = _bytes_to_unicode()
    vocab = {}
    for line in (vocab_dir / "o200k_base.tiktoken").read_bytes().splitlines():
        tok, rank = line.split()
        vocab["".join(m[b] for b in base64.b64decode(tok))] = int(rank)
    vocab["<|startoftext|>"] = 199998
    p = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    p.write_text(json.dumps({"version": "1.0", "model": {"type": "BPE", "vocab": vocab, "merges": []}}))
    return p


def test_from_explicit_file(vocab_dir, tmp_path):
    dest = tmp_path / "vocab"
    r = run("--vocab", str(dest), "--vocab-source", str(vocab_dir / "o200k_base.tiktoken"))
    assert r.returncode == 0, r.stderr
    f = dest / "o200k_base.tiktoken"
    assert hashlib.sha256(f.read_bytes()).hexdigest() == SHA
    assert f"TIKTOKEN_ENCODINGS_BASE={dest}" in r.stdout and "vllm serve" in r.stdout
    r2 = run("--vocab", str(dest), "--vocab-source", str(vocab_dir / "o200k_base.tiktoken"))
    assert r2.returncode == 0 and "already there" in r2.stdout


def test_from_tokenizer_json_and_harmony_loads_it_offline(tokenizer_json, tmp_path):
    dest = tmp_path / "enc"
    r = run("--vocab", str(dest), "--vocab-source", str(tokenizer_json), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["vocab"]["action"] == "written" and doc["vocab"]["sha256"] == SHA
    assert doc["vocab"]["env"] == f"TIKTOKEN_ENCODINGS_BASE={dest}"
    # openai-harmony, as vLLM / SGLang use it, loads from that folder with no network
    code = ("import openai_harmony as h; e = h.load_harmony_encoding(h.HarmonyEncodingName.HARMONY_GPT_OSS); "
            "print(e.stop_tokens_for_assistant_actions())")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIKTOKEN")}
    env.update({"TIKTOKEN_ENCODINGS_BASE": str(dest), "TIKTOKEN_RS_CACHE_DIR": str(tmp_path / "rs-empty"),
                "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"})
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "200012" in p.stdout


def test_from_model_folder_tokenizer(tokenizer_json, tmp_path):
    model = tmp_path / "gpt-oss-20b"
    model.mkdir()
    os.symlink(tokenizer_json, model / "tokenizer.json")  # read-only use of a source is fine
    dest = tmp_path / "v"
    r = run(str(model), "--vocab", str(dest))
    assert r.returncode == 0, r.stderr
    assert "tokenizer.json of openai/gpt-oss-20b" in r.stdout


def test_from_tiktoken_cache(vocab_dir, tmp_path):
    cache = tmp_path / "tkcache"
    cache.mkdir()
    name = hashlib.sha1(URL.encode()).hexdigest()
    (cache / name).write_bytes((vocab_dir / "o200k_base.tiktoken").read_bytes())
    dest = tmp_path / "v"
    r = run("--vocab", str(dest), env_extra={"TIKTOKEN_CACHE_DIR": str(cache)})
    assert r.returncode == 0, r.stderr
    assert "tiktoken cache" in r.stdout


def test_wrong_source_rejected_nothing_written(tmp_path):
    bad = tmp_path / "o200k_base.tiktoken"
    bad.write_bytes(b"not a vocabulary\n")
    dest = tmp_path / "v"
    r = run("--vocab", str(dest), "--vocab-source", str(bad))
    assert r.returncode == 1
    errs = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert len(errs) == 1 and "no verified o200k_base.tiktoken" in errs[0]
    assert not (dest / "o200k_base.tiktoken").exists()


def test_replacing_a_wrong_file_keeps_a_backup(vocab_dir, tmp_path):
    dest = tmp_path / "v"
    dest.mkdir()
    (dest / "o200k_base.tiktoken").write_bytes(b"truncated")
    r = run("--vocab", str(dest), "--vocab-source", str(vocab_dir))
    assert r.returncode == 0, r.stderr
    assert hashlib.sha256((dest / "o200k_base.tiktoken").read_bytes()).hexdigest() == SHA
    baks = list(dest.glob("o200k_base.tiktoken.bak-*"))
    assert len(baks) == 1 and baks[0].read_bytes() == b"truncated"


def test_source_without_dest_is_usage_error(tmp_path):
    r = run("--vocab-source", str(tmp_path))
    assert r.returncode == 2

"""Token decoding: the Harmony table, invalid IDs, and every vocabulary source in its documented order."""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import shutil
import threading
from pathlib import Path

import pytest

from gptoss_doctor.harmony import tokens
from gptoss_doctor.harmony import vocab
from gptoss_doctor.harmony.tokens import decode_ids

URL_SHA1 = hashlib.sha1(vocab.O200K_URL.encode()).hexdigest()


def test_special_table_matches_openai_harmony(vocab_dir, monkeypatch):
    """The built-in table agrees with openai-harmony's own encoding (read offline from ../shared)."""
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", str(vocab_dir))
    import openai_harmony as oh

    enc = oh.load_harmony_encoding(oh.HarmonyEncodingName.HARMONY_GPT_OSS)
    for tid, name in tokens.SPECIAL_TOKENS.items():
        assert enc.decode([tid]) == name
    assert enc.decode([200100]) == "<|reserved_200100|>"
    assert sorted(enc.stop_tokens_for_assistant_actions()) == [200002, 200012]


def test_specials_need_no_vocabulary():
    infos, notes = decode_ids([200006, 200005, 200008, 200012, 200002, 200007, 200003, 199998, 199999, 200018])
    assert [i.text for i in infos][:4] == ["<|start|>", "<|channel|>", "<|message|>", "<|call|>"]
    assert all(i.special and i.source == "harmony-table" for i in infos)
    assert infos[-1].text == "<|reserved_200018|>" and "endofprompt" in infos[-1].note
    assert notes == []


@pytest.mark.parametrize("tid", [201088, 10**12, -1, -200006, 10**29])
def test_out_of_range_ids_are_invalid(tid):
    (info,), _ = decode_ids([tid])
    assert not info.valid and info.source == "invalid" and info.text is None


def test_reserved_range_edges():
    assert tokens.special_name(201087) == "<|reserved_201087|>"
    assert tokens.special_name(199997) is None
    assert tokens.special_id("<|call|>") == 200012
    assert tokens.special_id("<|reserved_200100|>") == 200100
    assert tokens.special_id("<|reserved_5|>") is None


def test_regular_tokens_via_tiktoken_encodings_base(vocab_dir, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", str(vocab_dir))
    infos, notes = decode_ids([12606, 173781, 17196, 17360, 13])
    assert [i.text for i in infos] == ["comment", "assistant", "final", "system", "."]
    assert all(i.source.startswith("TIKTOKEN_ENCODINGS_BASE") for i in infos)


def test_regular_tokens_agree_with_tiktoken(vocab_dir, monkeypatch, tmp_path):
    """Cross-check a spread of ranks against tiktoken reading the same file."""
    import tiktoken.load

    ranks = tiktoken.load.load_tiktoken_bpe(str(vocab_dir / "o200k_base.tiktoken"))
    by_rank = {r: b for b, r in ranks.items()}
    ids = [0, 1, 255, 1000, 12606, 50000, 100000, 150000, 199997]
    monkeypatch.setenv("GPTOSS_DOCTOR_VOCAB", str(vocab_dir))
    infos, _ = decode_ids(ids)
    for i, info in zip(ids, infos):
        raw = by_rank[i]
        try:
            assert info.text == raw.decode("utf-8")
        except UnicodeDecodeError:
            assert info.bytes_hex == raw.hex()


def test_partial_utf8_token_is_shown_as_hex(vocab_dir):
    import tiktoken.load

    ranks = tiktoken.load.load_tiktoken_bpe(str(vocab_dir / "o200k_base.tiktoken"))
    partial = next(r for b, r in ranks.items() if r < 199998 and _is_partial(b))
    (info,), _ = decode_ids([partial], vocab_path=str(vocab_dir))
    assert info.bytes_hex and info.text.startswith("<0x")


def _is_partial(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True


def test_explicit_vocab_wins_and_a_bad_file_is_refused(vocab_dir, tmp_path, monkeypatch):
    bad = tmp_path / "o200k_base.tiktoken"
    bad.write_bytes(b"aGVsbG8= 0\n")
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", str(vocab_dir))
    (info,), notes = decode_ids([12606], vocab_path=str(bad))
    assert info.text == "comment" and info.source.startswith("TIKTOKEN_ENCODINGS_BASE")
    assert any("does not match" in n for n in notes)


@pytest.mark.parametrize("env_var,label", [("TIKTOKEN_CACHE_DIR", "tiktoken cache"),
                                           ("TIKTOKEN_RS_CACHE_DIR", "openai-harmony cache")])
def test_library_caches_named_by_url_sha1(vocab_dir, tmp_path, monkeypatch, env_var, label):
    cache = tmp_path / "c"
    cache.mkdir()
    shutil.copy(vocab_dir / "o200k_base.tiktoken", cache / URL_SHA1)
    monkeypatch.setenv(env_var, str(cache))
    (info,), _ = decode_ids([12606])
    assert info.text == "comment" and info.source.startswith(label)


def test_default_tmp_caches(vocab_dir, monkeypatch):
    import tempfile

    d = Path(tempfile.gettempdir()) / "tiktoken-rs-cache"
    d.mkdir(parents=True)
    shutil.copy(vocab_dir / "o200k_base.tiktoken", d / URL_SHA1)
    (info,), _ = decode_ids([12606])
    assert info.source.startswith("openai-harmony cache")


def _tokenizer_json_from(vocab_file: Path, dest: Path) -> None:
    """Write a byte-level BPE tokenizer.json (the HF layout of gpt-oss) from the real ranks."""
    b2u = vocab.bytes_to_unicode()
    v = {}
    for line in vocab_file.read_bytes().splitlines():
        tok, rank = line.split()
        v["".join(b2u[b] for b in base64.b64decode(tok))] = int(rank)
    v["<|return|>"] = 200002
    dest.write_text(json.dumps({"model": {"type": "BPE", "vocab": v, "merges": []}}), encoding="utf-8")


def test_tokenizer_json_in_hf_cache_is_converted_verified_and_cached(vocab_dir, tmp_path, monkeypatch):
    hub = tmp_path / "hub"
    snap = hub / "models--openai--gpt-oss-20b" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (hub / "models--openai--gpt-oss-20b" / "refs").mkdir()
    (hub / "models--openai--gpt-oss-20b" / "refs" / "main").write_text("abc123")
    _tokenizer_json_from(vocab_dir / "o200k_base.tiktoken", snap / "tokenizer.json")
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    rebuilt = vocab.tiktoken_bytes_from_tokenizer_json(snap / "tokenizer.json")
    assert hashlib.sha256(rebuilt).hexdigest() == vocab.O200K_SHA256
    (info,), _ = decode_ids([12606])
    assert info.text == "comment" and info.source.startswith("tokenizer.json in the Hugging Face cache")
    # the conversion is cached: the next lookup reads gptoss-doctor's own cache
    (info,), _ = decode_ids([173781])
    assert info.text == "assistant" and info.source.startswith("gptoss-doctor cache")


class _Server:
    def __init__(self, handler_cls):
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler_cls)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_download_when_online_is_verified_and_cached(vocab_dir, monkeypatch):
    payload = (vocab_dir / "o200k_base.tiktoken").read_bytes()

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *a):
            pass

    with _Server(H) as srv:
        monkeypatch.delenv("GPTOSS_DOCTOR_OFFLINE")
        monkeypatch.setenv("GPTOSS_DOCTOR_VOCAB_URL", srv.url + "/o200k_base.tiktoken")
        (info,), _ = decode_ids([12606])
    assert info.text == "comment" and info.source.startswith("downloaded from")
    assert vocab.sha256_file(vocab.own_cache_file()) == vocab.O200K_SHA256


def test_download_with_wrong_content_is_not_used(monkeypatch):
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = b"<html>captive portal</html>"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    with _Server(H) as srv:
        monkeypatch.delenv("GPTOSS_DOCTOR_OFFLINE")
        monkeypatch.setenv("GPTOSS_DOCTOR_VOCAB_URL", srv.url)
        (info,), notes = decode_ids([12606])
    assert info.text is None and info.source == "unavailable"
    assert any("sha256" in n for n in notes)


def test_server_detokenize_is_the_last_resort():
    seen = []

    class H(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(body)
            out = json.dumps({"prompt": {12606: "comment"}.get(body["tokens"][0], "?")}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *a):
            pass

    with _Server(H) as srv:
        (info,), _ = decode_ids([12606], url=srv.url, model="openai/gpt-oss-20b")
    assert info.text == "comment" and info.source.endswith("/detokenize")
    assert seen == [{"tokens": [12606], "model": "openai/gpt-oss-20b"}]


def test_no_vocabulary_says_how_to_get_one():
    (info,), notes = decode_ids([12606])
    assert info.text is None and info.source == "unavailable"
    assert "TIKTOKEN_ENCODINGS_BASE" in notes[-1] and "446a9538" in notes[-1]

"""Finding the real o200k vocabulary, in a documented order, and reading single ranks fast.

Order (first hit wins):
  1. ``--vocab PATH`` / ``$GPTOSS_DOCTOR_VOCAB`` (a file, or a folder holding o200k_base.tiktoken)
  2. ``$TIKTOKEN_ENCODINGS_BASE/o200k_base.tiktoken`` (what openai-harmony reads offline)
  3. tiktoken's cache (``$TIKTOKEN_CACHE_DIR``, ``$DATA_GYM_CACHE_DIR``, ``<tmp>/data-gym-cache``; sha1 of the URL)
  4. openai-harmony's cache (``$TIKTOKEN_RS_CACHE_DIR``, ``<tmp>/tiktoken-rs-cache``; sha1 of the URL)
  5. gptoss-doctor's own cache (``~/.cache/gptoss-doctor/o200k_base.tiktoken``), filled by 6 and 7
  6. a gpt-oss ``tokenizer.json`` in the Hugging Face cache (converted, then cached in 5)
  7. a download from OpenAI's public URL, unless offline (``HF_HUB_OFFLINE`` / ``GPTOSS_DOCTOR_OFFLINE``)
  8. a server's ``/detokenize`` when ``--url`` is given

Every file is checked against the published sha256 before use: a wrong file is
reported, never used to guess.
"""

from __future__ import annotations

from gptoss_doctor import settings

import base64
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
FILE_NAME = "o200k_base.tiktoken"
GPT_OSS_REPOS = ("openai/gpt-oss-20b", "openai/gpt-oss-120b")
HOW_TO_GET = (
    "no o200k vocabulary found. Point --vocab (or GPTOSS_DOCTOR_VOCAB) at o200k_base.tiktoken "
    f"(sha256 {O200K_SHA256[:8]}…{O200K_SHA256[-4:]}), set TIKTOKEN_ENCODINGS_BASE to its folder, "
    f"download it once from {O200K_URL}, or pass --url to ask a running server's /detokenize"
)


def _url_cache_name() -> str:
    return hashlib.sha1(O200K_URL.encode()).hexdigest()


def own_cache_file() -> Path:
    return settings.user_cache_dir() / FILE_NAME


def hf_cached_tokenizer_jsons() -> list[Path]:
    """tokenizer.json of gpt-oss repos in the HF cache, refs/main snapshot first."""
    found: list[Path] = []
    cache = settings.hf_hub_cache()
    for repo in GPT_OSS_REPOS:
        root = cache / settings.repo_folder_name(repo)
        if not root.is_dir():
            continue
        snaps = []
        try:
            from gptoss_doctor.fsread import Unreadable, read_capped

            ref = read_capped(root / "refs" / "main", 4096).decode("utf-8", "replace").strip()
            snaps.append(root / "snapshots" / ref)
        except (OSError, Unreadable):
            pass
        try:
            snaps.extend(sorted((root / "snapshots").iterdir()))
        except OSError:
            pass
        for snap in snaps:
            cand = snap / "tokenizer.json"
            if cand.is_file() and cand not in found:
                found.append(cand)
    return found


def candidate_sources(explicit: str | None = None) -> list[tuple[str, Path]]:
    """(label, path) of every place a vocabulary may be, in lookup order; paths may not exist."""
    out: list[tuple[str, Path]] = []
    exp = explicit or os.environ.get("GPTOSS_DOCTOR_VOCAB")
    if exp:
        p = Path(exp).expanduser()
        out.append(("--vocab" if explicit else "GPTOSS_DOCTOR_VOCAB", p / FILE_NAME if p.is_dir() else p))
    if os.environ.get("TIKTOKEN_ENCODINGS_BASE"):
        out.append(("TIKTOKEN_ENCODINGS_BASE", Path(os.environ["TIKTOKEN_ENCODINGS_BASE"]) / FILE_NAME))
    tmp = Path(tempfile.gettempdir())
    name = _url_cache_name()
    tk = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR") or str(tmp / "data-gym-cache")
    out.append(("tiktoken cache", Path(tk) / name))
    rs = os.environ.get("TIKTOKEN_RS_CACHE_DIR") or str(tmp / "tiktoken-rs-cache")
    out.append(("openai-harmony cache", Path(rs) / name))
    out.append(("gptoss-doctor cache", own_cache_file()))
    for tj in hf_cached_tokenizer_jsons():
        out.append(("tokenizer.json in the Hugging Face cache", tj))
    return out


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2 byte-level mapping used by tokenizer.json vocabularies."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


def tiktoken_bytes_from_tokenizer_json(path: Path) -> bytes:
    """Rebuild o200k_base.tiktoken (``base64 rank`` lines) from a gpt-oss tokenizer.json."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    try:
        vocab = data["model"]["vocab"]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a BPE tokenizer.json (no model.vocab)") from exc
    inverse = {ch: b for b, ch in bytes_to_unicode().items()}
    by_rank: dict[int, bytes] = {}
    for tok, rank in vocab.items():
        if isinstance(rank, int) and 0 <= rank < 199998:
            try:
                by_rank[rank] = bytes(inverse[ch] for ch in tok)
            except KeyError as exc:
                raise ValueError(f"{path}: token {tok!r} is not byte-level encoded") from exc
    if len(by_rank) != 199998:
        raise ValueError(f"{path}: expected 199998 regular tokens, found {len(by_rank)}")
    return b"".join(base64.b64encode(by_rank[r]) + b" " + str(r).encode() + b"\n" for r in range(199998))


def _ranks_from_bytes(data: bytes, ids: Iterable[int]) -> dict[int, bytes]:
    """The bytes of token ``i`` for each of ``ids``, from the ``base64 rank`` lines of a tiktoken file. Line ``i``
    holds rank ``i``, and " <rank>\\n" occurs once in the file (base64 has no space, and a longer rank ends in the
    same digits only after another digit), so each line is found with one C-speed search instead of splitting all
    200k lines."""
    out: dict[int, bytes] = {}
    for i in ids:
        if i < 0:
            continue
        at = data.find(b" %d\n" % i)
        if at < 0:
            continue
        tok = data[data.rfind(b"\n", 0, at) + 1:at]
        if tok and b" " not in tok:
            try:
                out[i] = base64.b64decode(tok, validate=True)
            except ValueError:
                continue
    return out


@dataclass
class Resolved:
    tokens: dict[int, bytes | str] = field(default_factory=dict)
    source: str = "unavailable"
    path: str | None = None
    notes: list[str] = field(default_factory=list)


def _store_own_cache(data: bytes) -> None:
    target = own_cache_file()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{FILE_NAME}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)
    except OSError:
        pass


DOWNLOAD_LIMIT = 16 << 20  # o200k_base.tiktoken is ~3.6 MB
DOWNLOAD_DEADLINE = 15.0  # the whole download (connecting: at most 5 s); GPTOSS_DOCTOR_VOCAB_TIMEOUT overrides
RETRY_AFTER = 3600.0  # a failed download is not tried again for an hour (remembered next to the cache file)
DETOKENIZE_DEADLINE = 10.0  # for all IDs together, whatever the server does
DETOKENIZE_MAX_IDS = 64


def download_deadline() -> float:
    try:
        return max(0.5, float(os.environ.get("GPTOSS_DOCTOR_VOCAB_TIMEOUT", DOWNLOAD_DEADLINE)))
    except ValueError:
        return DOWNLOAD_DEADLINE


def _failure_marker() -> Path:
    return own_cache_file().with_name(FILE_NAME + ".download-failed")


def _recent_failure() -> str | None:
    """Why the last download failed, if that was less than RETRY_AFTER ago (later runs do not wait again)."""
    import time

    marker = _failure_marker()
    try:
        age = time.time() - marker.stat().st_mtime
        if not 0 <= age < RETRY_AFTER:
            return None
        from gptoss_doctor.fsread import read_capped

        why = read_capped(marker, 512).decode("utf-8", "replace").strip()
    except Exception:  # noqa: BLE001 - no marker (or an unreadable one): try the download
        return None
    return f"the download failed {int(age // 60)} min ago ({why}); not retried for an hour (delete {marker} to retry)"


def _remember_failure(why: str) -> None:
    marker = _failure_marker()
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(why[:200] + "\n", encoding="utf-8")
    except OSError:
        pass


def _download() -> bytes:
    """The vocabulary from its URL, with the same capped, deadlined client as ``check`` (whole-request deadline,
    connecting within 5 s), announced by one line on stderr so that a wait is never silent."""
    import asyncio
    import sys

    from gptoss_doctor.net.http import Client

    url = os.environ.get("GPTOSS_DOCTOR_VOCAB_URL", O200K_URL)
    base, _, path = url.partition("://")
    host, _, rest = path.partition("/")
    deadline = download_deadline()
    try:
        from gptoss_doctor.output.sink import printable

        sys.stderr.write(printable(f"note: downloading the o200k vocabulary (3.6 MB, once) from {url}, at most "
                                   f"{deadline:g} s; GPTOSS_DOCTOR_OFFLINE=1 skips this") + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass

    async def run() -> bytes:
        async with Client(f"{base}://{host}", timeout=deadline, json_limit=DOWNLOAD_LIMIT) as c:
            r = await c.get("/" + rest, auth=False)
            if not r.ok:
                raise OSError(r.describe())
            return r.body

    return asyncio.run(run())


def _detokenize(url: str, ids: list[int], model: str | None, api_key: str | None) -> dict[int, str]:
    """Texts of ``ids`` from a server's /detokenize: concurrent, each answer capped, all within one deadline."""
    import asyncio

    from gptoss_doctor.net.http import Client

    out: dict[int, str] = {}

    async def run() -> None:
        async with Client(url, api_key=api_key, timeout=5.0, json_limit=64 * 1024) as c:
            gate = asyncio.Semaphore(8)

            async def one(i: int) -> None:
                body: dict = {"tokens": [i]}
                if model:
                    body["model"] = model
                async with gate:
                    r = await c.post("/detokenize", body)
                data = r.json_object() if r.ok else None
                if data is not None:
                    text = next((data[k] for k in ("prompt", "text", "content") if isinstance(data.get(k), str)), None)
                    if text is not None:
                        out[i] = text[:1000]

            await asyncio.wait_for(asyncio.gather(*(one(i) for i in ids[:DETOKENIZE_MAX_IDS])), DETOKENIZE_DEADLINE)

    try:
        asyncio.run(run())
    except asyncio.TimeoutError:
        pass  # keep what arrived in time
    return out


def load_verified(explicit: str | None = None) -> tuple[bytes | None, str, list[str]]:
    """The vocabulary file's bytes from the first verified local source (1-6), its label, notes."""
    notes: list[str] = []
    for label, path in candidate_sources(explicit):
        if not path.is_file():
            if label in ("--vocab", "GPTOSS_DOCTOR_VOCAB", "TIKTOKEN_ENCODINGS_BASE"):
                notes.append(f"{label}: {path} does not exist")
            continue
        try:
            if path.name == "tokenizer.json":
                data = tiktoken_bytes_from_tokenizer_json(path)
            else:
                data = path.read_bytes()
        except (OSError, ValueError) as exc:
            notes.append(f"{label}: cannot read {path}: {exc}")
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest != O200K_SHA256:
            notes.append(f"{label}: {path} is not o200k_base.tiktoken (sha256 {digest[:12]}… does not match)")
            continue
        if path.name == "tokenizer.json":
            _store_own_cache(data)
        return data, f"{label}: {path}", notes
    return None, "unavailable", notes


def lookup(ids: list[int], *, explicit: str | None = None, url: str | None = None, model: str | None = None,
           allow_download: bool = True, api_key: str | None = None) -> Resolved:
    """Bytes (or server text) of regular token IDs, from the first source that has them."""
    data, label, notes = load_verified(explicit)
    recent = _recent_failure() if data is None and allow_download and not settings.offline() else None
    if recent:
        notes.append(recent)
    elif data is None and allow_download and not settings.offline():
        try:
            fetched = _download()
            if hashlib.sha256(fetched).hexdigest() == O200K_SHA256:
                _store_own_cache(fetched)
                data, label = fetched, "downloaded from " + os.environ.get("GPTOSS_DOCTOR_VOCAB_URL", O200K_URL)
            else:
                notes.append("downloaded vocabulary failed its sha256 check; not used")
                _remember_failure("the file failed its sha256 check")
        except Exception as exc:  # noqa: BLE001 - any network failure just means "not this source"
            notes.append(f"download failed: {type(exc).__name__}: {str(exc)[:120]}")
            _remember_failure(f"{type(exc).__name__}: {str(exc)[:120]}")
    if data is not None:
        return Resolved(_ranks_from_bytes(data, ids), label, label.split(": ", 1)[-1], notes)
    if url:
        try:
            got = _detokenize(url, ids, model, api_key)
            if got:
                return Resolved(dict(got), f"{url.rstrip('/')}/detokenize", None, notes)
            notes.append(f"{url.rstrip('/')}/detokenize did not decode the IDs")
        except Exception as exc:  # noqa: BLE001
            notes.append(f"{url.rstrip('/')}/detokenize failed: {type(exc).__name__}")
    notes.append(HOW_TO_GET)
    return Resolved({}, "unavailable", None, notes)

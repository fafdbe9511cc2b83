"""``fix-config --vocab DIR``: install o200k_base.tiktoken for air-gapped servers, without network.

openai-harmony (used by vLLM / SGLang for gpt-oss) downloads o200k_base.tiktoken on first use;
offline it fails with "error downloading or loading vocab file". Setting
TIKTOKEN_ENCODINGS_BASE=DIR makes it read DIR/o200k_base.tiktoken instead. This module
finds the vocabulary locally (an explicit file, the model's tokenizer.json, tiktoken /
openai-harmony caches, a gpt-oss tokenizer.json in the HF cache), verifies its sha256
and writes it into DIR atomically.
"""

from __future__ import annotations

import hashlib
import shlex
import time
from pathlib import Path
from typing import Optional

from gptoss_doctor.errors import DoctorError, UsageError


def _sources(source: Optional[str], target: Optional[str]) -> list[tuple[str, Path]]:
    from gptoss_doctor.harmony import vocab

    out: list[tuple[str, Path]] = []
    if source:
        p = Path(source).expanduser()
        if not p.exists():
            raise UsageError(f"no such file: {p}")
        out.append(("--vocab-source", p / vocab.FILE_NAME if p.is_dir() else p))
        return out
    if target:
        from gptoss_doctor.fixconfig import locate

        for model in locate.find_models(target):
            out.append((f"tokenizer.json of {model.repo_id or model.root}", model.files_dir / "tokenizer.json"))
    for label, path in vocab.candidate_sources():
        if label == "--vocab":
            continue
        out.append((label, path))
    return out


def load_source(label: str, path: Path) -> bytes:
    from gptoss_doctor.harmony import vocab

    if path.name == "tokenizer.json" or path.suffix == ".json":
        return vocab.tiktoken_bytes_from_tokenizer_json(path)
    return path.read_bytes()


def find_vocab(source: Optional[str], target: Optional[str]) -> tuple[bytes, str, list[str]]:
    from gptoss_doctor.harmony import vocab

    notes: list[str] = []
    for label, path in _sources(source, target):
        if not path.is_file():
            if label == "--vocab-source":
                notes.append(f"{label}: {path} is not a file")
            continue
        try:
            data = load_source(label, path)
        except (OSError, ValueError) as exc:
            notes.append(f"{label}: cannot use {path}: {exc}")
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest != vocab.O200K_SHA256:
            notes.append(f"{label}: {path} is not o200k_base.tiktoken (sha256 {digest[:12]}… ≠ {vocab.O200K_SHA256[:12]}…)")
            continue
        return data, f"{label}: {path}", notes
    raise DoctorError(
        "no verified o200k_base.tiktoken found on this machine" + (f" ({notes[-1]})" if notes else ""),
        exit_code=1,
        hint="copy o200k_base.tiktoken (sha256 446a9538…1a2d) or a gpt-oss tokenizer.json here and pass --vocab-source FILE",
    )


def run_vocab(out, dest: str, source: Optional[str], target: Optional[str], *, dry_run: bool = False, yes: bool = False) -> int:
    from gptoss_doctor.harmony import vocab
    from gptoss_doctor.fixconfig import write_durable

    dest_dir = Path(dest).expanduser().resolve()
    if dest_dir.exists() and not dest_dir.is_dir():
        raise UsageError(f"--vocab needs a folder, not a file: {dest_dir}")
    final = dest_dir / vocab.FILE_NAME
    data, label, notes = find_vocab(source, target)
    for n in notes:
        out.note("note: " + n)
    action = "write"
    backup = None
    if final.is_file() and not final.is_symlink():
        try:
            if vocab.sha256_file(final) == vocab.O200K_SHA256:
                action = "present"
        except OSError:
            pass
    elif final.is_symlink():
        raise UsageError(f"{final} is a symlink; refusing to write through it")
    if action == "write" and not dry_run:
        try:
            dest_dir.mkdir(parents=True, exist_ok=True)
            if final.exists():
                backup = final.with_name(f"{vocab.FILE_NAME}.bak-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
                write_durable(backup, final.read_bytes())
            write_durable(final, data, 0o644)
        except PermissionError as exc:
            raise UsageError(f"cannot write in {dest_dir}: permission denied", hint="choose a folder you can write") from exc
        except OSError as exc:
            if exc.errno == 28:
                raise UsageError(f"disk full while writing {final}") from exc
            raise
        if vocab.sha256_file(final) != vocab.O200K_SHA256:
            raise DoctorError(f"{final} does not verify after writing", exit_code=1)
    env_line = f"TIKTOKEN_ENCODINGS_BASE={shlex.quote(str(dest_dir))}"
    from gptoss_doctor.fixconfig.results import FixConfigVocab
    from gptoss_doctor.output import emit

    return emit(out, FixConfigVocab(
        path=str(final), source=label, sha256=vocab.O200K_SHA256,
        action="dry-run" if dry_run and action == "write" else ("already-present" if action == "present" else "written"),
        backup=str(backup) if backup else None, env=env_line, dest_dir=str(dest_dir)))

"""fix-config, stage 2 (compare): each local file against the Hub's (up to date, stale, missing, modified locally,
weights); what a generation_config.json change does to eos_token_id; bounded text diffs."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Optional


from gptoss_doctor.fixconfig.hub import RemoteFile, RemoteState
from gptoss_doctor.fixconfig.locate import CORE_FILES, is_weight, LocalFile, LocalModel

# Statuses of one file
UP_TO_DATE = "up-to-date"

STALE = "stale"

MISSING = "missing"

MODIFIED = "modified-locally"

ABSENT_UPSTREAM = "absent-upstream"

WEIGHT = "weight"

SKIPPED = "skipped"

@dataclass
class FileStatus:
    relpath: str
    status: str
    local: Optional[LocalFile]
    remote: Optional[RemoteFile]
    reason: str = ""

    @property
    def needs_update(self) -> bool:
        return self.status in (STALE, MISSING, MODIFIED)

def compare(model: LocalModel, local: dict[str, LocalFile], remote: RemoteState) -> list[FileStatus]:
    out: list[FileStatus] = []
    for rel in sorted(set(local) | (set(remote.files) & set(CORE_FILES))):
        lf = local.get(rel)
        rf = remote.files.get(rel)
        if lf is not None and lf.problem and lf.exists:
            out.append(FileStatus(rel, SKIPPED, lf, rf, lf.problem))
            continue
        if is_weight(rel):
            if lf and lf.exists:
                reason = "weight file: not read, not touched"
                if model.kind == "cache" and rf is not None and lf.blob_name and lf.blob_name != rf.etag:
                    reason = "weight file differs on the Hub (by name); fix-config does not download weights"
                out.append(FileStatus(rel, WEIGHT, lf, rf, reason))
            continue
        exists = lf is not None and lf.exists
        if rf is None:
            if exists:
                out.append(FileStatus(rel, ABSENT_UPSTREAM, lf, None, f"not in {remote.repo_id}@{remote.commit[:7]}; kept"))
            continue
        if not exists:
            if rel in CORE_FILES:
                out.append(FileStatus(rel, MISSING, lf, rf, "not in the local copy"))
            continue
        local_hash = lf.sha256 if rf.lfs_sha256 else lf.sha1
        if local_hash == rf.etag and lf.size == rf.size:
            if model.kind == "cache" and lf.blob_name and lf.blob_name != rf.etag:
                # content right, blob misnamed (someone copied a file over a blob): still fine to load
                out.append(FileStatus(rel, UP_TO_DATE, lf, rf, "content matches the Hub"))
            else:
                out.append(FileStatus(rel, UP_TO_DATE, lf, rf))
            continue
        recorded = lf.recorded
        if recorded and recorded not in (lf.sha1, lf.sha256):
            out.append(FileStatus(rel, MODIFIED, lf, rf, "edited since it was downloaded"))
        else:
            out.append(FileStatus(rel, STALE, lf, rf, "differs from the Hub"))
    return out

FALLBACK_TOKENS = {
    199998: "<|startoftext|>", 199999: "<|endoftext|>", 200002: "<|return|>", 200003: "<|constrain|>",
    200005: "<|channel|>", 200006: "<|start|>", 200007: "<|end|>", 200008: "<|message|>", 200012: "<|call|>",
}

CURRENT_EOS = [200002, 199999, 200012]

DIFF_MAX_BYTES = 256 * 1024

DIFF_MAX_LINES = 60

def token_name(tid: int) -> str:
    try:
        from gptoss_doctor.harmony.tokens import SPECIAL_TOKENS  # the lead's table, when present

        name = SPECIAL_TOKENS.get(tid)
    except Exception:  # noqa: BLE001 - optional module
        name = None
    return name or FALLBACK_TOKENS.get(tid, "?")

def eos_change(old: Optional[bytes], new: Optional[bytes]) -> Optional[dict]:
    def eos_of(data: Optional[bytes]):
        if data is None:
            return None
        try:
            v = json.loads(data.decode("utf-8")).get("eos_token_id")
        except (ValueError, AttributeError):
            return None
        return v if isinstance(v, list) else ([v] if isinstance(v, int) else None)

    a, b = eos_of(old), eos_of(new)
    if a is None and b is None:
        return None
    a, b = a or [], b or []
    added = [t for t in b if t not in a]
    removed = [t for t in a if t not in b]
    parts = [f"adds {t} {token_name(t)}" for t in added] + [f"removes {t} {token_name(t)}" for t in removed]
    return {
        "local": a, "hub": b, "added": added, "removed": removed,
        "text": "eos_token_id " + ", ".join(parts) if parts else ("eos_token_id unchanged" if a == b else "eos_token_id reordered"),
    }

def text_diff(rel: str, old: Optional[bytes], new: Optional[bytes], commit: str) -> list[str]:
    if old is not None and len(old) > DIFF_MAX_BYTES or new is not None and len(new) > DIFF_MAX_BYTES:
        return [f"(large file: {len(old or b'')} bytes locally, {len(new or b'')} bytes on the Hub; diff not shown)"]
    try:
        a = (old or b"").decode("utf-8").splitlines()
        b = (new or b"").decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return ["(binary content differs)"]
    lines = list(difflib.unified_diff(a, b, f"local/{rel}", f"hub/{rel}@{commit[:7]}", lineterm="", n=2))
    if len(lines) > DIFF_MAX_LINES:
        more = len(lines) - DIFF_MAX_LINES
        lines = lines[:DIFF_MAX_LINES] + [f"... {more} more diff lines"]
    return lines

"""fix-config: the Hub side — file metadata of a revision (no downloads to compare) and verified downloads of the
small files a refresh needs, each under a deadline. Nothing here writes to a model folder."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from gptoss_doctor import settings
from gptoss_doctor.errors import UnreachableError, describe_exception

from gptoss_doctor.fixconfig.locate import git_blob_sha1, is_commit, sha256_bytes

@dataclass
class RemoteFile:
    relpath: str
    size: int
    blob_id: str  # git sha1
    lfs_sha256: Optional[str] = None

    @property
    def etag(self) -> str:
        """The cache blob name: sha256 for LFS files, git sha1 otherwise."""
        return self.lfs_sha256 or self.blob_id

    def matches(self, data: bytes) -> bool:
        if len(data) != self.size:
            return False
        if self.lfs_sha256:
            return sha256_bytes(data) == self.lfs_sha256
        return git_blob_sha1(data) == self.blob_id

@dataclass
class RemoteState:
    repo_id: str
    revision: str
    commit: str
    files: dict[str, RemoteFile]
    siblings: list[str]

def hub_error(exc: BaseException, repo_id: str, revision: str) -> BaseException:
    """``exc`` as the DoctorError the one exception table (errors.describe_exception) makes of it for this repo, or
    ``exc`` itself when the table does not know it."""
    return describe_exception(exc, repo_id=repo_id, revision=revision) or exc

_TIMEOUT_SET = False

def hub_timeout() -> float:
    try:
        return max(0.5, float(os.environ.get("GPTOSS_DOCTOR_HUB_TIMEOUT", "10")))
    except ValueError:
        return 10.0

def _bound_http_waits() -> None:
    """huggingface_hub's shared client waits forever by default: a black-holed Hub would hang the command.

    Give it connect/read timeouts (GPTOSS_DOCTOR_HUB_TIMEOUT seconds, default 10) unless the program
    installed its own client factory. Calls that pass their own timeout keep it.
    """
    global _TIMEOUT_SET
    if _TIMEOUT_SET:
        return
    _TIMEOUT_SET = True
    try:
        from huggingface_hub.utils import _http

        if _http._GLOBAL_CLIENT_FACTORY is not _http.default_client_factory:
            return
        base = _http.default_client_factory
        t = hub_timeout()

        def factory():
            client = base()
            client.timeout = type(client.timeout)(t)
            return client

        _http.set_client_factory(factory)
    except Exception:  # noqa: BLE001 - an older/newer huggingface_hub: keep its behaviour
        pass

_DEADLINE: list[float] = []  # when this process's Hub work must be over (set by its first Hub call)

def _within_deadline(fn, *args, **kw):
    """Run one Hub call under the operation's deadline: GPTOSS_DOCTOR_HUB_TIMEOUT bounds the whole fix-config
    Hub exchange, not each read (a Hub that drips one byte per second stays under any per-read timeout).

    The call runs in a daemon thread that is abandoned at the deadline: it only ever writes into the scratch
    folder, and nothing is applied after a timeout."""
    import threading
    import time

    if not _DEADLINE:
        _DEADLINE.append(time.monotonic() + hub_timeout())
    remaining = _DEADLINE[0] - time.monotonic()
    box: dict = {}

    def run() -> None:
        try:
            box["value"] = fn(*args, **kw)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc

    t = threading.Thread(target=run, name="hub-call", daemon=True)
    if remaining > 0:
        t.start()
        t.join(remaining)
    if remaining <= 0 or t.is_alive():
        raise UnreachableError(f"the Hub at {settings.hub_endpoint_shown()} did not finish within "
                               f"{hub_timeout():g} s (GPTOSS_DOCTOR_HUB_TIMEOUT)", hint="nothing was changed")
    if "error" in box:
        raise box["error"]
    return box.get("value")

def fetch_remote(repo_id: str, revision: str, paths: list[str]) -> RemoteState:
    """Ask the Hub which commit ``revision`` is and the hashes of ``paths`` (no content downloaded)."""
    return _within_deadline(_fetch_remote, repo_id, revision, paths)

def _fetch_remote(repo_id: str, revision: str, paths: list[str]) -> RemoteState:
    if settings.hub_offline():
        raise hub_error(Exception("offline"), repo_id, revision)
    _bound_http_waits()
    try:
        from huggingface_hub import HfApi

        api = HfApi(endpoint=settings.hub_endpoint())
        info = api.model_info(repo_id, revision=revision, timeout=hub_timeout())
        commit = info.sha
        siblings = [s.rfilename for s in (info.siblings or [])]
        wanted = [p for p in paths if p in siblings] if siblings else list(paths)
        files: dict[str, RemoteFile] = {}
        if wanted:
            for item in api.get_paths_info(repo_id, wanted, revision=commit):
                if getattr(item, "blob_id", None) is None:
                    continue
                lfs = getattr(item, "lfs", None)
                files[item.path] = RemoteFile(item.path, int(item.size), item.blob_id, lfs.sha256 if lfs else None)
    except Exception as exc:  # noqa: BLE001 - mapped to one line
        mapped = hub_error(exc, repo_id, revision)
        if mapped is exc:
            raise
        raise mapped from exc
    if not commit or not is_commit(commit):
        raise UnreachableError(f"the Hub did not tell which commit {repo_id}@{revision} is")
    return RemoteState(repo_id=repo_id, revision=revision, commit=commit, files=files, siblings=siblings)

def download_verified(repo_id: str, commit: str, remote: RemoteFile, dest_dir: Path) -> bytes:
    """Download one file at ``commit`` into a scratch folder and return its verified bytes."""
    return _within_deadline(_download_verified, repo_id, commit, remote, dest_dir)

def _download_verified(repo_id: str, commit: str, remote: RemoteFile, dest_dir: Path) -> bytes:
    try:
        from huggingface_hub import hf_hub_download

        path = hf_hub_download(repo_id, remote.relpath, revision=commit, local_dir=str(dest_dir), endpoint=settings.hub_endpoint())
        data = Path(path).read_bytes()
    except Exception as exc:  # noqa: BLE001
        mapped = hub_error(exc, repo_id, commit)
        if mapped is exc:
            raise
        raise mapped from exc
    if not remote.matches(data):
        got = git_blob_sha1(data)
        raise UnreachableError(
            f"downloaded {remote.relpath} does not match the Hub's hash (size {len(data)} vs {remote.size}, sha1 {got[:12]})",
            hint="the transfer was corrupted or cut; nothing was changed — run the command again",
        )
    return data

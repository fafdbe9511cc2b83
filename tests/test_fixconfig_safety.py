"""fix-config on hostile or unusual copies (issue 20): a linked state folder or lock, a relocated ``blobs/``, a
compared file that is a link out of the folder, bad repo ids, very deep or huge folders, FIFOs. Real folders and a
real Hub-compatible server (olah on loopback), as in test_fixconfig.py."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.hub.fakehub import NEW_GEN, OLD_GEN
from tests.test_fixconfig import (  # noqa: F401 - env, folder and hub are the fixtures of test_fixconfig.py
    cache_root, env, folder, folder_state, hub, one_error_line, resolved_eos, run,
)


def _tree(top: Path) -> list[str]:
    return sorted(str(p.relative_to(top)) for p in top.rglob("*")) if top.exists() else []


# -- 5: the state folder ---------------------------------------------------------------------------------------------

def test_linked_state_folder_is_refused_and_nothing_is_written_outside(env, folder, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    if os.geteuid() == 0:  # run as root on a user's folder: nothing may be created (or chowned) outside either
        for p in [folder, *folder.rglob("*")]:
            os.lchown(p, 4321, 4321)
    (folder / ".cache").mkdir(exist_ok=True)
    os.symlink(outside, folder / ".cache" / "gptoss-doctor")
    r = run(env, str(folder), "--yes")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "symlink" in one_error_line(r.stderr)
    assert _tree(outside) == [] and folder_state(folder) == "old"
    assert os.stat(outside).st_uid == os.geteuid()


def test_linked_backups_folder_is_refused(env, folder, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    state = folder / ".cache" / "gptoss-doctor"
    state.mkdir(parents=True)
    os.symlink(outside, state / "backups")
    r = run(env, str(folder), "--yes")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "symlink" in one_error_line(r.stderr)
    assert _tree(outside) == [] and folder_state(folder) == "old"


def test_dangling_lock_link_creates_nothing_at_its_target(env, folder, tmp_path):
    state = folder / ".cache" / "gptoss-doctor"
    state.mkdir(parents=True)
    target = tmp_path / "planted-file"
    os.symlink(target, state / "lock")
    r = run(env, str(folder), "--yes")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "symlink" in one_error_line(r.stderr)
    assert not os.path.lexists(target) and folder_state(folder) == "old"


def test_cache_state_folder_link_refused_in_dry_run_too(env, tmp_path):
    outside = tmp_path / "elsewhere"
    (outside / "staging" / "x").mkdir(parents=True)
    (outside / "staging" / "x" / "keep").write_text("someone's file")
    os.symlink(outside, cache_root(env) / ".gptoss-doctor")
    r = run(env, "--dry-run")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "symlink" in one_error_line(r.stderr)
    assert (outside / "staging" / "x" / "keep").read_text() == "someone's file"  # never removed through the link


# -- 8: blobs/ on another disk -----------------------------------------------------------------------------------------

def test_relocated_blobs_are_read_and_never_written_through(env, tmp_path):
    root = cache_root(env)
    other = tmp_path / "otherdisk"
    other.mkdir()
    shutil.move(str(root / "blobs"), str(other / "blobs"))
    os.symlink(other / "blobs", root / "blobs")
    blobs_before = _tree(other / "blobs")
    snaps_before = sorted(p.name for p in (root / "snapshots").iterdir())

    r = run(env, "--dry-run")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "generation_config.json            stale: eos_token_id adds 200012 <|call|>" in r.stdout, r.stdout
    assert "files identical" not in r.stdout and "symlink leading out" not in r.stdout

    r = run(env, "--yes")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "refreshed" not in r.stdout and "does not write through it" in r.stdout + r.stderr
    assert resolved_eos(root) == OLD_GEN["eos_token_id"]
    assert sorted(p.name for p in (root / "snapshots").iterdir()) == snaps_before
    assert _tree(other / "blobs") == blobs_before

    r = run(env, "--dry-run")  # a later run still sees the stale copy
    assert r.returncode == 1 and "up to date with the Hub" not in r.stdout


# -- 9: a compared file that is a link out of the folder --------------------------------------------------------------

def test_generation_config_linked_out_of_the_folder_is_not_called_up_to_date(env, folder, tmp_path):
    assert run(env, str(folder), "--yes").returncode == 0
    outside = tmp_path / "my-generation_config.json"
    outside.write_text(json.dumps(OLD_GEN))
    (folder / "generation_config.json").unlink()
    os.symlink(outside, folder / "generation_config.json")
    r = run(env, str(folder))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "up to date with the Hub" not in r.stdout
    assert "not checked: generation_config.json" in r.stdout
    doc = json.loads(run(env, str(folder), "--json").stdout)
    assert doc["exit_code"] == 1 and doc["models"][0]["not_checked"] == ["generation_config.json"]
    assert outside.read_text() == json.dumps(OLD_GEN)


# -- 10: bad repo ids, deep and huge folders, FIFOs -------------------------------------------------------------------

@pytest.mark.parametrize("repo", ["-bad-", "a/b/c", "--yes", "a..b/c"])
def test_bad_repo_id_is_a_usage_error(env, folder, repo):
    r = run(env, str(folder), "--dry-run", f"--repo={repo}")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "is not a Hub repo id" in one_error_line(r.stderr)


def _nest(top: Path, depth: int) -> None:
    """``top/d/d/…/d`` ``depth`` levels deep, made one level at a time (os.makedirs itself recurses)."""
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            nxt = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nxt
    finally:
        os.close(fd)


def _unnest(top: Path, depth: int) -> None:
    for level in range(depth, 0, -1):
        os.rmdir(top / "/".join(["d"] * level))


def test_folder_1100_levels_deep_is_listed_without_recursion(env, folder):
    _nest(folder, 1100)
    try:
        r = run(env, str(folder), "--dry-run", timeout=120)
    finally:
        _unnest(folder, 1100)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert "generation_config.json" in r.stdout and "more than 8 folders deep" in r.stdout


def test_folder_linked_to_root_is_bounded(env, tmp_path):
    link = tmp_path / "gpt-oss-20b"
    os.symlink("/", link)
    r = run(env, str(link), "--repo", "openai/gpt-oss-20b", "--dry-run", timeout=120)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr


def test_only_compared_regular_files_are_opened(env, folder):
    # a FIFO blocks any blocking open(): a log that is not compared must not be opened, a compared file that is a
    # FIFO is reported as not checked instead of hanging the command
    os.mkfifo(folder / "server.log")
    (folder / "config.json").unlink()
    os.mkfifo(folder / "config.json")
    r = run(env, str(folder), "--dry-run", timeout=30)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "not a regular file" in r.stdout
    doc = json.loads(run(env, str(folder), "--dry-run", "--json", timeout=30).stdout)
    assert "config.json" in doc["models"][0]["not_checked"]


def test_mcp_repo_that_looks_like_an_option_is_a_usage_error(folder):
    import asyncio

    from tests.test_mcp import _doc, _session  # skipped without the MCP extra

    async def go(session):
        return _doc(await session.call_tool("fix_config_plan", {"target": str(folder), "repo": "--yes"}))

    doc = asyncio.run(_session(go))
    assert doc["ok"] is False and doc["error"]["kind"] == "usage" and doc["error"]["exit_code"] == 2, doc
    assert folder_state(folder) == "old"


# -- a tampered backup manifest: --restore trusts nothing in it ------------------------------------------------------

def _applied_backup(env, folder) -> tuple[Path, dict]:
    assert run(env, str(folder), "--yes").returncode == 0
    (bdir,) = (folder / ".cache" / "gptoss-doctor" / "backups").iterdir()
    return bdir, json.loads((bdir / "manifest.json").read_text())


def _write_manifest(bdir: Path, manifest: dict) -> None:
    (bdir / "manifest.json").write_text(json.dumps(manifest))


def test_restore_reads_no_copy_outside_its_backup(env, folder, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-KEY-MATERIAL")
    bdir, manifest = _applied_backup(env, folder)
    for e in manifest["files"]:
        if e.get("backup"):
            e["backup"] = os.path.relpath(secret, bdir)  # ../../../../secret.txt
    _write_manifest(bdir, manifest)
    r = run(env, str(folder), "--restore", "--yes")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "outside" in one_error_line(r.stderr)
    leaked = [p for p in folder.rglob("*") if p.is_file() and b"SECRET-KEY-MATERIAL" in p.read_bytes()]
    assert leaked == [] and folder_state(folder) == "new"


def test_restore_follows_no_copy_that_is_a_link_out(env, folder, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-KEY-MATERIAL")
    bdir, manifest = _applied_backup(env, folder)
    copy = next(bdir / e["backup"] for e in manifest["files"] if e.get("backup"))
    copy.unlink()
    os.symlink(secret, copy)
    r = run(env, str(folder), "--restore", "--yes")
    assert r.returncode == 2, r.stdout + r.stderr
    leaked = [p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()
              and b"SECRET-KEY-MATERIAL" in p.read_bytes()]
    assert leaked == [] and folder_state(folder) == "new"


def test_restore_writes_nothing_outside_for_a_traversing_id_or_path(env, folder, tmp_path):
    bdir, manifest = _applied_backup(env, folder)
    before = _tree(tmp_path / "models")
    # an id that climbs out: the staging folder would be made from it
    _write_manifest(bdir, {**manifest, "id": "../../../../escaped"})
    r = run(env, str(folder), "--restore", "--yes")
    assert r.returncode == 2, r.stdout + r.stderr
    assert not (tmp_path / "escaped").exists() and not any("escaped" in p for p in _tree(tmp_path))
    # a file path that climbs out
    files = [{**e, "path": "../../../escaped.json"} for e in manifest["files"]]
    _write_manifest(bdir, {**manifest, "files": files})
    r = run(env, str(folder), "--restore", "--yes")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "outside" in one_error_line(r.stderr)
    assert not any("escaped" in p for p in _tree(tmp_path)) and _tree(tmp_path / "models") == before


def test_restore_recreates_no_link_out_of_the_cache(env, hub, tmp_path):
    from tests.test_fixconfig import REPO_ID

    root = cache_root(env)
    assert run(env, REPO_ID, "--yes").returncode == 0
    (bdir,) = (root / ".gptoss-doctor" / "backups").iterdir()
    manifest = json.loads((bdir / "manifest.json").read_text())
    assert manifest.get("kind") == "cache"
    # an in-place refresh's backup re-creates the snapshot's links as they were: a tampered one points out
    manifest["in_place"] = True
    for e in manifest["files"]:
        e["old_link"] = "/etc/passwd"
    _write_manifest(bdir, manifest)
    r = run(env, REPO_ID, "--restore", "--yes")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "link out of the model folder" in one_error_line(r.stderr)
    links = [p for p in root.rglob("*") if p.is_symlink() and os.readlink(p) == "/etc/passwd"]
    assert links == []


@pytest.mark.parametrize("files", [[1], ["config.json"], [None, {}], [{"existed": True, "old_link": "x"}]])
def test_restore_of_a_manifest_with_malformed_file_entries_is_a_usage_error(env, hub, files):
    from tests.test_fixconfig import REPO_ID

    root = cache_root(env)
    assert run(env, REPO_ID, "--yes").returncode == 0
    (bdir,) = (root / ".gptoss-doctor" / "backups").iterdir()
    manifest = json.loads((bdir / "manifest.json").read_text())
    for in_place in (False, True):  # both ways a cache backup is restored read the same list
        _write_manifest(bdir, {**manifest, "in_place": in_place, "files": files})
        r = run(env, REPO_ID, "--restore", "--yes")
        assert r.returncode == 2, r.stdout + r.stderr
        assert "Traceback" not in r.stderr and one_error_line(r.stderr), r.stderr

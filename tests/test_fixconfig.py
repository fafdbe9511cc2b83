"""fix-config against a real Hub-compatible server (olah serving a local git repo) on loopback.

The repo openai/gpt-oss-20b has two commits: the release (eos [200002, 199999], old template)
and HEAD (eos [200002, 199999, 200012], fixed template). Users' copies are seeded at the
release commit; a fault proxy in front of olah cuts connections and answers 401 / gated.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.hub.fakehub import (
    NEW_GEN, OLD_GEN, REPO_ID, WEIGHT, FaultProxy, Olah, make_repo, seed_cache, seed_folder,
)

ROOT = Path(__file__).resolve().parent.parent
FILES = ["config.json", "generation_config.json", "chat_template.jinja", "tokenizer.json", "tokenizer_config.json",
         "special_tokens_map.json", "model.safetensors.index.json", WEIGHT]
CACHE_NAME = "models--openai--gpt-oss-20b"
SECRET = "hf_SeCrEtToKeN0123456789abcdef"


class Hub:
    def __init__(self, base: Path):
        self.base = base
        self.old, self.new = make_repo(base / "mirrors")
        self.old120, self.new120 = make_repo(base / "mirrors", "openai/gpt-oss-120b")
        self.olah = Olah(base, base / "mirrors").start()
        self.proxy = FaultProxy(self.olah.port).start()
        seed_cache(base / "seed-hf" / "hub", self.olah.url, self.old, FILES)
        seed_cache(base / "seed-hf-120b" / "hub", self.olah.url, self.old120, FILES, repo_id="openai/gpt-oss-120b")
        seed_folder(base / "seed-folder" / "gpt-oss-20b", self.olah.url, self.old, FILES)

    def stop(self):
        self.proxy.stop()
        self.olah.stop()


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    h = Hub(tmp_path_factory.mktemp("hub"))
    try:
        yield h
    finally:
        h.stop()


@pytest.fixture
def env(hub, tmp_path):
    hub.proxy.mode = None
    hub.proxy.cuts = 0
    hub.proxy.after_cut = "pass"
    hub.proxy.seen_auth.clear()
    hf_home = tmp_path / "hf"
    shutil.copytree(hub.base / "seed-hf", hf_home, symlinks=True)
    e = dict(os.environ)
    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_CACHE",
                "HUGGINGFACE_HUB_CACHE", "GPTOSS_DOCTOR_TEST_CRASH", "HF_ENDPOINT"):
        e.pop(var, None)
    e.update({"HF_ENDPOINT": hub.proxy.url, "HF_HOME": str(hf_home), "HF_HUB_DISABLE_TELEMETRY": "1",
              "HF_HUB_ETAG_TIMEOUT": "3", "HF_HUB_DOWNLOAD_TIMEOUT": "3", "NO_COLOR": "1",
              "PYTHONPATH": str(ROOT), "HF_HUB_DISABLE_XET": "1"})
    return e


@pytest.fixture
def folder(hub, tmp_path):
    dst = tmp_path / "models" / "gpt-oss-20b"
    shutil.copytree(hub.base / "seed-folder" / "gpt-oss-20b", dst, symlinks=True)
    return dst


def run(env, *args, extra=None, timeout=60, **kw):
    return run_cli("fix-config", *args, base_env=env, env=extra, timeout=timeout, text=True, **kw)


def cache_root(env) -> Path:
    return Path(env["HF_HOME"]) / "hub" / CACHE_NAME


def resolved_eos(root: Path) -> list[int]:
    """What transformers / vLLM load: refs/main -> snapshots/<commit>/generation_config.json."""
    commit = (root / "refs" / "main").read_text().strip()
    return json.loads((root / "snapshots" / commit / "generation_config.json").read_text())["eos_token_id"]


def snapshot_complete(root: Path) -> bool:
    commit = (root / "refs" / "main").read_text().strip()
    snap = root / "snapshots" / commit
    return all((snap / f).is_file() for f in FILES)


def folder_state(folder: Path) -> str:
    gen = json.loads((folder / "generation_config.json").read_text())["eos_token_id"]
    tmpl = (folder / "chat_template.jinja").read_text()
    g = "new" if gen == NEW_GEN["eos_token_id"] else "old"
    t = "new" if "fixed template" in tmpl else "old"
    return g if g == t else "mixed"


def one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def test_dry_run_reports_stale_cache_by_token_name(env):
    before = sorted(p.name for p in (cache_root(env) / "snapshots").iterdir())
    r = run(env, "--dry-run")
    assert r.returncode == 1, r.stderr
    out = r.stdout
    assert "generation_config.json" in out and "stale: eos_token_id adds 200012 <|call|>" in out
    assert "chat_template.jinja" in out and "fixed template" in out  # the diff is shown
    assert "config.json" in out and "up to date" in out
    assert f"{WEIGHT}" in out and "not read, not touched" in out
    assert "apply with: gptoss-doctor fix-config --yes" in out
    # a check only: the cache is untouched (refs/main not moved, no new snapshot)
    assert sorted(p.name for p in (cache_root(env) / "snapshots").iterdir()) == before
    assert resolved_eos(cache_root(env)) == OLD_GEN["eos_token_id"]


def test_json_document(env, hub):
    r = run(env, REPO_ID, "--dry-run", "--json")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["command"] == "fix-config" and doc["exit_code"] == 1 and doc["ok"] is False
    (m,) = doc["models"]
    assert m["kind"] == "cache" and m["local_commit"] == hub.old and m["hub_commit"] == hub.new
    status = {f["path"]: f["status"] for f in m["files"]}
    assert status["generation_config.json"] == "stale" and status["chat_template.jinja"] == "stale"
    assert status["config.json"] == "up-to-date" and status[WEIGHT] == "weight"
    assert m["eos_token_id"]["added"] == [200012] and "adds 200012 <|call|>" in m["eos_token_id"]["text"]


def test_every_gpt_oss_repo_in_the_cache(env, hub):
    shutil.copytree(hub.base / "seed-hf-120b" / "hub" / "models--openai--gpt-oss-120b",
                    Path(env["HF_HOME"]) / "hub" / "models--openai--gpt-oss-120b", symlinks=True)
    r = run(env, "--yes", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert sorted(m["repo_id"] for m in doc["models"]) == ["openai/gpt-oss-120b", "openai/gpt-oss-20b"]
    assert all(m["applied"] for m in doc["models"])
    root120 = Path(env["HF_HOME"]) / "hub" / "models--openai--gpt-oss-120b"
    assert resolved_eos(root120) == NEW_GEN["eos_token_id"] and resolved_eos(cache_root(env)) == NEW_GEN["eos_token_id"]
    assert (root120 / "refs" / "main").read_text() == hub.new120


def test_no_tty_without_yes_changes_nothing(env):
    r = run(env)
    assert r.returncode == 1
    assert "nothing changed" in r.stdout and "--yes" in r.stdout
    assert resolved_eos(cache_root(env)) == OLD_GEN["eos_token_id"]


# ---------------------------------------------------------------------------
# Apply / restore
# ---------------------------------------------------------------------------


def test_apply_cache_then_loaders_see_new_eos(env, hub):
    root = cache_root(env)
    weight_blob = (root / "snapshots" / hub.old / WEIGHT).resolve()
    wstat = weight_blob.stat()
    r = run(env, "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Restart every server" in r.stdout and "gptoss-doctor check" in r.stdout
    assert (root / "refs" / "main").read_text() == hub.new
    assert resolved_eos(root) == [200002, 199999, 200012]
    assert snapshot_complete(root)
    # the weight is linked, never copied or rewritten
    assert (root / "snapshots" / hub.new / WEIGHT).resolve() == weight_blob
    assert weight_blob.stat().st_mtime_ns == wstat.st_mtime_ns and weight_blob.stat().st_ino == wstat.st_ino
    # huggingface_hub offline resolution (what transformers/vLLM do with HF_HUB_OFFLINE=1)
    from huggingface_hub import hf_hub_download, try_to_load_from_cache

    p = hf_hub_download(REPO_ID, "generation_config.json", cache_dir=str(root.parent), local_files_only=True)
    assert json.loads(Path(p).read_text())["eos_token_id"] == [200002, 199999, 200012]
    assert "fixed template" in Path(try_to_load_from_cache(REPO_ID, "chat_template.jinja", cache_dir=str(root.parent))).read_text()
    # vLLM fetches weights with snapshot_download(local_files_only=HF_HUB_OFFLINE): the new snapshot is complete
    from huggingface_hub import snapshot_download

    snap = Path(snapshot_download(REPO_ID, cache_dir=str(root.parent), local_files_only=True,
                                  allow_patterns=["*.json", "*.safetensors"]))
    assert snap.name == hub.new and (snap / WEIGHT).is_file()
    # idempotent
    r2 = run(env)
    assert r2.returncode == 0 and "up to date with the Hub" in r2.stdout


def test_apply_cache_transformers_if_installed(env):
    transformers = pytest.importorskip("transformers")
    assert run(env, "--yes").returncode == 0
    gc = transformers.GenerationConfig.from_pretrained(REPO_ID, cache_dir=str(cache_root(env).parent), local_files_only=True)
    assert list(gc.eos_token_id) == [200002, 199999, 200012]


def test_pinned_snapshot_path(env, hub):
    root = cache_root(env)
    old_snap = root / "snapshots" / hub.old
    r = run(env, str(old_snap), "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "point it at" in r.stdout and hub.new in r.stdout
    assert resolved_eos(root) == NEW_GEN["eos_token_id"]
    # the old snapshot stays as it was (it is the record of the old commit)
    assert json.loads((old_snap / "generation_config.json").read_text())["eos_token_id"] == OLD_GEN["eos_token_id"]


def test_cache_missing_file_added_in_place_and_restored(env, hub):
    root = cache_root(env)
    assert run(env, "--yes").returncode == 0
    snap = root / "snapshots" / hub.new
    (snap / "tokenizer_config.json").unlink()
    r = run(env, "--dry-run")
    assert r.returncode == 1 and "tokenizer_config.json" in r.stdout and "missing locally" in r.stdout
    r = run(env, "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (snap / "tokenizer_config.json").is_file() and (root / "refs" / "main").read_text() == hub.new
    r = run(env, REPO_ID, "--restore", "--yes")
    assert r.returncode == 0 and not os.path.lexists(snap / "tokenizer_config.json")


def test_prompt_on_a_terminal(env, folder):
    import pty

    def answer(text):
        pid, fd = pty.fork()
        if pid == 0:  # child: stdin/stdout are the terminal
            os.environ.clear()
            os.environ.update(env)
            os.execv(sys.executable, [sys.executable, "-m", "gptoss_doctor", "fix-config", str(folder)])
        import select
        import time

        out = b""
        sent = False
        deadline = time.monotonic() + 60  # bounded: never hang the suite
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 1.0)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            if not sent and b"[y/N]" in out:
                os.write(fd, text)
                sent = True
        else:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        os.close(fd)
        return os.waitstatus_to_exitcode(status), out.decode(errors="replace")

    code, out = answer(b"n\n")
    assert code == 1 and "Apply these changes?" in out and folder_state(folder) == "old"
    code, out = answer(b"y\n")
    assert code == 0, out
    assert folder_state(folder) == "new"


def test_cache_without_symlinks(env, hub):
    """HF_HUB_DISABLE_SYMLINKS / Windows layout: snapshot files are plain files, blobs/ is empty."""
    root = cache_root(env)
    snap = root / "snapshots" / hub.old
    plain = root.parent / "plain-snap"
    shutil.copytree(snap, plain, symlinks=False)
    shutil.rmtree(snap)
    shutil.rmtree(root / "blobs")
    (root / "blobs").mkdir()
    plain.rename(snap)
    weight_ino = (snap / WEIGHT).stat().st_ino
    r = run(env, "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    new_snap = root / "snapshots" / hub.new
    assert resolved_eos(root) == NEW_GEN["eos_token_id"] and snapshot_complete(root)
    assert not any(p.is_symlink() for p in new_snap.iterdir())  # the layout is kept
    assert (new_snap / WEIGHT).stat().st_ino == weight_ino  # hard link, not a copy
    assert run(env, REPO_ID, "--restore", "--yes").returncode == 0
    assert resolved_eos(root) == OLD_GEN["eos_token_id"]


def test_cache_backup_and_restore(env, hub):
    root = cache_root(env)
    assert run(env, REPO_ID, "--yes").returncode == 0
    assert resolved_eos(root) == NEW_GEN["eos_token_id"]
    listing = run(env, REPO_ID, "--restore", "--dry-run")
    assert listing.returncode == 0 and f"{hub.old[:7]} -> {hub.new[:7]}" in listing.stdout
    r = run(env, REPO_ID, "--restore", "--yes")
    assert r.returncode == 0, r.stderr
    assert (root / "refs" / "main").read_text() == hub.old
    assert resolved_eos(root) == OLD_GEN["eos_token_id"] and snapshot_complete(root)


def test_folder_apply_keeps_mode_backs_up_and_restores(env, folder):
    os.chmod(folder / "generation_config.json", 0o640)
    old_gen = (folder / "generation_config.json").read_bytes()
    r = run(env, str(folder), "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "openai/gpt-oss-20b" in r.stdout and "repo from folder name" in r.stdout
    assert folder_state(folder) == "new"
    assert stat.S_IMODE((folder / "generation_config.json").stat().st_mode) == 0o640
    backups = list((folder / ".cache" / "gptoss-doctor" / "backups").iterdir())
    assert len(backups) == 1 and (backups[0] / "files" / "generation_config.json").read_bytes() == old_gen
    # hf download --local-dir metadata now records the new file (so it is not "modified locally" next time)
    assert run(env, str(folder)).returncode == 0
    r = run(env, str(folder), "--restore", "--yes")
    assert r.returncode == 0, r.stderr
    assert folder_state(folder) == "old" and (folder / "generation_config.json").read_bytes() == old_gen


def _owners(top: Path) -> set:
    return {(p.lstat().st_uid, p.lstat().st_gid) for p in [top, *top.rglob("*")]}


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to hand files to another user")
def test_run_as_root_keeps_the_owner(env, folder, hub):
    for p in [folder, *folder.rglob("*")]:
        os.lchown(p, 65534, 65534)
    assert run(env, str(folder), "--yes").returncode == 0 and folder_state(folder) == "new"
    assert _owners(folder) == {(65534, 65534)}
    root = cache_root(env)
    for p in [root, *root.rglob("*")]:
        os.lchown(p, 65534, 65534)
    assert run(env, "--yes").returncode == 0 and resolved_eos(root) == NEW_GEN["eos_token_id"]
    assert _owners(root) == {(65534, 65534)}


def test_folder_without_hf_metadata_identified_by_config(env, folder, tmp_path):
    plain = tmp_path / "mymodel"
    plain.mkdir()
    for f in ("config.json", "generation_config.json", "chat_template.jinja"):
        shutil.copy(folder / f, plain / f)
    r = run(env, str(plain), "--dry-run")
    assert r.returncode == 1
    assert "config.json (24 layers, 32 experts)" in r.stdout
    assert "tokenizer.json" in r.stdout and "missing locally" in r.stdout
    r = run(env, str(plain), "--yes")
    assert r.returncode == 0 and (plain / "tokenizer.json").is_file() and folder_state(plain) == "new"
    assert not (plain / WEIGHT).exists()  # weights are never downloaded


def test_unknown_folder_needs_repo(env, tmp_path):
    d = tmp_path / "something"
    d.mkdir()
    (d / "config.json").write_text("{}")
    r = run(env, str(d))
    assert r.returncode == 2 and "--repo" in r.stderr
    r = run(env, str(d), "--repo", REPO_ID, "--dry-run")
    assert r.returncode == 1 and "missing locally" in r.stdout


def test_modified_locally_kept_unless_force(env, folder):
    p = folder / "config.json"
    p.write_text(p.read_text().replace("24", "25"))
    r = run(env, str(folder), "--yes")
    assert "modified locally" in r.stdout and r.returncode == 1
    assert "25" in p.read_text() and folder_state(folder) == "new"
    r = run(env, str(folder), "--yes", "--force")
    assert r.returncode == 0 and '"num_hidden_layers": 24' in p.read_text()


def test_weights_are_never_opened(env, folder):
    # a FIFO blocks any open(): the command would hang if it read the weight file
    (folder / WEIGHT).unlink()
    os.mkfifo(folder / WEIGHT)
    r = run(env, str(folder), "--yes", timeout=30)
    assert r.returncode == 0, r.stderr
    assert stat.S_ISFIFO((folder / WEIGHT).lstat().st_mode)


def test_symlink_out_of_folder_not_followed(env, folder, tmp_path):
    outside = tmp_path / "outside.jinja"
    outside.write_text("mine")
    (folder / "chat_template.jinja").unlink()
    os.symlink(outside, folder / "chat_template.jinja")
    os.symlink(outside, folder / "hop")  # a chain that hops out: extra.lnk -> hop -> outside
    os.symlink("hop", folder / "extra.lnk")
    r = run(env, str(folder), "--dry-run")
    assert r.stdout.count("symlink leading out of the model folder") == 3, r.stdout  # chat_template.jinja, hop, extra.lnk
    r = run(env, str(folder), "--yes")
    assert "symlink leading out of the model folder" in r.stdout
    assert outside.read_text() == "mine" and (folder / "chat_template.jinja").is_symlink()
    assert json.loads((folder / "generation_config.json").read_text())["eos_token_id"] == NEW_GEN["eos_token_id"]


# ---------------------------------------------------------------------------
# Interruptions: old or new, and a re-run finishes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("point", ["staged:2", "journal", "op:2", "ops-done"])
def test_cache_killed_mid_apply(env, hub, point):
    root = cache_root(env)
    r = run(env, "--yes", extra={"GPTOSS_DOCTOR_TEST_CRASH": point})
    assert r.returncode == -signal.SIGKILL
    # whatever refs/main says is a complete, consistent snapshot: old or new
    assert snapshot_complete(root)
    assert resolved_eos(root) in (OLD_GEN["eos_token_id"], NEW_GEN["eos_token_id"])
    commit = (root / "refs" / "main").read_text()
    tmpl = (root / "snapshots" / commit / "chat_template.jinja").read_text()
    assert ("fixed template" in tmpl) == (commit == hub.new)
    r = run(env, "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    assert resolved_eos(root) == NEW_GEN["eos_token_id"] and snapshot_complete(root)
    assert not (root / ".gptoss-doctor" / "journal.json").exists()
    assert not any((root / ".gptoss-doctor" / "staging").glob("*")) if (root / ".gptoss-doctor" / "staging").exists() else True


@pytest.mark.parametrize("point", ["backed-up", "op:1"])
def test_folder_killed_mid_apply(env, folder, point):
    r = run(env, str(folder), "--yes", extra={"GPTOSS_DOCTOR_TEST_CRASH": point})
    assert r.returncode == -signal.SIGKILL
    journal = folder / ".cache" / "gptoss-doctor" / "journal.json"
    state = folder_state(folder)
    # before the journal: untouched; after it: decided, finished by the next run
    if point in ("staged:2", "backed-up"):
        assert state == "old" and not journal.exists()
    else:
        assert journal.exists()
    # even a run without --yes finishes a decided apply, and then reports the folder current
    r = run(env, str(folder), "--yes" if point == "backed-up" else "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert folder_state(folder) == "new" and not journal.exists()
    if point != "backed-up":
        assert json.loads(r.stdout)["models"][0]["recovered_interrupted_apply"]


@pytest.mark.parametrize("point,expect", [("staged:1:int", "old"), ("op:1:int", "new")])
def test_ctrl_c(env, folder, point, expect):
    r = run(env, str(folder), "--yes", extra={"GPTOSS_DOCTOR_TEST_CRASH": point})
    assert r.returncode == 130, r.stderr
    assert folder_state(folder) == expect  # Ctrl-C while renaming is held until the swap is complete
    assert ("had completed" if expect == "new" else "before any file changed") in r.stderr
    assert not (folder / ".cache" / "gptoss-doctor" / "journal.json").exists()


def test_connection_cut_mid_download_network_stays_down(env, hub, folder):
    hub.proxy.mode, hub.proxy.after_cut = "cut", "500"
    r = run(env, str(folder), "--yes")
    assert hub.proxy.cuts == 1
    assert r.returncode == 3, r.stdout + r.stderr
    one_error_line(r.stderr)
    assert folder_state(folder) == "old" and not (folder / ".cache" / "gptoss-doctor" / "journal.json").exists()
    hub.proxy.mode, hub.proxy.cuts = "cut", 0
    r = run(env, "--yes")  # the cache too
    assert r.returncode == 3 and hub.proxy.cuts == 1
    assert resolved_eos(cache_root(env)) == OLD_GEN["eos_token_id"] and snapshot_complete(cache_root(env))
    hub.proxy.mode = None
    assert run(env, str(folder), "--yes").returncode == 0 and folder_state(folder) == "new"


def test_connection_cut_once_is_resumed_and_verified(env, hub):
    hub.proxy.mode = "cut"
    r = run(env, "--yes")
    assert hub.proxy.cuts == 1
    assert r.returncode == 0, r.stdout + r.stderr
    assert resolved_eos(cache_root(env)) == NEW_GEN["eos_token_id"]


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def test_offline_one_line_exit_3(env):
    r = run(env, extra={"HF_HUB_OFFLINE": "1"})
    assert r.returncode == 3
    line = one_error_line(r.stderr)
    assert "HF_HUB_OFFLINE" in line
    assert "lacks 200012 <|call|>" in r.stderr  # what can be said without the Hub
    assert resolved_eos(cache_root(env)) == OLD_GEN["eos_token_id"]


def test_hub_unreachable_exit_3(env, hub):
    hub.proxy.mode = "down"
    r = run(env, "--json")
    assert r.returncode == 3
    one_error_line(r.stderr)
    assert json.loads(r.stdout)["error"]["exit_code"] == 3


def test_hub_that_never_answers_times_out(env, hub):
    import time

    hub.proxy.mode = "hang"
    t = time.monotonic()
    r = run(env, "--yes", extra={"GPTOSS_DOCTOR_HUB_TIMEOUT": "1"})
    assert r.returncode == 3, r.stdout + r.stderr
    line = one_error_line(r.stderr)
    assert "timed out" in line or "did not finish within 1 s" in line, line
    assert time.monotonic() - t < 20
    assert resolved_eos(cache_root(env)) == OLD_GEN["eos_token_id"]


def test_hub_that_drips_is_bounded_by_one_deadline(env, hub):
    import time

    hub.proxy.mode = "drip"
    t = time.monotonic()
    r = run(env, "--yes", extra={"GPTOSS_DOCTOR_HUB_TIMEOUT": "3"})
    took = time.monotonic() - t
    assert r.returncode == 3, r.stdout + r.stderr
    assert "did not finish within 3 s" in one_error_line(r.stderr)
    assert took < 15, took  # was 210 s: the timeout bounded each read, not the operation
    assert resolved_eos(cache_root(env)) == OLD_GEN["eos_token_id"]


def test_401_token_never_printed(env, hub):
    hub.proxy.mode = "401"
    r = run(env, "--yes", extra={"HF_TOKEN": SECRET})
    assert r.returncode == 4, r.stdout + r.stderr
    line = one_error_line(r.stderr)
    assert "401" in line and "rejected" in line
    assert SECRET not in r.stdout + r.stderr
    assert any(SECRET in a for a in hub.proxy.seen_auth)  # honoured (sent), never shown
    assert resolved_eos(cache_root(env)) == OLD_GEN["eos_token_id"]


def test_token_echoed_by_the_hub_is_redacted_even_in_debug_tracebacks(env, hub):
    hub.proxy.mode = "401echo"
    r = run(env, "--yes", extra={"HF_TOKEN": SECRET, "GPTOSS_DOCTOR_DEBUG": "1"})
    assert r.returncode == 4, r.stdout + r.stderr
    assert "Traceback" in r.stderr and SECRET not in r.stdout + r.stderr
    r = run(env, "--yes", "--json", extra={"HF_TOKEN": SECRET})
    assert r.returncode == 4 and SECRET not in r.stdout + r.stderr


def test_token_sent_on_success_never_printed(env, hub):
    r = run(env, "--yes", "--json", extra={"HF_TOKEN": SECRET, "GPTOSS_DOCTOR_DEBUG": "1"})
    assert r.returncode == 0
    assert SECRET not in r.stdout + r.stderr
    assert any(SECRET in a for a in hub.proxy.seen_auth)


def test_gated_exit_4(env, hub):
    hub.proxy.mode = "gated"
    r = run(env)
    assert r.returncode == 4
    assert "gated" in one_error_line(r.stderr)


def test_unknown_revision_and_repo(env, hub):
    # olah answers an unknown revision like the Hub answers an unknown/private repo: 401 RepoNotFound
    r = run(env, "--revision", "deadbeef")
    assert r.returncode == 2 and "the revision does not exist" in one_error_line(r.stderr)
    hub.proxy.mode = "norev"  # what the Hub answers for a bad revision of an existing repo
    r = run(env, "--revision", "no-such-branch")
    assert r.returncode == 2 and "no-such-branch" in one_error_line(r.stderr)
    hub.proxy.mode = None
    r = run(env, "someone/not-cached")
    assert r.returncode == 2 and "not in the Hugging Face cache" in one_error_line(r.stderr)


def test_file_missing_upstream_when_fetched(env, hub, folder):
    hub.proxy.mode = "gone"
    r = run(env, str(folder), "--yes")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "missing on the Hub" in one_error_line(r.stderr)
    assert folder_state(folder) == "old"


def test_no_cache_at_all(env, tmp_path):
    r = run(env, extra={"HF_HOME": str(tmp_path / "empty")})
    assert r.returncode == 2
    one_error_line(r.stderr)


def test_pinned_revision_commit(env, hub):
    r = run(env, "--revision", hub.old, "--dry-run")
    assert r.returncode == 0 and "up to date" in r.stdout


def _as_unprivileged(env, *args, **kw):
    """Run fix-config so that file modes apply even when the tests run as root (no CAP_DAC_OVERRIDE)."""
    if os.geteuid() != 0:
        return run(env, *args, **kw)
    if not shutil.which("setpriv"):
        pytest.skip("running as root without setpriv: a read-only folder cannot be simulated")
    e = dict(env)
    return subprocess.run(["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", sys.executable, "-m",
                           "gptoss_doctor", "fix-config", *args], env=e, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def test_read_only_folder(env, folder):
    before = (folder / "generation_config.json").read_bytes()
    os.chmod(folder, 0o555)
    try:
        r = _as_unprivileged(env, str(folder), "--yes")
        assert r.returncode == 2, r.stdout + r.stderr
        assert "read-only" in one_error_line(r.stderr)
        assert (folder / "generation_config.json").read_bytes() == before
    finally:
        os.chmod(folder, 0o755)


def test_read_only_cache(env):
    root = cache_root(env)
    os.chmod(root / "snapshots", 0o555)
    try:
        r = _as_unprivileged(env, "--yes")
        assert r.returncode == 2, r.stdout + r.stderr
        assert "read-only" in one_error_line(r.stderr)
        assert resolved_eos(root) == OLD_GEN["eos_token_id"]
    finally:
        os.chmod(root / "snapshots", 0o755)


def test_real_full_filesystem(env, folder, tmp_path):
    """A full tmpfs (root only): one line, exit 2, nothing changed."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("needs root to mount a small tmpfs")
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("cannot mount tmpfs here")
    try:
        dst = mnt / "gpt-oss-20b"
        shutil.copytree(folder, dst, symlinks=True)
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        r = run(env, str(dst), "--yes")
        assert r.returncode == 2, r.stdout + r.stderr
        assert "disk" in one_error_line(r.stderr)
        assert folder_state(dst) == "old" and not (dst / ".cache" / "gptoss-doctor" / "journal.json").exists()
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_disk_full_before_changes(env, folder, monkeypatch):
    """In-process: too little free space is refused before anything is written."""
    from collections import namedtuple

    from gptoss_doctor import fixconfig as fc
    from gptoss_doctor.fixconfig import locate
    from gptoss_doctor.errors import UsageError

    for k in ("HF_ENDPOINT",):
        monkeypatch.setenv(k, env[k])
    model = locate.find_models(str(folder))[0]
    rep = fc.build_report(model, "main", Path(tempfile.mkdtemp()))
    Usage = namedtuple("Usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: Usage(10, 10, 0))
    with pytest.raises(UsageError, match="not enough free disk space"):
        fc.apply(rep)
    assert folder_state(folder) == "old" and not (folder / ".cache" / "gptoss-doctor" / "journal.json").exists()


def test_enospc_while_staging_cleans_up(env, folder, monkeypatch):
    from gptoss_doctor import fixconfig as fc
    from gptoss_doctor.fixconfig import locate
    from gptoss_doctor.errors import UsageError

    monkeypatch.setenv("HF_ENDPOINT", env["HF_ENDPOINT"])
    model = locate.find_models(str(folder))[0]
    rep = fc.build_report(model, "main", Path(tempfile.mkdtemp()))
    real = fc.write_durable
    calls = []

    def full(path, data, mode=None):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device", str(path))
        return real(path, data, mode)

    import importlib

    apply_stage = importlib.import_module("gptoss_doctor.fixconfig.apply")  # the module (fc.apply is its function)
    monkeypatch.setattr(apply_stage, "write_durable", full)  # where the apply stage looks it up
    with pytest.raises(UsageError, match="disk full"):
        fc.apply(rep)
    assert folder_state(folder) == "old"
    assert not list((folder / ".cache" / "gptoss-doctor" / "staging").glob("*/*"))
    assert not list((folder / ".cache" / "gptoss-doctor" / "backups").glob("*"))

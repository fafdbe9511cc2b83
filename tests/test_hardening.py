"""Issue 20's crashes, unbounded work and wording outside fix-config: a full disk under --json, a huge config.json
for scan, a stalled vocabulary download, Ctrl-C during a check, and output at 80 columns. Real processes, real
files, real loopback servers."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from tests.conftest import ROOT, run_cli
from tests.emulators import serve


# -- --json to a full disk -------------------------------------------------------------------------------------------

@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize("args", [("kb", "list", "--json"), ("decode", "--json", "200006")])
def test_json_to_a_full_disk_is_one_line_on_stderr(args):
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "gptoss_doctor", *args], stdout=full, stderr=subprocess.PIPE,
                           text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr
    assert r.stderr.splitlines() == ["error: disk full: [Errno 28] No space left on device"], r.stderr


# -- scan: a huge config.json is not read whole ------------------------------------------------------------------------

def test_scan_does_not_load_a_huge_config_json(tmp_path):
    model = tmp_path / "mymodel"
    model.mkdir()
    (model / "generation_config.json").write_text('{"eos_token_id": [200002, 199999]}')
    with open(model / "config.json", "wb") as fh:
        fh.truncate(256 << 20)  # sparse: 256 MiB of zeros that cost no disk
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    r = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "gptoss_doctor", "scan", "--no-host",
                        "--json", str(tmp_path)], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    peak_mib = int(r.stdout.strip()) / 1024
    assert peak_mib < 150, f"scan peaked at {peak_mib:.0f} MiB"


# -- the vocabulary download: bounded, announced, remembered ----------------------------------------------------------

def test_stalled_vocabulary_download_is_bounded_announced_and_not_retried(tmp_path):
    accepted: list[socket.socket] = []
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    stop = threading.Event()

    def accept_and_stall() -> None:  # accepts, reads the request, never answers
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except OSError:
                continue
            accepted.append(c)

    t = threading.Thread(target=accept_and_stall, daemon=True)
    t.start()
    env = {"GPTOSS_DOCTOR_OFFLINE": "", "GPTOSS_DOCTOR_VOCAB_TIMEOUT": "2", "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "GPTOSS_DOCTOR_VOCAB_URL": f"http://127.0.0.1:{srv.getsockname()[1]}/o200k_base.tiktoken",
           "HF_HOME": str(tmp_path / "hf"), "TMPDIR": str(tmp_path)}
    try:
        start = time.monotonic()
        first = run_cli("decode", "--json", "12606", env=env, timeout=30, text=True)
        first_s = time.monotonic() - start
        start = time.monotonic()
        second = run_cli("decode", "--json", "12606", env=env, timeout=30, text=True)
        second_s = time.monotonic() - start
    finally:
        stop.set()
        t.join(timeout=5)
        srv.close()
        for c in accepted:
            c.close()
    assert first.returncode == 1 and first_s < 10, (first_s, first.stderr)
    assert "downloading the o200k vocabulary" in first.stderr
    assert len(accepted) == 1  # the second run did not connect again
    assert second.returncode == 1 and second_s < first_s
    assert "not retried for an hour" in json.dumps(json.loads(second.stdout))


# -- Ctrl-C during a check ---------------------------------------------------------------------------------------------

def test_ctrl_c_during_a_check_exits_130_without_warnings():
    outputs = []
    with serve("vllm", faults=("slow",)) as srv:  # every answer takes 1.5 s: a full check takes 3 s or more
        for delay in (1.2, 1.9, 2.5, 3.0):
            p = subprocess.Popen([sys.executable, "-m", "gptoss_doctor", "check", srv.url], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                                 env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"})
            time.sleep(delay)
            if p.poll() is None:  # (a check that already finished on a fast machine is not a sample)
                p.send_signal(signal.SIGINT)
                out, err = p.communicate(timeout=30)
                outputs.append((delay, p.returncode, err))
            else:
                p.communicate(timeout=30)
    assert len(outputs) >= 2, outputs
    for delay, code, err in outputs:
        assert code == 130, (delay, err)
        assert "never awaited" not in err and "Traceback" not in err, (delay, err)
        assert err.strip().splitlines() == ["interrupted"], (delay, err)


# -- 80 columns ------------------------------------------------------------------------------------------------------

def test_kb_list_at_80_columns_keeps_each_id_on_one_line():
    r = run_cli("kb", "list", env={"COLUMNS": "80"}, text=True)
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 80
    entries = json.loads(run_cli("kb", "list", "--json", text=True).stdout)["entries"]
    ids = {e["id"] for e in entries}
    for e in entries:  # each id alone on its line, whole; engines, origin and title under it (wrapped at spaces)
        i = lines.index(e["id"])
        rest = []
        for ln in lines[i + 1:]:
            if ln in ids or not ln.startswith("  "):
                break
            rest.append(ln.strip())
        assert " ".join(rest).startswith(f"{', '.join(e['engines'])} · {e['origin']} ·"), lines[i:i + 3]


def test_help_fits_80_columns():
    wide = []
    for args in [(), ("check",), ("explain",), ("decode",), ("fix-config",), ("kb",), ("kb", "list"), ("scan",),
                 ("mcp",)]:
        r = run_cli(*args, "--help", env={"COLUMNS": "80"}, text=True)
        assert r.returncode == 0
        wide += [(args, ln) for ln in r.stdout.splitlines() if len(ln) > 80]
    assert not wide, wide


def test_stderr_notes_wrap_at_the_terminal_width():
    r = run_cli("kb", "list", "--engine", "no-such-engine-" * 20, env={"COLUMNS": "80"}, text=True)
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert lines[0].startswith("error: unknown engine") and any(ln.startswith("hint: one of: ") for ln in lines)
    assert len(lines) > 2 and all(len(ln) <= 80 for ln in lines), r.stderr
    assert all(ln.startswith(("error: ", "hint: ", "       ", "      ")) for ln in lines), r.stderr

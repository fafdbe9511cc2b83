"""`gptoss-doctor check` with no URL (issue 19 item 6): the gpt-oss servers of this host, from the running launches
scan reads and from each engine's default port; with none, where it looked and how to name a URL (exit 3)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from conftest import ROOT, run_cli
from tests.emulators import serve
from tests.realservers import free_port

CHILD = ("import sys, time; sys.path[:0] = [sys.argv[-1], sys.argv[-1] + '/tests']\n"
         "from tests.emulators import create\n"
         "port = int(sys.argv[sys.argv.index('--port') + 1])\n"
         "create('vllm').start(port); print('ready', flush=True); time.sleep(120)\n")


def test_a_running_vllm_launch_is_found_and_checked():
    port = free_port()
    # a process whose command line is a vLLM launch (as scan sees it in /proc), serving the vLLM emulator there
    proc = subprocess.Popen([sys.executable, "-c", CHILD, "vllm", "serve", "openai/gpt-oss-20b", "--port", str(port),
                             "--enable-auto-tool-choice", "--tool-call-parser", "openai", str(ROOT)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        r = run_cli("check", "--quick", "--json", timeout=120)
        human = run_cli("check", "--quick", timeout=120)
    finally:
        proc.kill()
        proc.wait()
    doc = json.loads(r.stdout)
    mine = [t for t in doc["targets"] if t["url"] == f"http://127.0.0.1:{port}"]
    assert mine and mine[0]["engine"]["name"] == "vllm", doc["targets"]
    assert f"found http://127.0.0.1:{port}: pid {proc.pid}" in human.stderr.decode()


def test_a_server_on_its_default_port_is_found():
    port = 23333  # LMDeploy's default port
    with socket.socket() as s:
        if s.connect_ex(("127.0.0.1", port)) == 0:
            pytest.skip(f"port {port} is in use on this machine")
    with serve("lmdeploy", port=port):
        r = run_cli("check", "--quick", "--json", timeout=120)
    doc = json.loads(r.stdout)
    assert any(t["url"] == f"http://127.0.0.1:{port}" and t["engine"]["name"] == "lmdeploy" for t in doc["targets"])


def test_nothing_found_says_where_it_looked(tmp_path):
    # PATH without docker; the default ports are whatever this machine has open — only run when they are all closed
    from gptoss_doctor import engines

    busy = [p.default_port for p in engines.PROFILES if p.default_port and socket.socket().connect_ex(("127.0.0.1", p.default_port)) == 0]
    if busy:
        pytest.skip(f"default ports in use on this machine: {busy}")
    r = run_cli("check", "--json", env={"PATH": str(tmp_path)}, timeout=60)
    if r.returncode != 3:
        pytest.skip("an engine launch is running on this machine")  # another process that looks like a server
    doc = json.loads(r.stdout)
    assert doc["error"]["kind"] == "unreachable"
    assert "default ports on 127.0.0.1" in doc["error"]["message"] and "gptoss-doctor check http" in doc["error"]["hint"]
    human = run_cli("check", env={"PATH": str(tmp_path)}, timeout=60)
    assert human.returncode == 3 and b"Traceback" not in human.stderr

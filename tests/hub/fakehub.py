"""A Hub-compatible server on loopback for fix-config tests.

``make_repo`` builds the git repository ``models/openai/gpt-oss-20b`` with two commits
(the first with the old generation_config.json / chat_template.jinja, HEAD with the new
ones, plus a tiny fake weight file). ``Olah`` serves it with olah (PyPI ``olah``) in
offline mirror mode; ``FaultProxy`` sits in front of it to cut connections or answer
401 / gated / 500 for the faults olah cannot produce.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO_ID = "openai/gpt-oss-20b"
OLD_GEN = {"bos_token_id": 199998, "do_sample": True, "eos_token_id": [200002, 199999],
           "pad_token_id": 199999, "transformers_version": "4.55.0.dev0"}
NEW_GEN = dict(OLD_GEN, eos_token_id=[200002, 199999, 200012])
CONFIG = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "num_hidden_layers": 24,
          "num_local_experts": 32, "eos_token_id": 200002, "pad_token_id": 199999, "vocab_size": 201088}
OLD_TEMPLATE = "{#- old template -#}\n{{- '<|start|>system<|message|>' }}\n{%- for m in messages %}{{ m.content }}<|end|>{%- endfor %}\n"
NEW_TEMPLATE = "{#- fixed template -#}\n{{- '<|start|>system<|message|>' }}\n{%- for m in messages %}{{ m.content }}\n\n<|end|>{%- endfor %}\n"
WEIGHT_BYTES = b"FAKE-WEIGHTS-" * 64
WEIGHT = "model-00000-of-00001.safetensors"


def dump(obj) -> str:
    return json.dumps(obj, indent=2) + "\n"


def _git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t", GIT_CONFIG_NOSYSTEM="1", HOME=str(cwd))
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


def make_repo(mirrors: Path, repo_id: str = REPO_ID) -> tuple[str, str]:
    """Create the mirror git repo; return (old_commit, new_commit)."""
    org, name = repo_id.split("/")
    repo = mirrors / "models" / org / name
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    files = {
        "config.json": dump(CONFIG),
        "generation_config.json": dump(OLD_GEN),
        "chat_template.jinja": OLD_TEMPLATE,
        "tokenizer_config.json": dump({"bos_token": "<|startoftext|>", "eos_token": "<|return|>", "pad_token": "<|endoftext|>"}),
        "special_tokens_map.json": dump({"bos_token": "<|startoftext|>", "eos_token": "<|return|>", "pad_token": "<|endoftext|>"}),
        "tokenizer.json": dump({"version": "1.0", "model": {"type": "BPE", "vocab": {"a": 0}}}),
        "model.safetensors.index.json": dump({"weight_map": {"x": WEIGHT}}),
        "README.md": "# gpt-oss-20b\n",
    }
    if repo_id.endswith("120b"):
        files["config.json"] = dump(dict(CONFIG, num_hidden_layers=36, num_local_experts=128))
    for k, v in files.items():
        (repo / k).write_text(v)
    (repo / WEIGHT).write_bytes(WEIGHT_BYTES)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "release")
    old = _git(repo, "rev-parse", "HEAD")
    (repo / "generation_config.json").write_text(dump(NEW_GEN))
    (repo / "chat_template.jinja").write_text(NEW_TEMPLATE)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "add <|call|> to eos; fix template")
    new = _git(repo, "rev-parse", "HEAD")
    return old, new


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url_host: str, port: int, path: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            c = http.client.HTTPConnection(url_host, port, timeout=2)
            c.request("HEAD", path)
            r = c.getresponse()
            r.read()
            c.close()
            if r.status == 200:
                return
            last = r.status
        except OSError as exc:
            last = exc
        time.sleep(0.1)
    raise RuntimeError(f"server on port {port} not ready: {last}")


class Olah:
    """olah serving ``mirrors`` (offline mirror mode) on a free loopback port."""

    def __init__(self, workdir: Path, mirrors: Path):
        self.workdir = workdir
        self.mirrors = mirrors
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "Olah":
        cfg = self.workdir / "olah.toml"
        cfg.write_text(
            "[basic]\n"
            f'host = "127.0.0.1"\nport = {self.port}\n'
            f'repos-path = "{self.workdir / "olah-repos"}"\n'
            f'mirrors-path = ["{self.mirrors}"]\n'
            "metadata-cache-ttl = 0\n"
            "[accessibility]\noffline = true\n"
        )
        exe = Path(sys.executable).with_name("olah-cli")
        cmd = [str(exe)] if exe.exists() else [sys.executable, "-c", "from olah.server import cli; cli()"]
        self.log = open(self.workdir / "olah.log", "wb")
        self.proc = subprocess.Popen(cmd + ["-c", str(cfg)], cwd=self.workdir, stdout=self.log, stderr=subprocess.STDOUT)
        try:
            wait_http("127.0.0.1", self.port, f"/{REPO_ID}/resolve/main/config.json")
        except Exception:
            self.stop()
            raise RuntimeError("olah did not start: " + (self.workdir / "olah.log").read_text()[-2000:])
        return self

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        if getattr(self, "log", None):
            self.log.close()


class FaultProxy:
    """HTTP proxy in front of the Hub that injects faults.

    ``mode``: None (pass through), "cut" (the first GET /resolve/ of ``path_match`` sends half its body then
    closes; later requests pass, or get 500 when ``after_cut`` is "500"),
    "401", "gated", "500", "norev" (404 RevisionNotFound, as the real Hub answers),
    "gone" (404 EntryNotFound for ``path_match``: listed by the API but missing when fetched), "down" (closes every
    connection at once), "hang" (never answers), "drip" (answers one byte per second).
    Records the Authorization headers it saw (to prove the token is sent but never printed).
    """

    def __init__(self, upstream_port: int):
        self.upstream_port = upstream_port
        self.mode: str | None = None
        self.path_match = "generation_config.json"
        self.after_cut: str = "pass"  # after one cut: "pass" (the network recovers) or "500" (it stays broken)
        self.cuts = 0
        self.release = threading.Event()  # ends "hang" waits (set at stop)
        self.seen_auth: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # quiet
                pass

            def _forward(self, method: str):
                auth = self.headers.get("Authorization")
                if auth:
                    proxy.seen_auth.append(auth)
                mode = proxy.mode
                if mode == "cut" and proxy.cuts and proxy.after_cut == "500":
                    mode = "500"
                elif mode == "cut" and proxy.cuts:
                    mode = None
                if mode == "hang":  # accept, read the request, never answer (a black-holed Hub)
                    proxy.release.wait(20)
                    self.close_connection = True
                    return
                if mode == "drip":  # answer at once, then one byte per second, under any per-read timeout
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "100000")
                    self.end_headers()
                    for _ in range(100000):
                        if proxy.release.wait(1.0):
                            break
                        try:
                            self.wfile.write(b" ")
                            self.wfile.flush()
                        except OSError:
                            break
                    self.close_connection = True
                    return
                if mode == "down":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if mode == "401echo":  # a Hub (or proxy) that echoes the token back in its error
                    auth = self.headers.get("Authorization", "")
                    body = json.dumps({"error": f"Invalid credentials: {auth}"}).encode()
                    self.send_response(401)
                    self.send_header("X-Error-Message", f"Invalid credentials in Authorization header {auth}")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    if method != "HEAD":
                        self.wfile.write(body)
                    return
                if mode in ("401", "gated"):
                    self.send_response(401 if mode == "401" else 403)
                    if mode == "gated":
                        self.send_header("X-Error-Code", "GatedRepo")
                        self.send_header("X-Error-Message", "Access to model openai/gpt-oss-20b is restricted.")
                    else:
                        self.send_header("X-Error-Message", "Invalid credentials in Authorization header")
                    body = b'{"error":"denied"}'
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    if method != "HEAD":
                        self.wfile.write(body)
                    return
                if mode == "norev" and ("/revision/" in self.path or "/resolve/" in self.path):
                    self.send_response(404)
                    self.send_header("X-Error-Code", "RevisionNotFound")
                    self.send_header("X-Error-Message", "Invalid rev id: no-such-branch")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if mode == "gone" and "/resolve/" in self.path and self.path.endswith(proxy.path_match):
                    self.send_response(404)
                    self.send_header("X-Error-Code", "EntryNotFound")
                    self.send_header("X-Error-Message", "Entry not found")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if mode == "500":
                    self.send_response(500)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                up = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=20)
                up.request(method, self.path, body=body, headers=headers)
                resp = up.getresponse()
                data = resp.read()
                up.close()
                cut = mode == "cut" and method == "GET" and "/resolve/" in self.path and self.path.endswith(proxy.path_match)
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length", "server", "date"):
                        self.send_header(k, v)
                length = resp.getheader("Content-Length") if method == "HEAD" else None
                self.send_header("Content-Length", length if length is not None else str(len(data)))
                self.end_headers()
                if method == "HEAD":
                    return
                if cut:
                    proxy.cuts += 1
                    self.wfile.write(data[: max(1, len(data) // 2)])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(data)

            def do_GET(self):
                self._forward("GET")

            def do_HEAD(self):
                self._forward("HEAD")

            def do_POST(self):
                self._forward("POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "FaultProxy":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def seed_cache(hub_cache: Path, endpoint: str, commit: str, files: list[str], repo_id: str = REPO_ID) -> Path:
    """A user's cache as left by a download at ``commit`` (refs/main -> commit)."""
    from huggingface_hub import hf_hub_download

    for f in files:
        hf_hub_download(repo_id, f, revision=commit, cache_dir=str(hub_cache), endpoint=endpoint)
    root = hub_cache / ("models--" + repo_id.replace("/", "--"))
    (root / "refs").mkdir(exist_ok=True)
    (root / "refs" / "main").write_text(commit)
    return root


def seed_folder(folder: Path, endpoint: str, commit: str, files: list[str], repo_id: str = REPO_ID) -> Path:
    """A ``hf download --local-dir`` folder at ``commit``."""
    from huggingface_hub import hf_hub_download

    for f in files:
        hf_hub_download(repo_id, f, revision=commit, local_dir=str(folder), endpoint=endpoint)
    return folder

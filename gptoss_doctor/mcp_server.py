"""``gptoss-doctor mcp``: the doctor as tools for agents, over stdio, built on the official MCP Python SDK.

Each tool runs the same command a person runs, with ``--json``, in a child process, and returns that one JSON
document unchanged: the agent gets exactly what the CLI prints, a crash in one call cannot take the server down,
and every call has a deadline. Nothing that writes is reachable without ``confirm=True``; API keys are never tool
arguments (``check`` reads them from an environment variable of the server process, named by the agent).

The SDK is an optional extra (``pip install 'gptoss-doctor[mcp]'``) and is imported only by this command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any, Optional

INSTRUCTIONS = (
    "gptoss-doctor diagnoses gpt-oss / Harmony serving problems (vLLM, SGLang, lmdeploy, llama.cpp, Ollama, LM Studio, "
    "TensorRT-LLM, litellm and agent clients). Use `explain` on an error message, log excerpt or symptom description; "
    "`check` to probe a running OpenAI-compatible server; `scan` to read launch files on this host; `kb_search` / "
    "`kb_show` to browse known issues; `decode` for Harmony token IDs; `fix_config_plan` to see whether local model "
    "files are stale. Every tool returns the JSON document the CLI prints with --json."
)
DEADLINES = {"explain": 60, "decode": 30, "kb": 30, "check": 300, "scan": 120, "fix-config": 180}


def _run(args: list[str], deadline: float, stdin: Optional[str] = None,
         extra_env: Optional[dict[str, str]] = None) -> dict[str, Any]:
    """Run ``gptoss-doctor ARGS --json`` and return its document (or an error document of the same shape)."""
    env = dict(os.environ)
    env.update(extra_env or {})
    env.pop("GPTOSS_DOCTOR_DEBUG", None)  # tracebacks would go to stderr anyway; keep documents clean
    cmd = [sys.executable, "-m", "gptoss_doctor", *args]
    try:
        proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=deadline, env=env)
    except subprocess.TimeoutExpired:
        return {"schema_version": 1, "command": args[0], "ok": False,
                "error": {"kind": "timeout", "message": f"no answer within {deadline:g} s", "exit_code": 3}}
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        last = (proc.stderr or "").strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        return {"schema_version": 1, "command": args[0], "ok": False,
                "error": {"kind": "internal", "message": last[0][:300], "exit_code": proc.returncode}}
    if isinstance(doc, dict):
        doc.setdefault("exit_code", proc.returncode)
    return doc


def build_server():
    from mcp.server.mcpserver import MCPServer
    from mcp_types import ToolAnnotations

    from gptoss_doctor import __version__

    server = MCPServer(name="gptoss-doctor", version=__version__, instructions=INSTRUCTIONS)
    read_only = ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False)
    probing = ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=True)

    @server.tool(annotations=read_only)
    def explain(text: str, engine: Optional[str] = None, top: int = 5, allow_download: bool = False) -> dict:
        """Explain a gpt-oss error message, log excerpt, traceback or symptom description: decoded token IDs, where
        it was raised, the known issues that explain it (best first) with evidence and fixes per layer, and the
        Harmony messages recovered from leaked output. allow_download lets it fetch the o200k vocabulary."""
        args = ["explain", "--json", "--top", str(max(1, min(top, 50)))]
        if engine:
            args += ["--engine", engine]
        if not allow_download:
            args.append("--offline")
        return _run([*args, "-"], DEADLINES["explain"], stdin=text)

    @server.tool(annotations=read_only)
    def decode(ids: list[int]) -> dict:
        """Decode o200k_harmony token IDs (e.g. 200006 = <|start|>, 200012 = <|call|>)."""
        return _run(["decode", "--json", "--offline", "--", *[str(i) for i in ids[:10000]]], DEADLINES["decode"])

    @server.tool(annotations=read_only)
    def kb_search(query: str, top: int = 8) -> dict:
        """Search the knowledge base of known gpt-oss serving issues by words, an error message or a symptom."""
        return _run(["kb", "search", "--json", "--top", str(max(1, min(top, 100))), "--", query], DEADLINES["kb"])

    @server.tool(annotations=read_only)
    def kb_show(entry_id: str) -> dict:
        """Show one knowledge-base entry in full: causes, fixes, versions, references."""
        return _run(["kb", "show", "--json", "--", entry_id], DEADLINES["kb"])

    @server.tool(annotations=probing)
    def check(url: str, model: Optional[str] = None, deep: bool = False, quick: bool = False,
              api_key_env: Optional[str] = None, timeout: float = 30.0) -> dict:
        """Probe a running OpenAI-compatible server serving gpt-oss: engine and version, stop tokens, chat,
        reasoning, tool calls (streamed and not), Responses API with deep=True. Sends only tiny requests.
        api_key_env names an environment variable of this server process that holds the API key (keys are never
        tool arguments)."""
        args = ["check", "--json", "--timeout", str(max(0.1, min(timeout, 120.0)))]
        if model:
            args += ["--model", model]
        if deep:
            args.append("--deep")
        if quick:
            args.append("--quick")
        env_key = os.environ.get(api_key_env or "", "") if api_key_env else ""
        if api_key_env and not env_key:
            return {"schema_version": 1, "command": "check", "ok": False, "error": {
                "kind": "usage", "message": f"environment variable {api_key_env} is not set in the MCP server",
                "exit_code": 2}}
        # the child reads the key from OPENAI_API_KEY (check --api-key's variable): it never appears in argv
        return _run([*args, "--", url], DEADLINES["check"], extra_env={"OPENAI_API_KEY": env_key} if env_key else None)

    @server.tool(annotations=read_only)
    def scan(paths: Optional[list[str]] = None, processes: Optional[bool] = None, host: bool = True) -> dict:
        """Scan launch files (compose, Kubernetes, Dockerfiles, scripts, systemd, .env, litellm configs) under
        paths, and with no paths this host's processes, containers, engine versions, GPUs and model copies.
        Read-only; secrets are reported by name and place, never by value."""
        args = ["scan", "--json"]
        if processes is not None:
            args.append("--processes" if processes else "--no-processes")
        if not host:
            args.append("--no-host")
        return _run([*args, "--", *(paths or [])], DEADLINES["scan"])

    @server.tool(annotations=read_only)
    def fix_config_plan(target: Optional[str] = None, repo: Optional[str] = None) -> dict:
        """Compare local gpt-oss model files (a folder, an HF-cache repo, or every gpt-oss copy in the cache) with
        the Hub and list what fix-config would change. Changes nothing."""
        args = ["fix-config", "--json", "--dry-run"]
        if repo:
            args += ["--repo", repo]
        return _run([*args, *(["--", target] if target else [])], DEADLINES["fix-config"])

    @server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True,
                                             openWorldHint=True))
    def fix_config_apply(confirm: bool, target: Optional[str] = None, repo: Optional[str] = None) -> dict:
        """Refresh stale gpt-oss model files (generation_config.json, chat template) from the Hub, atomically and
        with a backup. Writes to disk: only runs with confirm=True; call fix_config_plan first and show the plan."""
        if confirm is not True:
            return {"schema_version": 1, "command": "fix-config", "ok": False, "error": {
                "kind": "usage", "message": "fix_config_apply writes files: call it with confirm=true after "
                "reviewing fix_config_plan", "exit_code": 2}}
        args = ["fix-config", "--json", "--yes"]
        if repo:
            args += ["--repo", repo]
        return _run([*args, *(["--", target] if target else [])], DEADLINES["fix-config"])

    return server


def serve() -> None:
    build_server().run("stdio")

"""``gptoss-doctor mcp``: the doctor as tools for agents, over stdio, built on the official MCP Python SDK.

Each tool runs the same command a person runs, with ``--json``, in a child process, and returns that one JSON
document: the agent gets what the CLI prints, a crash in one call cannot take the server down, and every call has
a deadline. A document that reports a failure (an ``error`` object, or an exit code other than 0 and 1) comes back
with ``isError: true``, its message inside the document (the agent never sees stderr). Bad arguments (a wrong type,
``confirm: "yes"``, a NUL character) are refused with the same kind of document, never with a bare SDK message.

Secrets: an agent never chooses which secret goes where. API keys are never tool arguments; ``check`` can send one
key, the value of the variable the person named when starting the server (``--api-key-env``, default
``OPENAI_API_KEY``), and only to the hosts the person named then (``--allow-host``). Every other key variable is
removed from the children's environment. Nothing that writes is reachable without ``confirm: true`` (a JSON boolean).

The SDK is an optional extra (``pip install 'gptoss-doctor[mcp]'``) and is imported only by this command. The pinned
release (mcp 2.3.0) drops a line that is not a JSON-RPC message without answering; ``_AnsweringReader`` answers it
with the JSON-RPC 2.0 error the specification asks for (https://www.jsonrpc.org/specification#error_object).
"""

# no "from __future__ import annotations": the SDK reads the tools' annotations, some local to build_server

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Optional

from gptoss_doctor import rx as _rx
from gptoss_doctor.errors import UsageError, describe_exception
from gptoss_doctor.output.sink import printable
from gptoss_doctor.redact import SECRET_VARS, redact

INSTRUCTIONS = (
    "gptoss-doctor diagnoses gpt-oss / Harmony serving problems (vLLM, SGLang, lmdeploy, llama.cpp, Ollama, LM Studio, "
    "TensorRT-LLM, litellm and agent clients). Use `explain` on an error message, log excerpt or symptom description; "
    "`check` to probe a running OpenAI-compatible server; `scan` to read launch files on this host; `kb_search` / "
    "`kb_show` to browse known issues; `decode` for Harmony token IDs; `fix_config_plan` to see whether local model "
    "files are stale. Every tool returns the JSON document the CLI prints with --json."
)
DEADLINES = {"explain": 60, "decode": 30, "kb": 30, "check": 300, "scan": 120, "fix-config": 180}
COMMANDS = {"explain": "explain", "decode": "decode", "kb_search": "kb search", "kb_show": "kb show", "check": "check",
            "scan": "scan", "fix_config_plan": "fix-config", "fix_config_apply": "fix-config"}
ENV_NAME_RE = _rx.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


@dataclass
class KeyPolicy:
    """What the person allowed when starting the server: which variable's value ``check`` may send, and where."""

    env: str = "OPENAI_API_KEY"
    hosts: list[str] = field(default_factory=list)  # "host" (any port) or "host:port", lower case

    def allows(self, host: str, port: int) -> bool:
        return any(h in (host, f"{host}:{port}") for h in self.hosts)


def host_entry(raw: str) -> str:
    """A ``--allow-host`` value as it is compared: ``host`` or ``host:port`` (IPv6 in brackets), lower case."""
    from urllib.parse import urlsplit

    s = raw.strip().lower()
    s = s.split("://", 1)[1] if "://" in s else s
    try:
        parts = urlsplit("//" + s.split("/", 1)[0])
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or "@" in s.split("/", 1)[0]:
        shown = repr(printable(raw)[:80]) if "@" not in raw else "(a value with credentials, not shown)"
        raise UsageError(f"--allow-host {shown} is not a host name", hint="HOST or HOST:PORT, e.g. gpu-box:8000")
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{port}" if port else host


def _url_host(url: str) -> tuple[str, int]:
    from urllib.parse import urlsplit

    from gptoss_doctor.check.targets import normalize_url

    parts = urlsplit(normalize_url(url)[0])
    host = parts.hostname or ""
    return (f"[{host}]" if ":" in host else host), parts.port or (443 if parts.scheme == "https" else 80)


def error_doc(command: str, exc: BaseException) -> dict[str, Any]:
    """The failure document every command prints, for a refusal or failure of the MCP server itself (the one
    exception table in errors.py decides kind, message and exit code)."""
    err = describe_exception(exc)
    if err is None:
        kind, message, hint, code = "internal", f"internal error: {type(exc).__name__}: {exc}", None, 70
    else:
        kind, message, hint, code = err.kind, err.message, err.hint, err.exit_code
    return {"schema_version": 1, "command": command, "ok": False,
            "error": {"kind": kind, "message": redact(printable(message)), "hint": hint, "exit_code": code},
            "exit_code": code}


def failed(doc: dict[str, Any]) -> bool:
    """Does the document report that the command could not do its job (not merely that it found problems)?"""
    return "error" in doc or doc.get("exit_code") not in (0, 1, None)


def _stderr_message(stderr: str) -> str:
    """What the CLI said on stderr, for the document: the agent never sees stderr."""
    lines = [ln.strip(" │╭╰─") for ln in (stderr or "").splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith(("Usage:", "Try '"))]
    return redact(printable(" ".join(lines)))[:500]


def _child_env(extra_env: Optional[dict[str, str]], policy: KeyPolicy) -> dict[str, str]:
    env = dict(os.environ)
    for name in {*SECRET_VARS, policy.env} - {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}:  # the Hub token stays for fix-config
        env.pop(name, None)
    env.pop("GPTOSS_DOCTOR_DEBUG", None)  # tracebacks would go to stderr anyway; keep documents clean
    env.update(extra_env or {})
    return env


def _run(args: list[str], deadline: float, policy: Optional[KeyPolicy] = None, stdin: Optional[str] = None,
         extra_env: Optional[dict[str, str]] = None) -> dict[str, Any]:
    """Run ``gptoss-doctor ARGS --json`` and return its document (or an error document of the same shape)."""
    command = COMMANDS.get(args[0], args[0]) if args[0] != "kb" else f"kb {args[1]}"
    if any("\0" in a for a in args):
        return error_doc(command, UsageError("an argument contains a NUL character"))
    cmd = [sys.executable, "-m", "gptoss_doctor", *args]
    try:
        proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=deadline,
                              env=_child_env(extra_env, policy or KeyPolicy()))
    except subprocess.TimeoutExpired:
        doc = error_doc(command, UsageError(f"no answer within {deadline:g} s"))
        doc["error"].update(kind="timeout", exit_code=3)
        doc["exit_code"] = 3
        return doc
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        doc = error_doc(command, RuntimeError(_stderr_message(proc.stderr) or f"exit {proc.returncode}"))
        doc["error"]["exit_code"] = doc["exit_code"] = proc.returncode
        return doc
    doc.setdefault("exit_code", proc.returncode)
    err = doc.get("error")
    if isinstance(err, dict) and "see stderr" in str(err.get("message")):
        err["message"] = _stderr_message(proc.stderr) or err["message"]
    return doc


def _answer(doc: dict[str, Any]):
    """The tool result: the document as structured content and as text, isError when it reports a failure."""
    from mcp_types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=json.dumps(doc, ensure_ascii=False))],
                          structured_content=doc, is_error=failed(doc))


def _description(fn) -> str:
    """A docstring as one paragraph (no source indentation in what the agent reads)."""
    return " ".join((fn.__doc__ or "").split())


class _AnsweringReader:
    """The stdio transport's read stream, answering what the SDK would drop: a line that is not JSON gets a parse
    error (-32700, id null), a JSON value that is not a JSON-RPC message an invalid-request error (-32600) with the
    request's id when it has one, as JSON-RPC 2.0 section 5.1 says. Everything else passes through unchanged."""

    def __init__(self, inner, write_stream) -> None:
        self._inner, self._write = inner, write_stream

    @property
    def last_context(self):
        return getattr(self._inner, "last_context", None)

    async def receive(self):
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            await self._write.send(self._error_for(item))

    @staticmethod
    def _error_for(exc: Exception):
        from mcp.shared.message import SessionMessage
        from mcp_types import ErrorData, JSONRPCError

        errors = exc.errors() if hasattr(exc, "errors") else []
        if any(e.get("type") == "json_invalid" for e in errors) or not errors:
            return SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=-32700, message="Parse error")))
        ids = [e["input"].get("id") for e in errors if isinstance(e.get("input"), dict)]
        rid = next((i for i in ids if isinstance(i, str) or (isinstance(i, int) and not isinstance(i, bool))), None)
        return SessionMessage(JSONRPCError(jsonrpc="2.0", id=rid, error=ErrorData(
            code=-32600, message="Invalid Request: not a JSON-RPC 2.0 request, notification or response")))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self):
        return self

    async def __anext__(self):
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()


def build_server(policy: Optional[KeyPolicy] = None):
    from typing import Annotated

    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import CallToolResult, ToolAnnotations
    from pydantic import StrictBool

    from gptoss_doctor import __version__

    policy = policy or KeyPolicy()
    Doc = Annotated[CallToolResult, dict[str, Any]]  # noqa: N806 - returned as is, published as an object

    class Server(MCPServer):
        async def call_tool(self, name, arguments, context=None):
            """Arguments the SDK rejects come back as the doctor's usage document, the field named."""
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                cause = exc.__cause__
                if hasattr(cause, "errors"):
                    why = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in cause.errors())
                    return _answer(error_doc(COMMANDS.get(name, name), UsageError(f"invalid arguments: {why}")))
                return _answer(error_doc(COMMANDS.get(name, name), cause if cause is not None else exc))

    server = Server(name="gptoss-doctor", version=__version__, instructions=INSTRUCTIONS)
    read_only = ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False)
    probing = ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=True)
    writing = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=True)

    def tool(annotations):
        return lambda fn: server.tool(annotations=annotations, description=_description(fn))(fn)

    def run(*args, **kw) -> CallToolResult:
        return _answer(_run(list(args[0]), args[1], policy, **kw))

    @tool(read_only)
    def explain(text: str, engine: Optional[str] = None, top: int = 5, allow_download: bool = False) -> Doc:
        """Explain a gpt-oss error message, log excerpt, traceback or symptom description: decoded token IDs, where
        it was raised, the known issues that explain it (best first) with evidence and fixes per layer, and the
        Harmony messages recovered from leaked output. When no known issue is confident (triage.known false), the
        triage lists problem classes with their checks; each class's basis says whether the text showed it, said it
        or it is a guess, and triage.ask lists the facts to gather (the exact error line, the engine and version,
        the API and client) before explaining again. allow_download lets it fetch the o200k vocabulary."""
        args = ["explain", "--json", "--top", str(max(1, min(top, 50)))]
        if engine:
            args.append(f"--engine={engine}")  # one word: a value is never an option
        if not allow_download:
            args.append("--offline")
        return run([*args, "-"], DEADLINES["explain"], stdin=text)

    @tool(read_only)
    def decode(ids: list[int]) -> Doc:
        """Decode o200k_harmony token IDs (e.g. 200006 = <|start|>, 200012 = <|call|>), at most 10,000 per call:
        more is refused (ok false), never cut short."""
        from gptoss_doctor.harmony.tokens import MAX_DECODE_IDS

        if len(ids) > MAX_DECODE_IDS:
            return _answer(error_doc("decode", UsageError(
                f"too many IDs ({len(ids)}); decode at most {MAX_DECODE_IDS} at once")))
        return run(["decode", "--json", "--offline", "--", *[str(i) for i in ids]], DEADLINES["decode"])

    @tool(read_only)
    def kb_search(query: str, top: int = 8) -> Doc:
        """Search the knowledge base of known gpt-oss serving issues by words, an error message or a symptom."""
        return run(["kb", "search", "--json", "--top", str(max(1, min(top, 100))), "--", query], DEADLINES["kb"])

    @tool(read_only)
    def kb_show(entry_id: str) -> Doc:
        """Show one knowledge-base entry in full: causes, fixes, versions, references."""
        return run(["kb", "show", "--json", "--", entry_id], DEADLINES["kb"])

    @tool(probing)
    def check(url: str, model: Optional[str] = None, deep: bool = False, quick: bool = False,
              api_key_env: Optional[str] = None, timeout: float = 30.0) -> Doc:
        """Probe a running OpenAI-compatible server serving gpt-oss: engine and version, stop tokens, chat,
        reasoning, tool calls (streamed and not), Responses API with deep=True. Sends only tiny requests, and no API
        key unless api_key_env is given: it must be the variable the person allowed when starting this server
        (default OPENAI_API_KEY), and the URL's host one they named then (--allow-host); anything else is refused."""
        args = ["check", "--json", "--timeout", str(max(0.1, min(timeout, 120.0)))]
        if model:
            args.append(f"--model={model}")
        if deep:
            args.append("--deep")
        if quick:
            args.append("--quick")
        extra = None
        if api_key_env is not None:
            try:
                extra = {"OPENAI_API_KEY": _allowed_key(url, api_key_env, policy)}
            except UsageError as exc:
                return _answer(error_doc("check", exc))
        # the child reads the key from OPENAI_API_KEY (check --api-key's variable): it never appears in argv
        return run([*args, "--", url], DEADLINES["check"], extra_env=extra)

    @tool(read_only)
    def scan(paths: Optional[list[str]] = None, processes: Optional[bool] = None, host: bool = True) -> Doc:
        """Scan launch files (compose, Kubernetes, Dockerfiles, scripts, systemd, .env, litellm configs) under
        paths, and with no paths this host's processes, containers, engine versions, GPUs and model copies.
        Read-only; secrets are reported by name and place, never by value."""
        args = ["scan", "--json"]
        if processes is not None:
            args.append("--processes" if processes else "--no-processes")
        if not host:
            args.append("--no-host")
        return run([*args, "--", *(paths or [])], DEADLINES["scan"])

    @tool(probing)
    def fix_config_plan(target: Optional[str] = None, repo: Optional[str] = None) -> Doc:
        """Compare local gpt-oss model files (a folder, an HF-cache repo, or every gpt-oss copy in the cache) with
        the Hub and list what fix-config would change. Changes nothing."""
        args = ["fix-config", "--json", "--dry-run"]
        if repo:
            args.append(f"--repo={repo}")
        return run([*args, *(["--", target] if target else [])], DEADLINES["fix-config"])

    @tool(writing)
    def fix_config_apply(confirm: StrictBool, target: Optional[str] = None, repo: Optional[str] = None) -> Doc:
        """Refresh stale gpt-oss model files (generation_config.json, chat template) from the Hub, atomically and
        with a backup: it replaces files on disk. Runs only with confirm=true (a JSON boolean); call
        fix_config_plan first and show the plan."""
        if confirm is not True:
            return _answer(error_doc("fix-config", UsageError(
                "fix_config_apply writes files: call it with confirm=true after reviewing fix_config_plan")))
        args = ["fix-config", "--json", "--yes"]
        if repo:
            args.append(f"--repo={repo}")
        return run([*args, *(["--", target] if target else [])], DEADLINES["fix-config"])

    return server


def _allowed_key(url: str, name: str, policy: KeyPolicy) -> str:
    """The key ``check`` may send to ``url`` for the agent's ``api_key_env``, or a UsageError saying why not."""
    started = "gptoss-doctor mcp --api-key-env NAME --allow-host HOST"
    if name != policy.env:
        raise UsageError(f"api_key_env {printable(name)[:60]!r} refused: only {policy.env}, the variable named when "
                         "this server was started, may be sent", hint=f"the person chooses it: {started}")
    host, port = _url_host(url)
    if not policy.allows(host, port):
        named = ", ".join(policy.hosts) or "none"
        raise UsageError(f"the key in {policy.env} is only sent to the hosts named when this server was started "
                         f"({named}); {host}:{port} is not one of them", hint=f"the person names them: {started}")
    value = os.environ.get(policy.env, "")
    if not value:
        raise UsageError(f"environment variable {policy.env} is not set in the MCP server")
    return value


async def serve_stdio(server) -> None:
    """``MCPServer.run_stdio_async`` with the transport's read stream behind ``_AnsweringReader``."""
    from mcp.server.stdio import stdio_server

    low = server._lowlevel_server  # the pinned SDK's own run_stdio_async does the same
    async with stdio_server() as (read_stream, write_stream):
        await low.run(_AnsweringReader(read_stream, write_stream), write_stream, low.create_initialization_options())


def serve(api_key_env: str = "OPENAI_API_KEY", allow_hosts: Optional[list[str]] = None) -> None:
    import anyio

    if not ENV_NAME_RE.fullmatch(api_key_env):
        raise UsageError(f"--api-key-env {printable(api_key_env)[:60]!r} is not an environment variable name")
    policy = KeyPolicy(api_key_env, [host_entry(h) for h in allow_hosts or []])
    server = build_server(policy)
    anyio.run(serve_stdio, server)

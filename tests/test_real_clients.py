"""Real client libraries against faulty servers, their exact output fed to ``explain`` (issue 17, item 5).

Each program in tests/real/clients/ calls a gpt-oss server the way a user's script does with one library (openai,
litellm, langchain-openai, openai-agents, llama-index, pydantic-ai) and prints the answer, or lets the library's
exception through (Python prints the traceback). The servers are the emulators' faults (tests/emulators), nothing
listening at all, and a real LiteLLM proxy in front of them. What the program printed (stdout and stderr, captured,
never typed) goes to ``gptoss-doctor explain --json`` on stdin, which must name the right known issue (when the
knowledge base describes the fault) or triage class, and no confident wrong entry.

The client libraries run from their own venvs (their dependencies are not the doctor's), every file pinned by
version and sha256: ``eval "$(bash tests/real/setup_clients.sh .venv-clients)"`` sets GPTOSS_DOCTOR_CLIENTS_PY and
GPTOSS_DOCTOR_CLIENTS_LLAMAINDEX_PY (.ci/run does it). Without them the tests are skipped; the proxy faults also need
GPTOSS_DOCTOR_LITELLM (see tests/test_real_litellm.py). GPTOSS_DOCTOR_CLIENT_OUTPUTS=DIR keeps each captured output
as DIR/<client>__<fault>.txt with the command beside it (<client>__<fault>.cmd)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

import pytest

from tests.conftest import run_cli
from tests.emulators import serve
from tests.realservers import free_port

CLIENTS_PY = os.environ.get("GPTOSS_DOCTOR_CLIENTS_PY", "")
LLAMAINDEX_PY = os.environ.get("GPTOSS_DOCTOR_CLIENTS_LLAMAINDEX_PY", "")
LITELLM = os.environ.get("GPTOSS_DOCTOR_LITELLM", "")
OUTPUTS = os.environ.get("GPTOSS_DOCTOR_CLIENT_OUTPUTS", "")
PROGRAMS = Path(__file__).resolve().parent / "real" / "clients"
pytestmark = pytest.mark.skipif(not (CLIENTS_PY and LLAMAINDEX_PY),
                                reason="GPTOSS_DOCTOR_CLIENTS_PY is not set (run tests/real/setup_clients.sh)")

# program name -> the name explain's facets.client gives that library (the agreed list)
CLIENTS = {"openai": "openai-python", "litellm": "litellm", "langchain": "langchain", "openai_agents": "openai-agents",
           "llamaindex": "llamaindex", "pydantic_ai": "pydantic-ai"}
CONFIDENT = ("high", "medium")


@dataclass(frozen=True)
class Fault:
    """One way a server fails, how the client calls it, and what explain must answer."""
    id: str
    engine: Optional[str]  # emulator behind it (None: nothing listens)
    faults: tuple = ()
    version: Optional[str] = None
    flags: tuple = ()  # the client program's --tools / --stream
    proxy: bool = False  # through a real LiteLLM proxy
    entry: Optional[str] = None  # the known issue that must come first, high/medium
    cls: Optional[str] = None  # else: triage.classes[0].id
    silent: tuple = field(default=())  # clients whose output shows nothing of the fault (skipped, reason in FAULTS)


FAULTS = (
    Fault("stale-stop-token", "vllm", ("stale_eos",), "0.26.0", ("--tools",), entry="stale-generation-config-call-token"),
    # llama-index's streamed tool call parser drops the broken arguments: it prints get_weather({}), nothing more
    Fault("dup-stream-args", "lmdeploy", ("dup_stream_args",), None, ("--tools", "--stream"),
          entry="lmdeploy-streaming-tool-args-duplicated", silent=("llamaindex",)),
    # the knowledge base now has one entry for raw Harmony in content whatever the layer (narrow entries merged on
    # 2026-11-25): a leak with no engine named is that known issue, not an unknown one
    Fault("harmony-leak", "vllm", ("raw_harmony",), "0.26.0", entry="raw-harmony-tool-call-in-content"),
    Fault("harmony-leak-tool", "vllm", ("raw_harmony",), "0.26.0", ("--tools",),
          entry="raw-harmony-tool-call-in-content"),
    # vLLM 0.26.0 without tool flags: content null, no tool_calls (recorded); the agent's final output is just ""
    Fault("no-tool-flags", "vllm", ("no_tool_parser",), "0.26.0", ("--tools",), cls="tool-calls",
          silent=("openai_agents",)),
    Fault("tool-call-as-text", "sglang", ("no_tool_parser",), None, ("--tools",), cls="tool-calls"),
    Fault("garbage", "vllm", ("garbage",), "0.26.0", cls="garbage-output"),
    Fault("api-key", "vllm", ("api_key",), "0.26.0", cls="auth"),
    Fault("dead-engine", "sglang", ("dead",), cls="engine-not-ready"),  # 503, the scheduler is not responding
    Fault("engine-loading", "llama.cpp", ("dead",), cls="engine-not-ready"),  # 503 "Loading model"
    Fault("dead-engine-vllm", "vllm", ("dead",), "0.26.0", cls="engine-not-ready"),  # EngineDeadError: a bare 500
    Fault("refused", None, cls="unreachable"),
    Fault("proxy-harmony", "vllm", ("stale_eos",), "0.26.0", ("--tools",), proxy=True,
          entry="stale-generation-config-call-token"),
    Fault("proxy-backend-down", None, proxy=True, cls="engine-not-ready"),
    Fault("proxy-backend-dead", "vllm", ("dead",), "0.26.0", proxy=True, cls="engine-not-ready"),
)


@contextlib.contextmanager
def target(fault: Fault, tmp: Path) -> Iterator[str]:
    """The base URL (…/v1) the client calls for ``fault``."""
    with contextlib.ExitStack() as stack:
        if fault.engine:
            url = stack.enter_context(serve(fault.engine, version=fault.version, faults=fault.faults)).url
        else:
            url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
        if fault.proxy:
            if not LITELLM:
                pytest.skip("GPTOSS_DOCTOR_LITELLM is not set (see tests/test_real_litellm.py)")
            from tests.test_real_litellm import proxy

            url = stack.enter_context(proxy(tmp, url))
        yield url + "/v1"


@pytest.fixture(scope="module", params=FAULTS, ids=lambda f: f.id)
def served(request, tmp_path_factory) -> Iterator[tuple[Fault, str]]:
    fault = request.param
    with target(fault, tmp_path_factory.mktemp(fault.id)) as url:
        yield fault, url


@dataclass
class Run:
    code: int
    output: bytes  # stdout then stderr, exactly as the program wrote them


def run_client(client: str, fault: Fault, url: str) -> Run:
    py = LLAMAINDEX_PY if client == "llamaindex" else CLIENTS_PY
    model = "gpt-oss-20b" if fault.proxy else "openai/gpt-oss-20b"  # the proxy's model group, else the served name
    cmd = [py, str(PROGRAMS / f"{client}_call.py"), "--base-url", url, "--model", model, *fault.flags]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", NO_PROXY="*", no_proxy="*", PYTHONIOENCODING="utf-8")
    r = subprocess.run(cmd, capture_output=True, env=env, timeout=300, cwd=PROGRAMS)
    run = Run(r.returncode, r.stdout + r.stderr)
    if OUTPUTS:
        out = Path(OUTPUTS)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{client}__{fault.id}.txt").write_bytes(run.output)
        shown = [Path(cmd[0]).name, *cmd[1:]]
        (out / f"{client}__{fault.id}.cmd").write_text(
            f"# {fault.engine or 'nothing listening'} faults={list(fault.faults)} version={fault.version} "
            f"proxy={'litellm' if fault.proxy else None}; exit code {r.returncode}\n{shlex.join(shown)}\n",
            encoding="utf-8")
    return run


def explain(output: bytes, vocab_dir: Path) -> dict:
    r = run_cli("explain", "--json", "--offline", "--vocab", str(vocab_dir), "-", input=output, timeout=120)
    assert r.returncode in (0, 1), r.stderr[-2000:]
    return json.loads(r.stdout)


def problems(fault: Fault, client: str, code: int, doc: dict) -> list[str]:
    """What ``explain``'s answer (``doc``) to ``client``'s output for ``fault`` gets wrong (empty: right). The program
    exited with ``code``. Shared with bench/bench_clients.py, which scores a folder of captured outputs."""
    out: list[str] = []
    matches = doc.get("matches") or []
    top = [(m["id"], m["confidence"]) for m in matches[:3]]
    confident = [m["id"] for m in matches if m["confidence"] in CONFIDENT]
    triage = doc.get("triage")
    if fault.entry:
        from gptoss_doctor import kb

        want = kb.get(fault.entry).id  # an id merged into a wider entry names that entry
        if not (matches and matches[0]["id"] == want and matches[0]["confidence"] in CONFIDENT):
            out.append(f"wanted {want} first with high/medium, got {top}")
        if doc.get("origin") != "server":  # every known fault here is the server's: the client only received it
            out.append(f"the server raised or caused it, explain says {doc.get('origin')!r}: {doc.get('origin_detail')!r}")
    else:
        if confident:
            out.append(f"confident wrong entries {confident}")
    if triage is None:
        out.append("no triage in the answer")
    else:
        classes = [c["id"] for c in triage.get("classes") or []]
        if fault.entry:
            if triage.get("known") is not True:
                out.append("triage.known is not true for a known issue")
        elif not classes or classes[0] != fault.cls:
            out.append(f"wanted triage class {fault.cls} first, got {classes[:3]}")
        elif triage.get("known") is not False:
            out.append("triage.known is not false")
    facets = doc.get("facets")
    if facets is None:
        out.append("no facets in the answer")
        return out
    if code != 0 and (facets.get("client") or {}).get("name") != CLIENTS[client]:  # a traceback names its library
        out.append(f"facets.client should be {CLIENTS[client]}, got {facets.get('client')}")
    if fault.proxy:
        if (facets.get("proxy") or {}).get("name") != "litellm":
            out.append(f"facets.proxy should be litellm, got {facets.get('proxy')}")
        detail = doc.get("origin_detail") or ""
        if fault.entry and re.search(r"\b(inside|in) (the )?litellm", detail, re.I):
            out.append(f"the backend server raised it, not the proxy: origin {doc.get('origin')!r}, detail {detail!r}")
    return out


@pytest.mark.parametrize("client", CLIENTS)
def test_real_client_output_is_explained(served, client, vocab_dir):
    fault, url = served
    if client in fault.silent:
        pytest.skip(f"{client}'s output shows nothing of {fault.id} (see FAULTS): there is nothing to explain")
    run = run_client(client, fault, url)
    assert run.output.strip(), f"{client} printed nothing"
    wrong = problems(fault, client, run.code, explain(run.output, vocab_dir))
    assert not wrong, (wrong, run.output.decode("utf-8", "replace")[-1500:])

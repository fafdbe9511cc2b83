"""check, stage 0 when no URL is given: the gpt-oss servers of this host, as ``brew doctor`` needs no argument.

Two sources, both on loopback only: the running launches ``scan`` reads (processes and containers: each engine's
port and host flags, or its default port), and each engine profile's default port (a TCP connect with a short
deadline). A default port that answers but is no OpenAI-compatible server is dropped with a note; a running
launch is always checked. Nothing is sent to another host.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field

from gptoss_doctor import engines

CONNECT_TIMEOUT = 0.3
WILDCARD = {"", "0.0.0.0", "::", "[::]", "localhost", "127.0.0.1", "::1", "[::1]"}


@dataclass
class Candidate:
    url: str
    why: str  # "pid 4242 (vllm serve …)" or "default port of vLLM"
    from_launch: bool


@dataclass
class LocalSearch:
    candidates: list[Candidate] = field(default_factory=list)
    looked: list[str] = field(default_factory=list)  # where it looked, for the "nothing found" message


def _port_of(la) -> tuple[int | None, str | None]:
    from gptoss_doctor.scan.launches import flag

    prof = engines.get(la.engine)
    host = None
    for f in prof.host_flags:
        host = flag(la.argv, f) or host
    port = None
    for f in prof.port_flags:
        v = flag(la.argv, f)
        if v and v.isdigit():
            port = int(v)
    if prof.host_env and la.env.get(prof.host_env):
        h, _, p = la.env[prof.host_env].rpartition(":")
        host, port = (h or host), (int(p) if p.isdigit() else port)
    return port or prof.default_port, host


def _open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=CONNECT_TIMEOUT):
            return True
    except OSError:
        return False


def find(processes: bool = True) -> LocalSearch:
    """Candidates in the order a person would expect: running launches first, then default ports."""
    from gptoss_doctor.scan import launches as L

    found = LocalSearch()
    seen: set[int] = set()
    if processes:
        skipped: list = []
        launches, _ = L.from_processes(skipped)
        launches += L.from_docker(skipped)
        found.looked.append(f"{len(launches)} running engine launch(es) among this host's processes and containers")
        for la in launches:
            port, host = _port_of(la)
            if not port or port in seen or (host and host.strip("[]") not in WILDCARD and not host.startswith("127.")):
                continue  # bound to another interface: not reachable on loopback
            seen.add(port)
            what = " ".join(la.argv[:3])
            found.candidates.append(Candidate(f"http://127.0.0.1:{port}", f"{la.where} ({what} …)", True))
    ports = sorted({p.default_port for p in engines.PROFILES if p.default_port})
    found.looked.append("default ports on 127.0.0.1: " + ", ".join(str(p) for p in ports))
    for port in ports:
        if port not in seen and _open(port):
            seen.add(port)
            names = ", ".join(p.label for p in engines.PROFILES if p.default_port == port)
            found.candidates.append(Candidate(f"http://127.0.0.1:{port}", f"the default port of {names}", False))
    return found

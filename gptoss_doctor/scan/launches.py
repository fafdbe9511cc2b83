"""Turn launch definitions into Launch records: which engine, which model, which flags and environment.

Recognised: ``vllm serve`` and ``python -m vllm.entrypoints.openai.api_server``, ``python -m sglang.launch_server``,
``lmdeploy serve api_server``, ``llama-server``, ``ollama serve``, ``trtllm-serve``, ``litellm``,
``text-generation-launcher``, and the engines' container images (whose entrypoint is the server, so the
command holds only its arguments).
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

from gptoss_doctor import rx as _rx
from gptoss_doctor.redact import redact_argv, redact_command_line
from gptoss_doctor.scan.model import Launch, Skipped
from gptoss_doctor.scan.read import Unreadable, Val, first_line, load_yaml_documents, plain, read_text

GPT_OSS_RE = _rx.compile(r"gpt[-_ ]?oss", re.I)

# container images whose entrypoint starts the engine
IMAGES = [
    ("vllm", _rx.compile(r"(?:^|/)vllm-openai(?::|@|$)|(?:^|/)vllm/vllm|vllm-openai-rocm", re.I)),
    ("sglang", _rx.compile(r"(?:^|/)lmsysorg/sglang|(?:^|/)sglang(?::|$)", re.I)),
    ("lmdeploy", _rx.compile(r"(?:^|/)openmmlab/lmdeploy", re.I)),
    ("llama.cpp", _rx.compile(r"llama\.cpp:(?:server|full)|ggml-org/llama\.cpp", re.I)),
    ("ollama", _rx.compile(r"(?:^|/)ollama/ollama", re.I)),
    ("trtllm", _rx.compile(r"tensorrt[-_]llm|tritonserver.*trtllm", re.I)),
    ("litellm", _rx.compile(r"berriai/litellm|/litellm(?::|$)", re.I)),
    ("tgi", _rx.compile(r"text-generation-inference", re.I)),
]


def is_gpt_oss(text: str | None) -> bool:
    return bool(text and GPT_OSS_RE.search(text))


def engine_of(argv: list[str], image: str | None = None) -> tuple[str | None, int]:
    """(engine, index where its own arguments start) of a command line; (None, 0) if it starts no engine."""
    for i, a in enumerate(argv[:12]):
        base = os.path.basename(a)
        nxt = argv[i + 1] if i + 1 < len(argv) else ""
        if base == "vllm" and nxt == "serve":
            return "vllm", i + 2
        if base == "-m" or a == "-m":
            if nxt.startswith("vllm.entrypoints.openai.api_server") or nxt == "vllm.entrypoints.api_server":
                return "vllm", i + 2
            if nxt.startswith("sglang.launch_server"):
                return "sglang", i + 2
            if nxt.startswith("lmdeploy"):
                return "lmdeploy", i + 2
            if nxt == "gpt_oss.responses_api.serve":  # OpenAI's reference Responses server (no console script)
                return "gptoss-reference", i + 2
        if base == "lmdeploy" and nxt == "serve":
            return "lmdeploy", i + 3 if i + 2 < len(argv) and argv[i + 2] == "api_server" else i + 2
        if base in ("llama-server", "server") and (base == "llama-server" or "llama" in a):
            return "llama.cpp", i + 1
        if base == "ollama" and nxt in ("serve", "run", "start"):
            return "ollama", i + 2
        if base == "trtllm-serve":
            return "trtllm", i + 1
        if base == "litellm":
            return "litellm", i + 1
        if base == "text-generation-launcher":
            return "tgi", i + 1
    if image:
        for engine, rx in IMAGES:
            if rx.search(image):
                return engine, 0
    return None, 0


def flag(argv: list[str], *names: str) -> str | None:
    """The value of a flag (``--x v`` or ``--x=v``); "" for a flag given without value; None if absent."""
    for i, a in enumerate(argv):
        for n in names:
            if a == n:
                nxt = argv[i + 1] if i + 1 < len(argv) else ""
                return "" if nxt.startswith("-") else nxt
            if a.startswith(n + "="):
                return a.split("=", 1)[1]
    return None


def has_flag(argv: list[str], *names: str) -> bool:
    return any(a == n or a.startswith(n + "=") for a in argv for n in names)


def model_of(engine: str, args: list[str], env: dict[str, str]) -> str | None:
    names = {
        "vllm": ("--model",), "sglang": ("--model-path", "--model"), "lmdeploy": ("--model-name",),
        "llama.cpp": ("-m", "--model", "-hf", "--hf-repo", "-hfr"), "trtllm": ("--model",),
        "tgi": ("--model-id",), "ollama": (), "litellm": ("--model",), "gptoss-reference": ("--checkpoint",),
    }.get(engine, ())
    v = flag(args, *names) if names else None
    if v:
        return v
    if engine in ("vllm", "lmdeploy", "trtllm", "ollama") and args and not args[0].startswith("-"):
        return args[0]  # the positional model of `vllm serve MODEL`, `lmdeploy serve api_server MODEL`, `ollama run M`
    for key in ("MODEL", "MODEL_ID", "MODEL_NAME", "MODEL_PATH", "HF_MODEL_ID"):
        if env.get(key):
            return env[key]
    return None


def _split(cmd) -> list[str]:
    if isinstance(cmd, list):
        return [str(x) for x in cmd if x is not None]
    if isinstance(cmd, str):
        try:
            return shlex.split(cmd, comments=False)
        except ValueError:
            return cmd.split()
    return []


def _env_from(value) -> dict[str, tuple[str, int]]:
    """Environment from a compose/k8s value: a mapping, ["K=V", …] or [{name, value}, …]; values with their line."""
    env: dict[str, tuple[str, int]] = {}
    if isinstance(value, dict):
        for k, x in value.items():
            v = plain(x)
            env[str(k)] = ("" if v is None else str(v), first_line(x))
    elif isinstance(value, list):
        for item in value:
            v = plain(item)
            if isinstance(v, str):
                k, _, x = v.partition("=")
                env[k.strip()] = (x.strip(), first_line(item))
            elif isinstance(v, dict) and "name" in v:
                env[str(v["name"])] = ("" if v.get("value") is None else str(v.get("value")), first_line(item))
    return env


# images whose ENTRYPOINT is the engine itself: a command there holds only the engine's arguments. vLLM's
# docker/Dockerfile ends with ENTRYPOINT ["vllm", "serve"] (earlier: python3 -m vllm.entrypoints.openai.api_server),
# https://github.com/vllm-project/vllm/blob/main/docker/Dockerfile
ENTRYPOINT_IMAGES = {"vllm": _rx.compile(r"(?:^|/)vllm-openai(?::|@|$)|(?:^|/)vllm/vllm-openai", re.I)}


def make_launch(argv: list[str], env: dict[str, str], where: str, image: str | None = None, line_text: str = "",
                source_kind: str = "file", image_entrypoint: bool = False) -> Launch | None:
    """A Launch, or None when ``argv`` starts no engine. ``image_entrypoint``: ``argv`` is appended to the image's
    own ENTRYPOINT (a compose ``command`` or ``docker run IMAGE ARGS`` without an entrypoint override)."""
    engine, start = engine_of(argv, image)
    if engine is None:
        return None
    args = argv[start:]
    shown = redact_command_line(line_text) if line_text else " ".join(shlex.quote(a) for a in redact_argv(argv))
    repeated = ""
    rx = ENTRYPOINT_IMAGES.get(engine)
    if image_entrypoint and image and rx and rx.search(image) and start > 0:
        repeated = " ".join(argv[:start])
    return Launch(engine=engine, where=where, argv=list(argv), env=dict(env), model=model_of(engine, args, env),
                  image=image, line_text=shown, source_kind=source_kind, repeated_entrypoint=repeated)


# --- YAML: compose services, Kubernetes containers, Helm values --------------------------------------------------------

CONTAINER_KEYS = {"command", "args", "entrypoint", "image", "extraArgs"}


def from_yaml(path: Path, text: str) -> tuple[list[Launch], list[dict]]:
    """Launches in any YAML document (compose, Kubernetes, Helm values) and litellm configs found there."""
    launches: list[Launch] = []
    litellm_configs: list[dict] = []
    for doc in load_yaml_documents(text):
        if isinstance(doc, dict) and ("model_list" in doc or "litellm_settings" in doc):
            litellm_configs.append(doc)
        # compose: `command` is appended to the image's ENTRYPOINT; Kubernetes: `command` replaces it
        compose = isinstance(doc, dict) and "services" in doc and "apiVersion" not in doc
        _walk(doc, path, launches, {}, 0, compose)
    return launches, litellm_configs


def _walk(node, path: Path, out: list[Launch], inherited_env: dict, depth: int, compose: bool = False) -> None:
    if depth > 40:
        return
    if isinstance(node, dict):
        keys = set(node)
        env = dict(inherited_env)
        for ek in ("environment", "env", "extraEnv", "envVars"):
            if ek in node:
                env.update(_env_from(node[ek]))
        plain_env = {k: v for k, (v, _) in env.items()}
        if keys & CONTAINER_KEYS:
            image = plain(node.get("image"))
            if isinstance(image, dict):  # Helm values: image: {repository, tag}
                image = ":".join(str(x) for x in (image.get("repository"), image.get("tag")) if x)
            argv = _split(plain(node.get("entrypoint"))) + _split(plain(node.get("command"))) + \
                _split(plain(node.get("args"))) + _split(plain(node.get("extraArgs")))
            line = first_line(node.get("command") or node.get("args") or node.get("entrypoint") or node.get("image"))
            la = make_launch(argv, plain_env, f"{path}:{line}", image=str(image) if image else None,
                             line_text=_yaml_line(node), image_entrypoint=compose and "entrypoint" not in node)
            if la is not None:
                la.env_where = {k: f"{path}:{ln}" for k, (_, ln) in env.items() if ln}
                out.append(la)
                return
        for v in node.values():
            _walk(v, path, out, env if keys & CONTAINER_KEYS else inherited_env, depth + 1, compose)
    elif isinstance(node, list):
        for v in node:
            _walk(v, path, out, inherited_env, depth + 1, compose)


def _yaml_line(node: dict) -> str:
    parts = []
    for k in ("entrypoint", "command", "args", "extraArgs"):
        v = plain(node.get(k))
        if v:
            parts.append(f"{k}: " + (" ".join(map(str, v)) if isinstance(v, list) else str(v)))
    return "; ".join(parts)


# --- line-based files -----------------------------------------------------------------------------------------------------


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) with backslash continuations joined."""
    out: list[tuple[int, str]] = []
    buf, start = "", 0
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not buf:
            start = n
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        buf += line
        out.append((start, " ".join(buf.split())))
        buf = ""
    if buf:
        out.append((start, buf))
    return out


ASSIGN_RE = _rx.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


def _unquote(v: str) -> str:
    v = v.strip()
    try:
        parts = shlex.split(v)
        return parts[0] if parts else ""
    except ValueError:
        return v.strip("'\"")


def from_shell(path: Path, text: str) -> list[Launch]:
    env: dict[str, str] = {}
    env_where: dict[str, str] = {}
    out: list[Launch] = []
    for n, line in _logical_lines(text):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        m = ASSIGN_RE.match(s)
        if m and " " not in m.group(2).strip().strip("'\""):
            env[m.group(1)] = _unquote(m.group(2))
            env_where[m.group(1)] = f"{path}:{n}"
            continue
        try:
            argv = shlex.split(s, comments=True)
        except ValueError:
            argv = s.split()
        while argv and ("=" in argv[0] and ASSIGN_RE.match(argv[0])):  # VAR=x cmd …
            k, _, v = argv.pop(0).partition("=")
            env[k] = v
        if argv and argv[0] in ("exec", "nohup", "sudo", "time"):
            argv = argv[1:]
        if len(argv) > 2 and argv[0] in ("docker", "podman") and argv[1] == "run":
            la = _docker_run(argv[2:], dict(env), f"{path}:{n}", s)
        else:
            la = make_launch(argv, env, f"{path}:{n}", line_text=s)
        if la is not None:
            la.env_where = dict(env_where)
            out.append(la)
    return out


DOCKER_VALUE_OPTS = {"-e", "--env", "-p", "--publish", "-v", "--volume", "--name", "--gpus", "--runtime", "--ipc",
                     "--network", "--net", "-w", "--workdir", "--shm-size", "--env-file", "--entrypoint", "-u", "--user",
                     "--mount", "--device", "--platform", "--restart", "-h", "--hostname", "--label", "-l",
                     "--ulimit", "--cpus", "-m", "--memory", "--add-host", "--pull", "--cap-add", "--security-opt"}


def _docker_run(args: list[str], env: dict[str, str], where: str, line_text: str) -> Launch | None:
    entry: list[str] = []
    i = 0
    while i < len(args) and args[i].startswith("-"):
        a = args[i]
        opt, _, inline = a.partition("=")
        val = inline if inline else (args[i + 1] if opt in DOCKER_VALUE_OPTS and i + 1 < len(args) else None)
        if opt in ("-e", "--env") and val:
            k, _, v = val.partition("=")
            # a bare `-e NAME` passes the launching shell's value: unknown here, and never this scanner's own
            env[k] = v if _ else f"${{{k}}}"
        if opt == "--entrypoint" and val:
            entry = [val]
        i += 1 if inline or opt not in DOCKER_VALUE_OPTS else 2
    if i >= len(args):
        return None
    image, rest = args[i], args[i + 1:]
    return make_launch(entry + rest, env, where, image=image, line_text=line_text, image_entrypoint=not entry)


def from_dockerfile(path: Path, text: str) -> list[Launch]:
    env: dict[str, str] = {}
    image = None
    entry: list[str] = []
    cmd: list[str] = []
    where = f"{path}:1"
    text_line = ""
    for n, line in _logical_lines(text):
        s = line.strip()
        word, _, rest = s.partition(" ")
        w = word.upper()
        if w == "FROM":
            image = rest.split()[0] if rest.split() else None
        elif w == "ENV":
            if "=" in rest.split()[0] if rest.split() else False:
                for part in _split(rest):
                    k, _, v = part.partition("=")
                    env[k] = v
            elif rest.split():
                k, _, v = rest.partition(" ")
                env[k] = v.strip()
        elif w in ("CMD", "ENTRYPOINT"):
            import json

            try:
                val = json.loads(rest) if rest.strip().startswith("[") else _split(rest)
            except ValueError:
                val = _split(rest)
            if w == "CMD":
                cmd = [str(x) for x in val]
            else:
                entry = [str(x) for x in val]
            where, text_line = f"{path}:{n}", s
    la = make_launch(entry + cmd, env, where, image=image, line_text=text_line)
    return [la] if la else []


def from_systemd(path: Path, text: str) -> list[Launch]:
    env: dict[str, str] = {}
    out: list[Launch] = []
    for n, line in _logical_lines(text):
        s = line.strip()
        if s.startswith("Environment="):
            for part in _split(s[len("Environment="):]):
                k, _, v = part.partition("=")
                env[k] = v
        elif s.startswith("ExecStart="):
            argv = _split(s[len("ExecStart="):].lstrip("-@+!:"))
            la = make_launch(argv, env, f"{path}:{n}", line_text=s)
            if la:
                out.append(la)
    return out


def env_file(path: Path, text: str) -> dict[str, tuple[str, int]]:
    """KEY -> (value, line) of a .env file."""
    out: dict[str, tuple[str, int]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        m = ASSIGN_RE.match(line)
        if m:
            out[m.group(1)] = (_unquote(m.group(2)), n)
    return out


# --- running processes and containers ----------------------------------------------------------------------------------


def from_processes(skipped: list, proc: Path = Path("/proc")) -> tuple[list[Launch], int]:
    """Launches among this host's processes (their environment where readable)."""
    out: list[Launch] = []
    count = 0
    try:
        pids = [p for p in os.listdir(proc) if p.isdigit()]
    except OSError:
        skipped.append(Skipped(str(proc), "no /proc on this system: running processes not scanned"))
        return out, 0
    me = str(os.getpid())
    for pid in pids:
        if pid == me:
            continue
        try:
            raw = (proc / pid / "cmdline").read_bytes()[:65536]
        except (FileNotFoundError, ProcessLookupError):
            continue  # it ended while we looked
        except OSError:
            continue
        count += 1
        argv = [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]
        if not argv:
            continue
        engine, _ = engine_of(argv)
        if engine is None:
            continue
        env: dict[str, str] = {}
        try:
            for item in (proc / pid / "environ").read_bytes()[:262144].split(b"\0"):
                k, _, v = item.decode("utf-8", "replace").partition("=")
                if k:
                    env[k] = v
        except PermissionError:
            skipped.append(Skipped(f"pid {pid}", "no permission to read its environment (run as its user to see it)"))
        except OSError:
            pass
        la = make_launch(argv, env, f"pid {pid}", source_kind="process")
        if la:
            out.append(la)
    return out, count


def from_docker(skipped: list, timeout: float = 5.0) -> list[Launch]:
    """Launches among running containers, when the docker CLI is here and its daemon answers."""
    import json
    import shutil
    import subprocess

    exe = shutil.which("docker")
    if not exe:
        return []
    try:
        ps = subprocess.run([exe, "ps", "-q"], capture_output=True, timeout=timeout, text=True)
    except (subprocess.TimeoutExpired, OSError) as exc:
        skipped.append(Skipped("docker", f"the docker CLI did not answer ({type(exc).__name__})"))
        return []
    if ps.returncode != 0:
        first = (ps.stderr or "").strip().splitlines()[:1]
        skipped.append(Skipped("docker", "cannot list containers: " + (first[0][:160] if first else f"exit {ps.returncode}")))
        return []
    ids = ps.stdout.split()[:100]
    if not ids:
        return []
    try:
        ins = subprocess.run([exe, "inspect", *ids], capture_output=True, timeout=timeout, text=True)
        data = json.loads(ins.stdout or "[]")
    except (subprocess.TimeoutExpired, OSError, ValueError) as exc:
        skipped.append(Skipped("docker", f"docker inspect failed ({type(exc).__name__})"))
        return []
    out = []
    for c in data if isinstance(data, list) else []:
        cfg = c.get("Config") or {}
        argv = [str(x) for x in (cfg.get("Entrypoint") or []) + (cfg.get("Cmd") or [])]
        env = dict(e.partition("=")[::2] for e in cfg.get("Env") or [] if isinstance(e, str))
        la = make_launch(argv, env, f"container {str(c.get('Id', ''))[:12]}", image=cfg.get("Image"),
                         source_kind="container")
        if la:
            out.append(la)
    return out


def read_launch_file(path: Path, kind: str) -> tuple[list[Launch], list[dict], dict]:
    """(launches, litellm configs, env-file values) of one file; raises Unreadable."""
    text = read_text(path)
    if kind in ("compose", "yaml"):
        launches, configs = from_yaml(path, text)
        return launches, configs, {}
    if kind == "dockerfile":
        return from_dockerfile(path, text), [], {}
    if kind == "systemd":
        return from_systemd(path, text), [], {}
    if kind == "env":
        return [], [], env_file(path, text)
    return from_shell(path, text), [], {}


__all__ = ["Launch", "Unreadable", "Val", "engine_of", "flag", "has_flag", "is_gpt_oss", "read_launch_file",
           "from_processes", "from_docker"]

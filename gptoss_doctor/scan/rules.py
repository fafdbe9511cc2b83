"""Judge launches and host facts against what the knowledge base says about serving gpt-oss.

Every rule names the knowledge-base entries it rests on; their references are printed with the finding. A rule
says a flag only where the engine needs it (vLLM 0.10.2+ ships the gpt-oss tool parser; recent vLLM picks the
gpt-oss reasoning parser itself, so its absence is not reported).
"""

from __future__ import annotations

import re

from gptoss_doctor import rx as _rx
from gptoss_doctor.scan.launches import flag, has_flag
from gptoss_doctor.scan.model import Finding, Launch

HARMONY_ENGINES = {"vllm", "sglang", "trtllm", "lmdeploy"}  # they load the o200k vocabulary through openai-harmony
OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")
SECRET_NAME_RE = _rx.compile(r"(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|MASTER_KEY)$", re.I)
VAR_REF_RE = _rx.compile(r"^\$\{?[A-Za-z_]\w*\}?$|^os\.environ/|^<.*>$|^\*+$|^(?:changeme|xxx+|your[-_].*|sk-\.\.\.|none|null|dummy|empty|EMPTY)$", re.I)


def _link(ids: list[str]) -> tuple[list[str], list[str]]:
    """The knowledge-base ids (an id merged into a wider entry becomes that entry's) and their first references."""
    from gptoss_doctor import kb

    try:
        entries = kb.load()
    except Exception:  # noqa: BLE001 - a broken knowledge base must not stop the scan
        return ids, []
    out_ids: list[str] = []
    urls: list[str] = []
    for i in ids:
        e = kb.resolve(i, entries)
        if e is None:
            continue
        if e.id not in out_ids:
            out_ids.append(e.id)
        urls.extend(u for u in e.urls[:2] if u not in urls)
    return out_ids, urls


def _finding(status: str, rid: str, title: str, where: str, *, detail: str = "", fix: str = "", corrected: str = "",
             kb_ids: list[str] | None = None) -> Finding:
    ids, urls = _link(kb_ids or [])
    return Finding(status, rid, title, where, detail, fix, corrected, urls, ids)


def _base_line(la: Launch) -> str:
    """The launch line every corrected line starts from: without a command that repeats the image's entrypoint."""
    line = la.line_text.rstrip()
    if la.repeated_entrypoint:
        line = re.sub(rf"(^|[;:]\s*|\s){re.escape(la.repeated_entrypoint)}\s+", r"\1", line, count=1)
    return line


def _with_flags(base: str, flags: list[str]) -> str:
    base = base.rstrip()
    return f"{base} {' '.join(flags)}" if base else " ".join(flags)


def _truthy(v: str | None) -> bool:
    return (v or "").strip().lower() in ("1", "true", "yes", "on")


def judge_launch(la: Launch) -> list[Finding]:
    out: list[Finding] = []
    out += _secrets_in_launch(la)
    if not la.gpt_oss:
        return out
    a, base = la.argv, _base_line(la)
    if la.repeated_entrypoint:
        out.append(_finding(
            "fail", "image.command_repeats_entrypoint",
            f"the command repeats '{la.repeated_entrypoint}', which the image's entrypoint already runs", la.where,
            detail=f"{la.image} starts the server itself (its ENTRYPOINT is the engine), so this command becomes "
            f"'{la.repeated_entrypoint} {la.repeated_entrypoint} …' and the server exits at start-up "
            "(unrecognized arguments)",
            fix=f"give only the model and the flags: drop '{la.repeated_entrypoint}' from the command",
            corrected=base))
    if la.engine == "vllm":
        out += _vllm_tool_flags(la)
        backend = la.env.get("VLLM_ATTENTION_BACKEND") or flag(a, "--attention-backend")
        if backend and backend.upper() in ("FLASHINFER", "FLASH_ATTN"):
            out.append(_finding(
                "warn", "vllm.attention_backend_forced", f"the attention backend is forced to {backend}",
                la.where, detail="gpt-oss needs attention sinks; a forced backend without them fails at start-up on "
                "some GPUs", fix="remove it and let vLLM choose (TRITON_ATTN where needed)",
                corrected="unset VLLM_ATTENTION_BACKEND" if la.env.get("VLLM_ATTENTION_BACKEND") else "",
                kb_ids=["gptoss-attention-sinks-backend-unsupported"]))
        if la.image and re.search(r":gptoss\b", la.image):
            out.append(_finding(
                "warn", "vllm.preview_image", f"the gpt-oss preview image {la.image} runs only on Hopper GPUs",
                la.where, fix="use a current vllm/vllm-openai release", corrected=base.replace(":gptoss", ":latest"),
                kb_ids=["vllm-sinks-require-flashattention3"]))
    elif la.engine == "sglang":
        parser = flag(a, "--tool-call-parser")
        if parser is None:
            out.append(_finding(
                "warn", "sglang.tool_parser_missing", "SGLang serves gpt-oss without the gpt-oss tool parser",
                la.where, detail="chat completions with tools fail or return the call as text",
                fix="add the gpt-oss tool and reasoning parsers",
                corrected=_with_flags(base, ["--tool-call-parser", "gpt-oss"] +
                                      ([] if has_flag(a, "--reasoning-parser") else ["--reasoning-parser", "gpt-oss"])),
                kb_ids=["gptoss-server-tool-parser-not-enabled"]))
        elif parser not in ("", "gpt-oss"):
            out.append(_finding(
                "fail", "sglang.wrong_tool_parser", f"SGLang uses the '{parser}' tool parser for gpt-oss", la.where,
                fix="use --tool-call-parser gpt-oss", corrected=_set_flag(base, "--tool-call-parser", "gpt-oss"),
                kb_ids=["sglang-tool-call-parser-missing"]))
    elif la.engine == "llama.cpp":
        if has_flag(a, "--no-jinja"):
            out.append(_finding(
                "fail", "llamacpp.no_jinja", "llama-server runs gpt-oss with --no-jinja",
                la.where, detail="without the model's Jinja template there is no Harmony tool-call or reasoning parsing",
                fix="remove --no-jinja", corrected=base.replace(" --no-jinja", ""),
                kb_ids=["llamacpp-raw-harmony-reasoning-format-none"]))
        if flag(a, "--reasoning-format") == "none":
            out.append(_finding(
                "warn", "llamacpp.reasoning_format_none", "llama-server returns raw Harmony (--reasoning-format none)",
                la.where, detail="clients see <|channel|>analysis… in content unless they parse Harmony themselves",
                fix="drop --reasoning-format none (the default splits reasoning into reasoning_content)",
                corrected=re.sub(r"\s--reasoning-format(?:=|\s+)none", "", base),
                kb_ids=["llamacpp-raw-harmony-reasoning-format-none"]))
    if la.engine in HARMONY_ENGINES and any(_truthy(la.env.get(v)) for v in OFFLINE_VARS) \
            and not la.env.get("TIKTOKEN_ENCODINGS_BASE"):
        var = next(v for v in OFFLINE_VARS if _truthy(la.env.get(v)))
        out.append(_finding(
            "fail", "harmony.vocab_offline", "an offline host without TIKTOKEN_ENCODINGS_BASE",
            la.env_where.get(var, la.where), detail=f"{var} is set, but openai-harmony downloads o200k_base.tiktoken at start-up unless "
            "TIKTOKEN_ENCODINGS_BASE points at a local copy",
            fix="stage the vocabulary (gptoss-doctor fix-config --vocab DIR) and export the variable",
            corrected=("- TIKTOKEN_ENCODINGS_BASE=/etc/encodings" if la.line_text.startswith(("command:", "args:", "entrypoint:"))
                       else "export TIKTOKEN_ENCODINGS_BASE=/etc/encodings"),
            kb_ids=["harmony-vocab-not-loadable"]))
    return out


def _set_flag(line: str, name: str, value: str) -> str:
    """``line`` with the value of ``name`` (``--x v`` or ``--x=v``) replaced; other words stay as they are."""
    return re.sub(rf"({re.escape(name)}(?:=|\s+))(?:\"[^\"]*\"|'[^']*'|[^\s;]+)", lambda m: m.group(1) + value, line, count=1)


def _vllm_tool_flags(la: Launch) -> list[Finding]:
    """One finding for vLLM's tool-call flags, whose corrected line applies every change at once (a wrong parser
    and a missing --enable-auto-tool-choice are fixed in the same line, never in two lines that undo each other)."""
    a, base = la.argv, _base_line(la)
    parser = flag(a, "--tool-call-parser")
    auto = has_flag(a, "--enable-auto-tool-choice")
    if parser is None and not auto:
        return [_finding(
            "warn", "vllm.tool_flags_missing", "vLLM serves gpt-oss without tool calling in Chat Completions",
            la.where, detail="neither --tool-call-parser nor --enable-auto-tool-choice is set: tool calls come back "
            "as text in content (the Responses API is not affected)",
            fix="add both flags (vLLM 0.10.2 or newer)",
            corrected=_with_flags(base, ["--enable-auto-tool-choice", "--tool-call-parser", "openai"]),
            kb_ids=["gptoss-server-tool-parser-not-enabled", "raw-harmony-in-content-no-parser"])]
    if parser is None:
        return [_finding(
            "warn", "vllm.tool_parser_missing", "vLLM has --enable-auto-tool-choice but no --tool-call-parser",
            la.where, fix="add the gpt-oss tool parser", corrected=_with_flags(base, ["--tool-call-parser", "openai"]),
            kb_ids=["gptoss-server-tool-parser-not-enabled"])]
    if parser not in ("", "openai"):
        fixed = _set_flag(base, "--tool-call-parser", "openai")
        return [_finding(
            "fail", "vllm.wrong_tool_parser", f"vLLM uses the '{parser}' tool parser for gpt-oss",
            la.where, detail="only the 'openai' parser reads Harmony tool calls" +
            ("" if auto else "; --enable-auto-tool-choice is missing too"),
            fix="use --tool-call-parser openai" + ("" if auto else " and add --enable-auto-tool-choice"),
            corrected=fixed if auto else _with_flags(fixed, ["--enable-auto-tool-choice"]),
            kb_ids=["gptoss-server-tool-parser-not-enabled"])]
    if not auto:
        return [_finding(
            "warn", "vllm.auto_tool_choice_missing", "vLLM has --tool-call-parser but not --enable-auto-tool-choice",
            la.where, detail="requests with tool_choice \"auto\" are refused or the calls stay in content",
            fix="add --enable-auto-tool-choice", corrected=_with_flags(base, ["--enable-auto-tool-choice"]),
            kb_ids=["gptoss-server-tool-parser-not-enabled"])]
    return []


def _is_literal_secret(value: str) -> bool:
    v = value.strip().strip("'\"")
    return len(v) >= 8 and not VAR_REF_RE.match(v) and "$" not in v


def _secrets_in_launch(la: Launch) -> list[Finding]:
    from gptoss_doctor.redact import is_secret_flag

    out = []
    for name in dict.fromkeys(a.partition("=")[0] for a in la.argv if is_secret_flag(a)):
        v = flag(la.argv, name)
        if v and _is_literal_secret(v):
            seen = "visible to every user of this host in the process list" if la.source_kind == "process" else \
                "stored in plain text in this file"
            out.append(_finding("warn", "secret.in_command_line", f"a secret is passed with {name}", la.where,
                                detail=f"the value is {seen} (not shown here)",
                                fix=f"pass it through an environment variable or a secret store, e.g. {name} \"$API_KEY\""))
    if la.source_kind == "file":
        for k, v in la.env.items():
            if SECRET_NAME_RE.search(k) and _is_literal_secret(v):
                out.append(_finding("warn", "secret.in_file", f"{k} is set to a literal value", la.env_where.get(k, la.where),
                                    detail="a secret stored in plain text in this file (value not shown)",
                                    fix=f"reference it instead ({k}=${{{k}}}) and keep the value in a secret store"))
    return out


def judge_env_file(where: str, values: dict[str, tuple[str, int]]) -> list[Finding]:
    out = []
    for k, (v, line) in values.items():
        if SECRET_NAME_RE.search(k) and _is_literal_secret(v):
            out.append(_finding("warn", "secret.in_file", f"{k} holds a secret in plain text", f"{where}:{line}",
                                detail="the value is not shown; make sure this file is not committed or shared",
                                fix="keep it out of version control (.gitignore) or use a secret store"))
    offline = [k for k in OFFLINE_VARS if _truthy(values.get(k, ("", 0))[0])]
    if offline and "TIKTOKEN_ENCODINGS_BASE" not in values:
        line = values[offline[0]][1]
        out.append(_finding(
            "warn", "harmony.vocab_offline", "offline settings without TIKTOKEN_ENCODINGS_BASE", f"{where}:{line}",
            detail=f"{offline[0]} is set here; gpt-oss servers then cannot download the o200k vocabulary",
            fix="add the variable, pointing at a folder holding o200k_base.tiktoken",
            corrected="TIKTOKEN_ENCODINGS_BASE=/etc/encodings", kb_ids=["harmony-vocab-not-loadable"]))
    return out


def judge_litellm_config(where_file: str, doc: dict) -> list[Finding]:
    from gptoss_doctor.scan.read import Val, first_line, plain

    out = []
    models = doc.get("model_list") if isinstance(doc.get("model_list"), list) else []
    settings = plain(doc.get("litellm_settings")) or {}
    drop = isinstance(settings, dict) and settings.get("drop_params") in (True, "true", "True")
    gptoss_models = []
    for m in models:
        if not isinstance(m, dict):
            continue
        params = m.get("litellm_params") if isinstance(m.get("litellm_params"), dict) else {}
        name = plain(m.get("model_name")) or ""
        target = plain(params.get("model")) or ""
        line = first_line(m)
        if re.search(r"gpt[-_]?oss", f"{name} {target}", re.I):
            gptoss_models.append((str(name), str(target), line))
            route = params.get("model")
            out += _route_findings(str(name), str(target), f"{where_file}:{route.line if isinstance(route, Val) else line}")
        key = params.get("api_key")
        if isinstance(key, Val) and isinstance(key.value, str) and _is_literal_secret(key.value):
            out.append(_finding("warn", "secret.in_file", f"a literal api_key for {name or target}",
                                f"{where_file}:{key.line}", detail="the key is stored in plain text (value not shown)",
                                fix="use api_key: os.environ/PROVIDER_API_KEY",
                                corrected="api_key: os.environ/PROVIDER_API_KEY"))
    if drop and gptoss_models:
        sline = first_line(doc.get("litellm_settings"))
        names = ", ".join(n or t for n, t, _ in gptoss_models)
        out.append(_finding(
            "warn", "litellm.drop_params_gptoss", "drop_params silently removes reasoning_effort for gpt-oss",
            f"{where_file}:{sline}", detail=f"with drop_params: true an unsupported reasoning_effort is dropped without "
            f"an error, so {names} run at the default effort",
            fix="let reasoning_effort through for these models instead (allowed_openai_params) and upgrade litellm",
            corrected='allowed_openai_params: ["reasoning_effort"]',
            kb_ids=["gptoss-reasoning-effort-not-applied"]))
    return out


def _route_findings(name: str, route: str, where: str) -> list[Finding]:
    """Knowledge-base entries whose ``signatures.routes`` name this proxy model route (e.g. the
    ``vertex_ai/openai/gpt-oss-120b-maas`` route of hindsight #2222), each with the entry's fix for the proxy."""
    from gptoss_doctor import kb

    try:
        entries = kb.load()
    except Exception:  # noqa: BLE001 - a broken knowledge base must not stop the scan
        return []
    out = []
    for e in entries:
        if not any(re.search(rx, route, re.I) for rx in e.routes):
            continue
        fixes = [fx for fx in e.fixes if fx.get("layer") == "proxy"] or e.fixes[:1]
        fix = fixes[0]
        out.append(_finding(
            "warn", "litellm.route_known_issue", f"the route {route} has a known gpt-oss problem", where,
            detail=f"{name or route}: {e.title}",
            fix=fix["step"], corrected=fix.get("config", ""), kb_ids=[e.id]))
    return out


def judge_model_folder(folder: str, gen_config: dict | None, where: str) -> list[Finding]:
    if gen_config is None:
        return []
    eos = gen_config.get("eos_token_id")
    eos = eos if isinstance(eos, list) else [eos]
    if 200012 in eos:
        return []
    return [_finding(
        "fail", "model.stale_generation_config", "a stale generation_config.json (no <|call|> stop token)", where,
        detail=f"eos_token_id is {eos}: servers that read it keep generating after a tool call and raise "
        "'Unexpected token … while expecting start token 200006'",
        fix=f"refresh the small files: gptoss-doctor fix-config {folder} --dry-run, then --yes",
        corrected='"eos_token_id": [200002, 199999, 200012]', kb_ids=["stale-generation-config-call-token"])]


def judge_gpus(gpus: list[dict], engines_present: set[str]) -> list[Finding]:
    out = []
    for g in gpus:
        try:
            cap = float(g.get("compute_cap") or 0)
        except ValueError:
            continue
        if cap and cap < 8.0 and ("vllm" in engines_present or not engines_present):
            out.append(_finding(
                "warn", "gpu.mxfp4_capability", f"GPU {g.get('index')} ({g.get('name')}) has compute capability {cap:g}",
                f"gpu {g.get('index')}", detail="vLLM's MXFP4 kernels for gpt-oss need compute capability 8.0 or newer",
                fix="serve gpt-oss on this GPU with llama.cpp or Ollama, or use an Ampere or newer GPU",
                kb_ids=["vllm-mxfp4-unsupported-gpu", "cuda-kernels-missing-for-gpu-arch"]))
    return out

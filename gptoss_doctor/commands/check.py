"""``check URL...``: probe running gpt-oss servers (engine, version, models, stop tokens, behaviour)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from gptoss_doctor.commands._options import JsonFlag

CHECK_HELP = """Probe running gpt-oss servers and report what is wrong, with the fix.

Finds the engine and version (vLLM, SGLang, LMDeploy, llama.cpp, Ollama, TGI, LM Studio,
LiteLLM proxy, TensorRT-LLM, transformers serve), the served models and context length, checks the Harmony special
tokens and stop tokens, then sends small requests (chat, tool call streamed and not) and looks for
the known gpt-oss failure signatures. URLs without a scheme are taken as http://.

  gptoss-doctor check                        (no URL: the servers running on this host)

  gptoss-doctor check http://127.0.0.1:8000

  gptoss-doctor check localhost:8000 localhost:30000 --quick

  gptoss-doctor check http://gpu-box:8000 --deep --markdown > report.md

  gptoss-doctor check http://gpu-box:8000 --request failing.json   (your own request: JSON, curl or HAR)

  gptoss-doctor check http://gpu-box:8000 --save before.json     (then, after an upgrade:)
  gptoss-doctor check http://gpu-box:8000 --compare before.json

Exit codes: 0 nothing failed, 1 a check failed (or a warning with --strict), 2 usage,
3 a target unreachable or not an LLM server, 4 authentication required or rejected
(several targets: the highest of 4 > 3 > 1 > 0).
"""


def _read_targets(path: Path) -> list[str]:
    from gptoss_doctor.errors import UsageError

    if str(path) == "-":
        import sys

        text = sys.stdin.read()
    else:
        if path.is_dir():
            raise UsageError(f"{path} is a folder; give a file with one URL per line")
        if path.stat().st_size > 1 << 20:
            raise UsageError(f"{path} is larger than 1 MiB; give a file with one URL per line")
        text = path.read_text(encoding="utf-8", errors="replace")
    out = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(line)
    return out


def register(app: typer.Typer) -> None:
    @app.command("check", help=CHECK_HELP, short_help="Probe running gpt-oss servers and say what is wrong.")
    def check_cmd(
        urls: Optional[List[str]] = typer.Argument(None, metavar="URL...", help="Server base URLs, e.g. http://127.0.0.1:8000"),
        targets: Optional[Path] = typer.Option(None, "--targets", metavar="PATH", help="File with one URL per line ('-' for stdin)."),
        api_key: Optional[str] = typer.Option(None, "--api-key", metavar="KEY", envvar="OPENAI_API_KEY", show_envvar=True,
                                              help="API key sent as 'Authorization: Bearer' (never printed)."),
        timeout: float = typer.Option(30.0, "--timeout", metavar="SECONDS", min=0.1, help="Seconds allowed per request (discovery requests: at most 10)."),
        model: Optional[str] = typer.Option(None, "--model", metavar="NAME", help="Served model to probe (default: the first gpt-oss)."),
        model_dir: Optional[Path] = typer.Option(None, "--model-dir", metavar="PATH", help="Local model folder: check its generation_config.json."),
        quick: bool = typer.Option(False, "--quick", help="Discovery only: skip the behavioural probes."),
        deep: bool = typer.Option(False, "--deep", help="Also probe the Responses API and a two-turn tool conversation."),
        json_mode: JsonFlag = False,
        markdown: bool = typer.Option(False, "--markdown", help="Print a Markdown report to paste into a GitHub issue (secrets redacted)."),
        strict: bool = typer.Option(False, "--strict", help="Warnings fail too (exit 1)."),
        concurrency: int = typer.Option(4, "--concurrency", metavar="N", min=1, max=64, help="Targets checked at the same time."),
        verbose: bool = typer.Option(False, "--verbose", "-v", help="Show the evidence of passing checks too."),
        request: Optional[str] = typer.Option(None, "--request", metavar="FILE",
                                              help="Replay your own request: a JSON body, a curl command line or a "
                                                   "HAR file ('-' for stdin), sent as given, then streamed."),
        save: Optional[Path] = typer.Option(None, "--save", metavar="FILE", help="Save this report as a baseline (JSON)."),
        compare: Optional[Path] = typer.Option(None, "--compare", metavar="FILE",
                                               help="Say what changed since a saved baseline; exit 1 on a new problem."),
    ) -> None:
        from gptoss_doctor.entry import run_command

        def body(out) -> int:
            from gptoss_doctor.check import run as pipeline
            from gptoss_doctor.check import targets as target_urls
            from gptoss_doctor.check.link import kb_error
            from gptoss_doctor.check.result import CheckOptions, CheckReport
            from gptoss_doctor.errors import UsageError
            from gptoss_doctor.output import emit
            from gptoss_doctor.redact import remember

            if json_mode and markdown:
                raise UsageError("choose one of --json and --markdown")
            if quick and deep:
                raise UsageError("choose one of --quick and --deep")
            raw = list(urls or [])
            if targets is not None:
                raw += _read_targets(targets)
            local = None
            if not raw and targets is not None:
                raise UsageError(f"no URL in {targets}", hint="one URL per line, e.g. http://127.0.0.1:8000")
            if not raw:  # no URL: the gpt-oss servers of this host
                from gptoss_doctor.check import local as local_servers
                from gptoss_doctor.errors import UnreachableError

                local = local_servers.find()
                if not local.candidates:
                    raise UnreachableError("no gpt-oss server found on this host (looked at: "
                                           + "; ".join(local.looked) + ")",
                                           hint="name its URL: gptoss-doctor check http://HOST:PORT (or --targets FILE)")
                raw = [c.url for c in local.candidates]
                if not json_mode and not markdown:
                    for c in local.candidates:
                        out.note(f"found {c.url}: {c.why}")
            parsed, seen = [], set()
            for u in raw:
                base, notes = target_urls.normalize_url(u)
                if base not in seen:  # the same server twice is checked once
                    seen.add(base)
                    parsed.append((base, notes))
            if model_dir is not None and not model_dir.exists():
                raise UsageError(f"no such folder: {model_dir}")
            user_request = None
            if request is not None:
                from gptoss_doctor.check import request as user_requests

                if quick or deep:
                    raise UsageError("--request replays your request instead of the probes: drop --quick / --deep")
                user_request = user_requests.read(request)
                if model:
                    user_request.body["model"] = model
            from gptoss_doctor.check import baseline

            base_doc = baseline.load(compare) if compare is not None else None  # a bad baseline fails before probing
            opts = CheckOptions(api_key=api_key or None, timeout=timeout, model=model,
                                  model_dir=str(model_dir) if model_dir else None, quick=quick, deep=deep,
                                  concurrency=concurrency, request=user_request)
            secrets = [api_key] if api_key else []
            remember(api_key)
            for base, _ in parsed:
                from urllib.parse import urlsplit

                if urlsplit(base).password:
                    secrets.append(urlsplit(base).password)
            if not json_mode and not markdown:
                for base, notes in parsed:
                    for n in notes:
                        out.note(f"note: {n}")
            if user_request is not None:  # say what will be sent before sending it (never a header value or key)
                out.note(f"will send ({user_request.source}): {user_request.describe()}"
                         + ("; with the API key from --api-key / OPENAI_API_KEY" if api_key else ""))
                for n in user_request.notes:
                    out.note(f"note: {n}")
            with out.progress("checking …") as update:
                results = pipeline.run(parsed, opts, progress=update)
            if local is not None:  # a default port held by something else is not a gpt-oss server of this host
                from gptoss_doctor.check.targets import normalize_url as norm

                guessed = {norm(c.url)[0] for c in local.candidates if not c.from_launch}
                dropped = [r for r in results if r.url in guessed and not r.llm_server and not r.auth_problem]
                for r in dropped:
                    out.note(f"{r.url} answers but is not an OpenAI-compatible server: left out")
                results = [r for r in results if r not in dropped]
                if not results:
                    from gptoss_doctor.errors import UnreachableError

                    raise UnreachableError("no gpt-oss server found on this host (looked at: "
                                           + "; ".join(local.looked) + ")",
                                           hint="name its URL: gptoss-doctor check http://HOST:PORT")
            if kb_error():
                out.note(f"warning: the knowledge base could not be loaded ({kb_error()}); "
                         "findings carry no references")
            argv = "gptoss-doctor check " + " ".join(target_urls.public_url(b) for b, _ in parsed)
            result = CheckReport(results, strict=strict, verbose=verbose, argv=argv, secrets=secrets)
            if base_doc is not None:
                result.comparison = baseline.compare(base_doc, [t.to_json() for t in results], str(compare))
            if save is not None:
                baseline.save(result.to_json(), save)
                out.note(f"saved the report as a baseline: {save}")
            emit(out, result, "markdown" if markdown else "human")
            if result.exit_code == 1 and strict and not any(f.status in ("fail", "error") for f in result.findings):
                out.note("--strict: warnings count as failures")
            return result.exit_code

        run_command("check", json_mode, body)

"""``exporter``: check a fleet of gpt-oss servers on a schedule and serve the results as Prometheus metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from gptoss_doctor.output.sink import Output

EXPORTER_HELP = """Check every server of a targets file on a schedule and serve /metrics for Prometheus.

Each cycle checks the targets (at most --concurrency at a time, each start delayed by up to --jitter seconds):
discovery only (--quick) by default, a full check on the first cycle and every --full-every cycles. /metrics
has target up, engine / version / model info, one series per cause with its status, TTFT, check durations and
the last run time. Needs the optional extra: pip install 'gptoss-doctor[exporter]'.

  gptoss-doctor exporter --targets fleet.txt --port 9840

  gptoss-doctor exporter --targets fleet.txt --once     (one full cycle, the metrics on stdout)

Exit codes: 0 stopped (SIGTERM, or --once done), 2 usage (bad targets file, the port in use, no extra),
130 interrupted.
"""

DEFAULT_PORT = 9840


def register(app: typer.Typer) -> None:
    @app.command("exporter", help=EXPORTER_HELP, short_help="Serve fleet checks as Prometheus metrics.")
    def exporter_cmd(
        targets: Path = typer.Option(..., "--targets", metavar="FILE", help="File with one URL per line ('-' for stdin)."),
        port: int = typer.Option(DEFAULT_PORT, "--port", metavar="N", min=0, max=65535, help="Port of /metrics (0: any free port)."),
        host: str = typer.Option("127.0.0.1", "--host", metavar="ADDR", help="Address to bind (default loopback only)."),
        interval: float = typer.Option(60.0, "--interval", metavar="S", min=1.0, help="Seconds between cycle starts."),
        full_every: int = typer.Option(10, "--full-every", metavar="N", min=1, help="A full check every N cycles (1: always)."),
        concurrency: int = typer.Option(4, "--concurrency", metavar="N", min=1, max=64, help="Targets checked at the same time."),
        jitter: Optional[float] = typer.Option(None, "--jitter", metavar="S", min=0.0, help="Delay each target's start by up to S seconds (default: a tenth of --interval, at most 10)."),
        timeout: float = typer.Option(30.0, "--timeout", metavar="SECONDS", min=0.1, help="Seconds allowed per request."),
        api_key: Optional[str] = typer.Option(None, "--api-key", metavar="KEY", envvar="OPENAI_API_KEY", show_envvar=True,
                                              help="API key sent to every target (never printed)."),
        once: bool = typer.Option(False, "--once", help="Run one full cycle, print the metrics on stdout and exit."),
    ) -> None:
        from gptoss_doctor.entry import run_command

        def body(out: Output) -> int:
            import asyncio
            import signal
            import threading

            from gptoss_doctor.commands.check import _read_targets
            from gptoss_doctor.check.targets import normalize_url, public_url
            from gptoss_doctor.errors import UsageError
            from gptoss_doctor.redact import remember

            try:
                import prometheus_client  # noqa: F401
            except ImportError:
                raise UsageError("the exporter needs the optional extra: pip install 'gptoss-doctor[exporter]'") from None
            from gptoss_doctor import exporter as X

            if str(targets) != "-" and not targets.is_file():
                raise UsageError(f"no such file: {targets}")
            urls = list(dict.fromkeys(normalize_url(u)[0] for u in _read_targets(targets)))
            if not urls:
                raise UsageError(f"{targets} names no URL (one per line)")
            remember(api_key)
            sched = X.Schedule(interval=interval, full_every=1 if once else full_every, concurrency=concurrency,
                               jitter=0.0 if once else (min(interval / 10, 10.0) if jitter is None else jitter),
                               timeout=timeout, api_key=api_key or None)
            fleet = X.Fleet(urls)
            stop = threading.Event()
            if once:
                asyncio.run(X.run_forever(fleet, urls, sched, stop, cycles=1))
                out.stdout.write(X.exposition(fleet))
                out.stdout.flush()
                return 0
            try:
                server = X.serve(fleet, host, port)
            except OSError as exc:
                raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
            bound = server.server_port
            out.note(f"serving http://{host}:{bound}/metrics for {len(urls)} targets "
                     f"({', '.join(public_url(u) for u in urls[:3])}{' …' if len(urls) > 3 else ''}); "
                     f"every {interval:g} s, a full check every {sched.full_every} cycles")
            signal.signal(signal.SIGTERM, lambda *_: stop.set())
            try:
                asyncio.run(X.run_forever(fleet, urls, sched, stop,
                                          on_cycle=lambda n: out.note(f"cycle {n + 1} done")))
            finally:
                server.shutdown()
                server.server_close()
            return 0

        run_command("exporter", False, body)

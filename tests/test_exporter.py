"""``exporter``: fleet checks served as Prometheus metrics, scraped by a real Prometheus server (Debian's
``prometheus`` package, installed by .ci/run) that loads the shipped alert rules; the stale-config target alerts,
the healthy one does not. Also ``--once`` through the official client's own text parser, and the manifests."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run_cli
from tests.emulators import serve
from tests.hostile import hostile

RULES = ROOT / "docs" / "prometheus" / "gptoss-doctor.rules.yml"
MANIFEST = ROOT / "docs" / "kubernetes" / "gptoss-doctor-exporter.yaml"
PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
needs_prometheus = pytest.mark.skipif(PROMETHEUS is None, reason="no prometheus binary (apt-get install prometheus; "
                                      ".ci/run installs it)")


def _targets(tmp_path: Path, *urls: str) -> Path:
    f = tmp_path / "fleet.txt"
    f.write_text("# the fleet\n" + "\n".join(urls) + "\n")
    return f


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read(1 << 20))


def _start_exporter(targets: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "gptoss_doctor", "exporter", "--targets", str(targets),
                             "--port", "0", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            stdin=subprocess.DEVNULL)
    line = proc.stderr.readline()  # "serving http://127.0.0.1:PORT/metrics for …"
    m = re.search(r"serving (http://127\.0\.0\.1:\d+)/metrics", line)
    if not m:
        proc.kill()
        pytest.fail(f"the exporter did not say where it listens: {line!r} {proc.stderr.read()[:2000]!r}")
    return proc, m.group(1)


def _stop(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
        return -9


def test_once_prints_metrics_the_client_library_parses(tmp_path):
    from prometheus_client.parser import text_string_to_metric_families

    with serve("vllm", version="0.11.0", faults=("stale_eos",)) as bad, serve("vllm", version="0.11.0") as good:
        r = run_cli("exporter", "--targets", str(_targets(tmp_path, bad.url, good.url)), "--once", text=True,
                    timeout=120)
    assert r.returncode == 0, r.stderr
    fams = {f.name: f for f in text_string_to_metric_families(r.stdout)}
    up = {s.labels["target"]: s.value for s in fams["gptoss_doctor_target_up"].samples}
    assert up == {bad.url: 1.0, good.url: 1.0}
    info = {s.labels["target"]: s.labels for s in fams["gptoss_doctor_target_info"].samples}
    assert info[bad.url]["engine"] == "vllm" and info[bad.url]["version"] == "0.11.0"
    causes = [s.labels for s in fams["gptoss_doctor_cause"].samples]
    assert [(c["target"], c["cause"], c["status"]) for c in causes] == [
        (bad.url, "stale-generation-config-call-token", "fail")]
    ttft = {s.labels["target"]: s.value for s in fams["gptoss_doctor_ttft_seconds"].samples}
    assert set(ttft) == {bad.url, good.url} and all(0 < v < 30 for v in ttft.values())
    modes = {s.labels["mode"] for s in fams["gptoss_doctor_last_run_timestamp_seconds"].samples}
    assert modes == {"full"}


def test_hostile_names_reach_no_label_raw(tmp_path):
    """Model names with ESC sequences, C1 controls and bidi overrides become escaped label values; the document
    still parses and a URL's password in the targets file is no label."""
    from prometheus_client.parser import text_string_to_metric_families

    for behaviour in ("evil_names", "c1_names"):
        with hostile(behaviour) as srv:
            url = srv.url.replace("http://", "http://ops:hunter2-secret@")
            r = run_cli("exporter", "--targets", str(_targets(tmp_path, url)), "--once", "--timeout", "5",
                        text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", r.stdout)
        assert "hunter2-secret" not in r.stdout + r.stderr
        fams = {f.name: f for f in text_string_to_metric_families(r.stdout)}
        [up] = fams["gptoss_doctor_target_up"].samples
        assert up.labels["target"] == srv.url


def test_without_the_extra_says_how_to_install_it(tmp_path):
    """A Python where prometheus_client cannot be imported (a package that raises ImportError shadows it)."""
    shadow = tmp_path / "shadow" / "prometheus_client"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('not installed here')\n")
    r = run_cli("exporter", "--targets", str(_targets(tmp_path, "http://127.0.0.1:9")), "--once",
                env={"PYTHONPATH": str(shadow.parent)}, text=True, timeout=60)
    assert r.returncode == 2 and "pip install 'gptoss-doctor[exporter]'" in r.stderr and "Traceback" not in r.stderr


def test_usage_errors_without_traceback(tmp_path):
    r = run_cli("exporter", "--targets", str(tmp_path / "missing.txt"), text=True)
    assert r.returncode == 2 and "no such file" in r.stderr and "Traceback" not in r.stderr
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    r = run_cli("exporter", "--targets", str(empty), text=True)
    assert r.returncode == 2 and "names no URL" in r.stderr
    with socket.socket() as s:  # the port is taken
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        r = run_cli("exporter", "--targets", str(_targets(tmp_path, "http://127.0.0.1:9")), "--port",
                    str(s.getsockname()[1]), text=True, timeout=60)
    assert r.returncode == 2 and "cannot listen" in r.stderr and "Traceback" not in r.stderr


def test_binds_loopback_and_quick_checks_keep_the_full_checks_causes(tmp_path):
    """Binds 127.0.0.1 by default; after the first (full) cycle, quick cycles keep the cause the probes found."""
    with serve("vllm", version="0.11.0", faults=("stale_eos",)) as bad:
        proc, base = _start_exporter(_targets(tmp_path, bad.url), "--interval", "1", "--full-every", "100",
                                     "--jitter", "0")
        try:
            deadline = time.monotonic() + 60
            text = ""
            while time.monotonic() < deadline:
                text = urllib.request.urlopen(base + "/metrics", timeout=5).read().decode()
                if 'gptoss_doctor_checks_total{mode="quick"' in text:
                    break
                time.sleep(0.3)
            assert 'mode="quick"' in text, text[-2000:]
            assert re.search(r'gptoss_doctor_cause\{cause="stale-generation-config-call-token",status="fail"', text)
            port = int(base.rsplit(":", 1)[1])
            bound = [ln.split()[1] for ln in Path("/proc/net/tcp").read_text().splitlines()[1:]
                     + Path("/proc/net/tcp6").read_text().splitlines()[1:]
                     if ln.split()[1].endswith(f":{port:04X}") and ln.split()[3] == "0A"]  # 0A: LISTEN
            assert bound == [f"0100007F:{port:04X}"]  # 127.0.0.1 only, not 0.0.0.0 or ::
        finally:
            code = _stop(proc)
    assert code == 0


@needs_prometheus
def test_prometheus_scrapes_and_alerts_only_for_the_stale_target(tmp_path):
    if PROMTOOL:  # the shipped rules are valid for this Prometheus
        r = subprocess.run([PROMTOOL, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
    with serve("vllm", version="0.11.0", faults=("stale_eos",)) as bad, serve("vllm", version="0.11.0") as good:
        exporter, base = _start_exporter(_targets(tmp_path, bad.url, good.url), "--interval", "2",
                                         "--full-every", "3")
        prom_port = _free_port()
        config = tmp_path / "prometheus.yml"
        config.write_text(yaml.safe_dump({
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "1s"},
            "rule_files": [str(RULES)],
            "scrape_configs": [{"job_name": "gptoss-doctor",
                                "static_configs": [{"targets": [base.split("//", 1)[1]]}]}],
        }))
        log = open(tmp_path / "prometheus.log", "w")
        prom = subprocess.Popen([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                 f"--web.listen-address=127.0.0.1:{prom_port}"], stdout=log, stderr=log,
                                stdin=subprocess.DEVNULL)
        api = f"http://127.0.0.1:{prom_port}/api/v1"
        try:
            deadline = time.monotonic() + 90
            firing, alerts = [], []
            while time.monotonic() < deadline:
                try:
                    alerts = _get_json(api + "/alerts")["data"]["alerts"]
                except OSError:
                    alerts = []
                firing = [a for a in alerts if a["state"] == "firing"]
                if any(a["labels"].get("target") == bad.url for a in firing):
                    break
                assert prom.poll() is None, (tmp_path / "prometheus.log").read_text()[-3000:]
                time.sleep(0.5)
            assert [(a["labels"]["alertname"], a["labels"]["target"], a["labels"]["cause"]) for a in firing] == [
                ("GptOssServingFault", bad.url, "stale-generation-config-call-token")], alerts
            # Prometheus scraped both targets' series, and the healthy one raised no alert in any state
            q = _get_json(api + "/query?" + urllib.parse.urlencode({"query": "gptoss_doctor_target_up"}))
            assert {(s["metric"]["target"], s["value"][1]) for s in q["data"]["result"]} == {(bad.url, "1"),
                                                                                            (good.url, "1")}
            assert not [a for a in alerts if a["labels"].get("target") == good.url]
            rules = _get_json(api + "/rules")["data"]["groups"]
            assert {r["name"] for g in rules for r in g["rules"]} >= {"GptOssServingFault", "GptOssTargetDown"}
        finally:
            prom.terminate()
            try:
                prom.wait(15)
            except subprocess.TimeoutExpired:
                prom.kill()
            log.close()
            assert _stop(exporter) == 0


def test_kubernetes_manifest_runs_the_exporter_with_its_own_arguments(tmp_path):
    """The Deployment's arguments are ones the exporter accepts (run once against an emulator), the ServiceMonitor
    scrapes the Service's named port."""
    docs = list(yaml.safe_load_all(MANIFEST.read_text()))
    kinds = {d["kind"]: d for d in docs}
    assert set(kinds) == {"ConfigMap", "Deployment", "Service", "ServiceMonitor"}
    [container] = kinds["Deployment"]["spec"]["template"]["spec"]["containers"]
    args = container["args"]
    assert args[0] == "exporter" and "--host=0.0.0.0" in args
    port = container["ports"][0]
    assert kinds["Service"]["spec"]["ports"][0]["targetPort"] == port["name"]
    assert kinds["ServiceMonitor"]["spec"]["endpoints"][0]["port"] == kinds["Service"]["spec"]["ports"][0]["name"]
    assert f"--port={port['containerPort']}" in args
    with serve("vllm", version="0.11.0") as good:
        local = [a for a in args if not a.startswith(("--targets=", "--host=", "--port="))]
        r = run_cli(*local, "--targets", str(_targets(tmp_path, good.url)), "--once", text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert f'gptoss_doctor_target_up{{target="{good.url}"}} 1.0' in r.stdout

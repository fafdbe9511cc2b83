"""``scan``: read-only, offline look at how gpt-oss is launched here — launch files, running processes and
containers, engine versions, GPUs, model copies — judged against the knowledge base.

Pipeline: discover (files, processes, containers) → extract (launches) → judge (rules) → report (ScanResult).
Nothing is written; secrets found are reported by name and place, never by value.
"""

from __future__ import annotations

from pathlib import Path

from gptoss_doctor.scan.model import Finding, Launch, ScanResult, Skipped

__all__ = ["Finding", "Launch", "ScanResult", "Skipped", "scan"]


def scan(paths: list[Path], *, processes: bool | None = None, host: bool = True) -> ScanResult:
    """Scan ``paths`` (files or folders); with no paths, this host's running processes and containers too."""
    from gptoss_doctor.scan import host as host_mod
    from gptoss_doctor.scan import launches as L
    from gptoss_doctor.scan import read, rules

    res = ScanResult()
    if processes is None:
        processes = not paths
    for path, kind in read.discover(paths, res.skipped):
        if kind == "model-folder":
            if host_mod.is_gpt_oss_folder(path):
                res.findings += rules.judge_model_folder(str(path), host_mod.read_generation_config(path),
                                                         str(path / "generation_config.json"))
            continue
        try:
            launches, configs, env_values = L.read_launch_file(path, kind)
        except read.Unreadable as exc:
            res.skipped.append(Skipped(str(path), str(exc)))
            continue
        res.files_read += 1
        res.launches += launches
        for doc in configs:
            res.findings += rules.judge_litellm_config(str(path), doc)
        if env_values:
            res.findings += rules.judge_env_file(str(path), env_values)
    if processes:
        found, count = L.from_processes(res.skipped)
        res.launches += found
        res.processes_read = count
        res.launches += L.from_docker(res.skipped)
    for la in res.launches:
        res.findings += rules.judge_launch(la)
    if host:
        pk = host_mod.packages()
        gp = host_mod.gpus(res.skipped)
        res.host = {"packages": pk, "gpus": gp}
        res.findings += host_mod.judge_packages(pk)
        res.findings += rules.judge_gpus(gp, {la.engine for la in res.launches} | ({"vllm"} if "vllm" in pk else set()))
        copies = []
        for rid, snap in host_mod.cache_copies(res.skipped):
            copies.append({"repo": rid, "snapshot": str(snap)})
            res.findings += rules.judge_model_folder(rid, host_mod.read_generation_config(snap),
                                                     str(snap / "generation_config.json"))
        res.host["model_copies"] = copies
    # one finding per cause and place: a secret exported once in a script that starts three launches is one secret
    seen: set[tuple[str, str, str]] = set()
    unique = []
    for f in res.findings:
        key = (f.id, f.where, f.title)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    res.findings = unique
    order = {"fail": 0, "warn": 1, "info": 2, "pass": 3}
    res.findings.sort(key=lambda f: (order.get(f.status, 9), f.where))
    return res

"""The findings ``check`` can emit: id, the title printed for it, and what it means, read from the table in
``findings.tsv`` (report order). Knowledge-base signatures name the ids (``signatures.findings``)."""

from __future__ import annotations

from pathlib import Path


def _read() -> tuple[tuple[str, str, str], ...]:
    rows = []
    for line in (Path(__file__).with_name("findings.tsv")).read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            fid, title, meaning = line.split("\t")
            rows.append((fid, title, meaning))
    return tuple(rows)


CATALOGUE: tuple[tuple[str, str, str], ...] = _read()
FINDING_IDS: dict[str, str] = {fid: meaning for fid, _, meaning in CATALOGUE}
TITLES: dict[str, str] = {fid: title for fid, title, _ in CATALOGUE}

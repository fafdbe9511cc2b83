"""fix-config's typed results (rendered by ``gptoss_doctor.output``). A run compares each copy (a ModelReport per
model, shown as it is built), may apply, and ends with one of these."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from gptoss_doctor.results import CommandResult, InfoResult

# how a compare-and-refresh run ended, for the summary line
UP_TO_DATE, KEPT, DRY_RUN, DECLINED, BLOCKED, APPLIED = "up-to-date", "kept", "dry-run", "declined", "blocked", "applied"
UNCHECKED = "not-checked"  # nothing stale among the files compared, but some were never compared (skipped)


@dataclass
class FixConfigRun(CommandResult):
    """A compare (and maybe refresh) run over one or more copies."""

    command = "fix-config"
    reports: list = field(default_factory=list)  # fixconfig.ModelReport
    outcome: str = UP_TO_DATE
    code: int = 0
    kept: list[str] = field(default_factory=list)  # files modified locally and left alone
    apply_with: str = ""  # the command line that applies the changes
    unchecked: list[str] = field(default_factory=list)  # "file (why)" of files skipped, so never compared

    @property
    def exit_code(self) -> int:
        return self.code

    def to_json(self) -> dict:
        return {"ok": self.code == 0, "exit_code": self.code, "models": [r.to_json() for r in self.reports]}


@dataclass
class FixConfigRestore(CommandResult):
    """``--restore``: with --dry-run the backups that could be restored; else the backup put back, or None when
    the user said no."""

    command = "fix-config"
    root: str = ""
    backups: Optional[list] = None  # set when only listing (--dry-run)
    restored: Optional[str] = None

    @property
    def exit_code(self) -> int:
        return 0 if self.backups is not None or self.restored else 1

    def to_json(self) -> dict:
        if self.backups is not None:
            return {"ok": True, "exit_code": 0, "backups": self.backups}
        if not self.restored:
            return {"ok": False, "exit_code": 1, "restored": None}
        return {"ok": True, "exit_code": 0, "restored": self.restored, "path": self.root}


@dataclass
class FixConfigVocab(InfoResult):
    """``fix-config --vocab DIR``: the o200k vocabulary file written (or found, or not written under --dry-run)."""

    command = "fix-config"
    path: str = ""
    source: str = ""
    sha256: str = ""
    action: str = "written"  # written | already-present | dry-run
    backup: Optional[str] = None
    env: str = ""  # the TIKTOKEN_ENCODINGS_BASE=… line
    dest_dir: str = ""

    def to_json(self) -> dict:
        return {"ok": True, "exit_code": 0, "vocab": {"path": self.path, "source": self.source, "sha256": self.sha256,
                                                     "action": self.action, "backup": self.backup, "env": self.env}}


def short(commit: Optional[str]) -> str:
    return commit[:7] if commit else "?"


def undo_command(rep: Any) -> str:
    m = rep.model
    tgt = str(m.root) if m.kind == "folder" else (m.repo_id or str(m.root))
    return f"gptoss-doctor fix-config {tgt} --restore --backup {rep.backup_id}"

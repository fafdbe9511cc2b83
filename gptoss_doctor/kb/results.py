"""The ``kb`` commands' typed results (rendered by ``gptoss_doctor.output``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gptoss_doctor.results import CommandResult, InfoResult


@dataclass
class KbList(InfoResult):
    """``kb list``: the entries (of one engine, with --engine)."""

    command = "kb list"
    entries: list = field(default_factory=list)

    def to_json(self) -> dict:
        return {"ok": True, "entries": [{"id": e.id, "title": e.title, "engines": e.engines, "origin": e.origin}
                                        for e in self.entries]}


@dataclass
class KbShow(InfoResult):
    """``kb show ID``: one entry in full."""

    command = "kb show"
    entry: Any = None
    requested: str = ""  # the id asked for: an old id that was merged into ``entry`` resolves to it

    def to_json(self) -> dict:
        doc = {"ok": True, "entry": self.entry.to_json()}
        if self.requested and self.requested != self.entry.id:
            doc["merged"] = {"id": self.requested, "into": self.entry.id}
        return doc


@dataclass
class KbSearch(InfoResult):
    """``kb search WORDS``: the entries that match, best first, with their scores."""

    command = "kb search"
    query: str = ""
    matches: list = field(default_factory=list)

    def to_json(self) -> dict:
        return {"ok": True, "query": self.query, "matches": [m.to_json() for m in self.matches]}


@dataclass
class KbValidate(CommandResult):
    """``kb validate``: exit 2 when an entry breaks the schema."""

    command = "kb validate"
    path: str = ""
    entries: int = 0
    problems: list = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 2 if self.problems else 0

    def to_json(self) -> dict:
        return {"ok": not self.problems, "path": self.path, "entries": self.entries, "problems": self.problems}

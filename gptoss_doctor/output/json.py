"""The JSON renderer: one versioned document per run, the one envelope (``Output.json``) around the result's
payload."""

from __future__ import annotations

from gptoss_doctor.output.sink import Output
from gptoss_doctor.results import CommandResult


def render(out: Output, result: CommandResult) -> None:
    out.json(result.command, result.to_json())

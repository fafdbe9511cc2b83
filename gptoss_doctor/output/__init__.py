"""Output: the one sink (``sink.Output``: stdout data, stderr diagnostics, JSON mode) and one renderer per format
(``human``, ``json``, ``markdown``), each dispatching on the command result it is given."""

from __future__ import annotations

from gptoss_doctor.output.sink import Output
from gptoss_doctor.results import CommandResult


def emit(out: Output, result: CommandResult, fmt: str = "human") -> int:
    """Render ``result`` in the run's format (JSON whenever the sink is in JSON mode); its exit code."""
    if out.json_mode:
        from gptoss_doctor.output import json as renderer
    elif fmt == "markdown":
        from gptoss_doctor.output import markdown as renderer  # type: ignore[no-redef]
    else:
        from gptoss_doctor.output import human as renderer  # type: ignore[no-redef]
    renderer.render(out, result)
    return result.exit_code


__all__ = ["Output", "emit"]

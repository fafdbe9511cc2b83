"""One module per command group; each exposes ``register(app)``.

Importing a command module must stay cheap: heavy work is imported inside the
command function. A run mounts only the module of the command it names (Typer
builds the options of every mounted command before it runs one): the rest are
mounted for the root help, ``--version``, no command or a misspelt one.
"""

from __future__ import annotations

import importlib

ORDER = ("check", "explain", "fixconfig", "kb", "scan", "report", "exporter", "mcp")  # as the help lists them
# the command names each module mounts
NAMES = {"check": "check", "explain": "explain", "decode": "explain", "fix-config": "fixconfig", "kb": "kb",
         "scan": "scan", "report": "report", "exporter": "exporter", "mcp": "mcp"}
ROOT_FLAGS = ("--debug",)  # root options that take no value and may come before the command


def needed(args: list[str]) -> tuple[str, ...]:
    """The command modules a run with these arguments needs: the one of the command it names, else all."""
    for arg in args:
        if arg in ROOT_FLAGS:
            continue
        module = NAMES.get(arg)
        return (module,) if module else ORDER
    return ORDER


def register(app, modules: tuple[str, ...], mounted: set) -> None:
    """Mount ``modules`` on ``app``, each once (``mounted`` remembers them across runs in one process)."""
    for name in modules:
        if name not in mounted:
            importlib.import_module(f"gptoss_doctor.commands.{name}").register(app)
            mounted.add(name)

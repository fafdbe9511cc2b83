"""One module per command group; each exposes ``register(app)``.

Importing a command module must stay cheap: heavy work is imported inside the
command function.
"""

from __future__ import annotations


def COMMAND_MODULES():  # noqa: N802 - a constant-like registry
    from gptoss_doctor.commands import check, explain, exporter, fixconfig, kb, mcp, report, scan

    return [check.register, explain.register, fixconfig.register, kb.register, scan.register, report.register,
            exporter.register, mcp.register]

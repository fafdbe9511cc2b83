"""``mcp``: serve the doctor's commands as MCP tools over stdio (optional extra: gptoss-doctor[mcp])."""

from __future__ import annotations

import typer

MCP_HELP = """Serve the doctor to agents as MCP tools over stdio.

Tools: explain, decode, kb_search, kb_show, check, scan, fix_config_plan (read-only) and fix_config_apply (writes;
needs confirm=true). Each returns the JSON document the CLI prints with --json. Needs the optional extra:

  pip install 'gptoss-doctor[mcp]'

Register it with an MCP client as a stdio server whose command is: gptoss-doctor mcp
"""


def register(app: typer.Typer) -> None:
    @app.command("mcp", help=MCP_HELP)
    def mcp_cmd() -> None:
        from gptoss_doctor.errors import UsageError

        try:
            import mcp.server.mcpserver  # noqa: F401
        except ImportError:
            from gptoss_doctor.output.sink import Output

            exc = UsageError("the MCP server needs the optional extra: pip install 'gptoss-doctor[mcp]'")
            Output().note(f"error: {exc}")
            raise typer.Exit(2) from None
        from gptoss_doctor.mcp_server import serve

        serve()

"""``mcp``: serve the doctor's commands as MCP tools over stdio (optional extra: gptoss-doctor[mcp])."""

from __future__ import annotations

from typing import List, Optional

import typer

MCP_HELP = """Serve the doctor to agents as MCP tools over stdio.

Tools: explain, decode, kb_search, kb_show, check, scan, fix_config_plan (read-only) and fix_config_apply (writes;
needs confirm=true). Each returns the JSON document the CLI prints with --json. Needs the optional extra:

  pip install 'gptoss-doctor[mcp]'

Register it with an MCP client as a stdio server whose command is: gptoss-doctor mcp

The check tool sends an API key only when the agent asks for it, only the value of --api-key-env (default
OPENAI_API_KEY), and only to the hosts named with --allow-host; anything else is refused.
"""


def register(app: typer.Typer) -> None:
    @app.command("mcp", help=MCP_HELP)
    def mcp_cmd(
        api_key_env: str = typer.Option("OPENAI_API_KEY", "--api-key-env", metavar="NAME",
                                        help="The one variable whose value check may send as the API key."),
        allow_host: Optional[List[str]] = typer.Option(None, "--allow-host", metavar="HOST[:PORT]",
                                                       help="A host check may send that key to (repeat for more)."),
    ) -> None:
        from gptoss_doctor.errors import UsageError

        try:
            import mcp.server.mcpserver  # noqa: F401
        except ImportError:
            from gptoss_doctor.output.sink import Output

            exc = UsageError("the MCP server needs the optional extra: pip install 'gptoss-doctor[mcp]'")
            Output().note(f"error: {exc}")
            raise typer.Exit(2) from None
        from gptoss_doctor.mcp_server import serve

        try:
            serve(api_key_env, allow_host or [])
        except UsageError as exc:
            from gptoss_doctor.output.sink import Output

            Output().note(f"error: {exc}")
            raise typer.Exit(2) from None

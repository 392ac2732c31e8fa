"""An MCP server of the airline domain's agent tools, on its mock database, plus one tool no policy
knows (`delete_all_reservations`): what the MCP proxy tests put the gate in front of. Runs on stdio
as a script (`python tests/adapters/airline_mcp.py`); `build()` gives the server for in-process use.
`calls` records what reached it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

calls: list[tuple[str, dict[str, Any]]] = []


def build() -> Server[Any]:
    from ledger_tui.domains import load_domain
    from ledger_tui.engine.environment import Environment
    from ledger_tui.engine.events import ToolCall

    domain = load_domain("airline")
    env = Environment(domain)
    tools = [
        types.Tool(name=s["function"]["name"], description=s["function"]["description"], input_schema=s["function"]["parameters"])
        for s in domain.tool_schemas()
    ] + [types.Tool(name="delete_all_reservations", description="Delete every reservation.", input_schema={"type": "object", "properties": {}})]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        calls.append((params.name, arguments))
        if params.name == "delete_all_reservations":
            return types.CallToolResult(content=[types.TextContent(type="text", text="deleted")])
        outcome = env.execute(ToolCall(id=f"mcp_{len(calls)}", name=params.name, arguments=arguments))
        return types.CallToolResult(content=[types.TextContent(type="text", text=outcome.content)], is_error=outcome.error)

    return Server("airline-mock", on_list_tools=list_tools, on_call_tool=call_tool)


if __name__ == "__main__":
    import anyio
    from mcp.server.stdio import stdio_server

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

    async def main() -> None:
        server = build()
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)

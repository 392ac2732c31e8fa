"""`ledger-tui mcp-proxy`: the gate in front of any MCP server.

The proxy is an MCP server to its client and an MCP client of the server it starts (stdio on both
sides). It lists only the tools the policy knows (a domain's, or a policy module's); a read is
forwarded and its result absorbed into the ledger; a write is gated first and forwarded only on
ALLOW; anything else is refused. A write held for the customer (a confirmation card, a closed
question) goes to them as an MCP elicitation when the client supports it, and their answer is
recorded and the call gated again; a client without elicitation gets the call refused with the
card's text. The MCP server knows who is signed in, not the customer's words: `--user` says who the
host authenticated, recorded as the conversation's first customer message.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ledger_tui.adapters._core import require

require("mcp", "the MCP Python SDK (mcp)")

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.server.lowlevel import Server  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from ledger_tui.api import Decision, PolicyGate  # noqa: E402
from ledger_tui.engine.domain import Domain  # noqa: E402
from ledger_tui.engine.errors import LedgerTuiError  # noqa: E402

__all__ = ["GatedProxy", "run_proxy", "authenticated"]

ASK_ROUNDS = 3  # held calls asked of the customer in one tool call (a question, then the card)


def authenticated(user: str) -> str:
    """The customer message that records who the MCP host signed in."""
    return f"My user id is {user}. (The MCP host authenticated this customer as {user}.)"


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def _payload(result: types.CallToolResult) -> Any:
    """What a tool returned, for the path map: its text when that is JSON, else its structured content."""
    text = _text(result)
    try:
        return json.loads(text)
    except ValueError:
        return result.structured_content if result.structured_content is not None else text


def _refused(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


CARD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Confirm", "description": "Yes, make exactly this change."}},
    "required": ["confirm"],
}
QUESTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string", "title": "Answer", "description": "The number or the words of one choice."}},
    "required": ["answer"],
}


class GatedProxy:
    """The gate between an MCP client and `upstream` (a ClientSession to the real server, initialized)."""

    def __init__(
        self, upstream: ClientSession, domain: str | Domain, *, user: str | None = None, out: Path | None = None
    ) -> None:
        self.upstream = upstream
        self.gate = PolicyGate(domain, consent="card")
        self.domain = self.gate.domain
        self.out = out
        self.served: dict[str, types.Tool] = {}
        if user:
            self.gate.customer_says(authenticated(user))
        self.server: Server[Any] = Server(
            f"ledger-tui gate ({self.domain.name})", on_list_tools=self._list_tools, on_call_tool=self._call_tool
        )

    async def start(self) -> None:
        """Learn the upstream's tools: the ones the policy knows are served, the others hidden."""
        listed = await self.upstream.list_tools()
        self.served = {t.name: t for t in listed.tools if self.domain.tool(t.name) is not None}

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list(self.served.values()))

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            return await self._gated(ctx, params.name, dict(params.arguments or {}))
        finally:
            if self.out is not None:
                self.gate.save(self.out)

    async def _gated(self, ctx: Any, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        spec = self.domain.tool(name)
        if spec is not None and name not in self.served:
            return _refused(f"{name} is not served by the MCP server behind this gate; the gate does not run it.")
        if spec is not None and spec.kind == "read":
            result = await self.upstream.call_tool(name, arguments)
            seen = self.gate.observe(name, arguments, _payload(result), error=bool(result.is_error))
            if seen.withheld:
                return _refused(seen.model_text)
            return result
        decision = self.gate.check(name, arguments)  # an unknown tool: BLOCK, recorded
        for _ in range(ASK_ROUNDS):
            if decision.allowed or not (decision.card or decision.question):
                break
            answer = await self._ask(ctx, decision)
            if answer is None:  # no elicitation: the client's user reads the card in the refusal
                shown = decision.card or decision.question
                return _refused(f"{decision.feedback} This client cannot ask the customer; show them this and call again after a yes:\n{shown}")
            reply = self.gate.customer_says(answer)
            if decision.card and (reply is None or reply.answer != "yes"):
                return _refused(f"The customer did not confirm {name} on the card ({answer!r}); nothing was run.")
            decision = self.gate.check(name, arguments)
        if not decision.allowed:
            return _refused(decision.feedback)
        result = await self.upstream.call_tool(name, arguments)
        self.gate.ran(name, arguments, _payload(result), error=bool(result.is_error))
        return result

    async def _ask(self, ctx: Any, decision: Decision) -> str | None:
        """The card (or the question) as an elicitation; the customer's answer in words, or None
        when the client cannot be asked."""
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            return None
        schema = CARD_SCHEMA if decision.card else QUESTION_SCHEMA
        try:
            reply = await ctx.session.elicit_form(decision.card or decision.question or "", schema, related_request_id=ctx.request_id)
        except (MCPError, RuntimeError):  # no back-channel on this connection, or the client failed to ask
            return None
        if decision.card:
            confirmed = reply.action == "accept" and (reply.content or {}).get("confirm") is True
            return "Yes." if confirmed else "No."
        answer = (reply.content or {}).get("answer") if reply.action == "accept" else None
        return str(answer) if answer else "I'd rather not say."


async def run_proxy(command: list[str], domain: str | Domain, *, user: str | None = None, out: Path | None = None) -> None:
    """Start `command` (an MCP server on stdio) and serve it, gated, on this process's stdio."""
    from mcp.server.stdio import stdio_server

    if not command:
        raise LedgerTuiError("Name the MCP server to put the gate in front of after --, e.g. -- python my_server.py.")
    if isinstance(domain, str):
        from ledger_tui.domains import load_domain

        domain = load_domain(domain)  # an unknown name stops here, before anything starts
    params = StdioServerParameters(command=command[0], args=command[1:])
    try:
        async with stdio_client(params, errlog=sys.stderr) as (read, write):
            async with ClientSession(read, write) as upstream:
                await upstream.initialize()
                proxy = GatedProxy(upstream, domain, user=user, out=out)
                await proxy.start()
                async with stdio_server() as (client_read, client_write):
                    await proxy.server.run(client_read, client_write, proxy.server.create_initialization_options())
    except OSError as exc:
        raise LedgerTuiError(f"Cannot start the MCP server {command[0]} ({exc.strerror or exc}); check the command after --.") from None
    except BaseExceptionGroup as group:  # anyio's task groups: the upstream went away
        first = _leaf(group)
        if isinstance(first, LedgerTuiError):
            raise first from None
        if isinstance(first, (MCPError, anyio.ClosedResourceError, anyio.BrokenResourceError)):
            raise LedgerTuiError(
                f"The MCP server {' '.join(command)} closed the connection ({first}); check the command after -- (its own errors are above)."
            ) from None
        raise


def _leaf(group: BaseExceptionGroup) -> BaseException:
    first: BaseException = group
    while isinstance(first, BaseExceptionGroup) and first.exceptions:
        first = first.exceptions[0]
    return first

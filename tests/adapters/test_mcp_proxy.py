"""The MCP proxy between a real MCP client and a real MCP server (the airline tools on the mock
database): reads absorbed, writes gated, unknown tools hidden and refused, the card as an
elicitation, or in the refusal when the client cannot be asked; and `ledger-tui mcp-proxy` on stdio."""

from __future__ import annotations

import json
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

# the mcp extra is a dev dependency: without it these tests fail at import (they never skip)
import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.shared.memory import create_client_server_memory_streams  # noqa: E402

from ledger_tui.adapters.mcp_proxy import GatedProxy  # noqa: E402
from tests.adapters import airline_mcp  # noqa: E402

HERE = Path(__file__).resolve().parent


@asynccontextmanager
async def serving(server: Any) -> AsyncIterator[tuple[Any, Any]]:
    """A lowlevel MCP server run in the background over memory streams: the client's streams."""
    async with create_client_server_memory_streams() as (client_streams, server_streams):
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: server.run(server_streams[0], server_streams[1], server.create_initialization_options()))
            yield client_streams
            tg.cancel_scope.cancel()


@asynccontextmanager
async def proxied(
    user: str | None, answers: list[dict[str, Any]] | None, domain: Any = "airline"
) -> AsyncIterator[tuple[ClientSession, GatedProxy, list[str]]]:
    """A client → proxy → airline server chain in this process. `answers`: what the client's user
    answers to each elicitation, in order (None: a client without elicitation)."""
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(**answers.pop(0))  # type: ignore[union-attr]

    airline_mcp.calls.clear()
    async with serving(airline_mcp.build()) as (up_read, up_write):
        async with ClientSession(up_read, up_write) as upstream:
            await upstream.initialize()
            proxy = GatedProxy(upstream, domain, user=user)
            await proxy.start()
            async with serving(proxy.server) as (read, write):
                async with ClientSession(read, write, elicitation_callback=elicit if answers is not None else None) as client:
                    await client.initialize()
                    yield client, proxy, asked


def text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_only_the_policys_tools_are_listed_and_an_unknown_one_is_refused() -> None:
    async with proxied("grace_scott_6483", []) as (client, proxy, _):
        names = {t.name for t in (await client.list_tools()).tools}
        refused = await client.call_tool("delete_all_reservations", {})
    assert "get_reservation_details" in names and "cancel_reservation" in names
    assert "delete_all_reservations" not in names
    assert refused.is_error and "not a tool of the airline domain" in text(refused)
    assert ("delete_all_reservations", {}) not in airline_mcp.calls


async def test_the_reason_and_the_card_go_out_as_elicitations_and_the_yes_runs_the_write() -> None:
    answers = [{"action": "accept", "content": {"answer": "1"}}, {"action": "accept", "content": {"confirm": True}}]
    async with proxied("grace_scott_6483", answers) as (client, proxy, asked):
        await client.call_tool("get_user_details", {"user_id": "grace_scott_6483"})
        await client.call_tool("get_reservation_details", {"reservation_id": "633IZT"})
        done = await client.call_tool("cancel_reservation", {"reservation_id": "633IZT"})
    assert not done.is_error and json.loads(text(done))["status"] == "cancelled"
    assert asked[0].startswith("Why do you want to cancel reservation 633IZT?")
    assert asked[1].startswith("Before I go ahead, please confirm") and "Refund: $100" in asked[1]
    assert ("cancel_reservation", {"reservation_id": "633IZT"}) in airline_mcp.calls
    ledger = proxy.gate.ledger
    assert ledger["reservations.633IZT"]["stale"] is True and ledger["users.current"]["value"] == "grace_scott_6483"


async def test_a_no_on_the_card_refuses_the_write_and_it_never_reaches_the_server() -> None:
    answers = [{"action": "accept", "content": {"answer": "My plans changed"}}, {"action": "decline"}]
    async with proxied("grace_scott_6483", answers) as (client, _, asked):
        await client.call_tool("get_user_details", {"user_id": "grace_scott_6483"})
        await client.call_tool("get_reservation_details", {"reservation_id": "633IZT"})
        refused = await client.call_tool("cancel_reservation", {"reservation_id": "633IZT"})
    assert len(asked) == 2 and refused.is_error
    assert not any(name == "cancel_reservation" for name, _ in airline_mcp.calls)


async def test_without_elicitation_the_refusal_carries_the_question_and_a_forbidden_write_is_blocked() -> None:
    async with proxied("rosa_phillips_9719", None) as (client, _, _):
        await client.call_tool("get_user_details", {"user_id": "rosa_phillips_9719"})
        await client.call_tool("get_reservation_details", {"reservation_id": "VY0QX8"})
        await client.call_tool("get_flight_status", {"flight_number": "HAT255", "date": "2024-05-23"})
        blocked = await client.call_tool("cancel_reservation", {"reservation_id": "VY0QX8"})
    assert blocked.is_error and text(blocked).startswith("POLICY GATE: BLOCK. cancel_reservation is not allowed")
    async with proxied("grace_scott_6483", None) as (client, _, _):
        await client.call_tool("get_user_details", {"user_id": "grace_scott_6483"})
        await client.call_tool("get_reservation_details", {"reservation_id": "633IZT"})
        held = await client.call_tool("cancel_reservation", {"reservation_id": "633IZT"})
    assert held.is_error and "This client cannot ask the customer" in text(held)
    assert "Why do you want to cancel reservation 633IZT?" in text(held)
    assert not any(name == "cancel_reservation" for name, _ in airline_mcp.calls)


async def test_without_an_authenticated_user_a_write_waits_for_identification() -> None:
    async with proxied(None, []) as (client, _, asked):
        await client.call_tool("get_user_details", {"user_id": "grace_scott_6483"})
        held = await client.call_tool("cancel_reservation", {"reservation_id": "633IZT"})
    assert held.is_error and "REVISE" in text(held) and asked == []


async def test_the_cli_proxy_on_stdio_gates_a_server_it_starts(tmp_path: Path) -> None:
    from mcp.client.stdio import StdioServerParameters, stdio_client

    out = tmp_path / "mcp.jsonl"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ledger_tui", "mcp-proxy", "--domain", "airline", "--user", "rosa_phillips_9719", "--out", str(out),
              "--", sys.executable, str(HERE / "airline_mcp.py")],
        cwd=str(HERE.parents[1]),
    )
    with anyio.fail_after(30):
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                names = {t.name for t in (await client.list_tools()).tools}
                user = await client.call_tool("get_user_details", {"user_id": "rosa_phillips_9719"})
                blocked = await client.call_tool("cancel_reservation", {"reservation_id": "VY0QX8"})
    assert "delete_all_reservations" not in names
    assert json.loads(text(user))["user_id"] == "rosa_phillips_9719"
    assert blocked.is_error and "POLICY GATE" in text(blocked)
    kinds = [json.loads(line)["type"] for line in out.read_text().splitlines()]
    assert "gate_decision" in kinds and "ledger_update" in kinds


POLICY = """
from ledger_tui.adapters import policy
from ledger_tui.engine.events import Verdict
from ledger_tui.engine.gate import predicate


@predicate("not_basic_economy", clause="cancel.cabin", on_fail=Verdict.BLOCK, tools=["cancel_reservation"])
def not_basic_economy(ctx):
    \"\"\"Basic economy is never cancelled here.\"\"\"
    booking = ctx.read("bookings." + ctx.arguments["reservation_id"])
    if booking["cabin"] == "basic_economy":
        return ctx.fail("A basic-economy booking is not cancelled.", "Offer a change instead.")
    return None


def build():
    return policy(
        "my-airline",
        reads={"get_reservation_details": lambda args, result: [("bookings." + result["reservation_id"], result)]},
        writes={"cancel_reservation": ("bookings.{reservation_id}",)},
        predicates=[not_basic_economy],
    )
"""


async def test_a_policy_module_of_ones_own_gates_the_servers_tools(tmp_path: Path) -> None:
    from ledger_tui.adapters import load_policy

    module = tmp_path / "my_policy.py"
    module.write_text(POLICY)
    mine = load_policy(str(module))
    async with proxied(None, [], domain=mine) as (client, proxy, _):
        names = {t.name for t in (await client.list_tools()).tools}
        unread = await client.call_tool("cancel_reservation", {"reservation_id": "633IZT"})
        await client.call_tool("get_reservation_details", {"reservation_id": "633IZT"})
        done = await client.call_tool("cancel_reservation", {"reservation_id": "633IZT"})
        again = await client.call_tool("cancel_reservation", {"reservation_id": "633IZT"})
    assert names == {"get_reservation_details", "cancel_reservation"}
    assert unread.is_error and "bookings.633IZT has not been read" in text(unread)
    assert not done.is_error and json.loads(text(done))["status"] == "cancelled"
    assert again.is_error and "bookings.633IZT is stale" in text(again)  # the write made it stale


def test_a_policy_module_that_declares_nothing_is_one_sentence(tmp_path: Path) -> None:
    from ledger_tui.adapters import load_policy
    from ledger_tui.engine.errors import LedgerTuiError

    module = tmp_path / "empty.py"
    module.write_text("x = 1\n")
    with pytest.raises(LedgerTuiError, match="declares no domain; give it build"):
        load_policy(str(module))

"""Requests go out with the prompt's prefix encoded once (engine/model/body.py), and the server
receives exactly the bytes the SDK's own encoding of each request would have sent."""

import math

import pytest

from ledger_tui.engine.model import endpoint
from ledger_tui.engine.model.models import ClientOptions, OpenAIModel
from ledger_tui.engine.model.transport import FastTransport
from tests.loopback import LoopbackServer, sequence

SYSTEM = "You are an agent. Policy: refunds ≤ 200 €, «quotes» \"escaped\", a tab\there, a line\u2028separator, 😀."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_order",
            "description": "Look up an order — by id.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}, "limit": {"type": "number", "default": 0.5}}},
        },
    }
]
TRANSCRIPTS = [
    [{"role": "user", "content": "héllo"}],
    [{"role": "user", "content": "héllo"}, {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": "{\"order_id\": \"#1\"}"}}]},
     {"role": "tool", "tool_call_id": "c1", "content": "{\"total\": 1e+21, \"ok\": true, \"note\": null}"}],
]


async def _sent(monkeypatch, as_dicts: bool, calls) -> list[tuple[list, bytes]]:
    """The request line and headers (but the server's port) and the body of every request the
    transport wrote on the wire, for `calls(model)` (sent by the SDK, or as it would send it by
    `transport.DirectPost`)."""
    sent: list[tuple[list, bytes]] = []
    exchange = FastTransport.exchange

    async def recording(self, key, payload, method, timeouts):
        head, _, body = payload.partition(b"\r\n\r\n")
        sent.append(([line for line in head.split(b"\r\n") if not line.lower().startswith(b"host:")], body))
        return await exchange(self, key, payload, method, timeouts)

    monkeypatch.setattr(FastTransport, "exchange", recording)
    if as_dicts:  # what the SDK sends when given the request itself
        monkeypatch.setattr(endpoint.Endpoint, "body", lambda self, client, request: {"body": request})
    options = ClientOptions(temperature=0.25, extra_body={"top_k": 20, "stop": ["§"], "nested": {"x": [1, 2.5, None]}})
    with LoopbackServer(sequence([{"text": "ok"}] * 8)) as server:
        model = OpenAIModel(model="m", base_url=server.base_url, api_key="k", options=options)
        try:
            await calls(model)
        finally:
            await model.aclose()
    monkeypatch.undo()
    return sent


async def test_the_server_receives_the_bytes_the_sdk_would_send(monkeypatch):
    checked: list[bool | None] = []

    async def calls(model):
        for transcript in TRANSCRIPTS * 2:  # the second time round, the prefix is the one remembered
            await model.complete([{"role": "system", "content": SYSTEM}, *transcript], TOOLS)
        await model.complete([{"role": "user", "content": "no system prompt, no tools"}], [])
        checked.append((model._join().raw_bodies, bool(model._join().posts)))

    ours = await _sent(monkeypatch, False, calls)
    theirs = await _sent(monkeypatch, True, calls)
    assert len(ours) == 5 and ours == theirs
    # ours went as bytes (the SDK takes them), after the first one without the SDK's request path;
    # theirs as the dicts, each through the SDK
    assert checked == [(True, True), (None, False)]
    assert "≤ 200 €".encode() in ours[0][1] and b'"tools":[{"type":"function"' in ours[0][1]


async def test_a_tool_list_changed_in_place_goes_out_as_it_is_now(monkeypatch):
    tools = [dict(TOOLS[0], function=dict(TOOLS[0]["function"]))]

    async def calls(model):
        await model.complete([{"role": "system", "content": SYSTEM}], tools)
        tools[0]["function"]["description"] = "Changed since the last call."
        await model.complete([{"role": "system", "content": SYSTEM}], tools)

    first, second = await _sent(monkeypatch, False, calls)
    assert b"Look up an order" in first[1] and b"Changed since the last call." in second[1]


async def test_a_value_json_cannot_hold_is_refused_by_the_sdk_as_before():
    with LoopbackServer(sequence([{"text": "ok"}])) as server:
        model = OpenAIModel(model="m", base_url=server.base_url, api_key="k", options=ClientOptions(extra_body={"seed": math.nan}))
        try:
            with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
                await model.complete([{"role": "user", "content": "hi"}], [])
        finally:
            await model.aclose()
        assert server.requests == []

"""Replies exactly as a real server sent them, replayed on 127.0.0.1 through the real client.

The bodies under tests/data/servers/llama-server/ were captured from llama.cpp's own `llama-server`
serving SmolLM2-135M-Instruct (see that folder's README for the build, flags and the request behind
each file). The loopback server sends each one back byte for byte, so CI holds what a real server
does without running a model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledger_tui.engine.errors import ContextWindowExceededError, ModelError, TransientModelError
from ledger_tui.engine.events import AssistantMessage, Notice, TokenUsage, ToolResult
from ledger_tui.engine.model.models import ClientOptions, OpenAIModel
from ledger_tui.engine.session import Session
from tests.engine.helpers import drain
from tests.loopback import LoopbackServer

CAPTURED = Path(__file__).resolve().parents[1] / "data" / "servers" / "llama-server"
HI = [{"role": "user", "content": "Hi, please look up my reservation ZFA04Y."}]


def body(name: str) -> str:
    return (CAPTURED / name).read_text(encoding="utf-8")


async def complete(spec: dict, routes: dict | None = None, **options):
    with LoopbackServer(lambda req: spec, routes=routes) as server:
        model = OpenAIModel(model="smollm2", base_url=server.base_url, api_key="k", options=ClientOptions(**options))
        try:
            return await model.complete(HI, [])
        finally:
            await model.aclose()


async def test_a_real_tool_call_reply_is_read_whole():
    turn = await complete({"raw": body("tool_call.json")})
    assert turn.text == "" and turn.finish_reason == "tool_calls"
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [
        ("get_reservation_details", {"reservation_id": "ZFA04Y"}),
        ("get_user_details", {"user_id": "mia_li_3668"}),
    ]
    assert all(len(c.id) == 32 for c in turn.tool_calls)  # llama-server's ids: 32 letters and digits
    assert (turn.prompt_tokens, turn.completion_tokens, turn.cached_tokens, turn.malformed) == (375, 90, 0, {})


async def test_a_call_cut_at_the_cap_is_named_as_cut_and_the_whole_calls_before_it_stand():
    turn = await complete({"raw": body("tool_calls_parallel_length.json")})
    assert turn.finish_reason == "length" and len(turn.tool_calls) == 3
    first, second, cut = turn.tool_calls
    assert first.id not in turn.malformed and second.id not in turn.malformed
    assert "cut at the completion cap" in turn.malformed[cut.id]
    single = await complete({"raw": body("length_cut_in_tool_call.json")})
    assert list(single.malformed.values()) == [
        "the reply was cut at the completion cap (finish_reason: length) before this call's arguments were complete"
    ]


async def test_a_reply_cut_at_the_cap_in_a_session_is_recorded_with_a_notice(toy_domain):
    with LoopbackServer(lambda req: {"raw": body("length_cut.json")}) as server:
        model = OpenAIModel(model="smollm2", base_url=server.base_url, api_key="k")
        session = Session(toy_domain, model, "full")
        await drain(session.start())
        await drain(session.user_says("hi"))
        await model.aclose()
    turn = next(e for e in session.events if isinstance(e, AssistantMessage) and e.author == "model")
    assert (turn.text, turn.finish_reason) == ("I'm sorry", "length")
    assert any(isinstance(e, Notice) and "--max-tokens" in e.text for e in session.events)


async def test_the_prefix_cache_is_recorded_as_the_server_reports_it(toy_domain):
    with LoopbackServer(lambda req: {"raw": body("cache_repeat.json")}) as server:
        model = OpenAIModel(model="smollm2", base_url=server.base_url, api_key="k")
        session = Session(toy_domain, model, "full")
        await drain(session.start())
        await drain(session.user_says("hi"))
        await model.aclose()
    usage = next(e for e in session.events if isinstance(e, TokenUsage))
    assert (usage.prompt_tokens, usage.cached_tokens) == (659, 658)


async def test_the_servers_context_overflow_is_named_with_its_own_words():
    with pytest.raises(ContextWindowExceededError) as caught:
        await complete({"raw": body("context_exceeded_400.json"), "status": 400})
    assert "request (8426 tokens) exceeds the available context size (8192 tokens)" in str(caught.value)


@pytest.mark.parametrize(
    "name, status, kind, words",
    [
        ("messages_missing_400.json", 400, ModelError, "'messages' is required"),
        ("not_json_500.json", 500, TransientModelError, "parse error at line 1, column 3"),
        ("unknown_path_404.json", 404, ModelError, "HTTP 404: File Not Found; check --base-url (it usually ends in /v1)"),
    ],
)
async def test_error_replies_carry_the_servers_words(name, status, kind, words):
    with pytest.raises(kind) as caught:
        await complete({"raw": body(name), "status": status}, retries=0)
    assert words in str(caught.value) and "\n" not in str(caught.value)


async def test_the_window_and_the_token_count_come_from_the_servers_own_answers(toy_domain):
    tokenize = json.loads(body("tokenize.json"))
    routes = {"/props": json.loads(body("props.json")), "/tokenize": tokenize}
    with LoopbackServer(lambda req: {"raw": body("length_cut.json")}, routes=routes) as server:
        model = OpenAIModel(model="smollm2", base_url=server.base_url, api_key="k")
        assert await model.context_window() == (8192, "llama.cpp /props")
        assert await model.count_tokens("Hi, please look up my reservation ZFA04Y.") == len(tokenize["tokens"])
        await model.aclose()


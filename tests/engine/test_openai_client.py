"""The real `openai.AsyncOpenAI` client path, against an OpenAI-compatible server on 127.0.0.1."""

import pytest

from ledger_tui.engine.errors import EndpointUnreachableError, MissingApiKeyError, ModelError
from ledger_tui.engine.events import GateDecided, Notice, ToolResult, Verdict
from ledger_tui.engine.models import OpenAIModel
from ledger_tui.engine.session import Session
from tests.engine.helpers import drain
from tests.loopback import LoopbackServer, sequence


async def test_loop_runs_through_the_openai_client_with_tool_calls(toy_domain):
    replies = [
        {"tool_calls": [{"name": "find_member_by_email", "arguments": {"email": "ada@example.org"}},
                        {"name": "get_loan_details", "arguments": {"loan_id": "L2"}}]},
        {"text": "Loan L2 (Emma) would get a third renewal. Shall I renew it?"},
        {"tool_calls": [{"name": "renew_loan", "arguments": {"loan_id": "L2"}}]},
    ]
    with LoopbackServer(sequence(replies)) as server:
        model = OpenAIModel(model="loopback-model", base_url=server.base_url, api_key="test-key")
        session = Session(toy_domain, model, "full")
        await drain(session.start())
        await drain(session.user_says("I'm ada@example.org, please renew L2"))
        await drain(session.user_says("Yes"))
    decisions = [e.decision for e in session.events if isinstance(e, GateDecided)]
    assert [d.verdict for d in decisions] == [Verdict.BLOCK]
    first = server.requests[0]
    assert first["model"] == "loopback-model"
    assert {t["function"]["name"] for t in first["tools"]} == {"find_member_by_email", "get_loan_details", "renew_loan"}
    assert first["messages"][-1]["role"] == "system" and "[Current Task State]" in first["messages"][-1]["content"]
    third = server.requests[2]
    assert "loans.L2 = " in third["messages"][-1]["content"], "the ledger block is re-rendered before every call"
    assert session.state.totals.prompt_tokens > 0 and session.state.totals.model_calls == 3


async def test_broken_json_from_the_server_becomes_a_tool_error(toy_domain):
    replies = [{"tool_calls": [{"name": "get_loan_details", "arguments": '{"loan_id": "L1"'}]}, {"text": "oops"}]
    with LoopbackServer(sequence(replies)) as server:
        session = Session(toy_domain, OpenAIModel(model="m", base_url=server.base_url, api_key="k"), "full")
        await drain(session.start())
        await drain(session.user_says("hi"))
    result = next(e for e in session.events if isinstance(e, ToolResult))
    assert result.error and "not valid JSON" in result.content
    tool_message = [m for m in server.requests[1]["messages"] if m["role"] == "tool"][0]
    assert "not valid JSON" in tool_message["content"]


async def test_server_errors_become_one_sentence_notices(toy_domain):
    with LoopbackServer(lambda req: {"status": 500}) as server:
        model = OpenAIModel(model="m", base_url=server.base_url, api_key="k", max_retries=0)
        session = Session(toy_domain, model, "full")
        await drain(session.start())
        await drain(session.user_says("hi"))
    notice = next(e for e in session.events if isinstance(e, Notice))
    assert "HTTP 500" in notice.text and "\n" not in notice.text


async def test_unreachable_endpoint_names_the_fix():
    model = OpenAIModel(model="m", base_url="http://127.0.0.1:9/v1", api_key="k", max_retries=0, timeout=2)
    with pytest.raises(EndpointUnreachableError, match="check --base-url"):
        await model.complete([{"role": "user", "content": "hi"}], [])


def test_missing_api_key_names_the_fix(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(MissingApiKeyError, match="OPENAI_API_KEY"):
        OpenAIModel(model="m")


def test_model_errors_are_ledger_tui_errors():
    assert issubclass(EndpointUnreachableError, ModelError)


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("<html>Bad gateway</html>", "did not answer with JSON"),
        ('{"object": "list", "data": []}', "returned no choices"),
        ('{"choices": []}', "returned no choices"),
    ],
)
async def test_a_reply_that_is_not_a_chat_completion_names_the_fix(raw, expected):
    with LoopbackServer(lambda req: {"raw": raw}) as server:
        model = OpenAIModel(model="m", base_url=server.base_url, api_key="k", max_retries=0)
        with pytest.raises(ModelError, match=expected) as caught:
            await model.complete([{"role": "user", "content": "hi"}], [])
        await model.aclose()
    assert "serves chat completions" in str(caught.value)


async def test_tool_arguments_sent_as_an_object_are_accepted():
    reply = '{"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_loan_details", "arguments": {"loan_id": "L1"}}}]}}], "usage": {"prompt_tokens": 12, "completion_tokens": 3}}'
    with LoopbackServer(lambda req: {"raw": reply}) as server:
        model = OpenAIModel(model="m", base_url=server.base_url, api_key="k")
        turn = await model.complete([{"role": "user", "content": "hi"}], [])
        await model.aclose()
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [("c1", "get_loan_details", {"loan_id": "L1"})]
    assert (turn.text, turn.prompt_tokens, turn.completion_tokens, turn.malformed) == ("", 12, 3, {})


async def test_concurrent_models_share_connections_and_the_last_one_closes_them():
    import asyncio

    with LoopbackServer(lambda req: {"text": "ok"}, latency=0.05) as server:
        agents = [OpenAIModel(model="m", base_url=server.base_url, api_key="k") for _ in range(12)]
        customers = [OpenAIModel(model="m", base_url=server.base_url, api_key="k") for _ in range(12)]
        message = [{"role": "user", "content": "hi"}]
        # the customers speak, then the agents answer: 24 models, never more than 12 calls at once
        for _ in range(3):
            await asyncio.gather(*(m.complete(message, []) for m in customers))
            await asyncio.gather(*(m.complete(message, []) for m in agents))
        assert len(server.requests) == 72
        assert server.connections == 12, "idle connections are reused across models and turns"
        for m in agents + customers:
            await m.aclose()
        for _ in range(100):
            if server.open_connections == 0:
                break
            await asyncio.sleep(0.01)
        assert server.open_connections == 0, "closing the last model closes its connections"

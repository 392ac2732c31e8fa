"""The real `openai.AsyncOpenAI` client path, against an OpenAI-compatible server on 127.0.0.1."""

import json

import pytest

from ledger_tui.engine.errors import (
    ContextWindowExceededError,
    EndpointUnreachableError,
    MissingApiKeyError,
    ModelError,
    ModelTimeoutError,
    NotAChatCompletionError,
    TransientModelError,
)
from ledger_tui.engine.events import AssistantMessage, GateDecided, Notice, TokenUsage, ToolResult, Verdict
from ledger_tui.engine.model.models import ClientOptions, OpenAIModel, RetryingModel, parse_extra_body
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
    # the task state goes just before the customer's latest message (--ledger-at customer)
    assert first["messages"][-2]["role"] == "system" and "[Current Task State]" in first["messages"][-2]["content"]
    assert first["messages"][-1]["role"] == "user"
    third = server.requests[2]
    block = next(m for m in third["messages"] if "[Current Task State]" in (m["content"] or ""))
    assert "loans.L2 = " in block["content"], "the ledger block is re-rendered before every call"
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
        model = OpenAIModel(model="m", base_url=server.base_url, api_key="k")
        session = Session(toy_domain, model, "full")
        await drain(session.start())
        await drain(session.user_says("hi"))
    notice = next(e for e in session.events if isinstance(e, Notice))
    assert "HTTP 500" in notice.text and "\n" not in notice.text


async def test_unreachable_endpoint_names_the_fix():
    model = OpenAIModel(model="m", base_url="http://127.0.0.1:9/v1", api_key="k", options=ClientOptions(timeout=2))
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
        model = OpenAIModel(model="m", base_url=server.base_url, api_key="k")
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


# ----------------------------------------------------------------------------- what real servers need


def _tool_schema() -> list[dict]:
    return [{"type": "function", "function": {"name": "get_loan_details", "parameters": {"type": "object", "properties": {}}}}]


async def test_requests_are_what_real_servers_accept(toy_domain):
    """tool_choice whenever tools go out (llama.cpp leaves them out of the prompt otherwise), the
    assistant's content always a string, a completion cap, no temperature unless set."""
    replies = [{"tool_calls": [{"name": "get_loan_details", "arguments": {"loan_id": "L1"}}], "content": None}, {"text": "Done."}]
    with LoopbackServer(sequence(replies)) as server:
        session = Session(toy_domain, OpenAIModel(model="m", base_url=server.base_url, api_key="k"), "full")
        await drain(session.start())
        await drain(session.user_says("hi"))
    first, second = server.requests
    assert first["tool_choice"] == "auto" and first["tools"]
    assert first["max_tokens"] == ClientOptions().max_tokens and "max_completion_tokens" not in first
    assert "temperature" not in first
    sent = [m for m in second["messages"] if m["role"] == "assistant" and m.get("tool_calls")]
    assert sent and all(isinstance(m["content"], str) for m in second["messages"])


def test_openai_gets_max_completion_tokens_and_options_are_sent_as_set():
    options = ClientOptions(max_tokens=300, temperature=0.2, extra_body={"top_k": 20, "seed": 1})
    hosted = OpenAIModel(model="m", api_key="k", options=options).request([{"role": "user", "content": "hi"}], _tool_schema())
    assert hosted["max_completion_tokens"] == 300 and "max_tokens" not in hosted
    assert (hosted["temperature"], hosted["top_k"], hosted["seed"]) == (0.2, 20, 1)
    local = OpenAIModel(model="m", base_url="http://127.0.0.1:8081/v1", api_key="k", options=ClientOptions(max_tokens=None))
    body = local.request([{"role": "user", "content": "hi"}], [])
    assert "max_tokens" not in body and "tool_choice" not in body and "tools" not in body


@pytest.mark.parametrize("text, fix", [("{bad", "not valid JSON"), ("[1]", "must be a JSON object")])
def test_a_bad_extra_body_is_one_sentence(text, fix):
    with pytest.raises(ModelError, match=fix):
        parse_extra_body(text)


async def test_a_reply_cut_at_the_cap_is_recorded_and_its_tool_call_is_an_error_the_model_sees(toy_domain):
    replies = [
        {"tool_calls": [{"name": "get_loan_details", "arguments": '{"loan_id": "L'}], "finish_reason": "length"},
        {"text": "Let me ask again.", "finish_reason": "stop"},
    ]
    with LoopbackServer(sequence(replies)) as server:
        session = Session(toy_domain, OpenAIModel(model="m", base_url=server.base_url, api_key="k"), "full")
        await drain(session.start())
        await drain(session.user_says("hi"))
    turns = [e for e in session.events if isinstance(e, AssistantMessage) and e.author == "model"]
    assert [t.finish_reason for t in turns] == ["length", "stop"]
    result = next(e for e in session.events if isinstance(e, ToolResult))
    assert result.error and "completion cap" in result.content and not result.executed
    assert any(isinstance(e, Notice) and "--max-tokens" in e.text for e in session.events)


async def test_the_servers_own_words_reach_the_notice_and_a_context_overflow_is_named():
    said = "request (8273 tokens) exceeds the available context size (8192 tokens), try increasing it"
    with LoopbackServer(lambda req: {"status": 400, "body": {"error": {"code": 400, "message": said, "type": "exceed_context_size_error"}}}) as server:
        model = OpenAIModel(model="m", base_url=server.base_url, api_key="k")
        with pytest.raises(ContextWindowExceededError) as caught:
            await model.complete([{"role": "user", "content": "hi"}], [])
        await model.aclose()
    assert said in str(caught.value) and len(server.requests) == 1


async def test_an_error_body_with_escapes_is_shown_as_plain_text():
    with LoopbackServer(lambda req: {"status": 422, "body": {"detail": "bad \x1b]52;c;aGk=\x07field\nhere"}}) as server:
        model = OpenAIModel(model="m", base_url=server.base_url, api_key="k")
        with pytest.raises(ModelError) as caught:
            await model.complete([{"role": "user", "content": "hi"}], [])
        await model.aclose()
    text = str(caught.value)
    assert "HTTP 422" in text and "bad" in text and "field here" in text
    assert "\x1b" not in text and "\x07" not in text and "\n" not in text


async def test_nothing_is_resent_behind_the_projects_back():
    """The SDK's retries are off: a failing server sees each attempt the retry budget allows, once."""
    with LoopbackServer(lambda req: {"status": 500}) as server:
        model = RetryingModel(OpenAIModel(model="m", base_url=server.base_url, api_key="k"), attempts=2, base_delay=0.01)
        with pytest.raises(TransientModelError, match="HTTP 500: injected failure"):
            await model.complete([{"role": "user", "content": "hi"}], [])
        await model.aclose()
    assert len(server.requests) == 2


async def test_a_timeout_is_called_a_timeout():
    with LoopbackServer(lambda req: {"hang": 5, "text": "late"}) as server:
        model = OpenAIModel(model="m", base_url=server.base_url, api_key="k", options=ClientOptions(timeout=0.3))
        with pytest.raises(ModelTimeoutError, match="did not answer within 0.3 s; raise --timeout"):
            await model.complete([{"role": "user", "content": "hi"}], [])
        await model.aclose()
    assert len(server.requests) == 1


async def test_an_html_page_is_the_endpoints_fault_with_its_first_bytes_named():
    with LoopbackServer(lambda req: {"raw": "<html><body>502 Bad Gateway</body></html>", "content_type": "text/html"}) as server:
        model = OpenAIModel(model="m", base_url=server.base_url, api_key="k")
        with pytest.raises(NotAChatCompletionError, match="Bad Gateway") as caught:
            await model.complete([{"role": "user", "content": "hi"}], [])
        await model.aclose()
    assert isinstance(caught.value, TransientModelError)  # an infrastructure error: left out of pass^k


async def test_cached_prompt_tokens_are_recorded_where_the_server_reports_them(toy_domain):
    usage = {"prompt_tokens": 900, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 640}}
    with LoopbackServer(sequence([{"text": "Hello.", "usage": usage}])) as server:
        session = Session(toy_domain, OpenAIModel(model="m", base_url=server.base_url, api_key="k"), "full")
        await drain(session.start())
        await drain(session.user_says("hi"))
    tokens = next(e for e in session.events if isinstance(e, TokenUsage))
    assert (tokens.prompt_tokens, tokens.cached_tokens) == (900, 640)


async def test_shapes_servers_send_that_the_docs_allow(toy_domain):
    """Written from the servers' documentation, not captured: tool calls without ids (some Ollama
    versions), no `usage` (streaming-era proxies), `content: null` beside calls (OpenAI)."""
    reply = json.dumps({
        "choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
            {"type": "function", "function": {"name": "get_loan_details", "arguments": "{\"loan_id\": \"L1\"}"}},
            {"type": "function", "function": {"name": "get_loan_details", "arguments": "{\"loan_id\": \"L2\"}"}},
        ]}}],
    })
    replies = [{"raw": reply}, {"text": "Both loans are active.", "usage": None}]
    with LoopbackServer(sequence(replies)) as server:
        model = OpenAIModel(model="m", base_url=server.base_url, api_key="k")
        session = Session(toy_domain, model, "full")
        await drain(session.start())
        await drain(session.user_says("hi"))
        await model.aclose()
    results = [e for e in session.events if isinstance(e, ToolResult)]
    assert len(results) == 2 and len({r.call_id for r in results}) == 2, "each call gets its own id"
    sent = server.requests[1]["messages"]
    assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == [r.call_id for r in results]
    tokens = [e for e in session.events if isinstance(e, TokenUsage)]
    assert tokens[-1].prompt_tokens == 0 and tokens[-1].cached_tokens is None  # no usage: nothing invented


async def test_a_window_question_left_behind_by_cancelled_sessions_never_prints_a_traceback():
    """Ctrl-C cancels every session waiting for the shared window question; when that question
    then fails (the client closing under it), asyncio must not print "Task exception was never
    retrieved" with a traceback."""
    import asyncio
    import gc

    model = OpenAIModel(model="m", base_url="http://127.0.0.1:9/v1", api_key="k")

    async def failing() -> None:
        await asyncio.sleep(0.05)
        raise RuntimeError("Cannot send a request, as the client has been closed.")

    model._ask_window = failing  # type: ignore[method-assign]
    # Clients that earlier tests of this process dropped unclosed are let go first: the openai
    # SDK closes a collected client in a task on whatever loop is running, which fails on the
    # earlier test's closed loop (that report is theirs, not this question's)
    for _ in range(2):
        gc.collect()
        await asyncio.sleep(0.01)
    reported: list[dict] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    waiting = asyncio.ensure_future(model.context_window())
    await asyncio.sleep(0.01)
    waiting.cancel()
    await asyncio.sleep(0.1)  # the question fails with nobody waiting for it
    await model.aclose()  # the eval ends: the endpoint, and the question with it, are let go
    del waiting
    gc.collect()
    await asyncio.sleep(0)
    loop.set_exception_handler(None)
    assert not reported, reported


def test_a_window_question_in_flight_when_the_eval_ends_is_ended_with_it():
    """Ctrl-C during an eval: the sessions are cancelled and the model closed while the context
    window is still being asked of a server that has not answered. The question must end with the
    client, not fail on it later, where asyncio.run's shutdown prints two tracebacks."""
    import asyncio
    import socket

    silent = socket.socket()  # accepts connections (the kernel's backlog) and never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    reported: list[dict] = []

    async def main(steps: int) -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, context: reported.append(context))
        model = OpenAIModel(model="m", base_url=f"http://127.0.0.1:{silent.getsockname()[1]}/v1", api_key="k")
        waiting = asyncio.ensure_future(model.context_window())
        for _ in range(steps):  # the question gets this far: asked, its request being built, sent
            await asyncio.sleep(0)
        waiting.cancel()
        await model.aclose()

    try:
        for steps in range(12):  # every point the question can be at when Ctrl-C lands
            asyncio.run(main(steps))
            assert not reported, (steps, [c.get("message") for c in reported])
    finally:
        silent.close()

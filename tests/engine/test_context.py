"""The context window: prompts folded to fit, oldest first, in chunks; an overflow ends the run."""

from __future__ import annotations

import json

import pytest

from ledger_tui.engine.model import context
from ledger_tui.engine.errors import ContextWindowExceededError
from ledger_tui.engine.events import Notice
from ledger_tui.engine.model.models import FunctionModel, ModelTurn, OpenAIModel
from ledger_tui.engine.model.prompt import build_messages
from ledger_tui.engine.session import Session
from tests.engine.helpers import call, drain
from tests.loopback import LoopbackServer, sequence

READS = [("get_loan_details", {"loan_id": l}) for l in ("L1", "L2", "L3")] + [("get_member_details", {"email": "ada@example.org"})]


class Recorder:
    """A model that reads every loan and member on each customer turn, then answers; it keeps
    every prompt it was sent."""

    def __init__(self) -> None:
        self.prompts: list[list[dict]] = []
        self.step = 0

    def __call__(self, messages, tools) -> ModelTurn:
        self.prompts.append(messages)
        self.step += 1
        position = self.step % (len(READS) + 1)
        if position == 0:
            return ModelTurn(text="Here is what I found about your loans and your membership.")
        name, args = READS[position - 1]
        return ModelTurn(tool_calls=(call(name, f"c{self.step}", **args),))


def first_prompt_size(domain, mode: str) -> int:
    session = Session(domain, FunctionModel(lambda m, t: ModelTurn(text="x")), mode)
    block = session.state.ledger.render() if session.renders_ledger else None
    messages = build_messages(session.system, [{"role": "user", "content": "hi"}], block)
    return context.estimate(messages, domain.tool_schemas())


def paired(prompt: list[dict]) -> bool:
    """Every tool result in the prompt follows the assistant message that called it."""
    called: set[str] = set()
    for m in prompt:
        for c in m.get("tool_calls") or ():
            called.add(c["id"])
        if m.get("role") == "tool" and m["tool_call_id"] not in called:
            return False
    return True


async def converse(session: Session, turns: int) -> None:
    await drain(session.start())
    for i in range(turns):
        await drain(session.user_says(f"Question {i}: can you look at my loans again, please?"))


async def test_ledger_modes_fold_results_the_task_state_holds_first_and_in_chunks(toy_domain):
    window = first_prompt_size(toy_domain, "full") + 1500
    model = Recorder()
    session = Session(toy_domain, FunctionModel(model), "full", context_window=window)
    await converse(session, 8)
    folds = [e.text for e in session.events if isinstance(e, Notice) and e.text.startswith("Folded")]
    assert folds and folds[0].startswith("Folded 12 tool results the task state already holds")
    assert all("--context-window" in f for f in folds)
    assert len(folds) <= 2 < len(model.prompts) / 4  # folded in chunks, not on every call
    tools = toy_domain.tool_schemas()
    assert all(context.estimate(p, tools) <= window for p in model.prompts)
    last = model.prompts[-1]
    assert any(m.get("role") == "tool" and m["content"] == "(in task state)" for m in last)
    assert all(paired(p) for p in model.prompts)


async def test_the_folded_prefix_stays_the_same_between_folds(toy_domain):
    window = first_prompt_size(toy_domain, "full") + 1500
    model = Recorder()
    session = Session(toy_domain, FunctionModel(model), "full", context_window=window, ledger_at="end")
    await converse(session, 8)
    # consecutive calls without a fold between them: the earlier prompt (but its trailing task
    # state block) is a prefix of the later one, so a server's prefix cache can reuse it
    kept = 0
    for before, after in zip(model.prompts, model.prompts[1:]):
        if after[: len(before) - 1] == before[:-1]:
            kept += 1
    assert kept >= len(model.prompts) * 3 // 4


async def test_without_a_ledger_the_oldest_turns_are_folded_whole(toy_domain):
    window = first_prompt_size(toy_domain, "baseline") + 700
    model = Recorder()
    session = Session(toy_domain, FunctionModel(model), "baseline", context_window=window)
    await converse(session, 8)
    folds = [e.text for e in session.events if isinstance(e, Notice) and e.text.startswith("Folded")]
    assert folds and all("oldest messages" in f for f in folds)
    folded = [p for p in model.prompts if "were folded to fit the context window" in json.dumps(p)]
    assert folded and all(p[1]["role"] == "user" and p[1]["content"].startswith("[The first") for p in folded)
    assert all(paired(p) for p in model.prompts)
    assert session.last_model_error is None


async def test_a_prompt_that_cannot_fit_ends_the_turn_without_calling_the_model(toy_domain):
    model = Recorder()
    session = Session(toy_domain, FunctionModel(model), "full", context_window=50)
    await converse(session, 1)
    assert model.prompts == []
    assert isinstance(session.last_model_error, ContextWindowExceededError)
    notice = next(e for e in session.events if isinstance(e, Notice) and e.level == "error")
    assert "50-token context window" in notice.text


async def test_with_no_known_window_nothing_is_folded(toy_domain):
    model = Recorder()
    session = Session(toy_domain, FunctionModel(model), "full")
    await converse(session, 8)
    assert not [e for e in session.events if isinstance(e, Notice)]
    assert not any(m.get("content") == "(in task state)" for m in model.prompts[-1])


async def test_the_window_and_the_count_come_from_the_server_when_it_says(toy_domain):
    window = first_prompt_size(toy_domain, "full") + 400
    routes = {
        "/props": {"default_generation_settings": {"n_ctx": window}},
        # a tokenizer that counts about a token per four characters, as the estimate does
        "/tokenize": lambda body: {"tokens": list(range(len(body.get("content", "")) // 4))},
    }
    replies = []
    for _ in range(6):
        replies += [{"tool_calls": [{"name": n, "arguments": a}]} for n, a in READS] + [{"text": "Done."}]
    with LoopbackServer(sequence(replies), routes=routes) as server:
        model = OpenAIModel(model="m", base_url=server.base_url, api_key="k")
        model.options = type(model.options)(max_tokens=None)
        session = Session(toy_domain, model, "full")
        await converse(session, 6)
        await model.aclose()
    assert server.hits["/props"] == 1  # asked once per session
    assert server.hits.get("/tokenize", 0) >= 1
    folds = [e.text for e in session.events if isinstance(e, Notice) and e.text.startswith("Folded")]
    assert folds and "llama.cpp /props" in folds[0]


def test_the_ledger_block_goes_where_ledger_at_says():
    transcript = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "latest"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "result"},
    ]
    block = "[Current Task State]"
    customer = build_messages("policy", transcript, block, "customer")
    assert [m["content"] for m in customer][:5] == ["policy", "first", "ok", block, "latest"]
    assert customer[-1]["role"] == "tool"  # the model answers the customer's turn, not the block
    assert build_messages("policy", transcript, block, "end")[-1]["content"] == block
    system = build_messages("policy", transcript, block, "system")
    assert system[0]["content"] == f"policy\n\n{block}" and len(system) == len(transcript) + 1
    assert build_messages("policy", transcript, None, "customer") == [{"role": "system", "content": "policy"}, *transcript]


def test_an_unknown_layout_is_one_sentence(toy_domain):
    import pytest
    from ledger_tui.engine.errors import LedgerTuiError

    with pytest.raises(LedgerTuiError, match="choose one of: customer, end, system"):
        Session(toy_domain, FunctionModel(lambda m, t: ModelTurn(text="x")), "full", ledger_at="middle")


async def test_the_customer_simulators_prompt_is_folded_too(toy_domain):
    from tests.eval.toy_eval import TASKS
    from ledger_tui.eval.usersim import UserSimulator

    prompts: list[list[dict]] = []

    def customer(messages, tools):
        prompts.append(messages)
        return ModelTurn(text="Yes, please go on with that, I have all day to talk about my library loans.")

    tools = toy_domain.tool_schemas("user")
    window = context.estimate([{"role": "system", "content": UserSimulator(FunctionModel(customer), TASKS[0], toy_domain).system()}], tools) + 400
    sim = UserSimulator(FunctionModel(customer), TASKS[0], toy_domain, context_window=window)
    for i in range(30):
        sim.heard(f"Agent message {i}: here is a long explanation of loan renewals and their many rules, again.")
        await sim.next()
    assert all(context.estimate(p, tools) <= window for p in prompts)
    assert sim.folded > 0 and "were folded to fit the context window" in prompts[-1][1]["content"]
    assert prompts[-1][-1]["content"].startswith("Agent message 29"), "the agent's latest words are kept"

    tiny = UserSimulator(FunctionModel(customer), TASKS[0], toy_domain, context_window=20)
    tiny.heard("hello")
    with pytest.raises(ContextWindowExceededError, match="customer simulator"):
        await tiny.next()

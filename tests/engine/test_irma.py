"""IRMA, the comparison mode: helper calls rewrite the agent's input; no ledger, no gate."""

from ledger_tui.engine.events import (
    AssistantMessage,
    GateDecided,
    HelperCall,
    Notice,
    ReformulatedInput,
    UserMessage,
)
from ledger_tui.engine.store.fold import fold
from ledger_tui.engine.agents.irma import CONSTRAINTS_SYSTEM, TOOLS_SYSTEM
from ledger_tui.engine.ledger import HEADER
from ledger_tui.engine.model.models import FunctionModel, ModelTurn, ScriptedModel
from ledger_tui.engine.session import Session
from ledger_tui.engine.store.trajectories import read_trajectory
from tests.engine.helpers import call, drain, turn

IDENTIFY = call("find_member_by_email", "id1", email="ada@example.org")
RENEW = call("renew_loan", "w1", loan_id="L1")


def helpers_answering(*answers: str) -> ScriptedModel:
    return ScriptedModel([ModelTurn(text=a) for a in answers], name="helper-model")


async def test_helpers_rewrite_what_the_agent_reads_and_everything_is_recorded(toy_domain, tmp_path):
    seen: list[list[dict]] = []
    agent_turns = iter([turn(IDENTIFY), turn(text="Found you. Renew L1?"), turn(RENEW), turn(text="Done.")])

    def agent(messages, tools):
        seen.append(messages)
        return next(agent_turns)

    helper = helpers_answering(
        "- identify the member first", "- find_member_by_email: identify",
        "- confirm before renewing", "- renew_loan: the customer said yes",
    )
    session = Session(toy_domain, FunctionModel(agent, name="agent-model"), "irma", helper=helper, out=tmp_path / "t.jsonl")
    await drain(session.start())
    await drain(session.user_says("Please renew my loan, I'm ada@example.org"))
    await drain(session.user_says("Yes, please."))

    # the write ran with no gate, and the agent never saw a ledger block
    assert not any(isinstance(e, GateDecided) for e in session.events)
    assert session.env.db.loans["L1"].renewals == 1
    assert all(HEADER not in str(m.get("content")) for msgs in seen for m in msgs)

    # each customer message: two helper calls (constraints, then tools), then the agent's input
    kinds = [type(e).__name__ for e in session.events if isinstance(e, (UserMessage, HelperCall, ReformulatedInput, AssistantMessage))]
    assert kinds[:5] == ["UserMessage", "HelperCall", "HelperCall", "ReformulatedInput", "AssistantMessage"]
    calls = [e for e in session.events if isinstance(e, HelperCall)]
    assert [c.helper for c in calls] == ["constraints", "tools", "constraints", "tools"]
    assert all(c.model == "helper-model" and c.prompt_tokens > 0 and c.completion_tokens > 0 for c in calls)
    assert calls[0].messages[0]["content"].startswith(CONSTRAINTS_SYSTEM) and toy_domain.policy in calls[0].messages[0]["content"]
    assert calls[1].messages[0]["content"].startswith(TOOLS_SYSTEM) and "renew_loan(" in calls[1].messages[0]["content"]

    # the agent's latest user message is the reformulation: the memory, the checklist, the tools
    latest = [m for m in seen[-1] if m["role"] == "user"]
    assert latest[0]["content"] == "Please renew my loan, I'm ada@example.org", "earlier messages go back to the customer's words"
    rewritten = latest[-1]["content"]
    assert rewritten.startswith("The customer's latest message:\nYes, please.")
    assert "1. Please renew my loan, I'm ada@example.org" in rewritten
    assert "- confirm before renewing" in rewritten and "- renew_loan: the customer said yes" in rewritten
    inputs = [e for e in session.events if isinstance(e, ReformulatedInput)]
    assert inputs[-1].text == rewritten and session.events[inputs[-1].user_seq].text == "Yes, please."

    # the helpers' tokens are counted apart from the agent's, and survive the file
    session.close()
    totals = fold(read_trajectory(tmp_path / "t.jsonl").events).totals
    assert totals.helper_calls == 4
    assert totals.helper_prompt_tokens == sum(c.prompt_tokens for c in calls)
    assert totals.helper_completion_tokens == sum(c.completion_tokens for c in calls)
    assert totals.model_calls == 4


async def test_the_agents_model_answers_the_helpers_when_no_helper_model_is_given(toy_domain):
    model = ScriptedModel([ModelTurn(text="- check the member"), ModelTurn(text="- none: answer the customer"), turn(text="Hello!")])
    session = Session(toy_domain, model, "irma")
    await drain(session.start())
    await drain(session.user_says("Hi"))
    assert [e.output for e in session.events if isinstance(e, HelperCall)] == ["- check the member", "- none: answer the customer"]
    assert [e.text for e in session.events if isinstance(e, AssistantMessage)] == ["Hello!"]


async def test_a_failed_helper_call_is_a_notice_and_the_agent_does_not_answer_blind(toy_domain, tmp_path):
    helper = helpers_answering("- only one answer")  # the tools helper finds the script empty
    agent = ScriptedModel([turn(text="should not be asked")])
    session = Session(toy_domain, agent, "irma", helper=helper, out=tmp_path / "t.jsonl")
    await drain(session.start())
    events = await drain(session.user_says("Hi"))
    notices = [e for e in events if isinstance(e, Notice)]
    assert len(notices) == 1 and notices[0].level == "error" and notices[0].text.startswith("IRMA's helper call failed: ")
    assert session.last_model_error is not None
    assert agent.calls == 0 and len(agent.queue) == 1
    # the answer that did come back is recorded (its tokens were spent)
    assert [e.helper for e in events if isinstance(e, HelperCall)] == ["constraints"]
    assert not any(isinstance(e, ReformulatedInput) for e in events)

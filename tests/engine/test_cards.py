"""Consent on cards: a write that passes every other check is held, the system asks the customer
on a card rendered from the exact call, and only what they said yes to runs (toy domain)."""

from __future__ import annotations

from ledger_tui.engine.events import (
    AssistantMessage,
    ConfirmationAnswered,
    ConfirmationRequested,
    GateDecided,
    LedgerUpdated,
    ToolResult,
    Verdict,
)
from ledger_tui.engine.model.models import FunctionModel, ScriptedModel
from ledger_tui.engine.session import Session
from tests.engine.helpers import call, drain, turn

IDENTIFY = call("find_member_by_email", "id1", email="ada@example.org")
READ_L1 = call("get_loan_details", "r1", loan_id="L1")


def renew(loan: str, cid: str):
    return call("renew_loan", cid, loan_id=loan)


def executed(events, name="renew_loan"):
    ran = {e.call.id for e in events if hasattr(e, "call") and getattr(e, "call").name == name}
    return [e for e in events if isinstance(e, ToolResult) and e.call_id in ran and e.executed and not e.error]


async def held_session(toy_domain, *extra_turns):
    """Ada is identified, L1 read, and the agent calls renew_loan(L1) without asking: held."""
    model = ScriptedModel([turn(IDENTIFY, READ_L1), turn(renew("L1", "w1")), *extra_turns])
    session = Session(toy_domain, model, "full")
    events = await drain(session.start())
    events += await drain(session.user_says("ada@example.org here, please renew L1"))
    return session, model, events


async def test_a_write_that_passes_every_other_check_is_held_and_the_customer_gets_a_card(toy_domain):
    session, _, events = await held_session(toy_domain)
    assert session.state.started.consent == "card"
    [decided] = [e for e in events if isinstance(e, GateDecided)]
    assert decided.decision.verdict == Verdict.REVISE and decided.decision.category() == "consent" and decided.decision.held()
    [result] = [e for e in events if isinstance(e, ToolResult) and e.call_id == "w1"]
    assert not result.executed and not result.error and "confirm" in result.content
    card = events[-1]
    assert isinstance(card, ConfirmationRequested) and [c.id for c in card.calls] == ["w1"]
    assert "Renew loan L1" in card.text and card.text.endswith("Reply yes to confirm, or no to stop.")
    # the model is not called again in the turn; the card is the agent's last word, as the model sees it
    assert session.transcript[-1] == {"role": "assistant", "content": card.text}
    assert session.state.totals.held == 1 and session.state.totals.revise == 0


async def test_a_yes_runs_exactly_the_call_on_the_card_as_the_gates_message_with_a_fresh_id(toy_domain):
    session, model, _ = await held_session(toy_domain, turn(text="Done."))
    events = await drain(session.user_says("Yes, please renew it."))
    [answered] = [e for e in events if isinstance(e, ConfirmationAnswered)]
    assert answered.answer == "yes" and answered.runs and answered.quote == "Yes, please renew it."
    fact = next(e for e in events if isinstance(e, LedgerUpdated) and e.path == "consent.card_1")
    assert fact.origin == "observed" and fact.after["answer"] == "yes" and fact.quote == "Yes, please renew it."
    gate = next(e for e in events if isinstance(e, AssistantMessage) and e.author == "gate")
    assert [(c.id, c.name, c.arguments) for c in gate.tool_calls] == [(answered.runs[0], "renew_loan", {"loan_id": "L1"})]
    [decided] = [e for e in events if isinstance(e, GateDecided)]
    assert decided.decision.verdict == Verdict.ALLOW and decided.decision.call.id == answered.runs[0]
    assert len(executed(events)) == 1
    assert session.env.db.loans["L1"].renewals == 1
    assert events[-1].type == "token_usage"  # then the model went on ("Done.")


async def test_no_or_unclear_runs_nothing_and_the_model_reads_the_answer(toy_domain):
    for reply, answer in (("No, leave it.", "no"), ("Yes, but renew L2 too", "unclear")):
        seen = []

        def agent(messages, tools):
            seen.append(messages)
            return turn(text="Understood.")

        session, model, _ = await held_session(toy_domain)
        session.model = FunctionModel(agent)
        events = await drain(session.user_says(reply))
        [answered] = [e for e in events if isinstance(e, ConfirmationAnswered)]
        assert answered.answer == answer and answered.runs == []
        assert executed(events) == [] and session.env.db.loans["L1"].renewals == 0
        last_user = [m for m in seen[-1] if m["role"] == "user"][-1]["content"]
        assert reply in last_user and f"read as {answer}" in last_user and "nothing on the card was run" in last_user


async def test_a_call_put_on_two_cards_without_a_yes_is_not_put_on_a_third(toy_domain):
    session, model, _ = await held_session(toy_domain)
    await drain(session.user_says("no"))  # (the script has no agent turn left: the turn ends)
    model.extend([turn(renew("L1", "w2"))])
    await drain(session.user_says("please go on"))  # no card is open: the agent calls it again
    cards = [e for e in session.events if isinstance(e, ConfirmationRequested)]
    assert [c.calls[0].id for c in cards] == ["w1", "w2"]
    model.extend([turn(renew("L1", "w3"))])
    events = await drain(session.user_says("I said no"))  # answers the second card: unclear
    [decided] = [e for e in events if isinstance(e, GateDecided)]
    assert decided.decision.verdict == Verdict.REVISE and not decided.decision.held()
    assert "on 2 cards" in decided.decision.reason and "('no'; 'I said no')" in decided.decision.reason
    assert not any(isinstance(e, ConfirmationRequested) for e in events)


async def test_one_card_covers_every_write_held_in_one_message_and_nothing_after_it_runs(toy_domain):
    model = ScriptedModel([
        turn(IDENTIFY, READ_L1, call("get_loan_details", "r2", loan_id="L2")),
        turn(renew("L1", "w1"), call("get_loan_details", "r3", loan_id="L3"), renew("L1", "w1b")),
    ])
    session = Session(toy_domain, model, "full")
    await drain(session.start())
    events = await drain(session.user_says("ada@example.org, renew L1"))
    [card] = [e for e in events if isinstance(e, ConfirmationRequested)]
    assert [c.id for c in card.calls] == ["w1", "w1b"]
    [read] = [e for e in events if isinstance(e, ToolResult) and e.call_id == "r3"]
    assert not read.executed and "turn ended at a confirmation card" in read.content


async def test_the_text_reader_stays_for_consent_text(toy_domain):
    model = ScriptedModel([turn(IDENTIFY, READ_L1), turn(text="Renew loan L1 (Dune)?"), turn(renew("L1", "w1")), turn(text="Done.")])
    session = Session(toy_domain, model, "full", consent="text")
    await drain(session.start())
    await drain(session.user_says("ada@example.org: renew L1"))
    events = await drain(session.user_says("yes"))
    assert not any(isinstance(e, ConfirmationRequested) for e in session.events)
    assert [e.decision.verdict for e in events if isinstance(e, GateDecided)] == [Verdict.ALLOW]
    assert session.state.started.consent == "text"


async def test_ungated_modes_record_no_consent_mode(toy_domain):
    session = Session(toy_domain, ScriptedModel([]), "baseline")
    await drain(session.start())
    assert session.state.started.consent is None
    assert '"consent"' not in session.state.started.model_dump_json()


async def test_the_card_names_the_account_holder_the_changes_are_made_on(toy_domain):
    _, _, events = await held_session(toy_domain)
    card = events[-1]
    assert isinstance(card, ConfirmationRequested)
    # the identified customer, by the name their profile read shows, else by their id
    assert card.text.splitlines()[1] == "On the account of m1."


def test_the_holder_is_named_as_the_profile_read_shows_them():
    from ledger_tui.engine.conversation.cards import holder
    from ledger_tui.engine.ledger import Ledger, absorb

    ledger, _ = absorb(Ledger(), [("users.grace_scott_6483", {"name": {"first_name": "Grace", "last_name": "Scott"}}),
                                  ("customers.C1001", {"full_name": "John Smith"})], source_call="read", source_seq=1)
    assert holder(ledger, "grace_scott_6483") == "Grace Scott (grace_scott_6483)"
    assert holder(ledger, "C1001") == "John Smith (C1001)"
    assert holder(ledger, "nobody_1") == "nobody_1" and holder(ledger, None) is None


async def test_in_text_mode_a_stop_hands_the_model_the_cards_text_and_a_plain_yes_to_it_runs(toy_domain):
    """--consent text: the free-text reader may misread a proposal; the REVISE gives the model the
    card's exact text to send, and a plain yes to a message carrying it is read by the closed
    reader. A misreading costs one exchange, never a loop."""
    sent: list[str] = []

    def agent(messages, tools):
        last = messages[-1]
        if last.get("role") == "tool" and "Or send the customer exactly this" in last["content"]:
            text = last["content"].split("then wait for their answer:\n", 1)[1]
            sent.append(text)
            return turn(text=text)
        if sent and messages[-1].get("role") == "user":
            return turn(renew("L1", "w2"))
        return turn(text="Done.") if sent else turn(IDENTIFY, READ_L1) if len(messages) < 4 else turn(renew("L1", "w1"))

    session = Session(toy_domain, FunctionModel(agent), "full", consent="text")
    await drain(session.start())
    events = await drain(session.user_says("ada@example.org here, please renew L1"))
    [first] = [e.decision for e in events if isinstance(e, GateDecided)]
    assert first.verdict == Verdict.REVISE and first.category() == "inferred"
    assert sent and sent[0].startswith("Before I go ahead, please confirm:") and "Renew loan L1" in sent[0]
    events = await drain(session.user_says("Yes."))
    [second] = [e.decision for e in events if isinstance(e, GateDecided)]
    assert second.verdict == Verdict.ALLOW, second.reason
    assert len(executed(events)) == 1 and session.env.db.loans["L1"].renewals == 1

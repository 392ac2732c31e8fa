"""What only the customer can say, asked in closed form (consent mode card): the airline's reason
for a cancellation and telecom's being abroad are asked by the system about the record, answered,
and recorded as observed ledger facts; nothing the agent says and nothing read from earlier free
text sets them. The held-out replies are measured by benchmarks/question_tables.py; the replies
here are the development set."""

from __future__ import annotations

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.engine.events import (
    ConfirmationRequested,
    GateDecided,
    LedgerUpdated,
    QuestionAnswered,
    QuestionRequested,
    Refusal,
    ToolResult,
    Verdict,
)
from ledger_tui.engine.store.fold import fold
from ledger_tui.engine.model.models import FunctionModel, ScriptedModel
from ledger_tui.engine.conversation.questions import read_answer
from ledger_tui.engine.session import Session
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.explain import question_of, waits_lines
from tests.engine.helpers import call, drain, turn

USER = "raul_ward_2633"  # two insured economy reservations, booked weeks ago, not flown
INSURED, OTHER = "1LPDPD", "TS9M7G"


def reason_question():
    return load_domain("airline").questions[0]


def abroad_question():
    return load_domain("telecom").questions[0]


@pytest.mark.parametrize(
    "reply, value",
    [
        ("4", "weather"),
        ("Option 2 please", "airline_cancelled"),
        ("the third one", "health"),
        ("Number three.", "health"),
        ("I've got a bad fever", "health"),
        ("3 - my son is travelling with me and he broke his arm", "health"),
        ("My husband has the flu and he's on the booking with me", "health"),
        ("There's a blizzard forecast", "weather"),
        ("Plans changed, sorry", "change_of_plan"),
        ("It has nothing to do with health; the conference was called off", "change_of_plan"),
        ("Prefer not to say", "other"),
        ("I booked the wrong date", "other"),
        ("Motivos personales", "other"),
        # no answer: asked once more
        ("", None),
        ("Is weather one of them?", None),
        ("Perhaps 3", None),
        ("2 or 3", None),
        ("If a storm hits, 4", None),
        ("My cousin is sick", None),
        ("I broke my leg last year, but 1 now", "change_of_plan"),
        ("I had the flu last month", None),
        ("Not weather", None),
        ("Health and my plans changed", None),
        ("7", None),
        ("sure", None),
    ],
)
def test_a_reason_counts_when_the_reply_names_one_choice_and_nothing_hedges_it(reply, value):
    assert read_answer(reply, reason_question()).value == value


@pytest.mark.parametrize(
    "reply, value",
    [
        ("1", "yes"),
        ("yes, I'm overseas", "yes"),
        ("Currently in Bolivia", None),  # a country not listed: asked again, never guessed
        ("I'm in Italy", "yes"),
        ("no, at home", "no"),
        ("I'm not overseas", "no"),
        ("no idea", "not_sure"),
        ("I fly to Rome next week", None),
        ("My wife is abroad", None),
        ("Yes, but not on this line", None),
        ("Maybe", None),
    ],
)
def test_being_abroad_counts_when_the_reply_names_one_choice_now(reply, value):
    assert read_answer(reply, abroad_question()).value == value


def test_the_question_shows_its_record_and_numbered_choices():
    text = reason_question().text(INSURED)
    assert text.splitlines()[0] == f"Why do you want to cancel reservation {INSURED}?"
    assert "3. Health: I or someone travelling on it is ill or injured" in text
    assert text.endswith("Reply with the number of one choice.")
    again = reason_question().text(INSURED, again="a question")
    assert again.startswith("I could not read your answer as one of the choices (a question). Once more, please:")


IDENTIFY = call("get_user_details", "r1", user_id=USER)


def read(rid: str, cid: str):
    return call("get_reservation_details", cid, reservation_id=rid)


def cancel(rid: str, cid: str):
    return call("cancel_reservation", cid, reservation_id=rid)


async def cancelling(opening: str, *turns, consent: str = "card"):
    """Raul is identified, the insured reservation read, and the agent calls cancel_reservation."""
    model = ScriptedModel([turn(IDENTIFY), turn(read(INSURED, "r2")), turn(cancel(INSURED, "w1")), *turns])
    session = Session(load_domain("airline"), model, "full", consent=consent)
    events = await drain(session.start())
    events += await drain(session.user_says(opening))
    return session, events


def cancelled(session, rid=INSURED) -> bool:
    return session.env.db.reservations[rid].status == "cancelled"


async def test_the_reason_is_asked_though_the_opening_said_it_and_the_answer_is_an_observed_fact():
    session, events = await cancelling(f"I'm {USER}. I'm sick, please cancel {INSURED}.")
    [decided] = [e for e in events if isinstance(e, GateDecided)]
    assert decided.decision.held() and decided.decision.category() == "consent"
    assert [p.asks_question() for p in decided.decision.failed() if p.question] == [f"answers.cancel_reason.{INSURED}"] * 2
    asked = events[-1]
    assert isinstance(asked, QuestionRequested) and asked.record == INSURED and [c.id for c in asked.calls] == ["w1"]
    assert session.transcript[-1] == {"role": "assistant", "content": asked.text}
    [result] = [e for e in events if isinstance(e, ToolResult) and e.call_id == "w1"]
    assert not result.executed and "question" in result.content

    events = await drain(session.user_says("3"))
    [answered] = [e for e in events if isinstance(e, QuestionAnswered)]
    assert (answered.value, answered.choice, answered.quote) == ("health", 3, "3") and len(answered.runs) == 1
    fact = next(e for e in events if isinstance(e, LedgerUpdated) and e.path == f"answers.cancel_reason.{INSURED}")
    assert fact.origin == "observed" and fact.quote == "3" and fact.after["value"] == "health"
    # gated again under a fresh id: every check passes but consent, so the card is shown
    regated = next(e for e in events if isinstance(e, GateDecided))
    assert regated.decision.call.id == answered.runs[0] and regated.decision.category() == "consent"
    assert not any(p.asks_question() for p in regated.decision.predicates)
    assert isinstance(events[-1], ConfirmationRequested)
    await drain(session.user_says("Yes, please."))
    assert cancelled(session)


async def test_another_reason_on_an_insured_reservation_is_a_ledger_violation_quoting_the_answer():
    status = [call("get_flight_status", f"s{i}", flight_number=n, date="2024-05-27") for i, n in enumerate(("HAT110", "HAT167"))]
    model = ScriptedModel([turn(IDENTIFY), turn(read(INSURED, "r2"), *status), turn(cancel(INSURED, "w1")), turn(text="Sorry.")])
    session = Session(load_domain("airline"), model, "full")
    await drain(session.start())
    await drain(session.user_says(f"I'm {USER}, cancel {INSURED} please."))
    events = await drain(session.user_says("5, just don't want it"))
    decided = next(e for e in events if isinstance(e, GateDecided))
    assert decided.decision.verdict == Verdict.BLOCK and decided.decision.category() == "violation"
    eligible = next(p for p in decided.decision.failed() if p.name == "cancel_eligible")
    assert not eligible.inferred
    evidence = next(r for r in eligible.reads if r.path == f"answers.cancel_reason.{INSURED}")
    assert evidence.origin == "observed" and evidence.quote == "5, just don't want it"
    assert any(isinstance(e, Refusal) for e in events) and not cancelled(session)


async def test_an_unclear_answer_is_asked_once_more_then_the_model_is_told_and_nothing_runs():
    seen = []

    def agent(messages, tools):
        seen.append(messages[-1]["content"])
        return turn(text="Could you tell me which of the reasons applies?")

    session, _ = await cancelling(f"I'm {USER}, cancel {INSURED}.")
    session.model = FunctionModel(agent)
    first = await drain(session.user_says("What if I got sick?"))
    [answered] = [e for e in first if isinstance(e, QuestionAnswered)]
    assert answered.value is None and answered.reason == "a question"
    again = first[-1]
    assert isinstance(again, QuestionRequested) and again.attempt == 2 and "Once more" in again.text
    assert not seen  # asked again by the system: no model call
    second = await drain(session.user_says("Maybe the weather, maybe not"))
    [answered] = [e for e in second if isinstance(e, QuestionAnswered)]
    assert answered.value is None and not answered.runs
    assert not any(isinstance(e, LedgerUpdated) and e.path.startswith("answers.") for e in second)
    assert seen and "read as unclear 2 times" in seen[0] and "cancel_reservation" in seen[0]
    assert not cancelled(session)


async def test_what_the_agent_asserts_and_the_customer_acknowledges_sets_no_reason():
    model_turns = [
        turn(text="So you are cancelling for health reasons, right?"),
        turn(cancel(INSURED, "w2")),
    ]
    model = ScriptedModel([turn(IDENTIFY), turn(read(INSURED, "r2")), *model_turns])
    session = Session(load_domain("airline"), model, "full")
    await drain(session.start())
    await drain(session.user_says(f"I'm {USER}, please cancel {INSURED}, I have a fever."))
    events = await drain(session.user_says("Yes, exactly."))
    assert isinstance(events[-1], QuestionRequested)  # neither the agent's words nor her yes set it
    assert f"answers.cancel_reason.{INSURED}" not in session.state.ledger


async def test_an_answer_is_about_its_reservation_only():
    model = ScriptedModel(
        [turn(IDENTIFY), turn(read(INSURED, "r2"), read(OTHER, "r3")), turn(cancel(INSURED, "w1"), cancel(OTHER, "w2"))]
    )
    session = Session(load_domain("airline"), model, "full")
    await drain(session.start())
    events = await drain(session.user_says(f"I'm {USER}, cancel {INSURED} and {OTHER}."))
    first = events[-1]
    assert isinstance(first, QuestionRequested) and first.record == INSURED and len(first.calls) == 2
    events = await drain(session.user_says("3"))
    second = events[-1]  # both calls gated again: the other reservation's reason is asked next
    assert isinstance(second, QuestionRequested) and second.record == OTHER
    events = await drain(session.user_says("4"))
    card = events[-1]
    assert isinstance(card, ConfirmationRequested) and len(card.calls) == 2
    ledger = session.state.ledger
    assert ledger.value(f"answers.cancel_reason.{INSURED}")["value"] == "health"
    assert ledger.value(f"answers.cancel_reason.{OTHER}")["value"] == "weather"
    assert not cancelled(session) and not cancelled(session, OTHER)


async def test_in_text_mode_nothing_is_asked_and_the_reason_is_inferred_from_words():
    session, events = await cancelling(f"I'm {USER}, please cancel {INSURED}.", consent="text")
    assert not any(isinstance(e, QuestionRequested) for e in events)
    decided = next(e for e in events if isinstance(e, GateDecided))
    asked = next(p for p in decided.decision.failed() if p.name == "cancel_reason_asked")
    assert asked.inferred and not asked.question


def test_the_shipped_roaming_session_asks_being_abroad_twice_and_stops_on_the_answer():
    """sessions/telecom-roaming-asked.jsonl: a hedged reply of another time is asked once more; '2,
    I'm still at home' is recorded for line L1004 and the call, gated again, is a ledger violation."""
    from ledger_tui.examples import resolve_session

    events = read_trajectory(resolve_session("telecom-roaming-asked")).events
    asked = [e for e in events if isinstance(e, QuestionRequested)]
    assert [(q.key, q.record, q.attempt) for q in asked] == [("abroad", "L1004", 1), ("abroad", "L1004", 2)]
    answers = [e for e in events if isinstance(e, QuestionAnswered)]
    assert [a.value for a in answers] == [None, "no"]
    state = fold(events)
    assert state.ledger.value("answers.abroad.L1004")["quote"] == "2, I'm still at home."
    assert "answers.abroad.L1005" not in state.ledger  # her other line was not asked about
    last = state.gate_log[-1].decision
    assert last.call.id == answers[-1].runs[0] and last.category() == "violation"
    assert state.totals.questions == 2
    lines = waits_lines(list(events), last.call.id)
    assert any("recorded as answers.abroad.L1004 = no" in line for line in lines)
    held = state.gate_log[0].decision
    assert question_of(events, held.call.id)[0].question == asked[-1].question


async def test_an_evaluated_run_puts_the_question_to_the_customer_simulator_and_its_answer_counts(tmp_path):
    """The LLM path of `eval`: the simulator hears the system's question as the agent's words (as
    it hears a card), its reply is read by the closed reader, and the write runs on its yes."""
    from ledger_tui.engine.model.models import FunctionModel
    from ledger_tui.engine.agents.tasks import load_tasks
    from ledger_tui.eval.trial import run_llm_trial

    domain = load_domain("airline")
    task = load_tasks(domain.tasks_path)[0]
    heard: list[str] = []
    status = [call("get_flight_status", f"s{i}", flight_number=n, date="2024-05-27") for i, n in enumerate(("HAT110", "HAT167"))]
    agent_turns = iter([turn(IDENTIFY), turn(read(INSURED, "r2"), *status), turn(cancel(INSURED, "w1")), turn(text="It is cancelled.")])

    def agent(messages, tools):
        return next(agent_turns, turn(text="Anything else?"))

    def customer(messages, tools):
        last = str(messages[-1]["content"]) if messages[-1]["role"] == "user" else ""
        heard.append(last)
        if "Reply with the number of one choice." in last:
            return turn(text="3, I have the flu.")
        if "Reply yes to confirm" in last:
            return turn(text="Yes, please.")
        if "cancelled" in last:
            return turn(text="Thanks! ###STOP###")
        return turn(text=f"Hi, I'm {USER}. Please cancel reservation {INSURED}.")

    result = await run_llm_trial(domain, task, "full", 0, FunctionModel(agent, name="agent"), FunctionModel(customer, name="customer"), tmp_path / "run.jsonl")
    events = read_trajectory(tmp_path / "run.jsonl").events
    [answered] = [e for e in events if isinstance(e, QuestionAnswered)]
    assert (answered.value, answered.quote) == ("health", "3, I have the flu.")
    assert any("Why do you want to cancel reservation 1LPDPD?" in h for h in heard)
    ran = [e for e in events if isinstance(e, ToolResult) and e.name == "cancel_reservation" and e.executed and not e.error]
    assert len(ran) == 1 and ran[0].call_id.startswith("gate_")
    assert result.questions == 1 and result.cards == 1

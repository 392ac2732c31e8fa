"""Consent cards in the workbench: play shows the card in its own frame and `y` answers it; the
gate log shows the held call as asking the customer; Why shows the card and the answer; replay
shows both."""

from __future__ import annotations

from ledger_tui.engine.events import ConfirmationAnswered, ConfirmationRequested, Verdict
from ledger_tui.engine.model.models import ModelTurn, ScriptedModel
from ledger_tui.engine.session import Session
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.ui.app import make_app
from ledger_tui.ui.screens.why import WhyScreen
from ledger_tui.ui.widgets import GateLog
from tests.ui.scenarios import call
from tests.ui.test_play import say


def card_turns() -> list[ModelTurn]:
    """Ada renews L1: identify and read, then the write, with no proposal: held for a card."""
    return [
        ModelTurn(tool_calls=(call("find_member_by_email", email="ada@example.org"), call("get_loan_details", loan_id="L1"))),
        ModelTurn(tool_calls=(call("renew_loan", loan_id="L1"),)),
        ModelTurn(text="Done: loan L1 is renewed."),
    ]


async def test_play_shows_the_card_y_answers_it_and_the_call_runs(toy, tmp_path):
    out = tmp_path / "card.jsonl"
    session = Session(toy, ScriptedModel(card_turns()), "full", out=out, session_id="test", timestamps=False)
    app = make_app(session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await screen.wait_idle()
        await say(pilot, "Hi, I'm ada@example.org; please renew loan L1.")
        await pilot.pause()
        card = screen.conversation.cards["card_1"]
        assert card.has_class("card", "-open") and card.has_focus
        assert "Renew loan L1" in str(card.render())
        assert "y yes, n no" in str(screen.query_one("#console-hint").render())
        [held] = screen.gate_log.decisions
        assert held.decision.held() and screen.conversation.tool_calls[-1].has_class("-consent")
        await pilot.press("y")
        await pilot.pause()
        await screen.wait_idle()
        await pilot.pause()
        assert not card.has_class("-open")
        assert [d.decision.verdict for d in screen.gate_log.decisions] == [Verdict.REVISE, Verdict.ALLOW]
        answered = [e for e in read_trajectory(out).events if isinstance(e, ConfirmationAnswered)]
        assert [(a.answer, a.quote) for a in answered] == [("yes", "yes")]
        assert session.env.db.loans["L1"].renewals == 1
        assert screen.query_one("#console").has_focus  # back to typing

        screen.query_one(GateLog).focus()
        await pilot.press("up", "enter")  # the held decision
        await pilot.pause()
        why = app.screen
        assert isinstance(why, WhyScreen)
        text = str(why.query_one("#why-card").render())
        assert "confirmation card card_1" in text and "Renew loan L1" in text and "answered at step" in text and "a plain yes" in text


async def test_a_typed_reply_answers_the_card_too_and_replay_shows_card_and_answer(toy, tmp_path):
    out = tmp_path / "typed.jsonl"
    session = Session(toy, ScriptedModel(card_turns()[:2] + [ModelTurn(text="Understood, I left it as it is.")]), "full", out=out, timestamps=False)
    app = make_app(session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await screen.wait_idle()
        await say(pilot, "Hi, I'm ada@example.org; please renew loan L1.")
        await say(pilot, "Yes, but renew L3 as well")
        assert session.env.db.loans["L1"].renewals == 0
    events = read_trajectory(out).events
    [answered] = [e for e in events if isinstance(e, ConfirmationAnswered)]
    assert answered.answer == "unclear" and answered.runs == []

    app = make_app(trajectory=out, domain=toy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await pilot.pause()
        lines = [str(w.render()) for w in screen.conversation.query(".card, .card-answer")]
        assert any("confirmation card (card_1)" in line for line in lines)
        assert any(line.startswith("card answered") and "unclear" in line and "nothing runs" in line for line in lines)
        card = screen.conversation.cards["card_1"]
        assert not card.has_class("-open") and not card.can_focus  # replay answers nothing
        [card_event] = [e for e in events if isinstance(e, ConfirmationRequested)]
        assert "Renew loan L1" in card_event.text


def test_what_if_flips_the_recorded_answer_of_a_call_run_on_a_card():
    from ledger_tui.domains import load_domain
    from ledger_tui.engine.store.fold import fold
    from ledger_tui.examples import resolve_session
    from ledger_tui.ui.whatif import Edit, editable_targets, what_if

    events = read_trajectory(resolve_session("airline-cancel-on-a-card")).events
    ran = [e for e in events if e.type == "gate_decision"][-1]
    before = fold(events, events.index(ran) - 1)
    domain = load_domain("airline")
    assert "consent.card_1 › answer" in [t.label() for t in editable_targets(ran, before)]
    assert what_if(ran, before, domain, []).verdict == Verdict.ALLOW  # as recorded: it ran on the yes
    flipped = what_if(ran, before, domain, [Edit("ledger", "consent.card_1", "no", field="answer")])
    assert flipped.verdict == Verdict.REVISE and flipped.category() == "consent"

"""The LedgerAgent loop through a scripted model on the toy domain."""

import json

from ledger_tui.engine.events import (
    AssistantMessage,
    GateDecided,
    LedgerUpdated,
    Notice,
    Refusal,
    ToolResult,
    Verdict,
)
from ledger_tui.engine.store.fold import fold
from ledger_tui.engine.model.models import FunctionModel, ModelTurn, ScriptedModel
from ledger_tui.engine.session import Session
from ledger_tui.engine.store.trajectories import read_trajectory
from tests.engine.helpers import call, drain, turn, verdicts

IDENTIFY = call("find_member_by_email", "id1", email="ada@example.org")


def read_loan(loan_id, cid):
    return call("get_loan_details", cid, loan_id=loan_id)


def renew(loan_id, cid):
    return call("renew_loan", cid, loan_id=loan_id)


async def conversation(session, *messages):
    events = await drain(session.start())
    for m in messages:
        events += await drain(session.user_says(m))
    return events


async def test_revise_then_allow_within_one_turn(toy_domain, tmp_path):
    model = ScriptedModel(
        [
            turn(IDENTIFY, read_loan("L1", "r1")),
            turn(text="Renew loan L1 (Dune) for two weeks. Shall I?"),
            turn(renew("L1", "w1")),
            turn(text="Done."),
        ]
    )
    session = Session(toy_domain, model, "full", out=tmp_path / "t.jsonl", consent="text")
    await conversation(session, "Please renew my loan, I'm ada@example.org", "Yes, please.")
    assert verdicts(session.events) == ["ALLOW"]
    assert session.env.db.loans["L1"].renewals == 1


async def test_revise_feedback_reaches_the_model_and_retry_is_allowed(toy_domain):
    seen = []

    def agent(messages, tools):
        seen.append(messages)
        step = len(seen)
        if step == 1:
            return turn(IDENTIFY)
        if step == 2:
            return turn(renew("L1", "w1"))  # not read yet -> REVISE
        if step == 3:
            return turn(read_loan("L1", "r1"))
        if step == 4:
            return turn(text="I will renew loan L1 (Dune). Confirm?")
        if step == 5:
            return turn(renew("L1", "w2"))
        return turn(text="Renewed.")

    session = Session(toy_domain, FunctionModel(agent), "full", consent="text")
    await conversation(session, "Renew my loan please, ada@example.org", "yes go ahead")
    assert verdicts(session.events) == ["REVISE", "ALLOW"]
    feedback = [m for m in seen[2] if m["role"] == "tool"][-1]["content"]
    assert feedback.startswith("POLICY GATE: REVISE") and 'get_loan_details(loan_id="L1")' in feedback
    assert session.env.db.loans["L1"].renewals == 1


async def test_block_ends_the_turn_with_a_refusal_and_skips_later_calls(toy_domain):
    model = ScriptedModel(
        [
            turn(IDENTIFY, read_loan("L2", "r2")),
            turn(text="Renew loan L2 (Emma)?"),
            turn(renew("L2", "w1"), read_loan("L1", "r1")),
        ]
    )
    session = Session(toy_domain, model, "full", consent="text")
    await conversation(session, "ada@example.org here, renew L2", "Yes.")
    assert verdicts(session.events) == ["BLOCK"]
    refusal = [e for e in session.events if isinstance(e, Refusal)]
    assert len(refusal) == 1 and "renewed 2 times" in refusal[0].text
    skipped = [e for e in session.events if isinstance(e, ToolResult) and e.call_id == "r1"]
    assert skipped and not skipped[0].executed
    assert session.env.db.loans["L2"].renewals == 2, "a blocked write must not run"
    assert model.calls == 3, "a BLOCK ends the turn without another model call"


async def test_observe_not_assume_second_write_needs_a_fresh_read(toy_domain):
    model = ScriptedModel(
        [
            turn(IDENTIFY, read_loan("L1", "r1")),
            turn(text="Renew loan L1 (Dune)?"),
            turn(renew("L1", "w1")),
            turn(text="Renewed loan L1. Renew loan L1 again?"),
            turn(renew("L1", "w2")),  # stale evidence -> REVISE
            turn(read_loan("L1", "r2")),
            turn(renew("L1", "w3")),
            turn(text="Renewed twice."),
        ]
    )
    session = Session(toy_domain, model, "full", consent="text")
    await conversation(session, "ada@example.org, renew L1", "yes", "yes, again please")
    assert verdicts(session.events) == ["ALLOW", "REVISE", "ALLOW"]
    revise = [e.decision for e in session.events if isinstance(e, GateDecided)][1]
    assert "stale" in revise.reason
    stale = [e for e in session.events if isinstance(e, LedgerUpdated) and e.change == "stale"]
    assert [e.path for e in stale] == ["loans.L1", "loans.L1"]
    assert session.env.db.loans["L1"].renewals == 2


async def test_writes_never_update_the_ledger(toy_domain):
    model = ScriptedModel([turn(IDENTIFY, read_loan("L1", "r1")), turn(text="Renew L1?"), turn(renew("L1", "w")), turn(text="ok")])
    session = Session(toy_domain, model, "full", consent="text")
    await conversation(session, "ada@example.org renew L1", "yes")
    assert session.state.ledger["loans.L1"].value["renewals"] == 0
    assert session.state.ledger["loans.L1"].stale


async def test_modes_decide_what_the_model_sees_and_whether_the_gate_runs(toy_domain):
    prompts = {}
    for mode in ("baseline", "ledger", "gate", "full"):
        captured = []

        def agent(messages, tools, captured=captured):
            captured.append(messages)
            if len(captured) == 1:
                return turn(IDENTIFY, renew("L2", "w"))
            return turn(text="done")

        session = Session(toy_domain, FunctionModel(agent), mode, consent="text")
        await conversation(session, "ada@example.org renew L2")
        prompts[mode] = (captured, verdicts(session.events), session.env.db.loans["L2"].renewals)
    for mode in ("ledger", "full"):
        assert any(m["role"] == "system" and "[Current Task State]" in m["content"] for m in prompts[mode][0][1][1:])
    for mode in ("baseline", "gate"):
        assert all("[Current Task State]" not in json.dumps(m) for m in prompts[mode][0][1])
    assert prompts["baseline"][1] == [] and prompts["baseline"][2] == 3, "baseline runs the write unchecked"
    assert prompts["ledger"][1] == [] and prompts["ledger"][2] == 3
    assert prompts["gate"][1] == ["REVISE"] and prompts["gate"][2] == 2
    assert prompts["full"][1] == ["REVISE"] and prompts["full"][2] == 2


async def test_broken_json_arguments_become_a_tool_error_the_model_sees(toy_domain):
    bad = call("get_loan_details", "b1")
    model = ScriptedModel(
        [ModelTurn(tool_calls=(bad,), malformed={"b1": "the arguments are not valid JSON (Expecting value at character 0)"}), turn(text="sorry")]
    )
    session = Session(toy_domain, model, "full", consent="text")
    await conversation(session, "hi")
    result = next(e for e in session.events if isinstance(e, ToolResult))
    assert result.error and "not valid JSON" in result.content and not result.executed


async def test_invalid_arguments_and_unknown_read_tools_are_errors_not_crashes(toy_domain):
    model = ScriptedModel([turn(call("get_loan_details", "a", loan=3)), turn(text="hmm")])
    session = Session(toy_domain, model, "baseline", consent="text")
    await conversation(session, "hi")
    result = next(e for e in session.events if isinstance(e, ToolResult))
    assert result.error and result.content == "Error: Tools.get_loan_details() got an unexpected keyword argument 'loan'"


async def test_model_failure_is_a_notice_and_the_session_goes_on(toy_domain, tmp_path):
    model = ScriptedModel([turn(text="Hello!")])
    session = Session(toy_domain, model, "full", out=tmp_path / "s.jsonl", consent="text")
    await conversation(session, "hi", "are you there?")
    notices = [e for e in session.events if isinstance(e, Notice)]
    assert len(notices) == 1 and notices[0].level == "error"
    await drain(session.end())
    loaded = read_trajectory(tmp_path / "s.jsonl")
    assert [e.type for e in loaded.events][-1] == "session_ended"
    assert len(loaded.events) == len(session.events)


async def test_operator_calls_go_through_the_same_gate(toy_domain):
    session = Session(toy_domain, ScriptedModel([]), "full", consent="text")
    await drain(session.start())
    events = await drain(session.operator_call("renew_loan", {"loan_id": "L1"}))
    decision = next(e.decision for e in events if isinstance(e, GateDecided))
    assert decision.verdict == Verdict.REVISE and decision.call.requestor == "operator"
    events = await drain(session.operator_call("find_member_by_email", {"email": "ada@example.org"}))
    assert session.state.context().user_id is None  # the customer never gave that email
    await drain(session.user_says("I'm ada@example.org", respond=False))
    events = await drain(session.operator_call("find_member_by_email", {"email": "ada@example.org"}))
    assert session.state.context().user_id == "m1"


async def test_state_is_a_fold_over_the_recorded_events(toy_domain, tmp_path):
    model = ScriptedModel([turn(IDENTIFY, read_loan("L1", "r1")), turn(text="Renew L1?"), turn(renew("L1", "w")), turn(text="ok")])
    session = Session(toy_domain, model, "full", out=tmp_path / "f.jsonl", consent="text")
    await conversation(session, "ada@example.org renew L1", "yes")
    await drain(session.end())
    replayed = fold(read_trajectory(tmp_path / "f.jsonl").events)
    assert replayed.ledger.render() == session.state.ledger.render()
    assert replayed.totals == session.state.totals
    assert [type(e) for e in replayed.conversation] == [type(e) for e in session.state.conversation]
    assert sum(isinstance(e, AssistantMessage) for e in replayed.conversation) == 4

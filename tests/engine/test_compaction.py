"""Transcript compaction: what the model no longer needs to read twice is sent as a short reference."""

from ledger_tui.engine.model.models import FunctionModel
from ledger_tui.engine.session import Session
from tests.engine.helpers import call, drain, turn


def script(*turns):
    seen = []

    def agent(messages, tools):
        seen.append(messages)
        return turns[len(seen) - 1] if len(seen) <= len(turns) else turn(text="ok")

    return agent, seen


def tool_contents(messages):
    return [m["content"] for m in messages if m["role"] == "tool"]


async def test_absorbed_reads_resolved_feedback_and_re_read_writes_are_folded(toy_domain):
    agent, seen = script(
        turn(call("find_member_by_email", "a", email="ada@example.org"), call("renew_loan", "w0", loan_id="L1")),
        turn(call("get_loan_details", "r1", loan_id="L1")),
        turn(text="Renew loan L1 (Dune)?"),
        turn(call("renew_loan", "w1", loan_id="L1")),
        turn(call("get_loan_details", "r2", loan_id="L1")),
        turn(text="Done."),
        turn(text="Anything else?"),
    )
    session = Session(toy_domain, FunctionModel(agent), "full", compact=True, consent="text")
    await drain(session.start())
    await drain(session.user_says("ada@example.org: renew L1"))
    await drain(session.user_says("yes"))
    await drain(session.user_says("thanks"))
    last = tool_contents(seen[-1])
    # the REVISE on w0 was resolved by the ALLOW of w1
    assert "(gate feedback, since resolved)" in last
    # both reads of loans.L1 are in the task state: references only
    assert last.count("(in task state)") == 2
    # the renewal's own result was read back by r2
    assert "(done; read again into task state)" in last
    assert not any('"book"' in c for c in last), "no full record stays in the transcript"
    block = next(m["content"] for m in seen[-1] if "[Current Task State]" in (m["content"] or ""))
    assert '"renewals":1' in block, "the ledger block carries the current record"


async def test_without_compaction_or_without_a_ledger_the_transcript_is_verbatim(toy_domain):
    for mode, compact in (("full", False), ("baseline", True)):
        agent, seen = script(turn(call("get_loan_details", "r1", loan_id="L1")), turn(text="Here it is."))
        session = Session(toy_domain, FunctionModel(agent), mode, compact=compact, consent="text")
        await drain(session.start())
        await drain(session.user_says("show L1"))
        await drain(session.user_says("thanks"))
        assert any('"book": "Dune"' in c for c in tool_contents(seen[-1])), (mode, compact)


async def test_a_result_shorter_than_its_reference_stays_as_it_is(toy_domain):
    agent, seen = script(turn(call("find_member_by_email", "a", email="ada@example.org")), turn(text="Found you."))
    session = Session(toy_domain, FunctionModel(agent), "full", compact=True, consent="text")
    await drain(session.start())
    await drain(session.user_says("I'm ada@example.org"))
    await drain(session.user_says("thanks"))
    (result,) = tool_contents(seen[-1])
    assert len(result) < len("(in task state)") and "in task state" not in result


async def test_gate_feedback_is_folded_once_the_customer_has_spoken_since(toy_domain):
    agent, seen = script(
        turn(call("find_member_by_email", "a", email="ada@example.org"), call("renew_loan", "w0", loan_id="L1")),
        turn(text="Shall I renew loan L1 (Dune)?"),
        turn(text="Which loan did you mean?"),
    )
    session = Session(toy_domain, FunctionModel(agent), "full", compact=True, consent="text")
    await drain(session.start())
    await drain(session.user_says("ada@example.org: renew L1"))
    # in the turn of the REVISE the agent reads the whole feedback
    assert any(c.startswith("POLICY GATE: REVISE") for c in tool_contents(seen[1]))
    await drain(session.user_says("hmm"))
    later = tool_contents(seen[2])
    assert "(gate feedback from an earlier turn)" in later
    assert not any("POLICY GATE" in c for c in later)
    # without compaction the transcript keeps it verbatim
    agent, seen = script(
        turn(call("find_member_by_email", "a", email="ada@example.org"), call("renew_loan", "w0", loan_id="L1")),
        turn(text="Shall I renew loan L1 (Dune)?"),
        turn(text="Which loan did you mean?"),
    )
    session = Session(toy_domain, FunctionModel(agent), "full", consent="text")
    await drain(session.start())
    await drain(session.user_says("ada@example.org: renew L1"))
    await drain(session.user_says("hmm"))
    assert any(c.startswith("POLICY GATE: REVISE") for c in tool_contents(seen[2]))

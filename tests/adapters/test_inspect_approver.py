"""The Inspect AI approver: the gate's verdict on a call, from the conversation Inspect hands it,
and through a real `eval` with Inspect's mock model and tools on the airline mock database."""

from __future__ import annotations

from ledger_tui.engine.environment import Environment
from ledger_tui.engine.events import ToolCall as LedgerCall
from ledger_tui.domains import load_domain

# The inspect extra is a dev dependency: without it these tests fail (they never skip). Inspect AI
# is imported by the tests, not when the file is collected: each pytest-xdist worker collects every
# file, and Inspect takes about 1.3 s to import.

AIRLINE = load_domain("airline")


def conversation(customer: str, reads: list[tuple[str, dict]], then: list = ()) -> list:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall

    env = Environment(AIRLINE)
    history: list = [ChatMessageUser(content=customer)]
    for i, (name, args) in enumerate(reads):
        history.append(ChatMessageAssistant(content="", tool_calls=[ToolCall(id=f"c{i}", function=name, arguments=args)]))
        result = env.execute(LedgerCall(id=f"c{i}", name=name, arguments=args)).content
        history.append(ChatMessageTool(content=result, tool_call_id=f"c{i}", function=name))
    return history + list(then)


ROSA = ("Hi, I'm rosa_phillips_9719. I need to cancel reservation VY0QX8 and get my money back; my plans changed.", [
    ("get_user_details", {"user_id": "rosa_phillips_9719"}),
    ("get_reservation_details", {"reservation_id": "VY0QX8"}),
    ("get_flight_status", {"flight_number": "HAT255", "date": "2024-05-23"}),
])


async def test_block_terminates_revise_rejects_and_a_read_is_approved() -> None:
    from inspect_ai.model import ChatMessageUser
    from inspect_ai.tool import ToolCall

    from ledger_tui.adapters.inspect_approver import ledger_gate

    approve = ledger_gate("airline")
    cancel = ToolCall(id="w", function="cancel_reservation", arguments={"reservation_id": "VY0QX8"})
    blocked = await approve("", cancel, None, conversation(*ROSA))  # type: ignore[arg-type]
    assert blocked.decision == "terminate"
    assert blocked.explanation and blocked.explanation.startswith("POLICY GATE: BLOCK. cancel_reservation")
    assert blocked.metadata and blocked.metadata["verdict"] == "BLOCK"

    unread = await approve("", cancel, None, [ChatMessageUser(content=ROSA[0])])  # type: ignore[arg-type]
    assert unread.decision == "reject" and unread.explanation and "REVISE" in unread.explanation

    read = ToolCall(id="r", function="get_reservation_details", arguments={"reservation_id": "VY0QX8"})
    assert (await approve("", read, None, [])).decision == "approve"  # type: ignore[arg-type]
    assert (await ledger_gate("airline", on_block="reject")("", cancel, None, conversation(*ROSA))).decision == "reject"  # type: ignore[arg-type]


async def test_a_proposal_and_the_customers_yes_in_the_history_approve_the_write() -> None:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser
    from inspect_ai.tool import ToolCall

    from ledger_tui.adapters.inspect_approver import ledger_gate

    grace = conversation(
        "Hi, this is grace_scott_6483. I booked reservation 633IZT yesterday evening but my plans changed, so please cancel it.",
        [("get_user_details", {"user_id": "grace_scott_6483"}), ("get_reservation_details", {"reservation_id": "633IZT"})],
    )
    cancel = ToolCall(id="w", function="cancel_reservation", arguments={"reservation_id": "633IZT"})
    from ledger_tui.adapters.inspect_approver import gate_from_history
    from ledger_tui.engine.rules import proposal_for

    gate = gate_from_history("airline", grace)
    proposal = proposal_for(gate.domain, LedgerCall(id="p", name="cancel_reservation", arguments=cancel.arguments), gate._state.ledger, gate._state.context())
    before = await ledger_gate("airline")("", cancel, None, grace)  # type: ignore[arg-type]
    assert before.decision == "reject"
    after = await ledger_gate("airline")("", cancel, None, grace + [ChatMessageAssistant(content=proposal), ChatMessageUser(content="Yes, please.")])  # type: ignore[arg-type]
    assert after.decision == "approve", after.explanation


def test_through_inspect_eval_a_forbidden_cancellation_never_runs(tmp_path, monkeypatch) -> None:
    import inspect_ai.model._model as inspect_model
    from inspect_ai import Task, eval

    from ledger_tui.adapters.inspect_approver import ledger_gate

    # Inspect's mock model counts tokens with tiktoken, which downloads its tables: offline, estimate
    monkeypatch.setattr(inspect_model, "count_text_tokens", lambda text: len(text) // 4)
    from inspect_ai.approval import ApprovalPolicy
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    env = Environment(AIRLINE)
    ran: list[str] = []

    def run(name: str, **args: object) -> str:
        ran.append(name)
        return env.execute(LedgerCall(id=f"i{len(ran)}", name=name, arguments=dict(args))).content

    @tool
    def get_user_details():
        async def execute(user_id: str) -> str:
            """Get a user's profile.

            Args:
                user_id: The user's id.
            """
            return run("get_user_details", user_id=user_id)

        return execute

    @tool
    def get_reservation_details():
        async def execute(reservation_id: str) -> str:
            """Get a reservation.

            Args:
                reservation_id: The reservation's id.
            """
            return run("get_reservation_details", reservation_id=reservation_id)

        return execute

    @tool
    def get_flight_status():
        async def execute(flight_number: str, date: str) -> str:
            """Get a flight's status on a date.

            Args:
                flight_number: The flight number.
                date: The date, YYYY-MM-DD.
            """
            return run("get_flight_status", flight_number=flight_number, date=date)

        return execute

    @tool
    def cancel_reservation():
        async def execute(reservation_id: str) -> str:
            """Cancel a reservation.

            Args:
                reservation_id: The reservation's id.
            """
            return run("cancel_reservation", reservation_id=reservation_id)

        return execute

    outputs = [
        ModelOutput.for_tool_call("mockllm/model", name, args)
        for name, args in ROSA[1] + [("cancel_reservation", {"reservation_id": "VY0QX8"})]
    ]
    model = get_model("mockllm/model", custom_outputs=outputs)
    task = Task(
        dataset=[Sample(input=ROSA[0])],
        solver=[use_tools(get_user_details(), get_reservation_details(), get_flight_status(), cancel_reservation()), generate()],
        approval=[ApprovalPolicy(ledger_gate("airline"), "*")],
    )
    [log] = eval(task, model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    assert ran == ["get_user_details", "get_reservation_details", "get_flight_status"]
    sample = log.samples[0]
    [approval] = [e for e in sample.events if e.event == "approval" and e.call.function == "cancel_reservation"]
    assert approval.decision == "terminate" and approval.explanation.startswith("POLICY GATE: BLOCK.")
    assert "more than 24 hours ago" in approval.explanation
    assert not any(m.role == "tool" and m.function == "cancel_reservation" for m in sample.messages)

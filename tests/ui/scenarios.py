"""Scripted conversations on the toy library domain, shared by the UI tests and the benchmark."""

from __future__ import annotations

from pathlib import Path

from ledger_tui.engine.domain import Domain
from ledger_tui.engine.events import Event, ToolCall
from ledger_tui.engine.model.models import ModelTurn, ScriptedModel
from ledger_tui.engine.session import Session, drain


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(id="", name=name, arguments=arguments)


def block_turns() -> list[ModelTurn]:
    """Ada asks to renew L2 (already renewed twice): identify, read, confirm, then a BLOCK."""
    return [
        ModelTurn(tool_calls=(call("find_member_by_email", email="ada@example.org"), call("get_loan_details", loan_id="L2"))),
        ModelTurn(text="Loan L2 (Emma) will be renewed. Shall I go ahead?"),
        ModelTurn(tool_calls=(call("renew_loan", loan_id="L2"),)),
    ]


BLOCK_MESSAGES = ("Hi, this is ada@example.org. Please renew my loan L2.", "Yes, please go ahead.")


def revise_turns() -> list[ModelTurn]:
    """Ada renews L1: the agent writes before reading (REVISE), reads, confirms, writes (ALLOW)."""
    return [
        ModelTurn(tool_calls=(call("find_member_by_email", email="ada@example.org"), call("renew_loan", loan_id="L1"))),
        ModelTurn(tool_calls=(call("get_loan_details", loan_id="L1"),)),
        ModelTurn(text="Loan L1 (Dune) will be renewed once. Shall I go ahead?"),
        ModelTurn(tool_calls=(call("renew_loan", loan_id="L1"),)),
        ModelTurn(text="Done: loan L1 is renewed."),
    ]


REVISE_MESSAGES = ("I'm ada@example.org; please renew loan L1.", "Yes, go ahead.")


def scripted_session(domain: Domain, turns: list[ModelTurn], out: Path | None = None) -> Session:
    """A session with fixed ids and no wall clock, so screenshots are the same on every run."""
    return Session(domain, ScriptedModel(turns), "full", out=out, session_id="test", timestamps=False, consent="text")


async def record(domain: Domain, turns: list[ModelTurn], messages: tuple[str, ...], out: Path | None = None) -> list[Event]:
    """Run a scripted conversation headless (no UI) and return its events."""
    session = scripted_session(domain, turns, out)
    await drain(session.start())
    for text in messages:
        await drain(session.user_says(text))
    await drain(session.end())
    return session.events


def two_stops_turns() -> list[ModelTurn]:
    """Ada renews L1 twice stopped: first with no proposal and the loan unread (a violation), then
    after her yes with the loan still unread (needs a read); the agent reads it and the write goes."""
    return [
        ModelTurn(tool_calls=(call("find_member_by_email", email="ada@example.org"), call("renew_loan", loan_id="L1"))),
        ModelTurn(text="I can renew loan L1 for you. Shall I go ahead?"),
        ModelTurn(tool_calls=(call("renew_loan", loan_id="L1"),)),
        ModelTurn(tool_calls=(call("get_loan_details", loan_id="L1"),)),
        ModelTurn(tool_calls=(call("renew_loan", loan_id="L1"),)),
        ModelTurn(text="Done: loan L1 is renewed."),
    ]


TWO_STOPS_MESSAGES = ("I'm ada@example.org; please renew loan L1, it's urgent.", "Yes, go ahead.")


def as_written_before_needs_read(source: Path, target: Path) -> Path:
    """`source` as a trajectory written before predicates recorded `needs_read` and `inferred` (the
    fields absent: a check the free-text reader decided then reads as a violation)."""
    import json

    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        for p in event.get("decision", {}).get("predicates", []):
            p.pop("needs_read", None)
            p.pop("inferred", None)
        lines.append(json.dumps(event, ensure_ascii=False))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target

"""A probe for tests and notebooks: drive a domain's environment, ledger and gate by hand.

`Probe` keeps a ledger the way the agent loop does (reads absorbed, writes mark stale, customer
messages become `said.*` facts) without any model, so a predicate can be tested with one call
that passes and one that fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ledger_tui.engine.domain import Domain
from ledger_tui.engine.environment import Environment, Outcome
from ledger_tui.engine.events import GateDecision, ToolCall
from ledger_tui.engine.store.fold import CURRENT_USER
from ledger_tui.engine.gate import SessionContext, evaluate
from ledger_tui.engine.ledger import Ledger
from ledger_tui.engine.observe import observe_read, observe_statements, observe_write


class Probe:
    def __init__(self, domain: Domain | str, db: Any | None = None, db_path: Path | None = None) -> None:
        if isinstance(domain, str):
            from ledger_tui.domains import load_domain

            domain = load_domain(domain)
        self.domain = domain
        self.env = Environment(domain, db=db, db_path=db_path)
        self.ledger = Ledger()
        self.user_messages: list[str] = []
        self.assistant_texts: list[str] = []
        self.last_assistant_before_user = ""
        self.seq = 0

    def _call(self, name: str, args: dict[str, Any], requestor: str = "assistant") -> ToolCall:
        self.seq += 1
        return ToolCall(id=f"probe-{self.seq}", name=name, arguments=args, requestor=requestor)  # type: ignore[arg-type]

    def read(self, name: str, **args: Any) -> Outcome:
        call = self._call(name, args)
        outcome = self.env.execute(call)
        self.ledger, _ = observe_read(self.domain, self.ledger, call, outcome, self.seq, self.user_messages)
        return outcome

    def write(self, name: str, requestor: str = "assistant", **args: Any) -> Outcome:
        """Execute without the gate (as if allowed) and mark touched paths stale."""
        call = self._call(name, args, requestor)
        outcome = self.env.execute(call)
        self.ledger, _ = observe_write(self.domain, self.ledger, call, outcome, self.seq)
        return outcome

    def say(self, text: str) -> None:
        """The customer says `text`."""
        self.seq += 1
        self.last_assistant_before_user = self.assistant_texts[-1] if self.assistant_texts else ""
        self.user_messages.append(text)
        self.ledger, _ = observe_statements(self.domain, self.ledger, text, self.seq)

    def agent_says(self, text: str) -> None:
        self.seq += 1
        self.assistant_texts.append(text)

    def context(self) -> SessionContext:
        identified = tuple(p.split(".", 1)[1] for p in self.ledger if p.startswith("identified."))
        user = self.ledger.value(CURRENT_USER)
        return SessionContext(
            now=self.domain.clock,
            user_id=user if isinstance(user, str) else None,
            identified=identified,
            last_user_message=self.user_messages[-1] if self.user_messages else "",
            last_assistant_text=self.last_assistant_before_user,
            user_messages=tuple(self.user_messages),
            assistant_texts=tuple(self.assistant_texts),
        )

    def gate(self, name: str, **args: Any) -> GateDecision:
        return evaluate(ToolCall(id="probe-gate", name=name, arguments=args), self.domain, self.ledger, self.context())

    def confirm(self, text: str, yes: str = "Yes, please go ahead.") -> None:
        """The agent lists the details (`text`) and the customer answers with an explicit yes."""
        self.agent_says(text)
        self.say(yes)

    def proposal(self, name: str, **args: Any) -> str:
        """A proposal of this write that names what the domain's `Terms` ask for (as the gold
        agent says it), from the probe's ledger."""
        from ledger_tui.engine.rules import proposal_for

        call = ToolCall(id="probe-proposal", name=name, arguments=args)
        return proposal_for(self.domain, call, self.ledger, self.context())

    def propose(self, name: str, yes: str = "Yes, please go ahead.", **args: Any) -> GateDecision:
        """The agent proposes the write in the customer's terms, the customer says `yes`, and the
        call goes to the gate."""
        self.confirm(self.proposal(name, **args), yes)
        return self.gate(name, **args)


async def play_script(domain: Domain, path: Path, mode: str | None = None):
    """Play a scripted session file through the real loop (no trajectory file), in `mode` (default:
    the script's, else full); returns the session."""
    from ledger_tui.engine.model.models import ScriptedModel
    from ledger_tui.engine.agents.script import load_script, run_script, script_consent, script_mode
    from ledger_tui.engine.session import Session, drain

    script = load_script(path)
    model = ScriptedModel(name="scripted")
    session = Session(
        domain, model, script_mode(script, mode), timestamps=False, helper=ScriptedModel(name="scripted-helper"),  # type: ignore[arg-type]
        consent=script_consent(script, None),
    )
    await drain(session.start())
    await drain(run_script(session, script, model))
    await drain(session.end("script finished"))
    return session


def decisions(events) -> list[tuple[str, str, list[str]]]:
    """(tool, verdict, failed predicate names) for every gate decision, in order."""
    from ledger_tui.engine.events import GateDecided

    return [
        (e.decision.call.name, e.decision.verdict.value, [p.name for p in e.decision.failed()])
        for e in events
        if isinstance(e, GateDecided)
    ]

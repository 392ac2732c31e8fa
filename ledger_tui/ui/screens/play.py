"""Play: the operator types as the customer (or acts as the agent with /say and /call) against a live session.

One bridge: a single exclusive async worker owns the session. Console lines are queued; the worker
runs them one at a time, iterating the session's async generators and posting every event as an
`EventRecorded` message. The panes change only in the message handler, and the input stays
responsive while the model works (a line typed meanwhile waits its turn in the queue).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import AsyncIterator

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.events import (
    ConfirmationAnswered,
    ConfirmationRequested,
    QuestionAnswered,
    QuestionRequested,
    Event,
    GateDecided,
    LedgerUpdated,
    Notice,
    SessionEnded,
    SessionStarted,
    ToolCallProposed,
    ToolResult,
    UserMessage,
)
from ledger_tui.engine.store.fold import SessionState, advance
from ledger_tui.engine.outside import shown
from ledger_tui.engine.session import Session
from ledger_tui.ui.console import Command, ConsoleError, parse_line
from ledger_tui.ui.guide import Guide, seen_values, starters
from ledger_tui.ui.messages import CardAnswered, EventRecorded, ModelBusy
from ledger_tui.ui.screens.workbench import WorkbenchScreen
from ledger_tui.ui.widgets import BusyIndicator

NO_MODEL_NOTICE = "No model is connected: act as the agent with /say TEXT and /call NAME key=value (see F1)."


class ConsoleInput(Input):
    """The console line: Tab completes (commands, tools, argument names, ids seen) instead of
    moving the focus."""

    BINDINGS = [Binding("tab", "complete", "Complete", show=False, priority=True, id="console.complete")]

    def action_complete(self) -> None:
        screen = self.screen
        if isinstance(screen, PlayScreen):
            screen.complete_console()


class ToolsScreen(ModalScreen[None]):
    """/tools: the domain's tools, their kind and arguments."""

    BINDINGS = [Binding("escape,q,f1", "app.pop_screen", "Back", id="tools.close")]

    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static(Text(shown("\n".join(self.lines))))
            yield Static(Text("\nEsc closes. On the console, Tab completes names and ids.", style="dim"))


CARD_HINT = "A confirmation card awaits the customer's answer: y yes, n no (on the card), or type a reply (Esc: the console)."
QUESTION_HINT = "The system asked the customer a question: type the number of one choice, or a reply, in the console."


class PlayScreen(WorkbenchScreen):
    """The live workbench over one `Session`."""

    BINDINGS = [
        Binding("escape", "focus_console", "Console", id="play.focus_console"),
        Binding("ctrl+f", "search", "Search", id="play.search", show=False, tooltip="chat, ledger, gate log (Enter: next hit)"),
    ]
    console = True

    def __init__(self, session: Session, has_model: bool) -> None:
        super().__init__()
        self.session = session
        self.has_model = has_model
        self.domain = session.domain
        self.source_path = Path(session.out) if session.out else None
        self._queue: asyncio.Queue[Command] = asyncio.Queue()
        self._idle = asyncio.Event()
        self._state = SessionState()
        self.events: list[Event] = []
        self.guide = Guide(session.domain)
        self._told_no_model = False
        self.people = starters(session.domain, session.env.db)
        ids = [p.split(" ", 1)[0] for p in self.people]
        self.welcome = f"Customers to play: {', '.join(ids)}" if ids else ""  # /tools says who they are
        forked = session.events[0].forked_from if session.events and isinstance(session.events[0], SessionStarted) else None
        if forked is not None:
            self.welcome = f"Forked from {Path(forked.file).name or 'a recording'} at step {forked.step}: answer as the customer from here."

    def compose_bottom(self) -> ComposeResult:
        hint = "type as the customer" if self.has_model else "no model: /say, /call act as the agent"
        yield ConsoleInput(placeholder=f"{hint} · Tab completes · /help", id="console")
        yield Static(Text(shown(self.welcome)), id="console-hint")

    def on_mount(self) -> None:
        self.status.label = "fork" if self.welcome.startswith("Forked from") else "play"
        if not self.session.gates_writes:
            self.gate_log.without_gate(self.session.mode)
        self.query_one("#console", Input).focus()
        self._bridge()

    # ------------------------------------------------------------------ the bridge
    @work(exclusive=True, group="bridge")
    async def _bridge(self) -> None:
        """The one worker that talks to the engine. Runs until the screen goes away."""
        if self.session.events:  # a fork (fork.py): the run it continues is recorded already
            for event in list(self.session.events):
                self.post_message(EventRecorded(event))
        else:
            await self._pump(self.session.start(), "starting")
        while True:
            if self._queue.empty():
                self._idle.set()
            command = await self._queue.get()
            self._idle.clear()
            self.post_message(ModelBusy(True, self._describe(command)))
            try:
                await self._pump(self._run(command), self._describe(command))
            finally:
                self.post_message(ModelBusy(False))

    async def _pump(self, events: AsyncIterator[Event], what: str) -> None:
        try:
            async for event in events:
                self.post_message(EventRecorded(event))
        except LedgerTuiError as exc:
            self.post_message(EventRecorded(Notice(seq=-1, level="error", text=str(exc))))
        except OSError as exc:  # the recording could not be written (a full disk): say so, go on
            where = exc.filename or self.session.out
            self.post_message(
                EventRecorded(
                    Notice(
                        seq=-1, level="error",
                        text=f"Cannot write {where} ({exc.strerror or exc}): the recording stops here, kept up to its last "
                        "whole line; the session goes on unrecorded (free some space and start again to record it).",
                    )
                )
            )
        except Exception as exc:  # a bug in a tool or domain must not end the session
            self.post_message(
                EventRecorded(Notice(seq=-1, level="error", text=f"{what} failed ({type(exc).__name__}: {exc}); the session goes on."))
            )

    async def _run(self, command: Command) -> AsyncIterator[Event]:
        """The session generator for one console command."""
        s = self.session
        if s.state.ended is not None:
            raise LedgerTuiError("The session has ended; start a new one with `ledger-tui play`.")
        if command.kind == "customer":
            events = s.user_says(command.text, respond=self.has_model)
        elif command.kind == "agent":
            events = s.agent_says(command.text)
        elif command.kind == "call":
            events = s.operator_call(command.name, command.arguments)
        elif command.kind == "me":
            if not s.domain.user_tools:
                raise LedgerTuiError(f"The {s.domain.name} domain has no customer-side actions; use /call for agent tools.")
            events = s.customer_action(command.name, command.arguments)
        else:
            events = s.end(command.text)
        async for event in events:
            yield event

    @staticmethod
    def _describe(command: Command) -> str:
        if command.kind == "customer":
            return "the agent is working…"
        if command.kind == "agent":
            return "sending…"
        if command.kind in ("call", "me"):
            return f"running {command.name}…"
        return "ending…"

    async def wait_idle(self) -> None:
        """Until every queued command has run (tests and scripted demos)."""
        await asyncio.sleep(0)
        await self._idle.wait()

    # ------------------------------------------------------------------ console
    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "console":
            return
        event.stop()
        line = event.value.strip()
        if not line:
            return
        try:
            command = parse_line(line)
            self.guide.check(command)
        except ConsoleError as exc:
            self.notify(shown(exc, markup=True), severity="error")
            event.input.select_all()  # kept for editing; typing a new line replaces it
            return
        event.input.clear()
        if command.kind == "help":
            self.action_help()
            return
        if command.kind == "tools":
            people = ["", "Customers of the database to play:", *(f"  {p}" for p in self.people)] if self.people else []
            self.app.push_screen(ToolsScreen(self.guide.tools_listing() + people))
            return
        self.submit(command)

    def submit(self, command: Command) -> None:
        """Queue one command for the bridge; tell the operator if it has to wait."""
        self._idle.clear()
        busy = self.query_one(BusyIndicator)
        if busy.busy:
            self.notify(shown(f"Queued: {self._describe(command)} runs after the current turn.", markup=True))
        self._queue.put_nowait(command)
        if command.kind == "customer" and not self.has_model and not self._told_no_model:
            self._told_no_model = True  # said once: it would come back after every message
            self.notify(NO_MODEL_NOTICE, severity="warning")

    def action_focus_console(self) -> None:
        if self.searching:  # Escape closes an open search too
            self.search_bar.close()
        self.query_one("#console", Input).focus()

    def on_card_answered(self, message: CardAnswered) -> None:
        """`y` / `n` on the open card: the customer says yes or no."""
        message.stop()
        self.submit(Command(kind="customer", text=message.answer))
        self.action_focus_console()

    # ------------------------------------------------------------------ guidance
    def _values(self, tool: str, argument: str) -> list[str]:
        calls = [(e.call.name, e.call.arguments) for e in self.events if isinstance(e, ToolCallProposed)]
        values = seen_values(tool, argument, calls, self._state.ledger)
        if argument in ("user_id", "customer_id", "patient_id"):  # the people a new session offers
            values += [p.split(" ", 1)[0] for p in self.people if p.split(" ", 1)[0] not in values]
        return values

    def complete_console(self) -> None:
        box = self.query_one("#console", Input)
        done = self.guide.complete(box.value, box.cursor_position, self._values)
        if done.line != box.value:
            box.value = done.line
        box.cursor_position = done.cursor
        hint = self.query_one("#console-hint", Static)
        if done.choices:
            hint.update(Text(shown("  ".join(done.choices))))
        else:
            hint.update(Text(shown(self.guide.hint(done.line))))

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "console":
            return
        text = self.guide.hint(event.value)
        if not text and not event.value and not any(isinstance(e, UserMessage) for e in self.events):
            text = self.welcome
        self.query_one("#console-hint", Static).update(Text(shown(text)))

    # ------------------------------------------------------------------ events → panes
    def on_event_recorded(self, message: EventRecorded) -> None:
        event = message.event
        if event.seq >= 0:
            self.events.append(event)
            self._state = advance(self._state, event)
        if isinstance(event, UserMessage):
            self.ledger.clear_marks()
            hint = self.query_one("#console-hint", Static)
            if self.welcome and str(hint.render()) == self.welcome:
                hint.update("")  # the customer has spoken: the starters are no longer news
        if isinstance(event, ToolResult):
            self.ledger.age_marks()  # a new result: what the one before marked is now earlier in the turn
        if isinstance(event, LedgerUpdated):
            self.ledger.apply(event)
        elif isinstance(event, GateDecided):
            self.gate_log.record(event)
            self.conversation.append(event)
        else:
            self.conversation.append(event)
        hint = self.query_one("#console-hint", Static)
        if isinstance(event, ConfirmationRequested):
            self.conversation.open_card(event.card)
            hint.update(Text(CARD_HINT))
        elif isinstance(event, ConfirmationAnswered):
            self.conversation.close_card(event.card)
            if str(hint.render()) == CARD_HINT:
                hint.update("")
        elif isinstance(event, QuestionRequested):
            hint.update(Text(QUESTION_HINT))
        elif isinstance(event, QuestionAnswered) and str(hint.render()) == QUESTION_HINT:
            hint.update("")
        if isinstance(event, Notice) and event.level == "error":
            self.notify(shown(event.text, markup=True), severity="error", timeout=8)
        if isinstance(event, SessionEnded):
            self.notify(shown(f"Session ended ({event.reason}); recorded to {self.session.out}.", markup=True))
        self.status.show(self._state, max(len(self.events) - 1, 0), max(len(self.events) - 1, 0))

    def on_model_busy(self, message: ModelBusy) -> None:
        busy = self.query_one(BusyIndicator)
        if message.busy:
            busy.start(message.what)
        else:
            busy.stop(self._queue.qsize())

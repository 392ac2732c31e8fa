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

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Input

from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.events import Event, GateDecided, LedgerUpdated, Notice, SessionEnded, UserMessage
from ledger_tui.engine.fold import SessionState, advance
from ledger_tui.engine.outside import shown
from ledger_tui.engine.session import Session
from ledger_tui.ui.console import Command, ConsoleError, parse_line
from ledger_tui.ui.messages import EventRecorded, ModelBusy
from ledger_tui.ui.screens.workbench import WorkbenchScreen
from ledger_tui.ui.widgets import BusyIndicator

NO_MODEL_NOTICE = "No model is connected: act as the agent with /say TEXT and /call NAME key=value (see F1)."


class PlayScreen(WorkbenchScreen):
    """The live workbench over one `Session`."""

    BINDINGS = [Binding("escape", "focus_console", "Console", id="play.focus_console")]
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

    def compose_bottom(self) -> ComposeResult:
        hint = "type as the customer" if self.has_model else "no model: /say TEXT, /call NAME k=v act as the agent"
        yield Input(placeholder=f"{hint} · /help", id="console")

    def on_mount(self) -> None:
        self.status.label = "play"
        self.query_one("#console", Input).focus()
        self._bridge()

    # ------------------------------------------------------------------ the bridge
    @work(exclusive=True, group="bridge")
    async def _bridge(self) -> None:
        """The one worker that talks to the engine. Runs until the screen goes away."""
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
        except ConsoleError as exc:
            self.notify(shown(exc, markup=True), severity="error")
            event.input.select_all()  # kept for editing; typing a new line replaces it
            return
        event.input.clear()
        if command.kind == "help":
            self.action_help()
            return
        self.submit(command)

    def submit(self, command: Command) -> None:
        """Queue one command for the bridge; tell the operator if it has to wait."""
        self._idle.clear()
        busy = self.query_one(BusyIndicator)
        if busy.busy:
            self.notify(shown(f"Queued: {self._describe(command)} runs after the current turn.", markup=True))
        self._queue.put_nowait(command)
        if command.kind == "customer" and not self.has_model:
            self.notify(NO_MODEL_NOTICE, severity="warning")

    def action_focus_console(self) -> None:
        self.query_one("#console", Input).focus()

    # ------------------------------------------------------------------ events → panes
    def on_event_recorded(self, message: EventRecorded) -> None:
        event = message.event
        if event.seq >= 0:
            self.events.append(event)
            self._state = advance(self._state, event)
        if isinstance(event, UserMessage):
            self.ledger.clear_marks()
        if isinstance(event, LedgerUpdated):
            self.ledger.apply(event)
        elif isinstance(event, GateDecided):
            self.gate_log.record(event)
            self.conversation.append(event)
        else:
            self.conversation.append(event)
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

"""The workbench app: thin. It picks the first screen, owns the stylesheet and the palette, and
turns failures at its edge into one-sentence notifications.

`make_app` is the one factory: the CLI (`launch.py`) and the tests both build the app through it,
so what the tests drive is what users run.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

import rich
from textual import events, on
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.events import Event
from ledger_tui.engine.outside import shown
from ledger_tui.engine.store.trajectories import LoadedTrajectory, read_trajectory
from ledger_tui.ui.commands import WorkbenchCommands
from ledger_tui.ui.screens.replay import NOT_NAMED, ReplayScreen

if TYPE_CHECKING:  # (imported where used: a replay opens without the live session's modules)
    from ledger_tui.engine.domain import Domain
    from ledger_tui.engine.model.models import Model
    from ledger_tui.engine.session import Session


SCREENSHOTS_ENV = "LEDGER_TUI_SCREENSHOTS"


def screenshot_folder(path: str | None) -> Path:
    """Where a screenshot goes: the folder asked for, $LEDGER_TUI_SCREENSHOTS, or Downloads."""
    if path:
        return Path(path).expanduser()
    if os.environ.get(SCREENSHOTS_ENV):
        return Path(os.environ[SCREENSHOTS_ENV]).expanduser()
    from platformdirs import user_downloads_path  # where Textual saves by default (a Textual dependency)

    return user_downloads_path()


class LedgerWorkbench(App[None]):
    """Hosts one play or replay screen; everything else lives in screens and widgets."""

    CSS_PATH = "app.tcss"
    TITLE = "ledger-tui"
    COMMANDS = App.COMMANDS | {WorkbenchCommands}
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True, show=False)]  # in F1; the footer needs the room

    def __init__(self, first: Screen[None], keymap: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self._first = first
        self._keymap = dict(keymap or {})
        self._shown_until: dict[tuple[str, str], float] = {}  # notices on screen, until they time out
        self.at_first_frame: list[Callable[[], object]] = []  # called once the first frame is shown

    @on(events.Ready)
    def _first_frame(self) -> None:
        """Textual's Ready: the first frame is on the terminal."""
        while self.at_first_frame:
            self.at_first_frame.pop(0)()

    def notify(self, message: str, *, title: str = "", severity: Any = "information", timeout: float | None = None, markup: bool = True) -> None:  # type: ignore[override]
        """A notice that is already on screen is not stacked again (a model error repeated each
        turn, the same filter chosen twice): it is shown once until it times out."""
        now = time.monotonic()
        if self._shown_until.get((message, title), 0.0) > now:
            return
        self._shown_until = {k: t for k, t in self._shown_until.items() if t > now}  # forget the gone
        seconds = self.NOTIFICATION_TIMEOUT if timeout is None else timeout
        self._shown_until[(message, title)] = now + seconds
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None, time_format: str | None = None) -> str | None:
        """Save an SVG of the screen in `path`, else $LEDGER_TUI_SCREENSHOTS, else the Downloads
        folder, made when missing (Textual only said "Failed to save screenshot" then); a folder
        that cannot be made or written is named in one sentence with the fix."""
        folder = screenshot_folder(path)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self._screenshot_failed(folder, exc)
            return None
        self._screenshot_folder = folder
        return super().deliver_screenshot(filename, str(folder), time_format)

    @on(events.DeliveryFailed)
    def _screenshot_not_saved(self, event: events.DeliveryFailed) -> None:
        if event.name == "screenshot":
            event.prevent_default()  # instead of Textual's sentence, which names no folder
            self._screenshot_failed(getattr(self, "_screenshot_folder", screenshot_folder(None)), event.exception)

    def _screenshot_failed(self, folder: Path, exc: BaseException) -> None:
        why = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        self.notify(
            shown(f"Cannot save the screenshot in {folder} ({why}); set {SCREENSHOTS_ENV} to a folder you can write."),
            title="Screenshot", severity="error", timeout=10, markup=False,
        )

    def _fatal_error(self) -> None:
        """An unhandled error ends the app with its traceback, as Textual's does, but without the
        values of local variables (Textual shows them, and here they hold customer records and
        messages); the exit status is 1 (`launch` returns it)."""
        from rich.segment import Segments
        from rich.traceback import Traceback

        self.bell()
        traceback = Traceback(show_locals=False, width=None, suppress=[rich])
        self._exit_renderables.append(Segments(self.console.render(traceback, self.console.options)))
        self._close_messages_no_wait()

    def on_mount(self) -> None:
        if self._keymap:
            self.set_keymap(self._keymap)
        self.push_screen(self._first)

    def open_replay(self, path: Path) -> ReplayScreen | None:
        """Open a saved trajectory on top of the current screen (Escape returns)."""
        try:
            loaded = read_trajectory(path, lazy=True)
        except LedgerTuiError as exc:
            self.notify(shown(exc, markup=True), severity="error", timeout=10)
            return None
        named = loaded.started.domain if loaded.started else None
        screen = ReplayScreen(loaded.events, path=Path(path), domain_named=named, warnings=loaded.warnings)
        self.push_screen(screen)
        return screen

    async def action_quit(self) -> None:
        """Record the end of every live session before leaving (the first screen's, and forks
        opened from a replay); nothing recorded is lost either way."""
        from ledger_tui.engine.session import drain
        from ledger_tui.ui.screens.play import PlayScreen

        for screen in dict.fromkeys([self._first, *self.screen_stack]):
            if not isinstance(screen, PlayScreen):
                continue
            session = screen.session
            if session.state.ended is None and screen._queue.empty():
                try:
                    await drain(session.end("operator quit"))
                except LedgerTuiError:
                    pass
            session.close()
        # a quit that comes after an error (Textual sets return code 1 and closes) keeps its status:
        # exit() would set 0. On Python 3.12+ (eager tasks) a key pressed as the app fails gets here
        self.exit(return_code=self.return_code or 0)


def make_app(
    *,
    domain: Domain | None = None,
    model: Model | None = None,
    mode: str = "full",
    db_path: Path | None = None,
    out: Path | None = None,
    session: Session | None = None,
    trajectory: Path | None = None,
    events: list[Event] | None = None,
    loaded: LoadedTrajectory | None = None,
    step: int | None = None,
    keymap: Mapping[str, str] | None = None,
    folder: Path | None = None,
    session_options: Mapping[str, Any] | None = None,
) -> LedgerWorkbench:
    """Build the workbench: browse when `folder` is given, replay when `trajectory` (or `events`)
    is given, else live play.

    Browse lists the runs of an eval or import-tau2 folder (a `LedgerTuiError` if it has none). Play needs `domain` (or a prepared `session`); `model=None` plays without a model. Replay loads
    the trajectory's domain by name unless `domain` is passed (tests pass the toy domain).
    """
    if folder is not None:
        from ledger_tui.ui.run_index import load_runs
        from ledger_tui.ui.screens.browse import BrowseScreen

        return LedgerWorkbench(BrowseScreen(load_runs(folder)), keymap)
    if trajectory is not None or events is not None:
        warnings: list[str] = []
        if events is None:
            if loaded is None:  # (the CLI passes the file it has read to check it: read once)
                loaded = read_trajectory(trajectory, lazy=True)  # type: ignore[arg-type]
            events, warnings = loaded.events, loaded.warnings
        first = events[0] if events else None
        named = NOT_NAMED if domain is not None else getattr(first, "domain", None)  # (loaded when first needed)
        screen: Screen[None] = ReplayScreen(events, path=trajectory, step=step, domain=domain, warnings=warnings, domain_named=named)
        return LedgerWorkbench(screen, keymap)
    from ledger_tui.engine.model.models import NoModel
    from ledger_tui.engine.session import Session
    from ledger_tui.ui.screens.play import PlayScreen

    if session is None:
        if domain is None:
            raise LedgerTuiError("Play needs a domain; pass --domain (see `ledger-tui domains`).")
        session = Session(domain, model or NoModel(), mode, db_path=db_path, out=out, **(session_options or {}))  # type: ignore[arg-type]
    return LedgerWorkbench(PlayScreen(session, has_model=not isinstance(session.model, NoModel)), keymap)

"""Help: the keys of the screen it was opened from (with their remappable ids) and the console."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ledger_tui.ui.console import USAGE

CONSOLE = [
    ("text", "say it as the customer (the agent answers if there is a model)"),
    ("/call NAME k=v …", "act as the agent: the call goes through the same gate"),
    ("/me NAME k=v …", "a customer-side action (dual-control domains such as telecom)"),
    ("/end [reason]", "end the session (recorded)"),
    ("/help", "this screen"),
]


class HelpScreen(ModalScreen[None]):
    """Lists keys as (key, action, binding id) so remapping is discoverable."""

    BINDINGS = [Binding("escape,f1,q", "app.pop_screen", "Close", id="help.close")]

    def __init__(self, keys: list[tuple[str, str, str]], console: bool) -> None:
        super().__init__()
        self.keys = keys
        self.console = console

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=True, header_style="bold", expand=True)
        table.add_column("key", no_wrap=True)
        table.add_column("does")
        table.add_column("id (for a keymap)", style="dim", no_wrap=True)
        for key, description, binding_id in self.keys:
            table.add_row(key, description, binding_id)
        with VerticalScroll(id="help-body"):
            yield Static(Text("Keys", style="bold"))
            yield Static(table)
            if self.console:
                console = Table(box=None, show_header=False, expand=True)
                console.add_column(no_wrap=True)
                console.add_column()
                for usage, what in CONSOLE:
                    console.add_row(usage, what)
                yield Static(Text("\nConsole", style="bold"))
                yield Static(console)
                yield Static(Text(f"\nArguments: {USAGE}.", style="dim"))
            yield Static(Text("\nCtrl+P opens the command palette: open session, jump to step, filter the gate log, export the ledger.", style="dim"))

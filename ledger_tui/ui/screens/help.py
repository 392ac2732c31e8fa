"""Help: the keys of the screen it was opened from (with their remappable ids) and the console.

Each key reads as the footer says it (its label), then what it does when there is more to say;
the ids for a keymap take a column only where the screen is wide enough for it.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from ledger_tui.ui.console import USAGE

CONSOLE = [
    ("text", "say it as the customer (the agent answers if there is a model)"),
    ("/say TEXT", "say it as the agent (no model: list the details, ask for a yes)"),
    ("/call NAME k=v …", "act as the agent: the call goes through the same gate"),
    ("/me NAME k=v …", "a customer-side action (dual-control domains such as telecom)"),
    ("/tools", "the domain's tools: kind and arguments"),
    ("/end [reason]", "end the session (recorded)"),
    ("/help", "this screen"),
    ("Tab", "complete a command, tool, argument name or an id seen in the session"),
]

LEGEND = [
    ("Ledger", ""),
    ("[new] [changed] [re-read]", "what the latest tool result added, changed, or read again with the same value"),
    ("(new) (changed) (re-read)", "the same, earlier in this turn (since the customer last spoke)"),
    ("[STALE]", "a write or the customer changed it: read it again before relying on it (red, italic)"),
    ("(said)", "what the customer said: unverified, shown apart, never evidence for the gate"),
    ("Gate log", ""),
    ("ALLOW", "green: every check passed; the call ran"),
    ("REVISE", "yellow: a rule was broken; the call did not run and the model got feedback to try again"),
    ("REVISE · read", "pale italic: only a read is missing; the feedback names the read to make"),
    ("BLOCK", "red: refused; the call did not run"),
    ("Conversation", ""),
    ("[ok] [error]", "a tool call that ran, and whether the tool answered an error"),
    ("[REVISE · not run]", "a call the gate stopped (▶ collapsed: Enter shows arguments and feedback)"),
    ("Search and copy", ""),
    ("/ (Ctrl+F in play)", "search the conversation, the ledger's paths and values and the gate log (case ignored)"),
    ("Enter, Shift+Enter", "in the search: the next / previous step with a hit (also ↓ ↑); Esc closes it"),
    ("◆ on the scrubber", "a step the search matched; n / p still go to gate decisions"),
    ("c", "copy: the ledger's highlighted value (a record as JSON), the gate log's decision (call, verdict, "
     "reason), the conversation's focused call, else the search's hit, else the latest entry"),
    ("Why screen", ""),
    ("w, Ctrl+R", "what-if: change arguments or record fields and run the gate again; reset"),
    ("Enter on a record", "replay: go to the step it was read at"),
]

PALETTE_NOTE = "Ctrl+P opens the command palette: open session, jump to step, filter the gate log, export the ledger."
IDS_FROM = 100  # the keymap ids get their column from this many columns up; below, the keys get the room


def screen_keys(screen: Screen) -> list[tuple[str, str, str]]:
    """The screen's own (remappable) keys as (keys, what, id), one row per binding id.

    Keys bound to one action (→ and l) share a row; the focused widget's built-in keys are left
    out, they would drown ours. What a key does starts with its footer label, so a key reads the
    same in the footer and here.
    """
    rows: dict[str, tuple[list[str], str]] = {}
    for active in screen.active_bindings.values():
        b = active.binding
        if not b.id:
            continue
        label = b.description or b.action
        keys, _ = rows.setdefault(b.id, ([], f"{label}: {b.tooltip}" if b.tooltip else label))
        shown = screen.app.get_key_display(b)
        if shown not in keys:
            keys.append(shown)
    out = [(" ".join(keys), what, binding_id) for binding_id, (keys, what) in rows.items()]
    out.append(("^p", "command palette", ""))
    return out


class HelpScreen(ModalScreen[None]):
    """Lists keys as (key, action, binding id) so remapping is discoverable."""

    BINDINGS = [Binding("escape,f1,q", "app.pop_screen", "Back", id="help.close")]

    def __init__(self, keys: list[tuple[str, str, str]], console: bool, note: str = PALETTE_NOTE) -> None:
        super().__init__()
        self.keys = keys
        self.console = console
        self.note = note

    def keys_table(self, width: int) -> Table:
        """The keys, with their keymap ids in a third column from IDS_FROM columns up."""
        table = Table(box=None, show_header=True, header_style="bold", expand=True)
        table.add_column("key", no_wrap=True)
        table.add_column("does")
        ids = width >= IDS_FROM
        if ids:
            table.add_column("id (for a keymap)", style="dim", no_wrap=True)
        for key, description, binding_id in self.keys:
            table.add_row(key, description, *([binding_id] if ids else []))
        if not ids:
            table.title = f"(the ids for a keymap show from {IDS_FROM} columns up)"
            table.title_style = "dim"
            table.title_justify = "left"
        return table

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static(Text("Keys", style="bold"))
            yield Static(self.keys_table(self.app.size.width), id="help-keys")
            if self.console:
                console = Table(box=None, show_header=False, expand=True)
                console.add_column(no_wrap=True)
                console.add_column()
                for usage, what in CONSOLE:
                    console.add_row(usage, what)
                yield Static(Text("\nConsole", style="bold"))
                yield Static(console)
                yield Static(Text(f"\nArguments: {USAGE}.", style="dim"))
            legend = Table(box=None, show_header=False, expand=True)
            legend.add_column(no_wrap=True)
            legend.add_column()
            for marker, meaning in LEGEND:
                if meaning:
                    legend.add_row(Text(marker), Text(meaning))
                else:
                    legend.add_row(Text(marker, style="bold underline"), Text(""))
            yield Static(Text("\nMarkers and colours", style="bold"))
            yield Static(legend)
            yield Static(Text(f"\n{self.note}", style="dim"))

    def on_resize(self, event: events.Resize) -> None:
        self.query_one("#help-keys", Static).update(self.keys_table(self.app.size.width))

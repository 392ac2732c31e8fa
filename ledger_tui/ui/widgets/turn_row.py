"""One turn of two runs side by side: a gutter with the turn's mark and number, then each run's
turn in its own cell. Both cells sit in one row, so the row is as tall as the longer side and the
next turn starts level on both sides, however differently the two were worded."""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from ledger_tui.engine.outside import shown
from ledger_tui.eval.diff import CallMade, Turn, TurnPair, ledger_differences, mark

# the gate's verdict colours, as the gate log has them (app.tcss: ALLOW $success, REVISE $warning, BLOCK $error)
VERDICT_STYLE = {"ALLOW": "$success", "REVISE": "$warning", "BLOCK": "$error", "WITHHELD": "$secondary"}


def _call_line(call: CallMade, unlike: bool) -> Content:
    """`≠ cancel_reservation  BLOCK` over its arguments, `reservation_id="VY0QX8"`: a narrow cell
    wraps between arguments, never inside the tool's name."""
    style = VERDICT_STYLE.get(call.verdict or "", "$text-muted")
    who = {"user": "customer: ", "operator": "operator: "}.get(call.call.requestor, "")
    arguments = call.call.signature()[len(call.call.name) + 1 : -1]
    head = Content.assemble(
        ("≠ " if unlike else "  ", "bold $warning"),
        (shown(who + call.call.name + ("" if arguments else "()")), "bold" if unlike else ""),
        "  ",
        (shown(call.outcome), style),
    )
    return Content("\n").join([head, Content.styled("    " + shown(arguments), "$text-muted")]) if arguments else head


def turn_content(turn: Turn | None, other: Turn | None, side: str) -> Content:
    """One side of a turn: the customer's words, the calls with what came of them (those unlike
    the other side's at the same place marked ≠), the ledger paths changed differently, the facts
    read from the customer's words, and what the agent said."""
    if turn is None:
        return Content.styled(f"(run {side} has no turn here)", "italic $text-muted")
    parts: list[Content] = []
    if turn.customer:
        parts.append(Content.assemble(("customer ", "bold"), shown(turn.customer)))
    elif turn.number == 0:
        parts.append(Content.styled("before the first customer message", "italic $text-muted"))
    theirs = other.calls if other is not None else ()
    for i, call in enumerate(turn.calls):
        counterpart = theirs[i] if i < len(theirs) else None
        unlike = counterpart is None or counterpart.key() != call.key() or counterpart.outcome != call.outcome
        parts.append(_call_line(call, unlike))
    changed = ledger_differences(turn, other) if side == "A" else [(p, b, a) for p, a, b in ledger_differences(other, turn)]
    if turn.ledger or changed:
        n = len(turn.ledger)
        parts.append(Content.styled(f"ledger: {n or 'no'} change{'s' if n != 1 else ''}", "$text-muted"))
    for path, mine, _ in changed:
        mine = "unchanged" if mine == "—" else mine
        parts.append(Content.assemble(("≠ ", "bold $warning"), (shown(path), "bold"), " ", (shown(mine), "$text-warning")))
    for fact in (c for c in turn.ledger if c.stated):  # read from the customer's words: wording, never marked
        parts.append(Content.styled(shown(f"{fact.path} = {fact.value}"), "italic $text-muted"))
    for said in turn.agent:
        parts.append(Content.assemble(("agent ", "bold"), shown(said)))
    return Content("\n").join(parts) if parts else Content.styled("nothing", "italic $text-muted")


@dataclass
class TurnChosen(Message):
    """The operator clicked a turn: the diff screen moves its cursor there."""

    number: int


class TurnRow(Horizontal):
    """One `TurnPair`; the screen toggles `-cursor` on the row its cursor is on."""

    def __init__(self, pair: TurnPair, divergence: TurnPair | None) -> None:
        classes = "-divergence" if pair is divergence else "-differs" if not pair.same else "-worded" if pair.worded else "-same"
        super().__init__(classes=classes, id=f"turn-{pair.number}")
        self.pair = pair
        self.divergence = divergence

    def compose(self) -> ComposeResult:
        p = self.pair
        yield Static(Content(f"{mark(p, self.divergence)}{p.number:>3}"), classes="gutter")
        yield Static(turn_content(p.a, p.b, "A"), classes="cell side-a")
        yield Static(turn_content(p.b, p.a, "B"), classes="cell side-b")

    def point(self, here: bool) -> None:
        """Show (or stop showing) the cursor on this row."""
        self.set_class(here, "-cursor")

    def on_click(self, event: events.Click) -> None:
        self.post_message(TurnChosen(self.pair.number))

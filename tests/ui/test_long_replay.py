"""A long replay shows what a short one would: the conversation and the gate log list only their latest
entries as of the cursor, whatever path the cursor took to get there, every tool call shown carries
its result and verdict, and a jump mounts at most a window's worth of widgets."""

from __future__ import annotations

import random

from benchmarks.ui import looped_trajectory
from ledger_tui.engine.events import (
    AssistantMessage,
    Event,
    GateDecided,
    Notice,
    Refusal,
    ToolCallProposed,
    ToolResult,
    UserMessage,
    Verdict,
)
from ledger_tui.engine.store.fold import fold
from ledger_tui.ui.app import make_app
from ledger_tui.ui.widgets.conversation import HIGH, LOW, ConversationView
from ledger_tui.ui.widgets.gate_log import LIST_MAX, LIST_MIN
from ledger_tui.ui.widgets.tool_call_item import ToolCallItem
from tests.ui.scenarios import REVISE_MESSAGES, record, revise_turns

VISIBLE = (UserMessage, AssistantMessage, Refusal, ToolCallProposed, ToolResult, Notice, GateDecided)


async def long_trajectory(toy, tmp_path, events: int):
    short = tmp_path / "revise.jsonl"
    await record(toy, revise_turns(), REVISE_MESSAGES, out=short)
    path = tmp_path / "long.jsonl"
    path.write_text("\n".join(looped_trajectory(short, events)) + "\n", encoding="utf-8")
    return path


class Window:
    """The conversation window as the pane kept it before it was made incremental: every visible
    event up to the cursor appended, trimmed from HIGH entries to LOW, refilled to LOW when it
    falls below (the definition the pane must still meet)."""

    def __init__(self) -> None:
        self.seqs: list[int] = []
        self.earlier = 0

    def move(self, wanted: list[int]) -> None:
        last = wanted[-1] if wanted else -1
        log = [s for s in self.seqs if s <= last]
        shown_last = log[-1] if log else -1
        log += [s for s in wanted if s > shown_last]
        if len(log) > HIGH:
            log = log[-LOW:]
        first = log[0] if log else last + 1
        earlier = [s for s in wanted if s < first]
        if len(log) < LOW and earlier:
            log = earlier[-(LOW - len(log)) :] + log
            earlier = [s for s in wanted if s < log[0]]
        self.seqs, self.earlier = log, len(earlier)


def expected_widgets(
    events: list[Event], seqs: list[int], cursor: int, headings: dict[tuple[int, int, int], str] | None = None
) -> list[tuple[str, str]]:
    """What the pane shows for the entries `seqs` as of step `cursor`: each line's text, and each
    call's title with the verdict and outcome recorded for it by then (`headings`: the titles already
    worked out, by call, decision and result; a walk of hundreds of steps builds each item once)."""
    by_seq = {e.seq: e for e in events}
    headings = {} if headings is None else headings
    shown: list[tuple[str, str]] = []
    for seq in seqs:
        event = by_seq[seq]
        if isinstance(event, ToolCallProposed):
            later = [e for e in events[event.seq + 1 : cursor + 1]]
            decided = next((e for e in later if isinstance(e, GateDecided) and e.decision.call.id == event.call.id), None)
            result = next((e for e in later if isinstance(e, ToolResult) and e.call_id == event.call.id), None)
            key = (event.seq, decided.seq if decided else -1, result.seq if result else -1)
            if key not in headings:
                item = ToolCallItem(event)
                item.decision, item.result = (decided.decision if decided else None), result
                headings[key] = item._heading().plain
            shown.append(("call", headings[key]))
        elif isinstance(event, UserMessage):
            shown.append(("line", f"customer  {event.text}"))
        elif isinstance(event, AssistantMessage) and event.text.strip():
            shown.append(("line", f"agent  {event.text}"))
        elif isinstance(event, Refusal):
            shown.append(("line", f"agent refuses  {event.text}"))
        elif isinstance(event, Notice):
            shown.append(("line", f"{event.level}: {event.text}"))
    return shown


def pane(view: ConversationView) -> tuple[list[tuple[str, str]], str]:
    """The pane as the operator sees it: every entry in order, and the "earlier events" line."""
    shown = []
    for widget in view.children:
        assert widget.display or widget is view.children[0], "every widget of the pane is shown"
        if isinstance(widget, ToolCallItem):
            shown.append(("call", widget._heading().plain))
        elif "earlier" not in widget.classes:
            shown.append(("line", str(widget.render())))
    earlier = view.children[0]
    return shown, str(earlier.render()) if earlier.display else ""


async def test_the_conversation_window_is_the_same_whichever_way_the_cursor_came(toy, tmp_path):
    path = await long_trajectory(toy, tmp_path, 1200)
    app = make_app(trajectory=path, domain=toy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        events = screen.events
        visible = [e.seq for e in events if isinstance(e, VISIBLE)]
        window = Window()
        rng = random.Random(14)
        last = len(events) - 1
        moves = [last, 0, last, last // 2] + [rng.choice([1, -1, 2, -3, 45, -45, 130, -130]) for _ in range(40)]
        moves += [rng.randrange(len(events)) for _ in range(8)] + [*range(1, 120)] + [-1] * 130
        cursor = -1
        headings: dict[tuple[int, int, int], str] = {}
        for move in moves:
            target = move if abs(move) > 200 or move in (0, last, last // 2) else cursor + move
            target = max(0, min(last, target))
            if target == cursor:  # (a move past either end: the pane was checked there already)
                continue
            screen.cursor = target
            await pilot.pause()
            cursor = target
            window.move([s for s in visible if s <= cursor])
            shown, earlier = pane(screen.conversation)
            assert shown == expected_widgets(events, window.seqs, cursor, headings), cursor
            assert earlier == (f"… {window.earlier} earlier events (step back to see them)" if window.earlier else ""), cursor
            assert len(screen.conversation.children) <= HIGH + 1


async def test_a_jump_mounts_at_most_a_window_of_widgets(toy, tmp_path, monkeypatch):
    path = await long_trajectory(toy, tmp_path, 3000)
    app = make_app(trajectory=path, domain=toy, step=0)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        mounted: list[int] = []
        real = ConversationView.mount_all

        def counting(self, widgets, **kwargs):
            widgets = list(widgets)
            mounted.append(len(widgets))
            return real(self, widgets, **kwargs)

        monkeypatch.setattr(ConversationView, "mount_all", counting)
        for target in (len(screen.events) - 1, 10, 2500, 1200, 2999, 0):
            mounted.clear()
            screen.cursor = target
            await pilot.pause()
            assert sum(mounted) <= LOW, (target, mounted)
            items = screen.conversation.tool_calls
            assert (items or target == 0) and all(c.proposed.seq <= target for c in items)


async def test_a_long_gate_log_lists_the_latest_decisions_and_counts_them_all(toy, tmp_path):
    path = await long_trajectory(toy, tmp_path, 4000)
    app = make_app(trajectory=path, domain=toy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        events = screen.events
        log = screen.gate_log
        assert sum(isinstance(e, GateDecided) for e in events[: len(events) // 2 - 40]) > LIST_MAX
        for cursor in (len(events) - 1, len(events) // 2, len(events) // 2 - 40, 30, len(events) - 1):
            screen.cursor = cursor
            await pilot.pause()
            decided = [e for e in events[: cursor + 1] if isinstance(e, GateDecided)]
            assert log.decisions == decided
            listed = [log.get_row_at(i)[0].plain for i in range(log.row_count)]
            assert listed == [str(d.seq) for d in decided[-len(listed) :]]
            assert min(len(decided), LIST_MIN) <= len(listed) <= LIST_MAX
            earlier = len(decided) - len(listed)
            assert log.border_subtitle == (f"… {earlier:,} earlier (step back to list them)" if earlier else "")
            totals = fold(events, cursor).totals
            assert f"ALLOW {totals.allow} REVISE {totals.revise} BLOCK {totals.block}" in log.title_text
            assert log.selected() == decided[-1]  # the cursor is on the latest decision
        screen.filter_gate_log(Verdict.REVISE)
        await pilot.pause()
        revise = [e for e in events if isinstance(e, GateDecided) and e.decision.verdict == Verdict.REVISE]
        listed = [log.get_row_at(i)[0].plain for i in range(log.row_count)]
        assert listed == [str(d.seq) for d in revise[-len(listed) :]] and len(listed) >= min(len(revise), LIST_MIN)
        assert log.border_subtitle.startswith(f"… {len(revise) - len(listed):,} earlier")


async def test_the_gate_log_shows_five_digit_steps_whole(toy, tmp_path):
    path = await long_trajectory(toy, tmp_path, 10_100)
    app = make_app(trajectory=path, domain=toy)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        log = app.screen.gate_log
        latest = log.decisions[-1].seq
        assert latest >= 10_000
        steps = [line.split()[0] for y in range(1, log.size.height) if (line := log.render_line(y).text).strip()]
        assert steps[-1] == str(latest)  # (a four-column step cut it to its first four digits)
        assert steps == [str(d.seq) for d in log.decisions[-len(steps) :]]

"""Text uses the room the screen has: call titles, ledger values and gate reasons show as much as
their pane allows and end in "…" only when cut (again after a resize); ledger records open onto
their nested fields; previews lead with what the checks decide on; a maximized gate log and the
reason strip under it show whole reasons. Everything is read off the screen as drawn."""

from __future__ import annotations

from pathlib import Path

from ledger_tui.engine.events import GateDecided, ToolCallProposed
from ledger_tui.ui.app import make_app
from ledger_tui.ui.widgets import GateLog, GateReason, LedgerTree
from ledger_tui.ui.widgets.conversation import ConversationView

ROOT = Path(__file__).resolve().parents[2]
CANCEL_BLOCKED = ROOT / "sessions" / "airline-cancel-blocked.jsonl"
ADDRESS_BLOCKED = ROOT / "sessions" / "retail-blocked-address-change-after-item-change.jsonl"


def seen(app, widget) -> list[str]:
    """The screen's lines where `widget` is drawn, border and padding left out."""
    lines = ["".join(s.text for s in strip) for strip in app.screen._compositor.render_strips()]
    box = widget.content_region
    return [line[box.x : box.right] for line in lines[box.y : box.bottom]]


def words(lines: list[str]) -> str:
    """Lines read as running text (a wrapped line goes on after a space)."""
    return " ".join(" ".join(lines).split())


def line_with(lines: list[str], text: str) -> str:
    [line] = [line for line in lines if text in line]
    return line.rstrip()


async def test_a_call_title_fills_the_pane_and_ends_in_an_ellipsis_only_where_it_is_cut():
    app = make_app(trajectory=ADDRESS_BLOCKED)
    async with app.run_test(size=(200, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        call = next(e.call for e in screen.events if isinstance(e, ToolCallProposed) and e.call.name == "modify_pending_order_address")
        whole = call.signature()
        pane = screen.query_one(ConversationView)
        for width in (200, 150):  # and again after a resize
            await pilot.resize_terminal(width, 40)
            await pilot.pause()
            title = line_with(seen(app, pane), "modify_pending_order_address(")
            assert title.endswith("…"), title
            shown = title[title.index("modify_pending_order_address(") : -1]
            assert whole.startswith(shown) and len(title) >= pane.content_region.width - 2, title
        await pilot.resize_terminal(200, 40)
        await pilot.press("f2")  # the conversation on the whole screen: the call fits
        await pilot.pause()
        title = line_with(seen(app, pane), "modify_pending_order_address(")
        assert title.endswith(whole) and "…" not in title


async def test_ledger_previews_use_the_pane_width_and_lead_with_the_checked_fields():
    app = make_app(trajectory=ADDRESS_BLOCKED)
    async with app.run_test(size=(200, 40)) as pilot:
        await pilot.pause()
        tree = app.screen.query_one(LedgerTree)
        order = line_with(seen(app, tree), "#W3042004 ")
        preview = order[order.index("{") :]
        assert preview.startswith('{"status":"pending (item modified)"'), order  # not the address first
        assert order.endswith("…") and len(order) >= tree.content_region.width - 2, order  # to the pane's edge
        assert len(preview) > 60
        await pilot.resize_terminal(130, 40)  # narrower: cut again at the new edge
        await pilot.pause()
        narrower = line_with(seen(app, tree), "#W3042004 ")
        assert narrower.endswith("…") and len(order) > len(narrower) >= tree.content_region.width - 2, narrower
    flight_app = make_app(trajectory=CANCEL_BLOCKED)
    async with flight_app.run_test(size=(200, 40)) as pilot:
        await pilot.pause()
        flight = line_with(seen(flight_app, flight_app.screen.query_one(LedgerTree)), "HAT255.2024-05-23")
        assert flight.endswith('{"status":"available"}')  # whole: no "…"


async def test_a_record_opens_onto_its_nested_fields_down_to_a_payment_method_id():
    app = make_app(trajectory=CANCEL_BLOCKED)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        await pilot.press("f3")  # the ledger, focused, on the whole screen
        await pilot.pause()
        tree = app.screen.query_one(LedgerTree)
        for label in ("rosa_phillips_9719 ", "payment_methods: ", "credit_card_2639028: "):
            await pilot.press("home")
            for _ in range(40):
                if str(tree.cursor_node.label).startswith(label):
                    break
                await pilot.press("down")
            assert str(tree.cursor_node.label).startswith(label), label
            await pilot.press("space")
            await pilot.pause()
        lines = seen(app, tree)
        assert any(line.rstrip().endswith('id: "credit_card_2639028"') for line in lines), "\n".join(lines)
        assert any(line.rstrip().endswith('last_four: "4683"') for line in lines)


async def test_a_maximized_gate_log_shows_whole_reasons():
    app = make_app(trajectory=CANCEL_BLOCKED)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        screen = app.screen
        decision = next(e.decision for e in screen.events if isinstance(e, GateDecided))
        log = screen.query_one(GateLog)
        row = line_with(seen(app, log), "cancel_reservation")
        assert row.endswith("…") and decision.reason not in words(seen(app, log))  # beside the others: cut, and says so
        await pilot.press("f4")
        await pilot.pause()
        assert log.is_maximized
        assert decision.reason in words(seen(app, log))
        await pilot.press("f4")  # back beside the other panes: one line a decision again
        await pilot.pause()
        assert line_with(seen(app, log), "cancel_reservation").endswith("…")


async def test_the_reason_strip_grows_to_the_whole_reason_and_ends_in_an_ellipsis_only_when_cut():
    app = make_app(trajectory=CANCEL_BLOCKED)
    async with app.run_test(size=(120, 34)) as pilot:
        await pilot.pause()
        screen = app.screen
        decision = next(e.decision for e in screen.events if isinstance(e, GateDecided))
        strip = screen.query_one(GateReason)
        said = seen(app, strip)
        assert len(said) > 3 and decision.reason in words(said) and "…" not in words(said)
        await pilot.resize_terminal(100, 24)  # too short for it all: cut, and says so
        await pilot.pause()
        said = seen(app, strip)
        assert words(said).endswith("…") and decision.reason not in words(said)

"""Friction an operator met on the Why, help and what-if screens (issue 29): a notification over the
verdict, no F1 on Why, one key labelled two ways, the keymap ids crowding the help at 80 columns,
and a what-if that lost what was typed, kept its place after a reset and could not be filtered."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Select
from textual.widgets._select import SelectOverlay
from textual.widgets._toast import Toast

from ledger_tui.ui.app import make_app
from ledger_tui.ui.screens.help import HelpScreen
from ledger_tui.ui.screens.why import WhyScreen
from tests.ui.test_why_page import open_why

ROOT = Path(__file__).resolve().parents[2]
BLOCKED = ROOT / "sessions" / "airline-cancel-blocked.jsonl"


def screen_lines(app) -> list[str]:
    """The current screen as the terminal shows it, toasts included."""
    return ["".join(segment.text for segment in strip) for strip in app.screen._compositor.render_strips()]


def footer(app) -> str:
    return screen_lines(app)[-1]


def shown_in_region(app, widget) -> str:
    """The widget's rows as on screen, its left border and padding dropped, joined into one text."""
    region = widget.region
    rows = screen_lines(app)[region.y : region.bottom]
    return " ".join(row[region.x : region.right].lstrip("█ ").rstrip() for row in rows)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_a_notification_never_covers_the_verdict_on_the_why_screen(size):
    app = make_app(trajectory=BLOCKED)
    async with app.run_test(size=size, notifications=True) as pilot:
        await pilot.press("n")  # past the last decision: "Wrapped around…" is still up as Why opens
        why = await open_why(pilot)
        await pilot.press("ctrl+r")  # and the Why screen's own notice
        await pilot.pause(0.3)
        assert len(list(why.walk_children(Toast))) == 2
        verdict = why.decided.decision.reason
        summary = why.query_one("#why-summary")
        assert f"verdict BLOCK · violation: {verdict}" in shown_in_region(app, summary)


async def test_f1_on_the_why_screen_lists_its_keys_and_escape_comes_back():
    app = make_app(trajectory=BLOCKED)
    async with app.run_test(size=(80, 24)) as pilot:
        why = await open_why(pilot)
        assert "f1 Help" in footer(app)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = "\n".join(screen_lines(app))
        assert "What-if" in text and "Reset what-if" in text and "Back" in text
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is why


async def test_a_key_reads_the_same_in_the_footer_the_tab_strip_and_the_help():
    app = make_app(trajectory=BLOCKED)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        bottom = footer(app)
        strip = screen_lines(app)[1]
        for key, label in (("f2", "Chat"), ("f3", "Ledger"), ("f4", "Gate")):
            assert f"{key} {label} " in bottom
            assert f"{key.upper()} {label} " in strip, strip
        await pilot.press("f1")
        await pilot.pause()
        rows = screen_lines(app)
        # the help names each key as the footer does, then says what it does
        assert any(" f2 " in row and "Chat: the conversation on the whole" in row for row in rows)
        assert any(" → l " in row and "Step: one event forward" in row for row in rows)
        assert not any(" ← h " in row and " Back " in row for row in rows), "Back is Escape's word; ← steps back"
        await pilot.press("escape")
        await pilot.pause()
        await open_why(pilot)
        assert "esc Back" in footer(app)


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
async def test_the_help_gives_keys_and_descriptions_the_room_at_80_columns(size):
    app = make_app(trajectory=BLOCKED)
    async with app.run_test(size=size) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        text = "\n".join(screen_lines(app))
        rows = screen_lines(app)
        f2 = next(i for i, row in enumerate(rows) if " f2 " in row)
        f3 = next(i for i, row in enumerate(rows) if " f3 " in row)
        assert f3 - f2 <= 2, "F2's description takes more than two lines"
        if size[0] < 100:
            assert "workbench.show_conversation" not in text and "id (for a keymap)" not in text
            assert "ids for a keymap show from 100 columns up" in text
        else:
            assert "workbench.show_conversation" in text and "id (for a keymap)" in text


def option_text(overlay: SelectOverlay, index: int) -> str:
    prompt = overlay.get_option_at_index(index).prompt
    return getattr(prompt, "plain", str(prompt))


def target_index(why: WhyScreen, field: str) -> int:
    return next(i for i, t in enumerate(why.targets) if t.field == field)


async def pick(pilot, why: WhyScreen, index: int) -> None:
    """Choose a target with the picker's own keys: open it, move down, Enter."""
    why.query_one("#whatif-target", Select).focus()
    await pilot.press("enter")
    await pilot.pause()
    overlay = why.query_one(SelectOverlay)
    offset = next(i for i in range(overlay.option_count) if option_text(overlay, i) == why.targets[index].label())
    moves = offset - (overlay.highlighted or 0)
    await pilot.press(*["down" if moves > 0 else "up"] * abs(moves), "enter")
    await pilot.pause()


async def test_what_if_keeps_the_typed_value_across_tab_and_another_pick():
    app = make_app(trajectory=BLOCKED)
    async with app.run_test(size=(80, 24)) as pilot:
        why = await open_why(pilot)
        box = why.query_one("#whatif-value", Input)
        cabin = target_index(why, "cabin")
        await pick(pilot, why, cabin)
        assert box.has_focus and box.value == "economy"
        await pilot.press(*"busi")  # the offered value is replaced by what is typed
        await pilot.press("tab", "shift+tab")
        await pilot.press(*"ness")
        assert box.value == "business"
        await pick(pilot, why, target_index(why, "insurance"))
        assert box.value == "no"
        await pick(pilot, why, cabin)
        assert box.value == "business", "the value typed for the cabin was lost"
        await pilot.press("enter")
        await pilot.pause()
        result = str(why.query_one("#whatif-result").render())
        assert result.splitlines()[0].split()[:2] == ["→", "ALLOW"]
        assert 'cabin = "business"' in result


async def test_ctrl_r_takes_the_picker_back_to_its_first_field():
    app = make_app(trajectory=BLOCKED)
    async with app.run_test(size=(80, 24)) as pilot:
        why = await open_why(pilot)
        await pick(pilot, why, target_index(why, "cabin"))
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("ctrl+r")
        await pilot.pause()
        first = why.targets[0]
        assert any(f"  {first.label()} " in row for row in screen_lines(app)), "the picker shows its first field"
        assert why.query_one("#whatif-value", Input).value == "VY0QX8"
        why.query_one("#whatif-target", Select).focus()
        await pilot.press("enter")
        await pilot.pause()
        overlay = why.query_one(SelectOverlay)
        assert option_text(overlay, overlay.highlighted) == first.label()


async def test_typing_in_the_what_if_filter_narrows_the_picker_and_enter_picks():
    app = make_app(trajectory=BLOCKED)
    async with app.run_test(size=(80, 24)) as pilot:
        why = await open_why(pilot)
        await pilot.press("w", *"insur")
        await pilot.pause()
        assert any(f"1 of {len(why.targets)} match" in row for row in screen_lines(app))
        await pilot.press("enter")
        await pilot.pause()
        box = why.query_one("#whatif-value", Input)
        assert box.has_focus and box.value == "no"
        assert why.targets[why.query_one("#whatif-target", Select).value].label() == "reservations.VY0QX8 › insurance"
        why.query_one("#whatif-target", Select).focus()
        await pilot.press("enter")
        await pilot.pause()
        overlay = why.query_one(SelectOverlay)
        assert [option_text(overlay, i) for i in range(overlay.option_count)][1:] == [
            "reservations.VY0QX8 › insurance"
        ]
        await pilot.press("escape")
        await pilot.press("ctrl+r")  # the filter goes with the changes
        await pilot.pause()
        assert why.query_one("#whatif-filter", Input).value == ""
        assert overlay.option_count == len(why.targets) + 1

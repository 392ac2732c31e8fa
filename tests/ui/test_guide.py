"""The guided console: Tab completes what the operator would otherwise look up in policy.md and
db.json, a tool's signature shows as it is typed, and a misspelt tool never reaches the gate."""

from __future__ import annotations

import re

import pytest
from textual.widgets import Input, Static

from ledger_tui.domains import load_domain
from ledger_tui.engine.events import GateDecided, ToolCallProposed
from ledger_tui.engine.ledger import EMPTY, absorb
from ledger_tui.engine.session import Session
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.ui.app import make_app
from ledger_tui.ui.console import ConsoleError, parse_line
from ledger_tui.ui.guide import Guide, seen_values, signature, starters
from ledger_tui.ui.screens.play import PlayScreen, ToolsScreen


@pytest.fixture(scope="module")
def airline():
    return load_domain("airline")


def nothing(tool: str, argument: str) -> list[str]:
    return []


def test_tab_completes_commands_tools_and_argument_names(airline):
    g = Guide(airline)
    assert g.complete("/ca", 3, nothing).line == "/call "
    assert g.complete("/call cancel_r", 14, nothing).line == "/call cancel_reservation "
    line = "/call cancel_reservation res"
    assert g.complete(line, len(line), nothing).line == "/call cancel_reservation reservation_id="
    several = g.complete("/call get_", 10, nothing)
    assert several.line == "/call get_" and {"get_user_details", "get_reservation_details", "get_flight_status"} <= set(several.choices)
    search = g.complete("/call search_", 13, nothing)
    assert search.line == "/call search_" and search.choices == ("search_direct_flight", "search_onestop_flight")
    # an argument already given is not offered again
    line = "/call search_direct_flight origin=JFK "
    names = g.complete(line, len(line), nothing).choices
    assert "origin=" not in names and {"destination=", "date="} <= set(names)


def test_values_come_from_the_session_best_first(airline):
    ledger, _ = absorb(
        EMPTY,
        [("users.mia_li_3668", {"user_id": "mia_li_3668", "reservations": ["NO6JO3", "AIXC49"]}), ("reservations.NO6JO3", {"reservation_id": "NO6JO3"})],
        source_call="r",
        source_seq=1,
    )
    calls = [("get_reservation_details", {"reservation_id": "ZZ9999"})]
    values = seen_values("cancel_reservation", "reservation_id", calls, ledger)
    assert values[0] == "ZZ9999" and set(values) == {"ZZ9999", "NO6JO3", "AIXC49"}
    g = Guide(airline)
    line = "/call cancel_reservation reservation_id=AI"
    done = g.complete(line, len(line), lambda tool, arg: values)
    assert done.line == "/call cancel_reservation reservation_id=AIXC49 "


def test_the_identified_customer_is_offered_by_id_not_by_the_ledgers_alias(airline):
    """`users.current` names whom the conversation serves; `current` is no user id."""
    ledger, _ = absorb(EMPTY, [("users.mia_li_3668", {"user_id": "mia_li_3668"}), ("users.current", "mia_li_3668")], source_call="r", source_seq=1)
    values = seen_values("get_user_details", "user_id", [], ledger)
    assert values == ["mia_li_3668"]


def test_a_misspelt_tool_is_refused_with_the_nearest_names(airline):
    g = Guide(airline)
    with pytest.raises(ConsoleError, match=r"'get_user_detail' is not a tool of the airline domain; did you mean get_user_details"):
        g.check(parse_line("/call get_user_detail user_id=x"))
    with pytest.raises(ConsoleError, match="/tools lists them"):
        g.check(parse_line("/call frobnicate"))
    with pytest.raises(ConsoleError, match="no customer-side actions"):
        g.check(parse_line("/me toggle_roaming"))
    telecom = Guide(load_domain("telecom"))
    with pytest.raises(ConsoleError, match="it is a customer tool: use /me toggle_roaming"):
        telecom.check(parse_line("/call toggle_roaming"))
    telecom.check(parse_line("/me toggle_roaming"))


def test_signatures_and_the_tools_listing(airline):
    cancel = airline.tool("cancel_reservation")
    assert signature(cancel) == "cancel_reservation(reservation_id: str) · write"
    listing = Guide(load_domain("telecom")).tools_listing()
    assert listing[0] == "telecom: /call acts as the agent"
    assert "/me acts as the customer on their phone" in listing
    assert any(line.strip().startswith("toggle_roaming(") for line in listing)


@pytest.mark.parametrize("name, identified_by", [("airline", "user id"), ("retail", "zip code"), ("telecom", "phone number"), ("telehealth", "date of birth")])
def test_the_tools_listing_says_what_each_tool_does_and_how_the_customer_is_identified(name, identified_by):
    domain = load_domain(name)
    listing = Guide(domain).tools_listing()
    for tool in domain.tools:
        at = next(i for i, line in enumerate(listing) if line.strip().startswith(f"{tool.name}("))
        about = listing[at + 1].strip()
        assert about.endswith(".") and about.split()[0] in tool.description, tool.name
    assert listing[-1].startswith("The customer is identified by ") and identified_by in listing[-1]


def test_starters_are_real_people_of_the_database(airline):
    people = starters(airline, airline.session_db())
    assert len(people) == 3
    users = airline.session_db().users
    assert all(p.split(" ")[0] in users for p in people)
    assert "@" in people[0]  # with what identifies them


async def test_play_console_completes_shows_the_signature_and_refuses_a_misspelt_tool(airline, tmp_path):
    out = tmp_path / "play.jsonl"
    session = Session(airline, None, "full", out=out, session_id="guide", timestamps=False)
    app = make_app(session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await screen.wait_idle()
        hint = screen.query_one("#console-hint", Static)
        first = screen.people[0].split(" ")[0]
        assert str(hint.render()).startswith(f"Customers to play: {first}, ")
        console = screen.query_one("#console", Input)
        console.focus()
        await pilot.press(*"/call get_user_details user_id=")
        await pilot.press("tab")
        assert console.value.startswith("/call get_user_details user_id=")  # the starters are offered
        assert first in str(hint.render())
        console.value = ""
        console = screen.query_one("#console", Input)
        console.focus()
        await pilot.press(*"/call cancel_r")
        await pilot.press("tab")
        assert console.value == "/call cancel_reservation "
        assert console.has_focus  # Tab completed; it did not move the focus
        await pilot.pause()
        assert str(hint.render()).startswith("cancel_reservation(reservation_id: str) · write")

        console.value = "Hi, I am mia_li_3668."
        await pilot.press("enter")
        await pilot.pause()
        await screen.wait_idle()
        console.value = "/call cancel_reservaton reservation_id=NO6JO3"
        await pilot.press("enter")
        await pilot.pause()
        await screen.wait_idle()
        assert console.value == "/call cancel_reservaton reservation_id=NO6JO3"  # kept for editing
        assert not [e for e in screen.events if isinstance(e, (ToolCallProposed, GateDecided))]

        console.value = "/tools"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ToolsScreen)
        await pilot.press("escape")
        await pilot.pause()
    events = read_trajectory(out).events
    assert not [e for e in events if isinstance(e, (ToolCallProposed, GateDecided))]


async def test_f1_explains_every_marker_and_colour(tmp_path):
    from pathlib import Path

    from ledger_tui.ui.screens.help import HelpScreen

    root = Path(__file__).resolve().parents[2]
    app = make_app(trajectory=root / "sessions" / "airline-cancel-blocked.jsonl")
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        import io

        from rich.console import Console

        console = Console(record=True, width=100, file=io.StringIO())
        for w in app.screen.query(Static):
            console.print(w.content)
        text = console.export_text()
        for marker in ("[new]", "(new)", "[STALE]", "(said)", "REVISE · read", "BLOCK", "[REVISE · not run]", "what-if", "Ctrl+R"):
            assert marker in text, marker


async def test_a_notification_never_covers_the_scrubber_or_the_gate_detail():
    from pathlib import Path

    from textual.widgets._toast import Toast

    from ledger_tui.ui.widgets import GateReason
    from ledger_tui.ui.widgets.replay_bar import ReplayBar

    root = Path(__file__).resolve().parents[2]
    app = make_app(trajectory=root / "sessions" / "airline-cancel-blocked.jsonl")
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.pause()
        app.notify("Gate log: only BLOCK. A long notice that wraps onto a second line of the toast.")
        await pilot.pause(0.3)
        [toast] = list(app.screen.walk_children(Toast))
        for widget in (app.screen.query_one(ReplayBar), app.screen.query_one(GateReason)):
            assert not toast.region.overlaps(widget.region), widget


async def test_a_notice_already_on_screen_is_not_stacked_again():
    from pathlib import Path

    from textual.widgets._toast import Toast

    root = Path(__file__).resolve().parents[2]
    app = make_app(trajectory=root / "sessions" / "airline-cancel-blocked.jsonl")
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await pilot.pause()
        for _ in range(3):
            app.notify("The endpoint at 127.0.0.1 answered HTTP 500.", severity="error")
        app.notify("Another notice.")
        await pilot.pause(0.3)
        shown = [str(t._content) if hasattr(t, "_content") else "" for t in app.screen.walk_children(Toast)]
        assert len(shown) == 2


def test_every_domain_offers_people_to_play_with_what_identifies_them():
    """`play --domain telecom` offered nobody (its people are on the agent's side of a two-part
    database), and retail's listed no zip code, half of its name-and-zip identification."""
    for name, identifies in (("telecom", r"^C\d+ \(.+, 555-\d{3}-\d{4}\)$"), ("retail", r", zip \d{5}\)$")):
        domain = load_domain(name)
        people = starters(domain, domain.session_db())
        assert len(people) == 3, name
        assert all(re.search(identifies, p) for p in people), people

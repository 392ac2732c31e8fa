"""The operator console's parsing: what /call and /me lines turn into."""

from __future__ import annotations

import pytest

from ledger_tui.ui.console import ConsoleError, parse_line


def test_plain_text_is_the_customer_speaking():
    assert parse_line("  renew my loan please ").kind == "customer"
    assert parse_line("renew my loan please").text == "renew my loan please"


def test_call_values_are_json_when_they_parse_else_strings():
    cmd = parse_line('/call cancel_reservation reservation_id=ZFA04Y count=2 ok=true note="two words" ids=["a", "b"]')
    assert cmd.kind == "call" and cmd.name == "cancel_reservation"
    assert cmd.arguments == {"reservation_id": "ZFA04Y", "count": 2, "ok": True, "note": "two words", "ids": ["a", "b"]}


def test_quoted_number_stays_a_string():
    assert parse_line('/call get_order order_id="123"').arguments == {"order_id": "123"}


def test_say_is_the_operator_speaking_as_the_agent():
    cmd = parse_line("/say  Renew loan L1 (Dune)? ")
    assert (cmd.kind, cmd.text) == ("agent", "Renew loan L1 (Dune)?")


def test_me_is_a_customer_action():
    cmd = parse_line("/me toggle_airplane_mode")
    assert (cmd.kind, cmd.name, cmd.arguments) == ("me", "toggle_airplane_mode", {})


@pytest.mark.parametrize(
    "line, fragment",
    [("/say", "needs the words"), ("/call", "needs a tool name"), ("/call x y", "is not key=value"), ("/frobnicate", "Unknown command"), ('/call x a={"b"', "not valid JSON"),
     ("/call get_user_details user_id=", 'user_id= has no value; write user_id=VALUE'), ("/call x a=1 b= c=2", "b= has no value")],
)
def test_bad_lines_say_how_to_fix_them(line, fragment):
    with pytest.raises(ConsoleError, match=fragment):
        parse_line(line)


def test_an_empty_string_is_still_typed_with_quotes():
    assert parse_line('/call x a=""').arguments == {"a": ""}

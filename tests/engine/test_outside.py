"""`shown`: outside text as it may be displayed (issue 13). Control characters and bidi overrides are
written out, newlines and tabs and everything else stay, markup is escaped only when asked."""

from __future__ import annotations

from ledger_tui.engine.outside import shown


def test_control_characters_and_bidi_overrides_are_written_out():
    assert shown("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert shown("\x1b]0;title\x07") == "\\x1b]0;title\\x07"
    assert shown("\x00\x08\x0b\x0c\x0d\x1f\x7f\x80\x85\x9f") == "\\x00\\x08\\x0b\\x0c\\x0d\\x1f\\x7f\\x80\\x85\\x9f"
    assert shown("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069") == (
        "\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069"
    )


def test_everything_else_is_kept_as_it_is():
    text = "line one\n\tline two: café, τ²-bench, 1 000 €, 北京, \u200e, emoji 🙂, a \\x1b typed out"
    assert shown(text) == text
    assert shown(42) == "42"


def test_markup_is_escaped_only_when_asked():
    assert shown("[@click=app.quit]x[/]") == "[@click=app.quit]x[/]"
    assert shown("[@click=app.quit]x[/]\x1b", markup=True) == "\\[@click=app.quit]x\\[/]\\x1b"
    assert shown("a\\[b", markup=True) == "a\\\\[b"

"""Outside text on every screen is shown, never obeyed (issue 13).

A hostile trajectory, a hostile τ²-bench results file (imported) and hostile task ids (an eval
folder) are opened in replay (at several steps, calls opened), the Why screen (with its what-if),
browse (with its notifications, a run opened, the palette) and the play console. On every screen,
as the terminal would receive it: no control character, DEL or bidi override, no cell that runs an
action or opens a link, and the markup and escapes visible as text. Clicking the text changes
nothing: the app keeps running and no file appears.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.widgets import Input, Select

from ledger_tui.domains import load_domain
from ledger_tui.engine.events import GateDecided
from ledger_tui.eval.runner import run_eval
from ledger_tui.eval.trial import EvalConfig
from ledger_tui.eval.tau2 import import_tau2
from ledger_tui.eval.tau2_data import tau2_domain
from ledger_tui.ui.app import make_app
from ledger_tui.ui.console import Command, parse_line
from ledger_tui.ui.screens.browse import BrowseScreen
from ledger_tui.ui.screens.replay import ReplayScreen
from ledger_tui.ui.screens.why import WhyScreen
from ledger_tui.ui.widgets.tool_call_item import ToolCallItem
from tests.hostile import (
    HOSTILE,
    HOSTILE_ID,
    HOSTILE_ID_SHOWN,
    QUIT,
    VISIBLE,
    files_under,
    obeyed,
    write_hostile_results,
    write_hostile_tau2_data,
    write_hostile_trajectory,
)

SIZE = (220, 60)


def screen_text(app) -> str:
    """The current screen as the terminal receives it (toasts included), after checking that no
    cell of it would be obeyed: no control character, and no cell that runs an action or is a link."""
    lines = []
    for strip in app.screen._compositor.render_strips():
        line = ""
        for segment in strip:
            style = segment.style
            assert not (style is not None and (style.link or "@click" in (style.meta or {}))), (
                f"{segment.text!r} would run {style.meta} or open {style.link}"
            )
            line += segment.text
        lines.append(line)
    text = "\n".join(lines)
    assert not obeyed(text), f"a terminal would obey {obeyed(text)} in:\n{text}"
    return text


async def click_on(pilot, app, literal: str) -> bool:
    """Click on the first cell showing `literal` (False when it is not on screen)."""
    for y, strip in enumerate(app.screen._compositor.render_strips()):
        x = "".join(s.text for s in strip).find(literal)
        if x >= 0:
            await pilot.click(offset=(x + 2, y))
            await pilot.pause()
            return True
    return False


@pytest.fixture
def workdir(tmp_path, monkeypatch) -> Path:
    """The working directory the app runs in: a screenshot action would write here."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return cwd


async def test_replay_and_why_show_a_hostile_trajectory_as_text(tmp_path, workdir):
    path = await write_hostile_trajectory(tmp_path / "hostile.jsonl")
    (workdir / f"{QUIT[:-3]}\x1b]0;x\x07.jsonl").write_text(path.read_text(encoding="utf-8"), encoding="utf-8")  # for the palette
    before = files_under(tmp_path)
    app = make_app(trajectory=path)
    seen = []
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        replay = app.screen
        assert isinstance(replay, ReplayScreen) and replay.domain is not None
        last = len(replay.events) - 1
        decisions = [i for i, e in enumerate(replay.events) if isinstance(e, GateDecided)]
        for step in [0, 1, last // 2, *decisions, last]:
            replay.cursor = step
            await pilot.pause()
            seen.append(screen_text(app))
        for item in replay.conversation.query(ToolCallItem):
            item.collapsed = False
        await pilot.pause()
        seen.append(screen_text(app))
        assert "users (1)" in seen[-1] and f"▶ {QUIT}" in seen[-1], "the hostile ledger path is in the tree, as text"
        assert await click_on(pilot, app, QUIT)

        for step in decisions:
            why = replay.explain(replay.events[step])
            await pilot.pause()
            assert isinstance(app.screen, WhyScreen)
            seen.append(screen_text(app))
            target = why.query_one("#whatif-target", Select)
            target.value = 0  # the first argument: a hostile value, or a hostile key
            await pilot.pause()
            assert "\\x1b" in why.query_one("#whatif-value", Input).value
            target.expanded = True
            await pilot.pause()
            seen.append(screen_text(app))
            target.expanded = False
            why.query_one("#whatif-value", Input).focus()
            await pilot.press("enter")  # re-run the gate with the value as offered (the recorded one)
            await pilot.pause()
            assert why.outcome is not None
            assert why.outcome.call.arguments == replay.events[step].decision.call.arguments
            seen.append(screen_text(app))
            await click_on(pilot, app, QUIT)
            await pilot.press("escape")
            await pilot.pause()

        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"open session")
        await pilot.pause(0.3)
        seen.append(screen_text(app))
        assert "Open session [@click=app.quit]quit\\x1b]0;x\\x07.jsonl" in seen[-1]
        await pilot.press("escape")
        await pilot.pause()
        assert app.is_running and app.screen is replay
    everything = "\n".join(seen)
    for literal in VISIBLE:
        assert literal in everything
    assert "[link=file:///etc/passwd]link[/link]" in everything
    assert files_under(tmp_path) == before, "nothing was written"


async def test_browse_shows_a_hostile_results_file_and_its_warnings_as_text(tmp_path, workdir):
    results = write_hostile_results(tmp_path / "results.json")
    imported = tmp_path / "imported"
    import_tau2(results, imported)
    before = files_under(tmp_path)
    app = make_app(folder=imported)
    seen = []
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        browse = app.screen
        assert isinstance(browse, BrowseScreen)
        await pilot.pause()
        seen.append(screen_text(app))
        assert "2 task id(s) of failed runs are not in the task file used" in seen[-1]
        assert "▌ [@click=app.quit]q[/]\\u202e\\x1b]0;t\\x07" in seen[-1], "the warning's toast quotes the task id as written"
        assert f"{HOSTILE_ID_SHOWN}1" in seen[-1], "so does the run list"
        assert await click_on(pilot, app, "[@click=app.quit]q")
        for key in ("f", "c", "s", "s"):
            await pilot.press(key)
            await pilot.pause()
            seen.append(screen_text(app))
        await pilot.press("x")
        failed = next(r for r in browse.table.rows_shown if r.task_id.startswith(HOSTILE_ID))
        browse.open_run(failed)
        await pilot.pause()
        replay = app.screen
        assert isinstance(replay, ReplayScreen)
        seen.append(screen_text(app))
        assert await click_on(pilot, app, QUIT)
        replay.cursor = next(i for i, e in enumerate(replay.events) if isinstance(e, GateDecided))
        await pilot.pause()
        seen.append(screen_text(app))
        for _ in range(3):  # back from a Why screen, if the click fell on a gate log row, then from the replay
            if app.screen is not browse:
                await pilot.press("escape")
                await pilot.pause()
        assert app.screen is browse
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"runs")
        await pilot.pause(0.3)
        seen.append(screen_text(app))
        await pilot.press("escape")
        await pilot.pause()
        assert app.is_running
    everything = "\n".join(seen)
    for literal in VISIBLE:
        assert literal in everything
    assert files_under(tmp_path) == before, "nothing was written"


async def test_browse_an_eval_folder_whose_task_ids_are_hostile(tmp_path, workdir):
    domain, tasks = tau2_domain("retail", write_hostile_tau2_data(tmp_path / "retail"))
    out = tmp_path / "eval"
    await run_eval(EvalConfig(domain=domain, tasks=tasks, modes=["full"], trials=1, out=out, agent="gold"))
    names = sorted(p.name for p in (out / "trajectories" / "retail" / "full").iterdir())
    assert len(names) == 2 and all(re.fullmatch(r"task-[\w-]+\.[0-9a-f]{12}-trial-0\.jsonl", n, re.ASCII) for n in names), names
    before = files_under(tmp_path)
    app = make_app(folder=out)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        browse = app.screen
        assert isinstance(browse, BrowseScreen) and browse.table.row_count == 2
        text = screen_text(app)
        assert f"{HOSTILE_ID_SHOWN}0" in text
        assert await click_on(pilot, app, "[@click=app.quit]q")  # a click on the highlighted row opens the run
        assert isinstance(app.screen, ReplayScreen)
        screen_text(app)
        assert app.is_running
    assert files_under(tmp_path) == before, "nothing was written"


async def test_the_play_console_shows_hostile_text_as_text(tmp_path, workdir):
    out = tmp_path / "play.jsonl"
    app = make_app(domain=load_domain("airline"), model=None, out=out)
    seen = []
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        play = app.screen
        play.submit(parse_line(f"Hi, I'm mia_li_3668. {HOSTILE}"))  # no model: an error notice, in a toast too
        play.submit(Command("agent", text=f"Hello {HOSTILE}"))
        play.submit(Command("call", name="get_reservation_details", arguments={"reservation_id": HOSTILE}))
        play.submit(Command("call", name="cancel_reservation", arguments={HOSTILE: HOSTILE}))
        play.submit(Command("call", name=HOSTILE, arguments={}))
        await play.wait_idle()
        await pilot.pause()
        for item in play.conversation.query(ToolCallItem):
            item.collapsed = False
        await pilot.pause()
        seen.append(screen_text(app))
        await pilot.click("#console")
        await pilot.press(*"/call x [b]bold[/b]", "enter")  # not key=value: a notification quotes it
        await pilot.pause(0.2)
        seen.append(screen_text(app))
        assert "'[b]bold[/b]' is not key=value" in seen[-1], "the toast quotes the line as typed"
        assert await click_on(pilot, app, QUIT)
        assert app.is_running
    everything = "\n".join(seen)
    for literal in VISIBLE:
        assert literal in everything
    assert files_under(tmp_path) == {"cwd", "play.jsonl"}, "only the session was written"


def test_escaped_markup_reads_back_as_the_text_itself():
    """What `shown(..., markup=True)` gives a notification or a Static is parsed by Textual's markup
    into exactly the shown text, with no style, action or link."""
    import random

    from textual.content import Content

    from ledger_tui.engine.outside import shown

    samples = [HOSTILE, HOSTILE_ID, "a\\[b", "trailing\\", "[b]", "[$accent]", "[ @click=app.quit]x", "[on red]x[/on red]"]
    rng = random.Random(13)
    samples += ["".join(rng.choice("[]\\/@=$ ab:'\"(){}#") for _ in range(rng.randint(0, 16))) for _ in range(2000)]
    for text in samples:
        content = Content.from_markup(shown(text, markup=True))
        assert content.plain == shown(text) and not content.spans, text

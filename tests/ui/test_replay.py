"""Replay: the panes show the state as of the cursor, computed with the engine's fold."""

from __future__ import annotations

import json
from pathlib import Path

from ledger_tui.engine.events import GateDecided, LedgerUpdated, Verdict
from ledger_tui.engine.store.fold import fold
from ledger_tui.ui.app import make_app
from ledger_tui.ui.screens.replay import ReplayScreen
from ledger_tui.ui.screens.why import WhyScreen
from ledger_tui.ui.widgets import ReplayBar
from tests.ui.scenarios import REVISE_MESSAGES, record, revise_turns


async def revise_trajectory(toy, tmp_path):
    path = tmp_path / "revise.jsonl"
    events = await record(toy, revise_turns(), REVISE_MESSAGES, out=path)
    return path, events


async def test_stepping_forward_and_back_shows_the_ledger_as_of_each_step(toy, tmp_path):
    path, events = await revise_trajectory(toy, tmp_path)
    app = make_app(trajectory=path, step=0, domain=toy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        assert screen.ledger.paths == []
        first_read = next(i for i, e in enumerate(events) if isinstance(e, LedgerUpdated))
        for _ in range(first_read):
            await pilot.press("right")
        await pilot.pause()
        assert screen.cursor == first_read
        assert screen.ledger.paths == list(fold(events, first_read).ledger)
        assert screen.query_one(ReplayBar).index == first_read
        # forward to the end, then back: every step matches the fold
        for index in range(first_read + 1, len(events)):
            await pilot.press("right")
            expected = fold(events, index)
            assert screen.ledger.paths == list(expected.ledger), index
            assert len(screen.gate_log.decisions) == len(expected.gate_log)
        await pilot.press("left", "left", "left")
        await pilot.pause()
        assert screen.cursor == len(events) - 4
        assert screen.ledger.paths == list(fold(events, len(events) - 4).ledger)
        # the write on L1 made it stale; the re-read after it is visible once we get there
        stale_at = next(i for i, e in enumerate(events) if isinstance(e, LedgerUpdated) and e.change == "stale")
        screen.jump_to(stale_at)
        await pilot.pause()
        assert screen.ledger.shown("loans.L1").stale


async def test_next_and_previous_gate_decision_keys(toy, tmp_path):
    path, events = await revise_trajectory(toy, tmp_path)
    decisions = [i for i, e in enumerate(events) if isinstance(e, GateDecided)]
    app = make_app(trajectory=path, step=0, domain=toy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await pilot.press("n")
        assert screen.cursor == decisions[0]
        assert [d.decision.verdict for d in screen.gate_log.decisions] == [Verdict.REVISE]
        await pilot.press("n")
        assert screen.cursor == decisions[1]
        assert [d.decision.verdict for d in screen.gate_log.decisions] == [Verdict.REVISE, Verdict.ALLOW]
        await pilot.press("p")
        assert screen.cursor == decisions[0]
        assert screen.gate_log.row_count == 1
        # the conversation shows only what had happened by then
        assert all(c.proposed.seq <= decisions[0] for c in screen.conversation.tool_calls)
        # before the first decision `p` wraps to the last; past the last, `n` wraps to the first
        await pilot.press("p")
        assert screen.cursor == decisions[-1]
        await pilot.press("n")
        assert screen.cursor == decisions[0]


async def test_a_replay_opens_at_the_end_and_n_finds_the_first_decision(toy, tmp_path):
    path, events = await revise_trajectory(toy, tmp_path)
    decisions = [i for i, e in enumerate(events) if isinstance(e, GateDecided)]
    app = make_app(trajectory=path, domain=toy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert screen.cursor == len(events) - 1
        await pilot.press("n")
        assert screen.cursor == decisions[0]


async def test_play_runs_to_the_end_and_stops(toy, tmp_path):
    path, events = await revise_trajectory(toy, tmp_path)
    app = make_app(trajectory=path, step=len(events) - 3, domain=toy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await pilot.press("plus")  # 4/s → 8/s
        await pilot.press("space")
        assert screen.query_one(ReplayBar).playing
        await pilot.pause(0.6)
        assert screen.cursor == len(events) - 1
        assert not screen.query_one(ReplayBar).playing


async def test_space_label_says_pause_while_playing(toy, tmp_path):
    path, events = await revise_trajectory(toy, tmp_path)
    app = make_app(trajectory=path, step=0, domain=toy)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert screen.active_bindings["space"].binding.description == "Play"
        await pilot.press("space")
        await pilot.pause()
        assert screen.query_one(ReplayBar).playing
        assert screen.active_bindings["space"].binding.description == "Pause"
        await pilot.press("space")
        await pilot.pause()
        assert not screen.query_one(ReplayBar).playing
        assert screen.active_bindings["space"].binding.description == "Play"


async def test_a_step_past_the_end_opens_at_the_last_step_and_says_so(toy, tmp_path):
    path, events = await revise_trajectory(toy, tmp_path)
    app = make_app(trajectory=path, step=999, domain=toy)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.screen.cursor == len(events) - 1
        assert any("Step 999 is past the end" in n.message and str(len(events) - 1) in n.message for n in app._notifications)


async def test_truncated_file_opens_with_a_warning_and_every_complete_event(toy, tmp_path):
    path, events = await revise_trajectory(toy, tmp_path)
    text = path.read_text()
    path.write_text(text + '{"seq": 99, "type": "tool_res')
    app = make_app(trajectory=path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert len(screen.timeline) == len(events)
        assert screen.cursor == len(events) - 1
        assert any("incomplete or corrupt" in n.message for n in app._notifications)


async def test_enter_on_a_revise_row_explains_it_from_the_replayed_state(toy, tmp_path):
    path, events = await revise_trajectory(toy, tmp_path)
    app = make_app(trajectory=path, domain=toy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        screen.gate_log.move_cursor(row=0)
        screen.gate_log.focus()
        await pilot.press("enter")
        await pilot.pause()
        why = app.screen
        assert isinstance(why, WhyScreen)
        assert why.decided.decision.verdict == Verdict.REVISE
        assert "get_loan_details(loan_id=\"L1\")" in str(why.query_one("#why-summary").render())


async def test_palette_intents_filter_jump_and_export(toy, tmp_path, monkeypatch):
    path, events = await revise_trajectory(toy, tmp_path)
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")  # not where the session file is
    app = make_app(trajectory=path, domain=toy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        screen.filter_gate_log(Verdict.ALLOW)
        assert screen.gate_log.row_count == 1
        screen.filter_gate_log(None)
        assert screen.gate_log.row_count == 2
        screen.jump_to(5)
        await pilot.pause()
        assert screen.query_one(ReplayBar).index == 5
        written = screen.export_ledger()
        assert json.loads(written.read_text()) == fold(events, 5).ledger.to_json()
        assert written == Path("exports") / "revise.ledger-step5.json"
        assert (tmp_path / "cwd" / "exports" / "revise.ledger-step5.json").is_file()
        assert not list(tmp_path.glob("*.json"))  # nothing next to the session file
        await pilot.pause()
        assert any(str(written) in n.message for n in app._notifications)


async def test_palette_finds_jump_to_step(toy, tmp_path):
    path, events = await revise_trajectory(toy, tmp_path)
    app = make_app(trajectory=path, step=0, domain=toy)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"step 7")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen.cursor == 7


async def test_the_highlighted_decision_is_spelled_out_under_the_gate_log(toy, tmp_path):
    from ledger_tui.ui.widgets import GateReason

    path, events = await revise_trajectory(toy, tmp_path)
    decisions = [e for e in events if isinstance(e, GateDecided)]
    app = make_app(trajectory=path, step=0, domain=toy)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        strip = screen.query_one(GateReason)
        assert not strip.display, "no decision yet, nothing to spell out"
        await pilot.press("n")
        await pilot.pause()
        first = decisions[0].decision
        shown = str(strip.render())
        assert strip.display and shown.startswith(f"REVISE · inferred from text step {decisions[0].seq}: explicit_confirmation: ")
        assert shown.endswith("· needs a read: record_owned_by_customer, renewal_limit"), "in a finding, the checks that only need a read come last"
        assert first.failed()[0].name in shown and strip.has_class("-revise")
        await pilot.press("n")
        await pilot.pause()
        assert str(strip.render()).startswith(f"ALLOW step {decisions[1].seq}: all checks passed")
        screen.filter_gate_log(Verdict.BLOCK)
        await pilot.pause()
        assert not strip.display, "a filter that leaves no row leaves nothing to spell out"


async def test_the_replay_hands_the_garbage_collector_back_when_it_closes(toy, tmp_path):
    import gc

    from ledger_tui.ui.screens.replay import YOUNG_GENERATION

    path, _ = await revise_trajectory(toy, tmp_path)
    thresholds = gc.get_threshold()
    app = make_app(trajectory=path, domain=toy)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert gc.get_freeze_count() > 0, "the loaded trajectory is kept out of full collections"
        assert gc.get_threshold()[0] >= YOUNG_GENERATION, "short-lived drawing garbage dies young"
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == thresholds


async def test_exporting_twice_keeps_both_files(toy, tmp_path, monkeypatch):
    path, events = await revise_trajectory(toy, tmp_path)
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    app = make_app(trajectory=path, domain=toy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        screen.jump_to(5)
        await pilot.pause()
        first, second = screen.export_ledger(), screen.export_ledger()
        assert first == Path("exports") / "revise.ledger-step5.json"
        assert second == Path("exports") / "revise.ledger-step5-2.json"
        assert json.loads(first.read_text()) == json.loads(second.read_text()) == fold(events, 5).ledger.to_json()


async def test_an_irma_replay_shows_each_helpers_answer_and_what_the_agent_read():
    from ledger_tui.engine.events import ReformulatedInput
    from ledger_tui.engine.store.trajectories import read_trajectory
    from ledger_tui.ui.widgets.status_bar import StatusBar

    path = Path(__file__).resolve().parents[2] / "sessions" / "airline-irma-cancel-goes-through.jsonl"
    events = read_trajectory(path).events
    first_input = next(e.seq for e in events if isinstance(e, ReformulatedInput))
    app = make_app(trajectory=path, step=first_input)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        lines = [str(w.render()) for w in screen.conversation.children if "helper" in w.classes]
        assert len(lines) == 3, lines
        assert lines[0].startswith("IRMA constraints helper  - Identify the customer") and "24 hours" in lines[0]
        assert lines[1].startswith("IRMA tools helper  - get_user_details") and "tokens)" in lines[1]
        assert lines[2].startswith("agent reads  the customer's latest message with the helpers' checklist")
        assert "helpers 2 (" in "".join(p.text for p in screen.query_one(StatusBar).parts)
        screen.jump_to(len(events) - 1)
        await pilot.pause()
        lines = [str(w.render()) for w in screen.conversation.children if "helper" in w.classes]
        assert any("1 earlier customer message" in line for line in lines)


async def test_the_gate_log_of_a_run_without_the_gate_says_there_was_none():
    path = Path(__file__).resolve().parents[2] / "sessions" / "retail-irma-refund-to-original-card.jsonl"
    app = make_app(trajectory=path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.screen.gate_log.border_subtitle == "no gate in mode irma: writes run unchecked"
    gated = make_app(trajectory=Path(__file__).resolve().parents[2] / "sessions" / "retail-refund-revise-then-allow.jsonl")
    async with gated.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert "no gate" not in (gated.screen.gate_log.border_subtitle or "")

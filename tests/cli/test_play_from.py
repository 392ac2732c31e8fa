"""`play --from FILE --step N` forks a recorded run: what cannot be forked is one sentence, exit 2,
and leaves no file behind; the workbench opens on the kept events with the card waiting again."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from textual.widgets import Static

from ledger_tui.engine.events import ConfirmationRequested
from ledger_tui.engine.fork import fork
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.engine.model.models import NoModel
from ledger_tui.ui.app import make_app
from ledger_tui.ui.screens.play import PlayScreen
from tests.cli.test_cli import cli, one_sentence_error

ROOT = Path(__file__).resolve().parents[2]
ON_A_CARD = ROOT / "sessions" / "airline-cancel-on-a-card.jsonl"


@pytest.mark.parametrize(
    "args, sentence",
    [
        (("--step", "3", "--domain", "airline"), "--step picks the turn of a recorded run to take over; pass the run with --from FILE."),
        (("--from", "airline-cancel-on-a-card", "--domain", "retail"), "airline-cancel-on-a-card.jsonl is a airline run, so a fork of it is too; leave --domain out."),
        (("--from", "airline-cancel-on-a-card", "--mode", "baseline"), "airline-cancel-on-a-card.jsonl is a full run, so a fork of it is too; leave --mode out."),
        (("--from", "airline-cancel-on-a-card", "--consent", "text"), "A fork observes consent as airline-cancel-on-a-card.jsonl did; leave --consent out."),
        ((), "Play needs a domain; pass --domain (see `ledger-tui domains`), or --from a recorded run."),
    ],
)
def test_what_cannot_be_forked_is_one_sentence(args, sentence, tmp_path):
    out = tmp_path / "fork.jsonl"
    assert one_sentence_error(cli("play", *args, "--no-model", "--out", str(out))) == f"error: {sentence}"
    assert not out.exists()


def test_a_run_todays_tools_answer_otherwise_is_refused_and_leaves_no_file(tmp_path):
    lines = ON_A_CARD.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"tool_result"' in line and "economy" in line)
    row = json.loads(lines[at])
    row["content"] = row["content"].replace("economy", "business")
    lines[at] = json.dumps(row)
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(lines) + "\n")
    out = tmp_path / "fork.jsonl"
    line = one_sentence_error(cli("play", "--from", str(edited), "--step", "30", "--no-model", "--out", str(out)))
    assert line.startswith("error: Cannot fork edited.jsonl at step 30: run again today, the call of recorded step ")
    assert not out.exists()


async def test_the_workbench_opens_on_the_fork_with_the_card_waiting_again(tmp_path):
    events = read_trajectory(ON_A_CARD).events
    forked = await fork(importlib.import_module("ledger_tui.domains.airline").build(), events, 30, model=NoModel(), parent=ON_A_CARD, out=tmp_path / "f.jsonl", timestamps=False)
    app = make_app(session=forked.session)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await pilot.pause()
        await screen.wait_idle()
        assert len(screen.events) == 30 and isinstance(screen.events[-1], ConfirmationRequested)
        assert "confirmation card awaits" in str(screen.query_one("#console-hint", Static).render())
        await pilot.press("y")
        await pilot.pause()
        await screen.wait_idle()
    written = read_trajectory(tmp_path / "f.jsonl").events
    assert written[0].forked_from.step == 30 and written[30].type == "user_message" and written[30].text == "yes"
    assert any(e.type == "gate_decision" and e.decision.verdict.value == "ALLOW" for e in written[30:])

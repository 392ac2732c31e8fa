"""Browse: the runs of an eval or import-tau2 folder, filtered and sorted, each replayable in place."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.events import GateDecided, Verdict
from ledger_tui.ui.app import make_app
from ledger_tui.ui.run_index import RunFilter, cycle, load_runs
from ledger_tui.ui.screens.browse import BrowseScreen
from ledger_tui.ui.screens.replay import ReplayScreen
from ledger_tui.ui.widgets import BrowseBar, RunDetail
from tests.ui.run_folders import eval_folder, imported_folder

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    return imported_folder(tmp_path_factory.mktemp("tau2"))


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory) -> Path:
    return eval_folder(tmp_path_factory.mktemp("eval"))


def text_of(widget) -> str:
    return str(widget.render())


def tasks_shown(screen: BrowseScreen) -> list[tuple[str, str]]:
    return [(r.task_id, r.mode) for r in screen.table.rows_shown]


async def test_filter_failed_open_one_step_to_its_first_gate_decision_and_come_back(imported):
    app = make_app(folder=imported)
    async with app.run_test(size=(100, 30)) as pilot:
        browse = app.screen
        assert isinstance(browse, BrowseScreen)
        assert browse.table.row_count == 3
        await pilot.press("f")
        assert [t for t, _ in tasks_shown(browse)] == ["cancel_no_longer_needed_gift_card", "refuse_refund_other_card"]
        assert "showing 2 [failed only]" in text_of(browse.query_one(BrowseBar))
        await pilot.press("down")
        chosen = browse.table.selected()
        assert chosen is not None and chosen.task_id == "refuse_refund_other_card"
        assert "REVISE 1" in text_of(browse.query_one(RunDetail))

        await pilot.press("enter")
        await pilot.pause()
        replay = app.screen
        assert isinstance(replay, ReplayScreen)
        assert replay.source_path == chosen.trajectory
        assert replay.domain is not None and replay.domain.name == "retail"
        await pilot.press("home", "n")
        first = next(i for i, e in enumerate(replay.events) if isinstance(e, GateDecided))
        assert replay.cursor == first
        assert [d.decision.verdict for d in replay.gate_log.decisions] == [Verdict.REVISE]
        assert "return_delivered_order_items" in replay.gate_log.decisions[0].decision.call.signature()

        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is browse
        assert browse.run_filter.failed_only
        assert browse.table.row_count == 2
        assert browse.table.selected() == chosen
        assert browse.table.has_focus


async def test_eval_folder_lists_classes_and_verdicts_and_filters_by_class_mode_and_sort(evaluated):
    app = make_app(folder=evaluated)
    async with app.run_test(size=(120, 30)) as pilot:
        browse = app.screen
        rows = {(r.task_id[:10], r.mode): r for r in browse.table.rows_shown}
        assert set(rows) == {("airline_01", "full"), ("airline_15", "full"), ("airline_15", "baseline")}
        assert rows[("airline_15", "full")].passed and rows[("airline_15", "full")].block == 1
        unguarded = rows[("airline_15", "baseline")]
        assert not unguarded.passed and unguarded.primary == "extra or unauthorized write"
        assert (unguarded.allow, unguarded.revise, unguarded.block) == (0, 0, 0)
        # the wide layout has room for the termination column
        assert "end" in [str(c.label) for c in browse.table.columns.values()]

        await pilot.press("c")  # the only failure class present
        assert tasks_shown(browse) == [("airline_15_refuse_cancel_uninsured_economy", "baseline")]
        assert "class: extra or unauthorized write" in text_of(browse.query_one(BrowseBar))
        await pilot.press("c")  # back to all
        await pilot.press("m")  # modes cycle in ablation order: baseline first
        assert {m for _, m in tasks_shown(browse)} == {"baseline"}
        await pilot.press("m", "x")
        assert browse.table.row_count == 3 and not browse.run_filter.active

        await pilot.press("s")  # by reward: the failed run first
        assert browse.run_filter.sort == "reward"
        assert tasks_shown(browse)[0] == ("airline_15_refuse_cancel_uninsured_economy", "baseline")
        await pilot.press("s", "s")  # by gate verdicts: the BLOCK first
        assert browse.run_filter.sort == "gate"
        assert tasks_shown(browse)[0] == ("airline_15_refuse_cancel_uninsured_economy", "full")

        await pilot.press("enter")
        await pilot.pause()
        replay = app.screen
        assert isinstance(replay, ReplayScreen)
        assert replay.events[0].mode == "full" and replay.domain is not None and replay.domain.name == "airline"


async def test_the_palette_filters_by_failure_class(imported):
    app = make_app(folder=imported)
    async with app.run_test(size=(100, 30)) as pilot:
        browse = app.screen
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"class extra")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is browse
        assert browse.run_filter.cls == "extra or unauthorized write"
        assert tasks_shown(browse) == [("cancel_no_longer_needed_gift_card", "imported")]


async def test_a_damaged_trajectory_is_a_notification_and_the_list_stays(imported, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(imported, folder)
    index = load_runs(folder)
    broken = next(r for r in index.rows if r.task_id == "cancel_ordered_by_mistake")
    lines = broken.trajectory.read_text().splitlines()
    lines[3] = '{"seq": 3, "type": "user_message", "tex'  # damaged in the middle: unreadable
    app = make_app(folder=folder)
    async with app.run_test(size=(100, 30)) as pilot:
        browse = app.screen
        broken.trajectory.write_text("\n".join(lines) + "\n")
        browse.table.move_cursor(row=[r.key for r in browse.table.rows_shown].index(broken.key))
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is browse
        assert any("damaged" in str(n.message) for n in app._notifications)
        # cut short at the end (an interrupted write): it opens, with a warning
        broken.trajectory.write_text("\n".join(lines[:3] + lines[4:-1]) + "\n" + lines[-1][:20] + "\n")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ReplayScreen)
        assert any("incomplete or corrupt" in str(n.message) for n in app._notifications)


def test_filter_is_pure_and_classes_cycle_back_to_all(imported):
    index = load_runs(imported)
    assert index.source == "trajectories" and index.modes == ["imported"] and not index.warnings
    failed = RunFilter(failed_only=True).apply(index.rows)
    assert {r.task_id for r in failed} == {"cancel_no_longer_needed_gift_card", "refuse_refund_other_card"}
    assert all(r.gate_flagged for r in failed)  # the gate would have flagged both failures
    assert [r.task_id for r in RunFilter(sort="reward").apply(index.rows)][-1] == "cancel_ordered_by_mistake"
    assert cycle(None, ["a", "b"]) == "a" and cycle("a", ["a", "b"]) == "b" and cycle("b", ["a", "b"]) is None


def test_unusable_folders_are_one_sentence_errors(tmp_path):
    with pytest.raises(LedgerTuiError, match="does not exist; pass the --out folder"):
        load_runs(tmp_path / "missing")
    with pytest.raises(LedgerTuiError, match="holds neither results.jsonl nor trajectories"):
        make_app(folder=tmp_path)
    out = subprocess.run(
        [sys.executable, "-m", "ledger_tui", "browse", str(tmp_path / "missing")],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines() == [f"error: {tmp_path / 'missing'} does not exist; pass the --out folder of `ledger-tui eval` or `ledger-tui import-tau2`."]


def test_run_list_of_an_imported_tau2_file(snap_compare, imported):
    """What an operator sees on a τ²-bench results file: failed runs first, and what the gate says."""
    app = make_app(folder=imported)

    async def run_before(pilot) -> None:
        await pilot.press("f")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 24), run_before=run_before)


def test_every_failure_class_has_a_short_name_that_fits_its_column():
    from ledger_tui.eval.taxonomy import GATE_NEEDS_READ, GATE_VIOLATION, PRECEDENCE
    from ledger_tui.ui.run_index import SHORT_CLASS
    from ledger_tui.ui.widgets.run_table import FAILURE_WIDTH

    assert set(SHORT_CLASS) == set(PRECEDENCE)
    assert all(len(short) <= FAILURE_WIDTH for short in SHORT_CLASS.values())
    assert (SHORT_CLASS[GATE_VIOLATION], SHORT_CLASS[GATE_NEEDS_READ]) == ("gate violation", "gate: read")


async def test_the_run_detail_counts_violations_and_stops_that_need_a_read(toy, tmp_path):
    """A folder of trajectories (no results.jsonl): each run's stops are read from its events, and
    sorting by gate puts the runs with violations first."""
    from ledger_tui.engine.store.trajectories import write_trajectory
    from tests.ui.scenarios import TWO_STOPS_MESSAGES, record, two_stops_turns

    folder = tmp_path / "runs"
    events = await record(toy, two_stops_turns(), TWO_STOPS_MESSAGES)
    events[-1] = events[-1].model_copy(update={"reward": 0.0})
    write_trajectory(folder / "both.jsonl", events)
    first_stop = next(e.seq for e in events if isinstance(e, GateDecided))
    write_trajectory(folder / "read-only.jsonl", [e for e in events if e.seq != first_stop])
    index = load_runs(folder)
    rows = {r.trajectory.name: r for r in index.rows}
    # the first stop is the free-text reader's (no proposal found), the second only needs a read
    assert (rows["both.jsonl"].inferred, rows["both.jsonl"].violations, rows["both.jsonl"].needs_read) == (1, 0, 1)
    assert (rows["read-only.jsonl"].violations, rows["read-only.jsonl"].needs_read) == (0, 1)
    assert [r.trajectory.name for r in RunFilter(sort="gate").apply(index.rows)] == ["both.jsonl", "read-only.jsonl"]
    app = make_app(folder=folder)
    async with app.run_test(size=(100, 30)) as pilot:
        browse = app.screen
        shown = {}
        for i in range(browse.table.row_count):
            browse.table.move_cursor(row=i)
            await pilot.pause()
            shown[browse.table.selected().trajectory.name] = text_of(browse.query_one(RunDetail)).splitlines()[1]
        assert shown["both.jsonl"] == "gate  ALLOW 1 REVISE 2 BLOCK 0  stops: 1 inferred from text, 1 needs a read"
        assert shown["read-only.jsonl"] == "gate  ALLOW 1 REVISE 1 BLOCK 0  stops: 1 needs a read"


import pytest  # noqa: E402


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
def test_run_list_at_both_sizes(snap_compare, imported, size):
    """The run list and its footer whole at 80×24 and at 200×50."""
    assert snap_compare(make_app(folder=imported), terminal_size=size)


async def test_a_replay_opened_from_the_list_shows_the_runs_reward_and_failure_class(evaluated):
    """The list knew the run failed and why; the replay it opens says so on its top line too."""

    def top_line(app) -> str:
        return "".join(segment.text for segment in app.screen._compositor.render_strips()[0])

    app = make_app(folder=evaluated)
    async with app.run_test(size=(80, 24)) as pilot:
        browse = app.screen
        for (task, mode), said in (
            (("airline_15_refuse_cancel_uninsured_economy", "baseline"), "reward 0.0 · extra write"),
            (("airline_15_refuse_cancel_uninsured_economy", "full"), "reward 1.0 · passed"),
        ):
            browse.table.move_cursor(row=tasks_shown(browse).index((task, mode)))
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, ReplayScreen)
            line = top_line(app)
            assert said in line and mode in line, line
            assert "esc Back" in "".join(segment.text for segment in app.screen._compositor.render_strips()[-1])
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is browse


async def test_v_on_two_runs_of_one_task_compares_them_side_by_side(evaluated):
    """Baseline against full of the forbidden cancellation: they part where the gate BLOCKs."""
    from ledger_tui.ui.screens.diff import DiffScreen

    app = make_app(folder=evaluated)
    async with app.run_test(size=(120, 40)) as pilot:
        browse = app.screen
        shown = tasks_shown(browse)
        browse.table.move_cursor(row=shown.index(("airline_15_refuse_cancel_uninsured_economy", "baseline")))
        await pilot.press("v")
        browse.table.move_cursor(row=shown.index(("airline_01_cancel_recent_booking", "full")))
        await pilot.press("v")  # another task: not compared
        await pilot.pause()
        assert app.screen is browse
        assert "The marked run is of task airline_15_refuse_cancel_uninsured_economy" in str(list(app._notifications)[-1].message)
        browse.table.move_cursor(row=shown.index(("airline_15_refuse_cancel_uninsured_economy", "full")))
        await pilot.press("v")
        await pilot.pause()
        diff = app.screen
        assert isinstance(diff, DiffScreen)
        assert diff.found.divergence is not None
        assert {diff.found.a.mode, diff.found.b.mode} == {"baseline", "full"}
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is browse and browse.marked is None

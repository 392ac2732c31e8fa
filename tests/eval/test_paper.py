"""The paper's comparisons from an evaluation: pass^1, pass^4 and their average per domain, mode
and subset (tasks with a write, the rest), and each mode's token overhead against baseline."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ledger_tui.domains import load_domain
from ledger_tui.cli import app
from ledger_tui.engine.agents.tasks import load_tasks
from ledger_tui.eval import paper
from ledger_tui.eval.results import TrialResult


def run(task: str, trial: int, mode: str, reward: float, tokens: tuple[int, int] = (100, 10), infra: bool = False) -> TrialResult:
    return TrialResult(
        domain="retail", task_id=task, trial=trial, mode=mode, agent="llm", reward=reward,
        termination="infrastructure_error" if infra else "agent_stop", trajectory="",
        prompt_tokens=tokens[0], completion_tokens=tokens[1],
    )


def test_pass1_pass4_and_their_average_per_subset_and_a_dash_below_four_trials():
    runs = [run("w1", n, "full", 1.0) for n in range(4)] + [run("r1", n, "full", float(n != 0)) for n in range(4)]
    runs += [run("w1", n, "baseline", float(n < 2)) for n in range(3)]  # three trials only
    rows = {(r.mode, r.subset): r for r in paper.rows(runs, {"retail": {"w1"}})}
    full = rows[("full", "all")]
    assert (full.tasks, full.pass_1, full.pass_4) == (2, (1.0 + 0.75) / 2, 0.5)
    assert full.average == (full.pass_1 + full.pass_4) / 2
    assert rows[("full", "write")].pass_4 == 1.0 and rows[("full", "no write")].pass_4 == 0.0
    base = rows[("baseline", "write")]
    assert base.pass_1 == 2 / 3 and base.pass_4 is None and base.average is None
    assert ("baseline", "no write") not in rows  # no such task ran in baseline
    lines = paper.table(list(rows.values()), [])
    assert any(line.startswith("retail      baseline  with a write (1)") and line.rstrip().endswith("—        —") for line in lines)
    assert max(len(line) for line in lines) <= 80


def test_overhead_is_over_the_runs_finished_in_both_modes():
    runs = [
        run("t1", 0, "baseline", 1.0, (1000, 100)),
        run("t1", 0, "full", 1.0, (1200, 120)),
        run("t2", 0, "baseline", 1.0, (500, 50)),
        run("t2", 0, "full", 0.0, (9999, 999), infra=True),  # not finished: left out on both sides
        run("t3", 0, "full", 1.0, (7000, 700)),  # no baseline run: left out
    ]
    [full] = paper.overheads(runs)
    assert (full.pairs, full.tokens, full.baseline_tokens) == (1, 1320, 1100)
    assert abs(full.ratio - 1.2) < 1e-9
    assert "  full       +20.0%  (1,320 against 1,100 tokens, 1 runs in both)" in paper.table(paper.rows(runs, {}), [full], compact=False)


def test_write_tasks_are_those_whose_gold_actions_write():
    domain = load_domain("telecom")
    tasks = load_tasks(domain.tasks_path)
    writes = paper.write_task_ids(domain, tasks)
    assert writes and writes < {t.id for t in tasks}
    for t in tasks:
        kinds = {domain.kind(a.name, a.requestor) for a in t.gold_actions}
        assert (t.id in writes) == ("write" in kinds)


def test_eval_prints_the_papers_table_and_keeps_it_in_summary_json(tmp_path: Path):
    out = tmp_path / "ev"
    result = CliRunner().invoke(app, ["eval", "--domain", "retail", "--agent", "gold", "--mode", "baseline", "--mode", "full", "--trials", "4", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "the paper's metrics: pass^1, pass^4 and their average" in result.output
    assert "— : pass^4" not in result.output  # four trials: every cell has a value
    summary = json.loads((out / "summary.json").read_text())
    full = next(s for s in summary if s["mode"] == "full")
    assert {r["subset"] for r in full["paper"]} == {"all", "write", "no write"}
    assert all(r["pass_4"] is not None for r in full["paper"])
    assert full["token_overhead"]["pairs"] == 24 * 4

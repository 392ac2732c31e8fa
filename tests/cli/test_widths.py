"""The CLI's tables fit 80 columns (an operator's terminal, a CI log), and `--wide` gives them all."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from ledger_tui.cli import app

MODES = ["--mode", "baseline", "--mode", "ledger", "--mode", "gate", "--mode", "full"]
TASKS = "cancel_and_return,refuse_address_item_modified,refuse_cancel_other_customers_order"


def run(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def widest(text: str) -> int:
    """The widest line, file paths and the task id ending a finished run's line aside (both are
    printed whole)."""
    lines = [line.rsplit(" · ", 1)[0] if re.match(r"eval \d+/\d+ (passed|failed) · ", line) else line for line in text.splitlines()]
    return max(len(line) for line in lines if "/tmp" not in line and "pytest" not in line)


def test_eval_and_report_fit_80_columns_with_four_modes_and_nine_trials(tmp_path: Path):
    out = tmp_path / "ev"
    printed = run("eval", "--domain", "retail", "--agent", "gold", *MODES, "--trials", "9", "--tasks", TASKS, "--out", str(out))
    assert widest(printed) <= 80
    assert "pass^1  pass^2  pass^4  pass^8  pass^9" in printed
    assert "(pass^k for k = 3, 5, 6, 7: --wide, or summary.json)" in printed
    # overlapping points in the plot are explained, not just starred
    assert "* = modes on the same point: b+l, g+F" in printed

    report = run("report", str(out), "--force")
    assert widest(report) <= 80
    assert "retail: class" in report and "refuse_address_item_modified" in report
    assert "    against baseline: fixed by gate, fixed by full" in report

    wide = run("report", str(out), "--force", "--wide")
    assert widest(wide) > 80
    assert "retail/baseline" in wide and "  change against baseline" in wide


def test_eval_wide_shows_every_k(tmp_path: Path):
    printed = run("eval", "--domain", "retail", "--agent", "gold", *MODES, "--trials", "9", "--tasks", TASKS, "--out", str(tmp_path / "ev"), "--wide")
    assert all(f"pass^{k}" in printed for k in range(1, 10))
    assert "--wide, or summary.json" not in printed


def test_a_hundred_trials_still_fit_80_columns(tmp_path: Path):
    printed = run("eval", "--domain", "airline", "--agent", "gold", "--trials", "100", "--tasks", "airline_01_cancel_recent_booking",
                  "--out", str(tmp_path / "ev"))
    assert widest(printed) <= 80  # the plot too: the k it shows are picked as the table's are
    assert "pass^8 pass^100" in printed  # a label as wide as its column keeps a space before it
    assert "(pass^k for k = 3, 5, 6, 7, 9–99: --wide, or summary.json)" in printed
    assert "  1    2    4    8    16   32   64   100  k" in printed

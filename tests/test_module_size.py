"""No module of the code passes 600 lines: past that a file mixes concerns a reader has to tell
apart (issue 31). `ledger_tui/` and `domains/` are read; tests, benchmarks and data are not code a
user's change lands in the same way."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 600


def test_no_module_passes_600_lines():
    long = {
        str(path.relative_to(ROOT)): n
        for folder in ("ledger_tui", "domains")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > LIMIT
    }
    assert not long, f"split these by concern (lines): {long}"

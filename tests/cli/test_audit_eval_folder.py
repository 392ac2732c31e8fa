"""`audit` on an `eval` output folder (issue 29): results.jsonl is the folder's index, not a
trajectory (it was read as a damaged one), the rewards come from it (every run showed "no
reward"), and the table fits 80 columns (it was 119)."""

from __future__ import annotations

from tests.cli.test_cli import cli


def test_audit_of_an_eval_folder_counts_its_passes_without_a_warning_in_80_columns(tmp_path):
    out = tmp_path / "ev"
    assert cli("eval", "--domain", "telehealth", "--agent", "gold", "--out", str(out)).returncode == 0
    audit = cli("audit", str(out))
    assert audit.returncode == 0 and audit.stderr == "", audit.stderr
    overall = next(line for line in audit.stdout.splitlines() if line.startswith("overall")).split()
    assert overall[1] == overall[2] != "0"  # every gold run passes, and is counted as passing
    assert "no reward" not in audit.stdout
    assert max(len(line) for line in audit.stdout.splitlines()) <= 80

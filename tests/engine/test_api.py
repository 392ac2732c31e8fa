"""The gate as a library: the README's example runs as written and prints what its comments say;
the public surface is what `__all__` names; bad use is one sentence naming the fix; what it
records is a trajectory the CLI reads."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

import ledger_tui
from ledger_tui import LedgerTuiError, PolicyGate
from tests.cli.test_cli import cli

ROOT = Path(__file__).resolve().parents[2]


def readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## The gate as a library", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    return code


def test_the_readme_example_runs_as_written_and_prints_what_its_comments_say(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(readme_example(), "README.md", "exec"), {})
    lines = out.getvalue().splitlines()
    assert lines[0] == "REVISE · asks the customer"
    assert lines[1] == "Why do you want to cancel reservation 633IZT?"
    assert lines[2] == "- Cancel reservation 633IZT."
    assert lines[3] == "ALLOW"
    assert lines[4] == "BLOCK · violation · cancel_eligible"
    assert lines[5] == "POLICY GATE: BLOCK. cancel_reservation is not al"
    assert "reservations.VY0QX8 observed 8" in lines[6:] and "flights.HAT255.2024-05-23 observed 11" in lines[6:]
    why = cli("why", str(tmp_path / "cancel.jsonl"))
    assert why.returncode == 0, why.stderr
    assert why.stdout.rstrip().endswith("2 stopped writes: 2 asks the customer")


def test_the_public_surface_is_what_all_names():
    assert set(ledger_tui.__all__) == {"PolicyGate", "Decision", "Check", "Evidence", "Observation", "Reply", "LedgerTuiError", "__version__"}
    for name in ledger_tui.__all__:
        assert getattr(ledger_tui, name) is not None
    assert (Path(ledger_tui.__file__).parent / "py.typed").exists()
    with pytest.raises(AttributeError):
        ledger_tui.Session  # noqa: B018  (internal: not part of the surface)


def test_bad_use_is_one_sentence_naming_the_fix():
    gate = PolicyGate("airline")
    with pytest.raises(LedgerTuiError, match=r"^cancel_reservation is a write, not a read, of the airline domain; observe\(\) takes reads"):
        gate.observe("cancel_reservation", {"reservation_id": "X"}, {})
    with pytest.raises(LedgerTuiError, match=r"^get_user_details is a read: run it and pass its result to observe\(\)"):
        gate.check("get_user_details", {"user_id": "x"})
    with pytest.raises(LedgerTuiError, match=r"^frobnicate is not a tool of the airline domain"):
        gate.observe("frobnicate", {}, {})
    with pytest.raises(LedgerTuiError, match="Unknown domain"):
        PolicyGate("bakery")
    with pytest.raises(LedgerTuiError, match="Unknown consent"):
        PolicyGate("airline", consent="maybe")
    # fails closed: an unknown write and arguments that do not fit are never ALLOW
    assert gate.check("frobnicate", {}).verdict != "ALLOW"
    assert gate.check("cancel_reservation", {"reservation_id": 5, "extra": True}).verdict != "ALLOW"


def test_a_record_of_another_customer_is_withheld_from_the_model():
    from ledger_tui.domains import load_domain

    db = load_domain("airline").load_db()
    gate = PolicyGate("airline")
    gate.customer_says("Hi, I'm grace_scott_6483.")
    assert gate.observe("get_user_details", {"user_id": "grace_scott_6483"}, db.users["grace_scott_6483"].model_dump(mode="json")).withheld is False
    assert gate.identified == "grace_scott_6483"
    other = gate.observe("get_reservation_details", {"reservation_id": "VY0QX8"}, db.reservations["VY0QX8"].model_dump(mode="json"))
    assert other.withheld and other.decision.verdict == "WITHHELD" and other.decision.category == "disclosure"
    assert other.model_text.startswith("POLICY GATE: WITHHELD.") and "rosa" not in other.model_text
    assert "VY0QX8" not in gate.ledger_block()

"""τ²-bench interop: import a results file, audit it, explain and replay imported runs."""

from ledger_tui.engine.events import GateDecided, LedgerUpdated, ToolResult
from ledger_tui.engine.store.fold import fold
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.eval.audit import audit, audit_lines
from ledger_tui.eval.tau2 import import_results
from tests.eval.tau2_fixture import write_results
from tests.in_process import ledger_tui


def cli(*args):
    return ledger_tui(*args)


def test_import_rebuilds_the_ledger_and_judges_every_write(tmp_path):
    results = write_results(tmp_path / "results.json")
    files = {p.name.split("-trial")[0]: p for p in import_results(results, tmp_path / "imported")}
    assert set(files) == {"task-cancel_ordered_by_mistake", "task-refuse_refund_other_card", "task-cancel_no_longer_needed_gift_card"}

    good = read_trajectory(files["task-cancel_ordered_by_mistake"]).events
    assert [e.decision.verdict.value for e in good if isinstance(e, GateDecided)] == ["ALLOW"]
    state = fold(good)
    assert state.context().user_id == "sven_garcia_" + state.context().user_id.rsplit("_", 1)[1]
    assert "orders.#W4419902" in state.ledger
    assert state.ledger["orders.#W4419902"].stale, "the recorded cancellation makes the order stale"
    assert good[-1].reward == 1.0 and good[-1].termination == "user_stop"

    wrong = read_trajectory(files["task-refuse_refund_other_card"]).events
    decision = next(e.decision for e in wrong if isinstance(e, GateDecided))
    assert decision.verdict.value == "REVISE"
    assert "refund_to_original_or_gift_card" in {p.name for p in decision.failed()}
    # the recorded tool message is kept verbatim (here the benchmark's tool refused too)
    result = [e for e in wrong if isinstance(e, ToolResult) and e.name == "return_delivered_order_items"][0]
    assert result.error and result.content == "Error: Payment method should be the original payment method"

    # a write the benchmark's tool accepted, which the gate would have stopped
    unchecked = read_trajectory(files["task-cancel_no_longer_needed_gift_card"]).events
    ran = [e for e in unchecked if isinstance(e, ToolResult) and e.name == "cancel_pending_order"][0]
    assert ran.executed and not ran.error
    failed = next(e.decision for e in unchecked if isinstance(e, GateDecided) and e.decision.category() != "disclosure").failed()
    assert {"customer_identified", "explicit_confirmation"} <= {p.name for p in failed}
    # the stated reason belongs to the order it was said of, with the customer's words
    said = [e for e in unchecked if isinstance(e, LedgerUpdated) and e.path.startswith("said.cancel_reason")]
    assert [(e.path, e.after, e.quote) for e in said] == [
        ("said.cancel_reason.#W4909150", "no longer needed", "Cancel order #W4909150 please, I no longer need it.")
    ]


def test_audit_sorts_writes_into_allowed_violation_needs_a_read_crossed_with_rewards(tmp_path):
    import_results(write_results(tmp_path / "results.json"), tmp_path / "imported")
    rows, warnings = audit(tmp_path / "imported")
    assert not warnings
    by_task = {r.task_id: r for r in rows}
    assert by_task["cancel_ordered_by_mistake"].writes == {"allowed": 1, "violation": 0, "inferred": 0, "needs_read": 0}
    assert by_task["cancel_ordered_by_mistake"].passed == 1
    lines = audit_lines(rows)
    assert lines[0].split() == ["task", "runs", "pass", "allow", "viol", "text", "read", "discl", "said"]
    text = "\n".join(lines)
    assert "reward 1 / allowed" in text and "reward 0 / violation" in text
    assert "failed runs in which the gate would have found a violation: 2 of 2" in text
    assert "failed runs in which it would only have asked for a read: 0 of 2" in text


def test_cli_import_audit_and_why_on_imported_runs(tmp_path):
    results = write_results(tmp_path / "results.json")
    out = cli("import-tau2", str(results), "--out", str(tmp_path / "imp"))
    assert out.returncode == 0, out.stderr
    assert "imported 3 simulations" in out.stdout
    audit_out = cli("audit", str(tmp_path / "imp"))
    assert audit_out.returncode == 0 and "overall" in audit_out.stdout
    wrong = next((tmp_path / "imp").glob("task-refuse_refund_other_card*.jsonl"))
    why = cli("why", str(wrong))
    assert why.returncode == 0 and "FAIL→REVISE] refund_to_original_or_gift_card" in why.stdout


def test_import_rejects_files_that_are_not_results_in_one_sentence(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')
    out = cli("import-tau2", str(bad), "--out", str(tmp_path / "o"))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().count("\n") == 0 and "results.json" in out.stderr

"""`import-tau2` reads what τ²-bench writes: both layouts, solo mode, simulations without a task
id, and calls attributed by the role of the message that carries them."""

from __future__ import annotations

import json

from ledger_tui.domains import load_domain
from ledger_tui.engine.events import GateDecided, ToolCallProposed, ToolResult
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.eval.audit import audit
from ledger_tui.eval.tau2 import import_tau2
from tests.eval.tau2_fixture import write_results
from tests.eval.tau2_samples import ROOT, as_folder, as_solo, sample, write
from tests.in_process import ledger_tui

PHONE_TOOLS = {t.name for t in load_domain("telecom").user_tools}


def cli(*args):
    return ledger_tui(*args, cwd=ROOT)


def proposed(path):
    return [e for e in read_trajectory(path).events if isinstance(e, ToolCallProposed)]


def test_solo_runs_put_the_agents_phone_actions_on_the_phone_and_out_of_the_gate(tmp_path):
    solo = write(as_solo(sample("telecom")), tmp_path / "solo.json")
    out = cli("import-tau2", str(solo), "--out", str(tmp_path / "imp"))
    assert out.returncode == 0, out.stderr
    assert "warning: solo mode: the agent held the phone's tools" in out.stderr
    files = sorted((tmp_path / "imp").glob("*.jsonl"))
    assert len(files) == 5
    phone = agent = 0
    for f in files:
        events = read_trajectory(f).events
        gated = {e.decision.call.id for e in events if isinstance(e, GateDecided)}
        for e in (e for e in events if isinstance(e, ToolCallProposed)):
            assert e.kind != "unknown", e.call.name  # nothing is BLOCKed as an unknown tool
            if e.call.name in PHONE_TOOLS:
                phone += 1
                assert e.call.requestor == "user" and e.call.id not in gated
            elif e.kind == "write":
                agent += 1
                assert e.call.requestor == "assistant" and e.call.id in gated
        results = [e for e in events if isinstance(e, ToolResult) and e.name in PHONE_TOOLS]
        assert all(r.requestor == "user" for r in results)
    assert phone > 10 and agent > 0


def test_simulations_without_a_task_id_are_named_and_listed_as_unknown_task(tmp_path):
    data = sample("telecom")
    data["simulations"][0]["task_id"] = None
    del data["simulations"][3]["task_id"]
    out = cli("import-tau2", str(write(data, tmp_path / "r.json")), "--out", str(tmp_path / "imp"))
    assert out.returncode == 0
    assert "warning: 2 of 5 simulations have no task_id; they are listed as unknown task." in out.stderr
    unknown = sorted((tmp_path / "imp").glob("task-unknown-*.jsonl"))
    assert len(unknown) == 2 and not list((tmp_path / "imp").glob("task-None*"))
    assert all(read_trajectory(f).started.task_id is None for f in unknown)
    rows, _ = audit(tmp_path / "imp")
    assert {r.task_id: r.runs for r in rows}["(unknown task)"] == 2
    assert "(unknown task)" in cli("audit", str(tmp_path / "imp")).stdout


def test_who_made_a_call_is_the_role_of_its_message_never_a_field_of_the_call(tmp_path):
    retail = json.loads(write_results(tmp_path / "retail.json").read_text())
    for sim in retail["simulations"]:
        for m in sim["messages"]:
            for c in m.get("tool_calls") or []:
                c["requestor"] = "user"  # an agent's write posing as the customer's
    imported = import_tau2(write(retail, tmp_path / "retail.json"), tmp_path / "retail")
    cancels = [e for p in imported.paths for e in proposed(p) if e.call.name == "cancel_pending_order"]
    assert cancels and all(e.call.requestor == "assistant" and e.kind == "write" for e in cancels)
    gated = [e for p in imported.paths for e in read_trajectory(p).events if isinstance(e, GateDecided)]
    assert {d.decision.call.name for d in gated} >= {"cancel_pending_order", "return_delivered_order_items"}

    telecom = sample("telecom")
    for sim in telecom["simulations"]:
        for m in sim["messages"]:
            for c in m.get("tool_calls") or []:
                c["requestor"] = "assistant"  # the customer's phone actions posing as the agent's
    imported = import_tau2(write(telecom, tmp_path / "telecom.json"), tmp_path / "telecom")
    phone = [e for p in imported.paths for e in proposed(p) if e.call.name in PHONE_TOOLS]
    assert phone and all(e.call.requestor == "user" and e.kind != "unknown" for e in phone)


def test_the_folder_layout_imports_from_the_folder_or_its_results_json(tmp_path):
    folder = as_folder(sample("retail"), tmp_path / "run")
    for path, out in ((folder, "a"), (folder / "results.json", "b")):
        imported = import_tau2(path, tmp_path / out)
        assert len(imported.paths) == 3 and not imported.warnings
        assert (tmp_path / out / "tasks.json").exists()
    missing = next((folder / "simulations").glob("*.json"))
    missing.unlink()
    out = cli("import-tau2", str(folder), "--out", str(tmp_path / "c"))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "1 of the 3 simulations indexed in results.json have no file" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1

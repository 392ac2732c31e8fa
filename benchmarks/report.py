"""`ledger-tui report` over 1,000 trajectories (target: seconds, not minutes).

Builds an eval-style output folder in a temporary directory: 125 retail tasks × 4 modes × 2
trials, each run a plausible trajectory (customer turns, reads with ledger updates, writes through
the gate; about 80 events each) written with the store's writer, and `results.jsonl`. About two
thirds of the runs fail, spread over the failure classes (missed write, wrong arguments, extra
write, gate block, revise limit, missing fact, transfer, infrastructure error). Then times the report: in process (read, classify,
tables, JSON), end to end through the CLI, and once more without `results.jsonl` (as for an
import-tau2 folder: every trajectory is read for its reward).

Run: `python benchmarks/report.py`. Prints seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ledger_tui.engine.events import (  # noqa: E402
    AssistantMessage,
    Event,
    GateDecided,
    GateDecision,
    LedgerUpdated,
    PredicateResult,
    Refusal,
    SessionEnded,
    SessionStarted,
    TokenUsage,
    ToolCall,
    ToolCallProposed,
    ToolResult,
    UserMessage,
    Verdict,
)
from ledger_tui.domains import load_domain  # noqa: E402
from ledger_tui.engine.agents.tasks import load_tasks  # noqa: E402
from ledger_tui.engine.store.trajectories import TrajectoryWriter  # noqa: E402
from ledger_tui.eval.recorded import failure_record  # noqa: E402
from ledger_tui.eval.report import report_command  # noqa: E402
from ledger_tui.eval.results import TrialResult  # noqa: E402
from ledger_tui.eval.trial import trajectory_path  # noqa: E402

TASKS = 125
MODES = ("baseline", "ledger", "gate", "full")
TRIALS = 2
OUTCOMES = ("pass", "missed", "pass", "wrong", "extra", "pass", "block", "revise", "fact", "pass", "transfer", "infra")


def order(t: int) -> str:
    return f"#W{1000000 + t}"


def tasks_json() -> list[dict]:
    return [
        {
            "id": f"bench_{t}",
            "evaluation_criteria": {
                "actions": [
                    {"action_id": f"b{t}_0", "name": "get_order_details", "arguments": {"order_id": order(t)}},
                    {"action_id": f"b{t}_1", "name": "cancel_pending_order", "arguments": {"order_id": order(t), "reason": "no longer needed"}},
                ],
                "communicate_info": [f"{t}.50"],
                "reward_basis": ["DB", "COMMUNICATE"],
            },
        }
        for t in range(TASKS)
    ]


class Builder:
    def __init__(self, path: Path, t: int, mode: str) -> None:
        self.writer = TrajectoryWriter(path)
        self.events: list[Event] = []
        self.seq = 0
        self.n = 0
        self.emit(SessionStarted(session_id=f"s{t}", domain="retail", model="bench", mode=mode, policy_digest="p", db_digest="d", clock="2024-05-15", task_id=f"bench_{t}"))

    def emit(self, event: Event) -> None:
        event = event.model_copy(update={"seq": self.seq})
        self.writer.write(event)
        self.events.append(event)
        self.seq += 1

    def turn(self, text: str) -> None:
        self.emit(AssistantMessage(text=text))
        self.emit(TokenUsage(prompt_tokens=2400, completion_tokens=60, ledger_tokens=300, policy_tokens=1500, transcript_tokens=600))

    def call(self, name: str, args: dict, kind: str = "read", verdict: Verdict | None = None, refuse: str | None = None) -> None:
        self.n += 1
        call = ToolCall(id=f"call_{self.n}", name=name, arguments=args)
        self.emit(AssistantMessage(tool_calls=[call]))
        self.emit(ToolCallProposed(call=call, kind=kind))  # type: ignore[arg-type]
        if verdict is not None:
            preds = [PredicateResult(name=f"pred_{i}", clause="c", passed=verdict == Verdict.ALLOW or i > 0, verdict_on_fail=Verdict.REVISE) for i in range(6)]
            self.emit(GateDecided(decision=GateDecision(call=call, verdict=verdict, reason="r", predicates=preds)))
            if verdict != Verdict.ALLOW:
                self.emit(ToolResult(call_id=call.id, name=name, content="POLICY GATE", error=True, executed=False))
                if refuse:
                    self.emit(Refusal(call_id=call.id, text=refuse))
                return
        record = {"order_id": args.get("order_id"), "status": "pending", "items": [{"item_id": str(i), "price": 10.5 * i} for i in range(5)]}
        self.emit(ToolResult(call_id=call.id, name=name, content=json.dumps(record)))
        if kind == "read":
            self.emit(LedgerUpdated(path=f"orders.{args.get('order_id')}", change="added", after=record, source_call=call.id))

    def end(self, reward: float, termination: str) -> None:
        self.emit(SessionEnded(db_digest="x", reward=reward, termination=termination))
        self.writer.close()


def build(out: Path, record: bool = True) -> None:
    """The folder; without `record`, its results.jsonl as an older ledger-tui wrote it (no failure
    classes recorded: report reads every failed run's trajectory)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "tasks.json").write_text(json.dumps(tasks_json()), encoding="utf-8")
    tasks = load_tasks(out / "tasks.json")
    retail = load_domain("retail")
    lines = []
    i = 0
    for mode in MODES:
        for t in range(TASKS):
            for trial in range(TRIALS):
                outcome = OUTCOMES[(i * 7 + t) % len(OUTCOMES)]
                i += 1
                path = trajectory_path(out, "retail", mode, f"bench_{t}", trial)
                b = Builder(path, t, mode)
                gated = mode in ("gate", "full")
                b.emit(UserMessage(text=f"Hi, please cancel my order {order(t)}."))
                b.call("find_user_id_by_email", {"email": f"user{t}@example.com"})
                b.call("get_order_details", {"order_id": order(t)})
                b.call("get_user_details", {"user_id": f"user_{t}"})
                for k in range(8):  # browsing: the long middle of a real conversation
                    b.call("get_product_details", {"product_id": str(6086499569 + k)})
                    b.turn(f"Product {k} has several variants.")
                    b.emit(UserMessage(text="And the next one?"))
                b.turn(f"Order {order(t)} can be cancelled. Shall I go ahead?")
                b.emit(UserMessage(text="Yes."))
                gold_args = {"order_id": order(t), "reason": "no longer needed"}
                allow = Verdict.ALLOW if gated else None
                if outcome in ("pass", "fact", "infra"):
                    b.call("cancel_pending_order", gold_args, "write", allow)
                elif outcome == "wrong":
                    b.call("cancel_pending_order", {**gold_args, "order_id": order(t + 1)}, "write", allow)
                elif outcome == "extra":
                    b.call("cancel_pending_order", gold_args, "write", allow)
                    b.call("modify_user_address", {"user_id": f"user_{t}", "address1": "1 Main St"}, "write", allow)
                elif outcome == "block":
                    b.call("cancel_pending_order", gold_args, "write", Verdict.BLOCK, "I'm sorry, but I can't do that.")
                elif outcome == "revise":
                    for _ in range(3):
                        b.call("cancel_pending_order", gold_args, "write", Verdict.REVISE)
                    b.call("cancel_pending_order", gold_args, "write", Verdict.REVISE, "Sorry. (revise limit 3 reached)")
                elif outcome == "transfer":
                    b.call("transfer_to_human_agents", {"summary": "wants a cancellation"}, "generic")
                b.turn("Done." if outcome == "fact" else f"Done; ${t}.50 goes back to your card.")
                reward = 1.0 if outcome == "pass" else 0.0
                termination = "infrastructure_error" if outcome == "infra" else "user_stop"
                b.end(reward, termination)
                result = TrialResult(domain="retail", task_id=f"bench_{t}", trial=trial, mode=mode, agent="bench",
                                     reward=reward, termination=termination, trajectory=str(path))
                if reward < 1 and record:  # as eval records a failed run's classes (eval/recorded.py)
                    result.failure = failure_record(b.events, tasks[t], retail, path.read_bytes(), termination, result.grade)
                lines.append(json.dumps(asdict(result)) + "\n")
    (out / "results.jsonl").write_text("".join(lines), encoding="utf-8")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "eval"
        started = time.perf_counter()
        build(out)
        files = list(out.rglob("task-*.jsonl"))
        events = sum(len(p.read_text().splitlines()) for p in files)
        print(f"built {len(files)} trajectories ({events} events) in {time.perf_counter() - started:.2f} s")

        started = time.perf_counter()
        report = report_command(out, out / "tasks.json", echo=lambda *a, **k: None)
        inproc = time.perf_counter() - started
        classes = report.to_json()["counts"]
        primaries: dict[str, int] = {}
        for c in classes:
            for k, v in c["primary"].items():
                primaries[k] = primaries.get(k, 0) + v
        print(f"classified {len(report.failed)} failed runs of {len(report.runs)}: {json.dumps(primaries)}")
        print(f"report in process: {inproc:.2f} s")

        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "ledger_tui", "report", str(out), "--tasks", str(out / "tasks.json")],
                              capture_output=True, text=True)
        cli = time.perf_counter() - started
        assert done.returncode == 0, done.stderr
        print(f"report via the CLI (incl. interpreter start-up): {cli:.2f} s")

        (out / "results.jsonl").rename(out / "results.kept")  # as an import folder: every file read
        started = time.perf_counter()
        report = report_command(out, out / "tasks.json", json_out=out / "r2.json", echo=lambda *a, **k: None)
        print(f"report in process, rewards from the trajectories (all {len(report.runs)} read): {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()

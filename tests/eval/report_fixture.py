"""Hand-made trajectories for the failure report: a tiny builder over the real event classes, and a
writer for an eval-style output folder (results.jsonl + trajectories) built without running a model."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ledger_tui.engine.events import (
    AssistantMessage,
    Event,
    GateDecided,
    GateDecision,
    PredicateResult,
    Refusal,
    SessionEnded,
    SessionStarted,
    ToolCall,
    ToolCallProposed,
    ToolResult,
    UserMessage,
    Verdict,
)
from ledger_tui.engine.store.trajectories import write_trajectory
from ledger_tui.engine.agents.tasks import Task
from ledger_tui.eval.results import TrialResult
from ledger_tui.eval.trial import trajectory_path


def task(task_id: str, *actions: dict[str, Any], facts: list[str] | None = None, forbidden: dict[str, Any] | None = None) -> Task:
    """A task with gold actions given as {"name", "arguments", optional "compare_args"/"requestor"}."""
    data: dict[str, Any] = {
        "id": task_id,
        "evaluation_criteria": {
            "actions": [{"action_id": f"{task_id}_{i}", **a} for i, a in enumerate(actions)],
            "communicate_info": facts or [],
            "reward_basis": ["DB", "COMMUNICATE"] if facts else ["DB"],
        },
    }
    if forbidden is not None:
        data["ledger_tui"] = {"outcome": "refuse", "forbidden_action": forbidden}
    return Task.model_validate(data)


class Run:
    """Builds one trajectory step by step, numbering events as a session does."""

    def __init__(self, domain: str = "retail", mode: str = "full", task_id: str = "t1") -> None:
        self.events: list[Event] = []
        self.n = 0
        self.add(SessionStarted(session_id="s", domain=domain, model="m", mode=mode, policy_digest="p", db_digest="d", clock="2024-05-15", task_id=task_id))

    def add(self, event: Event) -> Event:
        event = event.model_copy(update={"seq": len(self.events)})
        self.events.append(event)
        return event

    def user(self, text: str) -> "Run":
        self.add(UserMessage(text=text))
        return self

    def say(self, text: str) -> "Run":
        self.add(AssistantMessage(text=text))
        return self

    def call(
        self,
        name: str,
        kind: str = "write",
        *,
        verdict: Verdict | None = None,
        failed: tuple[str, ...] = (),
        error: bool = False,
        requestor: str = "assistant",
        content: str = "{}",
        **arguments: Any,
    ) -> ToolCall:
        """A proposed call; with `verdict`, a gate decision first (REVISE/BLOCK: not executed, as live)."""
        self.n += 1
        call = ToolCall(id=f"call_{self.n}", name=name, arguments=arguments, requestor=requestor)  # type: ignore[arg-type]
        if requestor != "user":
            self.add(AssistantMessage(tool_calls=[call]))
        self.add(ToolCallProposed(call=call, kind=kind))  # type: ignore[arg-type]
        if verdict is not None:
            preds = [PredicateResult(name=p, clause="c", passed=False, verdict_on_fail=verdict) for p in failed]
            self.add(GateDecided(decision=GateDecision(call=call, verdict=verdict, reason="because", predicates=preds)))
            if verdict != Verdict.ALLOW:
                self.add(ToolResult(call_id=call.id, name=name, content=f"POLICY GATE: {verdict.value}.", error=True, executed=False))
                if verdict == Verdict.BLOCK:
                    self.add(Refusal(call_id=call.id, text="I'm sorry, but I can't do that."))
                return call
        self.add(ToolResult(call_id=call.id, name=name, requestor=requestor, content="Error: no" if error else content, error=error))  # type: ignore[arg-type]
        return call

    def imported_write(self, name: str, verdict: Verdict, **arguments: Any) -> ToolCall:
        """As import-tau2 records it: the gate's verdict is what it *would* have said; the write ran."""
        self.n += 1
        call = ToolCall(id=f"call_{self.n}", name=name, arguments=arguments)
        self.add(AssistantMessage(tool_calls=[call]))
        self.add(ToolCallProposed(call=call, kind="write"))
        self.add(GateDecided(decision=GateDecision(call=call, verdict=verdict, reason="would have")))
        self.add(ToolResult(call_id=call.id, name=name, content="{}"))
        return call

    def revise_limit(self, call: ToolCall) -> "Run":
        self.add(Refusal(call_id=call.id, text="I'm sorry, I could not complete this request within our policy. (revise limit 3 reached)"))
        return self

    def end(self, reward: float = 0.0, termination: str = "user_stop") -> list[Event]:
        self.add(SessionEnded(db_digest="x", reward=reward, termination=termination, grade={"db_match": reward == 1.0}))
        return self.events


def write_eval_folder(out: Path, runs: list[tuple[str, str, str, int, float, str, list[Event]]]) -> Path:
    """An eval output folder: (domain, task_id, mode, trial, reward, termination, events) per run."""
    lines = []
    for domain, task_id, mode, trial, reward, termination, events in runs:
        path = trajectory_path(out, domain, mode, task_id, trial)
        write_trajectory(path, events)
        result = TrialResult(domain=domain, task_id=task_id, trial=trial, mode=mode, agent="test", reward=reward,
                             termination=termination, trajectory=str(path), grade={"db_match": reward == 1.0})
        lines.append(json.dumps(asdict(result)) + "\n")
    (out / "results.jsonl").write_text("".join(lines), encoding="utf-8")
    return out

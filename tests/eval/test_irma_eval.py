"""IRMA in an evaluation, through the real client and the loopback server: the helpers' calls reach
the endpoint with the helper model, their tokens are counted as the server reported them, and the
paper's token overhead of irma against baseline comes out of the same runs."""

from __future__ import annotations

import json
import re
from typing import Any

from ledger_tui.engine.agents.irma import CONSTRAINTS_SYSTEM, TOOLS_SYSTEM
from ledger_tui.engine.model.models import ModelFactory
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.eval import paper
from ledger_tui.eval.results import load_results
from ledger_tui.eval.runner import run_eval
from ledger_tui.eval.trial import EvalConfig
from tests.eval.toy_eval import TASKS, play_both
from tests.loopback import LoopbackServer

# what the server says each kind of call cost
USAGE = {
    "agent": (100, 10),
    "constraints": (40, 5),
    "tools": (30, 4),
    "customer": (7, 3),
}


def kind(request: dict[str, Any]) -> str:
    system = request["messages"][0]["content"]
    if system.startswith(CONSTRAINTS_SYSTEM):
        return "constraints"
    if system.startswith(TOOLS_SYSTEM):
        return "tools"
    if system.startswith("You are role-playing a customer"):
        return "customer"
    return "agent"


def latest_words(message: dict[str, Any]) -> dict[str, Any]:
    """The customer's own words of a reformulated message (the toy agent reads the customer)."""
    found = re.match(r"The customer's latest message:\n(.*?)(\n\n|$)", message.get("content") or "", re.S)
    return {**message, "content": found.group(1)} if found else message


def responder(request: dict[str, Any]) -> dict[str, Any]:
    who = kind(request)
    prompt, completion = USAGE[who]
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    if who == "constraints":
        return {"text": "- identify the member\n- confirm before renewing", "usage": usage}
    if who == "tools":
        return {"text": "- renew_loan: after the member says yes", "usage": usage}
    if who == "agent":
        request = {**request, "messages": [latest_words(m) if m["role"] == "user" else m for m in request["messages"]]}
    return {**play_both(request), "usage": usage}


async def test_irma_and_baseline_side_by_side_count_every_helper_token(toy_domain, tmp_path):
    with LoopbackServer(responder) as server:
        agent = ModelFactory("agent-x", server.base_url, "k")
        config = EvalConfig(
            domain=toy_domain, tasks=TASKS, modes=["baseline", "irma"], trials=4, out=tmp_path,
            agent_model=agent, user_model=agent, helper_model=ModelFactory("helper-x", server.base_url, "k"), concurrency=4,
        )
        results = await run_eval(config)
        requests = list(server.requests)

    assert len(results) == 16 and not any(r.error for r in results)
    helper_requests = [r for r in requests if kind(r) in ("constraints", "tools")]
    assert helper_requests and all(r["model"] == "helper-x" and "tools" not in r for r in helper_requests)
    assert all(r["model"] == "agent-x" for r in requests if kind(r) == "agent")

    irma = [r for r in results if r.mode == "irma"]
    base = [r for r in results if r.mode == "baseline"]
    # IRMA behaves like the toy agent does without a gate: L1 renewed, L2 (a refusal task) renewed too
    assert {(r.task_id, r.reward) for r in irma} == {(r.task_id, r.reward) for r in base} == {("renew-L1", 1.0), ("renew-L2", 0.0)}
    for r in irma:
        events = read_trajectory(r.trajectory).events
        answered = sum(1 for e in events if e.type == "reformulated_input")
        assert answered >= 2 and r.helper_calls == 2 * answered
        assert (r.helper_prompt_tokens, r.helper_completion_tokens) == (
            answered * (USAGE["constraints"][0] + USAGE["tools"][0]),
            answered * (USAGE["constraints"][1] + USAGE["tools"][1]),
        )
        assert (r.prompt_tokens, r.completion_tokens) == (r.model_calls * 100, r.model_calls * 10), "the agent's own tokens apart"
    assert all(r.helper_calls == r.helper_prompt_tokens == 0 for r in base)
    assert sum(r.helper_calls for r in irma) == len(helper_requests)

    # results.jsonl keeps the helper counts; the paper's overhead adds them to the agent's tokens
    kept = {(r.task_id, r.trial, r.mode): r for r in load_results(tmp_path)}
    assert all(kept[r.key()].helper_prompt_tokens == r.helper_prompt_tokens for r in irma)
    [overhead] = paper.overheads(results)
    spent = sum(r.prompt_tokens + r.completion_tokens + r.helper_prompt_tokens + r.helper_completion_tokens for r in irma)
    assert overhead.mode == "irma" and overhead.pairs == 8
    assert (overhead.tokens, overhead.baseline_tokens) == (spent, sum(r.prompt_tokens + r.completion_tokens for r in base))
    assert overhead.ratio > 1.0
    line = json.loads((tmp_path / "results.jsonl").read_text().splitlines()[0])
    assert "helper_prompt_tokens" in line
    from ledger_tui.eval.summary import summarize

    modes = summarize(results)
    assert [s.mode for s in modes] == ["baseline", "irma"]
    assert modes[1].per_run["helper_prompt_tokens"] == sum(r.helper_prompt_tokens for r in irma) / len(irma)
    assert modes[0].per_run["helper_calls"] == 0
    from ledger_tui.eval.summary import table

    noted = [line for line in table(modes) if "helper calls per run" in line]
    assert noted == [f"irma: also {modes[1].per_run['helper_calls']:.1f} helper calls per run, "
                     f"{modes[1].per_run['helper_prompt_tokens']:,.0f} prompt + {modes[1].per_run['helper_completion_tokens']:,.0f} completion tokens"]


def test_results_written_before_helper_counts_read_as_zero(tmp_path):
    from ledger_tui.eval.results import parse_result

    line = json.dumps({
        "domain": "toy", "task_id": "t", "trial": 0, "mode": "full", "agent": "m", "reward": 1.0,
        "termination": "user_stop", "trajectory": "x.jsonl", "prompt_tokens": 5, "completion_tokens": 1,
    })
    result = parse_result(line)
    assert (result.helper_calls, result.helper_prompt_tokens, result.helper_completion_tokens) == (0, 0, 0)
    assert paper.tokens(result) == 6


def test_eval_command_runs_irma_with_its_helper_model_and_prints_the_overhead(tmp_path):
    from typer.testing import CliRunner

    from ledger_tui.cli import app

    def short(request: dict[str, Any]) -> dict[str, Any]:
        who = kind(request)
        if who == "customer":
            heard = [m for m in request["messages"] if m["role"] == "user"]
            return {"text": "Hi, can you tell me your opening hours?" if len(heard) <= 1 else "Thanks. ###STOP###"}
        if who == "agent":
            return {"text": "We are open around the clock online. Anything else?"}
        return {"text": f"- ({who}) nothing to check", "finish_reason": "length" if who == "tools" else "stop"}

    with LoopbackServer(short) as server:
        result = CliRunner().invoke(app, [
            "eval", "--domain", "retail", "--tasks", "retail_01_cancel_no_longer_needed_gift_card", "--mode", "baseline", "--mode", "irma",
            "--agent-model", "agent-x", "--helper-model", "helper-x", "--base-url", server.base_url, "--api-key", "k",
            "--out", str(tmp_path / "ev"),
        ])
        requests = list(server.requests)
    assert result.exit_code == 0, result.output
    assert {r["model"] for r in requests if kind(r) in ("constraints", "tools")} == {"helper-x"}
    assert {r["model"] for r in requests if kind(r) in ("agent", "customer")} == {"agent-x"}
    # a helper's completion cap is 512 tokens, the agent keeps --max-tokens (2048 by default)
    assert {r["max_tokens"] for r in requests if kind(r) in ("constraints", "tools")} == {512}
    assert {r["max_tokens"] for r in requests if kind(r) == "agent"} == {2048}
    overhead = next(line for line in result.output.splitlines() if line.strip().startswith("irma") and "%" in line)
    assert "runs in both" in overhead
    # a helper answer cut at its cap says so in the trajectory
    from ledger_tui.engine.events import HelperCall

    [path] = (tmp_path / "ev" / "trajectories").glob("retail/irma/*.jsonl")
    calls = [e for e in read_trajectory(path).events if isinstance(e, HelperCall)]
    assert {(c.helper, c.finish_reason) for c in calls} == {("constraints", "stop"), ("tools", "length")}

"""Evaluation harness figures.

1. Throughput: 64 concurrent sessions against the loopback OpenAI-compatible server with 200 ms of
   latency per call. The server plays both the agent and the customer by re-emitting, by position,
   the turns of a gold-agent run of a real task, so each session makes the same model calls through
   the real `openai` client, the gate and the environment. Reports sessions/s achieved as a share of
   the ideal (concurrency ÷ latency-bound session time). Target (issue 5): ≥ 90 %.
   One untimed session runs first, so per-process start-up costs are not counted per session; then
   `--repeat` timed runs (default 3), each a fresh eval of 64 sessions, and their median share.
2. Prompt tokens per task, baseline vs full LedgerAgent vs full with transcript compaction, on the
   same scripted sessions (each task's gold-agent turns replayed under each mode).

    python benchmarks/eval.py [--sessions 64] [--latency 0.2] [--domain airline]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from domains import load_domain  # noqa: E402
from ledger_tui.engine.errors import LedgerTuiError  # noqa: E402
from ledger_tui.engine.events import AssistantMessage, ToolCallProposed, UserMessage  # noqa: E402
from ledger_tui.engine.gold import fresh_environment, run_gold  # noqa: E402
from ledger_tui.engine.models import ClientOptions, OpenAIModel, ReplayModel, RetryingModel  # noqa: E402
from ledger_tui.engine.session import Session, drain  # noqa: E402
from ledger_tui.engine.tasks import load_tasks  # noqa: E402
from ledger_tui.eval.runner import EvalConfig, run_eval  # noqa: E402
from tests.loopback import serve_in_subprocess  # noqa: E402


def replaying_responder(events):
    """Answer agent requests with the gold run's assistant turns, customer requests with its
    customer turns (a message, with the actions on the customer's own device that came before it
    in dual-control domains), each chosen by how far the conversation in the request has got."""
    agent_turns = [e for e in events if isinstance(e, AssistantMessage)]
    customer: list[dict] = []
    actions: list[dict] = []
    for e in events:
        if isinstance(e, ToolCallProposed) and e.call.requestor == "user":
            actions.append({"name": e.call.name, "arguments": e.call.arguments})
        elif isinstance(e, UserMessage):
            customer.append({"text": e.text, "tool_calls": actions})
            actions = []

    def respond(request):
        messages = request["messages"]
        if messages[0]["content"].startswith("You are role-playing a customer"):
            said = sum(1 for m in messages if m["role"] == "assistant")
            if said < len(customer):
                return customer[said]
            return {"text": "Thank you. ###STOP###"}
        done = sum(1 for m in messages if m["role"] == "assistant") - 1  # minus the greeting
        if done >= len(agent_turns):
            return {"text": "Is there anything else?"}
        turn = agent_turns[done]
        return {
            "text": turn.text or None,
            "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in turn.tool_calls],
        }

    return respond


def _task(domain_name: str):
    domain = load_domain(domain_name)
    return domain, next(t for t in load_tasks(domain.tasks_path) if not t.is_refusal and t.gold_actions)


def responder_for(domain_name: str):
    """Entry point for the server process: the replaying responder of the domain's first task."""
    domain, task = _task(domain_name)
    return replaying_responder(asyncio.run(run_gold(domain, task)).events)


def throughput(domain_name: str, sessions: int, latency: float, repeat: int = 3) -> None:
    import os

    domain, task = _task(domain_name)
    gold = asyncio.run(run_gold(domain, task))
    calls = sum(isinstance(e, AssistantMessage) for e in gold.events)  # agent calls
    customer_calls = sum(isinstance(e, UserMessage) for e in gold.events) + 1  # + the closing ###STOP###
    per_session = (calls + customer_calls) * latency
    os.environ["LEDGER_TUI_BENCH_DOMAIN"] = domain_name
    proc, base_url = serve_in_subprocess("benchmarks.eval:_env_responder", latency)
    try:
        _run_throughput(domain, task, sessions, latency, base_url, calls, customer_calls, per_session, domain_name, repeat)
    finally:
        proc.terminate()
        proc.wait()


def _env_responder():
    import os

    return responder_for(os.environ["LEDGER_TUI_BENCH_DOMAIN"])


def _run_throughput(domain, task, sessions, latency, base_url, calls, customer_calls, per_session, domain_name, repeat):
    shares = []
    print(f"throughput: {sessions} sessions of {domain_name} task {task.id}, concurrency {sessions}, latency {latency * 1000:.0f} ms")
    print(f"  model calls per session {calls + customer_calls} (agent {calls}, customer {customer_calls}); latency-bound session {per_session:.2f} s")
    with tempfile.TemporaryDirectory() as tmp:

        def model():
            return RetryingModel(OpenAIModel(model="loopback", base_url=base_url, api_key="k", options=ClientOptions(timeout=30)))

        # one untimed session first: per-process costs (client start-up, the pristine database and
        # its digest texts, the gold digest) are paid once per eval, not per session
        warm = EvalConfig(domain=domain, tasks=[task], modes=["full"], trials=1, out=Path(tmp) / "warm",
                          agent_model=model, user_model=model, concurrency=1)
        asyncio.run(run_eval(warm))
        for run in range(repeat):
            config = EvalConfig(
                domain=domain, tasks=[task], modes=["full"], trials=sessions, out=Path(tmp) / f"timed-{run}",
                agent_model=model, user_model=model, concurrency=sessions,
            )
            start = time.perf_counter()
            results = asyncio.run(run_eval(config))
            wall = time.perf_counter() - start
            passed = sum(r.passed for r in results)
            achieved = len(results) / wall
            ideal = sessions / per_session
            shares.append(100 * achieved / ideal)
            print(
                f"  run {run + 1}: wall {wall:.2f} s; achieved {achieved:.2f} sessions/s; ideal {ideal:.2f} sessions/s; "
                f"share {shares[-1]:.1f} %; graded {passed}/{len(results)} passed"
            )
    print(f"  share of ideal: median {statistics.median(shares):.1f} % (min {min(shares):.1f}, max {max(shares):.1f}) over {repeat} runs")


async def prompt_tokens(domain, task, events, mode: str, compact: bool) -> int:
    session = Session(domain, ReplayModel(events), mode, env=fresh_environment(domain, task), compact=compact, timestamps=False)  # type: ignore[arg-type]
    await drain(session.start())
    for e in events:
        if isinstance(e, UserMessage):
            await drain(session.user_says(e.text))
    return session.state.totals.prompt_tokens


def tokens(domains: list[str]) -> None:
    print("prompt tokens per task (scripted sessions: gold-agent turns replayed; estimate ≈ 4 chars/token)")
    print(f"{'domain':<11}{'tasks':>6}{'baseline':>10}{'full':>10}{'full+compact':>14}{'compact/baseline':>18}")
    for name in domains:
        domain = load_domain(name)
        totals = {"baseline": 0, "full": 0, "compact": 0}
        tasks = [t for t in load_tasks(domain.tasks_path)]
        for task in tasks:
            events = asyncio.run(run_gold(domain, task)).events
            totals["baseline"] += asyncio.run(prompt_tokens(domain, task, events, "baseline", False))
            totals["full"] += asyncio.run(prompt_tokens(domain, task, events, "full", False))
            totals["compact"] += asyncio.run(prompt_tokens(domain, task, events, "full", True))
        n = len(tasks)
        print(
            f"{name:<11}{n:>6}{totals['baseline'] / n:>10.0f}{totals['full'] / n:>10.0f}{totals['compact'] / n:>14.0f}"
            f"{totals['compact'] / totals['baseline']:>17.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per domain (the median is reported)")
    parser.add_argument("--domain", action="append", help="domain(s) for the throughput run (default: all four)")
    parser.add_argument("--skip-tokens", action="store_true")
    args = parser.parse_args()
    names = args.domain or ["airline", "retail", "telecom", "telehealth"]
    try:
        for name in names:
            load_domain(name)
    except LedgerTuiError as exc:
        raise SystemExit(str(exc)) from None
    for name in names:
        throughput(name, args.sessions, args.latency, args.repeat)
    if not args.skip_tokens:
        print()
        tokens(["airline", "retail", "telecom", "telehealth"])


if __name__ == "__main__":
    main()

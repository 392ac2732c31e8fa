"""Evaluation harness figures.

1. Throughput: N concurrent sessions against the loopback OpenAI-compatible server (its own
   process) with 200 ms of latency per call. The server plays both the agent and the customer by
   re-emitting, by position, the turns of a gold-agent run of a real task, so each session makes the
   same model calls through the real `openai` client, the gate and the environment. Reports
   sessions/s achieved as a share of the ideal (concurrency ÷ latency-bound session time), for each
   number of sessions (`--sessions`, default 64 and 256) and of worker processes (`--workers`,
   default 1 and the eval's own default for that many sessions). Targets on a 2-core machine
   (issue 14): ≥ 90 % at 64 sessions, ≥ 80 % at 256.
   One untimed session runs first, so per-process start-up costs are not counted per session; then
   `--repeat` timed evals (default 3) of `--waves` × N runs (default 1: every session at once), and
   their median share. With workers, each timed eval starts its own worker processes; their
   start-up (interpreter, imports, the domain: about a second) is reported apart, and the share is
   over the time from the first worker ready to the last run recorded (the other workers' start-up
   after that counts as running); the share with start-up counted is printed beside it. Also printed: the harness's CPU per model call
   (this process and its workers, from the operating system's counters), and `--http default`
   measures the HTTP library's own transport instead of the lean one, for before/after figures.
   The sessions are given the context window (as `--context-window` gives it) instead of asking
   the server, whose every reply, a 404 for `/props` included, takes the model's latency here
   (`--ask-window` to ask it: 0.4 s more per session of the first wave).
   `--backend ray` runs the same evals on Ray actors (`eval --backend ray`, `--workers` of them) on
   a local Ray instance started once for the benchmark (one CPU a core); an actor's start-up is
   reported apart as a worker's is, and the harness CPU is this process's and the actors' (read
   from /proc before they end: Ray's processes are not this one's children).
2. Prompt tokens per task, baseline vs full LedgerAgent vs full with transcript compaction, on the
   same scripted sessions (each task's gold-agent turns replayed under each mode).

    python benchmarks/eval.py [--sessions 64 --sessions 256] [--workers 1 --workers 2] [--waves 1]
                              [--latency 0.2] [--domain airline] [--repeat 3] [--http lean|default]
                              [--backend local --backend ray]
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

from ledger_tui.engine.conversation.cards import CARD_OPENING
from ledger_tui.domains import load_domain  # noqa: E402
from ledger_tui.engine.errors import LedgerTuiError  # noqa: E402
from ledger_tui.engine.events import AssistantMessage, ToolCallProposed, UserMessage  # noqa: E402
from ledger_tui.engine.agents.gold import fresh_environment, run_gold  # noqa: E402
from ledger_tui.engine.model.models import ClientOptions, ModelFactory, ReplayModel  # noqa: E402
from ledger_tui.engine.session import Session, drain  # noqa: E402
from ledger_tui.engine.agents.tasks import load_tasks  # noqa: E402
from ledger_tui.eval.runner import run_eval
from ledger_tui.eval.trial import EvalConfig
from tests.loopback import serve_in_subprocess  # noqa: E402


def by_the_system(message: dict) -> bool:
    """An assistant message of the prompt that the model did not write: a confirmation card, or
    the calls the engine ran on the customer's yes."""
    calls = message.get("tool_calls") or []
    if calls and all(str(c.get("id", "")).startswith("gate_") for c in calls):
        return True
    return str(message.get("content") or "").startswith(CARD_OPENING)


def replaying_responder(events):
    """Answer agent requests with the gold run's assistant turns, customer requests with its
    customer turns (a message, with the actions on the customer's own device that came before it
    in dual-control domains), each chosen by how far the conversation in the request has got."""
    agent_turns = [e for e in events if isinstance(e, AssistantMessage) and e.author == "model"]
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
        if messages[0]["content"].startswith(CUSTOMER_PROMPT):
            said = sum(1 for m in messages if m["role"] == "assistant")
            if said < len(customer):
                return customer[said]
            return {"text": "Thank you. ###STOP###"}
        # the model's own turns so far, minus the greeting (a confirmation card and the calls the
        # engine ran on its yes are the system's, not the model's)
        done = sum(1 for m in messages if m["role"] == "assistant" and not by_the_system(m)) - 1
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


def throughput(
    domain_name: str, sessions_list: list[int], workers_list: list[int] | None, latency: float, repeat: int = 3, waves: int = 1,
    backends: tuple[str, ...] = ("local",),
) -> None:
    import os

    from ledger_tui.eval.backends.processes import default_workers

    domain, task = _task(domain_name)
    calls, customer_calls = model_calls(domain_name, domain, task)
    per_session = (calls + customer_calls) * latency
    os.environ["LEDGER_TUI_BENCH_DOMAIN"] = domain_name
    proc, base_url = serve_in_subprocess("benchmarks.eval:_env_responder", latency)
    try:
        model = ModelFactory("loopback", base_url, "k", ClientOptions(timeout=30))
        with tempfile.TemporaryDirectory() as tmp:
            # one untimed session first: per-process costs (client start-up, the pristine database and
            # its digest texts, the gold digest) are paid once per eval, not per session
            warm = EvalConfig(domain=domain, tasks=[task], modes=["full"], trials=1, out=Path(tmp) / "warm",
                              agent_model=model, user_model=model, concurrency=1, workers=1)
            asyncio.run(run_eval(warm))
            for sessions in sessions_list:
                for backend in backends:
                    for workers in workers_list or sorted({1, default_workers(sessions)}):
                        _run_throughput(domain, task, sessions, workers, waves, latency, model, calls, customer_calls, per_session,
                                        domain_name, repeat, Path(tmp), backend)
    finally:
        proc.terminate()
        proc.wait()


def model_calls(domain_name: str, domain, task) -> tuple[int, int]:
    """(agent, customer) model calls one session makes: the requests a server answering as the
    timed one does receives, counted on a session run alone. Counted from the gold run's messages,
    the ideal took every assistant message for a model call, the confirmation cards the engine
    writes and its greeting included (airline: 10 for 8), and flattered the domains with cards."""
    from tests.loopback import LoopbackServer

    with LoopbackServer(responder_for(domain_name)) as server, tempfile.TemporaryDirectory() as tmp:
        model = ModelFactory("loopback", server.base_url, "k", ClientOptions(timeout=30))
        config = EvalConfig(domain=domain, tasks=[task], modes=["full"], trials=1, out=Path(tmp) / "count",
                            agent_model=model, user_model=model, concurrency=1, workers=1, session_options=dict(SESSION_OPTIONS))
        asyncio.run(run_eval(config))
        customer = sum(1 for r in server.requests if r["messages"][0]["content"].startswith(CUSTOMER_PROMPT))
        return len(server.requests) - customer, customer


# how the customer simulator's system prompt opens (what the responder answers as the customer)
CUSTOMER_PROMPT = "You are role-playing a customer"


def _env_responder():
    import os

    return responder_for(os.environ["LEDGER_TUI_BENCH_DOMAIN"])


# The window is given, as `--context-window` gives it: otherwise each eval first asks the server
# (`/props`, then `/v1/models`), and the loopback server answers every request, even those 404s,
# after the model's latency: 0.4 s more for every session of the first wave, which a real server
# answers in milliseconds. `--ask-window` measures with the question asked.
SESSION_OPTIONS: dict = {"context_window": 131_072}


def _cpu() -> float:
    """CPU seconds of this process, of its children waited for, and of multiprocessing's fork
    server with its children waited for: the workers of the evals done (forked from the fork
    server where there is one, else spawned by this process)."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime + _fork_server_cpu()


def _fork_server_cpu() -> float:
    """CPU seconds of this process's fork server and of the workers it has reaped (0 if none)."""
    import os

    me = os.getpid()
    return _processes_cpu(lambda ppid, cmdline: ppid == me and b"multiprocessing.forkserver" in cmdline, reaped=True)


def _actors_cpu() -> float:
    """CPU seconds of the Ray actors of the eval running now (its ShardActor processes)."""
    return _processes_cpu(lambda ppid, cmdline: cmdline.startswith(b"ray::ShardActor"))


def _processes_cpu(chosen, reaped: bool = False) -> float:
    """CPU seconds (user and system) of the running processes `chosen(parent pid, command line)`
    picks, read from /proc; `reaped`: with those of their children they have waited for."""
    import os

    total, fields_read = 0.0, 15 if reaped else 13
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit():
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if chosen(int(fields[1]), (entry / "cmdline").read_bytes()):
                total += sum(int(f) for f in fields[11:fields_read]) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            pass
    return total


def _run_throughput(
    domain, task, sessions, workers, waves, latency, model, calls, customer_calls, per_session, domain_name, repeat, tmp, backend="local"
):
    import functools

    from ledger_tui.domains import load_domain

    shares, with_startup, cpu_per_call = [], [], []
    runs = sessions * waves
    print(
        f"throughput: {runs} sessions of {domain_name} task {task.id}, concurrency {sessions}, {workers} "
        f"{'Ray actor' if backend == 'ray' else 'worker'}{'s' if workers > 1 else ''}, latency {latency * 1000:.0f} ms"
    )
    print(f"  model calls per session {calls + customer_calls} (agent {calls}, customer {customer_calls}); latency-bound session {per_session:.2f} s")
    for run in range(repeat):
        config = EvalConfig(
            domain=domain, tasks=[task], modes=["full"], trials=runs, out=tmp / f"timed-{backend}-{sessions}-{workers}-{run}",
            agent_model=model, user_model=model, concurrency=sessions, workers=workers,
            domain_source=functools.partial(load_domain, domain_name), session_options=dict(SESSION_OPTIONS), backend=backend,
        )
        ready: list[float] = []
        actors: list[float] = []
        recorded_runs = [0]

        def recorded(result, actors=actors, recorded_runs=recorded_runs):
            recorded_runs[0] += 1
            if backend == "ray" and recorded_runs[0] == runs:  # the actors end with the eval: read them now
                actors.append(_actors_cpu())

        cpu = _cpu()
        start = time.perf_counter()
        results = asyncio.run(run_eval(config, on_result=recorded, on_start=lambda ready=ready: ready.append(time.perf_counter())))
        end = time.perf_counter()
        cpu = _cpu() - cpu + sum(actors)
        startup = ready[0] - start if ready else 0.0
        wall = end - (ready[0] if ready else start)
        passed = sum(r.passed for r in results)
        ideal = sessions / per_session
        shares.append(100 * len(results) / wall / ideal)
        with_startup.append(100 * len(results) / (end - start) / ideal)
        cpu_per_call.append(1000 * cpu / (len(results) * (calls + customer_calls)))
        print(
            f"  run {run + 1}: start-up {startup:.2f} s, running {wall:.2f} s; achieved {len(results) / wall:.2f} sessions/s; "
            f"ideal {ideal:.2f} sessions/s; share {shares[-1]:.1f} % ({with_startup[-1]:.1f} % with start-up); "
            f"harness CPU {cpu_per_call[-1]:.2f} ms a call; graded {passed}/{len(results)} passed"
        )
    print(
        f"  share of ideal: median {statistics.median(shares):.1f} % (min {min(shares):.1f}, max {max(shares):.1f}) over {repeat} runs; "
        f"with start-up {statistics.median(with_startup):.1f} %; harness CPU median {statistics.median(cpu_per_call):.2f} ms a call"
    )


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
    import os

    from ledger_tui.engine.model.endpoint import HTTP_SETTING

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, action="append", help="concurrent sessions (repeat; default: 64 and 256)")
    parser.add_argument("--workers", type=int, action="append", help="worker processes (repeat; default: 1 and eval's default)")
    parser.add_argument("--waves", type=int, default=1, help="runs per session slot in each timed eval (default 1)")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--repeat", type=int, default=3, help="timed evals per setting (the median is reported)")
    parser.add_argument("--domain", action="append", help="domain(s) for the throughput run (default: all four)")
    parser.add_argument("--http", choices=["lean", "default"], default="lean", help="the model clients' HTTP transport")
    parser.add_argument("--ask-window", action="store_true", help="let the sessions ask the server its context window")
    parser.add_argument("--skip-tokens", action="store_true")
    parser.add_argument("--backend", choices=["local", "ray"], action="append", help="where the workers run (repeat; default: local)")
    args = parser.parse_args()
    if args.ask_window:
        SESSION_OPTIONS.clear()
    if args.http == "default":
        os.environ[HTTP_SETTING] = "default"  # read by this process and the workers it starts
    names = args.domain or ["airline", "retail", "telecom", "telehealth"]
    try:
        for name in names:
            load_domain(name)
    except LedgerTuiError as exc:
        raise SystemExit(str(exc)) from None
    backends = tuple(args.backend or ["local"])
    if "ray" in backends:
        import logging

        from ledger_tui.eval.backends.ray_cluster import need_ray
        from ledger_tui.eval.backends.processes import cores

        try:
            ray = need_ray()
        except LedgerTuiError as exc:
            raise SystemExit(str(exc)) from None
        # started once here, so each timed eval pays only its actors' start-up, as on a running cluster
        ray.init(num_cpus=cores(), include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    for name in names:
        throughput(name, args.sessions or [64, 256], args.workers, args.latency, args.repeat, args.waves, backends)
    if not args.skip_tokens:
        print()
        tokens(["airline", "retail", "telecom", "telehealth"])


if __name__ == "__main__":
    main()

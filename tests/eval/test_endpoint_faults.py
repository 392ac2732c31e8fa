"""Endpoint faults, verified (issue 13): a faulty model endpoint on 127.0.0.1 costs a run its
budget and nothing more.

The endpoint plays the customer well and fails the agent of one task in one way: it never
answers, answers 200 with an HTML page, with JSON that has no choices or is nested 100,000 deep,
resets the connection mid-reply, or sends its reply a byte at a time, slower than the timeout
allows. Each run then ends within its budget — `--retries` + 1 attempts of `--timeout` seconds
and the backoff between them (checked loosely: under three times that) — is recorded (its
trajectory, and a results.jsonl line with termination infrastructure_error and one sentence
naming the fault), is left out of pass^k, and a second run against a healthy endpoint redoes
exactly those runs. `play` shows each fault as a one-sentence notice and goes on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ledger_tui.engine.events import Notice
from ledger_tui.engine.model.models import ClientOptions, OpenAIModel, RetryingModel
from ledger_tui.engine.session import Session, drain
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.eval.results import RESULTS, load_results
from ledger_tui.eval.runner import run_eval
from ledger_tui.eval.trial import EvalConfig
from ledger_tui.eval.summary import summarize
from tests.eval.toy_eval import TASKS, play_both
from tests.loopback import LoopbackServer

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT, RETRIES, BACKOFF = 0.5, 1, 0.5  # --timeout 0.5 --retries 1; RetryingModel's first backoff, as `eval` builds it
BUDGET = (RETRIES + 1) * TIMEOUT + BACKOFF  # a run whose every agent call fails

# fault -> (what the endpoint sends, words the run's one sentence must hold)
FAULTS = {
    "never answers": ({"hang": 3600}, "did not answer within 0.5 s; raise --timeout"),
    "an HTML page": (
        {"raw": "<html><body><h1>502 Bad Gateway</h1></body></html>", "content_type": "text/html"},
        "did not answer with JSON (it began: '<html><body><h1>502 Bad Gateway",
    ),
    "JSON without choices": ({"raw": '{"object": "list", "data": []}'}, "returned no choices (it began: '{\"object\": \"list\""),
    "JSON nested too deeply": ({"raw": "[" * 20_000 + "]" * 20_000}, "did not answer with JSON (it began: '[[[["),
    "a reset mid-reply": ({"reset": 30, "text": "never whole"}, "dropped the connection before its reply was complete"),
    "a slow trickle": ({"trickle": 0.1, "text": "a reply sent a byte at a time"}, "did not complete its reply within 0.5 s"),
}


def _customer(request) -> bool:
    return request["messages"][0]["content"].startswith("You are role-playing a customer")


def faulty(spec):
    """The toy endpoint, failing the agent of task renew-L2 with `spec`; counts those requests."""

    def respond(request):
        if not _customer(request) and "loan L2" in json.dumps(request["messages"]):
            respond.faults += 1
            return spec
        return play_both(request)

    respond.faults = 0
    return respond


def as_eval_builds_it(server: LoopbackServer):
    """The models `ledger-tui eval --timeout 0.5 --retries 1` makes."""

    def model():
        options = ClientOptions(timeout=TIMEOUT, retries=RETRIES)
        return RetryingModel(OpenAIModel(model="loopback", base_url=server.base_url, api_key="k", options=options), attempts=RETRIES + 1)

    return model


def config(toy_domain, server, out) -> EvalConfig:
    model = as_eval_builds_it(server)
    return EvalConfig(domain=toy_domain, tasks=TASKS, modes=["full"], trials=2, out=out, agent_model=model, user_model=model, concurrency=4)


def one_sentence(text: str) -> None:
    assert text and "\n" not in text and text.rstrip().endswith("."), text
    assert "Traceback" not in text and "validation error" not in text, text


@pytest.mark.parametrize("fault", list(FAULTS))
async def test_a_faulty_endpoint_costs_a_run_its_budget_is_recorded_left_out_and_redone(fault, toy_domain, tmp_path):
    spec, words = FAULTS[fault]
    responder = faulty(spec)
    with LoopbackServer(responder) as server:
        started = time.perf_counter()
        results = await run_eval(config(toy_domain, server, tmp_path))
        elapsed = time.perf_counter() - started
    infra = [r for r in results if r.infrastructure_error]

    # ends within its budget: every attempt the retries allow, no more, each cut at the timeout
    assert sorted(r.task_id for r in infra) == ["renew-L2", "renew-L2"], [(r.task_id, r.termination, r.error) for r in results]
    assert responder.faults == 2 * (RETRIES + 1), "each run made --retries + 1 attempts"
    assert all(r.seconds < 3 * BUDGET for r in infra), [r.seconds for r in infra]
    assert elapsed < 3 * BUDGET + 5

    # recorded: a results.jsonl line and a trajectory, each saying what went wrong in one sentence
    recorded = {(r.task_id, r.trial): r for r in load_results(tmp_path)}
    for run in infra:
        line = recorded[(run.task_id, run.trial)]
        assert line.termination == "infrastructure_error" and line.error == run.error
        one_sentence(line.error)
        assert line.error.startswith("agent: ") and words in line.error, line.error
        events = read_trajectory(tmp_path / Path(line.trajectory).relative_to(tmp_path)).events
        assert events[-1].type == "session_ended" and events[-1].termination == "infrastructure_error"
        notices = [e.text for e in events if isinstance(e, Notice) and e.level == "error"]
        assert notices and words in notices[-1]

    # left out of pass^k: only renew-L1 counts, and it passed
    summary = summarize(results)[0]
    assert (summary.infrastructure_errors, summary.tasks, summary.pass_k[2]) == (2, 1, 1.0)

    # redone on resume, and only those: against a healthy endpoint renew-L2 now runs and passes
    finished = {(r.task_id, r.trial): Path(r.trajectory).stat().st_mtime_ns for r in results if not r.infrastructure_error}
    with LoopbackServer(play_both) as server:
        again = await run_eval(config(toy_domain, server, tmp_path))
        agent_requests = [r for r in server.requests if not _customer(r)]
    assert agent_requests and all("loan L2" in json.dumps(r["messages"]) for r in agent_requests)
    assert sorted((r.task_id, r.reward, r.termination) for r in again) == [
        ("renew-L1", 1.0, "user_stop"), ("renew-L1", 1.0, "user_stop"), ("renew-L2", 1.0, "user_stop"), ("renew-L2", 1.0, "user_stop"),
    ]
    assert {k: Path(r.trajectory).stat().st_mtime_ns for r in again for k in [(r.task_id, r.trial)] if k in finished} == finished
    assert (tmp_path / RESULTS).read_text().count("\n") == 4


@pytest.mark.parametrize("fault", list(FAULTS))
async def test_play_shows_each_fault_as_a_one_sentence_notice_and_goes_on(fault, toy_domain):
    spec, words = FAULTS[fault]
    replies = iter([spec, {"text": "Hello again."}])
    with LoopbackServer(lambda request: next(replies)) as server:
        options = ClientOptions(timeout=TIMEOUT, retries=0)
        model = RetryingModel(OpenAIModel(model="m", base_url=server.base_url, api_key="k", options=options), attempts=1)
        session = Session(toy_domain, model, "full")
        await drain(session.start())
        started = time.perf_counter()
        await drain(session.user_says("hi"))
        assert time.perf_counter() - started < 3 * (TIMEOUT + 0.25) + 1
        notice = [e for e in session.events if isinstance(e, Notice) and e.level == "error"]
        assert len(notice) == 1 and words in notice[0].text, [e.text for e in notice]
        one_sentence(notice[0].text)
        await drain(session.user_says("are you there?"))  # the session survives the fault
        await model.aclose()
    replies_seen = [e.text for e in session.events if e.type == "assistant_message" and e.author == "model"]
    assert replies_seen[-1] == "Hello again."


def test_the_eval_command_keeps_the_budget_its_flags_set_and_a_rerun_redoes_the_run(tmp_path):
    """Through `ledger-tui eval --timeout --retries` on a real domain: an endpoint that never
    answers the agent stops the command within its budget with one sentence naming the fault;
    the same command against a healthy endpoint redoes that run."""
    task = "airline_01_cancel_recent_booking"

    def hang_the_agent(request):
        if _customer(request):
            return {"text": "Hi, I need to cancel a reservation. ###STOP###" if len(request["messages"]) > 3 else "Hi, I need help."}
        return {"hang": 3600}

    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    with LoopbackServer(hang_the_agent) as server:
        args = [sys.executable, "-m", "ledger_tui", "eval", "--domain", "airline", "--tasks", task, "--trials", "1",
                "--base-url", server.base_url, "--agent-model", "m", "--timeout", "1", "--retries", "1", "--out", str(tmp_path)]
        started = time.perf_counter()
        out = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
        elapsed = time.perf_counter() - started
        agent_calls = sum(1 for r in server.requests if not _customer(r))
    lines = [line for line in out.stderr.splitlines() if line.strip() and not line.startswith("eval ")]
    assert out.returncode == 2, out.stderr
    assert lines[-1].startswith("error: Every run stopped on a model failure (agent: The model endpoint at")
    assert "did not answer within 1 s; raise --timeout" in lines[-1] and "run the same command again to redo them" in lines[-1]
    assert agent_calls == 2, "--retries 1: two attempts"
    assert elapsed < 3 * (2 * 1 + BACKOFF) + 10  # the budget, plus starting Python and loading the domain
    recorded = load_results(tmp_path)
    assert [(r.task_id, r.termination) for r in recorded] == [(task, "infrastructure_error")]

    def healthy(request):
        if _customer(request):
            return {"text": "Thanks, goodbye. ###STOP###" if len(request["messages"]) > 3 else "Hi, I need help."}
        return {"text": "How can I help?"}

    with LoopbackServer(healthy) as server:
        args[args.index("--base-url") + 1] = server.base_url
        again = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "already done" not in again.stderr
    assert [(r.task_id, r.termination) for r in load_results(tmp_path)] == [(task, "user_stop")]


async def test_call_arguments_nested_past_the_limit_are_a_tool_error_and_the_trajectory_reads_back(toy_domain, tmp_path):
    """A 200 reply whose call arguments hold JSON 150 levels deep (Python parses it, but no
    trajectory could hold it, and 100,000 levels overflowed the parser): the model is told, the
    session goes on, and what was recorded reads back."""
    deep = json.dumps({"loan_id": json.loads("[" * 150 + "]" * 150)})
    replies = iter([{"tool_calls": [{"name": "get_loan_details", "arguments": deep}]}, {"text": "Sorry about that."}])
    with LoopbackServer(lambda request: next(replies)) as server:
        model = OpenAIModel(model="m", base_url=server.base_url, api_key="k")
        session = Session(toy_domain, model, "full", out=tmp_path / "t.jsonl")
        await drain(session.start())
        await drain(session.user_says("hi"))
        await model.aclose()
        session.close()
    result = next(e for e in session.events if e.type == "tool_result")
    assert result.error and "nested more than 100 levels deep" in result.content
    assert [e.type for e in read_trajectory(tmp_path / "t.jsonl").events] == [e.type for e in session.events]

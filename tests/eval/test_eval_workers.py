"""eval on several worker processes: the same outputs as one process, one writer, nothing finished
lost when it is interrupted or a worker dies, no process left behind. The loopback server runs in
this process (a thread); the workers are real processes."""

from __future__ import annotations

import json
import os
import re
import signal
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.model.models import ClientOptions, ModelFactory
from ledger_tui.eval.results import load_results
from ledger_tui.eval.runner import run_eval, worker_count
from ledger_tui.eval.trial import EvalConfig
from ledger_tui.eval.backends.processes import WorkerError, check_workers, default_workers, shares
from tests.eval.toy_eval import TASKS, play_both
from tests.loopback import LoopbackServer
from tests.processes import eval_workers, running
from tests.toy_domain import build_toy

RUNS = 16  # two tasks x four trials x two modes


class Interrupted(Exception):
    """Stands in for Ctrl-C (pytest reserves KeyboardInterrupt for itself)."""


def steady(request):
    """play_both with call ids from the conversation's length, not the server's counter, so two
    evals of the same runs make the same requests whatever their interleaving."""
    reply = play_both(request)
    for i, call in enumerate(reply.get("tool_calls") or []):
        call.setdefault("id", f"call_{len(request['messages'])}_{i}")
    return reply


def config(server, out: Path, workers: int | None, concurrency: int = 4) -> EvalConfig:
    model = ModelFactory("loopback", server.base_url, "k", ClientOptions(timeout=10, retries=0))
    return EvalConfig(
        domain=build_toy(), tasks=TASKS, modes=["baseline", "full"], trials=4, out=out,
        agent_model=model, user_model=model, concurrency=concurrency, workers=workers, domain_source=build_toy,
    )


def workers_alive() -> list[int]:
    """This process's worker processes still running (not zombies)."""
    return [pid for pid in eval_workers(os.getpid()) if running(pid)]


def without_timing(folder: Path) -> tuple[list[str], dict[str, list[str]]]:
    """results.jsonl (sorted: lines are in the order runs finish) and every trajectory, without
    what differs between any two evals: seconds, session ids, start times (and so the digest of a
    failed run's trajectory recorded with its classes), the folder's name."""
    lines = []
    for line in (folder / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        row.pop("seconds")
        if row.get("failure"):
            row["failure"].pop("trajectory")
        row["trajectory"] = str(Path(row["trajectory"]).relative_to(folder))
        lines.append(json.dumps(row))
    trajectories = {}
    for path in sorted((folder / "trajectories").rglob("*.jsonl")):
        events = []
        for line in path.read_text().splitlines():
            event = json.loads(line)
            event.pop("session_id", None)
            event.pop("started_at", None)
            events.append(json.dumps(event))
        trajectories[str(path.relative_to(folder))] = events
    return sorted(lines), trajectories


def test_the_worker_count_its_default_and_the_split_of_sessions():
    assert default_workers(63) == 1 and default_workers(64) >= 1
    assert shares(10, 3) == [4, 3, 3] and shares(256, 2) == [128, 128]
    for bad, words in ((0, "positive"), (-2, "positive"), (5, "more than --concurrency 4")):
        with pytest.raises(WorkerError) as caught:
            check_workers(bad, 4)
        assert words in str(caught.value) and str(caught.value).count(". ") == 0


def test_the_default_falls_back_to_one_process_for_a_config_workers_cannot_rebuild(tmp_path, monkeypatch):
    from ledger_tui.eval.backends import processes as workers

    monkeypatch.setattr(workers, "cores", lambda: 4)

    class Server:
        base_url = "http://127.0.0.1:9/v1"

    many = config(Server, tmp_path, workers=None, concurrency=64)
    assert worker_count(many, runs=100) == 4 and worker_count(many, runs=3) == 3
    assert worker_count(config(Server, tmp_path, workers=None, concurrency=63), runs=100) == 1
    closures = config(Server, tmp_path, workers=None, concurrency=64)
    closures.agent_model = lambda: None  # not picklable: one process, as before workers existed
    assert worker_count(closures, runs=100) == 1
    closures.workers = 2  # asked for explicitly: said when the eval starts
    assert worker_count(closures, runs=100) == 2


async def test_two_workers_write_what_one_process_writes(tmp_path):
    with LoopbackServer(steady) as server:
        one = await run_eval(config(server, tmp_path / "one", workers=1))
        seen = []
        two = await run_eval(config(server, tmp_path / "two", workers=2), on_result=seen.append)
    assert len(one) == len(two) == len(seen) == RUNS
    assert without_timing(tmp_path / "one") == without_timing(tmp_path / "two")
    assert sorted(r.key() for r in two) == sorted(r.key() for r in seen)
    assert workers_alive() == []


@dataclass(frozen=True)
class ToyMarked:
    """build_toy, in a worker that sees LEDGER_TUI_TEST_MARK set to `mark` (else it cannot set up)."""

    mark: str

    def __call__(self):
        seen = os.environ.get("LEDGER_TUI_TEST_MARK")
        if seen != self.mark:
            raise RuntimeError(f"the worker saw LEDGER_TUI_TEST_MARK={seen!r}, not {self.mark!r}")
        return build_toy()


async def test_a_worker_sees_the_environment_of_its_eval_not_the_fork_servers(tmp_path, monkeypatch):
    with LoopbackServer(steady) as server:
        monkeypatch.setenv("LEDGER_TUI_TEST_MARK", "first")
        first = await run_eval(replace(config(server, tmp_path / "first", workers=2), domain_source=ToyMarked("first")))
        # the fork server, if there is one, is running now, with "first" (or no mark) in its environment
        monkeypatch.setenv("LEDGER_TUI_TEST_MARK", "second")
        second = await run_eval(replace(config(server, tmp_path / "second", workers=2), domain_source=ToyMarked("second")))
    assert len(first) == len(second) == RUNS
    assert workers_alive() == []


async def interrupt_then_resume(tmp_path: Path, backend: str, left_running: Callable[[], list[int]]) -> None:
    """An eval on two workers interrupted at its fifth result keeps every run they finished (with
    its trajectory), leaves none of them running, and a resume does only the rest."""
    with LoopbackServer(steady, latency=0.02) as server:
        seen = []

        def interrupt(result):
            seen.append(result)
            if len(seen) == 5:
                raise Interrupted()

        def two_workers() -> EvalConfig:
            made = config(server, tmp_path, workers=2)
            made.backend = backend
            return made

        with pytest.raises(Interrupted):
            await run_eval(two_workers(), on_result=interrupt)
        assert left_running() == []
        kept = load_results(tmp_path)
        # every run a worker finished is on disk, even those that came back after the interruption
        assert len(kept) >= 5 and len({r.key() for r in kept}) == len(kept)
        assert all(Path(r.trajectory).read_text().count("\n") > 5 for r in kept)
        again = []
        results = await run_eval(two_workers(), on_result=again.append)
    assert len(again) == RUNS - len(kept)
    assert not {r.key() for r in again} & {r.key() for r in kept}
    assert sorted(r.key() for r in results) == sorted(r.key() for r in load_results(tmp_path))
    assert len(load_results(tmp_path)) == RUNS


async def test_an_interrupted_multi_worker_eval_keeps_its_finished_runs_and_a_resume_does_only_the_rest(tmp_path):
    await interrupt_then_resume(tmp_path, "local", workers_alive)


async def test_a_worker_that_dies_is_one_sentence_and_the_runs_finished_are_kept(tmp_path):
    killed = []

    def kill_one_worker_after_three_runs(request):
        results = tmp_path / "results.jsonl"
        if not killed and results.exists() and results.read_text().count("\n") >= 3:
            pid = workers_alive()[0]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        return steady(request)

    with LoopbackServer(kill_one_worker_after_three_runs, latency=0.02) as server:
        with pytest.raises(LedgerTuiError) as caught:
            await run_eval(config(server, tmp_path, workers=2))
        words = str(caught.value)
        assert workers_alive() == []
        kept = load_results(tmp_path)
        assert words.startswith("Worker ") and "was killed by SIGKILL" in words and "\n" not in words, words
        assert f"{len(kept)} finished runs are saved" in words and f"redoes the {RUNS - len(kept)} left" in words, words
        assert 3 <= len(kept) < RUNS
        # the other worker went on with the runs not handed out: only the dead one's were lost
        redo = []
        await run_eval(config(server, tmp_path, workers=2), on_result=redo.append)
    assert len(redo) == RUNS - len(kept) and len(load_results(tmp_path)) == RUNS


async def test_a_run_that_raises_stops_the_eval_with_the_sentence_one_process_says(tmp_path):
    said = []
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with LoopbackServer(steady) as server:
        for workers in (1, 2):
            out = tmp_path / str(workers)
            out.mkdir()
            (out / "trajectories").symlink_to(elsewhere)  # outputs would land outside --out
            with pytest.raises(LedgerTuiError) as caught:
                await run_eval(config(server, out, workers=workers))
            said.append((type(caught.value), str(caught.value)))
        # the same error, in the same words (about whichever run met it first)
        assert said[0][0] is said[1][0]
        for kind, words in said:
            assert re.fullmatch(r"\S+/trajectories/toy/\w+/task-renew-L\d-trial-\d\.jsonl would be written outside \S+ \(its real "
                                r"path is \S+\); nothing was written there: remove the link or pick another folder\.", words), words
        # an error no run should raise (here the trajectories folder is a file) is one sentence too
        out = tmp_path / "3"
        out.mkdir()
        (out / "trajectories").write_text("a file where eval puts its trajectories folder")
        with pytest.raises(WorkerError) as caught:
            await run_eval(config(server, out, workers=2))
    words = str(caught.value)
    assert "stopped on an error it did not expect (NotADirectoryError" in words and "\n" not in words, words
    assert "0 finished runs are saved" in words and f"redoes the {RUNS} left" in words, words
    assert workers_alive() == []


async def test_workers_started_before_a_preparation_that_fails_are_ended(tmp_path, monkeypatch):
    # the workers start up while this process prepares; here the preparation fails (a disk error)
    from ledger_tui.eval import runner

    def fails(*args):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(runner, "_prepare", fails)
    with LoopbackServer(steady) as server, pytest.raises(OSError):
        await run_eval(config(server, tmp_path / "out", workers=2))
    assert workers_alive() == []


async def test_an_out_folder_that_cannot_be_made_is_one_sentence_before_any_worker_starts(tmp_path):
    from ledger_tui.eval.folder_lock import FolderError

    (tmp_path / "a-file").write_text("")
    with LoopbackServer(steady) as server, pytest.raises(FolderError, match="check the folder and its permissions"):
        await run_eval(config(server, tmp_path / "a-file" / "out", workers=2))
    assert workers_alive() == []


def test_a_results_row_is_what_asdict_makes_of_the_result():
    """result_row skips asdict's copies where the fields hold plain JSON, and falls back to it
    where they do not: the row written to results.jsonl and sent back by a worker is the same."""
    from dataclasses import asdict

    from ledger_tui.engine.events import Verdict
    from ledger_tui.eval.results import TrialResult
    from ledger_tui.eval.trial import result_row

    plain = TrialResult(
        domain="toy", task_id="t", trial=0, mode="full", agent="m", reward=1.0, termination="user_stop", trajectory="x.jsonl",
        grade={"reward": 1.0, "actions": [{"name": "a", "matched": True, "arguments": {"n": 2.5, "x": None}}]},
        failure={"classes": ["a"]},
    )
    odd = TrialResult(**{**asdict(plain), "grade": {"verdict": Verdict.ALLOW, "pair": (1, 2), "keys": {1: "one"}}})
    for result in (plain, odd):
        assert result_row(result) == asdict(result)
        assert json.dumps(result_row(result)) == json.dumps(asdict(result))
    assert result_row(plain)["grade"] is plain.grade  # no copy where none is needed
    assert result_row(odd)["grade"] is not odd.grade

"""`ledger-tui eval --workers` as a user meets it: a real subprocess with its worker processes, a
real domain, the loopback server in this process, Ctrl-C sent to the whole process group as a
terminal sends it, and a worker killed as the out-of-memory killer would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from benchmarks.eval import responder_for
from ledger_tui.eval.results import load_results
from tests.cli.test_cli import ROOT, cli, one_sentence_error
from tests.loopback import LoopbackServer
from tests.processes import children, eval_workers, running

TASK = "airline_01_cancel_recent_booking"  # the task benchmarks/eval.py replays
RUNS = 8


@pytest.fixture(scope="module")
def server():
    # 150 ms a call: the runs left when a worker is killed take over a second, so a loaded machine
    # (CI beside other jobs) does not finish them all first (the Ctrl-C tests hold the model instead:
    # `held`)
    with LoopbackServer(responder_for("airline"), latency=0.15, keep_requests=False) as running:
        yield running


class TwoRunsThenHold:
    """The replayed model, which holds every reply once two runs have ended, until `release()`:
    Ctrl-C then lands with runs in flight however fast or loaded the machine is (timing alone, a
    run of 7 model calls at 150 ms, let a full suite finish every run before the signal)."""

    def __init__(self, responder) -> None:
        self.responder = responder
        self.ended = 0
        self.held = 0
        self.go = threading.Event()
        self.lock = threading.Lock()

    def __call__(self, request):
        reply = self.responder(request)
        with self.lock:
            if self.go.is_set():
                return reply
            if self.ended >= 2:
                self.held += 1
                return {**reply, "until": self.go}  # answered as it would be, once released
            if "###STOP###" in (reply.get("text") or ""):
                self.ended += 1
        return reply

    def release(self) -> None:
        self.go.set()


@pytest.fixture
def held():
    """A loopback model (its `gate`: the TwoRunsThenHold) for a test that interrupts an eval."""
    gate = TwoRunsThenHold(responder_for("airline"))
    with LoopbackServer(gate, latency=0.15, keep_requests=False) as running:
        running.gate = gate
        yield running


def start(server, out: Path, *more: str) -> subprocess.Popen[str]:
    """`ledger-tui eval` of RUNS runs on two workers (`more`: further options, e.g. --backend ray),
    outside any Ray cluster named by RAY_ADDRESS."""
    args = [
        "eval", "-d", "airline", "--tasks", TASK, "-n", str(RUNS), "-c", "4", "--workers", "2",
        "--base-url", server.base_url, "--api-key", "k", "--agent-model", "loopback", "-o", str(out), *more,
    ]
    return subprocess.Popen(
        [sys.executable, "-m", "ledger_tui", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
        env={k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"},
    )


def wait_for_lines(out: Path, n: int, proc: subprocess.Popen[str]) -> None:
    results = out / "results.jsonl"
    deadline = time.monotonic() + 60
    while not (results.exists() and results.read_text().count("\n") >= n):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)


@pytest.mark.parametrize("flags", [["--workers", "0"], ["--workers", "-3"], ["--workers", "9", "-c", "4"]])
def test_bad_worker_counts_are_one_sentence(tmp_path: Path, flags: list[str]):
    line = one_sentence_error(cli("eval", "-d", "airline", "--agent", "gold", "-o", str(tmp_path / "out"), *flags))
    assert "--workers" in line
    assert not (tmp_path / "out").exists()


def started_runs(out: Path) -> set[str]:
    return {p.name for p in out.rglob("*.jsonl") if p.name != "results.jsonl"}


def in_flight(said: str) -> int:
    """How many runs in flight the eval said it is finishing."""
    n = said.split("finishing the ", 1)[1].split(" ", 1)[0]
    return 1 if n == "run" else int(n)


def interrupt_once(proc: subprocess.Popen[str], server) -> str:
    """Ctrl-C to the eval's process group once runs are held in flight; the line it answers."""
    deadline = time.monotonic() + 60
    while server.gate.held < 1:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGINT)
    while True:  # (stderr, a line at a time, until the eval says it is winding down)
        line = proc.stderr.readline()  # type: ignore[union-attr]
        assert line, proc.communicate()
        if line.startswith("interrupted: finishing"):
            return line


@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_once_finishes_the_runs_in_flight_and_starts_no_more(held, tmp_path: Path, workers: str):
    server = held
    out = tmp_path / "out"
    proc = start(server, out, "--workers", workers)
    wait_for_lines(out, 2, proc)
    said = interrupt_once(proc, server)
    assert "press Ctrl-C again to stop now" in said
    server.gate.release()  # the runs in flight get their replies now, after the signal
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr
    kept = load_results(out)
    # every run in flight finished, as many as it said (the replies were held, so none finished
    # between), and none was started after Ctrl-C: a run is in flight once handed to a worker, so
    # a worker still starting under load may begin one after the signal, but only one it was
    # handed before it
    assert len(kept) == 2 + in_flight(said) < RUNS
    assert started_runs(out) == {Path(r.trajectory).name for r in kept}
    assert f"interrupted; the {len(kept)} runs finished are saved in {out / 'results.jsonl'}" in stderr, stderr


def test_ctrl_c_twice_stops_now_keeps_every_finished_run_leaves_no_process_and_a_resume_does_the_rest(held, tmp_path: Path):
    server = held
    out = tmp_path / "out"
    proc = start(server, out)
    wait_for_lines(out, 2, proc)
    group = children(proc.pid) + eval_workers(proc.pid)
    interrupt_once(proc, server)
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    kept = load_results(out)
    assert 2 <= len(kept) < RUNS
    assert f"interrupted; the {len(kept)} runs finished are saved in {out / 'results.jsonl'}" in stderr, stderr
    time.sleep(0.2)
    assert [p for p in group if running(p)] == []
    server.gate.release()
    again = start(server, out)
    _, stderr = again.communicate(timeout=60)
    assert again.returncode == 0, stderr
    assert f"resuming {out}: {len(kept)} of {RUNS} runs already done, {RUNS - len(kept)} to run" in stderr
    assert len(load_results(out)) == RUNS


def test_a_killed_worker_is_one_sentence_and_the_runs_finished_are_kept(server, tmp_path: Path):
    out = tmp_path / "out"
    proc = start(server, out)
    wait_for_lines(out, 2, proc)
    workers = eval_workers(proc.pid)
    assert len(workers) == 2
    os.kill(workers[0], signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=60)
    line = one_sentence_error(subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr))
    kept = load_results(out)
    assert "was killed by SIGKILL" in line and f"{len(kept)} finished runs are saved" in line, line
    assert 2 <= len(kept) < RUNS
    assert not any(running(p) for p in workers)

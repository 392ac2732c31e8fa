"""Faults, as an unlucky operator and an attacker meet them (issue 27): real processes, real signals,
a real full disk. Each fault is tried a number of times at random points and checked against what
the README promises; prints, per fault, how many tries, how many failed and the seconds taken, then
the first failures in words. Exits 1 on any failure.

- kill: `eval` (one process or two workers) and `import-tau2` killed with SIGKILL, process group
  and all, at a random moment. What was recorded reads back (every row of results.jsonl names a
  whole trajectory), and the same command run again completes the work: every run once, `report`
  counting exactly them.
- writers: two `eval`s, or an `eval` and an `import-tau2`, started together into one folder. One
  writes; the other stops with one sentence naming the holder, and writes nothing.
- disk: `run`, `eval` and `import-tau2` into a tmpfs too small for their output (mounted here; needs
  root, or the fault is reported as not tried). Exit 2 and one sentence naming the file and what was
  kept; the same command run after the disk is made bigger completes.
- sigint: Ctrl-C sent to an `eval`'s process group once (it finishes the runs in flight and stops)
  or twice (it stops now) at a random moment: exit 130 or 0, never a traceback; a resume completes.
- huge: a model whose reply holds an argument past the cap, a call id or tool name of megabytes,
  unparseable arguments of megabytes, 100 calls, or a text of 10 MB. The run ends, no write runs
  without the gate's ALLOW, and every reader (why, regress, audit, report, the replay) reads it.
- edited: a shipped session with a line duplicated, two lines swapped, a block moved, a decision
  copied and renumbered, a line dropped or the last line cut. `why`, `regress` and `replay` agree:
  the same one sentence for a file refused, and a file accepted opens in the replay and steps to
  every gate decision without a crash.

The model is the loopback server (tests/loopback.py) in this process, replaying a gold run of the
airline domain with 40 ms a call. `--quick` is the slice CI runs (about 25 s on 2 cores).

    python benchmarks/faults.py [--quick] [--seed 1] [--fault kill --fault disk] [--tries N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.eval import by_the_system, responder_for  # noqa: E402
from ledger_tui.engine.errors import LedgerTuiError  # noqa: E402
from ledger_tui.engine.events import GateDecided, SessionEnded, ToolCallProposed, ToolResult, Verdict  # noqa: E402
from ledger_tui.engine.store.trajectories import read_trajectory  # noqa: E402
from ledger_tui.eval.results import load_results
from tests.loopback import LoopbackServer  # noqa: E402

TASK = "airline_01_cancel_recent_booking"
RUNS = 8  # trials of TASK in an eval the faults interrupt
SAMPLES = ROOT / "tests" / "data" / "tau2_runs_sample"
REAL_RUNS = ROOT.parent / "shared" / "tau2-runs"  # the development set, where this checkout has it
TIMEOUT = 180  # seconds any one command may take before the try counts as a hang
HUGE_MARK = "HUGE-FAULT"


@dataclass
class Context:
    rng: random.Random
    work: Path
    base_url: str
    notes: dict[str, int] = field(default_factory=dict)

    def note(self, what: str) -> None:
        self.notes[what] = self.notes.get(what, 0) + 1


class Failed(Exception):
    """A promise broken; the message says which."""


def check(ok: object, what: str) -> None:
    if not ok:
        raise Failed(what)


# ----------------------------------------------------------------------------- commands


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "ledger_tui", *args]


def start(*args: str) -> subprocess.Popen[str]:
    """A command in its own process group, as a terminal starts it (signals reach its workers)."""
    return subprocess.Popen(command(*args), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise Failed(f"`{' '.join(proc.args[3:6])} …` was still running after {TIMEOUT} s") from None
    return proc.returncode, out, err


def run(*args: str) -> tuple[int, str, str]:
    return finish(start(*args))


def no_traceback(err: str, what: str) -> None:
    check("Traceback" not in err and "unhandled exception" not in err, f"{what} printed a traceback: {err.strip()[-300:]!r}")


def one_sentence(err: str, what: str) -> str:
    no_traceback(err, what)
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("warning:")]
    check(len(lines) == 1 and lines[0].startswith("error: "), f"{what} did not stop in one sentence: {err.strip()[-300:]!r}")
    return lines[0]


def eval_args(ctx: Context, out: Path, workers: int = 1, runs: int = RUNS) -> tuple[str, ...]:
    return ("eval", "-d", "airline", "--tasks", TASK, "-n", str(runs), "-c", "2", "--workers", str(workers),
            "--base-url", ctx.base_url, "--api-key", "k", "--agent-model", "loopback", "--context-window", "128000",
            "-o", str(out))


def kill_group(proc: subprocess.Popen[str], sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def recorded(out: Path) -> list:
    """The rows of results.jsonl; each names a whole trajectory that ends the session."""
    if not (out / "results.jsonl").exists():
        return []
    rows = load_results(out)
    for row in rows:
        events = read_trajectory(Path(row.trajectory)).events
        check(events and isinstance(events[-1], SessionEnded), f"{row.trajectory} is recorded as finished but does not end its session")
    return rows


def complete(ctx: Context, out: Path, args: tuple[str, ...], runs: int = RUNS) -> None:
    """`args` run again completes the eval in `out`: every run once, and `report` counts them."""
    code, _, err = run(*args)
    no_traceback(err, "the resume")
    check(code == 0, f"the resume exited {code}: {err.strip()[-300:]!r}")
    rows = recorded(out)
    keys = [(r.task_id, r.trial, r.mode) for r in rows]
    check(len(keys) == len(set(keys)) == runs, f"after the resume results.jsonl holds {len(keys)} rows ({len(set(keys))} runs) for {runs}")
    code, shown, err = run("report", str(out))
    check(code == 0 and f"{runs} runs" in shown, f"report after the resume: exit {code}, {shown[:200]!r} {err[-200:]!r}")


def imported_completely(source: Path, out: Path) -> None:
    code, _, err = run("import-tau2", str(source), "--out", str(out))
    no_traceback(err, "import-tau2 again")
    check(code == 0, f"import-tau2 again exited {code}: {err.strip()[-300:]!r}")
    manifest = json.loads((out / "import-tau2.json").read_text())
    check(manifest.get("complete") is True, "import-tau2 again left the manifest incomplete")
    for name in manifest["files"]:
        check(read_trajectory(out / name).warnings == [], f"{name} of the import reads with warnings")


def tau2_source(ctx: Context) -> Path:
    """A τ²-bench results file: the real runs where this checkout has them (large), else a sample."""
    real = sorted(REAL_RUNS.glob("*.json")) if REAL_RUNS.is_dir() else []
    return ctx.rng.choice(real or sorted(SAMPLES.glob("*.json")))


# ----------------------------------------------------------------------------- faults


def kill(ctx: Context, i: int) -> None:
    out = ctx.work / f"kill-{i}"
    if i % 3 == 2:  # an import
        source = tau2_source(ctx)
        proc = start("import-tau2", str(source), "--out", str(out))
        time.sleep(ctx.rng.uniform(0.1, 0.6))
        ctx.note("import killed mid-work" if proc.poll() is None else "import finished before the kill")
        kill_group(proc, signal.SIGKILL)
        proc.communicate()
        imported_completely(source, out)
        return
    args = eval_args(ctx, out, workers=1 + i % 2)
    proc = start(*args)
    time.sleep(ctx.rng.uniform(0.5, 2.5))
    ctx.note("eval killed mid-work" if proc.poll() is None else "eval finished before the kill")
    kill_group(proc, signal.SIGKILL)
    proc.communicate()
    recorded(out)
    complete(ctx, out, args)


def writers(ctx: Context, i: int) -> None:
    out = ctx.work / f"writers-{i}"
    first = eval_args(ctx, out)
    second = ("import-tau2", str(tau2_source(ctx)), "--out", str(out)) if i % 2 else first
    procs = [start(*first), start(*second)]
    results = [finish(p) for p in procs]
    codes = sorted(code for code, _, _ in results)
    check(codes == [0, 2], f"two writers into one folder exited {codes} (one should write, one stop)")
    _, _, err = next(r for r in results if r[0] == 2)
    line = one_sentence(err, "the second writer")
    check("is being written by" in line, f"the second writer's sentence does not name the holder: {line!r}")
    if any(code == 0 and "eval" in p.args for p, (code, _, _) in zip(procs, results)):
        rows = recorded(out)
        check(len(rows) == RUNS, f"the eval that wrote holds {len(rows)} rows for {RUNS} runs")
        check(not (out / "import-tau2.json").exists(), "the refused import wrote into the folder")
    else:
        check(not (out / "results.jsonl").exists(), "the refused eval wrote into the folder")


class Tmpfs:
    """A tmpfs of `size` at `path`, made bigger with `grow()`, unmounted on exit."""

    def __init__(self, path: Path, size: str) -> None:
        self.path, self.size = path, size

    def __enter__(self) -> Path:
        self.path.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={self.size}", "tmpfs", str(self.path)], check=True,
                       capture_output=True)
        return self.path

    def grow(self) -> None:
        subprocess.run(["mount", "-o", "remount,size=256m", str(self.path)], check=True, capture_output=True)

    def __exit__(self, *_: object) -> None:
        subprocess.run(["umount", "-l", str(self.path)], capture_output=True)


def can_mount() -> bool:
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    try:
        with Tmpfs(Path(tempfile.mkdtemp(prefix="ledger-tui-fault-")), "64k"):
            return True
    except (subprocess.CalledProcessError, OSError):
        return False


def disk(ctx: Context, i: int) -> None:
    kind = ("run", "eval", "import")[i % 3]
    size = ctx.rng.choice(("6k", "10k", "14k")) if kind == "run" else ctx.rng.choice(("48k", "96k", "160k"))
    disk_ = Tmpfs(ctx.work / f"disk-{i}", size)
    with disk_ as mounted:
        if kind == "run":
            out = mounted / "s.jsonl"
            args: tuple[str, ...] = ("run", "--script", "airline/cancel_blocked", "--out", str(out), "--no-timestamps", "--force")
        elif kind == "eval":
            out = mounted / "eval"
            args = eval_args(ctx, out)
        else:
            out = mounted / "imported"
            args = ("import-tau2", str(sorted(SAMPLES.glob("*telecom*.json"))[0]), "--out", str(out))
        code, _, err = run(*args)
        if code == 0:  # it fitted: nothing to check but the output
            ctx.note(f"{kind} fitted in {size}")
        else:
            line = one_sentence(err, f"{kind} on a full disk")
            check(code == 2 and line.startswith("error: Cannot write ") and "No space left on device" in line,
                  f"{kind} on a full disk: exit {code}, {line!r}")
            ctx.note(f"{kind} stopped by a full disk")
        disk_.grow()
        if kind == "run":
            code, _, err = run(*args)
            check(code == 0 and read_trajectory(out).warnings == [], f"run again on a bigger disk: exit {code}, {err[-200:]!r}")
        elif kind == "eval":
            recorded(out)
            complete(ctx, out, args)
        else:
            imported_completely(Path(args[1]), out)


def sigint(ctx: Context, i: int) -> None:
    out = ctx.work / f"sigint-{i}"
    args = eval_args(ctx, out, workers=1 + i % 2)
    twice = i % 3 == 1
    proc = start(*args)
    time.sleep(ctx.rng.uniform(0.5, 2.5))
    landed = proc.poll() is None
    kill_group(proc, signal.SIGINT)
    if twice:
        time.sleep(ctx.rng.uniform(0.05, 0.5))
        kill_group(proc, signal.SIGINT)
    code, stdout, err = finish(proc)
    # A Ctrl-C that lands after the eval said its last line, while the interpreter ends (its own
    # handler already gone), ends the process by the signal, as any program's: nothing of the
    # eval's is left to do or to say. Seen under load, where the eval ends within the 0.5-2.5 s.
    said_last = stdout.rstrip().splitlines()[-1:]
    ending = code == -signal.SIGINT and said_last != [] and said_last[0].startswith("summary ")
    ctx.note(f"Ctrl-C {'twice' if twice else 'once'} {'as the interpreter ended' if ending else 'mid-work' if landed else 'after the eval ended'}")
    no_traceback(err, "eval after Ctrl-C")
    check(code in (0, 130) or ending, f"eval after Ctrl-C exited {code}: {err.strip()[-300:]!r} stdout tail {stdout.strip()[-200:]!r}")
    if code == 130:
        said = [line for line in err.splitlines() if line.strip()]
        check(said and said[-1].startswith("interrupted") and "running the same command again" in said[-1],
              f"eval after Ctrl-C did not end in the sentence saying what was kept: {err.strip()[-300:]!r}")
    recorded(out)
    complete(ctx, out, args)


def _huge_reply(kind: str) -> dict:
    big = "X" * 1_000_000
    if kind == "argument":
        return {"text": HUGE_MARK, "tool_calls": [{"name": "cancel_reservation", "arguments": {"reservation_id": big}}]}
    if kind == "id":
        return {"text": HUGE_MARK, "tool_calls": [{"id": big, "name": "get_user_details", "arguments": {"user_id": "x"}}]}
    if kind == "name":
        return {"text": HUGE_MARK, "tool_calls": [{"name": big, "arguments": {}}]}
    if kind == "broken":
        return {"text": HUGE_MARK, "tool_calls": [{"name": "cancel_reservation", "arguments": "{" + '"a": [' * 400_000}]}
    if kind == "calls":
        return {"text": HUGE_MARK, "tool_calls": [{"name": "cancel_reservation", "arguments": {"reservation_id": f"R{n}"}} for n in range(100)]}
    return {"text": HUGE_MARK + "Y" * 10_000_000}


HUGE_KINDS = ("argument", "id", "name", "broken", "calls", "text")


class HugeOnce:
    """The gold replay, with one hostile reply before the agent's first turn; the hostile turn and
    what answered it are taken out of the conversation before the replay counts its turns."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.replay = responder_for("airline")

    def __call__(self, request: dict) -> dict:
        messages = request["messages"]
        if messages[0]["content"].startswith("You are role-playing a customer"):
            return self.replay(request)
        hostile = [m for m in messages if m["role"] == "assistant" and str(m.get("content") or "").startswith(HUGE_MARK)]
        if not hostile and sum(1 for m in messages if m["role"] == "assistant" and not by_the_system(m)) == 1:
            return _huge_reply(self.kind)
        ids = {c["id"] for m in hostile for c in m.get("tool_calls") or []}
        kept = [m for m in messages if m not in hostile and m.get("tool_call_id") not in ids]
        return self.replay({**request, "messages": kept})


def every_write_allowed(events: list) -> None:
    kinds = {e.call.id: e.kind for e in events if isinstance(e, ToolCallProposed)}
    allowed = {e.decision.call.id for e in events if isinstance(e, GateDecided) and e.decision.verdict == Verdict.ALLOW}
    for e in events:
        if isinstance(e, ToolResult) and e.executed and kinds.get(e.call_id) == "write":
            check(e.call_id in allowed, f"write {e.name} ({e.call_id[:40]}) ran without ALLOW")


def huge(ctx: Context, i: int) -> None:
    kind = HUGE_KINDS[i % len(HUGE_KINDS)]
    out = ctx.work / f"huge-{i}"
    with LoopbackServer(HugeOnce(kind), latency=0.01, keep_requests=False) as server:
        args = ("eval", "-d", "airline", "--tasks", TASK, "-n", "1", "--base-url", server.base_url, "--api-key", "k",
                "--agent-model", "loopback", "--context-window", "128000", "-o", str(out))
        code, _, err = run(*args)
    no_traceback(err, f"eval with a {kind} reply")
    check(code == 0, f"eval with a {kind} reply exited {code}: {err.strip()[-300:]!r}")
    rows = recorded(out)
    check(len(rows) == 1, f"eval with a {kind} reply recorded {len(rows)} runs")
    path = Path(rows[0].trajectory)
    every_write_allowed(read_trajectory(path).events)
    for reader in (("why", str(path)), ("regress", str(path)), ("audit", str(out)), ("report", str(out))):
        code, _, err = run(*reader)
        no_traceback(err, f"{reader[0]} of the {kind} run")
        check(code in (0, 1) and "refuse" not in err, f"{reader[0]} of the {kind} run: exit {code}, {err.strip()[-300:]!r}")
    replay_steps(path)
    ctx.note(f"huge {kind}")


def replay_steps(path: Path) -> None:
    """The replay opens `path` and steps to every gate decision and back, headless."""
    from ledger_tui.ui.app import make_app

    async def go() -> None:
        app = make_app(trajectory=path)
        async with app.run_test(size=(120, 40)) as pilot:
            for key in ("home", "n", "n", "enter", "escape", "p", "end"):
                await pilot.press(key)
                await pilot.pause()

    try:
        asyncio.run(go())
    except LedgerTuiError:
        raise
    except Exception as exc:  # a crash of the replay is the failure this looks for
        raise Failed(f"the replay of {path.name} crashed: {type(exc).__name__}: {exc}") from None


def _edit(rng: random.Random, lines: list[str]) -> tuple[str, list[str] | str]:
    n = len(lines)
    kind = rng.choice(("duplicate", "swap", "move", "copy decision renumbered", "drop", "cut"))
    if kind == "duplicate":
        k = rng.randrange(1, n)
        return kind, lines[: k + 1] + [lines[k]] + lines[k + 1 :]
    if kind == "swap":
        k = rng.randrange(1, n - 1)
        return kind, lines[:k] + [lines[k + 1], lines[k]] + lines[k + 2 :]
    if kind == "move":
        a = rng.randrange(1, n - 3)
        b = rng.randrange(a + 1, min(n, a + 6))
        block, rest = lines[a:b], lines[:a] + lines[b:]
        at = rng.choice([j for j in range(1, len(rest) + 1) if j != a] or [1])
        return kind, rest[:at] + block + rest[at:]
    if kind == "copy decision renumbered":
        decisions = [k for k, line in enumerate(lines) if '"gate_decision"' in line]
        if not decisions:
            return _edit(rng, lines)
        k = rng.choice(decisions)
        copied = lines[: k + 1] + [lines[k]] + lines[k + 1 :]
        return kind, [json.dumps({**json.loads(line), "seq": s}) for s, line in enumerate(copied)]
    if kind == "drop":
        k = rng.randrange(1, n)
        return kind, lines[:k] + lines[k + 1 :]
    text = "\n".join(lines) + "\n"
    return kind, text[: len(text) - rng.randrange(2, max(3, len(lines[-1])))]


def edited(ctx: Context, i: int) -> None:
    source = ctx.rng.choice(sorted((ROOT / "sessions").glob("*.jsonl")))
    kind, edit = _edit(ctx.rng, source.read_text().splitlines())
    path = ctx.work / f"edited-{i}.jsonl"
    path.write_text(edit if isinstance(edit, str) else "\n".join(edit) + "\n")
    try:
        read_trajectory(path)
        refused = None
    except LedgerTuiError as exc:
        refused = str(exc)
    ctx.note(f"{kind}: {'refused' if refused else 'accepted'}")
    if refused is None:
        replay_steps(path)
        for reader in ("why", "regress"):
            code, _, err = run(reader, str(path))
            no_traceback(err, f"{reader} of a file with a line {kind}")
        return
    said = set()
    for reader in ("why", "regress", "replay"):
        code, _, err = run(reader, str(path))
        check(code != 0, f"{reader} accepted a file read_trajectory refuses ({kind}): {refused}")
        said.add(one_sentence(err, f"{reader} of a file with a line {kind}"))
    check(len(said) == 1, f"why, regress and replay say different things of one file ({kind}): {sorted(said)}")
    check(refused in said.pop(), f"the commands do not say what the reader says ({kind}): {refused!r}")


FAULTS: dict[str, Callable[[Context, int], None]] = {
    "kill": kill, "writers": writers, "disk": disk, "sigint": sigint, "huge": huge, "edited": edited,
}
FULL = {"kill": 15, "writers": 4, "disk": 6, "sigint": 9, "huge": 6, "edited": 40}
QUICK = {"kill": 1, "writers": 1, "disk": 1, "sigint": 1, "huge": 1, "edited": 2}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the bounded slice CI runs")
    parser.add_argument("--fault", action="append", choices=list(FAULTS), help="only this fault (repeatable)")
    parser.add_argument("--tries", type=int, help="tries of each fault (default: the slice's or the full set's)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: a new one, printed)")
    options = parser.parse_args()
    chosen_seed = options.seed if options.seed is not None else random.randrange(10**6)
    counts = QUICK if options.quick else FULL
    mountable = can_mount()
    print(f"seed {chosen_seed}; {'quick slice' if options.quick else 'full set'}")
    print(f"{'fault':<10} {'tried':>6} {'failed':>7} {'seconds':>8}")
    failures: list[str] = []
    notes: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="ledger-tui-faults-") as tmp, \
            LoopbackServer(responder_for("airline"), latency=0.04, keep_requests=False) as server:
        for name in options.fault or list(FAULTS):
            if name == "disk" and not mountable:
                print(f"{name:<10} {'—':>6} {'—':>7} {'—':>8}  not tried: mounting a small tmpfs needs root")
                continue
            ctx = Context(random.Random(f"{chosen_seed}-{name}"), Path(tmp), server.base_url)
            tries = options.tries or counts[name]
            failed = 0
            started = time.perf_counter()
            for i in range(tries):
                try:
                    FAULTS[name](ctx, i)
                except (Failed, LedgerTuiError, OSError, ValueError) as exc:
                    failed += 1
                    failures.append(f"{name} #{i}: {exc}")
            print(f"{name:<10} {tries:>6} {failed:>7} {time.perf_counter() - started:>8.1f}")
            for what, n in ctx.notes.items():
                notes[f"{name}: {what}"] = n
    if notes:
        print("where the faults landed: " + "; ".join(f"{what} ×{n}" for what, n in sorted(notes.items())))
    for failure in failures[:10]:
        print(f"FAILED {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

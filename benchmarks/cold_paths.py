"""The cold paths, from the CLI, as a user meets them (issue 31, item 4).

- `ledger-tui replay` of a 100,000-event trajectory (`--events N`; the shipped session
  `sessions/telecom-overdue-bill.jsonl` looped, as `benchmarks/ui.py` makes it): wall time from
  starting the command to the first frame that shows the last step (target ≤ 1.5 s), and the
  process's peak memory then (target ≤ 3× the file). The command runs in a pseudo-terminal of
  200×50; the first paint is the first time the terminal receives the replay bar's counter at the
  last step, `step N-1/N-1`. The process is then stopped; its peak resident memory is what the
  kernel reports for it (`ru_maxrss`; see `write_looped` for why the file is written by a child).
- `ledger-tui why` on the same file: wall time to exit (target ≤ 0.5 s) and peak memory.
- what a typed fast path could save on reading (`--only reader`, in process): each line's bytes
  validated into its event (`validate_json`, what the reader does) against each line only parsed as JSON
  (pydantic-core's own parser, `from_json`, no model and no check): the floor of any fast path
  that parses the line and builds the event in Python (`model_construct` or the like).
- `ledger-tui report` on 1,000 trajectories (the folder `benchmarks/report.py` builds): wall time
  to exit (target ≤ 0.4 s).

Each figure is the median of `--rounds` (3) runs, each a fresh interpreter (imports included:
"cold" means a new process, the file in the page cache as a user's second look at it finds it), with
the CPU time the runs took and the load average: on a shared machine, compare CPU times measured
under the same load.

The commands run as an installed ledger-tui runs: the project's bytecode is compiled first
(`python -m compileall -q ledger_tui domains`, as pip does when it installs a package) and the
commands run without PYTHONDONTWRITEBYTECODE in their environment. With it set (as in a shell that
keeps source trees free of `__pycache__`), every command would compile the modules it imports from
source first: about 0.1 s more for `report`, which a user of the installed package never waits.
`--from-source` measures that way instead: the environment as it is, and the project's
`__pycache__` folders removed first (a set PYTHONDONTWRITEBYTECODE stops writing them, not reading).
Run: `python benchmarks/cold_paths.py`. `--only replay,why,reader,report` picks some.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.report import build as build_report_folder  # noqa: E402
from benchmarks.ui import SESSION  # noqa: E402

CLI = [sys.executable, "-m", "ledger_tui"]
# the environment of the measured commands: the bytecode compiled once is used, as when installed
PROJECT = (ROOT / "ledger_tui", ROOT / "domains")
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def compile_bytecode() -> None:
    """Compile the project's modules (the package and the shipped domains) to bytecode, as pip does
    when it installs ledger-tui."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", *map(str, PROJECT)], check=True, env=ENV)


def remove_bytecode() -> None:
    """Remove the project's compiled modules (`--from-source`): every command compiles what it imports."""
    for folder in PROJECT:
        for cache in folder.rglob("__pycache__"):
            shutil.rmtree(cache)


def replay_to_first_paint(path: Path, last: int, timeout: float = 60.0) -> tuple[float, int, float]:
    """(wall seconds to the first frame at the last step, peak resident bytes, CPU seconds) of
    `ledger-tui replay path`."""
    marker = f"step {last}/{last}".encode()
    started = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: the command, in the terminal
        env = {**ENV, "TERM": "xterm-256color"}
        env.pop("TEXTUAL", None)
        os.chdir(ROOT)
        os.execve(CLI[0], [*CLI, "replay", str(path)], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    seen = b""
    painted = None
    try:
        while painted is None:
            if time.perf_counter() - started > timeout:
                raise RuntimeError(f"no first paint within {timeout:.0f} s; the terminal showed {seen[-400:]!r}")
            ready, _, _ = select.select([fd], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                raise RuntimeError(f"replay ended before its first paint; the terminal showed {seen[-400:]!r}") from None
            seen = seen[-200:] + chunk
            if marker in seen:
                painted = time.perf_counter() - started
    finally:
        os.kill(pid, signal.SIGKILL)
        _, _, usage = os.wait4(pid, 0)
        os.close(fd)
    return painted, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime


def write_looped(path: Path, session: Path, events: int) -> None:
    """Write `session` looped to `events` events at `path`, in a child process. Built in this one,
    the file's lines would raise this process's peak resident memory to ~650 MB, and every command
    started from it would report that peak as its own: Linux keeps a process's peak across fork and
    exec (`ru_maxrss`), so a command's figure is at least what this process ever held (`python -c
    pass` then reports 638 MB). This process stays at its imports' ~55 MB, below any command's."""
    code = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
        "from benchmarks.ui import looped_trajectory; "
        "Path(sys.argv[2]).write_text('\\n'.join(looped_trajectory(Path(sys.argv[3]), int(sys.argv[4]))) + '\\n', encoding='utf-8')"
    )
    subprocess.run([sys.executable, "-c", code, str(ROOT), str(path), str(session), str(events)], check=True)


def command(args: list[str]) -> tuple[float, int, float]:
    """(wall seconds, peak resident bytes, CPU seconds) of one CLI command run to its exit (status 0 or 1)."""
    started = time.perf_counter()
    proc = subprocess.Popen([*CLI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"ledger-tui {' '.join(args)} failed ({proc.returncode}): {err[-400:]}")
    return wall, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime


def show(
    name: str, seconds: list[float], target: float, memory: list[int] | None = None, file_bytes: int = 0, cpu: list[float] | None = None
) -> None:
    """A figure's median, its runs and its target; with `cpu`, the CPU seconds the runs took (user
    and system): on a shared machine, wall time grows with the load and CPU time much less."""
    median = statistics.median(seconds)
    verdict = "ok" if median <= target else "MISSED"
    line = f"{name:<44} median {median:6.2f} s  (runs {', '.join(f'{s:.2f}' for s in seconds)})  target ≤ {target:g} s  {verdict}"
    print(line)
    if cpu:
        print(f"{'':<44} CPU {statistics.median(cpu):6.2f} s  (runs {', '.join(f'{s:.2f}' for s in cpu)})  load {os.getloadavg()[0]:.1f}")
    if memory:
        peak = statistics.median(memory)
        ratio = peak / file_bytes if file_bytes else 0.0
        bound = "ok" if ratio <= 3 else "MISSED"
        print(f"{'':<44} peak memory {peak / 1e6:6.0f} MB = {ratio:.1f}× the file ({file_bytes / 1e6:.0f} MB)  target ≤ 3×  {bound}")


def reader_floor(path: Path, rounds: int) -> None:
    import gc

    from pydantic_core import from_json

    from ledger_tui.engine.events import EVENT_ADAPTER

    lines = [line for line in path.read_bytes().split(b"\n") if line.strip()]  # the reader validates bytes
    for name, step in (("validate each line (the reader)", EVENT_ADAPTER.validate_json), ("parse each line only (a fast path's floor)", from_json)):
        times = []
        for _ in range(rounds):
            gc.disable()
            started = time.perf_counter()
            for line in lines:
                step(line)
            times.append(time.perf_counter() - started)
            gc.enable()
        print(f"{name:<44} median {statistics.median(times):6.2f} s  (runs {', '.join(f'{t:.2f}' for t in times)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--session", type=Path, default=SESSION)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="replay,why,reader,report")
    parser.add_argument(
        "--from-source", action="store_true", help="remove the project's bytecode and keep PYTHONDONTWRITEBYTECODE as it is"
    )
    args = parser.parse_args()
    only = set(args.only.split(","))
    if args.from_source:
        ENV.update(os.environ)
        remove_bytecode()
    else:
        compile_bytecode()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"looped-{args.events}.jsonl"
        if only & {"replay", "why", "reader"}:
            write_looped(path, args.session, args.events)
            size = path.stat().st_size
            print(f"{args.events:,} events: {args.session.name} looped, {size / 1e6:.0f} MB")
            command(["why", str(path)])  # warm the page cache
        if "replay" in only:
            runs = [replay_to_first_paint(path, args.events - 1) for _ in range(args.rounds)]
            show(f"replay to first paint, {args.events:,} events", [r[0] for r in runs], 1.5, [r[1] for r in runs], size, [r[2] for r in runs])
        if "why" in only:
            runs = [command(["why", str(path)]) for _ in range(args.rounds)]
            show(f"why, {args.events:,} events", [r[0] for r in runs], 0.5, [r[1] for r in runs], size, [r[2] for r in runs])
        if "reader" in only:
            reader_floor(path, args.rounds)
        if "report" in only:
            out = Path(tmp) / "eval"
            build_report_folder(out)
            report = ["report", str(out), "--tasks", str(out / "tasks.json")]
            command(report)
            runs = [command(report) for _ in range(args.rounds)]
            show("report, 1,000 trajectories", [r[0] for r in runs], 0.4, cpu=[r[2] for r in runs])


if __name__ == "__main__":
    main()

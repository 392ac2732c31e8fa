"""`ledger-tui ARGS` run in the test's own process, answering what a subprocess would.

Most CLI tests are about what a command prints, writes and exits with, not about the process: run
as `python -m ledger_tui`, each paid an interpreter start and the CLI's imports (0.3–0.5 s of CPU,
some hundreds of times a suite run). `ledger_tui` here calls `cli.main`, which is what the console
script calls, and gives back a `subprocess.CompletedProcess` (exit status, stdout, stderr) so a test
reads the same either way. What only a process shows stays in real processes (exit on a signal,
Ctrl-C, kill -9, locks between processes, the installed entry point): tests/cli/test_cli.py,
tests/cli/test_one_writer.py, tests/cli/test_eval_workers_cli.py, tests/smoke, benchmarks/faults.py.

Around the call: sys.argv, the working folder, os.environ and the SIGINT handler are set and put
back, and `__main__` is a module like the console script's (click names the program after it:
"Usage: ledger-tui …", not "python -m pytest.ledger-tui"); warnings print on stderr as Python's defaults would print them in a fresh process (pytest
would record them instead); an exception that escapes `main` is a traceback on stderr and exit
status 1, as the interpreter makes it.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import traceback
import types
import warnings
from pathlib import Path
from typing import Any


def ledger_tui(*args: Any, cwd: Path | str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`ledger-tui ARGS` in `cwd` (by default the current folder) with environment `env` (by default
    this process's): its exit status, stdout and stderr."""
    from ledger_tui import cli

    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    saved_argv, saved_cwd, saved_env, saved_sigint = sys.argv, os.getcwd(), dict(os.environ), signal.getsignal(signal.SIGINT)
    saved_main = sys.modules["__main__"]
    try:
        sys.argv = ["ledger-tui", *argv]
        sys.modules["__main__"] = types.ModuleType("__main__")
        if cwd is not None:
            os.chdir(cwd)
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _warnings_on(err):
            status = _status_of(cli.main)
    finally:
        sys.modules["__main__"] = saved_main
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        if os.environ != saved_env:
            os.environ.clear()
            os.environ.update(saved_env)
        signal.signal(signal.SIGINT, saved_sigint)
    return subprocess.CompletedProcess(["ledger-tui", *argv], status, out.getvalue(), err.getvalue())


def _status_of(main: Any) -> int:
    """The exit status the interpreter would give `main`: SystemExit's code, or 1 and the traceback."""
    try:
        main()
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except Exception:
        traceback.print_exc()
        return 1
    return 0


@contextlib.contextmanager
def _warnings_on(stream: io.StringIO):
    """Warnings shown on `stream` under the filters a fresh interpreter starts with."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
            warnings.simplefilter("ignore", category)
        warnings.showwarning = lambda message, category, filename, lineno, file=None, line=None: stream.write(
            warnings.formatwarning(message, category, filename, lineno, line)
        )
        yield

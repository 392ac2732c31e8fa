"""The headless command line: run scripted sessions and gold agents, explain verdicts, list domains,
and open the workbench (`play`, `replay`).

This module is the entry point (`ledger-tui`, `python -m ledger_tui`): it registers the commands of
`ledger_tui.commands`, in the order `--help` lists them, and translates what a command raises for
the terminal. Every failure a user can meet is a `LedgerTuiError` whose message is one sentence
naming the fix; `main` prints it and exits with status 2. Tracebacks are for bugs only.
"""

from __future__ import annotations

import atexit
import errno
import functools
import gc
import sys
from typing import Any, Callable

# The imports below make most of a cold command's objects (modules, classes, pydantic schemas),
# all long-lived, and the cyclic collector would scan them again and again while they are made
# (about 20 ms of CPU). It is paused while they are made, and they go to its oldest generation
# at once (`gc.freeze` then `gc.unfreeze`: nothing is left set aside). Every command runs with
# the collector as it was found (tests/cli/test_collector.py).
_collecting = gc.isenabled()
gc.disable()
try:
    import typer

    from ledger_tui.commands import domains, evaluation, export, reading, running
    from ledger_tui.commands.shared import say
    from ledger_tui.engine.errors import LedgerTuiError
finally:
    if gc.get_freeze_count() == 0:  # an embedding process's own frozen objects stay frozen
        gc.freeze()
        gc.unfreeze()
    if _collecting:
        gc.enable()

def _typer() -> typer.Typer:
    return typer.Typer(
        add_completion=False,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        help="ledger-tui: a workbench for policy-adherent tool-calling agents (ledger + policy gate).",
    )


app = _typer()


def _version(value: bool) -> None:
    if value:
        from ledger_tui import __version__

        say(f"ledger-tui {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """ledger-tui: a workbench for policy-adherent tool-calling agents (ledger + policy gate)."""


# (name, command) in the order `ledger-tui --help` lists them
COMMANDS: tuple[tuple[str, Callable[..., Any]], ...] = (
    ("domains", domains.domains),
    ("new-domain", domains.new_domain),
    ("check-domain", domains.check_domain),
    ("schema", export.schema),
    ("export", export.export),
    ("examples", domains.examples),
    ("tasks", evaluation.list_tasks),
    ("run", running.run),
    ("why", reading.why),
    ("play", running.play),
    ("replay", reading.replay),
    ("eval", evaluation.eval_command),
    ("import-tau2", evaluation.import_tau2),
    ("grade", evaluation.grade),
    ("audit", reading.audit),
    ("regress", reading.regress),
    ("diff", reading.diff),
    ("report", evaluation.report),
    ("browse", reading.browse),
    ("mcp-proxy", running.mcp_proxy),
)
for _name, _command in COMMANDS:
    app.command(_name)(_command)


def _interruptible(command: Callable[..., Any]) -> Callable[..., Any]:
    """The command, saying what Ctrl-C leaves behind: typer turns a KeyboardInterrupt that leaves a
    command into "Aborted!" and exit 1 before `main` sees it."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt:
            say(INTERRUPTED, err=True)
            raise typer.Exit(130) from None

    return run


INTERRUPTED = "interrupted; everything recorded so far is saved."
for _info in app.registered_commands:  # (eval says more: which runs are saved, how to resume)
    _info.callback = _interruptible(_info.callback)  # type: ignore[arg-type]


# What a command that stopped on a write error (a full disk, a read-only folder) kept.
KEPT_ON_WRITE_ERROR = {
    "run": "the trajectory is kept up to its last whole line",
    "play": "the trajectory is kept up to its last whole line",
    "eval": "results.jsonl keeps every run finished before it, and the same command again resumes from there",
    "import-tau2": "the runs imported before it are kept, and importing the same file again completes the folder",
}
WRITE_ERRNOS = frozenset(
    getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EROFS", "EFBIG", "EIO", "EACCES", "EPERM") if hasattr(errno, name)
)


def write_error(exc: OSError, command: str) -> str:
    """One sentence for a write the OS refused: the path, why, what was kept, the fix."""
    where = f" {exc.filename}" if exc.filename else ""
    kept = KEPT_ON_WRITE_ERROR.get(command, "what was written before it is kept")
    return f"Cannot write{where} ({exc.strerror or exc}); {kept}; free some space or write elsewhere (--out), then run it again."


def _app_for(argv: list[str]) -> typer.Typer:
    """The app that runs this command line: when it names a command first, one with that command
    alone (typer makes a click command of every command it holds, reading each one's options,
    before it reads which is run: 9 ms of each start); else the whole app (its help, --version, a
    misspelt command, which it suggests a name for)."""
    name = argv[1] if len(argv) > 1 else ""
    named = [info for info in app.registered_commands if info.name == name]
    if not named:
        return app
    one = _typer()
    one.registered_callback = app.registered_callback
    one.registered_commands = named
    return one


# Commands that read only, after which the process ends without the interpreter's last full
# collection (over a cold start's objects, most of them the imports': 25 ms of `why`'s 0.5 s):
# they are set aside from the collector at exit and the memory goes back with the process. (A
# command that writes keeps the collection: an unclosed file in a cycle is flushed by it.)
ENDS_WITHOUT_COLLECTING = frozenset({"why"})


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ENDS_WITHOUT_COLLECTING:
        atexit.register(gc.freeze)
    try:
        _app_for(sys.argv)()
    except LedgerTuiError as exc:
        say(f"error: {exc}", err=True)
        sys.exit(2)
    except OSError as exc:
        if exc.errno not in WRITE_ERRNOS:
            raise
        command = next((a for a in sys.argv[1:] if not a.startswith("-")), "")
        say(f"error: {write_error(exc, command)}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        say(INTERRUPTED, err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()

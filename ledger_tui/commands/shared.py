"""What every group of commands shares: `say` (every line the CLI prints), the options several
commands take (a model server's, consent, --wide) and the checks that turn a bad value into one
sentence before anything runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.limits import HELPER_MAX_TOKENS
from ledger_tui.engine.outside import shown
from ledger_tui.examples import runs_home


MODES = ("baseline", "ledger", "gate", "full", "irma")
TAU2_DATA_HELP = (
    "Use τ²-bench's data instead: its data/tau2 (or data/tau2/domains) folder, which holds the domain's "
    "folder, or that folder itself (db, tasks, policy)."
)
SPLIT_HELP = "With --tau2-data: a split of the task file's split file, e.g. train, test, base (telecom: small, full too)."
TASK_FILE_HELP = "With --tau2-data: the task file, tasks.json by default (telecom: tasks_full.json, tasks_small.json; 'full' or 'small' for short)."


def say(line: str = "", err: bool = False) -> None:
    """Print one line. Every line the CLI prints goes through here: what it quotes from files,
    models and endpoints (task ids, customer text, call arguments, file names) is shown, never
    obeyed by the terminal (`shown`)."""
    typer.echo(shown(line), err=err)


FORCE_HELP = "Overwrite files that already exist (without it, an existing file is an error and nothing runs)."


def default_out(domain: str, stem: str) -> Path:
    """A new file in the runs folder (`examples.runs_home`), created now: unique even for runs
    started together."""
    from ledger_tui.eval.outputs import fresh_name

    return fresh_name(runs_home(), f"{domain}-{stem}")


# Options of a real model server, shared by `play` and `eval` (see "Real model servers" in the README)
TIMEOUT_HELP = "Seconds one model call may take before it counts as a timeout."
RETRIES_HELP = "Further attempts after a transient failure (rate limit, 5xx, timeout); the SDK itself never resends."
MAX_TOKENS_HELP = "Completion cap per model call (0: none); sent as max_completion_tokens to OpenAI, max_tokens elsewhere."
TEMPERATURE_HELP = "Sampling temperature; not sent unless set (some models refuse it)."
EXTRA_BODY_HELP = "A JSON object merged into every request, for server-specific fields, e.g. '{\"top_k\": 20}'."
HELPER_MODEL_HELP = (
    "Model of IRMA's helper calls, on the same endpoint (default: the agent model); only --mode irma uses it. "
    f"Helper calls have a completion cap of {HELPER_MAX_TOKENS} tokens (or --max-tokens if lower)."
)
CONTEXT_WINDOW_HELP = "The model's context window in tokens (default: asked of the server; unknown: nothing is folded)."
LEDGER_AT_HELP = "Where the task state goes in the prompt: customer (before the latest customer message), end, or system."


# the same options on both commands
Timeout = Annotated[float, typer.Option("--timeout", help=TIMEOUT_HELP)]
Retries = Annotated[int, typer.Option("--retries", help=RETRIES_HELP)]
MaxTokens = Annotated[int, typer.Option("--max-tokens", help=MAX_TOKENS_HELP)]
Temperature = Annotated[Optional[float], typer.Option("--temperature", help=TEMPERATURE_HELP)]
ExtraBody = Annotated[Optional[str], typer.Option("--extra-body", help=EXTRA_BODY_HELP)]
ContextWindow = Annotated[Optional[int], typer.Option("--context-window", help=CONTEXT_WINDOW_HELP)]
LedgerAt = Annotated[str, typer.Option("--ledger-at", help=LEDGER_AT_HELP)]
CONSENT_HELP = (
    "How the customer's consent to a write is observed in modes gate and full: card (the system asks on a card "
    "rendered from the exact call) or text (read from the conversation, as in the paper's free conversation). "
    "Default: card; for run --script, the script's \"consent\", else text."
)
Consent = Annotated[Optional[str], typer.Option("--consent", help=CONSENT_HELP, show_default=False)]
Wide = Annotated[bool, typer.Option("--wide", help="Print tables at full width instead of fitting 80 columns.", metavar="")]


def client_options(timeout: float, retries: int, max_tokens: int, temperature: Optional[float], extra_body: Optional[str]):
    from ledger_tui.engine.model.models import ClientOptions, parse_extra_body

    if timeout <= 0:
        raise LedgerTuiError("--timeout must be a positive number of seconds.")
    return ClientOptions(
        timeout=timeout, retries=max(0, retries), max_tokens=max_tokens or None, temperature=temperature,
        extra_body=parse_extra_body(extra_body),
    )


def check_consent(consent: Optional[str]) -> Optional[str]:
    if consent is not None and consent not in ("card", "text"):
        raise LedgerTuiError(f"Unknown --consent {consent!r}; choose card or text.")
    return consent


def session_options_from(context_window: Optional[int], ledger_at: str, consent: Optional[str] = None) -> dict:
    from ledger_tui.engine.model.prompt import LEDGER_AT

    check_consent(consent)
    if ledger_at not in LEDGER_AT:
        raise LedgerTuiError(f"Unknown --ledger-at {ledger_at!r}; choose one of: {', '.join(LEDGER_AT)}.")
    if context_window is not None and context_window <= 0:
        raise LedgerTuiError("--context-window must be a positive number of tokens.")
    return {"context_window": context_window, "ledger_at": ledger_at, "consent": consent}


def check_db(domain, db: Optional[Path]) -> None:
    """Load `--db` once before anything is written: a file that cannot be used is one sentence and
    leaves no empty session file behind."""
    if db is not None:
        domain.load_db(db)


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise LedgerTuiError(f"Unknown mode {mode!r}; choose one of: {', '.join(MODES)}.")
    return mode


def tui_status(status: int) -> None:
    """The workbench's exit status as the command's: one that failed to start (its error is
    printed above) is not a success."""
    if status:
        say("error: the workbench stopped on an error (printed above); nothing recorded so far is lost.", err=True)
        raise typer.Exit(status)

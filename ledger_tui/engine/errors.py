"""Typed failures a user can meet.

Each one carries a single sentence that names the fix. The CLI and the UI translate them once, at
their edge; nothing inside the engine prints.
"""

from __future__ import annotations


class LedgerTuiError(Exception):
    """Base class: `str(error)` is the one sentence shown to the user."""


class UnknownDomainError(LedgerTuiError):
    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(
            f"Unknown domain {name!r}; choose one of: {', '.join(known)} (see `ledger-tui domains`)."
        )


class ScriptError(LedgerTuiError):
    """A scripted-conversation file that cannot be used."""


class TrajectoryError(LedgerTuiError):
    """A trajectory file that cannot be read at all."""


class ModelError(LedgerTuiError):
    """The model could not produce a turn (endpoint, key, malformed reply)."""


class TransientModelError(ModelError):
    """A failure worth retrying (rate limit, server error, timeout, dropped connection)."""


class MissingApiKeyError(ModelError):
    def __init__(self) -> None:
        super().__init__(
            "No API key: set OPENAI_API_KEY (or pass --api-key), or use a local server with --base-url."
        )


class EndpointUnreachableError(TransientModelError):
    def __init__(self, base_url: str, detail: str) -> None:
        super().__init__(
            f"Cannot reach the model endpoint at {base_url} ({detail}); check --base-url / OPENAI_BASE_URL."
        )


class ModelTimeoutError(TransientModelError):
    def __init__(self, base_url: str, seconds: float, started: bool = False) -> None:
        what = "did not complete its reply" if started else "did not answer"
        super().__init__(
            f"The model endpoint at {base_url} {what} within {seconds:g} s; raise --timeout if the server is busy, or check it."
        )


class ConnectionDroppedError(TransientModelError):
    """The endpoint was reached, then the connection broke before its reply was complete (a
    reset, a crash of the server): worth retrying, an infrastructure error if it lasts."""

    def __init__(self, base_url: str, detail: str) -> None:
        super().__init__(
            f"The model endpoint at {base_url} dropped the connection before its reply was complete ({detail}); "
            "try again, or check the server."
        )


class NotAChatCompletionError(TransientModelError):
    """A reply that is not a chat completion (an HTML page, no choices): the endpoint's fault, not
    the agent's, so the run is an infrastructure error and is redone on resume."""


class ContextWindowExceededError(ModelError):
    """The prompt no longer fits the model's context window: the run ends there, graded as a
    failure of the agent (as τ²-bench counts agent errors)."""


class ScriptExhaustedError(ModelError):
    """A scripted model was asked for a turn it does not have."""


class DatabaseError(LedgerTuiError):
    """A domain database file that cannot be loaded."""


class TaskError(LedgerTuiError):
    """An unknown task id or a malformed task file."""

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


class ScriptExhaustedError(ModelError):
    """A scripted model was asked for a turn it does not have."""


class DatabaseError(LedgerTuiError):
    """A domain database file that cannot be loaded."""


class TaskError(LedgerTuiError):
    """An unknown task id or a malformed task file."""

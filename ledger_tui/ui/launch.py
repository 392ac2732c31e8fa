"""Entry points the CLI calls: `play`, `replay` and `browse`. They build the app with `make_app` and run it."""

from __future__ import annotations

from pathlib import Path

from ledger_tui.engine.domain import Domain
from ledger_tui.engine.models import Model


def play(
    domain: Domain, model: Model | None, mode: str, db_path: Path | None, out: Path, session_options: dict | None = None
) -> None:
    """Live play against `domain`; `model=None` means the operator acts as the agent with /call.
    `session_options` go to the Session (`context_window`, `ledger_at`)."""
    from ledger_tui.ui.app import make_app

    make_app(domain=domain, model=model, mode=mode, db_path=db_path, out=out, session_options=session_options).run()


def replay(path: Path, step: int | None) -> None:
    """Step through the trajectory at `path`, opening at `step` (default: the end)."""
    from ledger_tui.ui.app import make_app

    make_app(trajectory=Path(path), step=step).run()


def browse(folder: Path) -> None:
    """List the runs of an eval or import-tau2 folder; Enter replays one, Escape comes back."""
    from ledger_tui.ui.app import make_app

    make_app(folder=Path(folder)).run()

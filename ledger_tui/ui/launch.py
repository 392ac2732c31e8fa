"""Entry points the CLI calls: `play`, `replay` and `browse`. They build the app with `make_app`,
run it and return its exit status: non-zero when the app failed to start or stopped on an error,
so a workbench that never opened is not a success."""

from __future__ import annotations

from pathlib import Path

from ledger_tui.engine.domain import Domain
from ledger_tui.engine.models import Model


def _run(app) -> int:
    app.run()
    return app.return_code or 0


def play(
    domain: Domain, model: Model | None, mode: str, db_path: Path | None, out: Path, session_options: dict | None = None
) -> int:
    """Live play against `domain`; `model=None` means the operator acts as the agent with /call.
    `session_options` go to the Session (`context_window`, `ledger_at`)."""
    from ledger_tui.ui.app import make_app

    return _run(make_app(domain=domain, model=model, mode=mode, db_path=db_path, out=out, session_options=session_options))


def replay(path: Path, step: int | None) -> int:
    """Step through the trajectory at `path`, opening at `step` (default: the end)."""
    from ledger_tui.ui.app import make_app

    return _run(make_app(trajectory=Path(path), step=step))


def browse(folder: Path) -> int:
    """List the runs of an eval or import-tau2 folder; Enter replays one, Escape comes back."""
    from ledger_tui.ui.app import make_app

    return _run(make_app(folder=Path(folder)))

"""Entry points the CLI calls: `play`, `replay`, `browse` and `diff`. They build the app with
`make_app` (`diff`: the workbench around its screen), run it and return its exit status: non-zero
when the app failed to start or stopped on an error, so a workbench that never opened is not a
success."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (a replay opens without the domain's modules: see ReplayScreen's domain_named)
    from ledger_tui.engine.domain import Domain
    from ledger_tui.engine.model.models import Model
    from ledger_tui.engine.session import Session
    from ledger_tui.engine.store.trajectories import LoadedTrajectory
    from ledger_tui.eval.diff import RunDiff


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


def play_session(session: Session) -> int:
    """Live play on a session already under way (a fork of a recorded run, see fork.py)."""
    from ledger_tui.ui.app import make_app

    return _run(make_app(session=session))


def replay(path: Path, step: int | None, loaded: LoadedTrajectory | None = None) -> int:
    """Step through the trajectory at `path`, opening at `step` (default: the end); `loaded`: the
    file as already read (it is not read again).

    The cyclic collector is paused from here to the first frame: the workbench's modules, its
    widgets and their styles are long-lived objects, made by the thousand, and the collector
    looked through them 130 times on the way (0.03-0.04 s of a replay's first paint). It runs
    again, as it was found, once the first frame is shown or the app has ended before it; the
    replay screen moves what it keeps out of its way when it mounts (`ReplayScreen.on_mount`)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        from ledger_tui.ui.app import make_app

        app = make_app(trajectory=Path(path), loaded=loaded, step=step)
        if collecting:
            app.at_first_frame.append(gc.enable)
        return _run(app)
    finally:
        if collecting:
            gc.enable()


def browse(folder: Path) -> int:
    """List the runs of an eval or import-tau2 folder; Enter replays one, Escape comes back."""
    from ledger_tui.ui.app import make_app

    return _run(make_app(folder=Path(folder)))


def diff(found: RunDiff) -> int:
    """Two runs side by side, opened at the turn where they diverge."""
    from ledger_tui.ui.app import LedgerWorkbench
    from ledger_tui.ui.screens.diff import DiffScreen

    return _run(LedgerWorkbench(DiffScreen(found)))

"""Command palette: the rare actions that do not deserve a key.

Open a saved session, jump to a step, filter the gate log by verdict, export the ledger at the
cursor as JSON; in the run list, filter runs by failure class, domain or mode and sort them. The
provider only finds and names commands; the screen does the work through its intent methods
(`jump_to`, `filter_gate_log`, `export_ledger`, `filter_runs`, `sort_runs`).
"""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content

from ledger_tui.engine.events import Verdict
from ledger_tui.engine.outside import shown
from ledger_tui.examples import runs_home, sessions_folder
from ledger_tui.ui.run_index import SORT_HELP, SORTS

MAX_FILES = 200


def session_files() -> list[Path]:
    """Trajectories in the runs folder, the shipped sessions and the working directory, newest first."""
    found: dict[Path, float] = {}
    runs = runs_home()
    for root in (runs, sessions_folder(), Path(".")):
        if not root.is_dir():
            continue
        pattern = "**/*.jsonl" if root == runs else "*.jsonl"
        for path in root.glob(pattern):
            try:
                found[path] = path.stat().st_mtime
            except OSError:
                continue
            if len(found) >= MAX_FILES:
                break
    return sorted(found, key=lambda p: -found[p])


def _highlighted(matcher: Matcher, name: str) -> Content:
    """The command's name as shown (file names, domains and modes are outside text: never
    markup), with the letters the query matched highlighted."""
    plain = shown(name)
    content = Content(plain)
    for offset in matcher.fuzzy_search.match(matcher.query, plain)[1]:
        if not plain[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


class WorkbenchCommands(Provider):
    """Commands for whichever workbench screen is showing."""

    def _commands(self) -> list[tuple[str, object, str]]:
        screen = self.screen
        out: list[tuple[str, object, str]] = []
        if hasattr(screen, "filter_gate_log"):
            for v in Verdict:
                out.append((f"Filter gate log: only {v.value}", partial(screen.filter_gate_log, v), f"hide every row that is not {v.value}"))
            out.append(("Filter gate log: show all", partial(screen.filter_gate_log, None), "show every gate decision"))
        if hasattr(screen, "filter_runs"):
            index = screen.index
            out.append(("Runs: failed only", partial(screen.filter_runs, failed_only=True), "hide the runs that passed"))
            out.append(("Runs: gate flagged only", partial(screen.filter_runs, gate_flagged=True), "only runs with a REVISE or BLOCK verdict"))
            for cls in index.classes:
                out.append((f"Runs: failure class {cls}", partial(screen.filter_runs, cls=cls), "only failed runs whose primary class is this"))
            for domain in index.domains if len(index.domains) > 1 else ():
                out.append((f"Runs: domain {domain}", partial(screen.filter_runs, domain=domain), "only this domain's runs"))
            for mode in index.modes if len(index.modes) > 1 else ():
                out.append((f"Runs: mode {mode}", partial(screen.filter_runs, mode=mode), "only runs in this mode"))
            out.append(("Runs: clear filters", screen.clear_filters, "show every run"))
            for key in SORTS:
                out.append((f"Sort runs by {key}", partial(screen.sort_runs, key), SORT_HELP[key]))
        if hasattr(screen, "export_ledger"):
            out.append(("Export ledger at the cursor as JSON", screen.export_ledger, "write the ledger as of this step to a .json file"))
        if hasattr(screen, "fork_here"):
            out.append(("Fork a live session from here", screen.fork_here, "answer this turn as the customer in a new session that continues the run"))
        if hasattr(screen, "jump_to"):
            out.append(("Jump to step…", partial(self.app.notify, "Type the step number in the palette, e.g. 'step 12'."), "type 'step N' here"))
        for path in session_files():
            out.append((f"Open session {path}", partial(self.app.open_replay, path), "replay this trajectory"))
        return out

    async def discover(self) -> Hits:
        for name, action, help_text in self._commands():
            if name.startswith("Open session"):
                continue
            yield DiscoveryHit(Content(shown(name)), action, text=name, help=help_text)  # type: ignore[arg-type]

    async def search(self, query: str) -> Hits:
        screen = self.screen
        number = re.search(r"-?\d+", query)
        if number and hasattr(screen, "jump_to"):
            step = int(number.group())
            yield Hit(100, f"Jump to step {step}", partial(screen.jump_to, step), help="move the replay cursor")
        matcher = self.matcher(query)
        for name, action, help_text in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, _highlighted(matcher, name), action, text=name, help=help_text)  # type: ignore[arg-type]

"""A crash of the workbench (a bug, not bad input: that is one sentence) ends it with exit status 1
and a traceback that shows code, never the values of local variables (Textual's default shows
them, and in this app they hold customer records and messages). Issue 27, item 4."""

from __future__ import annotations

import subprocess
import sys

from tests.cli.test_cli import ROOT

CRASH = """
import sys
from textual.screen import Screen
from ledger_tui.ui.app import LedgerWorkbench
from ledger_tui.ui.launch import _run

class Crash(Screen):
    def on_mount(self):
        record = {"email": "".join(reversed("gro.elpmaxe@eod.enaj"))}  # (not in the source shown)
        raise RuntimeError("an internal error in " + type(record).__name__)

sys.exit(_run(LedgerWorkbench(Crash())))
"""


def test_a_crash_exits_non_zero_without_printing_local_values():
    done = subprocess.run([sys.executable, "-c", CRASH], capture_output=True, text=True, cwd=ROOT, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 1
    assert "RuntimeError: an internal error in dict" in done.stderr  # the error itself is shown
    assert "jane.doe@example.org" not in done.stdout + done.stderr
    assert "locals" not in done.stderr

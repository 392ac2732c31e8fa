"""The cli pauses the garbage collector while it imports its commands (cli.py): every command still
runs with the collector as the process had it, nothing set aside, and an embedding process's own
setting and frozen objects are kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.cli.test_cli import ROOT

# Import the cli as `ledger-tui` does, then run `domains` through it, noting the collector's state
# inside the command.
PROBE = """
import functools, gc, json, sys
{before}
import ledger_tui.cli as cli
seen = {{}}
info = next(i for i in cli.app.registered_commands if i.name == "domains")
command = info.callback
@functools.wraps(command)  # typer reads the command's parameters through it
def noted(*args, **kwargs):
    seen.update(enabled=gc.isenabled(), frozen=gc.get_freeze_count(), thresholds=gc.get_threshold())
    return command(*args, **kwargs)
info.callback = noted
sys.argv = ["ledger-tui", "domains"]
try:
    cli.main()
except SystemExit:
    pass
print(json.dumps(seen))
"""


def probe(before: str = "") -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", PROBE.format(before=before)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_command_runs_with_the_collector_on_and_nothing_set_aside():
    import gc

    seen = probe()
    assert seen == {"enabled": True, "frozen": 0, "thresholds": list(gc.get_threshold())}


def test_an_embedding_process_keeps_its_collector_setting_and_its_frozen_objects():
    assert probe("gc.disable()")["enabled"] is False
    kept = probe("kept = [[] for _ in range(100)]; gc.freeze(); assert gc.get_freeze_count() > 0")
    assert kept["enabled"] is True and kept["frozen"] > 0

"""The engine is headless: importing it (and every domain) never pulls in textual or rich."""

import json
import subprocess
import sys


def test_engine_and_domains_import_without_textual_or_rich():
    code = """
import json, sys
import ledger_tui.engine.session, ledger_tui.engine.agents.gold, ledger_tui.engine.agents.script, ledger_tui.engine.model.models
import ledger_tui.engine.store.trajectories, ledger_tui.engine.store.fold, ledger_tui.testing, ledger_tui.explain
import ledger_tui.domains as domains
for name in domains.available():
    domains.load_domain(name)
print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []

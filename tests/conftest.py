from __future__ import annotations

import os
import tempfile
import uuid

import pytest

from tests.toy_domain import build_toy

# Runs made outside a checkout go to the user's data folder (ledger_tui/examples.py): the suite's go
# to a folder of its own, in this process and in every command it starts, never to ~/.local/share.
_DATA_HOME = tempfile.TemporaryDirectory(prefix="ledger-tui-tests-data-")
os.environ["XDG_DATA_HOME"] = _DATA_HOME.name

# A mark in the environment of this test process and of every process it starts (Ray's workers
# too), so a test that counts processes on the machine counts its own run's, whatever else runs.
os.environ["LEDGER_TUI_TEST_RUN"] = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
RUN_MARK = f"LEDGER_TUI_TEST_RUN={os.environ['LEDGER_TUI_TEST_RUN']}"


@pytest.fixture(scope="session")
def toy_domain():
    return build_toy()

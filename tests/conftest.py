from __future__ import annotations

import os
import tempfile

import pytest

from tests.toy_domain import build_toy

# Runs made outside a checkout go to the user's data folder (ledger_tui/examples.py): the suite's go
# to a folder of its own, in this process and in every command it starts, never to ~/.local/share.
_DATA_HOME = tempfile.TemporaryDirectory(prefix="ledger-tui-tests-data-")
os.environ["XDG_DATA_HOME"] = _DATA_HOME.name


@pytest.fixture(scope="session")
def toy_domain():
    return build_toy()

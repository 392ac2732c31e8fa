from __future__ import annotations

import pytest

from tests.toy_domain import build_toy


@pytest.fixture(scope="session")
def toy():
    """The toy library domain (built once; its policy.md lives in a temp folder)."""
    return build_toy()

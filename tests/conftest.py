from __future__ import annotations

import pytest

from tests.toy_domain import build_toy


@pytest.fixture(scope="session")
def toy_domain():
    return build_toy()

"""Fixtures the evaluation tests share: one local Ray instance a test process, started by the
first test that asks for it and left at the end of the session (pytest-xdist's --dist loadfile
keeps a file's tests on one process; each process has an instance of its own, on ports Ray takes
from the OS)."""

from __future__ import annotations

import logging

import pytest


@pytest.fixture(scope="session")
def local_ray():
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    yield
    ray.shutdown()

"""Fixtures the evaluation tests share: one local Ray instance for the test session (`ray_head`),
started by the first test that needs it and shut down when the session ends, on ports Ray takes
from the OS. pytest-xdist runs each worker as a process of its own, so each worker that gets a Ray
test has one instance, and `--dist loadfile` keeps tests/eval/test_eval_ray.py on one of them.
The in-process tests use it as this process's Ray (`local_ray`); the CLI tests pass its address to
`ledger-tui eval --ray-address`, as a user joins a cluster, instead of starting one each (about 5 s
of wall and 2.3 s of CPU a start). An idle instance (its processes and this process's Ray threads,
after two actors came and went) takes about 1.9 % of a core (1.1 s of CPU in 60 s, load 1.9): a
few seconds over the rest of a worker's session, which the files that come after it share."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def ray_head() -> Iterator[str]:
    """The address of this test process's Ray instance (2 CPUs), which another process can join."""
    import ray

    context = ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    yield context.address_info["gcs_address"]
    ray.shutdown()


@pytest.fixture
def local_ray(ray_head):
    """This process joined to the session's Ray instance (a test that runs an eval in process)."""
    import ray

    assert ray.is_initialized(), "a test before this one left Ray"
    yield

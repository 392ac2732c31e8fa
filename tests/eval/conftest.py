"""Fixtures the evaluation tests share: one local Ray instance for the test file that asks for it
(tests/eval/test_eval_ray.py), started by its first test that needs it and shut down after its last
(pytest-xdist's --dist loadfile keeps a file's tests on one process, so a test process has at most
one instance, on ports Ray takes from the OS). Ended with the file, not the session: an idle
instance's processes still take about 4 % of a core, which the files that come after it share."""

from __future__ import annotations

import logging

import pytest


@pytest.fixture(scope="module")
def local_ray():
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    yield
    ray.shutdown()

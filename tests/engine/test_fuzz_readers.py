"""Every reader survives every input (issue 13), fuzzed: trajectories (alone and as a folder that
report, audit, browse and `why` read), scripts, task files, each domain's `--db` and telecom's
phone file, τ²-bench results files in both layouts (through import-tau2 and grade) and
results.jsonl (through eval's resume, report and browse).

Each reader returns or raises `LedgerTuiError` with one line in words, never another exception or a
validator's dump; import-tau2 writes nothing when it refuses. Derandomized, so CI sees the same
examples every run; the long random run is `python benchmarks/fuzz_readers.py`. The generators are
tests/fuzz_readers.py.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from tests.fuzz_readers import problem, readers

READERS = {r.name: r for r in readers()}
# examples per reader in CI: the τ²-bench readers import and grade every example (~0.1 s each)
SLOW = {"tau2 results": 80, "tau2 folder": 80}
EXAMPLES = 300


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@pytest.mark.parametrize("name", list(READERS))
def test_a_reader_returns_or_says_what_is_wrong_in_one_line(name, folder):
    reader = READERS[name]

    @settings(
        max_examples=SLOW.get(name, EXAMPLES), derandomize=True, database=None, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    @given(reader.inputs)
    def run(value):
        assert problem(reader, value, folder) is None

    run()

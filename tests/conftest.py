from __future__ import annotations

import compileall
import os
import tempfile
import uuid
from pathlib import Path

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


# The longest files first. With the README's command (pytest-xdist, `--dist loadfile`) a worker takes
# the next file when it is done with one, so a long file taken last keeps one worker busy while the
# others have nothing left; xdist's own order (the files with most tests first) put the longest
# single-test files last (the conformance slices, the gate log's stepping). Longest first, as
# measured with that command (the per-file sums of `--durations=0` in a clean-clone `.ci/run`): every
# file of 10 s or more there (at load 5-6; about 4 s at low load), so the files left for the end are
# short ones; every other file follows in collection order. A name no longer here only leaves its
# file in that order.
LONGEST_FIRST = (
    "tests/eval/test_eval_ray.py",
    "tests/engine/test_fuzz_readers.py",
    "tests/cli/test_eval_workers_cli.py",
    "tests/smoke/test_installed.py",
    "tests/conformance/test_tau2_conformance.py",
    "tests/ui/test_long_replay.py",
    "tests/ui/test_conversation_follows.py",
    "tests/engine/test_gate_property.py",
    "tests/ui/test_snapshots.py",
    "tests/eval/test_eval_workers.py",
    "tests/ui/test_screen_friction.py",
    "tests/engine/test_pristine.py",
    "tests/ui/test_search_and_copy.py",
    "tests/ui/test_play.py",
    "tests/ui/test_hostile_text.py",
    "tests/eval/test_endpoint_faults.py",
    "tests/ui/test_replay.py",
    "tests/ui/test_browse.py",
    "tests/ui/test_lazy_replay.py",
    "tests/conformance/test_tau2_conformance_retail.py",
    "tests/eval/test_regrade.py",
    "tests/eval/test_grade_rules.py",
    "tests/engine/test_cold_paths.py",
    "tests/ui/test_replay_keys.py",
    "tests/engine/test_bounded_work.py",
    "tests/cli/test_hostile_files.py",
    "tests/ui/test_gate_log_rows.py",
    "tests/engine/test_cow.py",
    "tests/ui/test_pane_widths.py",
    "tests/ui/test_cards.py",
    "tests/ui/test_guide.py",
    "tests/engine/test_fork.py",
    "tests/ui/test_stop_kinds.py",
    "tests/engine/test_fold.py",
)


# The project's bytecode, compiled once before the tests start. With PYTHONDONTWRITEBYTECODE set (as
# on this project's machines and CI) Python never writes it, so every command a test starts (some
# hundreds: `ledger-tui …`, workers, faults) compiled the whole CLI from source again, about a third
# of a second each; an installed ledger-tui has its bytecode from pip. Compiling writes only
# __pycache__ folders (ignored by git) and skips what is up to date.
ROOT = Path(__file__).resolve().parents[1]


def _compile_the_project() -> None:
    for folder in ("ledger_tui", "domains", "tests"):
        compileall.compile_dir(ROOT / folder, quiet=1)


def _rewrite_the_tests(config) -> None:
    """The test files as pytest rewrites them (its assert messages), written once before xdist's
    workers start. pytest keeps them beside Python's bytecode and, with PYTHONDONTWRITEBYTECODE set,
    never writes them, so each worker rewrote every test file as it collected it: about 3.3 s of a
    worker's 10 s of collecting (CPU, `--collect-only`), three workers a run. The workers read what
    is written here as they read their own (`_read_pyc`: the source's size and time must match).
    These are pytest's private functions (the same in pytest 8.2 and 8.4): a version without them
    leaves the rewriting to the workers, as before."""
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
    except (ImportError, AttributeError, KeyError):  # (another pytest, or --assert=plain)
        return
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if not (path.name.startswith("test_") or path.name == "conftest.py"):  # (what pytest rewrites here)
            continue
        try:
            pyc = rewrite.get_cache_dir(path) / (path.name[:-3] + rewrite.PYC_TAIL)
            if rewrite._read_pyc(path, pyc, state.trace) is None:
                stat, code = rewrite._rewrite_test(path, config)
                pyc.parent.mkdir(parents=True, exist_ok=True)
                rewrite._write_pyc(state, code, stat, pyc)  # (a temporary file, then a rename)
        except (AttributeError, TypeError, OSError, SyntaxError):
            return


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # once, in the process that starts the workers
        _compile_the_project()
        if getattr(config.option, "numprocesses", None):  # (only xdist's workers would read them)
            _rewrite_the_tests(config)
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist is installed (tests/smoke runs without it)
        config.option.loadscopereorder = False  # the order below, not the number of tests a file has


@pytest.hookimpl(optionalhook=True)  # (tests/smoke runs where pytest-xdist is not installed)
def pytest_xdist_auto_num_workers(config):
    """`-n auto` (the README's command): one worker more than the cores this process may run on.
    A third of the suite's wall time on two cores was its workers waiting (a Textual app's pauses
    between keys, a subprocess starting, a loopback server's latency): on 2 cores, tests/ui took
    100 s with 2 workers and 70 s with 3, for the same 90 s of CPU (load 1.3-1.9)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # (not Linux)
        cores = os.cpu_count() or 1
    return cores + 1


def pytest_collection_modifyitems(config, items):
    if hasattr(config, "workerinput"):  # an xdist worker: the order it collects is the order files are handed out
        rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
        items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # (stable: a file's tests keep their order)

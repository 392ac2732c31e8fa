"""ledger-tui as a user installs it: from any folder, by the names the README uses.

Every command here is the installed `ledger-tui` run in a folder of its own, outside the checkout:
CI runs this file twice, in the development environment and in one where the built wheel is
installed with every dependency at its declared floor (.ci/run, .ci/lowest.txt), so a floor that
does not hold, or a file the wheel lacks, fails here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.loopback import LoopbackServer

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
LEDGER_TUI = str(BIN / "ledger-tui")
HEADLESS = {"TEXTUAL_DRIVER": "textual.drivers.headless_driver:HeadlessDriver"}


def cli(cwd: Path, *args: str, env: dict[str, str] | None = None, code: int = 0) -> str:
    """`ledger-tui ARGS` in `cwd`, nothing of the checkout on its path; its output."""
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | (env or {})
    out = subprocess.run([LEDGER_TUI, *args], cwd=cwd, env=environ, capture_output=True, text=True, timeout=120)
    assert out.returncode == code, f"exit {out.returncode}\n{out.stdout}\n{out.stderr}"
    return out.stdout + out.stderr


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """An empty folder outside the checkout, with a `domains` package of someone else's in it, as
    a folder of a user's may have (the PyPI project `domains` is one)."""
    folder = tmp_path / "work"
    (folder / "domains").mkdir(parents=True)
    (folder / "domains" / "__init__.py").write_text("raise ImportError('the wrong domains package was imported')\n")
    return folder


def test_no_module_named_domains_is_loaded(elsewhere: Path):
    code = (
        "import json, sys\n"
        "import ledger_tui.cli, ledger_tui.engine.session, ledger_tui.engine.agents.gold, ledger_tui.eval.runner\n"
        "from ledger_tui.domains import available, load_domain\n"
        "names = available()\n"
        "for name in names: load_domain(name)\n"
        "print(json.dumps([names, sorted(m for m in sys.modules if m.split('.')[0] == 'domains')]))\n"
    )
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, env=environ, capture_output=True, text=True, check=True)
    names, loaded = json.loads(out.stdout)
    assert names == ["airline", "retail", "telecom", "telehealth"] and loaded == []
    assert "airline" in cli(elsewhere, "domains")


def test_help_lists_the_commands_and_each_command_runs(elsewhere: Path):
    """With some typer and click releases every subcommand printed the version and exited 0
    without running, or --help crashed: the floors are where neither happens."""
    shown = cli(elsewhere, "--help")
    assert all(name in shown for name in ("replay", "why", "eval", "examples", "play"))
    assert "--consent" in cli(elsewhere, "eval", "--help") and "ledger-tui[ray]" in cli(elsewhere, "eval", "--help")
    assert cli(elsewhere, "--version").strip() == "ledger-tui 0.1.0"
    assert cli(elsewhere, "examples").startswith("sessions   ledger-tui replay NAME")  # it ran, not the version


def test_shipped_sessions_and_scripts_by_name_from_any_folder(elsewhere: Path, tmp_path: Path):
    listed = cli(elsewhere, "examples")
    assert "airline-cancel-blocked" in listed and "airline/cancel_blocked" in listed

    why = cli(elsewhere, "why", "airline-cancel-blocked")
    assert "cancel_reservation" in why and "BLOCK" in why
    # the checkout's paths, typed outside it, find the shipped files too
    assert "BLOCK" in cli(elsewhere, "why", "sessions/airline-cancel-blocked.jsonl")
    assert "0 verdicts changed in 1 trajectory file" in cli(elsewhere, "regress", "airline-cancel-blocked")

    data = tmp_path / "data"
    ran = cli(elsewhere, "run", "--script", "airline/cancel_blocked", env={"XDG_DATA_HOME": str(data)})
    saved = Path(ran.split("session", 1)[1].split()[0])
    assert saved.parent == data / "ledger-tui" / "runs" and saved.is_file(), ran
    assert "BLOCK 1" in ran
    assert sorted(p.name for p in elsewhere.iterdir()) == ["domains"], "nothing is written where the user stands"
    assert "BLOCK" in cli(elsewhere, "why", str(saved))


def test_the_workbench_opens_on_a_shipped_session_by_name(elsewhere: Path, tmp_path: Path):
    shots = tmp_path / "shots"
    shots.mkdir()
    env = HEADLESS | {
        "TEXTUAL_SCREENSHOT": "1", "TEXTUAL_SCREENSHOT_LOCATION": str(shots), "TEXTUAL_SCREENSHOT_FILENAME": "replay.svg",
    }
    cli(elsewhere, "replay", "airline-cancel-blocked", env=env)
    screen = (shots / "replay.svg").read_text()
    assert "Gate" in screen and "BLOCK" in screen and "cancel_reservation" in screen


def test_a_workbench_that_fails_to_start_is_not_a_success(elsewhere: Path):
    # a widget that cannot be built, as an incompatible textual release breaks one
    code = (
        "import sys\n"
        "from ledger_tui.ui.widgets import gate_log\n"
        "def broken(self): raise RuntimeError('this textual cannot build the gate log')\n"
        "gate_log.GateLog.compose = broken\n"
        "from ledger_tui.cli import main\n"
        "sys.argv = ['ledger-tui', 'replay', 'airline-cancel-blocked']\n"
        "main()\n"
    )
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | HEADLESS | {"TEXTUAL_PRESS": "ctrl+q"}
    out = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, env=environ, capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "the workbench stopped on an error" in out.stderr


def test_eval_runs_and_records_every_run(elsewhere: Path, tmp_path: Path):
    out = tmp_path / "ev"
    printed = cli(elsewhere, "eval", "--domain", "retail", "--agent", "gold", "--tasks", "cancel_and_return", "--out", str(out))
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["reward"] == 1.0
    assert "pass^1" in printed and str(out / "results.jsonl") in printed


def test_a_model_call_goes_through_the_installed_openai_client(elsewhere: Path, tmp_path: Path):
    """The real client path at whatever openai release is installed: the agent and the customer
    simulator on a loopback server; the customer stops at once."""
    out = tmp_path / "ev"
    with LoopbackServer(lambda request: {"text": "###STOP###"}) as server:
        cli(
            elsewhere, "eval", "--domain", "retail", "--tasks", "cancel_and_return", "--base-url", server.base_url,
            "--api-key", "test", "--agent-model", "m", "--retries", "0", "--out", str(out),
        )
        asked = len(server.requests)
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and not rows[0].get("error"), rows
    assert asked >= 1


def test_runs_stay_inside_a_checkout(tmp_path: Path):
    checkout = tmp_path / "my-ledger-tui"
    (checkout / "sessions").mkdir(parents=True)
    (checkout / "docs").mkdir()
    (checkout / "pyproject.toml").write_text('[project]\nname = "ledger-tui"\nversion = "0"\n')
    ran = cli(checkout / "docs", "run", "--script", "airline/cancel_blocked")
    saved = Path(ran.split("session", 1)[1].split()[0])
    assert saved.parent == checkout / "sessions" / "runs" and saved.is_file()
    # another project's folder is not a checkout
    (checkout / "pyproject.toml").write_text('[project]\nname = "something-else"\n')
    ran = cli(checkout / "docs", "run", "--script", "airline/cancel_blocked", env={"XDG_DATA_HOME": str(tmp_path / "data")})
    assert Path(ran.split("session", 1)[1].split()[0]).parent == tmp_path / "data" / "ledger-tui" / "runs"


def _tracked(folder: str) -> list[str]:
    if (ROOT / ".git").exists() and shutil.which("git"):
        out = subprocess.run(["git", "ls-files", folder], cwd=ROOT, capture_output=True, text=True, check=True)
        return out.stdout.split()
    # an unpacked sdist: its files are the tracked ones, but for what running it added (caches, and
    # the runs its tests wrote: an sdist is a checkout, so they go to sessions/runs/)
    return [
        p.relative_to(ROOT).as_posix() for p in (ROOT / folder).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not p.relative_to(ROOT).as_posix().startswith("sessions/runs/")
    ]


def test_the_wheel_holds_exactly_the_tracked_domains_and_sessions(tmp_path: Path):
    source = tmp_path / "source"
    for name in ("pyproject.toml", "README.md", *_tracked("ledger_tui"), *_tracked("domains"), *_tracked("sessions")):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, source / name)
    # what a checkout that has been used holds besides: runs, caches
    for junk in ("sessions/runs/airline-play-1.jsonl", "domains/airline/__pycache__/tools.cpython-311.pyc", "sessions/runs/eval/results.jsonl"):
        (source / junk).parent.mkdir(parents=True, exist_ok=True)
        (source / junk).write_text("{}\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "wheel"), str(source)],
        check=True, capture_output=True, timeout=300,
    )
    (wheel,) = (tmp_path / "wheel").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {n for n in names if n.startswith(("ledger_tui/domains/", "ledger_tui/sessions/"))}
    expected = {"ledger_tui/" + n for n in _tracked("domains") + _tracked("sessions")}
    assert shipped == expected
    assert {n for n in names if n.startswith("ledger_tui/") and not n.startswith(("ledger_tui/domains/", "ledger_tui/sessions/"))} == {
        n for n in _tracked("ledger_tui")
    }


def test_the_package_list_names_every_package_folder():
    """pyproject lists the packages by hand (the mapping of domains/ and sessions/ needs it): a new
    folder that is not listed would be missing from the wheel."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "ledger_tui").rglob("__init__.py")}
    found |= {".".join(("ledger_tui", *p.parent.relative_to(ROOT).parts)) for p in (ROOT / "domains").rglob("__init__.py")}
    found.add("ledger_tui.sessions")
    assert listed == found

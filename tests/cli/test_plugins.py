"""Domains as plugins: `new-domain` writes a package that, once installed (here: its source and a
dist-info on the path, as `pip install -e` leaves them), is found through the entry-point group
`ledger_tui.domains`, listed with where it came from, linted clean and solved by the gold agent;
a plugin that does not load is one sentence, and a shipped name is never taken over."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_cli import ROOT, cli, one_sentence_error


def installed(site: Path, dist: str, version: str, entry_points: dict[str, str]) -> None:
    """What an install leaves for importlib.metadata: a dist-info with its entry points."""
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", encoding="utf-8")
    lines = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[ledger_tui.domains]\n{lines}", encoding="utf-8")


def run(*args: str, path: list[Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, path), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "ledger_tui", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=180)


def test_a_new_domain_is_found_listed_linted_and_solved_by_the_gold_agent(tmp_path):
    made = cli("new-domain", "gym", "--dir", str(tmp_path))
    assert made.returncode == 0, made.stderr
    package = tmp_path / "ledger-tui-gym"
    assert (package / "ledger_tui_gym" / "__init__.py").exists() and (package / "tests" / "test_domain.py").exists()
    site = tmp_path / "site"
    installed(site, "ledger-tui-gym", "0.1.0", {"gym": "ledger_tui_gym:build"})
    path = [package, site]

    listed = run("domains", path=path, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    block = listed.stdout.split("\ngym ", 1)[1]
    assert "1 read, 1 write, 0 generic; 3 predicates" in block
    assert "from: plugin ledger-tui-gym 0.1.0 (ledger_tui_gym:build)" in block

    linted = run("check-domain", "gym", path=path, cwd=tmp_path)
    assert linted.returncode == 0, linted.stdout + linted.stderr

    solved = run("eval", "--domain", "gym", "--agent", "gold", "--out", str(tmp_path / "eval"), path=path, cwd=tmp_path)
    assert solved.returncode == 0, solved.stdout + solved.stderr
    assert "gym         full      all (1)              1.000" in solved.stdout


def test_a_plugin_that_does_not_load_is_one_sentence_and_a_shipped_name_stays_shipped(tmp_path):
    site = tmp_path / "site"
    installed(site, "ledger-tui-broken", "2.0", {"broken": "no_such_module:build", "airline": "no_such_module:build"})
    listed = run("domains", path=[site], cwd=tmp_path)
    assert listed.returncode == 1
    assert "broken      (does not load)" in listed.stdout
    assert "Domain 'broken', a plugin ledger-tui-broken 2.0 (no_such_module:build), failed to load (ModuleNotFoundError" in " ".join(listed.stdout.split())
    assert "note: ledger-tui-broken also registers a domain 'airline'; the shipped one is used" in listed.stdout
    airline = listed.stdout.split("\nbroken ", 1)[0]  # listed first, from this checkout
    assert airline.startswith("airline     Airline reservations") and f"from: shipped ({ROOT / 'domains' / 'airline'})" in airline
    failed = run("eval", "--domain", "broken", "--agent", "gold", "--out", str(tmp_path / "e"), path=[site], cwd=tmp_path)
    assert failed.returncode == 2 and "Traceback" not in failed.stderr
    assert failed.stderr.strip().startswith("error: Domain 'broken', a plugin ledger-tui-broken 2.0")


@pytest.mark.parametrize(
    "name, sentence",
    [
        ("Gym!", "'Gym!' cannot name a domain: use 2 to 31 lowercase letters, digits and _, starting with a letter."),
        ("airline", "'airline' is a domain ledger-tui ships; choose another name."),
    ],
)
def test_new_domain_refuses_a_name_it_cannot_use(name, sentence, tmp_path):
    assert one_sentence_error(cli("new-domain", name, "--dir", str(tmp_path))) == f"error: {sentence}"


def test_new_domain_never_writes_over_a_folder(tmp_path):
    (tmp_path / "ledger-tui-gym").mkdir()
    line = one_sentence_error(cli("new-domain", "gym", "--dir", str(tmp_path)))
    assert line == f"error: {tmp_path / 'ledger-tui-gym'} exists; choose another name or --dir, or remove it."

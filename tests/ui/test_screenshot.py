"""A screenshot is saved where the operator can find it: the Downloads folder (made when it is
missing), or $LEDGER_TUI_SCREENSHOTS; a folder that cannot be made is named with the fix."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ledger_tui.ui.app import make_app

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "sessions" / "airline-cancel-blocked.jsonl"


async def shoot(pilot) -> list[str]:
    pilot.app.deliver_screenshot()
    for _ in range(50):  # Textual writes the file in a thread, then says so
        await asyncio.sleep(0.02)
        await pilot.pause()
        said = [str(n.message) for n in pilot.app._notifications if "creenshot" in str(n.message)]
        if said:
            return said
    return []


async def test_a_missing_downloads_folder_is_made_and_named(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DOWNLOAD_DIR", raising=False)
    monkeypatch.delenv("LEDGER_TUI_SCREENSHOTS", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no user-dirs.dirs naming another folder
    async with make_app(trajectory=SESSION).run_test(size=(120, 40)) as pilot:
        said = await shoot(pilot)
    saved = list((tmp_path / "Downloads").glob("*.svg"))
    assert len(saved) == 1 and saved[0].read_text().startswith("<svg")
    assert said and str(tmp_path / "Downloads") in said[0] and said[0].startswith("Saved screenshot to")


async def test_the_folder_can_be_chosen_and_one_that_cannot_be_made_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("LEDGER_TUI_SCREENSHOTS", str(tmp_path / "shots" / "today"))
    async with make_app(trajectory=SESSION).run_test(size=(120, 40)) as pilot:
        await shoot(pilot)
    assert len(list((tmp_path / "shots" / "today").glob("*.svg"))) == 1
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("LEDGER_TUI_SCREENSHOTS", str(tmp_path / "a-file" / "shots"))
    async with make_app(trajectory=SESSION).run_test(size=(120, 40)) as pilot:
        said = await shoot(pilot)
    assert said == [f"Cannot save the screenshot in {tmp_path / 'a-file' / 'shots'} (Not a directory); set LEDGER_TUI_SCREENSHOTS to a folder you can write."]

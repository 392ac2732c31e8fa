"""Hostile inputs, built as an attacker would write them (issue 13): a trajectory, a τ²-bench results
file and a τ²-bench data folder whose task ids, customer text, call arguments, model name, notices
and grades hold Textual action and link markup, terminal escapes (clear screen, set the title,
OSC 52 to the clipboard) and a bidi override.

Shared by tests/ui/test_hostile_text.py (every screen) and tests/cli/test_hostile_text.py (every
command), which check that all of it is shown as text and none of it is obeyed.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from ledger_tui.domains import load_domain
from ledger_tui.engine.events import LedgerUpdated, Notice, Refusal, SessionEnded, ToolCall, dump_event
from ledger_tui.engine.model.models import ModelTurn, ScriptedModel
from ledger_tui.engine.session import Session, drain
from tests.eval.tau2_fixture import write_results

ROOT = Path(__file__).resolve().parents[1]

QUIT = "[@click=app.quit]quit[/]"
SHOT = "[@click=app.screenshot]shot[/]"  # would write an SVG into the working directory
LINK = "[link=file:///etc/passwd]link[/link]"  # crashed `browse` as markup
ESCAPES = "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;aGk=\x07"  # clear screen, window title, clipboard
BIDI = "\u202eevil\u202c"
HOSTILE = f"{QUIT} {SHOT} {LINK} [$accent]var[/] {ESCAPES} {BIDI} \x85\x7f"
# Task ids (with a number after them): the bidi override and ESC come early, so a column that
# cuts a long id still shows them
HOSTILE_ID = "[@click=app.quit]q[/]\u202e\x1b]0;t\x07[link=file:///etc/passwd]l[/link]"
HOSTILE_ID_SHOWN = "[@click=app.quit]q[/]\\u202e\\x1b]0;t\\x07[link=file:///etc/passwd]l[/link]"  # as it must be displayed

# What must appear, as text, wherever hostile text is shown
VISIBLE = ("[@click=app.quit]", "\\x1b", "\\u202e")
# What must never reach a terminal: C0 controls but newline and tab, DEL, C1, bidi overrides/isolates
OBEYED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def obeyed(text: str) -> list[str]:
    """The characters of `text` a terminal would act on instead of showing."""
    return sorted({repr(ch) for ch in OBEYED.findall(text)})


def files_under(folder: Path) -> set[str]:
    """Every file and folder under `folder`, relative (what "nothing was written" compares)."""
    return {str(p.relative_to(folder)) for p in Path(folder).rglob("*")}


def _call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id="", name=name, arguments=arguments)


async def write_hostile_trajectory(path: Path) -> Path:
    """An airline session whose model name, task id, customer text, agent text and call arguments
    (values and a key) are hostile, then a ledger entry, a notice, a refusal and an end reason and
    grade that are too (a file can hold anything)."""
    turns = [
        ModelTurn(tool_calls=(_call("get_user_details", user_id="mia_li_3668"), _call("get_reservation_details", reservation_id=HOSTILE))),
        ModelTurn(text=f"Reservation ZFA04Y {HOSTILE} can be cancelled. Shall I cancel it?"),
        ModelTurn(tool_calls=(_call("cancel_reservation", reservation_id=HOSTILE),)),
        ModelTurn(tool_calls=(ToolCall(id="", name="cancel_reservation", arguments={HOSTILE: HOSTILE}),)),
        ModelTurn(text=f"I could not do it. {HOSTILE}"),
        ModelTurn(text=f"Still nothing. {HOSTILE}"),
    ]
    session = Session(
        load_domain("airline"), ScriptedModel(turns, name=HOSTILE), "full", session_id="hostile", timestamps=False, task_id=HOSTILE
    )
    await drain(session.start())
    await drain(session.user_says(f"Hi, I'm mia_li_3668. Please cancel reservation ZFA04Y, my plans changed. {HOSTILE}"))
    await drain(session.user_says(f"Yes, please. {HOSTILE}"))
    events = list(session.events)
    extra = [
        LedgerUpdated(path=f"users.{HOSTILE}", change="added", after={HOSTILE: HOSTILE, "name": HOSTILE}, source_call=HOSTILE),
        Notice(level="error", text=f"model error: {HOSTILE}"),
        Refusal(text=f"refused: {HOSTILE}"),
        SessionEnded(reason=HOSTILE, db_digest="", reward=0.0, termination=HOSTILE, grade={HOSTILE: HOSTILE}),
    ]
    events += [e.model_copy(update={"seq": len(events) + i}) for i, e in enumerate(extra)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(dump_event(e) + "\n" for e in events), encoding="utf-8")
    return path


def write_hostile_results(path: Path) -> Path:
    """The retail results file of tests/eval/tau2_fixture.py, attacked: the failed simulations'
    task ids (not in the file's tasks, so `report` and `browse` warn about them), customer text,
    a write's arguments, the agent model, a simulation id, a termination reason."""
    write_results(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["info"]["agent_info"]["llm"] = HOSTILE
    for n, sim in enumerate(data["simulations"]):
        if sim["reward_info"]["reward"] < 1:
            sim["task_id"] = f"{HOSTILE_ID}{n}"
            sim["id"] = f"\x1b]0;{n}\x07/../{HOSTILE_ID}"
            sim["termination_reason"] = HOSTILE
        for message in sim["messages"]:
            if message["role"] == "user":
                message["content"] = f"{message['content']} {HOSTILE}"
            for call in message.get("tool_calls") or []:
                if call["name"] == "cancel_pending_order":
                    call["arguments"]["reason"] = HOSTILE
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def write_hostile_tau2_data(folder: Path) -> Path:
    """A τ²-bench retail data folder (this project's retail data) whose task ids are hostile."""
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "domains/retail/db.json", folder / "db.json")
    tasks = json.loads((ROOT / "domains/retail/tasks.json").read_text(encoding="utf-8"))
    chosen = [t for t in tasks if not t.get("ledger_tui", {}).get("forbidden_action")][:2]
    for n, task in enumerate(chosen):
        task["id"] = f"{HOSTILE_ID}{n}"
    (folder / "tasks.json").write_text(json.dumps(chosen), encoding="utf-8")
    (folder / "policy.md").write_text(f"# Retail policy\n\nBe helpful. {HOSTILE}\n", encoding="utf-8")
    return folder

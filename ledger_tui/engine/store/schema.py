"""The trajectory format as a JSON Schema: one JSON object per line, each one of the events.

Generated from the event models (`events.Event`), so it cannot say other than what the readers
take; the copy committed beside this module (`trajectory.schema.json`, printed by `ledger-tui
schema`) is what other tools read, and a test fails when the two drift apart. Readers of older
schema versions take files this schema describes and the older ones (see the README's table).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from ledger_tui.engine.events import SCHEMA_VERSION, Event

SCHEMA_FILE = Path(__file__).with_name("trajectory.schema.json")
SCHEMA_ID = f"urn:ledger-tui:trajectory:v{SCHEMA_VERSION}"


def trajectory_schema() -> dict[str, Any]:
    """The schema of one line of a trajectory (.jsonl) file, schema version `SCHEMA_VERSION`."""
    generated = TypeAdapter(Event).json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": f"ledger-tui trajectory event (schema version {SCHEMA_VERSION})",
        "description": (
            "One line of a ledger-tui trajectory file: a JSON object, one event, told apart by `type`. "
            "The first line is a session_started, which carries schema_version; optional fields are "
            "left out while unset."
        ),
        **generated,
    }


def schema_text() -> str:
    """The schema as committed: sorted keys, two-space indents, a final newline."""
    return json.dumps(trajectory_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

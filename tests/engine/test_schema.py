"""The trajectory format as a JSON Schema that other tools can read: the committed file is what
the event models generate (a change to an event without regenerating it fails here), every line
of every shipped session validates against it, and what the readers refuse it refuses too."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from ledger_tui.engine.store.schema import SCHEMA_FILE, schema_text
from tests.cli.test_cli import cli

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = [
    p for p in sorted((ROOT / "sessions").glob("*.jsonl")) + sorted((ROOT / "tests" / "data").rglob("*.jsonl"))
    if '"session_started"' in p.read_text(encoding="utf-8").split("\n", 1)[0]  # trajectories, not tables
]


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_committed_schema_is_what_the_event_models_generate():
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        "the events changed: regenerate with `ledger-tui schema -o ledger_tui/engine/store/trajectory.schema.json`"
    )


def test_every_line_of_every_shipped_session_validates(validator):
    lines = 0
    for path in SESSIONS:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                errors = list(validator.iter_errors(json.loads(line)))
                assert not errors, f"{path.name}: {errors[0].message}"
                lines += 1
    assert lines > 500


@pytest.mark.parametrize(
    "event",
    [
        {"seq": 3, "type": "tool_result_v9", "content": "x"},  # an event kind no reader knows
        {"seq": 3, "type": "user_message"},  # its text missing
        {"seq": 3, "type": "user_message", "text": "hi", "mood": "cross"},  # a field no reader knows
    ],
)
def test_what_the_readers_refuse_the_schema_refuses(validator, event):
    assert list(validator.iter_errors(event))


def test_the_cli_prints_it():
    out = cli("schema")
    assert out.returncode == 0, out.stderr
    assert out.stdout == SCHEMA_FILE.read_text(encoding="utf-8")

"""report.json is laid out by `indented_json`, which must be the text `json.dumps(value, indent=1,
ensure_ascii=False)` makes, for any value a report could hold and those it could not."""

from __future__ import annotations

import enum
import json
import random

import pytest

from ledger_tui.eval.report import indented_json

STRINGS = ["", "plain", 'quote " and \\ backslash', "line\nbreak\ttab\r", "\x00\x1f\x7f", "é ü 中文 🙂", "\u2028\u2029", "\ud800 lone", "key: value, [x]"]
FLOATS = [0.0, -0.0, 1.5, 1e300, -2.5e-308, 0.1 + 0.2, float("nan"), float("inf"), float("-inf")]


class Mode(str, enum.Enum):
    GATE = "gate"


class Level(enum.IntEnum):
    ONE = 1


def value(rng: random.Random, depth: int = 0):
    choice = rng.randrange(12 if depth < 4 else 7)
    if choice == 0:
        return rng.choice(STRINGS)
    if choice == 1:
        return rng.choice([0, -1, 7, 2**70, -(2**63)])
    if choice == 2:
        return rng.choice(FLOATS)
    if choice == 3:
        return rng.choice([None, True, False])
    if choice == 4:
        return rng.choice([Mode.GATE, Level.ONE])
    if choice in (5, 6):
        return rng.choice(["failed", "pass"]) + str(rng.randrange(100))
    n = rng.randrange(5)
    if choice in (7, 8):
        return {rng.choice(STRINGS) + str(i): value(rng, depth + 1) for i in range(n)}
    if choice == 9:
        return [value(rng, depth + 1) for _ in range(n)]
    if choice == 10:
        return tuple(value(rng, depth + 1) for _ in range(n))
    return {rng.choice([1, 2.5, None, True, "k"]): value(rng, depth + 1) for _ in range(n)}  # keys json converts


@pytest.mark.parametrize("seed", range(40))
def test_the_same_text_as_json_on_random_values(seed):
    rng = random.Random(seed)
    for _ in range(25):
        v = value(rng)
        assert indented_json(v) == json.dumps(v, indent=1, ensure_ascii=False)


def test_the_same_text_on_a_report_shape():
    report = {
        "folder": "/tmp/x",
        "runs": 3,
        "precedence": ["infrastructure error", "gate stop"],
        "counts": [{"label": "retail/gate", "classes": {}, "runs": 3, "rate": 0.6666666666666666}],
        "failed_runs": [{"classes": [], "findings": [{"class": "extra", "detail": "é\n", "seq": None}]}],
        "paper": [],
        "warnings": [],
    }
    assert indented_json(report) == json.dumps(report, indent=1, ensure_ascii=False)

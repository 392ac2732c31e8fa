"""How the readers of what only the customer can say do on the answer tables.

    .venv/bin/python benchmarks/question_tables.py [TABLE ...]

Each row of a table (default: every tests/data/answers/answers-*.json) is a customer's reply to a
closed question (airline: why cancel this reservation; telecom: are you abroad now, with this
line), with the outcomes that are right and the values that would unlock a write the truth does
not. Printed per reader: rows right, unsafe values (a write unlocked on words that do not say
so), other wrong values, and replies asked again though they named one choice; then each miss.

The free-text reader is the domain's keyword statement (`Domain.statements`), which reads a
customer's messages in transcripts the system did not conduct. The closed reader reads an answer
to the question the system asked (`ledger_tui.engine.conversation.questions`), where it exists.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable

from ledger_tui.domains import load_domain

HERE = Path(__file__).resolve().parents[1] / "tests" / "data" / "answers"


def free_text_reader() -> Callable[[dict], str]:
    statements = {}
    for name in ("airline", "telecom"):
        for st in load_domain(name).statements:
            statements[(name, st.key)] = st

    def read(row: dict) -> str:
        value = statements[(row["domain"], row["key"])].extract(row["reply"])
        return "unclear" if value is None else str(value)

    return read


def closed_reader() -> Callable[[dict], str] | None:
    try:
        from ledger_tui.engine.conversation.questions import read_answer
    except ImportError:
        return None
    questions = {}
    for name in ("airline", "telecom"):
        for q in load_domain(name).questions:
            questions[(name, q.key)] = q

    def read(row: dict) -> str:
        value = read_answer(row["reply"], questions[(row["domain"], row["key"])]).value
        return "unclear" if value is None else value

    return read


def measure(rows: list[dict], read: Callable[[dict], str]) -> dict:
    out = {"rows": len(rows), "right": 0, "unsafe": 0, "wrong": 0, "asked_again": 0, "misses": []}
    for row in rows:
        got = read(row)
        if got in row["expect"]:
            out["right"] += 1
            continue
        kind = "unsafe" if got in row["unsafe"] else "asked_again" if got == "unclear" else "wrong"
        out[kind] += 1
        out["misses"].append((kind, got, row))
    return out


def main(argv: list[str]) -> int:
    tables = [Path(a) for a in argv] or sorted(HERE.glob("answers-*.json"))
    readers = {"free-text reader": free_text_reader(), "closed reader": closed_reader()}
    for path in tables:
        rows = json.loads(path.read_text())["rows"]
        for name, read in readers.items():
            if read is None:
                print(f"{path.name}, {name}: not built yet")
                continue
            m = measure(rows, read)
            print(
                f"{path.name}, {name}: {m['right']}/{m['rows']} right; unsafe {m['unsafe']}, "
                f"other wrong {m['wrong']}, asked again though clear {m['asked_again']}"
            )
            for kind, got, row in m["misses"]:
                print(f"  {kind}: {row['domain']} {row['reply']!r} -> {got} (expected {'/'.join(row['expect'])})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

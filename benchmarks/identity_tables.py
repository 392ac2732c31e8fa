"""How the speaker reader (`ledger_tui.engine.conversation.speaker`) does on the identity-claim tables.

    .venv/bin/python benchmarks/identity_tables.py [TABLE ...]

For each table (default: every tests/data/identity/claims-*.json): rows right, callers' own
identifiers refused (they cannot identify themselves), other people's identifiers taken as the
caller's (a write for someone else would go through), and each miss with its words.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ledger_tui.engine.conversation.speaker import given_for_another

HERE = Path(__file__).resolve().parents[1] / "tests" / "data" / "identity"


def measure(path: Path) -> dict:
    rows = json.loads(path.read_text())["rows"]
    misses = []
    for row in rows:
        own = given_for_another(row["messages"], row["value"]) is None
        if own != row["speaker"]:
            misses.append(row)
    return {
        "rows": len(rows),
        "right": len(rows) - len(misses),
        "own_refused": sum(1 for m in misses if m["speaker"]),
        "other_taken": sum(1 for m in misses if not m["speaker"]),
        "misses": misses,
    }


def main(argv: list[str]) -> int:
    tables = [Path(a) for a in argv] or sorted(HERE.glob("claims-*.json"))
    for path in tables:
        m = measure(path)
        print(f"{path.name}: {m['right']}/{m['rows']} right; own refused {m['own_refused']}, another's taken {m['other_taken']}")
        for row in m["misses"]:
            print(f"  miss ({row['kind']}, speaker={row['speaker']}): {' | '.join(row['messages'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

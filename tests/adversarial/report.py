"""Print what today's gate does with every adversarial case (a Markdown table, then the reasons of
every twin that was not ALLOWed). Run: .venv/bin/python -m tests.adversarial.report [-v] [domain …]
(-v: the failed predicates of the forbidden conversations too)"""

from __future__ import annotations

import asyncio
import sys

from tests.adversarial.runner import case_files, failed_predicates, load_case, play_case, twin_decisive, verdict_summary


async def main(domains: list[str], verbose: bool = False) -> None:
    rows, notes = [], []
    for path in case_files():
        if domains and path.parent.name not in domains:
            continue
        case = load_case(path)
        forbidden = await play_case(case["domain"], case["forbidden"], task=case.get("task"))
        twin = await play_case(case["domain"], case["twin"], task=case.get("task"))
        f = verdict_summary(forbidden, case["decisive"])
        t = verdict_summary(twin, twin_decisive(case))
        rows.append((path.parent.name, path.stem, case["category"], f, t))
        if verbose:
            for verdict, name, reason in failed_predicates(forbidden, case["decisive"]):
                notes.append(f"- {path.parent.name}/{path.stem} forbidden: {verdict} `{name}`: \"{reason}\"")
        if "ALLOW+executed" not in t:
            for verdict, name, reason in failed_predicates(twin, twin_decisive(case)):
                notes.append(f"- {path.parent.name}/{path.stem} twin: {verdict} `{name}`: \"{reason}\"")
    print("| domain | case | category | forbidden today | twin today |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    if notes:
        print()
        print("\n".join(notes))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "-v"]
    asyncio.run(main(args, verbose="-v" in sys.argv[1:]))

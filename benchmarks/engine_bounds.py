"""The engine's work is bounded (issue 27, item 2): the tokenizer's and the gate's time from 1 KB to
the caps of `ledger_tui.engine.limits`, on inputs made to hurt a backtracking pattern or a
quadratic scan (a run of one character, two alternating, digits and commas, month names and
numbers, consent words with negations, a seeded mix), and the growth per 10×.

"tokens" is `text.tokens` on one text of the size. "session" plays every shipped script with each
customer and agent message grown by the text, and every string argument of its calls replaced by
it (its ids, amounts and reasons; so the gate reads each against the ledger and the
conversation), then reads the trajectory back and explains every gate decision as `why` does: the
whole path of a turn. A linear engine grows about 10× per 10× (a little less, as fixed costs
share); a quadratic one 100×.

    python benchmarks/engine_bounds.py [--sizes 1000,10000,65536] [--shapes a,dots,...] [--domain retail]

`tests/engine/test_bounded_work.py` runs a slice of the same sessions at the caps under a CPU
limit, as a guard against a hang (not a timing assertion).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ledger_tui.domains import load_domain  # noqa: E402
from ledger_tui.engine import limits  # noqa: E402
from ledger_tui.engine.conversation import text as text_module  # noqa: E402
from ledger_tui.engine.errors import LedgerTuiError  # noqa: E402
from ledger_tui.engine.events import GateDecided, Notice  # noqa: E402
from ledger_tui.engine.model.models import ScriptedModel  # noqa: E402
from ledger_tui.engine.agents.script import Script, load_script, run_script, script_consent, script_mode  # noqa: E402
from ledger_tui.engine.session import Session  # noqa: E402
from ledger_tui.engine.store.trajectories import read_trajectory  # noqa: E402
from ledger_tui.explain import explain_decision  # noqa: E402


def _repeat(unit: str) -> Callable[[int], str]:
    return lambda n: (unit * (n // len(unit) + 1))[:n]


def _mix(n: int) -> str:
    rng = random.Random(n)
    alphabet = "aZ1 .,-@'\n:;#$é()!?"
    return "".join(rng.choice(alphabet) for _ in range(n))


# name -> text of n characters
SHAPES: dict[str, Callable[[int], str]] = {
    "letters": _repeat("a"),
    "dots": _repeat("."),
    "digits": _repeat("1"),
    "spaces": _repeat(" "),
    "newlines": _repeat("\n"),
    "dashes": _repeat("-"),
    "letter-dot": _repeat("a."),
    "letter-at": _repeat("a@"),
    "digit-comma": _repeat("1,"),
    "digit-space": _repeat("1 "),
    "dates": _repeat("may 1 "),
    "consent": _repeat("yes cancel it, no not that one, but "),
    "address": _repeat("x.y+z@host-"),
    "mix": _mix,
}

SCRIPTS = sorted((ROOT / "domains").glob("*/scripts/*.json"))


def hostile(script: Script, filler: str) -> Script:
    """The script with each message grown by `filler` and its calls' strings replaced by it."""
    room = max(0, limits.MAX_ARGUMENTS // 4 - 64)

    def args(arguments: dict[str, Any]) -> dict[str, Any]:
        return {k: (filler[:room] if isinstance(v, str) else v) for k, v in arguments.items()}

    turns: list[Any] = []
    for item in script.model_dump()["turns"]:
        if "customer" in item:
            item["customer"] = item["customer"] + " " + filler
        elif "agent" in item:
            item["agent"]["text"] = (item["agent"]["text"] + " " + filler) if item["agent"]["text"] else ""
            for call in item["agent"]["calls"]:
                call["arguments"] = args(call["arguments"])
        elif "operator" in item:
            item["operator"]["arguments"] = args(item["operator"]["arguments"])
        turns.append(item)
    return Script.model_validate({**script.model_dump(), "turns": turns})


async def play(path: Path, filler: str, out: Path) -> dict[str, int]:
    """One hostile session of the script at `path`, read back and explained; what it did."""
    script = hostile(load_script(path), filler)
    domain = load_domain(script.domain)
    model, helper = ScriptedModel(), ScriptedModel()
    mode = script_mode(script, None)
    session = Session(
        domain, model, mode, out=out, timestamps=False, consent=script_consent(script, None),
        helper=helper if mode == "irma" else None,
    )
    async for _ in session.start():
        pass
    try:
        async for _ in run_script(session, script, model):
            pass
    except LedgerTuiError:
        pass  # the conversation went another way than the script (the texts changed it): fine here
    async for _ in session.end():
        pass
    loaded = read_trajectory(out)
    decided = [e for e in loaded.events if isinstance(e, GateDecided)]
    policy = domain.policy
    for event in decided:
        explain_decision(event, policy)
    cuts = sum(1 for e in loaded.events if isinstance(e, Notice) and "ledger-tui" in e.text)
    return {"events": len(loaded.events), "decisions": len(decided), "cuts": cuts}


def run_sessions(pairs: list[tuple[Path, str]], n: int, folder: Path) -> dict[str, int]:
    totals = {"sessions": 0, "events": 0, "decisions": 0, "cuts": 0}
    for i, (path, shape) in enumerate(pairs):
        done = asyncio.run(play(path, SHAPES[shape](n), folder / f"s{i}.jsonl"))
        totals["sessions"] += 1
        for key, value in done.items():
            totals[key] += value
    return totals


def _timed(fn: Callable[[], Any], repeat: int = 3) -> float:
    samples = []
    for _ in range(repeat):
        text_module._tokens.cache_clear()
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=f"1000,10000,{limits.MAX_TEXT}")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--domain", default=None, help="only this domain's scripts")
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args()
    sizes = [int(s) for s in opts.sizes.split(",")]
    shapes = opts.shapes.split(",")
    scripts = [p for p in SCRIPTS if opts.domain in (None, p.parent.parent.name)]
    print(f"caps: text {limits.MAX_TEXT:,} · arguments {limits.MAX_ARGUMENTS:,} · calls {limits.MAX_CALLS} · "
          f"result {limits.MAX_RESULT:,} characters; {len(scripts)} scripts a session row", flush=True)
    print(f"{'shape':<12} {'what':<8} " + " ".join(f"{n:>10,}" for n in sizes) + "   growth per 10×")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        run_sessions([(p, "letters") for p in scripts], 10, Path(tmp))  # (domains loaded, caches warm)
        for shape in shapes:
            make = SHAPES[shape]
            for what in ("tokens", "session"):
                times = []
                for n in sizes:
                    if what == "tokens":
                        filler = make(n)
                        times.append(_timed(lambda: text_module.tokens(filler), opts.repeat))
                    else:
                        pairs = [(p, shape) for p in scripts]
                        times.append(_timed(lambda: run_sessions(pairs, n, Path(tmp)), 1))
                growth = (times[-1] / times[0]) ** (1 / math.log10(sizes[-1] / sizes[0])) if len(sizes) > 1 else 1.0
                worst = max(worst, growth)
                cells = " ".join(f"{t * 1000:>8.1f}ms" for t in times)
                print(f"{shape:<12} {what:<8} {cells}   {growth:>5.1f}×", flush=True)
    print(json.dumps({"worst_growth_per_10x": round(worst, 1)}))


if __name__ == "__main__":
    main()

